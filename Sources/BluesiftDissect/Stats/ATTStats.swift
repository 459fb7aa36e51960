import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of ATT: per-characteristic counts, bytes, latency, errors, unanswered requests.
extension CaptureStats {
    // MARK: ATT

    func att(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder) {
        report.counts.att += 1
        guard let c = a.decoded.connection, let i = connection(r.adapter, c, r, decoder) else { return }
        let key = ConnKey(adapter: r.adapter, handle: c)
        report.connections[i].attOperations += 1
        report.connections[i].lastFrame = r.frame; report.connections[i].lastUs = us
        let att = a.decoded.attStorage
        let op = att.opcode
        let t = a.decoded.attTransaction
        if let v = a.vendor {
            for m in v.messages where m.checksum == .bad {
                report.counts.vendorBadChecksums += 1
                problem("vendor_bad_checksum", r, conn: i, handle: Int(v.handle), "\(m.plugin) \(m.message): bad checksum")
            }
        }
        switch op {
        case .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest: discoverySeen = true
        case .exchangeMTURequest: conns[key]?.clientMTU = att.mtu.map(Int.init)
        case .exchangeMTUResponse:
            if let s = att.mtu {
                let client = conns[key]?.clientMTU ?? Int(s)
                report.connections[i].mtu = min(client, Int(s)); report.connections[i].mtuFrame = r.frame
            }
        default: break
        }
        // The attribute the frame is about: its own handle, else (responses) the request's.
        // Attribute Not Found answering a discovery request ends the discovery (Core 5.4 Vol 3
        // Part G §4.4-4.7): expected, not a problem, and about a range, not an attribute.
        let discoveryEnd = att.endsDiscovery
        let handle: UInt16? = att.handle ?? t?.requestHandle ?? (discoveryEnd ? nil : att.errorHandle)
        lastConnection = i
        var ch: Int?
        if let h = handle, let chIndex = characteristic(key, i, h, &a, r) { ch = chIndex }
        lastCharacteristic = ch
        if handle != nil, op.isRead || op.isWrite && op != .prepareWriteRequest || op == .handleValueNotification || op == .handleValueIndication {
            if a.location == nil { unnamedOps += 1; if firstUnnamedFrame == nil { firstUnnamedFrame = r.frame } } else { namedOps += 1 }
        }
        let valueCount = att.value?.count ?? 0
        if let ch {
            switch op {
            case .readRequest, .readBlobRequest: report.characteristics[ch].reads += 1; report.counts.reads += 1
            case .writeRequest:
                report.characteristics[ch].writeRequests += 1; report.counts.writeRequests += 1
                report.characteristics[ch].bytesToServer += valueCount
            case .writeCommand, .signedWriteCommand:
                report.characteristics[ch].writeCommands += 1; report.counts.writeCommands += 1
                report.characteristics[ch].bytesToServer += valueCount
            case .prepareWriteRequest: report.characteristics[ch].bytesToServer += valueCount
            case .handleValueNotification:
                report.characteristics[ch].notifications += 1; report.counts.notifications += 1
                report.characteristics[ch].bytesFromServer += valueCount
            case .handleValueIndication:
                report.characteristics[ch].indications += 1; report.counts.indications += 1
                report.characteristics[ch].bytesFromServer += valueCount
            case .readResponse, .readBlobResponse: report.characteristics[ch].bytesFromServer += valueCount
            case .errorResponse: report.characteristics[ch].errors += 1
            default: break
            }
            if let t, op != .handleValueConfirmation { latencies[ch].add(t.latencyMicroseconds) }
        }
        if op == .errorResponse && discoveryEnd {
            report.counts.attErrors += 1
            report.counts.discoveryEnds += 1
        } else if op == .errorResponse {
            report.counts.attErrors += 1
            report.connections[i].attErrors += 1
            let req = att.requestOpcode?.name ?? "request"
            let err = att.errorCode.map { ATTErrorCode(rawValue: $0).name } ?? "error"
            var where_ = ""
            if let loc = a.location {
                where_ = " on " + (loc.characteristic.map { GATTNames.name($0) ?? $0.description } ?? GATTNames.name(loc.service) ?? loc.service.description)
                if let d = loc.descriptor { where_ += " / " + (GATTNames.name(d) ?? d.description) }
            }
            let hText = handle.map { " handle " + Hex.fixed(UInt64($0), width: 4) } ?? ""
            problem(
                "att_error", r, conn: i, handle: handle.map(Int.init), request: t?.requestFrame,
                "\(err) for \(req)\(hText)\(where_)")
        }
        // Unanswered requests: one outstanding request and one indication per side (§3.3.2),
        // so a second one on the same slot means the first went unanswered. Both devices may
        // be GATT clients, and a server may indicate while its client waits for a response.
        let side = r.direction.map { $0 == .sent ? 0 : 1 } ?? a.decoded.ll?.fromCentral.map { $0 ? 0 : 1 }
        if op.expectsAnswer, conns[key] != nil {
            let p = Pending(frame: r.frame, us: us, opcode: op.rawValue, handle: att.handle, char: ch)
            if let side {
                let slot = side * 2 + (op == .handleValueIndication ? 1 : 0)
                if let old = conns[key]!.pending[slot] { unanswered(old, i, until: us, reason: "another request was sent") }
                conns[key]!.pending[slot] = p
            } else {
                // Side unknown: kept apart, answered through the decoder's pairing.
                if conns[key]!.pending.count >= 12, let old = conns[key]!.pending.remove(at: 4) {
                    unanswered(old, i, until: us, reason: "eight more requests were sent")
                }
                conns[key]!.pending.append(p)
            }
        } else if let t, conns[key] != nil {
            if let j = conns[key]!.pending.firstIndex(where: { $0?.frame == t.requestFrame }) {
                if j < 4 { conns[key]!.pending[j] = nil } else { conns[key]!.pending.remove(at: j) }
            }
        }
    }

    func characteristic(_ key: ConnKey, _ conn: Int, _ handle: UInt16, _ a: inout AnalyzedFrame, _ r: CaptureRecord) -> Int? {
        if let ch = conns[key]?.chars[handle] {
            if report.characteristics[ch].characteristic == nil, let loc = a.location { name(ch, loc, a.namedBy, a.vendor?.plugin) }
            return ch
        }
        guard (conns[key]?.chars.count ?? 0) < StatsLimits.characteristicsPerConnection else { return nil }
        let ch = report.characteristics.count
        report.characteristics.append(.init(connection: conn, handle: Int(handle), firstFrame: r.frame))
        latencies.append(LatencyHistogram())
        conns[key]?.chars[handle] = ch
        if let loc = a.location { name(ch, loc, a.namedBy, a.vendor?.plugin) }
        return ch
    }

    func name(_ ch: Int, _ loc: GATTDatabase.Location, _ by: NamingSource?, _ plugin: String?) {
        report.characteristics[ch].service = loc.service.description
        report.characteristics[ch].serviceName = GATTNames.name(loc.service)
        if let c = loc.characteristic {
            report.characteristics[ch].characteristic = c.description
            report.characteristics[ch].characteristicName = GATTNames.name(c)
        } else if loc.isDeclaration {
            report.characteristics[ch].characteristicName = "(declaration)"
        }
        if let d = loc.descriptor {
            report.characteristics[ch].descriptor = d.description
            report.characteristics[ch].descriptorName = GATTNames.name(d)
        }
        if let by { report.characteristics[ch].namedBy = by == .plugin ? "plugin:" + (plugin ?? "") : by.rawValue }
    }
}
