import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftGATT

/// A semantic diff of two captures: ATT operations are aligned by characteristic identity
/// (service, characteristic, instance, descriptor) and by order within that identity, so
/// handle numbers do not matter.
public struct CaptureDiff {
    /// One ATT operation reduced to what is compared.
    public struct Operation: Sendable, Equatable {
        public var frame: Int
        public var kind: String // write, command, read-value, notify, indicate, error
        public var identity: String // "fee7/36f5#0" or "handle 0x0019"
        public var value: [UInt8]
        public var vendor: String? // decoded vendor message, for display
        /// What is compared: the value, or a vendor message without its volatile fields.
        public var comparable: String?

        public init(frame: Int, kind: String, identity: String, value: [UInt8], vendor: String? = nil, comparable: String? = nil) {
            self.frame = frame; self.kind = kind; self.identity = identity; self.value = value
            self.vendor = vendor; self.comparable = comparable
        }

        func same(as b: Operation) -> Bool {
            if let x = comparable, let y = b.comparable { return x == y }
            return value == b.value
        }
    }

    public enum Entry: Sendable, Equatable {
        case same(Operation, Operation)
        case changed(Operation, Operation)
        case onlyInA(Operation)
        case onlyInB(Operation)
    }

    public var entries: [Entry] = []

    public var summary: (same: Int, changed: Int, onlyA: Int, onlyB: Int) {
        var s = (0, 0, 0, 0)
        for e in entries {
            switch e {
            case .same: s.0 += 1
            case .changed: s.1 += 1
            case .onlyInA: s.2 += 1
            case .onlyInB: s.3 += 1
            }
        }
        return s
    }

    public var firstDivergence: Entry? {
        entries.first { if case .same = $0 { return false } else { return true } }
    }

    public static func identity(_ location: GATTDatabase.Location?, handle: UInt16) -> String {
        guard let loc = location, let c = loc.characteristic else { return "handle " + Hex.fixed(UInt64(handle), width: 4) }
        var s = "\(loc.service)/\(c)#\(loc.instance)"
        if let d = loc.descriptor { s += "/\(d)" }
        return s
    }

    /// The operations worth comparing in one analyzed frame, in file order. Discovery is left
    /// out: it differs whenever handles move. Vendor frames are compared as messages, once
    /// reassembled, so different MTUs split the same frame without a difference.
    public static func operations(_ a: AnalyzedFrame, analyzer: Analyzer, lastRead: inout [UInt16: UInt16]) -> [Operation] {
        let f = a.decoded
        guard let att = f.att, !att.bytes.isEmpty else { return [] }
        let op = att.opcode
        let conn = f.connection ?? 0
        let kind: String
        var handle = att.handle
        var location = a.location
        switch op {
        case .writeRequest: kind = "write"
        case .writeCommand: kind = "command"
        case .signedWriteCommand: kind = "signed-write"
        case .handleValueNotification: kind = "notify"
        case .handleValueIndication: kind = "indicate"
        case .readRequest: lastRead[conn] = att.handle; return []
        case .readResponse:
            kind = "read-value"; handle = lastRead[conn]
            if let h = handle { location = analyzer.gatt.locate(adapter: f.record.adapter, connection: conn, handle: h)?.0 }
        case .errorResponse
        where att.errorCode != nil
            && [.readRequest, .writeRequest, .prepareWriteRequest, .executeWriteRequest].contains(att.requestOpcode):
            kind = "error"; handle = att.errorHandle
        default: return []
        }
        let id = identity(location, handle: handle ?? 0)
        if let v = a.vendor {
            let plugin = analyzer.plugins?.plugin(id: v.plugin)
            return v.messages.map { m in
                let volatile = plugin?.volatileFields(message: m.message) ?? []
                let kept = m.fields.filter { !volatile.contains($0.name) }.map { $0.name + "=" + $0.value.description }
                return Operation(
                    frame: f.record.frame, kind: kind, identity: id, value: m.bytes, vendor: m.summary,
                    comparable: ([v.plugin, m.message] + kept + [m.checksum?.rawValue ?? ""]).joined(separator: " "))
            }
        }
        return [
            Operation(
                frame: f.record.frame, kind: kind, identity: id,
                value: att.value.map { Array($0) } ?? att.errorCode.map { [$0] } ?? [], vendor: nil)
        ]
    }

    /// Pairs the i-th operation of each (kind, identity) in A with the i-th in B; entries
    /// follow A's order, and operations only B has come last, in B's order.
    public static func align(_ a: [Operation], _ b: [Operation]) -> CaptureDiff {
        var queues: [String: [Int]] = [:]
        for (i, op) in b.enumerated() { queues[op.kind + " " + op.identity, default: []].append(i) }
        var cursor: [String: Int] = [:]
        var usedB = Array(repeating: false, count: b.count)
        var diff = CaptureDiff()
        for op in a {
            let key = op.kind + " " + op.identity
            let n = cursor[key, default: 0]
            guard let q = queues[key], n < q.count else { diff.entries.append(.onlyInA(op)); continue }
            cursor[key] = n + 1
            let j = q[n]
            usedB[j] = true
            diff.entries.append(op.same(as: b[j]) ? .same(op, b[j]) : .changed(op, b[j]))
        }
        for (j, op) in b.enumerated() where !usedB[j] { diff.entries.append(.onlyInB(op)) }
        return diff
    }
}
