import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// What `bluesift stats` reports (schema: docs/stats.md). Plain Codable values: the CLI
/// encodes them as JSON, text or CSV, and the HTML report embeds them.
public struct StatsReport: Encodable, Sendable {
    public var file: String
    public var format: String
    public var records = 0
    public var bytes = 0
    public var truncatedRecords = 0
    /// RFC 3339 UTC, with microseconds.
    public var first: String?
    public var last: String?
    public var firstUs: Int64?
    public var lastUs: Int64?
    public var durationUs: Int64 = 0
    /// Every timestamp a whole millisecond: the capture's clock has ms resolution, so
    /// latencies are shown as "<1 ms" and whole ms, never "0 µs".
    public var millisecondClock = false
    public var quality: [Advice] = []
    public var devices: [Device] = []
    /// Devices past the cap (`StatsLimits.devices`), counted only.
    public var devicesNotListed = 0
    public var connections: [Connection] = []
    public var connectionsNotListed = 0
    public var failedConnections: [FailedConnection] = []
    public var characteristics: [Characteristic] = []
    public var problems: [Problem] = []
    /// Problems per kind, including those past the listing cap (sorted by kind).
    public var problemCounts: [KindCount] = []
    public struct KindCount: Codable, Sendable { public var kind: String; public var count: Int }
    public var problemsNotListed = 0
    /// What the protocol modules' collectors add (`ProtocolRegistry.collectors`): members of
    /// this object and of `counts`, text sections, CSV tables (the Classic modules' `classic[]`).
    public var modules: [ModuleStats] = []
    /// Numeric fields plugins decoded from advertising data, per advertiser (`SensorTable`);
    /// absent when there are none, so captures without them keep their JSON.
    public var sensors: [Sensor]?
    /// Readings of fields past `StatsLimits.sensors`, counted only (absent when 0).
    public var sensorsNotListed: Int?
    public var counts: Counts = Counts()

    public struct Counts: Encodable, Sendable {
        /// `attErrors`: every Error Response; `discoveryEnds`: those that end a discovery
        /// (Attribute Not Found for Find Information / Find By Type Value / Read By (Group)
        /// Type), which are not problems.
        public var att = 0, attErrors = 0, discoveryEnds = 0, smp = 0, smpPairingFailed = 0, hciCommandsFailed = 0
        public var reassemblyErrors = 0, malformedRecords = 0, vendorBadChecksums = 0
        public var advertisingReports = 0, unansweredRequests = 0
        /// Requests whose answer the sniffer saw only with a bad CRC, acknowledged by the
        /// requester: answered on the link, so not in `unansweredRequests`.
        public var crcBadResponses = 0
        public var reads = 0, writeRequests = 0, writeCommands = 0, notifications = 0, indications = 0
        /// The modules' counts (`ModuleStats.counts`), e.g. Classic's `sdp`, `rfcomm_frames`.
        public var modules: [(key: String, value: Int)] = []
        /// A module's count by key (camelCase), 0 when absent.
        public subscript(module key: String) -> Int { modules.first { $0.key == key }?.value ?? 0 }
        /// Sniffer captures only (absent otherwise): link-layer packets; those with a bad CRC
        /// (the sniffer's verdict, or bluesift's where the capture does not say), those whose
        /// CRC bluesift checked, and data PDUs whose CRC nothing could check (not decoded).
        public var llPackets: Int?, crcBad: Int?, crcCheckedByBluesift: Int?, crcUnverified: Int?
    }

    /// A finding about the capture itself, with what to do about it.
    public struct Advice: Codable, Sendable {
        public var code: String
        public var severity: String   // "warning" | "info"
        public var message: String
        public var advice: String
        public var frame: Int?
    }

    public struct Device: Codable, Sendable {
        public var address: String
        public var addressType: String?
        public var names: [String] = []
        public var rssiMin: Int?
        public var rssiMax: Int?
        public var companies: [String] = []
        public var advertisingReports = 0
        public var firstFrame: Int
        public var lastFrame: Int
        public var firstUs: Int64
        public var lastUs: Int64
        /// Indexes into `connections`.
        public var connections: [Int] = []
    }

    public struct Parameters: Codable, Sendable {
        public var frame: Int
        public var us: Int64
        /// Connection interval in 1.25 ms units, latency in events, timeout in 10 ms units.
        public var interval: Int
        public var latency: Int
        public var timeout: Int
        public var intervalMs: Double { Double(interval) * 1.25 }
    }

    public struct Encryption: Codable, Sendable {
        public var frame: Int
        public var us: Int64
        public var enabled: Bool
        public var keySize: Int?
        /// "hci" (Encryption Change) or "ll" (LL_START_ENC_REQ seen by a sniffer).
        public var source: String
    }

    public struct Connection: Codable, Sendable {
        public var index: Int
        public var adapter: Int
        /// HCI connection handle, or the sniffer's connection number.
        public var handle: Int
        public var transport: String?
        public var peer: String?
        public var peerAddressType: String?
        public var peerName: String?
        public var role: String?
        public var accessAddress: String?
        /// Nil when the capture started during the connection (first frame in `firstFrame`).
        public var startFrame: Int?
        public var startUs: Int64?
        public var firstFrame: Int
        public var firstUs: Int64
        public var lastFrame: Int
        public var lastUs: Int64
        public var endFrame: Int?
        public var endUs: Int64?
        public var durationUs: Int64
        public var disconnectReason: Int?
        public var disconnectReasonName: String?
        public var parameters: [Parameters] = []
        public var mtu: Int?
        public var mtuFrame: Int?
        public var txPhy: String?
        public var rxPhy: String?
        public var phyFrame: Int?
        public var maxTxOctets: Int?
        public var maxRxOctets: Int?
        public var dataLengthFrame: Int?
        public var encryption: [Encryption] = []
        public var pairingFrame: Int?
        public var pairingFailed: String?
        public var attOperations = 0
        public var attErrors = 0
        /// ATT PDUs carried in frames the sniffer could not decrypt.
        public var encryptedFrames = 0
    }

    public struct FailedConnection: Codable, Sendable {
        public var frame: Int
        public var us: Int64
        public var peer: String?
        /// "failed" (Connection Complete with an error), "cancelled", "never_completed".
        public var outcome: String
        public var status: Int?
        public var statusName: String?
    }

    public struct Characteristic: Codable, Sendable {
        /// Index into `connections`.
        public var connection: Int
        public var handle: Int
        public var service: String?
        public var serviceName: String?
        public var characteristic: String?
        public var characteristicName: String?
        public var descriptor: String?
        public var descriptorName: String?
        public var namedBy: String?
        public var reads = 0
        public var writeRequests = 0
        public var writeCommands = 0
        public var notifications = 0
        public var indications = 0
        public var errors = 0
        public var bytesToServer = 0
        public var bytesFromServer = 0
        public var latency: Latency?
        public var firstFrame: Int
    }

    public struct Latency: Codable, Sendable {
        public var count: Int
        public var minUs: Int64
        public var medianUs: Int64
        public var p95Us: Int64
        public var maxUs: Int64
        /// Counts per bucket, bucket i holding [bounds[i], bounds[i+1]) µs (bounds: `LatencyHistogram.bounds`).
        public var histogram: [Int]
    }

    public struct Problem: Codable, Sendable {
        /// att_error, unanswered_request, smp_pairing_failed, hci_command_failed,
        /// l2cap_reassembly, truncated_record, malformed, vendor_bad_checksum.
        public var kind: String
        public var frame: Int
        public var us: Int64
        public var connection: Int?
        public var handle: Int?
        public var requestFrame: Int?
        public var message: String
    }
}

/// The JSON (docs/stats.md): the members the synthesized encoding wrote, then the modules'
/// (the encoder sorts keys).
extension StatsReport {
    struct Key: CodingKey, ExpressibleByStringLiteral {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        init(stringLiteral s: String) { stringValue = s }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(file, forKey: "file")
        try c.encode(format, forKey: "format")
        try c.encode(records, forKey: "records")
        try c.encode(bytes, forKey: "bytes")
        try c.encode(truncatedRecords, forKey: "truncatedRecords")
        try c.encodeIfPresent(first, forKey: "first")
        try c.encodeIfPresent(last, forKey: "last")
        try c.encodeIfPresent(firstUs, forKey: "firstUs")
        try c.encodeIfPresent(lastUs, forKey: "lastUs")
        try c.encode(durationUs, forKey: "durationUs")
        try c.encode(millisecondClock, forKey: "millisecondClock")
        try c.encode(quality, forKey: "quality")
        try c.encode(devices, forKey: "devices")
        try c.encode(devicesNotListed, forKey: "devicesNotListed")
        try c.encode(connections, forKey: "connections")
        try c.encode(connectionsNotListed, forKey: "connectionsNotListed")
        try c.encode(failedConnections, forKey: "failedConnections")
        try c.encode(characteristics, forKey: "characteristics")
        try c.encode(problems, forKey: "problems")
        try c.encode(problemCounts, forKey: "problemCounts")
        try c.encode(problemsNotListed, forKey: "problemsNotListed")
        try c.encodeIfPresent(sensors, forKey: "sensors")
        try c.encodeIfPresent(sensorsNotListed, forKey: "sensorsNotListed")
        try c.encode(counts, forKey: "counts")
        for m in modules {
            for (k, v) in m.members { try c.encode(v, forKey: Key(stringValue: k)) }
        }
    }
}

extension StatsReport.Counts {
    public func encode(to encoder: any Encoder) throws {
        typealias Key = StatsReport.Key
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(att, forKey: "att")
        try c.encode(attErrors, forKey: "attErrors")
        try c.encode(discoveryEnds, forKey: "discoveryEnds")
        try c.encode(smp, forKey: "smp")
        try c.encode(smpPairingFailed, forKey: "smpPairingFailed")
        try c.encode(hciCommandsFailed, forKey: "hciCommandsFailed")
        try c.encode(reassemblyErrors, forKey: "reassemblyErrors")
        try c.encode(malformedRecords, forKey: "malformedRecords")
        try c.encode(vendorBadChecksums, forKey: "vendorBadChecksums")
        try c.encode(advertisingReports, forKey: "advertisingReports")
        try c.encode(unansweredRequests, forKey: "unansweredRequests")
        try c.encode(crcBadResponses, forKey: "crcBadResponses")
        try c.encode(reads, forKey: "reads")
        try c.encode(writeRequests, forKey: "writeRequests")
        try c.encode(writeCommands, forKey: "writeCommands")
        try c.encode(notifications, forKey: "notifications")
        try c.encode(indications, forKey: "indications")
        try c.encodeIfPresent(llPackets, forKey: "llPackets")
        try c.encodeIfPresent(crcBad, forKey: "crcBad")
        try c.encodeIfPresent(crcCheckedByBluesift, forKey: "crcCheckedByBluesift")
        try c.encodeIfPresent(crcUnverified, forKey: "crcUnverified")
        for (k, v) in modules { try c.encode(v, forKey: Key(stringValue: k)) }
    }
}

/// Caps that keep `stats` memory flat on any capture.
public enum StatsLimits {
    public static let devices = 4096
    public static let connections = 4096
    public static let characteristicsPerConnection = 512
    public static let problems = 10_000
    public static let namesPerDevice = 4
    /// Sensor rows (advertiser × plugin message × numeric field).
    public static let sensors = 4096
    /// Sensor rows the report charts (the first ones seen): 512 buckets of 64 bytes each, so
    /// at most 8 MB of series; rows past it are in the table, not charted.
    public static let sensorSeries = 256
}

/// Latency histogram: 8 buckets per octave from 1 µs to ~2^34 µs, so median/p95 are within
/// ±4.5% of the exact value (min and max are exact). Allocated on first use.
public struct LatencyHistogram: Sendable {
    static let perOctave = 8.0
    static let buckets = 8 * 35
    var counts: [UInt32] = []
    var n = 0
    var minUs = Int64.max, maxUs = Int64.min

    /// Lower bound of each display bucket (µs): the report's histograms use decades/3.
    public static let bounds: [Int64] = [0, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000,
                                         100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000]

    static func bucket(_ us: Int64) -> Int {
        guard us > 1 else { return 0 }
        return min(buckets - 1, Int(statsLog2(Double(us)) * perOctave))
    }

    mutating func add(_ us: Int64) {
        if counts.isEmpty { counts = [UInt32](repeating: 0, count: Self.buckets) }
        counts[Self.bucket(us)] &+= 1
        n += 1
        if us < minUs { minUs = us }
        if us > maxUs { maxUs = us }
    }

    func quantile(_ q: Double) -> Int64 {
        let target = max(1, Int((Double(n) * q).rounded(.up)))
        var seen = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += Int(c)
            if seen >= target {
                let mid = i == 0 ? 1 : statsExp2((Double(i) + 0.5) / Self.perOctave)
                return min(maxUs, max(minUs, Int64(mid.rounded())))
            }
        }
        return maxUs
    }

    var summary: StatsReport.Latency? {
        guard n > 0 else { return nil }
        var display = [Int](repeating: 0, count: Self.bounds.count)
        for (i, c) in counts.enumerated() where c > 0 {
            let lo = i == 0 ? 0 : statsExp2(Double(i) / Self.perOctave)
            var b = Self.bounds.count - 1
            while b > 0 && Double(Self.bounds[b]) > lo { b -= 1 }
            display[b] += Int(c)
        }
        return .init(count: n, minUs: minUs, medianUs: quantile(0.5), p95Us: quantile(0.95), maxUs: maxUs, histogram: display)
    }
}

func statsLog2(_ x: Double) -> Double {
    // Integer part from the exponent, fraction by a short series: no libm dependency here.
    guard x > 0 else { return 0 }
    let e = Double(x.exponent)
    let m = x.significand   // [1, 2)
    // log2(m) = ln(m)/ln2, ln via atanh series on (m-1)/(m+1)
    let y = (m - 1) / (m + 1), y2 = y * y
    var term = y, sum = 0.0
    var k = 1.0
    for _ in 0..<8 { sum += term / k; term *= y2; k += 2 }
    return e + 2 * sum / 0.6931471805599453
}

func statsExp2(_ x: Double) -> Double {
    let i = x.rounded(.down)
    let f = (x - i) * 0.6931471805599453
    var term = 1.0, sum = 1.0
    for k in 1...12 { term *= f / Double(k); sum += term }
    return sum * Double(sign: .plus, exponent: Int(i), significand: 1)
}

/// Computes a `StatsReport` in one pass over analyzed frames. Memory is bounded by the caps
/// in `StatsLimits`, never by the number of records.
public final class CaptureStats: StatsContext {
    public let unansweredAfterUs: Int64 = 30_000_000   // ATT transaction timeout, Core 5.4 Vol 3 Part F §3.3.3
    public var report: StatsReport

    struct ConnKey: Hashable { var adapter: UInt16; var handle: UInt16 }
    struct Pending {
        var frame: Int; var us: Int64; var opcode: UInt8; var handle: UInt16?; var char: Int?
        /// A PDU the other side sent after it, seen only with a bad CRC and acknowledged by
        /// this side: (its frame, acknowledged by the central).
        var crcBad: (frame: Int, byCentral: Bool)?
    }
    struct ConnState {
        var index: Int
        var chars: [UInt16: Int] = [:]
        /// Unanswered request per direction of the request (0 sent, 1 received, 2 unknown).
        /// Outstanding transactions (Core 5.4 Vol 3 Part F §3.3.2: one request per client and
        /// one indication per server, each way): slots 0-3 by side (sent/central, received/
        /// peripheral) and kind (request, indication); slots 4… hold those whose side the
        /// capture does not say (up to 8; each is cleared by the response the decoder pairs).
        var pending: [Pending?] = Array(repeating: nil, count: 4)
        var clientMTU: Int?
        var ended = false
    }

    var conns: [ConnKey: ConnState] = [:]
    /// The protocol modules' collectors (`ProtocolRegistry.collectors`), with the layers and
    /// record kinds each is given.
    let collectors: [any StatsCollector]
    let collectorLayers: [DecodedFrame.Layers]
    let collectorKinds: [[PacketKind]]
    let collectorKindList: [PacketKind]
    let registry: ProtocolRegistry
    /// The decoder of the frame being added (`connectionIndex` asks it).
    var currentDecoder: ProtocolDecoder?
    var kindCounts: [String: Int] = [:]
    var deviceIndex: [BDAddr: Int] = [:]
    /// Connection attempts awaiting their Complete, by adapter and transport (`createKey`): an
    /// LE and a BR/EDR create may be pending together (pongbot lost the LE one).
    var pendingCreates: [UInt32: (frame: Int, us: Int64, peer: BDAddr?, cancelled: Bool)] = [:]
    static func createKey(_ adapter: UInt16, le: Bool) -> UInt32 { UInt32(adapter) << 1 | (le ? 1 : 0) }
    /// CONNECT_IND seen by a sniffer, by access address.
    var connectInds: [UInt32: (frame: Int, us: Int64, peer: BDAddr?, params: (Int, Int, Int))] = [:]
    var lastUs: Int64?
    var openConnections = 0
    var gapCount = 0, backwards = 0
    var firstGapFrame: Int?, firstBackwardsFrame: Int?
    var truncatedACL = 0, firstTruncatedFrame: Int?
    var unnamedOps = 0, namedOps = 0, firstUnnamedFrame: Int?
    var discoverySeen = false
    var llEncryptedFrames = 0, firstEncryptedFrame: Int?
    var smpSeen = false
    var isSniffer = false
    var llPackets = 0, crcBad = 0, crcComputed = 0, crcUnverified = 0, crcValidatedWrongly = 0
    var pairingFrames = 0
    var subMillisecond = false

    /// Sensor readings decoded from advertising data (the report keeps their series too).
    public var sensors = SensorTable()
    /// After `finish`: the index in `sensors.rows`/`sensors.series` of each `report.sensors` row.
    public private(set) var sensorOrder: [Int] = []

    public init(file: String, format: String, registry: ProtocolRegistry = .shared) {
        report = StatsReport(file: file, format: format)
        collectors = registry.collectors.map { $0.type.init() }
        collectorLayers = registry.collectors.map(\.layers)
        collectorKinds = registry.collectors.map { $0.type.recordKinds }
        collectorKindList = Array(Set(collectorKinds.joined()))
        self.registry = registry
    }

    // MARK: per record

    /// Times of note records (kept apart from the span), bounded.
    var noteTimes: [Int64] = []
    var jitter = 0, maxJitterUs: Int64 = 0
    var firstJitterFrame: Int?
    var vendorDiagnostics = 0
    var firstVendorDiagnostic: Int?
    var vendorHandles: [UInt16] = []
    /// HCI commands and events: a log without any (ACL data only) cannot show a connection's start.
    var hciControl = 0
    /// Requests answered by a PDU the sniffer saw only with a bad CRC: (request, opcode,
    /// CRC-bad frame, acknowledged by the central), the first few for the quality note.
    var crcBadResponses: [(request: Int, opcode: UInt8, frame: Int, byCentral: Bool)] = []

    public func add(_ a: inout AnalyzedFrame, decoder: ProtocolDecoder) {
        let r = a.decoded.record
        let us = r.timestamp.microseconds
        report.records += 1
        report.bytes += r.bytes.count
        // The span is the traffic's: PacketLogger writes notes (its header, system messages)
        // dated days before a session, which stretched a 9-s capture to 139 h.
        if r.kind == .note {
            if noteTimes.count < 100_000 { noteTimes.append(us) }
        } else {
        // Earliest → latest, not first → last: a file's last records may go back in time.
        if report.firstUs.map({ us < $0 }) ?? true { report.firstUs = us }
        if report.lastUs.map({ us > $0 }) ?? true { report.lastUs = us }
        if let l = lastUs {
            if us < l {
                // A step back under 50 ms is clock jitter (PacketLogger's millisecond clock, btmon
                // interleaving its sources); a larger one is a wrapped buffer or merged files.
                if l - us >= CaptureSummary.backwardsUs { backwards += 1; if firstBackwardsFrame == nil { firstBackwardsFrame = r.frame } }
                else { jitter += 1; maxJitterUs = max(maxJitterUs, l - us); if firstJitterFrame == nil { firstJitterFrame = r.frame } }
            }
            else if us - l > 60_000_000 && openConnections > 0 { gapCount += 1; if firstGapFrame == nil { firstGapFrame = r.frame } }
        }
        lastUs = us
        }
        if !subMillisecond && r.timestamp.nanoseconds % 1_000_000 != 0 { subMillisecond = true }
        if r.isTruncated {
            report.truncatedRecords += 1
            if r.kind == .acl { truncatedACL += 1; if firstTruncatedFrame == nil { firstTruncatedFrame = r.frame } }
            problem("truncated_record", r, conn: nil, "record cut by the capture: \(r.bytes.count) of \(r.originalLength) bytes")
        }
        let layers = a.decoded.layers
        if !a.decoded.errors.isEmpty {
            report.counts.malformedRecords += 1
            for e in a.decoded.errors {
                if e.code == .reassembly || (e.layer == "l2cap" && e.code != .truncated) {
                    report.counts.reassemblyErrors += e.code == .reassembly ? 1 : 0
                    if e.code == .reassembly {
                        // A module's messages split over several packets (AVDTP, AVCTP).
                        if registry.layer(e.layer) != nil { problem("message_reassembly", r, conn: nil, e.layer + ": " + e.message) }
                        else { problem("l2cap_reassembly", r, conn: nil, e.message) }
                    }
                }
                if e.code != .reassembly && !(e.code == .truncated && r.isTruncated) {
                    problem("malformed", r, conn: nil, (e.layer.isEmpty ? "" : e.layer + ": ") + e.message)
                }
            }
        }
        if r.kind == .command || r.kind == .event { hciControl += 1 }
        if layers.contains(.hci) { hci(&a, r, us, decoder) }
        if r.kind == .acl, layers.contains(.note) {   // vendor diagnostics (`HCIPacket.vendorDiagnosticHandle`)
            vendorDiagnostics += 1
            if firstVendorDiagnostic == nil { firstVendorDiagnostic = r.frame }
            if let h = a.decoded.hciStorage.handle, !vendorHandles.contains(h) { vendorHandles.append(h) }
        }
        if layers.contains(.ll), let ll = a.decoded.ll { linkLayer(ll, &a, r, us, decoder) }
        if layers.contains(.adv) {
            advertising(&a, r, us)
            if let v = a.vendor, !v.sources.isEmpty { sensors.add(v, us: us, frame: r.frame) }
        }
        if layers.contains(.smp), let smp = a.decoded.smp { self.smp(smp, &a, r, us, decoder) }
        if layers.contains(.att) { att(&a, r, us, decoder) }
        if !layers.isDisjoint(with: .anyModule) || (!collectorKindList.isEmpty && collectorKindList.contains(r.kind)) {
            currentDecoder = decoder
            modules(&a, r)
        }
    }

    // MARK: protocol modules

    /// A frame (or record kind) a collector asked for goes to it.
    func modules(_ a: inout AnalyzedFrame, _ r: CaptureRecord) {
        for (i, c) in collectors.enumerated() where !a.decoded.layers.isDisjoint(with: collectorLayers[i])
            || (!collectorKinds[i].isEmpty && collectorKinds[i].contains(r.kind)) {
            c.add(a.decoded, self)
        }
    }

    public func connectionIndex(_ f: borrowing DecodedFrame) -> Int? {
        guard let c = f.connection, let decoder = currentDecoder, let i = connection(f.record.adapter, c, f.record, decoder) else { return nil }
        if !f.layers.isDisjoint(with: .anyModule) { lastConnection = i }
        return i
    }

    public func problem(_ kind: String, _ record: CaptureRecord, connection: Int?, _ message: String) {
        problem(kind, record, conn: connection, message)
    }

    public var file: String { report.file }
    public func connectionHandle(_ index: Int) -> Int { report.connections[index].handle }
    public func connectionPeer(_ index: Int) -> String? { report.connections[index].peer }

    func problem(_ kind: String, _ r: CaptureRecord, conn: Int?, handle: Int? = nil, request: Int? = nil, _ msg: String) {
        kindCounts[kind, default: 0] += 1
        guard report.problems.count < StatsLimits.problems else { report.problemsNotListed += 1; return }
        report.problems.append(.init(kind: kind, frame: r.frame, us: r.timestamp.microseconds, connection: conn,
                                     handle: handle, requestFrame: request, message: msg))
    }

    /// The connection a frame belongs to: created on first sight, a new one after a
    /// set-up event or a disconnection on the same handle.
    func connection(_ adapter: UInt16, _ handle: UInt16, _ r: CaptureRecord, _ decoder: ProtocolDecoder, fresh: Bool = false) -> Int? {
        let key = ConnKey(adapter: adapter, handle: handle)
        if !fresh, let s = conns[key] {
            if !s.ended { return s.index }
            // A record dated inside the ended connection (appended out of time order) is
            // that connection's, as `ConnectionTable.ensure` has it.
            let c = report.connections[s.index]
            if let end = c.endUs, c.startUs ?? c.firstUs <= r.timestamp.microseconds, r.timestamp.microseconds < end { return s.index }
        }
        guard report.connections.count < StatsLimits.connections else { report.connectionsNotListed += 1; return nil }
        if let s = conns[key], !s.ended { closePending(s, at: r.timestamp.microseconds, reason: "the connection was set up again") }
        let info = decoder.connection(adapter: adapter, handle: handle)
        let us = r.timestamp.microseconds
        var c = StatsReport.Connection(index: report.connections.count, adapter: Int(adapter), handle: Int(handle),
                                       firstFrame: r.frame, firstUs: us, lastFrame: r.frame, lastUs: us, durationUs: 0)
        c.transport = info?.transport?.rawValue
        if let p = info?.peer { c.peer = p.description }
        c.peerAddressType = info?.peerAddressType?.name
        c.role = info?.role?.rawValue
        if let aa = info?.accessAddress {
            c.accessAddress = Hex.fixed(UInt64(aa), width: 8)
            isSniffer = true
            if let ind = connectInds[aa] {
                c.startFrame = ind.frame; c.startUs = ind.us
                c.parameters.append(.init(frame: ind.frame, us: ind.us, interval: ind.params.0, latency: ind.params.1, timeout: ind.params.2))
                if let p = ind.peer { c.peer = p.description }
                c.role = "sniffed"
            }
        }
        if fresh { c.startFrame = r.frame; c.startUs = us }
        report.connections.append(c)
        conns[key] = ConnState(index: c.index)
        openConnections += 1
        return c.index
    }

    // MARK: HCI

    func hci(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder) {
        let h = a.decoded.hciStorage
        if let c = a.decoded.connection, r.kind == .acl || r.kind == .sco || r.kind == .iso,
           let i = connection(r.adapter, c, r, decoder) {
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
        case 0x0E, 0x0F:   // Command Complete / Command Status (Core 5.4 Vol 4 Part E §7.7.14-15)
            guard let st = h.status, st != .success, let op = h.commandOpcode, op != 0 else { return }
            report.counts.hciCommandsFailed += 1
            problem("hci_command_failed", r, conn: nil, "\(HCICommandNames.name(op)) failed: \(st.name) (\(Hex.fixed(UInt64(st.rawValue), width: 2)))")
            let create: [HCICommandOpcode] = [.leCreateConnection, .leExtendedCreateConnection, .createConnection]
            if create.contains(HCICommandOpcode(UInt16(truncatingIfNeeded: op))),
               let p = pendingCreates.removeValue(forKey: Self.createKey(r.adapter, le: op != Int(HCICommandOpcode.createConnection.rawValue))) {
                report.failedConnections.append(.init(frame: p.frame, us: p.us, peer: p.peer?.description, outcome: "failed",
                                                      status: Int(st.rawValue), statusName: st.name))
            }
        case _ where h.opcode == 0x03 || h.opcode == 0x2C || (h.opcode == 0x3E && [0x01, 0x0A, 0x29].contains(h.subevent ?? 0)):
            // (Synchronous) (LE) (Enhanced) Connection Complete (§7.7.3, §7.7.35, §7.7.65.1, .10, .29)
            let create = h.opcode == 0x2C ? nil : pendingCreates.removeValue(forKey: Self.createKey(r.adapter, le: h.opcode == 0x3E))
            guard let st = h.status else { return }
            if st != .success {
                let cancelled = create?.cancelled == true || st.rawValue == 0x02
                report.failedConnections.append(.init(frame: r.frame, us: us, peer: h.peer?.description ?? create?.peer?.description,
                                                      outcome: cancelled ? "cancelled" : "failed", status: Int(st.rawValue), statusName: st.name))
                return
            }
            guard let handle = h.handle, let i = connection(r.adapter, handle, r, decoder, fresh: true) else { return }
            if let iv = h.interval, let lat = h.latency, let to = h.supervisionTimeout {
                report.connections[i].parameters.append(.init(frame: r.frame, us: us, interval: Int(iv), latency: Int(lat), timeout: Int(to)))
            }
        case 0x05:   // Disconnection Complete (§7.7.5)
            guard h.status == .success, let handle = h.handle else { return }
            let key = ConnKey(adapter: r.adapter, handle: handle)
            guard let i = connection(r.adapter, handle, r, decoder) else { return }
            end(i, key, r, reason: h.reason)
        case 0x08, 0x59:   // Encryption Change v1/v2 (§7.7.8, §7.7.8.v2)
            guard h.status == .success, let handle = h.handle, let i = connection(r.adapter, handle, r, decoder) else { return }
            report.connections[i].encryption.append(.init(frame: r.frame, us: us, enabled: (h.encryption ?? 0) != 0,
                                                          keySize: h.keySize.map(Int.init), source: "hci"))
        case 0x30:   // Encryption Key Refresh Complete (§7.7.39)
            guard h.status == .success, let handle = h.handle, let i = connection(r.adapter, handle, r, decoder) else { return }
            report.connections[i].encryption.append(.init(frame: r.frame, us: us, enabled: true, keySize: nil, source: "hci"))
        case 0x3E:
            guard h.status == nil || h.status == .success, let handle = h.handle else { return }
            switch h.subevent {
            case 0x03:   // LE Connection Update Complete (§7.7.65.3)
                guard let i = connection(r.adapter, handle, r, decoder), let iv = h.interval, let lat = h.latency,
                      let to = h.supervisionTimeout else { return }
                report.connections[i].parameters.append(.init(frame: r.frame, us: us, interval: Int(iv), latency: Int(lat), timeout: Int(to)))
            case 0x07:   // LE Data Length Change (§7.7.65.7)
                guard let i = connection(r.adapter, handle, r, decoder) else { return }
                report.connections[i].maxTxOctets = h.maxTxOctets.map(Int.init)
                report.connections[i].maxRxOctets = h.maxRxOctets.map(Int.init)
                report.connections[i].dataLengthFrame = r.frame
            case 0x0C:   // LE PHY Update Complete (§7.7.65.12)
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
        switch p { case 1: "1M"; case 2: "2M"; case 3: "Coded"; default: "PHY \(p)" }
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
        let msg = timedOut ? "\(what) unanswered for \(TimeFormat.duration(microseconds: waited)) (ATT transaction timeout is 30 s)"
                           : "\(what) unanswered: \(reason) \(TimeFormat.duration(microseconds: waited)) later"
        report.problems.append(.init(kind: "unanswered_request", frame: p.frame, us: p.us, connection: conn,
                                     handle: p.handle.map(Int.init), requestFrame: nil, message: msg))
    }

    // MARK: link layer (sniffers)

    func linkLayer(_ ll: LLPacket, _ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder) {
        isSniffer = true
        llPackets += 1
        if ll.crcOK == false { crcBad += 1 }
        if ll.crcComputed { crcComputed += 1 }
        if ll.crcAwaitsLink { crcUnverified += 1 }
        if ll.crcValidatedWrongly { crcValidatedWrongly += 1 }
        // A damaged packet makes nothing: no connection, device or parameters.
        guard ll.crcOK != false else { return }
        if ll.isAdvertising {
            // CONNECT_IND (Core 5.4 Vol 6 Part B §2.3.3.1).
            guard let ind = ll.connectInd else { return }
            let aa = ind.accessAddress
            if connectInds.count < 1024 {
                connectInds[aa] = (r.frame, us, ind.advA, (Int(ind.interval), Int(ind.latency), Int(ind.timeout)))
            }
            // The connection exists from its CONNECT_IND, data PDUs or not (as `info` counts).
            if let n = decoder.sniffedConnection(accessAddress: aa) { _ = connection(r.adapter, n, r, decoder, fresh: true) }
            return
        }
        guard let c = a.decoded.connection else { return }
        // After LL_TERMINATE_IND the peer's acknowledgement (and retransmissions of the
        // terminate) still use the access address: they belong to the ended connection, and
        // only a new CONNECT_IND opens another (Vol 6 Part B §5.1.1).
        if let s = conns[ConnKey(adapter: r.adapter, handle: c)], s.ended, let end = report.connections[s.index].endFrame,
           let aa = decoder.connection(adapter: r.adapter, handle: c)?.accessAddress, (connectInds[aa]?.frame ?? 0) < end {
            report.connections[s.index].lastFrame = r.frame; report.connections[s.index].lastUs = us
            return
        }
        guard let i = connection(r.adapter, c, r, decoder) else { return }
        report.connections[i].lastFrame = r.frame; report.connections[i].lastUs = us
        // This side acknowledged a PDU the sniffer saw with a bad CRC: the answer to its open
        // request (or indication) sent before that PDU, most likely.
        if let bad = ll.acknowledgesCRCBad, let fromCentral = ll.fromCentral, let s = conns[ConnKey(adapter: r.adapter, handle: c)] {
            let side = fromCentral ? 0 : 1
            if let slot = [side * 2, side * 2 + 1].filter({ s.pending[$0].map { $0.frame < bad && $0.crcBad == nil } ?? false })
                .min(by: { s.pending[$0]!.frame < s.pending[$1]!.frame }) {
                conns[ConnKey(adapter: r.adapter, handle: c)]!.pending[slot]!.crcBad = (bad, fromCentral)
            }
        }
        if ll.encrypted {
            report.connections[i].encryptedFrames += 1
            llEncryptedFrames += 1
            if firstEncryptedFrame == nil { firstEncryptedFrame = r.frame }
        }
        guard let op = ll.controlOpcode?.rawValue, let d = ll.controlData else { return }
        switch op {
        case 0x05:   // LL_START_ENC_REQ (§2.4.2.5)
            report.connections[i].encryption.append(.init(frame: r.frame, us: us, enabled: true, keySize: nil, source: "ll"))
        case 0x02, 0x0D:   // LL_TERMINATE_IND (§2.4.2.2), LL_REJECT_IND
            if op == 0x02, let code = d.first {
                end(i, ConnKey(adapter: r.adapter, handle: c), r, reason: HCIStatus(code))
            }
        case 0x00 where d.count >= 11:   // LL_CONNECTION_UPDATE_IND (§2.4.2.1)
            func u16(_ o: Int) -> Int { Int(d[o]) | Int(d[o + 1]) << 8 }
            report.connections[i].parameters.append(.init(frame: r.frame, us: us, interval: u16(3), latency: u16(5), timeout: u16(7)))
        default: break
        }
    }

    // MARK: advertising

    func advertising(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64) {
        a.decoded.advStorage.forEachReport { rep in
            guard let addr = rep.address else { return }
            report.counts.advertisingReports += 1
            let i: Int
            if let d = deviceIndex[addr] { i = d } else {
                guard report.devices.count < StatsLimits.devices else { report.devicesNotListed += 1; return }
                i = report.devices.count
                deviceIndex[addr] = i
                report.devices.append(.init(address: addr.description, addressType: rep.addressType?.name,
                                            firstFrame: r.frame, lastFrame: r.frame, firstUs: us, lastUs: us))
            }
            report.devices[i].advertisingReports += 1
            report.devices[i].lastFrame = r.frame; report.devices[i].lastUs = us
            if let rssi = rep.rssi, rssi != 127 {
                let v = Int(rssi)
                report.devices[i].rssiMin = min(report.devices[i].rssiMin ?? v, v)
                report.devices[i].rssiMax = max(report.devices[i].rssiMax ?? v, v)
            }
            guard !rep.data.isEmpty else { return }
            for s in rep.structures {
                switch s.type.rawValue {
                case 0x08, 0x09:
                    let name = String(decoding: s.value, as: UTF8.self)
                    if !name.isEmpty, !report.devices[i].names.contains(name), report.devices[i].names.count < StatsLimits.namesPerDevice {
                        report.devices[i].names.append(name)
                    }
                case 0xFF where s.value.count >= 2:
                    let id = UInt16(s.value[0]) | UInt16(s.value[1]) << 8
                    let company = AssignedNumbers.companyName(id) ?? Hex.fixed(UInt64(id), width: 4)
                    if !report.devices[i].companies.contains(company), report.devices[i].companies.count < StatsLimits.namesPerDevice {
                        report.devices[i].companies.append(company)
                    }
                default: break
                }
            }
        }
    }

    // MARK: SMP

    func smp(_ smp: SMPPDU, _ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder) {
        report.counts.smp += 1
        smpSeen = true
        guard let c = a.decoded.connection, let i = connection(r.adapter, c, r, decoder) else { return }
        lastConnection = i
        switch smp.code {
        case 0x01, 0x02:   // Pairing Request/Response (Core 5.4 Vol 3 Part H §3.5.1-2)
            if smp.code == 0x01 {
                if report.connections[i].pairingFrame == nil { report.connections[i].pairingFrame = r.frame }
                pairingFrames += 1
            }
            // Maximum Encryption Key Size is 7…16 (§3.5.1); outside it is a downgrade attempt
            // (KNOB-style) or fuzzing, and a device that accepts it is at fault.
            if let k = smp.pairingFeatures?.maxEncryptionKeySize, !(7...16).contains(k) {
                problem("smp_invalid_key_size", r, conn: i, "\(smp.name) Maximum Encryption Key Size \(k) (valid 7-16; KNOB-style downgrade or fuzzing)")
            }
        case 0x05:   // Pairing Failed (§3.5.5)
            report.counts.smpPairingFailed += 1
            let reason = smp.reason?.name ?? "unknown reason"
            report.connections[i].pairingFailed = reason
            problem("smp_pairing_failed", r, conn: i, "Pairing Failed: \(reason)")
        default: break
        }
    }

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
        if let v = a.vendor { for m in v.messages where m.checksum == .bad {
            report.counts.vendorBadChecksums += 1
            problem("vendor_bad_checksum", r, conn: i, handle: Int(v.handle), "\(m.plugin) \(m.message): bad checksum")
        } }
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
            case .writeRequest: report.characteristics[ch].writeRequests += 1; report.counts.writeRequests += 1
                report.characteristics[ch].bytesToServer += valueCount
            case .writeCommand, .signedWriteCommand: report.characteristics[ch].writeCommands += 1; report.counts.writeCommands += 1
                report.characteristics[ch].bytesToServer += valueCount
            case .prepareWriteRequest: report.characteristics[ch].bytesToServer += valueCount
            case .handleValueNotification: report.characteristics[ch].notifications += 1; report.counts.notifications += 1
                report.characteristics[ch].bytesFromServer += valueCount
            case .handleValueIndication: report.characteristics[ch].indications += 1; report.counts.indications += 1
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
            problem("att_error", r, conn: i, handle: handle.map(Int.init), request: t?.requestFrame,
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

    var latencies: [LatencyHistogram] = []
    /// Connection and characteristic (indexes into the report) of the last ATT frame added.
    public private(set) var lastConnection: Int?
    public private(set) var lastCharacteristic: Int?

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

    // MARK: end

    /// Closes open requests and connections and writes the quality findings.
    public func finish(decoder: ProtocolDecoder, warnings: [String]) -> StatsReport {
        let endUs = report.lastUs ?? 0
        for (_, s) in conns where !s.ended { closePending(s, at: endUs, reason: "the capture ended") }
        for (i, l) in latencies.enumerated() { report.characteristics[i].latency = l.summary }
        var byAddress: [String: Int] = [:]
        for (i, d) in report.devices.enumerated() { byAddress[d.address] = i }
        for i in report.connections.indices {
            if report.connections[i].peer == nil, let info = decoder.connection(adapter: UInt16(report.connections[i].adapter),
                                                                                 handle: UInt16(report.connections[i].handle)),
               info.startFrame.map({ $0 <= report.connections[i].firstFrame }) ?? true, let p = info.peer {
                report.connections[i].peer = p.description
            }
            let c = report.connections[i]
            if let p = c.peer, let d = byAddress[p] { report.devices[d].connections.append(i) }
            else if let p = c.peer, p != "00:00:00:00:00:00", report.devices.count < StatsLimits.devices {
                // A peer connected without advertising in the capture (Classic, or connected
                // before it) is a device too: `advertising_reports` 0.
                byAddress[p] = report.devices.count
                report.devices.append(.init(address: p, addressType: c.peerAddressType, firstFrame: c.firstFrame, lastFrame: c.lastFrame,
                                            firstUs: c.firstUs, lastUs: c.lastUs, connections: [i]))
            }
            report.connections[i].durationUs = (c.endUs ?? c.lastUs) - (c.startUs ?? c.firstUs)
            if report.connections[i].peerName == nil, let p = c.peer,
               let d = report.devices.first(where: { $0.address == p }) { report.connections[i].peerName = d.names.first }
        }
        for (_, p) in pendingCreates {
            report.failedConnections.append(.init(frame: p.frame, us: p.us, peer: p.peer?.description,
                                                  outcome: p.cancelled ? "cancelled" : "never_completed", status: nil, statusName: nil))
        }
        report.failedConnections.sort { $0.frame < $1.frame }
        report.modules = collectors.map { $0.finish(self) }
        report.counts.modules = report.modules.flatMap(\.counts)
        report.problems.sort { ($0.frame, $0.kind) < ($1.frame, $1.kind) }
        let (sensorRows, order) = sensors.finished()
        sensorOrder = order
        report.sensors = sensorRows.isEmpty ? nil : sensorRows
        report.sensorsNotListed = sensors.notListed > 0 ? sensors.notListed : nil
        report.problemCounts = kindCounts.sorted { $0.key < $1.key }.map { .init(kind: $0.key, count: $0.value) }
        if report.firstUs == nil, let lo = noteTimes.min(), let hi = noteTimes.max() { report.firstUs = lo; report.lastUs = hi }
        // Notes within a minute of the traffic are part of the session (btmon's, a log's start).
        if let f = report.firstUs, let l = report.lastUs {
            if let lo = noteTimes.filter({ $0 >= f - 60_000_000 && $0 < f }).min() { report.firstUs = lo }
            if let hi = noteTimes.filter({ $0 > l && $0 <= l + 60_000_000 }).max() { report.lastUs = hi }
        }
        if let f = report.firstUs { report.first = TimeFormat.rfc3339(Timestamp(microseconds: f)) }
        if let l = report.lastUs { report.last = TimeFormat.rfc3339(Timestamp(microseconds: l)) }
        report.durationUs = (report.lastUs ?? 0) - (report.firstUs ?? 0)
        report.millisecondClock = report.records > 0 && !subMillisecond
        if llPackets > 0 {
            report.counts.llPackets = llPackets; report.counts.crcBad = crcBad
            report.counts.crcCheckedByBluesift = crcComputed; report.counts.crcUnverified = crcUnverified
        }
        assessQuality(warnings: warnings, decoder: decoder)
        return report
    }

    /// Over the air: packets with a bad CRC (Core 5.4 Vol 6 Part B §3.1.1) and data PDUs whose
    /// CRC nothing could check are noise: said with their share, and what causes them.
    func airQuality(_ q: inout [StatsReport.Advice], _ decoder: ProtocolDecoder) {
        let weak = "A weak or disturbed signal: move the sniffer closer to the devices (a metre or two), away from Wi-Fi access points and USB 3 ports; with an SDR, raise the gain."
        if crcBad > 0 {
            let share = Double(crcBad) / Double(llPackets) * 100
            let pct = share < 1 ? "under 1%" : "\(Int(share.rounded()))%"
            let by = crcComputed > 0 ? " (checked by bluesift: the capture does not say whether the sniffer checked them)" : ""
            let message = crcBad == llPackets
                ? "All \(crcBad) over-the-air packets have a bad CRC\(by): nothing in the capture can be trusted; they are shown, not decoded."
                : "\(crcBad) of \(llPackets) over-the-air packets (\(pct)) have a bad CRC\(by): they are shown, not decoded, and make no devices, connections or findings."
            q.append(.init(code: "crc_bad", severity: share >= 10 ? "warning" : "info", message: message, advice: weak,
                           frame: nil))
        }
        if crcUnverified > 0 {
            let flipped = decoder.accessAddressBitErrors
            let detail = flipped > 0 ? ", \(flipped) of them a known connection's packets with a corrupted access address" : ""
            q.append(.init(code: "crc_unverified", severity: "info",
                           message: "\(crcUnverified) data PDUs on access addresses no CONNECT_IND announced could not be checked (their CRCInit unknown, and no second packet agreed on one)\(detail): noise or bit errors, not decoded, not connections.",
                           advice: weak, frame: decoder.firstUnverifiedPacket ?? decoder.firstAccessAddressBitError))
        }
        if crcValidatedWrongly > 0 {
            q.append(.init(code: "crc_header_disagrees", severity: "info",
                           message: "\(crcValidatedWrongly) packet(s) the sniffer marked CRC-valid fail bluesift's CRC check: the sniffer's verdict is kept (as Wireshark does). A sniffer that writes something else in the CRC field, or a damaged capture.",
                           advice: "Nothing to do if the sniffer's firmware is known to do so; otherwise compare with another sniffer.",
                           frame: decoder.firstCRCValidatedWrongly))
        }
    }

    /// Where the capture came from, for advice that fits it.
    enum Origin {
        case android, packetLogger, btmon, sniffer, other
        var startAdvice: String {
            switch self {
            case .android: "Start the capture before connecting (enable the snoop log, then toggle Bluetooth)."
            case .packetLogger: "Start PacketLogger (or install Apple's Bluetooth logging profile on iOS) before the devices connect."
            case .btmon: "Start btmon -w before the devices connect."
            case .sniffer: "Start the sniffer before the devices connect."
            case .other: "Start the capture before the devices connect."
            }
        }
        var bufferAdvice: String {
            switch self {
            case .android: "On Android raise the snoop log buffer (Developer options → Bluetooth HCI snoop log size) or take the log sooner after the problem."
            case .packetLogger: "Save the PacketLogger trace sooner after the problem, or check that it was not merged from several traces."
            case .btmon: "Check that the file was not merged from several recordings; btmon -w records until stopped."
            case .sniffer: "Keep the sniffer closer to both devices: it loses packets it does not hear."
            case .other: "Check that the capture was not cut or merged from several files."
            }
        }
    }

    var origin: Origin {
        if isSniffer { return .sniffer }
        if report.format.hasPrefix("packetlogger") { return .packetLogger }
        if report.format.contains("Linux monitor") { return .btmon }
        if report.format.hasPrefix("btsnoop") { return .android }
        return .other
    }

    func assessQuality(warnings: [String], decoder: ProtocolDecoder) {
        var q: [StatsReport.Advice] = []
        airQuality(&q, decoder)
        if let f = report.firstUs, let l = report.lastUs {
            let outside = noteTimes.filter { $0 < f - 60_000_000 || $0 > l + 60_000_000 }
            if let earliest = outside.min() {
                q.append(.init(code: "notes_outside_span", severity: "info",
                               message: "\(outside.count) note(s) are dated more than a minute outside the records' span (from \(TimeFormat.rfc3339(Timestamp(microseconds: earliest)))): the span leaves them out.",
                               advice: "Nothing to do: PacketLogger keeps notes of earlier sessions in its file.", frame: nil))
            }
        }
        if vendorDiagnostics > 0 {
            // 0x0EDC is Broadcom's; 0x0F00 and above no connection can have (Vol 4 Part E §5.4.2).
            let handles = vendorHandles.sorted().map {
                Hex.fixed(UInt64($0), width: 4) + ($0 > HCIPacket.maxConnectionHandle ? " (reserved)" : " (Broadcom)")
            }.joined(separator: ", ")
            q.append(.init(code: "vendor_diagnostics", severity: "info",
                           message: "\(vendorDiagnostics) records are the controller's vendor diagnostics on ACL handle\(vendorHandles.count > 1 ? "s" : "") \(handles): not a connection, not decoded.",
                           advice: "Nothing to do: Android's snoop log records them beside the Bluetooth traffic.", frame: firstVendorDiagnostic))
        }
        if truncatedACL > 0 {
            if report.format.hasPrefix("btsnoop") {
                q.append(.init(code: "android_filtered", severity: "warning",
                               message: "\(truncatedACL) ACL records were cut short by the capture: this looks like Android's filtered HCI snoop log, which drops ATT values and L2CAP payloads.",
                               advice: "On the phone: Developer options → Enable Bluetooth HCI snoop log → \"Enabled\" (full, not \"Filtered\"), turn Bluetooth off and on, reproduce, then take a new bug report.",
                               frame: firstTruncatedFrame))
            } else {
                q.append(.init(code: "truncated", severity: "warning",
                               message: "\(truncatedACL) ACL records were cut short by the capture (snap length).",
                               advice: "Capture again without a snap length limit (tcpdump/dumpcap -s 0).", frame: firstTruncatedFrame))
            }
        }
        let midConn = report.connections.filter { $0.startFrame == nil }
        if let first = midConn.first {
            if isSniffer {
                q.append(.init(code: "sniffer_missed_connect", severity: "warning",
                               message: "The sniffer missed the CONNECT_IND of \(midConn.count) connection(s): connection parameters, roles and the channel map are unknown, and the link may have been followed only partly.",
                               advice: "Start the sniffer before the devices connect and have it follow the advertiser (e.g. nRF Sniffer: select the device before connecting).",
                               frame: first.firstFrame))
            } else if hciControl == 0 {
                // Not a late start: a logger that records ACL data only never shows one.
                q.append(.init(code: "no_hci_control", severity: "info",
                               message: "The log holds no HCI commands or events (ACL data only): how its \(midConn.count) connection(s) started (addresses, parameters, role) is not in it, though what they carried is.",
                               advice: "Nothing to do for this file; a log that records HCI commands and events too (the snoop log, btmon, PacketLogger) shows connections from their start.",
                               frame: first.firstFrame))
            } else {
                q.append(.init(code: "starts_mid_connection", severity: "warning",
                               message: "The capture starts during \(midConn.count) connection(s): their set-up (parameters, role, MTU exchange, pairing) is not in it.",
                               advice: origin.startAdvice,
                               frame: first.firstFrame))
            }
        }
        if unnamedOps > 0 {
            q.append(.init(code: "no_gatt_discovery", severity: discoverySeen ? "info" : "warning",
                           message: "\(unnamedOps) ATT operations address handles the capture never discovered\(discoverySeen ? "" : " (no GATT discovery in the capture)"): they are shown by handle only.",
                           advice: "Name them with --gatt FILE, a database written by `bluesift gatt --format json` from a capture of the same device that includes the discovery (or connect once with a fresh bond so the phone rediscovers).",
                           frame: firstUnnamedFrame))
        }
        if backwards > 0 {
            q.append(.init(code: "gaps", severity: "warning",
                           message: CaptureSummary.backwardsMessage(backwards),
                           advice: origin.bufferAdvice, frame: firstBackwardsFrame))
        }
        if gapCount > 0 {
            q.append(.init(code: "idle_gaps", severity: "info",
                           message: "\(gapCount) gap(s) of more than 60 s while a connection was open: an idle link, or records lost from the capture's buffer.",
                           advice: origin.bufferAdvice, frame: firstGapFrame))
        }
        if jitter > 0 {
            q.append(.init(code: "clock_jitter", severity: "info",
                           message: "\(jitter) timestamp(s) step back by at most \(maxJitterUs < 1000 ? "\(maxJitterUs) µs" : "\(maxJitterUs / 1000) ms"): the clock has jitter; records are in the file's order.",
                           advice: "Nothing to do: latencies near that size are approximate.", frame: firstJitterFrame))
        }
        if let first = crcBadResponses.first {
            let n = report.counts.crcBadResponses
            let list = crcBadResponses.map { "\(ATTOpcode(rawValue: $0.opcode).name) #\($0.request) → #\($0.frame)" }.joined(separator: ", ")
                + (n > crcBadResponses.count ? ", …" : "")
            let message = n == 1
                ? "1 ATT request was answered by a PDU the sniffer saw only with a bad CRC (\(list)): the \(first.byCentral ? "central" : "peripheral") acknowledged it, so the link carried the answer; what it said is not in the capture."
                : "\(n) ATT requests were answered by PDUs the sniffer saw only with a bad CRC (\(list)): their requesters acknowledged them, so the link carried the answers; what they said is not in the capture."
            q.append(.init(code: "response_crc_bad", severity: "info", message: message,
                           advice: Origin.sniffer.bufferAdvice, frame: first.request))
        }
        if isSniffer, llEncryptedFrames > 0 {
            let sawPairing = pairingFrames > 0
            q.append(.init(code: "encrypted_no_key", severity: "warning",
                           message: "\(llEncryptedFrames) link-layer frames are encrypted and were not decrypted" + (sawPairing ? "." : "; the pairing is not in the capture, so the key cannot be recovered from it."),
                           advice: sawPairing ? "Provide the long-term key (from the bond store of one of the devices) to decrypt." :
                               "Capture the pairing too (remove the bond on both sides and pair while sniffing), or provide the long-term key from one of the devices.",
                           frame: firstEncryptedFrame))
        }
        for w in warnings {
            q.append(.init(code: "reader_warning", severity: "warning", message: w, advice: "The file is damaged or cut: records after the damage may be missing.", frame: nil))
        }
        report.quality = q
    }
}
