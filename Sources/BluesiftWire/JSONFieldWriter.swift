/// Writes fields as compact JSON straight into a byte buffer: no dictionaries, no Foundation.
public struct JSONFieldWriter: FieldSink {
    public var out: [UInt8]
    /// Whether the current container already has a member (needs a comma).
    var hasMember: [Bool] = []
    var inArray: [Bool] = []

    public init(capacity: Int = 1 << 16) {
        out = []
        out.reserveCapacity(capacity)
    }

    /// Starts a top-level object; pair with ``endTopLevel()``.
    public mutating func beginTopLevel() {
        out.append(UInt8(ascii: "{"))
        hasMember.append(false); inArray.append(false)
    }

    public mutating func endTopLevel() {
        out.append(UInt8(ascii: "}"))
        hasMember.removeLast(); inArray.removeLast()
    }

    @inline(__always)
    mutating func prefix(_ key: FieldKey) {
        if let last = hasMember.last {
            if last { out.append(UInt8(ascii: ",")) }
            hasMember[hasMember.count - 1] = true
            if inArray.last == true { return }
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
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &tmp) { p in
            while x > 0 { p[n] = 0x30 + UInt8(x % 10); x /= 10; n += 1 }
            while n > 0 { n -= 1; out.append(p[n]) }
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
        for b in bytes { out.append(Hex.ascii(b >> 4)); out.append(Hex.ascii(b & 0xF)) }
        out.append(UInt8(ascii: "\""))
    }

    public mutating func beginObject(_ key: FieldKey) {
        prefix(key); out.append(UInt8(ascii: "{"))
        hasMember.append(false); inArray.append(false)
    }

    public mutating func endObject() {
        out.append(UInt8(ascii: "}")); hasMember.removeLast(); inArray.removeLast()
    }

    public mutating func beginArray(_ key: FieldKey) {
        prefix(key); out.append(UInt8(ascii: "["))
        hasMember.append(false); inArray.append(true)
    }

    public mutating func endArray() {
        out.append(UInt8(ascii: "]")); hasMember.removeLast(); inArray.removeLast()
    }
}
