import BluesiftWire
import BluesiftCapture

extension ProtocolDecoder {
    func decodeHCI(_ record: CaptureRecord, _ f: inout DecodedFrame) {
        // Decoded straight into the frame and read there (see `DecodedFrame.hciStorage`).
        f.hciStorage = HCIPacket(kind: record.kind, bytes: record.bytes, truncated: record.isTruncated)
        f.layers.insert(.hci)
        if let e = f.hciStorage.error { f.errors.append(e) }
        f.connection = f.hciStorage.handle
        switch record.kind {
        case .event: trackEvent(record, &f)
        case .acl: decodeACL(record, &f)
        case .command where f.hciStorage.commandCode == .createConnection: pendingCreate[record.adapter] = f.hciStorage.peer
        case .sco: countSCO(record, f.hciStorage.handle)
        case .iso: if let h = f.hciStorage.handle { noteISO(record.adapter, h) }
        default: break
        }
    }

    /// Whether `handle` is a CIS or BIS (isochronous data or its set-up event seen): it is
    /// not an ACL connection, whatever it carries (its Disconnection Complete included).
    public func isISOHandle(adapter: UInt16, handle: UInt16) -> Bool {
        isoHandles.contains(StateKey(adapter: adapter, connection: UInt32(handle)))
    }

    /// Kept until an ACL connection opens on the handle (`open`); bounded like the states.
    func noteISO(_ adapter: UInt16, _ handle: UInt16) {
        let k = StateKey(adapter: adapter, connection: UInt32(handle))
        guard lastISO != k else { return }
        lastISO = k
        if isoHandles.count < Self.maxStates { isoHandles.insert(k) }
    }

    /// CIS and BIS handles from their set-up events (Core 6.0 Vol 4 Part E §7.7.65.25 LE CIS
    /// Established, .26 LE CIS Request, .27 LE Create BIG Complete, .29 LE BIG Sync
    /// Established); `p`: the parameters after the subevent code.
    private func isoSetup(_ sub: HCILESubeventCode, _ p: UnsafeRawBufferPointer, _ adapter: UInt16) {
        func u16(_ o: Int) -> UInt16 { (UInt16(p[o]) | UInt16(p[o + 1]) << 8) & 0x0FFF }
        switch sub {
        case .cisEstablished, .cisEstablishedV2: // Status, Connection_Handle
            if p.count >= 3, p[0] == 0 { noteISO(adapter, u16(1)) }
        case .cisRequest: // ACL_Connection_Handle, CIS_Connection_Handle
            if p.count >= 4 { noteISO(adapter, u16(2)) }
        case .createBIGComplete, .bigSyncEstablished: // Num_BIS at 16 (§7.7.65.27) or 13 (.29), then handles
            let n = sub == .createBIGComplete ? 16 : 13
            guard p.count > n, p[0] == 0 else { return }
            for i in 0..<Int(p[n]) where n + 2 + 2 * i < p.count { noteISO(adapter, u16(n + 1 + 2 * i)) }
        default: break
        }
    }

    /// Advertising reports become the `adv` layer; connection events update the table.
    private func trackEvent(_ record: CaptureRecord, _ f: inout DecodedFrame) {
        switch f.hciStorage.eventCode {
        case .leMeta where f.hciStorage.isAdvertisingReport:
            // Parameters after the subevent code.
            let sub = f.hciStorage.subevent ?? 0, p = f.hciStorage.parameters // present: a report
            f.advStorage = AdvertisingLayer(
                leMetaSubevent: sub,
                parameters: p.isEmpty ? p : UnsafeRawBufferPointer(rebasing: p[1...]))
            f.layers.insert(.adv)
            if let e = f.advStorage.error { f.errors.append(e.inLayer("adv")) }
        case .connectionComplete, .synchronousConnectionComplete, .disconnectionComplete, .roleChange, .leMeta:
            // Only these codes: passing the packet out of the frame copies it.
            connectionEvent(f.hciStorage, record)
        default:
            break
        }
    }

    /// Connection set-up and tear-down (Core 5.4 Vol 4 Part E §7.7).
    private func connectionEvent(_ hci: HCIPacket, _ record: CaptureRecord) {
        let adapter = record.adapter
        switch hci.eventCode {
        case .connectionComplete, .synchronousConnectionComplete:
            guard hci.status == .success, let h = hci.handle else { return }
            var c = ConnectionInfo(adapter: adapter, handle: h)
            c.peer = hci.peer; c.peerAddressType = hci.peerAddressType; c.transport = .bredr
            c.start = record.timestamp; c.startFrame = record.frame
            c.role = pendingCreate[adapter] == hci.peer ? .central : nil
            if hci.eventCode == .synchronousConnectionComplete { // §7.7.35: link type and air mode
                c.linkType = hci.linkType
                c.airMode = HCISynchronousConnectionCompleteEvent.View(parameters: hci.parameters).airMode
            }
            open(c)
        case .disconnectionComplete:
            guard hci.status == .success, let h = hci.handle, !isISOHandle(adapter: adapter, handle: h) else { return }
            let key = ConnectionTable.Key(adapter: adapter, handle: h)
            let id = table.ensure(key, record: record)
            table.update(id) { c in
                c.end = record.timestamp; c.endFrame = record.frame; c.disconnectReason = hci.reason?.rawValue
            }
            release(StateKey(adapter: adapter, connection: UInt32(h)))
        case .roleChange:
            guard hci.status == .success, let peer = hci.peer, let role = hci.role,
                let id = table.activeID(adapter: adapter, peer: peer)
            else { return }
            table.update(id) { $0.role = role == 0 ? .central : .peripheral }
        case .leMeta:
            switch hci.leSubevent {
            case .connectionComplete?, .enhancedConnectionComplete?, .enhancedConnectionCompleteV2?:
                guard hci.status == .success, let h = hci.handle else { return }
                var c = ConnectionInfo(adapter: adapter, handle: h)
                c.peer = hci.peer; c.peerAddressType = hci.peerAddressType; c.transport = .le
                c.role = hci.role == 0 ? .central : hci.role == 1 ? .peripheral : nil
                c.start = record.timestamp; c.startFrame = record.frame
                open(c)
            case let sub?:
                let p = hci.parameters
                if !p.isEmpty { isoSetup(sub, UnsafeRawBufferPointer(rebasing: p[1...]), adapter) }
            default: break
            }
        default: break
        }
    }

    /// SCO data is counted per link, not decoded (audio).
    private func countSCO(_ record: CaptureRecord, _ handle: UInt16?) {
        guard let h = handle else { return }
        let id = table.ensure(.init(adapter: record.adapter, handle: h), record: record)
        table.update(id) { $0.scoPackets += 1 }
    }

    private func open(_ c: ConnectionInfo) {
        let key = StateKey(adapter: c.adapter, connection: UInt32(c.handle))
        release(key) // a reused handle starts clean
        if isoHandles.remove(key) != nil, lastISO == key { lastISO = nil }
        _ = table.open(c)
    }

    /// ACL data → reassembly per (adapter, handle, direction) → L2CAP (Vol 4 Part E §5.4.2).
    private func decodeACL(_ record: CaptureRecord, _ f: inout DecodedFrame) {
        guard let h = f.hciStorage.handle, let pb = f.hciStorage.pbFlag else { return }
        if HCIPacket.isVendorDiagnostic(handle: h), connection(adapter: record.adapter, handle: h) == nil {
            f.connection = nil
            f.set(note: HCIPacket.vendorDiagnosticNote(handle: h))
            return
        }
        let key = StateKey(adapter: record.adapter, connection: UInt32(h))
        let s: ConnState
        if let last = lastACL, last.key == key, last.generation == table.generation {
            s = last.state
        } else {
            _ = table.ensure(.init(adapter: key.adapter, handle: h), record: record)
            s = state(key)
            lastACL = (key, s, table.generation)
        }
        let data = f.hciStorage.parameters
        // PB 0b00/0b10 start (0b11: complete PDU, treated as a start), 0b01 continuation.
        reassemble(
            data, declared: f.hciStorage.dataLength ?? data.count, starts: pb != 0b01,
            state: s, side: Self.side(record.direction), record, &f)
    }

    /// Feeds one ACL or LL data fragment to its connection's reassembler; a completed PDU
    /// goes on to L2CAP.
    func reassemble(
        _ data: UnsafeRawBufferPointer, declared: Int, starts: Bool, state s: ConnState,
        side: UInt8, _ record: CaptureRecord, _ f: inout DecodedFrame
    ) {
        let r = reassembler(s, side: side)
        var warning: DecodeError?
        let result =
            starts
            ? r.start(data, declared: declared, warning: &warning)
            : r.continuation(data, declared: declared)
        if let w = warning { f.errors.append(w) }
        switch result {
        case .pending: break
        case .failed(let e): f.errors.append(e)
        case .complete(let pdu, let fragments, let truncated):
            decodeL2CAP(pdu, fragments: fragments, truncated: truncated, state: s, side: side, record, &f)
        }
    }
}
