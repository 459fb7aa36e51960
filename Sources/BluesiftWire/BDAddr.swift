/// A 48-bit Bluetooth device address. On the wire it is little-endian; printed MSB first.
public struct BDAddr: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Most significant byte in bits 47...40.
    public var value: UInt64

    @inlinable public init(_ value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// Read from six bytes (fewer: the high bytes are zero); every advertising report has one.
    @inlinable
    public init(littleEndian b: UnsafeRawBufferPointer) {
        if b.count >= 6, let p = b.baseAddress {
            self.init(
                UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
                    | UInt64(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt16.self))) << 32)
            return
        }
        var v: UInt64 = 0
        for i in (0..<min(6, b.count)).reversed() { v = v << 8 | UInt64(b[i]) }
        self.init(v)
    }

    /// Parses "c0:ba:0d:00:00:01" (or with dashes).
    public init?(string: String) {
        let parts = string.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var v: UInt64 = 0
        for p in parts {
            guard p.count == 2, let b = UInt8(p, radix: 16) else { return nil }
            v = v << 8 | UInt64(b)
        }
        self.init(v)
    }

    public var littleEndianBytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }

    /// `c0:ba:0d:00:00:01`, written in place: one allocation, no Character appends.
    public var description: String {
        String(unsafeUninitializedCapacity: Self.textLength) { p in
            write(to: p.baseAddress!); return Self.textLength
        }
    }

    public static let textLength = 17

    /// Writes the text form (`textLength` bytes) at `p`: JSON writes it without a String, as
    /// it is printed for every advertising report.
    @inline(__always)
    public func write(to p: UnsafeMutablePointer<UInt8>) {
        var n = 0
        for i in (0..<6).reversed() {
            let b = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))
            p[n] = Hex.ascii(b >> 4); p[n + 1] = Hex.ascii(b & 0xF)
            if i > 0 { p[n + 2] = UInt8(ascii: ":") }
            n += 3
        }
    }

    public static func < (a: BDAddr, b: BDAddr) -> Bool { a.value < b.value }
}

/// Address type as carried in HCI/LL (0 public, 1 random, 2/3 resolved identity). Open.
public struct AddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let `public` = AddressType(rawValue: 0)
    public static let random = AddressType(rawValue: 1)
    public static let publicIdentity = AddressType(rawValue: 2)
    public static let randomIdentity = AddressType(rawValue: 3)
    public var name: String {
        switch rawValue {
        case 0: "public"
        case 1: "random"
        case 2: "public identity"
        case 3: "random identity"
        case 0xFF: "anonymous"
        default: "unknown"
        }
    }
    public var description: String { name }
}
