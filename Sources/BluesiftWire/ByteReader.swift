/// A cursor over borrowed bytes, in the spirit of swift-nio's ByteBuffer:
/// `read*` consumes, `get*(at:)` and `peek*` do not, and endianness is always explicit.
///
/// The reader never copies and never allocates; reading past the end throws a typed
/// ``DecodeError`` with the offset, so a length field can never make it read or allocate
/// more than the bytes really there. The bytes must outlive the reader (see DESIGN.md,
/// "Lifetimes").
public struct ByteReader {
    public let bytes: UnsafeRawBufferPointer
    /// Reads are `@inlinable` so the decoders in other modules inline them (a call per field
    /// was ~30 instructions); they move the index through this.
    @usableFromInline var _readerIndex: Int
    @inlinable public var readerIndex: Int { _readerIndex }

    public init(_ bytes: UnsafeRawBufferPointer, at index: Int = 0) {
        self.bytes = bytes
        self._readerIndex = min(max(index, 0), bytes.count)
    }

    @inlinable public var readableBytes: Int { bytes.count - readerIndex }
    @inlinable public var isAtEnd: Bool { readerIndex >= bytes.count }

    @inlinable @inline(__always)
    func need(_ n: Int, _ what: StaticString) throws(DecodeError) {
        if n < 0 || readableBytes < n { throw shortage(n, what) }
    }

    /// Out of line, so the reads that check first stay small enough to inline.
    @usableFromInline @inline(never)
    func shortage(_ n: Int, _ what: StaticString) -> DecodeError {
        DecodeError(code: .truncated, offset: readerIndex, message: "\(what): need \(n) bytes, \(readableBytes) left")
    }

    @inlinable public func peekUInt8() -> UInt8? {
        readerIndex < bytes.count ? bytes[readerIndex] : nil
    }

    @inlinable @inline(__always)
    public mutating func readUInt8(_ what: StaticString = "u8") throws(DecodeError) -> UInt8 {
        try need(1, what)
        defer { _readerIndex += 1 }
        return bytes[readerIndex]
    }

    @inlinable @inline(__always)
    public mutating func readInt8(_ what: StaticString = "s8") throws(DecodeError) -> Int8 {
        Int8(bitPattern: try readUInt8(what))
    }

    /// Unsigned little- or big-endian integer of `size` bytes (1...8).
    @inlinable
    public func getUInt(at index: Int, size: Int, endianness: Endianness) -> UInt64? {
        guard size >= 1, size <= 8, index >= 0, index + size <= bytes.count else { return nil }
        var v: UInt64 = 0
        if endianness == .little {
            var i = size - 1
            while i >= 0 { v = (v << 8) | UInt64(bytes[index + i]); i -= 1 }
        } else {
            for i in 0..<size { v = (v << 8) | UInt64(bytes[index + i]) }
        }
        return v
    }

    @inlinable @inline(__always)
    public mutating func readUInt(size: Int, endianness: Endianness, _ what: StaticString = "integer") throws(DecodeError) -> UInt64 {
        try need(size, what)
        guard let v = getUInt(at: readerIndex, size: size, endianness: endianness) else {
            throw DecodeError(code: .invalidLength, offset: readerIndex, message: "\(what): bad integer size \(size)")
        }
        _readerIndex += size
        return v
    }

    @inlinable @inline(__always)
    public mutating func readUInt16(_ e: Endianness = .little, _ what: StaticString = "u16") throws(DecodeError) -> UInt16 {
        try need(2, what)
        let b0 = UInt16(bytes[readerIndex]), b1 = UInt16(bytes[readerIndex + 1])
        _readerIndex += 2
        return e == .little ? (b0 | b1 << 8) : (b0 << 8 | b1)
    }

    @inlinable @inline(__always)
    public mutating func readUInt24(_ e: Endianness = .little, _ what: StaticString = "u24") throws(DecodeError) -> UInt32 {
        UInt32(try readUInt(size: 3, endianness: e, what))
    }

    @inlinable @inline(__always)
    public mutating func readUInt32(_ e: Endianness = .little, _ what: StaticString = "u32") throws(DecodeError) -> UInt32 {
        try need(4, what)
        let v = getUInt(at: readerIndex, size: 4, endianness: e)!
        _readerIndex += 4
        return UInt32(truncatingIfNeeded: v)
    }

    @inlinable @inline(__always)
    public mutating func readUInt64(_ e: Endianness = .little, _ what: StaticString = "u64") throws(DecodeError) -> UInt64 {
        try need(8, what)
        let v = getUInt(at: readerIndex, size: 8, endianness: e)!
        _readerIndex += 8
        return v
    }

    /// A borrowed slice of the next `count` bytes.
    @inlinable @inline(__always)
    public mutating func readBytes(_ count: Int, _ what: StaticString = "bytes") throws(DecodeError) -> UnsafeRawBufferPointer {
        try need(count, what)
        defer { _readerIndex += count }
        return UnsafeRawBufferPointer(rebasing: bytes[readerIndex..<readerIndex + count])
    }

    /// Everything left, consumed.
    @inlinable @inline(__always)
    public mutating func readRemaining() -> UnsafeRawBufferPointer {
        defer { _readerIndex = bytes.count }
        return UnsafeRawBufferPointer(rebasing: bytes[readerIndex...])
    }

    /// Everything left, not consumed.
    public var remaining: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[readerIndex...])
    }

    public mutating func skip(_ count: Int, _ what: StaticString = "skip") throws(DecodeError) {
        try need(count, what)
        _readerIndex += count
    }

    @inlinable @inline(__always)
    public mutating func readAddress(_ what: StaticString = "address") throws(DecodeError) -> BDAddr {
        let b = try readBytes(6, what)
        return BDAddr(littleEndian: b)
    }
}

public enum Endianness: Sendable, Hashable {
    case little, big
}
