import BluesiftWire
import BluesiftCapture

/// What the LE Audio modules add to `stats` (docs/stats.md): per ASE its state timeline
/// (`le_audio_ases`), per CIS its binding (`le_audio_cises`), per CIS/BIS direction its health
/// (`le_audio_streams`), the broadcasts seen (`le_audio_broadcasts`), counts, the `le-audio:`
/// text section, the `le_audio_streams` CSV table, problems with advice.
public final class LEAudioStats: StatsCollector {
    public struct ASERow: Codable, Sendable {
        public var connection: Int?
        public var connHandle: Int
        public var aseId: Int
        public var direction: String?
        public var state: String?
        public var cigId: Int?
        public var cisId: Int?
        public var codec: String?
        public var qosPreset: String?
        public var steps: [Step]
        public var errors: [CPError]
        public struct Step: Codable, Sendable { public var frame: Int; public var us: Int64?; public var state: String; public var cause: String? }
        public struct CPError: Codable, Sendable { public var frame: Int; public var us: Int64?; public var opcode: String; public var responseCode: Int; public var response: String; public var reason: Int; public var reasonName: String }
    }
    public struct CISRow: Codable, Sendable {
        public var handle: Int
        public var aclHandle: Int?
        public var cigId: Int?
        public var cisId: Int?
        public var status: Int?
        public var sduIntervalCToPUs: Int?
        public var sduIntervalPToCUs: Int?
        public var ases: [Int]
        /// LE Setup ISO Data Path directions (§7.8.109): "input" (host to controller), "output".
        public var dataPaths: [String]
    }
    public struct StreamRow: Codable, Sendable {
        public var handle: Int
        public var direction: String
        public var sdus: Int
        public var bytes: Int
        public var lostBySequence: Int
        public var statusValid: Int
        public var statusPossiblyInvalid: Int
        public var statusLost: Int
        public var reassemblyErrors: Int
        public var jitterMeanUs: Int?
        public var jitterMaxUs: Int?
        public var firstFrame: Int?
        public var lastFrame: Int?
        /// The QoS configured for this direction (CIG or BIG) and the throughput against it:
        /// bits per second the SDUs carried over the SDU intervals their sequence numbers span
        /// (SDUs + lost by sequence), and Max_SDU × 8 / SDU_Interval.
        public var sduIntervalUs: Int?
        public var maxSdu: Int?
        public var throughputBps: Int?
        public var configuredBps: Int?
        /// A BIS's broadcast (its BIG's periodic sync to the announcing advertiser, or a
        /// source's advertising set): Broadcast_ID and Broadcast_Name, when known.
        public var broadcastId: Int?
        public var broadcastName: String?
        /// The report's chart of the stream (`Series`).
        public var series: SeriesRow?
    }
    /// `b`: one array per bucket of `bucket_us` from `t0_us`: SDUs, bytes, lost by sequence,
    /// possibly invalid, flagged lost, jitter max (µs, null without a sample).
    public struct SeriesRow: Codable, Sendable {
        public var t0Us: Int64
        public var bucketUs: Int64
        public var b: [[Int?]]
    }
    /// A sniffed CIS (per direction) or BIS on the air: its PDUs, the SDUs they end (unframed:
    /// LLID 0b00 with data; framed: complete segments, unless encrypted), retransmissions (a
    /// CIS PDU with data repeating its direction's last SN and bytes, Core 6.0 Vol 6 Part B §4.5.13).
    public struct AirStreamRow: Codable, Sendable {
        public var accessAddress: String
        public var stream: String
        public var cigId: Int?
        public var cisId: Int?
        public var bis: Int?
        /// `central_to_peripheral`, `peripheral_to_central`; nil for a BIS or when the sniffer did not say.
        public var direction: String?
        public var encrypted: Bool
        public var pdus: Int
        public var nullPdus: Int
        public var retransmissions: Int
        public var sdus: Int
        public var bytes: Int
        public var firstFrame: Int
        public var lastFrame: Int
        /// Encrypted streams: PDUs with data decrypted and not (`LEAudioAirCrypto.swift`).
        public var decrypted: Int?
        public var notDecrypted: Int?
        /// Unframed SDUs whose other fragments were missed (counted when some were; nil for none).
        public var sdusIncomplete: Int?
    }
    struct AirStream {
        var row: AirStreamRow
        var lastSN: Bool?
        var lastPayload: [UInt8] = []
        var lastCounter: UInt64?
        /// An unframed SDU being rebuilt: whether its fragments so far are all there, and the
        /// payload counter of the last (when decrypted).
        var chain: Bool?
        var chainLast: UInt64?
        var incomplete = 0
    }
    /// Key: access address << 2 | direction (0 C→P, 1 P→C, 2 unknown); at most 64.
    var airStreams: [UInt64: AirStream] = [:]

    public struct BroadcastRow: Codable, Sendable {
        public var frame: Int
        public var what: String
        public var broadcastId: Int?
        public var name: String?
        /// A Broadcast Audio Announcement's report also carrying a Public Broadcast
        /// Announcement (PBP 1.0 §4.2): its features by name, its program info.
        public var pbpFeatures: [String]?
        public var programInfo: String?
        public var summary: String
    }

    public private(set) var state = LEAudioState()
    var broadcasts: [BroadcastRow] = []
    var seenBroadcasts: Set<String> = []
    /// One row per broadcast source (`le_audio_sources`, LEAudioSources.swift).
    var sources = LEAudioSources()
    public private(set) var isoPackets = 0, controlValues = 0, hciMessages = 0
    /// ASE connections → stats connection index, for rows.
    var connectionIndex: [UInt16: Int] = [:]
    var cisFailures: [(frame: Int, handle: UInt16, status: UInt8)] = []
    var bigLost: [(frame: Int, big: UInt8, reason: UInt8)] = []
    /// SDU loss above this fraction is a problem.
    public static let lossThreshold = 0.01

    /// A stream's SDUs over time for the report: at most `Series.cap` buckets from its first
    /// SDU, the width doubling (neighbours merged) when the stream outlasts them: memory flat.
    struct Series {
        static let cap = 128
        struct Bucket {
            var sdus = 0, bytes = 0, lostBySequence = 0, possiblyInvalid = 0, statusLost = 0
            var jitterMax: Int?
            mutating func merge(_ o: Bucket) {
                sdus += o.sdus; bytes += o.bytes; lostBySequence += o.lostBySequence
                possiblyInvalid += o.possiblyInvalid; statusLost += o.statusLost
                if let j = o.jitterMax { jitterMax = max(jitterMax ?? j, j) }
            }
        }
        var t0: Int64
        var width: Int64 = 1000
        var buckets: [Bucket] = []
        mutating func add(_ us: Int64, _ x: Bucket) {
            var i = Int(max(0, us - t0) / width)
            while i >= Self.cap {
                var merged: [Bucket] = []
                merged.reserveCapacity(Self.cap)
                var k = 0
                while k < buckets.count {
                    var m = buckets[k]
                    if k + 1 < buckets.count { m.merge(buckets[k + 1]) }
                    merged.append(m); k += 2
                }
                buckets = merged; width *= 2
                i = Int(max(0, us - t0) / width)
            }
            if buckets.count <= i { buckets.append(contentsOf: repeatElement(Bucket(), count: i + 1 - buckets.count)) }
            buckets[i].merge(x)
        }
        var row: SeriesRow {
            SeriesRow(t0Us: t0, bucketUs: width, b: buckets.map { [$0.sdus, $0.bytes, $0.lostBySequence, $0.possiblyInvalid, $0.statusLost, $0.jitterMax] })
        }
    }
    /// Per stream key, the index of its chart in `seriesList`: a Dictionary's
    /// `subscript(_:default:)` modify (a coroutine, unspecialised in the standard library)
    /// cost two heap allocations per SDU; a plain lookup and an array element cost none.
    var seriesIndex: [UInt32: Int] = [:]
    var seriesList: [Series] = []

    /// Frame → time stamp of the frames problems found at the end point at (last SDU of a
    /// stream, last step of an ASE); bounded by the streams and ASEs kept.
    var times: [Int: Timestamp] = [:]

    public init() {}

    /// A record standing for `frame` in a problem found after the pass.
    func at(_ frame: Int?) -> CaptureRecord {
        guard let frame else { return .empty }
        return CaptureRecord(
            frame: frame, timestamp: times[frame] ?? Timestamp(seconds: 0), direction: nil, kind: .unknown,
            bytes: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    public func add(_ f: borrowing DecodedFrame, _ stats: any StatsContext) {
        let r = f.record
        guard let layer = f.module else { return }
        let connection = f.connection
        switch layer {
        case let v as ISOLayer:
            isoPackets += 1
            if v.reassemblyError != nil { state.reassemblyError(handle: v.header.handle, sent: v.sent) }
            if let sdu = v.sdu {
                // Drop the previous last frame's time, keep this one's.
                let key = UInt32(sdu.handle) << 1 | (v.sent ? 1 : 0)
                let before = state.streams[key]
                if let last = before?.lastFrame { times[last] = nil }
                state.sdu(sdu, sent: v.sent, frame: r.frame)
                times[r.frame] = r.timestamp
                // What this SDU changed, into the stream's chart.
                if let after = state.streams[key] {
                    let us = r.timestamp.microseconds
                    var b = Series.Bucket()
                    b.sdus = 1; b.bytes = sdu.length
                    b.lostBySequence = after.lostBySequence - (before?.lostBySequence ?? 0)
                    b.possiblyInvalid = after.statusPossiblyInvalid - (before?.statusPossiblyInvalid ?? 0)
                    b.statusLost = after.statusLost - (before?.statusLost ?? 0)
                    if after.jitterSamples > (before?.jitterSamples ?? 0) { b.jitterMax = Int((after.jitterSum - (before?.jitterSum ?? 0)).rounded()) }
                    let i: Int
                    if let j = seriesIndex[key] {
                        i = j
                    } else {
                        i = seriesList.count
                        seriesList.append(Series(t0: us)); seriesIndex[key] = i
                    }
                    seriesList[i].add(us, b)
                }
            }
        case let v as LEAudioMessageLayer:
            let advertiser = state.advertised(v, adv: f.adv)
            if let m = v.hci {
                hciMessages += 1
                state.hci(m, frame: r.frame)
                sources.add(v, advertiser: advertiser, state: state, frame: r.frame)
                if case .subevent(let s) = m.kind, s == HCILESubeventCode.cisEstablished.rawValue || s == HCILESubeventCode.cisEstablishedV2.rawValue,
                    let st = m.uint("status"), st != 0
                {
                    let h = UInt16((m.uint("connection_handle") ?? 0) & 0x0FFF)
                    cisFailures.append((r.frame, h, UInt8(st)))
                    stats.problem(
                        "le_audio_cis_failed", r, connection: nil,
                        "CIS \(Hex.fixed(UInt64(h), width: 4)) failed to establish: \(HCIStatus(UInt8(st)).name); check the CIG parameters against the peer's (PHY, max SDU, RTN) and that the ASEs were Enabling")
                }
                if case .subevent(HCILESubeventCode.bigSyncLost.rawValue) = m.kind {
                    stats.problem(
                        "le_audio_big_sync_lost", r, connection: nil,
                        "BIG \(m.uint("big_handle") ?? 0) sync lost: \(HCIStatus(UInt8(m.uint("reason") ?? 0)).name); the source stopped or went out of range")
                }
                for a in v.advertising { broadcast(a, r.frame, with: v.advertising) }
                bigRow(m, r.frame)
            } else if let value = v.value {
                controlValues += 1
                if let c = v.characteristic, let conn = connection {
                    let index = stats.connectionIndex(f)
                    if connectionIndex[conn] == nil { connectionIndex[conn] = index }
                    state.apply(value, connection: conn, uuid: c, frame: r.frame)
                    if case .aseState = value { times[r.frame] = r.timestamp }
                    if case .aseResponse(let n) = value, n.failed { times[r.frame] = r.timestamp }
                    if case .aseResponse(let n) = value, n.failed {
                        for x in n.responses where x.code != .success {
                            stats.problem(
                                "le_audio_ase_cp_error", r, connection: index,
                                "ASE \(x.aseID) \(n.opcode.name): \(x.code.name)" + (x.reason.rawValue == 0 ? "" : " (\(x.reason.name(for: x.code)))")
                                    + "; the server refused the operation in this state or with these parameters")
                        }
                    }
                } else {
                    sources.add(v, advertiser: advertiser, state: state, frame: r.frame)
                    broadcast(value, r.frame, with: v.advertising)
                    for a in v.advertising { broadcast(a, r.frame) }
                }
            }
        case let v as LEAudioAirLayer:
            if let p = v.isochronous, let aa = v.accessAddress { air(v, p, aa, r.frame) }
        default: break
        }
    }

    func air(_ v: LEAudioAirLayer, _ p: LLIsochronousPDU, _ aa: UInt32, _ frame: Int) {
        let key = UInt64(aa) << 2 | UInt64(v.fromCentral.map { $0 ? 0 : 1 } ?? 2)
        if airStreams[key] == nil {
            guard airStreams.count < LEAudioAirState.maxEntries else { return }
            let st = v.stream
            let cis = p.stream == .cis
            airStreams[key] = AirStream(
                row: AirStreamRow(
                    accessAddress: Hex.fixed(UInt64(aa), width: 8), stream: cis ? "cis" : "bis", cigId: cis ? st.map { Int($0.cigID) } : nil,
                    cisId: cis ? st.map { Int($0.cisID) } : nil, bis: cis ? nil : st.map(\.bis), direction: v.fromCentral.map(LEAudioAirLayer.directionName),
                    encrypted: st?.encrypted ?? false, pdus: 0, nullPdus: 0, retransmissions: 0, sdus: 0, bytes: 0, firstFrame: frame, lastFrame: frame))
            if st?.encrypted ?? false { airStreams[key]?.row.decrypted = 0; airStreams[key]?.row.notDecrypted = 0 }
        }
        var a = airStreams[key]!
        a.row.pdus += 1
        a.row.lastFrame = frame
        let counter = v.decryption?.counter
        if p.npi || p.payload.isEmpty {
            a.row.nullPdus += 1
        } else if p.stream == .cis && a.lastSN == p.sn && a.lastPayload == p.payload || counter != nil && counter == a.lastCounter {
            // Same SN and bytes, or the same payload counter: sent again (a CIS PDU not
            // acknowledged, a BIS payload's repetition), not a new payload.
            a.row.retransmissions += 1
        } else if !v.isBIGControlPDU {
            if p.stream == .cis { a.lastSN = p.sn; a.lastPayload = p.payload }
            if v.decryption != nil { a.row.decrypted? += counter == nil ? 0 : 1; a.row.notDecrypted? += counter == nil ? 1 : 0 }
            // Without the MIC; a PDU left encrypted ends no SDU anyone can read.
            let sealed = a.row.encrypted && counter == nil
            a.row.bytes += max(0, p.payload.count - (sealed ? 4 : 0))
            if sealed {
                a.chain = nil
            } else if p.isFramed {
                a.row.sdus += v.segments.reduce(0) { $0 + ($1.complete ? 1 : 0) }
            } else {
                unframed(&a, p.llid, counter, perSDU: v.stream?.pdusPerSDU[v.fromCentral == false ? 1 : 0] ?? 1)
            }
            if counter != nil { a.lastCounter = counter }
        }
        airStreams[key] = a
    }

    /// Rebuilds an unframed SDU from its fragments (Core 6.0 Vol 6 Part G §2; LLID 0b01 a
    /// start or continuation, 0b00 the end or the whole): with payload counters (decrypted
    /// PDUs) an SDU takes `perSDU` consecutive payloads from a multiple of `perSDU` (the BN
    /// payloads of an ISO interval shared by its SDUs), so a fragment whose predecessors were
    /// missed is known; without them, a chain of fragments ends at LLID 0b00.
    func unframed(_ a: inout AirStream, _ llid: UInt8, _ c: UInt64?, perSDU: UInt64) {
        let starts = c.map { $0 % max(1, perSDU) == 0 } ?? (a.chain == nil)
        if starts {
            if a.chain != nil { a.incomplete += 1 } // the previous one never ended
            a.chain = true
        } else if let ok = a.chain {
            a.chain = ok && (c == nil || a.chainLast.map { $0 &+ 1 == c } ?? false)
        } else {
            a.chain = false // its start was missed
        }
        a.chainLast = c
        guard llid == 0 else { return }
        if a.chain == true { a.row.sdus += 1 } else { a.incomplete += 1 }
        a.chain = nil
        if a.incomplete > 0 { a.row.sdusIncomplete = a.incomplete }
    }

    /// `others`: the rest of the advertising report; a source's Broadcast_Name and PBP
    /// features go on its announcement's row.
    func broadcast(_ v: LEAudioValue, _ frame: Int, with others: [LEAudioValue] = []) {
        guard broadcasts.count < 256 else { return }
        var row: BroadcastRow?
        switch v {
        case .broadcastAnnouncement(let a):
            row = .init(frame: frame, what: "broadcast_audio_announcement", broadcastId: Int(a.broadcastID), summary: a.summary)
            for o in others {
                switch o {
                case .broadcastName(let n) where n.error == nil:
                    row?.name = n.name; row?.summary += " \"" + n.name + "\""
                case .publicBroadcast(let p) where p.error == nil:
                    let names = [(1, "encrypted"), (2, "standard_quality"), (4, "high_quality")].filter { p.features & UInt8($0.0) != 0 }.map(\.1)
                    row?.pbpFeatures = names; row?.programInfo = p.metadata.programInfo
                    row?.summary += ", " + p.summary
                default: break
                }
            }
        case .base(let b): row = .init(frame: frame, what: "base", summary: b.summary)
        case .publicBroadcast(let p): row = .init(frame: frame, what: "public_broadcast_announcement", name: p.metadata.programInfo, summary: p.summary)
        case .broadcastName(let n): row = .init(frame: frame, what: "broadcast_name", name: n.name, summary: n.summary)
        default: break
        }
        // One row per distinct value (advertising repeats them).
        if let row, seenBroadcasts.insert(row.what + row.summary).inserted { broadcasts.append(row) }
    }

    /// BIGInfo (encrypted or not) and the BIG a sink synced to (which BISes of which sync).
    func bigRow(_ m: LEAudioHCIMessage, _ frame: Int) {
        guard broadcasts.count < 256 else { return }
        var row: BroadcastRow?
        switch m.kind {
        case .subevent(HCILESubeventCode.bIGInfoAdvertisingReport.rawValue):
            let enc = m.uint("encryption") == 1
            row = .init(
                frame: frame, what: "big_info",
                summary: "BIGInfo on sync \(Hex.fixed(m.uint("sync_handle") ?? 0, width: 4)): \(m.uint("num_bis") ?? 0) BIS, \(m.uint("sdu_interval") ?? 0) us, max SDU \(m.uint("max_sdu") ?? 0), " + (enc ? "encrypted" : "not encrypted"))
        case .command(HCICommandOpcode.leBIGCreateSync.rawValue):
            row = .init(
                frame: frame, what: "big_sync",
                summary: "BIG \(m.uint("big_handle") ?? 0) sync to BIS " + m.uints("bis").map { String($0) }.joined(separator: ",") + " of sync \(Hex.fixed(m.uint("sync_handle") ?? 0, width: 4))"
                    + (m.uint("encryption") == 1 ? " with a Broadcast_Code" : ""))
        default: break
        }
        if let row, seenBroadcasts.insert(row.what + row.summary).inserted { broadcasts.append(row) }
    }

    static func airLine(_ a: AirStreamRow) -> String {
        var s = a.accessAddress + " "
        if a.stream == "cis" {
            s += "CIS (CIG \(a.cigId ?? 0) CIS \(a.cisId ?? 0))"
            if let d = a.direction { s += d == "central_to_peripheral" ? " C→P" : " P→C" }
        } else {
            s += (a.bis ?? 0) == 0 ? "BIG control" : "BIS \(a.bis ?? 0)"
        }
        s += ": \(a.pdus) PDUs (\(a.nullPdus) null, \(a.retransmissions) retransmitted), \(a.sdus) SDUs"
        if let n = a.sdusIncomplete { s += " (\(n) incomplete)" }
        s += ", \(a.bytes) B"
        if a.encrypted { s += ", encrypted" + (a.decrypted.map { " (\($0) decrypted, \(a.notDecrypted ?? 0) not)" } ?? "") }
        return s + ", frames \(a.firstFrame)-\(a.lastFrame)"
    }

    public static var tables: [(name: String, header: String)] {
        [
            (
                "le_audio_streams",
                "file,handle,direction,sdus,bytes,lost_by_sequence,status_valid,status_possibly_invalid,status_lost,reassembly_errors,jitter_mean_us,jitter_max_us,first_frame,last_frame,sdu_interval_us,max_sdu,throughput_bps,configured_bps,broadcast_id,broadcast_name"
            ),
            ("le_audio_sources", sourcesHeader)
        ]
    }

    /// "80.0" (kbit/s, one decimal).
    static func kbps(_ bps: Int) -> String {
        let tenths = (bps + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }

    public func finish(_ stats: any StatsContext) -> ModuleStats {
        var m = ModuleStats()
        let ases = state.ases.values.sorted { $0.key < $1.key }
        let aseRows = ases.map { a in
            ASERow(
                connection: connectionIndex[a.key.connection], connHandle: Int(a.key.connection), aseId: Int(a.key.aseID),
                direction: a.sink.map { $0 ? "sink" : "source" }, state: a.state?.name, cigId: a.cigID.map(Int.init), cisId: a.cisID.map(Int.init),
                codec: a.codec?.summary, qosPreset: a.qos?.preset,
                steps: a.steps.map { .init(frame: $0.frame, us: times[$0.frame]?.microseconds, state: $0.state.name, cause: $0.cause?.name) },
                errors: a.errors.map {
                    .init(
                        frame: $0.frame, us: times[$0.frame]?.microseconds, opcode: $0.opcode.name, responseCode: Int($0.code.rawValue), response: $0.code.name,
                        reason: Int($0.reason.rawValue), reasonName: $0.reason.name(for: $0.code))
                })
        }
        let cises = state.cises.values.sorted { $0.handle < $1.handle }.map { c in
            CISRow(
                handle: Int(c.handle), aclHandle: c.aclHandle.map(Int.init), cigId: c.cigID.map(Int.init), cisId: c.cisID.map(Int.init),
                status: c.status.map(Int.init), sduIntervalCToPUs: c.sduIntervalCToP.map(Int.init), sduIntervalPToCUs: c.sduIntervalPToC.map(Int.init),
                ases: state.ases(onCIS: c.handle).map { Int($0.key.aseID) }, dataPaths: [(1, "input"), (2, "output")].filter { c.dataPaths & $0.0 != 0 }.map(\.1))
        }
        let streams = state.streams.values.sorted { ($0.handle, $0.sent ? 0 : 1) < ($1.handle, $1.sent ? 0 : 1) }
        let streamRows = streams.map { s in
            let broadcast = state.big(ofBIS: s.handle).flatMap { state.broadcast(big: $0) }
            let qos = state.configuredQoS(handle: s.handle, sent: s.sent)
            // Over the SDU intervals the sequence numbers span (one an interval, §5.4.5): the
            // SDUs received and those missing.
            let intervals = s.sdus + s.lostBySequence
            let throughput = qos.flatMap { q in intervals > 0 ? Int((Double(s.bytes) * 8e6 / (Double(intervals) * Double(q.sduInterval))).rounded()) : nil }
            return StreamRow(
                handle: Int(s.handle), direction: s.sent ? "sent" : "received", sdus: s.sdus, bytes: s.bytes, lostBySequence: s.lostBySequence,
                statusValid: s.statusValid, statusPossiblyInvalid: s.statusPossiblyInvalid, statusLost: s.statusLost,
                reassemblyErrors: s.reassemblyErrors, jitterMeanUs: s.meanJitter.map { Int($0.rounded()) },
                jitterMaxUs: s.jitterSamples > 0 ? Int(s.jitterMax.rounded()) : nil, firstFrame: s.firstFrame, lastFrame: s.lastFrame,
                sduIntervalUs: qos.map { Int($0.sduInterval) }, maxSdu: qos.map { Int($0.maxSDU) }, throughputBps: throughput,
                configuredBps: qos.map { Int((Double($0.maxSDU) * 8e6 / Double($0.sduInterval)).rounded()) },
                broadcastId: broadcast?.id.map(Int.init), broadcastName: broadcast?.name, series: seriesIndex[UInt32(s.handle) << 1 | (s.sent ? 1 : 0)].map { seriesList[$0].row })
        }
        // Problems found only at the end: streams that never streamed, loss above threshold.
        for a in ases where !a.steps.isEmpty && !a.reachedStreaming && a.steps.contains(where: { $0.state == .enabling }) {
            stats.problem(
                "le_audio_never_streaming", at(a.steps.last?.frame), connection: connectionIndex[a.key.connection],
                "ASE \(a.key.aseID) was enabled but never reached Streaming; look for the CIS setup and Receiver Start Ready")
        }
        for s in streams {
            let lost = s.lostBySequence + s.statusLost
            let total = s.sdus + s.lostBySequence
            if total > 0, Double(lost) / Double(total) > Self.lossThreshold {
                stats.problem(
                    "le_audio_sdu_loss", at(s.lastFrame), connection: nil,
                    "ISO \(Hex.fixed(UInt64(s.handle), width: 4)) \(s.sent ? "sent" : "received"): \(lost) of \(total) SDUs lost (\(lost * 100 / total) %); check the radio link (RTN, PHY) and interference")
            }
        }
        let airRows = airStreams.sorted { $0.key < $1.key }.map(\.value.row)
        m.members = [("leAudioAses", aseRows), ("leAudioCises", cises), ("leAudioStreams", streamRows), ("leAudioBroadcasts", broadcasts)]
        if !airRows.isEmpty { m.members.append(("leAudioAirStreams", airRows)) }
        // Absent when no source was seen: captures without one keep their JSON as it was.
        let sourceRows = sources.all
        if !sourceRows.isEmpty { m.members.append(("leAudioSources", sourceRows)) }
        m.hasData = !(aseRows.isEmpty && streamRows.isEmpty && broadcasts.isEmpty && airRows.isEmpty)
        m.counts = [
            ("isoPackets", isoPackets), ("isoSdus", streams.reduce(0) { $0 + $1.sdus }), ("leAudioValues", controlValues),
            ("leAudioHciMessages", hciMessages)
        ]
        let file = stats.file
        m.tables["le_audio_sources"] = sourceRows.map { LEAudioSources.csv($0, file: file) }
        m.tables["le_audio_streams"] = streamRows.map { s -> [String?] in
            let head: [String?] = [file, Hex.fixed(UInt64(s.handle), width: 4), s.direction, String(s.sdus), String(s.bytes), String(s.lostBySequence)]
            let status: [String?] = [String(s.statusValid), String(s.statusPossiblyInvalid), String(s.statusLost), String(s.reassemblyErrors)]
            let tail: [String?] = [s.jitterMeanUs.map { String($0) }, s.jitterMaxUs.map { String($0) }, s.firstFrame.map { String($0) }, s.lastFrame.map { String($0) }]
            // The JSON's QoS and broadcast members, after the columns that were there first.
            let qos: [String?] = [s.sduIntervalUs.map { String($0) }, s.maxSdu.map { String($0) }, s.throughputBps.map { String($0) }, s.configuredBps.map { String($0) }]
            let broadcast: [String?] = [s.broadcastId.map { Hex.fixed(UInt64($0), width: 6) }, s.broadcastName]
            return head + status + tail + qos + broadcast
        }
        if !aseRows.isEmpty || !streams.isEmpty || !broadcasts.isEmpty {
            m.text.append("")
            m.text.append("le-audio: \(aseRows.count) ASEs, \(cises.count) CISes, \(streams.count) ISO streams, \(broadcasts.count) broadcast values")
            for a in ases { m.text.append("  " + state.timeline(a)) }
            for a in ases { for e in a.errors { m.text.append("  ASE \(a.key.aseID) #\(e.frame) \(e.opcode.name): \(e.code.name)" + (e.reason.rawValue == 0 ? "" : " (\(e.reason.name(for: e.code)))")) } }
            for c in cises {
                m.text.append(
                    "  CIS \(Hex.fixed(UInt64(c.handle), width: 4)) CIG \(c.cigId.map(String.init) ?? "?") CIS \(c.cisId.map(String.init) ?? "?")"
                        + (c.aclHandle.map { " on ACL " + Hex.fixed(UInt64($0), width: 4) } ?? "")
                        + (c.status.map { $0 == 0 ? " established" : " failed (\(HCIStatus(UInt8($0)).name))" } ?? "")
                        + (c.ases.isEmpty ? "" : " ASE " + c.ases.map(String.init).joined(separator: ","))
                        + (c.dataPaths.isEmpty ? "" : ", data path " + c.dataPaths.joined(separator: "+")))
            }
            for (s, row) in zip(streams, streamRows) {
                let broadcast = row.broadcastId.map { " (broadcast " + Hex.fixed(UInt64($0), width: 6) + (row.broadcastName.map { " \"" + $0 + "\"" } ?? "") + ")" }
                let rate = row.throughputBps.flatMap { t in row.configuredBps.map { ", \(Self.kbps(t)) of \(Self.kbps($0)) kbit/s configured" } }
                m.text.append("  " + state.health(s) + (rate ?? "") + (broadcast ?? ""))
            }
            for b in broadcasts { m.text.append("  #\(b.frame) " + b.summary) }
            for s in sourceRows { m.text.append("  " + LEAudioSources.line(s)) }
        }
        if !airRows.isEmpty {
            m.text.append("")
            m.text.append("le-audio on the air: \(airRows.count) isochronous streams")
            for a in airRows { m.text.append("  " + Self.airLine(a)) }
        }
        return m
    }
}
