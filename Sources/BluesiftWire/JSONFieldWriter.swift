/// Writes fields as compact JSON straight into a byte buffer: no dictionaries, no Foundation.
public struct JSONFieldWriter: FieldSink {
    public var out: [UInt8]
    /// Container stack as bits (bit 0 = innermost): whether it already has a member (needs a
    /// comma) and whether it is an array. Bits, not arrays: this runs for every field.
    var hasMember: UInt64 = 0
    var inArray: UInt64 = 0
    var depth = 0
    /// Bits shifted out past 64 levels (deeply nested plugin values), restored on the way out.
    var spilled: [UInt8] = []

    public init(capacity: Int = 1 << 16) {
        out = []
        out.reserveCapacity(capacity)
    }

    /// Starts a top-level object; pair with ``endTopLevel()``.
    public mutating func beginTopLevel() {
        out.append(UInt8(ascii: "{"))
        push(array: false)
    }

    public mutating func endTopLevel() {
        out.append(UInt8(ascii: "}"))
        pop()
    }

    @inline(__always) mutating func push(array: Bool) {
        if depth >= 64 { spilled.append(UInt8(hasMember >> 63) | UInt8(inArray >> 63) << 1) }
        hasMember <<= 1; inArray = inArray << 1 | (array ? 1 : 0); depth += 1
    }

    @inline(__always) mutating func pop() {
        hasMember >>= 1; inArray >>= 1; depth -= 1
        if depth >= 64, let b = spilled.popLast() {
            hasMember |= UInt64(b & 1) << 63; inArray |= UInt64(b >> 1 & 1) << 63
        }
    }

    @inline(__always)
    mutating func prefix(_ key: FieldKey) {
        if depth > 0 {
            if hasMember & 1 != 0 { out.append(UInt8(ascii: ",")) }
            hasMember |= 1
            if inArray & 1 != 0 { return }
        }
        out.append(UInt8(ascii: "\""))
        switch key {
        case .literal(let s): s.withUTF8Buffer { out.append(contentsOf: $0) }
        case .dynamic(let s): appendEscaped(s)
        }
        out.append(UInt8(ascii: "\"")); out.append(UInt8(ascii: ":"))
    }

    public mutating func appendRaw(_ s: StaticString) { s.withUTF8Buffer { out.append(contentsOf: $0) } }

    public mutating func appendEscaped(_ s: String) {
        var s = s
        s.withUTF8 { buf in
            // Most strings need no escaping: one bulk copy.
            var clean = true
            for c in buf where c < 0x20 || c == 0x22 || c == 0x5C { clean = false; break }
            if clean { out.append(contentsOf: buf); return }
            for c in buf {
                switch c {
                case UInt8(ascii: "\""): out.append(0x5C); out.append(c)
                case UInt8(ascii: "\\"): out.append(0x5C); out.append(c)
                case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
                case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
                case 0..<0x20:
                    out.append(contentsOf: Array("\\u00".utf8))
                    out.append(Hex.ascii(c >> 4)); out.append(Hex.ascii(c & 0xF))
                default: out.append(c)
                }
            }
        }
    }

    public mutating func appendDecimal(_ v: Int) {
        if v < 0 { out.append(UInt8(ascii: "-")); appendDecimal(UInt64(v.magnitude)) } else { appendDecimal(UInt64(v)) }
    }

    public mutating func appendDecimal(_ v: UInt64) {
        if v < 10 { out.append(0x30 + UInt8(v)); return }
        var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 20
        var x = v
        withUnsafeMutableBytes(of: &tmp) { p in
            while x > 0 { n -= 1; p[n] = 0x30 + UInt8(x % 10); x /= 10 }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[n..<20]))
        }
    }

    public mutating func int(_ key: FieldKey, _ value: Int) { prefix(key); appendDecimal(value) }
    public mutating func uint(_ key: FieldKey, _ value: UInt64) { prefix(key); appendDecimal(value) }
    public mutating func bool(_ key: FieldKey, _ value: Bool) { prefix(key); appendRaw(value ? "true" : "false") }
    public mutating func null(_ key: FieldKey) { prefix(key); appendRaw("null") }

    public mutating func string(_ key: FieldKey, _ value: String) {
        prefix(key)
        out.append(UInt8(ascii: "\"")); appendEscaped(value); out.append(UInt8(ascii: "\""))
    }

    public mutating func hex(_ key: FieldKey, _ bytes: UnsafeRawBufferPointer) {
        prefix(key)
        out.append(UInt8(ascii: "\""))
        // Whole value in one append: per-byte appends dominated the profile.
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: bytes.count * 2))
        out.withUnsafeMutableBufferPointer { o in
            var i = start
            for b in bytes { o[i] = Hex.ascii(b >> 4); o[i + 1] = Hex.ascii(b & 0xF); i += 2 }
        }
        out.append(UInt8(ascii: "\""))
    }

    public mutating func beginObject(_ key: FieldKey) {
        prefix(key); out.append(UInt8(ascii: "{"))
        push(array: false)
    }

    public mutating func endObject() {
        out.append(UInt8(ascii: "}")); pop()
    }

    public mutating func beginArray(_ key: FieldKey) {
        prefix(key); out.append(UInt8(ascii: "["))
        push(array: true)
    }

    public mutating func endArray() {
        out.append(UInt8(ascii: "]")); pop()
    }
}
