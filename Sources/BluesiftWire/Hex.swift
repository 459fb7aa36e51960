/// Lowercase hex formatting without Foundation.
public enum Hex {
    @inline(__always)
    public static func digit(_ nibble: UInt8) -> Character {
        Character(Unicode.Scalar(nibble < 10 ? 0x30 + nibble : 0x57 + nibble))
    }

    @inline(__always)
    static func ascii(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    public static func string<C: Collection>(_ bytes: C, separator: String = "") -> String where C.Element == UInt8 {
        // Empty or one-byte separators (all callers): written in place, one allocation.
        var sep = separator
        if let n = sep.withUTF8({ $0.count <= 1 ? $0.count : nil }) {
            let sepByte = sep.utf8.first ?? 0
            let count = bytes.isEmpty ? 0 : bytes.count * (2 + n) - n
            return String(unsafeUninitializedCapacity: count) { p in
                var i = 0
                for b in bytes {
                    if n == 1 && i > 0 { p[i] = sepByte; i += 1 }
                    p[i] = ascii(b >> 4); p[i + 1] = ascii(b & 0xF); i += 2
                }
                return i
            }
        }
        var s = ""
        s.reserveCapacity(bytes.count * (2 + separator.count))
        var first = true
        for b in bytes {
            if !first { s += separator }
            first = false
            s.append(digit(b >> 4)); s.append(digit(b & 0xF))
        }
        return s
    }

    /// `v`'s lowest `count` hex digits (lowercase, zero-padded) at `p`.
    @inline(__always)
    static func digits(_ v: UInt64, count: Int, to p: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var x = v
        var i = start + count
        while i > start { i -= 1; p[i] = ascii(UInt8(truncatingIfNeeded: x) & 0xF); x >>= 4 }
    }

    /// `0x0012`-style fixed-width hex.
    public static func fixed(_ v: UInt64, width: Int) -> String {
        // At least `width` digits, more when `v` needs them; written in place (summary lines).
        let needed = v == 0 ? 1 : (67 - v.leadingZeroBitCount) / 4
        let n = max(width, needed)
        return String(unsafeUninitializedCapacity: n + 2) { p in
            p[0] = UInt8(ascii: "0"); p[1] = UInt8(ascii: "x")
            digits(v, count: n, to: p, at: 2)
            return n + 2
        }
    }

    /// Parses "a5 06 03" / "a50603" / "A5:06"; nil on odd digits or junk.
    public static func parse(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var hi: UInt8? = nil
        for c in text.utf8 {
            let n: UInt8
            switch c {
            case 0x30...0x39: n = c - 0x30
            case 0x41...0x46: n = c - 0x37
            case 0x61...0x66: n = c - 0x57
            case 0x20, 0x3A, 0x2D, 0x0A, 0x09: continue
            default: return nil
            }
            if let h = hi { out.append(h << 4 | n); hi = nil } else { hi = n }
        }
        return hi == nil ? out : nil
    }

    /// Classic 16-bytes-per-line dump with offsets, for malformed records.
    public static func dump(_ p: UnsafeRawBufferPointer, indent: String = "") -> String {
        var lines: [String] = []
        var off = 0
        while off < p.count {
            let end = min(off + 16, p.count)
            let chunk = UnsafeRawBufferPointer(rebasing: p[off..<end])
            var line = indent + String(fixed(UInt64(off), width: 4).dropFirst(2)) + "  "
            line += string(chunk, separator: " ")
            line += String(repeating: " ", count: (16 - chunk.count) * 3 + 1)
            for b in chunk { line.append(b >= 0x20 && b < 0x7F ? Character(Unicode.Scalar(b)) : ".") }
            lines.append(line)
            off = end
        }
        return lines.joined(separator: "\n")
    }
}
