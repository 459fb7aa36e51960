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
        public var severity: String // "warning" | "info"
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
