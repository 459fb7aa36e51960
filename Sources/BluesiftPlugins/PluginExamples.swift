import BluesiftWire

/// The examples inside a plugin, run by `bluesift plugins test`: each frame must decode to
/// the expected message, fields (a subset) and checksum verdict, and frames with a good
/// checksum must encode back to the same bytes.
public struct ExampleResult: Sendable {
    public var line: Int
    public var hex: String
    public var problems: [String]
    public var passed: Bool { problems.isEmpty }
}

extension Plugin {
    public func runExamples() -> [ExampleResult] {
        examples.map { ex in
            var problems: [String] = []
            let d = decode(ex.bytes)
            if let e = d.error { problems.append("decode error: \(e)") }
            if let m = ex.message, m != d.message { problems.append("message \(d.message), expected \(m)") }
            for f in ex.fields {
                guard let got = d[f.name] else { problems.append("no field '\(f.name)'"); continue }
                if !Self.matches(f.value, got) { problems.append("\(f.name) = \(got), expected \(f.value)") }
            }
            if let c = ex.checksum, c != d.checksum {
                problems.append("checksum \(d.checksum?.rawValue ?? "none"), expected \(c.rawValue)")
            }
            if d.error == nil && d.checksum != .bad {
                do {
                    let again = try encode(d)
                    if again != ex.bytes { problems.append("encodes to \(Hex.string(again, separator: " "))") }
                } catch {
                    problems.append("encode: \(error)")
                }
            }
            return ExampleResult(line: ex.line, hex: Hex.string(ex.bytes, separator: " "), problems: problems)
        }
    }

    /// Expected (from YAML) vs decoded: hex strings match bytes; objects match as subsets.
    static func matches(_ expected: PluginValue, _ got: PluginValue) -> Bool {
        switch (expected, got) {
        case (.string(let s), .bytes(let b)): return Hex.parse(s) == b
        case (.list(let x), .list(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { matches($0, $1) }
        case (.object(let x), .object):
            return x.allSatisfy { f in got[f.name].map { matches(f.value, $0) } ?? false }
        case (.int(let v), .string(let s)): return parseIntegerLiteral(s) == v
        default: return expected == got
        }
    }
}
