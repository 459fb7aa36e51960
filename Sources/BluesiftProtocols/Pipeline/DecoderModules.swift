import BluesiftWire
import BluesiftCapture

/// Routing to protocol modules (`ProtocolRegistry`): lookup tables by carrier, no switch
/// naming a protocol. Each route costs nothing when no module registered its carrier kind.
extension ProtocolDecoder {
    /// Module `index` decodes `pdu`; its layer goes in the frame.
    func decodeModule(
        _ index: Int, _ pdu: UnsafeRawBufferPointer, carrier: Carrier, state: ConnState?, side: UInt8,
        bearer: UInt16 = 0, truncated: Bool = false, _ record: CaptureRecord, _ f: inout DecodedFrame
    ) {
        let context = ModuleContext(
            decoder: self, connectionState: state, module: index, record: record, carrier: carrier,
            side: side, bearer: bearer, truncated: truncated)
        guard let v = registry.modules[index].decode(pdu, context, &f) else { return }
        if let e = v.error, !(e.code == .truncated && truncated) { f.errors.append(e) }
        f.set(module: v)
    }

    /// Carriers read off a whole record: HCI events, LE subevents, commands, packet kinds,
    /// advertising data (HCI reports and sniffed advertising PDUs alike). Every advertising
    /// report comes here: flat tables, and the connection state only for a match.
    func recordCarriers(_ record: CaptureRecord, _ f: inout DecodedFrame) {
        // The layer bits, not `f.module == nil`: testing the optional copies the existential.
        guard f.layers.isDisjoint(with: .anyModule), f.layers.contains(.hci) || f.layers.contains(.adv) else { return }
        if f.layers.contains(.hci) {
            var hit: (module: Int, carrier: Carrier, pdu: UnsafeRawBufferPointer)?
            switch record.kind {
            case .event where registry.hasEventCarriers:
                let code = UInt8(truncatingIfNeeded: f.hciStorage.opcode)
                if HCIEventCode(code) == .leMeta, let sub = f.hciStorage.subevent, let i = registry.module(leSubevent: sub) {
                    let pdu = f.hciStorage.parameters
                    hit = (i, .leSubevent(sub), pdu.isEmpty ? pdu : UnsafeRawBufferPointer(rebasing: pdu[1...]))
                } else if let i = registry.module(event: code) {
                    hit = (i, .hciEvent(code), f.hciStorage.parameters)
                }
            case .command where registry.hasCommandCarriers:
                let op = UInt16(truncatingIfNeeded: f.hciStorage.opcode)
                if let i = registry.byCarrier[.hciCommand(op)] { hit = (i, .hciCommand(op), f.hciStorage.parameters) }
            case let k where registry.hasPacketCarriers:
                if let i = registry.module(packet: k) { hit = (i, .hciPacket(k), record.bytes) }
            default: break
            }
            if let hit {
                decodeModule(
                    hit.module, hit.pdu, carrier: hit.carrier, state: connectionState(f), side: Self.side(record.direction),
                    truncated: record.isTruncated, record, &f)
                return
            }
        }
        if f.layers.contains(.adv), registry.hasAdvertisingCarriers { advertisingCarriers(record, Self.side(record.direction), &f) }
    }

    /// Whether a whole advertising report event holds an AD structure (or service data UUID)
    /// a module registered: `layers(of:)` then decodes it in full, as `decode` adds the
    /// module's layer. Only for an event `isWholeAdvertisingEvent` passed: the lengths are
    /// known good, so each report's data is found in place (§7.7.65.2: Data_Length at 8 of
    /// 10 fixed octets; §7.7.65.13: at 23 of 24) without building reports (info's cost).
    /// `layers(of:)` asks `isPlainAdvertisingEvent` (one walk); this and
    /// `isWholeAdvertisingEvent` stay as the reference its tests compare it with.
    func carriesModuleAdvertising(_ b: UnsafeRawBufferPointer) -> Bool {
        guard registry.hasAdvertisingCarriers, let base = b.baseAddress, b.count >= 4 else { return false }
        let sub = b[2], legacy = HCILESubeventCode.advertisingReport.rawValue
        let extended = HCILESubeventCode.extendedAdvertisingReport.rawValue
        // Extended data in pieces, or an advertiser's pending: decoded (ExtendedAdvertisingPieces).
        if sub == extended, !extendedPieces.pending.isEmpty || ExtendedAdvertisingPieces.anyIncomplete(UnsafeRawBufferPointer(rebasing: b[3...])) {
            return true
        }
        guard sub == legacy || sub == extended else { return false } // directed reports carry no data
        let lengthAt = sub == legacy ? 8 : 23, fixed = sub == legacy ? 10 : 24
        var i = 4 // event code, length, subevent, Num_Reports
        for _ in 0..<Int(b[3]) {
            let len = Int(base.load(fromByteOffset: i &+ lengthAt, as: UInt8.self))
            if registry.carriesModule(base + (i &+ lengthAt &+ 1), count: len) { return true }
            i &+= fixed &+ len
        }
        return false
    }

    /// `isWholeAdvertisingEvent(b) && !carriesModuleAdvertising(b)` in one walk over the
    /// reports and their AD structures (info's skip: each length read once, no report built).
    /// Any of damage, a module's structure or extended data in pieces sends the event the long way.
    @usableFromInline
    func isPlainAdvertisingEvent(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let base = b.baseAddress, b.count >= 4, b[0] == HCIEventCode.leMeta.rawValue, Int(b[1]) == b.count &- 2 else { return false }
        let sub = b[2], end = b.count, n = Int(b[3])
        let legacy = HCILESubeventCode.advertisingReport.rawValue
        let extended = HCILESubeventCode.extendedAdvertisingReport.rawValue
        var i = 4 // event code, length, subevent, Num_Reports
        if sub == legacy || sub == extended {
            let carriers = registry.hasAdvertisingCarriers
            // Extended data in pieces, or an advertiser's pending: decoded (ExtendedAdvertisingPieces).
            let pieces = carriers && sub == extended
            if pieces, !extendedPieces.pending.isEmpty { return false }
            // §7.7.65.2: Data_Length at 8 of 10 fixed octets; §7.7.65.13: at 23 of 24.
            let lengthAt = sub == legacy ? 8 : 23, fixed = sub == legacy ? 10 : 24
            for _ in 0..<n {
                guard end &- i >= fixed else { return false }
                if pieces, ExtendedAdvertisingPieces.dataStatus(UInt16(base.load(fromByteOffset: i, as: UInt8.self))) != 0 { return false }
                let len = Int(base.load(fromByteOffset: i &+ lengthAt, as: UInt8.self))
                guard end &- i &- fixed >= len, registry.isPlainADData(base + (i &+ lengthAt &+ 1), count: len, carriers: carriers) else { return false }
                i &+= fixed &+ len
            }
        } else if sub == HCILESubeventCode.directedAdvertisingReport.rawValue {
            i &+= 16 &* n // §7.7.65.11: 16 octets a report, no data
        } else {
            return false
        }
        return i == end
    }

    /// The module of the first AD structure (or service data UUID) a module registered, in
    /// report order, gets all of its structures of that report in one call.
    private func advertisingCarriers(_ record: CaptureRecord, _ side: UInt8, _ f: inout DecodedFrame) {
        if advertisingPieces(record, side, &f) { return }
        guard registry.mayCarryAdvertising(f.advStorage.single?.data ?? f.advStorage.parameters) else { return }
        var found: (module: Int, carrier: Carrier, data: UnsafeRawBufferPointer)?
        f.advStorage.forEachReport { rep in
            guard found == nil else { return } // the first report with one
            for s in rep.structures {
                if let hit = registry.advertisingCarrier(s) { found = (hit.module, hit.carrier, rep.data); return }
            }
        }
        guard let found else { return }
        let context = ModuleContext(
            decoder: self, connectionState: nil, module: found.module, record: record, carrier: found.carrier,
            side: side, bearer: 0, truncated: false)
        let structures = ModuleADStructures(data: found.data, module: found.module, registry: registry)
        guard let v = registry.modules[found.module].decode(advertising: structures, context, &f) else { return }
        f.set(module: v)
    }

    static let maxClaimedAccessAddresses = 256

    /// A module's claim of a sniffed access address (`ModuleContext.claim`); one claim is
    /// dropped when the table is full.
    func claimAccessAddress(_ aa: UInt32, _ kind: LLAccessAddressClaim, module: Int) {
        if claimedAccessAddresses.count >= Self.maxClaimedAccessAddresses, claimedAccessAddresses[aa] == nil,
            let victim = claimedAccessAddresses.first
        {
            claimedAccessAddresses[victim.key] = nil
        }
        claimedAccessAddresses[aa] = (kind, module)
        unconfirmed[aa] = nil // not a connection waiting for its second packet
    }

    /// A sniffed PDU on a claimed access address (its CRC not known bad) goes to the module
    /// that claimed it: the PDU as sent, header and payload. Sets the frame's `ll`.
    func claimedLL(_ ll: inout LLPacket, _ claim: (kind: LLAccessAddressClaim, module: Int), _ record: CaptureRecord, _ f: inout DecodedFrame) {
        let start = 4 + (ll.codingIndicator == nil ? 0 : 1)
        let end = ll.bytes.count - (ll.crc == nil ? 0 : 3)
        if end >= start + 2 {
            // Neither has a data channel PDU's CP bit (Vol 6 Part B §2.6: bit 5 is RFU or a BIS's
            // CSTF; §2.3: ChSel) nor an LL Control opcode: the payload is re-read.
            let available = end - start - 2
            ll.cteInfo = nil; ll.controlOpcode = nil
            ll.payload = UnsafeRawBufferPointer(rebasing: ll.bytes[(start + 2)..<(start + 2 + min(ll.length, available))])
            ll.error =
                ll.length > available
                ? DecodeError(layer: "ll", code: .truncated, offset: start + 2, message: "payload: length \(ll.length), \(available) bytes there")
                : available > ll.length
                    ? DecodeError(layer: "ll", code: .invalidLength, offset: start + 2, message: "\(available - ll.length) bytes after the PDU") : nil
        }
        if let e = ll.error { f.errors.append(e.inLayer("ll")) }
        guard end >= start + 2 else { return }
        ll.fromCentral = record.sniffer?.fromCentral
        f.set(ll) // the module reads the packet (its access address) off the frame
        decodeModule(
            claim.module, UnsafeRawBufferPointer(rebasing: ll.bytes[start..<end]),
            carrier: claim.kind == .isochronous ? .llIsochronous : .llPeriodicAdvertising, state: nil,
            side: record.sniffer?.fromCentral.map { $0 ? 0 : 1 } ?? 2, truncated: record.isTruncated, record, &f)
    }

    /// The frame's connection state, if it has one (sniffed links are numbered apart).
    private func connectionState(_ f: borrowing DecodedFrame) -> ConnState? {
        guard let c = f.connection else { return nil }
        return states[StateKey(adapter: f.record.adapter, connection: (f.layers.contains(.ll) ? 0x1_0000 : 0) | UInt32(c))]
    }

    /// GATT carriers: the analyzer, which knows what an ATT PDU's handle is, hands its value
    /// here. True when a module took it (its layer is in the frame).
    @discardableResult
    public func decodeGATTValue(
        _ value: UnsafeRawBufferPointer, characteristic: BluetoothUUID?, service: BluetoothUUID?,
        _ f: inout DecodedFrame
    ) -> Bool {
        guard registry.hasGATTCarriers, f.layers.isDisjoint(with: .anyModule) else { return false }
        var hit: (Int, Carrier)?
        if let c = characteristic, let i = registry.byCarrier[.gattCharacteristic(c)] { hit = (i, .gattCharacteristic(c)) } else if let s = service, let i = registry.byCarrier[.gattService(s)] { hit = (i, .gattService(s)) }
        guard let (i, carrier) = hit else { return false }
        let r = f.record
        let state = connectionState(f)
        decodeModule(
            i, value, carrier: carrier, state: state, side: Self.side(r.direction),
            truncated: f.layers.contains(.l2cap) && f.l2capStorage.truncated, r, &f)
        return !f.layers.isDisjoint(with: .anyModule)
    }
}

extension ProtocolRegistry {
    /// The module an AD structure reaches: by its AD type, else (Service Data - 16-bit UUID) by
    /// its UUID, the value then after the UUID.
    @inline(__always)
    func advertisingCarrier(_ s: ADStructure) -> (module: Int, carrier: Carrier, value: UnsafeRawBufferPointer)? {
        if let i = module(adType: s.type.rawValue) { return (i, .adType(s.type.rawValue), s.value) }
        if s.type == .serviceData16, s.value.count >= 2 {
            let uuid = UInt16(s.value[0]) | UInt16(s.value[1]) << 8
            if let i = module(serviceData: uuid) { return (i, .serviceData(uuid), UnsafeRawBufferPointer(rebasing: s.value[2...])) }
        }
        return nil
    }
}
