/// An append-only byte buffer with explicit endianness; the encoding twin of ``ByteReader``.
public struct ByteWriter: Sendable {
    public var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func writeUInt8(_ v: UInt8) { bytes.append(v) }

    public mutating func writeUInt(_ v: UInt64, size: Int, endianness: Endianness) {
        precondition(size >= 1 && size <= 8)
        if endianness == .little {
            for i in 0..<size { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
        } else {
            for i in (0..<size).reversed() { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
        }
    }

    public mutating func writeUInt16(_ v: UInt16, _ e: Endianness = .little) { writeUInt(UInt64(v), size: 2, endianness: e) }
    public mutating func writeUInt32(_ v: UInt32, _ e: Endianness = .little) { writeUInt(UInt64(v), size: 4, endianness: e) }
    public mutating func writeUInt64(_ v: UInt64, _ e: Endianness = .little) { writeUInt(v, size: 8, endianness: e) }

    public mutating func writeBytes<S: Sequence>(_ s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }
    public mutating func writeBytes(_ p: UnsafeRawBufferPointer) { bytes.append(contentsOf: p) }

    /// Overwrites a little- or big-endian integer already written (length back-patching).
    public mutating func setUInt(_ v: UInt64, at index: Int, size: Int, endianness: Endianness) {
        for i in 0..<size {
            let shift = endianness == .little ? i : size - 1 - i
            bytes[index + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(shift)))
        }
    }

    public mutating func writeAddress(_ a: BDAddr) { bytes.append(contentsOf: a.littleEndianBytes) }
}
