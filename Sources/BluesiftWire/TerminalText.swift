/// Text from the air (device names, strings, vendor text, notes) may hold control
/// characters and terminal escape sequences: printed raw, `ESC ] 0 ; … BEL` retitles the
/// terminal, `ESC [ 2 J` clears it, a carriage return overwrites the line, U+202E reverses
/// what follows. Text output passes every line through `escape(_:)`.
///
/// The escapes are also JSON escapes (`\n`, `\r`, `\t`, `\u001b`), so a JSON line that
/// goes through the same path stays valid JSON with the same value: JSON strings never
/// hold raw C0 characters, and DEL, C1 controls and bidi overrides escaped as `\uXXXX` mean
/// the same character.
public enum TerminalText {
    /// True for what `escape` rewrites: C0 controls, DEL, C1 controls (U+0080–U+009F; U+009B
    /// is CSI to some terminals), and the bidirectional embedding/override/isolate marks.
    @inline(__always) static func unsafe(_ v: UInt32) -> Bool {
        v < 0x20 || (v >= 0x7F && v <= 0x9F) || (v >= 0x202A && v <= 0x202E) || (v >= 0x2066 && v <= 0x2069)
    }

    /// `s` with every unsafe character escaped; `s` itself (no copy) when there is none.
    public static func escape(_ s: String) -> String {
        var clean = true
        for b in s.utf8 where b < 0x20 || b == 0x7F || b == 0xC2 || b == 0xE2 {
            // 0xC2 leads U+0080–U+00BF, 0xE2 leads U+2000–U+2FFF: look closer.
            clean = false
            break
        }
        if clean { return s }
        if !s.unicodeScalars.contains(where: { unsafe($0.value) }) { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        for u in s.unicodeScalars {
            guard unsafe(u.value) else { out.unicodeScalars.append(u); continue }
            switch u.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            default:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - h.count)) + h
            }
        }
        return out
    }
}
