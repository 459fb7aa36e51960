/// Where something is in a JSON text, for `FILE:LINE:COLUMN: message` errors: the first
/// syntax error, or the value at a path (a key or index list, as a decoder reports it).
/// A small recursive-descent scan over the bytes (RFC 8259); it builds nothing.
public enum JSONLocator {
    public enum Key: Hashable, Sendable, CustomStringConvertible {
        case key(String)
        case index(Int)
        public var description: String {
            switch self {
            case .key(let k): "." + k
            case .index(let i): "[\(i)]"
            }
        }
    }

    /// "devices[0].services[2].uuid"
    public static func text(_ path: [Key]) -> String {
        var s = path.map(\.description).joined()
        if s.hasPrefix(".") { s.removeFirst() }
        return s
    }

    /// The first syntax error: its byte offset and what was expected there.
    public static func syntaxError(_ bytes: [UInt8]) -> (offset: Int, message: String)? {
        var s = Scanner(b: bytes, target: nil)
        do throws(Failure) {
            s.space()
            try s.value([])
            s.space()
            if s.i < bytes.count { throw Failure(offset: s.i, message: "unexpected text after the JSON value") }
            return nil
        } catch {
            return (error.offset, error.message)
        }
    }

    /// Offset of the value at `path`, or of the deepest enclosing value that exists (a missing
    /// key points at its object).
    public static func offset(of path: [Key], in bytes: [UInt8]) -> Int? {
        var s = Scanner(b: bytes, target: path)
        s.space()
        _ = try? s.value([])
        return s.best?.offset
    }

    /// 1-based line and column (in bytes) of `offset`.
    public static func lineColumn(_ bytes: [UInt8], offset: Int) -> (line: Int, column: Int) {
        var line = 1, start = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A { line += 1; start = i + 1 }
        return (line, offset - start + 1)
    }

    struct Failure: Error { var offset: Int; var message: String }

    struct Scanner {
        let b: [UInt8]
        let target: [Key]?
        var i = 0
        /// The longest prefix of `target` found so far, and where its value starts.
        var best: (depth: Int, offset: Int)?

        init(b: [UInt8], target: [Key]?) { self.b = b; self.target = target }

        mutating func space() {
            while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        }

        func fail(_ m: String) -> Failure {
            Failure(offset: i, message: i < b.count ? m : "unexpected end of file (" + m + ")")
        }

        mutating func value(_ path: [Key]) throws(Failure) {
            if let t = target, path.count <= t.count, Array(t.prefix(path.count)) == path,
                path.count >= (best?.depth ?? -1)
            {
                best = (path.count, i)
            }
            guard i < b.count else { throw fail("expected a value") }
            switch b[i] {
            case UInt8(ascii: "{"):
                i += 1; space()
                if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return }
                while true {
                    space()
                    guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a key in double quotes") }
                    let k = try string()
                    space()
                    guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':' after the key") }
                    i += 1; space()
                    try value(path + [.key(k)])
                    space()
                    guard i < b.count else { throw fail("expected ',' or '}'") }
                    if b[i] == UInt8(ascii: ",") { i += 1; continue }
                    if b[i] == UInt8(ascii: "}") { i += 1; return }
                    throw fail("expected ',' or '}'")
                }
            case UInt8(ascii: "["):
                i += 1; space()
                if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return }
                var n = 0
                while true {
                    space()
                    try value(path + [.index(n)])
                    n += 1
                    space()
                    guard i < b.count else { throw fail("expected ',' or ']'") }
                    if b[i] == UInt8(ascii: ",") { i += 1; continue }
                    if b[i] == UInt8(ascii: "]") { i += 1; return }
                    throw fail("expected ',' or ']'")
                }
            case UInt8(ascii: "\""):
                _ = try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number()
            default:
                throw fail("expected a value (object, array, string, number, true, false or null)")
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            for c in word.utf8 {
                guard i < b.count, b[i] == c else { throw fail("expected \(word)") }
                i += 1
            }
        }

        mutating func number() throws(Failure) {
            if b[i] == UInt8(ascii: "-") { i += 1 }
            func digits(_ s: inout Scanner) -> Int {
                let start = s.i
                while s.i < s.b.count, s.b[s.i] >= 0x30 && s.b[s.i] <= 0x39 { s.i += 1 }
                return s.i - start
            }
            guard digits(&self) > 0 else { throw fail("expected a digit") }
            if i < b.count, b[i] == UInt8(ascii: ".") {
                i += 1
                guard digits(&self) > 0 else { throw fail("expected a digit after '.'") }
            }
            if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
                i += 1
                if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
                guard digits(&self) > 0 else { throw fail("expected a digit in the exponent") }
            }
        }

        /// A string at `i` (on its opening quote); its text (escapes kept as written, enough
        /// for keys).
        mutating func string() throws(Failure) -> String {
            i += 1
            let start = i
            while i < b.count {
                switch b[i] {
                case UInt8(ascii: "\""):
                    let s = String(decoding: b[start..<i], as: UTF8.self)
                    i += 1
                    return s
                case UInt8(ascii: "\\"):
                    i += 2
                case 0..<0x20:
                    throw fail("control character in a string (end the line with '\"'?)")
                default:
                    i += 1
                }
            }
            throw fail("unterminated string")
        }
    }
}
