/// CSV fields (RFC 4180), quoted once here for every CSV output (dump, frames, stats).
public enum CSV {
    /// A field holding a comma, a quote or a line break (LF or CR) is quoted, quotes doubled.
    public static func quote(_ s: String) -> String {
        // By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n".
        guard s.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        var out = "\""
        for c in s {
            if c == "\"" { out += "\"\"" } else { out.append(c) }
        }
        return out + "\""
    }
}
