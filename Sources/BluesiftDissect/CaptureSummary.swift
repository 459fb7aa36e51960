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
    /// Counts per kind and per decoded protocol layer.
    public var kinds: [String: Int] = [:]
    public var protocols: [String: Int] = [:]
    public var adapters: Set<UInt16> = []
    public var bytes = 0

    public init() {}

    public mutating func add(_ f: DecodedFrame) {
        let r = f.record
        records += 1
        bytes += r.bytes.count
        if first == nil { first = r.timestamp }
        last = r.timestamp
        if r.isTruncated { truncatedRecords += 1 }
        if !f.errors.isEmpty { recordsWithErrors += 1 }
        kinds[r.kind.name, default: 0] += 1
        if r.kind.isHCI { adapters.insert(r.adapter) }
        if f.hci != nil { protocols["hci", default: 0] += 1 }
        if f.l2cap != nil { protocols["l2cap", default: 0] += 1 }
        if f.att != nil { protocols["att", default: 0] += 1 }
        if f.smp != nil { protocols["smp", default: 0] += 1 }
        if f.adv != nil { protocols["adv", default: 0] += 1 }
        if f.ll != nil { protocols["ll", default: 0] += 1 }
    }

    public var spanMicroseconds: Int64 {
        guard let a = first, let b = last else { return 0 }
        return b.microseconds &- a.microseconds
    }
}
