import BluesiftWire
import BluesiftCapture
import BluesiftProtocols

/// What `bluesift info` reports, accumulated one frame at a time in constant memory.
public struct CaptureSummary {
    public var records = 0
    public var first: Timestamp?
    public var last: Timestamp?
    public var truncatedRecords = 0
    public var recordsWithErrors = 0
    /// Plain counters, not dictionaries: this runs for every record.
    var kindCounts = [Int](repeating: 0, count: 256)
    var hci = 0, l2cap = 0, att = 0, smp = 0, adv = 0, ll = 0
    public var adapters: Set<UInt16> = []
    var lastAdapter: UInt16?
    public var bytes = 0

    /// Records per kind name.
    public var kinds: [String: Int] {
        var d: [String: Int] = [:]
        for (k, n) in kindCounts.enumerated() where n > 0 { d[PacketKind(rawValue: UInt8(k)).name, default: 0] += n }
        return d
    }

    /// Records carrying each decoded layer.
    public var protocols: [String: Int] {
        var d: [String: Int] = [:]
        for (name, n) in [("hci", hci), ("l2cap", l2cap), ("att", att), ("smp", smp), ("adv", adv), ("ll", ll)] where n > 0 { d[name] = n }
        return d
    }

    public init() {}

    public mutating func add(_ f: DecodedFrame) {
        add(f.record, layers: f.layers, hasErrors: !f.errors.isEmpty)
    }

    /// The per-record form: passing a frame held in a `var` copies all 1.2 kB of it.
    public mutating func add(_ r: CaptureRecord, layers: DecodedFrame.Layers, hasErrors: Bool) {
        records += 1
        bytes += r.bytes.count
        if first == nil { first = r.timestamp }
        last = r.timestamp
        if r.isTruncated { truncatedRecords += 1 }
        if hasErrors { recordsWithErrors += 1 }
        kindCounts[Int(r.kind.rawValue)] += 1
        if r.kind.isHCI, r.adapter != lastAdapter { adapters.insert(r.adapter); lastAdapter = r.adapter }
        if layers.contains(.hci) { hci += 1 }
        if layers.contains(.l2cap) { l2cap += 1 }
        if layers.contains(.att) { att += 1 }
        if layers.contains(.smp) { smp += 1 }
        if layers.contains(.adv) { adv += 1 }
        if layers.contains(.ll) { ll += 1 }
    }

    public var spanMicroseconds: Int64 {
        guard let a = first, let b = last else { return 0 }
        return b.microseconds &- a.microseconds
    }
}
