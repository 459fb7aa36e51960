import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of ATT: per-characteristic counts, bytes, latency, errors, unanswered requests.
/// Its state is per stats connection (by index: a connection set up again is a new index,
/// so its characteristics and open requests start empty).
final class ATTStats {
    static let unansweredAfterUs: Int64 = 30_000_000 // ATT transaction timeout, Core 5.4 Vol 3 Part F §3.3.3

    struct Pending {
        var frame: Int; var us: Int64; var opcode: UInt8; var handle: UInt16?; var char: Int?
        /// A PDU the other side sent after it, seen only with a bad CRC and acknowledged by
        /// this side: (its frame, acknowledged by the central).
        var crcBad: (frame: Int, byCentral: Bool)?
    }
    struct Conn {
        var chars: [UInt16: Int] = [:]
        /// Outstanding transactions (Core 5.4 Vol 3 Part F §3.3.2: one request per client and
        /// one indication per server, each way): slots 0-3 by side (sent/central, received/
        /// peripheral) and kind (request, indication); slots 4… hold those whose side the
        /// capture does not say (up to 8; each is cleared by the response the decoder pairs).
        var pending: [Pending?] = Array(repeating: nil, count: 4)
        var clientMTU: Int?
    }

    /// By stats connection index (`StatsReport.connections`), made on the connection's first ATT PDU.
    var conns: [Conn?] = []
    var latencies: [LatencyHistogram] = []
    var discoverySeen = false
    var unnamedOps = 0, namedOps = 0, firstUnnamedFrame: Int?
    /// Requests answered by a PDU the sniffer saw only with a bad CRC: (request, opcode,
    /// CRC-bad frame, acknowledged by the central), the first few for the quality note.
    var crcBadResponses: [(request: Int, opcode: UInt8, frame: Int, byCentral: Bool)] = []

    func add(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder, _ s: CaptureStats) {
        s.report.counts.att += 1
        guard let c = a.decoded.connection, let i = s.connection(r.adapter, c, r, decoder) else { return }
        s.report.connections[i].attOperations += 1
        s.report.connections[i].lastFrame = r.frame; s.report.connections[i].lastUs = us
        if conns.count <= i { conns.append(contentsOf: repeatElement(Conn?.none, count: i + 1 - conns.count)) }
        if conns[i] == nil { conns[i] = Conn() }
        let att = a.decoded.attStorage
        let op = att.opcode
        let t = a.decoded.attTransaction
        if let v = a.vendor {
            for m in v.messages where m.checksum == .bad {
                s.report.counts.vendorBadChecksums += 1
                s.problem("vendor_bad_checksum", r, conn: i, handle: Int(v.handle), "\(m.plugin) \(m.message): bad checksum")
            }
        }
        switch op {
        case .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest: discoverySeen = true
        case .exchangeMTURequest: conns[i]!.clientMTU = att.mtu.map(Int.init)
        case .exchangeMTUResponse:
            if let m = att.mtu {
                let client = conns[i]!.clientMTU ?? Int(m)
                s.report.connections[i].mtu = min(client, Int(m)); s.report.connections[i].mtuFrame = r.frame
            }
        default: break
        }
        // The attribute the frame is about: its own handle, else (responses) the request's.
        // Attribute Not Found answering a discovery request ends the discovery (Core 5.4 Vol 3
        // Part G §4.4-4.7): expected, not a problem, and about a range, not an attribute.
        let discoveryEnd = att.endsDiscovery
        let handle: UInt16? = att.handle ?? t?.requestHandle ?? (discoveryEnd ? nil : att.errorHandle)
        s.lastConnection = i
        var ch: Int?
        if let h = handle, let chIndex = characteristic(i, h, &a, r, s) { ch = chIndex }
        s.lastCharacteristic = ch
        if handle != nil, op.isRead || op.isWrite && op != .prepareWriteRequest || op == .handleValueNotification || op == .handleValueIndication {
            if a.location == nil { unnamedOps += 1; if firstUnnamedFrame == nil { firstUnnamedFrame = r.frame } } else { namedOps += 1 }
        }
        let valueCount = att.value?.count ?? 0
        if let ch {
            switch op {
            case .readRequest, .readBlobRequest: s.report.characteristics[ch].reads += 1; s.report.counts.reads += 1
            case .writeRequest:
                s.report.characteristics[ch].writeRequests += 1; s.report.counts.writeRequests += 1
                s.report.characteristics[ch].bytesToServer += valueCount
            case .writeCommand, .signedWriteCommand:
                s.report.characteristics[ch].writeCommands += 1; s.report.counts.writeCommands += 1
                s.report.characteristics[ch].bytesToServer += valueCount
            case .prepareWriteRequest: s.report.characteristics[ch].bytesToServer += valueCount
            case .handleValueNotification:
                s.report.characteristics[ch].notifications += 1; s.report.counts.notifications += 1
                s.report.characteristics[ch].bytesFromServer += valueCount
            case .handleValueIndication:
                s.report.characteristics[ch].indications += 1; s.report.counts.indications += 1
                s.report.characteristics[ch].bytesFromServer += valueCount
            case .readResponse, .readBlobResponse: s.report.characteristics[ch].bytesFromServer += valueCount
            case .errorResponse: s.report.characteristics[ch].errors += 1
            default: break
            }
            if let t, op != .handleValueConfirmation { latencies[ch].add(t.latencyMicroseconds) }
        }
        if op == .errorResponse && discoveryEnd {
            s.report.counts.attErrors += 1
            s.report.counts.discoveryEnds += 1
        } else if op == .errorResponse {
            s.report.counts.attErrors += 1
            s.report.connections[i].attErrors += 1
            let req = att.requestOpcode?.name ?? "request"
            let err = att.errorCode.map { ATTErrorCode(rawValue: $0).name } ?? "error"
            var where_ = ""
            if let loc = a.location {
                where_ = " on " + (loc.characteristic.map { GATTNames.name($0) ?? $0.description } ?? GATTNames.name(loc.service) ?? loc.service.description)
                if let d = loc.descriptor { where_ += " / " + (GATTNames.name(d) ?? d.description) }
            }
            let hText = handle.map { " handle " + Hex.fixed(UInt64($0), width: 4) } ?? ""
            s.problem(
                "att_error", r, conn: i, handle: handle.map(Int.init), request: t?.requestFrame,
                "\(err) for \(req)\(hText)\(where_)")
        }
        // Unanswered requests: one outstanding request and one indication per side (§3.3.2),
        // so a second one on the same slot means the first went unanswered. Both devices may
        // be GATT clients, and a server may indicate while its client waits for a response.
        let side = r.direction.map { $0 == .sent ? 0 : 1 } ?? a.decoded.ll?.fromCentral.map { $0 ? 0 : 1 }
        if op.expectsAnswer {
            let p = Pending(frame: r.frame, us: us, opcode: op.rawValue, handle: att.handle, char: ch)
            if let side {
                let slot = side * 2 + (op == .handleValueIndication ? 1 : 0)
                if let old = conns[i]!.pending[slot] { unanswered(old, i, until: us, reason: "another request was sent", s) }
                conns[i]!.pending[slot] = p
            } else {
                // Side unknown: kept apart, answered through the decoder's pairing.
                if conns[i]!.pending.count >= 12, let old = conns[i]!.pending.remove(at: 4) {
                    unanswered(old, i, until: us, reason: "eight more requests were sent", s)
                }
                conns[i]!.pending.append(p)
            }
        } else if let t {
            if let j = conns[i]!.pending.firstIndex(where: { $0?.frame == t.requestFrame }) {
                if j < 4 { conns[i]!.pending[j] = nil } else { conns[i]!.pending.remove(at: j) }
            }
        }
    }

    func characteristic(_ conn: Int, _ handle: UInt16, _ a: inout AnalyzedFrame, _ r: CaptureRecord, _ s: CaptureStats) -> Int? {
        if let ch = conns[conn]!.chars[handle] {
            if s.report.characteristics[ch].characteristic == nil, let loc = a.location { name(ch, loc, a.namedBy, a.vendor?.plugin, s) }
            return ch
        }
        guard conns[conn]!.chars.count < StatsLimits.characteristicsPerConnection else { return nil }
        let ch = s.report.characteristics.count
        s.report.characteristics.append(.init(connection: conn, handle: Int(handle), firstFrame: r.frame))
        latencies.append(LatencyHistogram())
        conns[conn]!.chars[handle] = ch
        if let loc = a.location { name(ch, loc, a.namedBy, a.vendor?.plugin, s) }
        return ch
    }

    func name(_ ch: Int, _ loc: GATTDatabase.Location, _ by: NamingSource?, _ plugin: String?, _ s: CaptureStats) {
        s.report.characteristics[ch].service = loc.service.description
        s.report.characteristics[ch].serviceName = GATTNames.name(loc.service)
        if let c = loc.characteristic {
            s.report.characteristics[ch].characteristic = c.description
            s.report.characteristics[ch].characteristicName = GATTNames.name(c)
        } else if loc.isDeclaration {
            s.report.characteristics[ch].characteristicName = "(declaration)"
        }
        if let d = loc.descriptor {
            s.report.characteristics[ch].descriptor = d.description
            s.report.characteristics[ch].descriptorName = GATTNames.name(d)
        }
        if let by { s.report.characteristics[ch].namedBy = by == .plugin ? "plugin:" + (plugin ?? "") : by.rawValue }
    }

    /// The sniffer saw a PDU of the side that did not send `fromCentral` only with a bad CRC
    /// (frame `bad`), and `fromCentral`'s side acknowledged it: the answer to that side's
    /// oldest open request (or indication) sent before it, most likely.
    func acknowledgedCRCBad(_ conn: Int, bad: Int, fromCentral: Bool) {
        guard conn < conns.count, let c = conns[conn] else { return }
        let side = fromCentral ? 0 : 1
        if let slot = [side * 2, side * 2 + 1].filter({ c.pending[$0].map { $0.frame < bad && $0.crcBad == nil } ?? false })
            .min(by: { c.pending[$0]!.frame < c.pending[$1]!.frame })
        {
            conns[conn]!.pending[slot]!.crcBad = (bad, fromCentral)
        }
    }

    /// Requests still open when their connection ends or the capture stops.
    func closePending(_ conn: Int, at us: Int64, reason: String, _ s: CaptureStats) {
        guard conn < conns.count, let c = conns[conn] else { return }
        for p in c.pending { if let p { unanswered(p, conn, until: us, reason: reason, s) } }
    }

    func unanswered(_ p: Pending, _ conn: Int, until us: Int64, reason: String, _ s: CaptureStats) {
        if let bad = p.crcBad {
            s.report.counts.crcBadResponses += 1
            if crcBadResponses.count < 5 { crcBadResponses.append((p.frame, p.opcode, bad.frame, bad.byCentral)) }
            return
        }
        let waited = us - p.us
        let timedOut = waited >= Self.unansweredAfterUs
        guard timedOut || reason != "the capture ended" else { return }
        s.report.counts.unansweredRequests += 1
        s.kindCounts["unanswered_request", default: 0] += 1
        guard s.report.problems.count < StatsLimits.problems else { s.report.problemsNotListed += 1; return }
        let what = ATTOpcode(rawValue: p.opcode).name
        let msg =
            timedOut
            ? "\(what) unanswered for \(TimeFormat.duration(microseconds: waited)) (ATT transaction timeout is 30 s)"
            : "\(what) unanswered: \(reason) \(TimeFormat.duration(microseconds: waited)) later"
        s.report.problems.append(
            .init(
                kind: "unanswered_request", frame: p.frame, us: p.us, connection: conn,
                handle: p.handle.map(Int.init), requestFrame: nil, message: msg))
    }

    func finish(_ s: CaptureStats) {
        for (i, l) in latencies.enumerated() { s.report.characteristics[i].latency = l.summary }
    }
}
