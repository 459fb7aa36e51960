import BluesiftWire
import BluesiftCapture

/// Connection history in order of first appearance, with O(1) lookup of the latest
/// connection per (adapter, handle). Bounded: past `capacity` the oldest entries are dropped
/// and counted.
struct ConnectionTable {
    struct Key: Hashable { var adapter: UInt16; var handle: UInt16 }

    private(set) var history: [ConnectionInfo] = []
    /// Entries dropped from the front of `history`; ids are absolute (index + dropped).
    private(set) var dropped = 0
    private var latest: [Key: Int] = [:]
    let capacity: Int
    /// Changes whenever a connection is opened (which may also drop old ones): ids looked up
    /// before stay valid while it is unchanged and the connection has not ended.
    private(set) var generation = 0

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// Absolute id of the latest connection on (adapter, handle), if still in history.
    func id(_ key: Key) -> Int? {
        guard let id = latest[key], id >= dropped else { return nil }
        return id
    }

    func info(_ key: Key) -> ConnectionInfo? { id(key).map { history[$0 - dropped] } }

    /// Starts a new connection record (a handle is reused after a disconnection).
    mutating func open(_ info: ConnectionInfo) -> Int {
        generation &+= 1
        if history.count >= capacity {
            let n = max(1, capacity / 16) // amortise the shift
            for old in history.prefix(n) {
                let k = Key(adapter: old.adapter, handle: old.handle)
                if let id = latest[k], id - dropped < n { latest[k] = nil }
            }
            history.removeFirst(n)
            dropped += n
        }
        let id = dropped + history.count
        history.append(info)
        latest[Key(adapter: info.adapter, handle: info.handle)] = id
        return id
    }

    mutating func update(_ id: Int, _ body: (inout ConnectionInfo) -> Void) {
        guard id >= dropped, id - dropped < history.count else { return }
        body(&history[id - dropped])
    }

    /// The live connection on the handle, created without peer when the capture started
    /// mid-connection (or the set-up event was lost).
    mutating func ensure(_ key: Key, record: CaptureRecord) -> Int {
        if let id = id(key) {
            let c = history[id - dropped]
            guard let end = c.end else { return id }
            // Dated inside the ended connection (records appended out of time order): in time
            // order it is that connection's, not one the capture started during.
            if let start = c.start, start <= record.timestamp, record.timestamp < end { return id }
        }
        var c = ConnectionInfo(adapter: key.adapter, handle: key.handle)
        c.start = record.timestamp
        c.startFrame = record.frame
        return open(c)
    }

    /// Active connection on `adapter` with this peer, for events that name the peer only.
    func activeID(adapter: UInt16, peer: BDAddr) -> Int? {
        for (i, c) in history.enumerated().reversed() where c.adapter == adapter && c.peer == peer && c.end == nil {
            return i + dropped
        }
        return nil
    }
}
