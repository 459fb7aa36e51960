/// Appending text to a byte buffer without building Strings: the text renderer writes each
/// summary line straight into its output, as `JSONFieldWriter` does for JSON Lines (String
/// concatenation per piece was 60% of `dump`'s text time).
extension Array where Element == UInt8 {
    /// The string's UTF-8 bytes.
    @inlinable @inline(__always)
    public mutating func appendText(_ s: String) {
        var s = s
        s.withUTF8 { append(contentsOf: $0) }
    }

    @inlinable @inline(__always)
    public mutating func appendText(_ s: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// `v` in decimal, as `String(v)` writes it.
    @inlinable
    public mutating func appendDecimal(_ v: Int) {
        if v < 0 { append(UInt8(ascii: "-")) }
        var m = v.magnitude
        if m < 10 { append(0x30 &+ UInt8(truncatingIfNeeded: m)); return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            var i = 20
            while m > 0 {
                i &-= 1
                buf[i] = 0x30 &+ UInt8(truncatingIfNeeded: m % 10)
                m /= 10
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: buf[i...]))
        }
    }

    /// `Hex.fixed(v, width:)`: "0x" and at least `width` lowercase digits.
    public mutating func appendHex(_ v: UInt64, width: Int) {
        let needed = v == 0 ? 1 : (67 - v.leadingZeroBitCount) / 4
        let n = Swift.max(width, needed)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: n + 2) { p in
            p[0] = UInt8(ascii: "0"); p[1] = UInt8(ascii: "x")
            Hex.digits(v, count: n, to: p, at: 2)
            append(contentsOf: p)
        }
    }

    /// `c0:ba:0d:00:00:01`.
    public mutating func appendAddress(_ a: BDAddr) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: BDAddr.textLength) { buf in
            a.write(to: buf.baseAddress!)
            append(contentsOf: buf)
        }
    }

    /// `String(decoding: bytes, as: UTF8.self)`'s bytes: invalid sequences become U+FFFD.
    @inlinable
    public mutating func appendDecodingUTF8(_ bytes: UnsafeRawBufferPointer) {
        var ascii = true
        for b in bytes where b >= 0x80 {
            ascii = false
            break
        }
        if ascii { append(contentsOf: bytes) } else { appendText(String(decoding: bytes, as: UTF8.self)) }
    }
}
