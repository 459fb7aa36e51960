/// A Bluetooth UUID: 16-, 32- or 128-bit. Stored as 128 bits; 16/32-bit values sit on the
/// Bluetooth Base UUID (Core 5.4 Vol 3 Part B §2.5.1). Open: any value is accepted.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Big-endian halves of the 128-bit value.
    public var high: UInt64
    public var low: UInt64

    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    static let baseHighLow32: UInt64 = 0x0000_1000

    public init(high: UInt64, low: UInt64) { self.high = high; self.low = low }

    /// 16- or 32-bit short form.
    public init(_ short: UInt32) {
        high = UInt64(short) << 32 | Self.baseHighLow32
        low = Self.baseLow
    }

    /// From little-endian wire bytes of length 2, 4 or 16.
    public init?(littleEndian b: UnsafeRawBufferPointer) {
        switch b.count {
        case 2: self.init(UInt32(b[0]) | UInt32(b[1]) << 8)
        case 4: self.init(UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24)
        case 16:
            var h: UInt64 = 0, l: UInt64 = 0
            for i in (8..<16).reversed() { h = h << 8 | UInt64(b[i]) }
            for i in (0..<8).reversed() { l = l << 8 | UInt64(b[i]) }
            self.init(high: h, low: l)
        default: return nil
        }
    }

    public init?(littleEndian bytes: [UInt8]) {
        guard let u = bytes.withUnsafeBytes({ BluetoothUUID(littleEndian: $0) }) else { return nil }
        self = u
    }

    /// Parses "180f", "0000180f", "0000180f-0000-1000-8000-00805f9b34fb" or undashed 32 digits.
    public init?(string: String) {
        let hex = string.lowercased().filter { $0 != "-" }
        if string.hasPrefix("0x") || string.hasPrefix("0X") {
            guard let v = UInt32(string.dropFirst(2), radix: 16) else { return nil }
            self.init(v); return
        }
        switch hex.count {
        case 4, 8:
            guard let v = UInt32(hex, radix: 16) else { return nil }
            self.init(v)
        case 32:
            guard let h = UInt64(hex.prefix(16), radix: 16), let l = UInt64(hex.suffix(16), radix: 16) else { return nil }
            self.init(high: h, low: l)
        default: return nil
        }
    }

    /// The 16- or 32-bit value when this UUID lies on the Base UUID.
    public var shortValue: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32 else { return nil }
        return UInt32(high >> 32)
    }

    public var littleEndianBytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16)
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: low >> (8 * UInt64(i)))) }
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: high >> (8 * UInt64(i)))) }
        return out
    }

    /// Lowercase: 4 hex digits for 16-bit values (also when carried as 128 bits on the base),
    /// 8 for 32-bit, the dashed form otherwise.
    public var description: String {
        // Written in place (one allocation at most): UUIDs are printed on the per-record path.
        if let s = shortValue {
            let width = s <= 0xFFFF ? 4 : 8
            return String(unsafeUninitializedCapacity: width) { p in
                Hex.digits(UInt64(s), count: width, to: p, at: 0); return width
            }
        }
        return longDescription
    }

    /// Always the dashed 128-bit form (a beacon's proximity UUID is 128 bits even on the base).
    public var longDescription: String {
        String(unsafeUninitializedCapacity: 36) { p in
            Hex.digits(high >> 32, count: 8, to: p, at: 0); p[8] = UInt8(ascii: "-")
            Hex.digits(high >> 16, count: 4, to: p, at: 9); p[13] = UInt8(ascii: "-")
            Hex.digits(high, count: 4, to: p, at: 14); p[18] = UInt8(ascii: "-")
            Hex.digits(low >> 48, count: 4, to: p, at: 19); p[23] = UInt8(ascii: "-")
            Hex.digits(low, count: 12, to: p, at: 24)
            return 36
        }
    }

    public static func < (a: BluetoothUUID, b: BluetoothUUID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}
