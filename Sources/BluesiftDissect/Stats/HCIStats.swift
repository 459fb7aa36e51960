import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of HCI commands and events: connections, their parameters, failed attempts.
extension CaptureStats {
    // MARK: HCI

    func hci(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder) {
        let h = a.decoded.hciStorage
        if let c = a.decoded.connection, r.kind == .acl || r.kind == .sco || r.kind == .iso,
            let i = connection(r.adapter, c, r, decoder)
        {
            report.connections[i].lastFrame = r.frame; report.connections[i].lastUs = max(report.connections[i].lastUs, us)
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
            hciEvent(h, r, us, decoder)
        default: break
        }
    }

    func hciEvent(_ h: HCIPacket, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder) {
        switch h.opcode {
        case 0x0E, 0x0F: // Command Complete / Command Status (Core 5.4 Vol 4 Part E §7.7.14-15)
            guard let st = h.status, st != .success, let op = h.commandOpcode, op != 0 else { return }
            report.counts.hciCommandsFailed += 1
            problem("hci_command_failed", r, conn: nil, "\(HCICommandNames.name(op)) failed: \(st.name) (\(Hex.fixed(UInt64(st.rawValue), width: 2)))")
            let create: [HCICommandOpcode] = [.leCreateConnection, .leExtendedCreateConnection, .createConnection]
            if create.contains(HCICommandOpcode(UInt16(truncatingIfNeeded: op))),
                let p = pendingCreates.removeValue(forKey: Self.createKey(r.adapter, le: op != Int(HCICommandOpcode.createConnection.rawValue)))
            {
                report.failedConnections.append(
                    .init(
                        frame: p.frame, us: p.us, peer: p.peer?.description, outcome: "failed",
                        status: Int(st.rawValue), statusName: st.name))
            }
        case _ where h.opcode == 0x03 || h.opcode == 0x2C || (h.opcode == 0x3E && [0x01, 0x0A, 0x29].contains(h.subevent ?? 0)):
            // (Synchronous) (LE) (Enhanced) Connection Complete (§7.7.3, §7.7.35, §7.7.65.1, .10, .29)
            let create = h.opcode == 0x2C ? nil : pendingCreates.removeValue(forKey: Self.createKey(r.adapter, le: h.opcode == 0x3E))
            guard let st = h.status else { return }
            if st != .success {
                let cancelled = create?.cancelled == true || st.rawValue == 0x02
                report.failedConnections.append(
                    .init(
                        frame: r.frame, us: us, peer: h.peer?.description ?? create?.peer?.description,
                        outcome: cancelled ? "cancelled" : "failed", status: Int(st.rawValue), statusName: st.name))
                return
            }
            guard let handle = h.handle, let i = connection(r.adapter, handle, r, decoder, fresh: true) else { return }
            if let iv = h.interval, let lat = h.latency, let to = h.supervisionTimeout {
                report.connections[i].parameters.append(.init(frame: r.frame, us: us, interval: Int(iv), latency: Int(lat), timeout: Int(to)))
            }
        case 0x05: // Disconnection Complete (§7.7.5)
            guard h.status == .success, let handle = h.handle else { return }
            let key = ConnKey(adapter: r.adapter, handle: handle)
            guard let i = connection(r.adapter, handle, r, decoder) else { return }
            end(i, key, r, reason: h.reason)
        case 0x08, 0x59: // Encryption Change v1/v2 (§7.7.8, §7.7.8.v2)
            guard h.status == .success, let handle = h.handle, let i = connection(r.adapter, handle, r, decoder) else { return }
            report.connections[i].encryption.append(
                .init(
                    frame: r.frame, us: us, enabled: (h.encryption ?? 0) != 0,
                    keySize: h.keySize.map(Int.init), source: "hci"))
        case 0x30: // Encryption Key Refresh Complete (§7.7.39)
            guard h.status == .success, let handle = h.handle, let i = connection(r.adapter, handle, r, decoder) else { return }
            report.connections[i].encryption.append(.init(frame: r.frame, us: us, enabled: true, keySize: nil, source: "hci"))
        case 0x3E:
            guard h.status == nil || h.status == .success, let handle = h.handle else { return }
            switch h.subevent {
            case 0x03: // LE Connection Update Complete (§7.7.65.3)
                guard let i = connection(r.adapter, handle, r, decoder), let iv = h.interval, let lat = h.latency,
                    let to = h.supervisionTimeout
                else { return }
                report.connections[i].parameters.append(.init(frame: r.frame, us: us, interval: Int(iv), latency: Int(lat), timeout: Int(to)))
            case 0x07: // LE Data Length Change (§7.7.65.7)
                guard let i = connection(r.adapter, handle, r, decoder) else { return }
                report.connections[i].maxTxOctets = h.maxTxOctets.map(Int.init)
                report.connections[i].maxRxOctets = h.maxRxOctets.map(Int.init)
                report.connections[i].dataLengthFrame = r.frame
            case 0x0C: // LE PHY Update Complete (§7.7.65.12)
                guard let i = connection(r.adapter, handle, r, decoder) else { return }
                report.connections[i].txPhy = h.txPHY.map(Self.phyName)
                report.connections[i].rxPhy = h.rxPHY.map(Self.phyName)
                report.connections[i].phyFrame = r.frame
            default: break
            }
        default: break
        }
    }

    static func phyName(_ p: UInt8) -> String {
        switch p {
        case 1: "1M";
        case 2: "2M";
        case 3: "Coded";
        default: "PHY \(p)"
        }
    }

    func end(_ i: Int, _ key: ConnKey, _ r: CaptureRecord, reason: HCIStatus?) {
        let us = r.timestamp.microseconds
        report.connections[i].endFrame = r.frame
        report.connections[i].endUs = us
        report.connections[i].lastFrame = r.frame; report.connections[i].lastUs = us
        if let reason {
            report.connections[i].disconnectReason = Int(reason.rawValue)
            report.connections[i].disconnectReasonName = reason.name
        }
        if let s = conns[key] { closePending(s, at: us, reason: "the link ended") }
        conns[key]?.ended = true
        openConnections = max(0, openConnections - 1)
    }

    /// Requests still open when their connection ends or the capture stops.
    func closePending(_ s: ConnState, at us: Int64, reason: String) {
        for p in s.pending { if let p { unanswered(p, s.index, until: us, reason: reason) } }
    }

    func unanswered(_ p: Pending, _ conn: Int, until us: Int64, reason: String) {
        if let bad = p.crcBad {
            report.counts.crcBadResponses += 1
            if crcBadResponses.count < 5 { crcBadResponses.append((p.frame, p.opcode, bad.frame, bad.byCentral)) }
            return
        }
        let waited = us - p.us
        let timedOut = waited >= unansweredAfterUs
        guard timedOut || reason != "the capture ended" else { return }
        report.counts.unansweredRequests += 1
        kindCounts["unanswered_request", default: 0] += 1
        guard report.problems.count < StatsLimits.problems else { report.problemsNotListed += 1; return }
        let what = ATTOpcode(rawValue: p.opcode).name
        let msg =
            timedOut
            ? "\(what) unanswered for \(TimeFormat.duration(microseconds: waited)) (ATT transaction timeout is 30 s)"
            : "\(what) unanswered: \(reason) \(TimeFormat.duration(microseconds: waited)) later"
        report.problems.append(
            .init(
                kind: "unanswered_request", frame: p.frame, us: p.us, connection: conn,
                handle: p.handle.map(Int.init), requestFrame: nil, message: msg))
    }
}
