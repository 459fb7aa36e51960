import BluesiftWire
import BluesiftCapture
import BluesiftProtocols

/// What `bluesift info` reports, accumulated one frame at a time in constant memory.
public struct CaptureSummary {
    public var records = 0
    /// The first and last record that is not a note (else the notes').
    /// Notes within a minute of the traffic count (btmon's, a log's start); older ones do not.
    public var first: Timestamp? {
        get {
            guard let t = trafficFirst else { return noteFirst }
            if let n = noteFirst, n < t, t.microseconds - n.microseconds <= 60_000_000 { return n }
            return t
        }
        set { trafficFirst = newValue }
    }
    public var last: Timestamp? {
        get {
            guard let t = trafficLast else { return noteLast }
            if let n = noteLast, n > t, n.microseconds - t.microseconds <= 60_000_000 { return n }
            return t
        }
        set { trafficLast = newValue }
    }
    @usableFromInline var trafficFirst: Timestamp?, trafficLast: Timestamp?
    @usableFromInline var noteFirst: Timestamp?, noteLast: Timestamp?
    @usableFromInline var trafficPrevious: Timestamp?
    /// Steps back in time of `backwardsUs` or more between consecutive records (notes apart).
    public var backwardSteps = 0
    public var firstBackwardFrame: Int?
    /// A step back under 50 ms is clock jitter (PacketLogger's millisecond clock, btmon
    /// interleaving its sources); a larger one is a wrapped buffer or merged files.
    public static let backwardsUs: Int64 = 50_000
    /// What `info` and `stats` say of the steps back (`stats` adds the frame apart).
    public static func backwardsMessage(_ n: Int) -> String {
        "\(n) timestamp(s) going backwards by 50 ms or more: records may be missing (a rotated or wrapped capture buffer, or merged files)."
    }
    public var truncatedRecords = 0
    public var recordsWithErrors = 0
    /// Plain counters, not dictionaries or arrays: this runs for every record.
    @usableFromInline var kindCounts = InlineArray<16, Int>(repeating: 0)
    /// Records per `FrameLayer` (by its bit).
    @usableFromInline var layerCounts = InlineArray<64, Int>(repeating: 0)
    public var adapters: Set<UInt16> = []
    @usableFromInline var lastAdapter: UInt16?
    public var bytes = 0

    /// Records per kind name.
    public var kinds: [String: Int] {
        var d: [String: Int] = [:]
        for k in Self.countedKinds {
            let n = kindCounts[Self.slot(k)]
            if n > 0 { d[k.name, default: 0] += n }
        }
        return d
    }

    /// Records carrying each decoded layer, under the name `info` counts it as
    /// (`FrameLayer.countedAs`), in the registry's order.
    public var protocols: [(name: String, count: Int)] {
        var out: [(name: String, count: Int)] = []
        for l in FrameLayer.allCases {
            guard let name = l.countedAs else { continue }
            let n = layerCounts[Int(l.rawValue)]
            guard n > 0 else { continue }
            if let i = out.firstIndex(where: { $0.name == name }) { out[i].count += n } else { out.append((name, n)) }
        }
        return out
    }

    public init() {}

    public mutating func add(_ f: DecodedFrame) {
        add(f.record, layers: f.layers, hasErrors: !f.errors.isEmpty)
    }

    /// The per-record form: passing a frame held in a `var` copies all 1.2 kB of it.
    @inlinable @inline(__always)
    public mutating func add(_ r: CaptureRecord, layers: DecodedFrame.Layers, hasErrors: Bool) {
        records &+= 1
        bytes &+= r.bytes.count
        // The span is the traffic's (`CaptureStats`): notes only when there is nothing else.
        if r.kind == .note {
            if noteFirst == nil { noteFirst = r.timestamp }
            noteLast = r.timestamp
        } else {
            // Earliest → latest: a file whose last records go back in time (a wrapped buffer,
            // appended logs) spans more than its first and last records say.
            if let p = trafficPrevious, p.microseconds &- r.timestamp.microseconds >= Self.backwardsUs {
                backwardSteps &+= 1
                if firstBackwardFrame == nil { firstBackwardFrame = r.frame }
            }
            if trafficFirst.map({ r.timestamp < $0 }) ?? true { trafficFirst = r.timestamp }
            if trafficLast.map({ r.timestamp > $0 }) ?? true { trafficLast = r.timestamp }
            trafficPrevious = r.timestamp
        }
        if r.isTruncated { truncatedRecords &+= 1 }
        if hasErrors { recordsWithErrors &+= 1 }
        kindCounts[Self.slot(r.kind)] &+= 1
        if r.kind.isHCI, r.adapter != lastAdapter { adapters.insert(r.adapter); lastAdapter = r.adapter }
        layers.forEach { layerCounts[Int($0.rawValue)] &+= 1 }
    }

    static let countedKinds: [PacketKind] = [.unknown, .command, .acl, .sco, .event, .iso, .note, .ll, .index, .control]

    /// Kinds by counter: HCI 1-5, note/ll/index/control 6-9, any other kind 0 ("unknown").
    @inlinable @inline(__always)
    static func slot(_ k: PacketKind) -> Int {
        let v = Int(k.rawValue)
        return v <= 5 ? (v == 0 ? 0 : v) : (v >= 0x80 && v <= 0x83 ? v - 0x7A : 0)
    }

    public var spanMicroseconds: Int64 {
        guard let a = first, let b = last else { return 0 }
        return b.microseconds &- a.microseconds
    }
}
