import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of HCI commands and events: connections, their parameters, failed attempts; and
/// of the controller's vendor diagnostics on ACL.
final class HCIStats {
    /// Connection attempts awaiting their Complete, by adapter and transport (`createKey`): an
    /// LE and a BR/EDR create may be pending together (pongbot lost the LE one).
    var pendingCreates: [UInt32: (frame: Int, us: Int64, peer: BDAddr?, cancelled: Bool)] = [:]
    static func createKey(_ adapter: UInt16, le: Bool) -> UInt32 { UInt32(adapter) << 1 | (le ? 1 : 0) }
    /// HCI commands and events: a log without any (ACL data only) cannot show a connection's start.
    var control = 0
    var vendorDiagnostics = 0
    var firstVendorDiagnostic: Int?
    var vendorHandles: [UInt16] = []

    /// Every record (command and event records are counted, whatever they decode to).
    @inline(__always)
    func count(_ r: CaptureRecord) {
        if r.kind == .command || r.kind == .event { control += 1 }
    }

    /// An ACL record that is the controller's vendor diagnostics (`HCIPacket.vendorDiagnosticHandle`).
    func vendorDiagnostic(_ a: borrowing AnalyzedFrame, _ r: CaptureRecord) {
        vendorDiagnostics += 1
        if firstVendorDiagnostic == nil { firstVendorDiagnostic = r.frame }
        if let h = a.decoded.hciStorage.handle, !vendorHandles.contains(h) { vendorHandles.append(h) }
    }

    func add(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder, _ s: CaptureStats) {
        let h = a.decoded.hciStorage
        // ISO data (CIS/BIS handles) is LE Audio's stream, not a connection (LEAudioStats).
        if let c = a.decoded.connection, r.kind == .acl || r.kind == .sco,
            let i = s.connection(r.adapter, c, r, decoder)
        {
            s.report.connections[i].lastFrame = r.frame; s.report.connections[i].lastUs = max(s.report.connections[i].lastUs, us)
        }
        switch h.kind {
        case .command:
            let op = HCICommandOpcode(UInt16(truncatingIfNeeded: h.opcode))
            switch op {
            case .leCreateConnection, .leExtendedCreateConnection, .createConnection:
                // A zero peer: the filter accept list chooses (initiator filter policy 1).
                pendingCreates[Self.createKey(r.adapter, le: op != .createConnection)] = (r.frame, us, h.peer?.description == "00:00:00:00:00:00" ? nil : h.peer, false)
            case .leCreateConnectionCancel, .createConnectionCancel:
                let k = Self.createKey(r.adapter, le: op == .leCreateConnectionCancel)
                if var p = pendingCreates[k] { p.cancelled = true; pendingCreates[k] = p }
            default: break
            }
        case .event:
            event(h, r, us, decoder, s)
        default: break
        }
    }

    func event(_ h: HCIPacket, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder, _ s: CaptureStats) {
        let code = h.eventCode
        switch code {
        case .commandComplete, .commandStatus: // Core 5.4 Vol 4 Part E §7.7.14-15
            guard let st = h.status, st != .success, let op = h.commandOpcode, op != 0 else { return }
            s.report.counts.hciCommandsFailed += 1
            s.problem("hci_command_failed", r, conn: nil, "\(HCICommandNames.name(op)) failed: \(st.name) (\(Hex.fixed(UInt64(st.rawValue), width: 2)))")
            let create: [HCICommandOpcode] = [.leCreateConnection, .leExtendedCreateConnection, .createConnection]
            if create.contains(HCICommandOpcode(UInt16(truncatingIfNeeded: op))),
                let p = pendingCreates.removeValue(forKey: Self.createKey(r.adapter, le: op != Int(HCICommandOpcode.createConnection.rawValue)))
            {
                s.report.failedConnections.append(
                    .init(
                        frame: p.frame, us: p.us, peer: p.peer?.description, outcome: "failed",
                        status: Int(st.rawValue), statusName: st.name))
            }
        case .connectionComplete, .synchronousConnectionComplete,
            .leMeta where Self.connectionCompletes.contains(h.leSubevent ?? .init(0)):
            // (Synchronous) (LE) (Enhanced) Connection Complete (§7.7.3, §7.7.35, §7.7.65.1, .10, .29)
            let create = code == .synchronousConnectionComplete ? nil : pendingCreates.removeValue(forKey: Self.createKey(r.adapter, le: code == .leMeta))
            guard let st = h.status else { return }
            if st != .success {
                let cancelled = create?.cancelled == true || st == .unknownConnectionIdentifier
                s.report.failedConnections.append(
                    .init(
                        frame: r.frame, us: us, peer: h.peer?.description ?? create?.peer?.description,
                        outcome: cancelled ? "cancelled" : "failed", status: Int(st.rawValue), statusName: st.name))
                return
            }
            guard let handle = h.handle, let i = s.connection(r.adapter, handle, r, decoder, fresh: true) else { return }
            if let iv = h.interval, let lat = h.latency, let to = h.supervisionTimeout {
                s.report.connections[i].parameters.append(.init(frame: r.frame, us: us, interval: Int(iv), latency: Int(lat), timeout: Int(to)))
            }
        case .disconnectionComplete: // §7.7.5
            guard h.status == .success, let handle = h.handle, !decoder.isISOHandle(adapter: r.adapter, handle: handle) else { return }
            let key = CaptureStats.ConnKey(adapter: r.adapter, handle: handle)
            guard let i = s.connection(r.adapter, handle, r, decoder) else { return }
            s.end(i, key, r, reason: h.reason)
        case .encryptionChange, .encryptionChangeV2: // §7.7.8, §7.7.8.v2
            guard h.status == .success, let handle = h.handle, let i = s.connection(r.adapter, handle, r, decoder) else { return }
            s.report.connections[i].encryption.append(
                .init(
                    frame: r.frame, us: us, enabled: (h.encryption ?? 0) != 0,
                    keySize: h.keySize.map(Int.init), source: "hci"))
        case .encryptionKeyRefreshComplete: // §7.7.39
            guard h.status == .success, let handle = h.handle, let i = s.connection(r.adapter, handle, r, decoder) else { return }
            s.report.connections[i].encryption.append(.init(frame: r.frame, us: us, enabled: true, keySize: nil, source: "hci"))
        case .leMeta:
            guard h.status == nil || h.status == .success, let handle = h.handle, let sub = h.leSubevent else { return }
            switch sub {
            case .connectionUpdateComplete: // §7.7.65.3
                guard let i = s.connection(r.adapter, handle, r, decoder), let iv = h.interval, let lat = h.latency,
                    let to = h.supervisionTimeout
                else { return }
                s.report.connections[i].parameters.append(.init(frame: r.frame, us: us, interval: Int(iv), latency: Int(lat), timeout: Int(to)))
            case .dataLengthChange: // §7.7.65.7
                guard let i = s.connection(r.adapter, handle, r, decoder) else { return }
                s.report.connections[i].maxTxOctets = h.maxTxOctets.map(Int.init)
                s.report.connections[i].maxRxOctets = h.maxRxOctets.map(Int.init)
                s.report.connections[i].dataLengthFrame = r.frame
            case .phyUpdateComplete: // §7.7.65.12
                guard let i = s.connection(r.adapter, handle, r, decoder) else { return }
                s.report.connections[i].txPhy = h.txPHY.map(Self.phyName)
                s.report.connections[i].rxPhy = h.rxPHY.map(Self.phyName)
                s.report.connections[i].phyFrame = r.frame
            default: break
            }
        default: break
        }
    }

    /// LE subevents that complete a connection.
    static let connectionCompletes: [HCILESubeventCode] = [.connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2]

    static func phyName(_ p: UInt8) -> String {
        switch p {
        case 1: "1M";
        case 2: "2M";
        case 3: "Coded";
        default: "PHY \(p)"
        }
    }

    /// Connection attempts that never completed (or were cancelled): `failed_connections`.
    func finish(_ s: CaptureStats) {
        for (_, p) in pendingCreates {
            s.report.failedConnections.append(
                .init(
                    frame: p.frame, us: p.us, peer: p.peer?.description,
                    outcome: p.cancelled ? "cancelled" : "never_completed", status: nil, statusName: nil))
        }
    }

    /// The vendor diagnostics finding (Quality).
    func quality(_ q: inout [StatsReport.Advice]) {
        guard vendorDiagnostics > 0 else { return }
        // 0x0EDC is Broadcom's; 0x0F00 and above no connection can have (Vol 4 Part E §5.4.2).
        let handles = vendorHandles.sorted().map {
            Hex.fixed(UInt64($0), width: 4) + ($0 > HCIPacket.maxConnectionHandle ? " (reserved)" : " (Broadcom)")
        }.joined(separator: ", ")
        q.append(
            .init(
                code: "vendor_diagnostics", severity: "info",
                message: "\(vendorDiagnostics) records are the controller's vendor diagnostics on ACL handle\(vendorHandles.count > 1 ? "s" : "") \(handles): not a connection, not decoded.",
                advice: "Nothing to do: Android's snoop log records them beside the Bluetooth traffic.", frame: firstVendorDiagnostic))
    }
}
