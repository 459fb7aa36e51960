import BluesiftWire

/// `--ignore` rules: what the diff must not count as a difference.
///   handle=0x001f            every answer on that (recorded) handle
///   bytes=0x001f:4-7         bytes 4…7 (inclusive, 0-based) of answers on that handle
///   field=counter            a vendor field by name, or message.field (ping_reply.counter)
public enum IgnoreRule: Sendable, Equatable, CustomStringConvertible {
    case handle(Int)
    case bytes(handle: Int, range: ClosedRange<Int>)
    case field(String)

    public init?(parsing text: String) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        func int(_ s: String) -> Int? {
            s.lowercased().hasPrefix("0x") ? Int(s.dropFirst(2), radix: 16) : Int(s)
        }
        switch parts[0] {
        case "handle":
            guard let h = int(parts[1]) else { return nil }
            self = .handle(h)
        case "bytes":
            let hr = parts[1].split(separator: ":").map(String.init)
            guard hr.count == 2, let h = int(hr[0]) else { return nil }
            let ab = hr[1].split(separator: "-").map(String.init)
            guard let a = ab.first.flatMap(int), let b = (ab.count == 2 ? int(ab[1]) : a), a <= b, a >= 0 else { return nil }
            self = .bytes(handle: h, range: a...b)
        case "field":
            guard !parts[1].isEmpty else { return nil }
            self = .field(parts[1])
        default:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .handle(let h): "handle=\(Hex.fixed(UInt64(h), width: 4))"
        case .bytes(let h, let r): "bytes=\(Hex.fixed(UInt64(h), width: 4)):\(r.lowerBound)-\(r.upperBound)"
        case .field(let f): "field=\(f)"
        }
    }
}

extension Array where Element == IgnoreRule {
    func ignoresHandle(_ h: Int) -> Bool { contains { if case .handle(h) = $0 { true } else { false } } }

    /// Values with ignored byte ranges blanked, so equal-but-for-them values compare equal.
    func masked(_ v: [UInt8], handle: Int) -> [UInt8] {
        var v = v
        for case .bytes(handle, let r) in self {
            for i in r where i < v.count { v[i] = 0 }
        }
        return v
    }

    func ignoresField(message: String, field: String) -> Bool {
        contains { if case .field(let f) = $0 { f == field || f == "\(message).\(field)" } else { false } }
    }
}
