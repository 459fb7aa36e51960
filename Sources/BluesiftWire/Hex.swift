/// Lowercase hex formatting without Foundation.
public enum Hex {
    @inline(__always)
    public static func digit(_ nibble: UInt8) -> Character {
        Character(Unicode.Scalar(nibble < 10 ? 0x30 + nibble : 0x57 + nibble))
    }

    @inline(__always)
    static func ascii(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    public static func string<C: Collection>(_ bytes: C, separator: String = "") -> String where C.Element == UInt8 {
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

    /// `0x0012`-style fixed-width hex.
    public static func fixed(_ v: UInt64, width: Int) -> String {
        var s = String(v, radix: 16)
        if s.count < width { s = String(repeating: "0", count: width - s.count) + s }
        return "0x" + s
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
