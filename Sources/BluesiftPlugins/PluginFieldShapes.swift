import BluesiftWire

/// What a field of a message may hold, as its layout declares it: the device fuzzer picks
/// values at and just past these bounds, then the plugin re-encodes the frame.
public struct PluginFieldShape: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A fixed-size integer: its byte size and signedness.
        case integer(bytes: Int, signed: Bool)
        /// An integer with named values (the declared raw values, in order).
        case enumeration(bytes: Int, values: [Int64])
        case string
        case bytes
        /// A repeated group: a fixed count (nil: counted by the data or the rest of the frame).
        case list(count: Int?)
        /// Anything else (reals, addresses, computed values): not mutated by field.
        case other
    }

    public var name: String
    public var kind: Kind
    public var volatile: Bool
    /// Covered by a checksum of the frame (every field before it, unless the plugin says a range).
    public var checksumCovered: Bool

    public init(name: String, kind: Kind, volatile: Bool = false, checksumCovered: Bool = false) {
        self.name = name; self.kind = kind; self.volatile = volatile; self.checksumCovered = checksumCovered
    }

    /// Smallest and largest value an integer field's bytes can carry.
    public var integerRange: ClosedRange<Int64>? {
        let (n, signed): (Int, Bool)
        switch kind {
        case .integer(let b, let s): (n, signed) = (b, s)
        case .enumeration(let b, _): (n, signed) = (b, false)
        default: return nil
        }
        guard n > 0, n < 8 else { return signed ? Int64.min...Int64.max : 0...Int64.max }
        let bits = Int64(n * 8)
        return signed ? -(1 << (bits - 1))...((1 << (bits - 1)) - 1) : 0...((1 << bits) - 1)
    }
}

extension Plugin {
    /// The visible fields of `message` (a switch case's type, or the frame's own fields for a
    /// plugin without one), in layout order; hidden, computed and constant fields left out.
    public func fieldShapes(message: String) -> [PluginFieldShape] {
        let hasChecksum = types[frameType].fields.contains { $0.checksum != nil }
        guard let t = types.firstIndex(where: { $0.name == message }) ?? (message == defaultMessage ? frameType : nil) else { return [] }
        return types[t].fields.compactMap { f -> PluginFieldShape? in
            if f.hidden || f.value != nil || f.checksum != nil || f.isSelector { return nil }
            var kind: PluginFieldShape.Kind
            switch f.kind {
            case .integer(.fixed(let size, let signed, _)):
                if let e = f.enumIndex, e < enums.count {
                    kind = .enumeration(bytes: size, values: enums[e].values.map(\.0))
                } else {
                    kind = .integer(bytes: size, signed: signed)
                }
            case .string: kind = .string
            case .bytes: kind = .bytes
            case .type, .switchOn: kind = .other
            case .contents, .computed, .context, .join: return nil
            default: kind = .other
            }
            switch f.repeatSpec {
            case .none: break
            case .count(let e):
                if case .literal(let n) = e { kind = .list(count: Int(n)) } else { kind = .list(count: nil) }
            case .eos: kind = .list(count: nil)
            }
            return PluginFieldShape(name: f.id, kind: kind, volatile: f.volatile, checksumCovered: hasChecksum)
        }
    }
}
