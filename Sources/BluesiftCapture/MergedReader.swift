/// Several captures of one session read as one, in time order: a rotated log
/// (btsnoop_hci.log.last then btsnoop_hci.log), PacketLogger's numbered files, the logs of a
/// bug report. Records are renumbered from 1; on equal times the earlier source goes first,
/// so the analyzer above sees one stream and carries connection state across the boundary.
/// Each source's pending record borrows that source's buffer, which stays valid because a
/// source is advanced only after its record was handed out and the caller moved on.
public final class MergedReader: CaptureReader {
    public let sources: [(name: String, reader: any CaptureReader)]
    private var pending: [CaptureRecord?]
    private var advance: Int?
    private var frame = 0
    public let format: CaptureFormat

    public init(_ sources: [(name: String, reader: any CaptureReader)]) {
        precondition(!sources.isEmpty)
        // Sources in order of their first record, whatever the order named: on equal times
        // the file that began earlier (the .last one) goes first.
        let firsts = sources.map { $0.reader.next() }
        let order = firsts.indices.sorted { a, b in
            switch (firsts[a], firsts[b]) {
            case let (x?, y?): return x.timestamp < y.timestamp || (x.timestamp == y.timestamp && a < b)
            case (_?, nil): return true
            case (nil, _?): return false
            default: return a < b
            }
        }
        self.sources = order.map { sources[$0] }
        pending = order.map { firsts[$0] }
        format = self.sources[0].reader.format
    }

    public func next() -> CaptureRecord? {
        if let a = advance { pending[a] = sources[a].reader.next() }
        var best: Int?
        for i in pending.indices {
            guard let r = pending[i] else { continue }
            if let b = best, !(r.timestamp < pending[b]!.timestamp) { continue }
            best = i
        }
        advance = best
        guard let b = best, var r = pending[b] else { return nil }
        frame += 1
        r.frame = frame
        return r
    }

    public var warnings: [String] {
        sources.flatMap { s in s.reader.warnings.map { "\(s.name): \($0)" } }
    }
    public var bytesRead: Int { sources.reduce(0) { $0 + $1.reader.bytesRead } }
    public var fileSize: Int { sources.reduce(0) { $0 + $1.reader.fileSize } }
}
