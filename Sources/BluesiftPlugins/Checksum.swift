/// Checksum algorithms a plugin can name. CRCs follow the Rocksoft model
/// (width, poly, init, refin, refout, xorout), parameters as catalogued by
/// https://reveng.sourceforge.io/crc-catalogue/ (check value over "123456789" in tests).
public struct ChecksumAlgorithm: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case xor, sum8, crc }
    public var kind: Kind
    public var width: Int
    public var poly: UInt64
    public var initial: UInt64
    public var refin: Bool
    public var refout: Bool
    public var xorout: UInt64

    public init(
        kind: Kind, width: Int = 8, poly: UInt64 = 0, initial: UInt64 = 0, refin: Bool = false,
        refout: Bool = false, xorout: UInt64 = 0
    ) {
        self.kind = kind; self.width = width; self.poly = poly; self.initial = initial
        self.refin = refin; self.refout = refout; self.xorout = xorout
    }

    public static let xor8 = ChecksumAlgorithm(kind: .xor)
    public static let sum8 = ChecksumAlgorithm(kind: .sum8)
    /// CRC-8/MAXIM-DOW (Dallas 1-Wire): check 0xA1.
    public static let crc8Maxim = ChecksumAlgorithm(kind: .crc, width: 8, poly: 0x31, refin: true, refout: true)
    /// CRC-8/SMBUS: check 0xF4.
    public static let crc8SMBus = ChecksumAlgorithm(kind: .crc, width: 8, poly: 0x07)
    /// CRC-16/IBM-3740 a.k.a. CCITT-FALSE: check 0x29B1.
    public static let crc16CCITTFalse = ChecksumAlgorithm(kind: .crc, width: 16, poly: 0x1021, initial: 0xFFFF)
    /// CRC-16/MODBUS: check 0x4B37.
    public static let crc16Modbus = ChecksumAlgorithm(kind: .crc, width: 16, poly: 0x8005, initial: 0xFFFF, refin: true, refout: true)
    /// CRC-16/XMODEM: check 0x31C3.
    public static let crc16XModem = ChecksumAlgorithm(kind: .crc, width: 16, poly: 0x1021)
    /// CRC-32/ISO-HDLC (zlib, Ethernet): check 0xCBF43926.
    public static let crc32 = ChecksumAlgorithm(
        kind: .crc, width: 32, poly: 0x04C1_1DB7, initial: 0xFFFF_FFFF,
        refin: true, refout: true, xorout: 0xFFFF_FFFF)

    /// Names accepted in `checksum: NAME` / `algorithm: NAME`.
    public static func named(_ name: String) -> ChecksumAlgorithm? {
        switch name.lowercased() {
        case "xor", "xor8": .xor8
        case "sum8", "sum": .sum8
        case "crc8-maxim", "crc8-dallas", "crc-8/maxim", "crc-8/maxim-dow": .crc8Maxim
        case "crc8-smbus", "crc8", "crc-8/smbus": .crc8SMBus
        case "crc16-ccitt-false", "crc-16/ccitt-false", "crc16-ibm-3740": .crc16CCITTFalse
        case "crc16-modbus", "crc-16/modbus": .crc16Modbus
        case "crc16-xmodem", "crc-16/xmodem": .crc16XModem
        case "crc32", "crc-32": .crc32
        default: nil
        }
    }

    public static let names = [
        "xor", "sum8", "crc8-maxim", "crc8-smbus", "crc16-ccitt-false", "crc16-modbus",
        "crc16-xmodem", "crc32", "crc (generic: width, poly, init, refin, refout, xorout)"
    ]

    /// Bytes the checksum value occupies.
    public var byteWidth: Int { kind == .crc ? (width + 7) / 8 : 1 }

    public func compute(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        switch kind {
        case .xor:
            var x: UInt8 = 0
            for b in bytes { x ^= b }
            return UInt64(x)
        case .sum8:
            var s: UInt8 = 0
            for b in bytes { s &+= b }
            return UInt64(s)
        case .crc:
            let w = UInt64(width)
            let mask: UInt64 = w == 64 ? ~0 : (1 << w) - 1
            let top: UInt64 = 1 << (w - 1)
            var crc = initial & mask
            for byte in bytes {
                let b = refin ? Self.reflect(UInt64(byte), bits: 8) : UInt64(byte)
                if w >= 8 {
                    crc ^= b << (w - 8)
                    for _ in 0..<8 { crc = (crc & top != 0 ? (crc << 1) ^ poly : crc << 1) & mask }
                } else {
                    // Widths under 8: feed bit by bit, most significant first.
                    for i in (0..<8).reversed() {
                        let bit = (b >> UInt64(i)) & 1
                        let fb = ((crc & top) != 0 ? 1 : 0) ^ bit
                        crc = (crc << 1) & mask
                        if fb != 0 { crc ^= poly & mask }
                    }
                }
            }
            if refout { crc = Self.reflect(crc, bits: width) }
            return (crc ^ xorout) & mask
        }
    }

    public func compute(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { compute($0) } }

    static func reflect(_ v: UInt64, bits: Int) -> UInt64 {
        var r: UInt64 = 0
        for i in 0..<bits where v & (1 << UInt64(i)) != 0 { r |= 1 << UInt64(bits - 1 - i) }
        return r
    }
}
