/// A typed decoding error: what went wrong, where, and in which layer.
/// Modelled on swift-asn1's ASN1Error: an open code plus a human message.
public struct DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A decode error held by reference, for layers that keep one optionally: they stay
    /// plain data (no reference counting per copy) in the common case of no error.
    public final class Box: @unchecked Sendable {
        public let error: DecodeError
        public init(_ error: DecodeError) { self.error = error }
    }

    /// Open set of error codes; unknown codes stay printable.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let truncated = Code(rawValue: "truncated")
        public static let invalidLength = Code(rawValue: "invalid_length")
        public static let invalidValue = Code(rawValue: "invalid_value")
        public static let unsupported = Code(rawValue: "unsupported")
        public static let badMagic = Code(rawValue: "bad_magic")
        public static let reassembly = Code(rawValue: "reassembly")
        public static let unexpected = Code(rawValue: "unexpected")
        public var description: String { rawValue }
    }

    public var layer: String
    public var code: Code
    /// Byte offset within the layer's own bytes where the problem was found.
    public var offset: Int
    public var message: String

    public init(layer: String = "", code: Code, offset: Int, message: String) {
        self.layer = layer
        self.code = code
        self.offset = offset
        self.message = message
    }

    public func inLayer(_ layer: String) -> DecodeError {
        var copy = self
        if copy.layer.isEmpty { copy.layer = layer }
        return copy
    }

    public var description: String {
        let prefix = layer.isEmpty ? "" : "\(layer): "
        return "\(prefix)\(message) (\(code) at offset \(offset))"
    }
}
