/// A strict JSON validator (RFC 8259), the oracle for renderer output: no Foundation,
/// no allocation. Accepts one value with optional surrounding whitespace/newline.
public enum JSONCheck {
    /// Offset of the first byte that makes `bytes` invalid JSON, or nil when valid.
    public static func firstError(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { b in
            var p = Parser(b: b)
            p.ws()
            guard p.value(depth: 0) else { return p.i }
            p.ws()
            return p.i == b.count ? nil : p.i
        }
    }

    struct Parser {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0
        var cur: UInt8? { i < b.count ? b[i] : nil }

        mutating func ws() { while let c = cur, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } }
        mutating func eat(_ c: UInt8) -> Bool { if cur == c { i += 1; return true }; return false }
        mutating func literal(_ s: StaticString) -> Bool {
            let n = s.utf8CodeUnitCount
            guard i + n <= b.count else { return false }
            for k in 0..<n where b[i + k] != s.utf8Start[k] { return false }
            i += n; return true
        }

        mutating func value(depth: Int) -> Bool {
            guard depth < 512, let c = cur else { return false }
            switch c {
            case UInt8(ascii: "{"):
                i += 1; ws()
                if eat(UInt8(ascii: "}")) { return true }
                while true {
                    ws(); guard string() else { return false }
                    ws(); guard eat(UInt8(ascii: ":")) else { return false }
                    ws(); guard value(depth: depth + 1) else { return false }
                    ws()
                    if eat(UInt8(ascii: "}")) { return true }
                    guard eat(UInt8(ascii: ",")) else { return false }
                }
            case UInt8(ascii: "["):
                i += 1; ws()
                if eat(UInt8(ascii: "]")) { return true }
                while true {
                    ws(); guard value(depth: depth + 1) else { return false }
                    ws()
                    if eat(UInt8(ascii: "]")) { return true }
                    guard eat(UInt8(ascii: ",")) else { return false }
                }
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func string() -> Bool {
            guard eat(UInt8(ascii: "\"")) else { return false }
            while let c = cur {
                switch c {
                case UInt8(ascii: "\""): i += 1; return true
                case UInt8(ascii: "\\"):
                    i += 1
                    guard let e = cur else { return false }
                    if e == UInt8(ascii: "u") {
                        i += 1
                        for _ in 0..<4 { guard let h = cur, isHex(h) else { return false }; i += 1 }
                    } else {
                        guard [UInt8]("\"\\/bfnrt".utf8).contains(e) else { return false }
                        i += 1
                    }
                case 0..<0x20: return false
                default:
                    guard utf8Scalar() else { return false }
                }
            }
            return false
        }

        /// One UTF-8 encoded scalar, well formed (no overlongs, surrogates or > U+10FFFF).
        mutating func utf8Scalar() -> Bool {
            let c = b[i]
            if c < 0x80 { i += 1; return true }
            let n: Int, lo: UInt8, hi: UInt8
            switch c {
            case 0xC2...0xDF: n = 1; lo = 0x80; hi = 0xBF
            case 0xE0: n = 2; lo = 0xA0; hi = 0xBF
            case 0xED: n = 2; lo = 0x80; hi = 0x9F
            case 0xE1...0xEF: n = 2; lo = 0x80; hi = 0xBF
            case 0xF0: n = 3; lo = 0x90; hi = 0xBF
            case 0xF4: n = 3; lo = 0x80; hi = 0x8F
            case 0xF1...0xF3: n = 3; lo = 0x80; hi = 0xBF
            default: return false
            }
            guard i + n < b.count, b[i + 1] >= lo, b[i + 1] <= hi else { return false }
            if n >= 2 { for k in 2...n { guard b[i + k] & 0xC0 == 0x80 else { return false } } }
            i += n + 1
            return true
        }

        mutating func number() -> Bool {
            _ = eat(UInt8(ascii: "-"))
            guard let d = cur, isDigit(d) else { return false }
            i += 1
            if d != UInt8(ascii: "0") { while let c = cur, isDigit(c) { i += 1 } }
            if eat(UInt8(ascii: ".")) {
                guard let c = cur, isDigit(c) else { return false }
                while let c = cur, isDigit(c) { i += 1 }
            }
            if cur == UInt8(ascii: "e") || cur == UInt8(ascii: "E") {
                i += 1
                if cur == UInt8(ascii: "+") || cur == UInt8(ascii: "-") { i += 1 }
                guard let c = cur, isDigit(c) else { return false }
                while let c = cur, isDigit(c) { i += 1 }
            }
            return true
        }

        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        func isHex(_ c: UInt8) -> Bool { isDigit(c) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66) }
    }
}
