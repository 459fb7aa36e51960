import BluesiftCapture

/// RFC 3339 formatting without Foundation (it is on the per-record path).
public enum TimeFormat {
    /// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(_ days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        return (m <= 2 ? y + 1 : y, m, d)
    }

    /// `v` in exactly `width` digits (its lowest ones) at `p`; returns the next position.
    @inline(__always)
    static func digits(_ p: UnsafeMutablePointer<UInt8>, _ v: Int64, _ width: Int) -> UnsafeMutablePointer<UInt8> {
        var x = v
        var i = width
        while i > 0 { i -= 1; p[i] = 0x30 + UInt8(x % 10); x /= 10 }
        return p + width
    }

    /// Longest ``rfc3339(_:to:)`` output: a sign, then 27 bytes.
    public static let rfc3339MaxCount = 28

    /// `2024-05-01T12:34:56.123456Z` written at `p` (room for ``rfc3339MaxCount``); returns
    /// the byte count. Pointer-based so the JSON writer needs one capacity check per record.
    public static func rfc3339(_ t: Timestamp, to p: UnsafeMutablePointer<UInt8>) -> Int {
        let t = Timestamp(seconds: t.seconds, overflowingNanoseconds: Int64(t.nanoseconds))
        var days = t.seconds / 86_400
        var secs = t.seconds % 86_400
        if secs < 0 { secs += 86_400; days -= 1 }
        let (y, m, d) = civil(days)
        var q = p
        if y < 0 { q.pointee = UInt8(ascii: "-"); q += 1 }
        q = digits(q, abs(y), 4); q.pointee = UInt8(ascii: "-")
        q = digits(q + 1, Int64(m), 2); q.pointee = UInt8(ascii: "-")
        q = digits(q + 1, Int64(d), 2); q.pointee = UInt8(ascii: "T")
        q = timeOfDay(secs, Int64(t.nanoseconds), to: q + 1); q.pointee = UInt8(ascii: "Z")
        return q + 1 - p
    }

    /// The text of the last second written, up to its ".": records come many to a second,
    /// so most timestamps only need their six fraction digits (civil date and nine divisions
    /// saved per JSON record).
    public struct RFC3339Cache {
        var seconds = Int64.min
        var count = 0
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0) // up to 21 bytes: sign, date, "T", time, "."
        public init() {}
    }

    /// ``rfc3339(_:to:)`` through `cache`; the same bytes.
    public static func rfc3339(_ t: Timestamp, to p: UnsafeMutablePointer<UInt8>, cache: inout RFC3339Cache) -> Int {
        let t = Timestamp(seconds: t.seconds, overflowingNanoseconds: Int64(t.nanoseconds))
        if t.seconds != cache.seconds {
            let n = rfc3339(t, to: p)
            cache.seconds = t.seconds
            cache.count = n - 7
            withUnsafeMutableBytes(of: &cache.text) { $0.baseAddress!.copyMemory(from: p, byteCount: n - 7) }
            return n
        }
        let k = cache.count
        withUnsafeBytes(of: cache.text) { UnsafeMutableRawPointer(p).copyMemory(from: $0.baseAddress!, byteCount: k) }
        digits(p + k, Int64(t.nanoseconds) / 1000, 6).pointee = UInt8(ascii: "Z")
        return k + 7
    }

    /// `hh:mm:ss.uuuuuu` (15 bytes) at `p`; returns the next position.
    @inline(__always)
    static func timeOfDay(_ secs: Int64, _ nanoseconds: Int64, to p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var q = digits(p, secs / 3600, 2); q.pointee = UInt8(ascii: ":")
        q = digits(q + 1, (secs / 60) % 60, 2); q.pointee = UInt8(ascii: ":")
        q = digits(q + 1, secs % 60, 2); q.pointee = UInt8(ascii: ".")
        return digits(q + 1, nanoseconds / 1000, 6)
    }

    /// `2024-05-01T12:34:56.123456Z`
    public static func rfc3339(_ t: Timestamp, into out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: rfc3339MaxCount) { buf in
            let n = rfc3339(t, to: buf.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[..<n]))
        }
    }

    public static func rfc3339(_ t: Timestamp) -> String {
        var out: [UInt8] = []
        rfc3339(t, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `12:34:56.123456`, for the summary line.
    public static func timeOfDay(_ t: Timestamp, into out: inout [UInt8]) {
        let t = Timestamp(seconds: t.seconds, overflowingNanoseconds: Int64(t.nanoseconds))
        var secs = t.seconds % 86_400
        if secs < 0 { secs += 86_400 }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 15) { buf in
            _ = timeOfDay(secs, Int64(t.nanoseconds), to: buf.baseAddress!)
            out.append(contentsOf: buf)
        }
    }

    /// A latency, the same in dump, stats and report: µs below 10 ms, whole ms from there
    /// ("892 µs", "97 ms"). A clock that only has milliseconds (some PacketLogger files)
    /// cannot tell 0 from 999 µs: "<1 ms", and whole ms throughout (rounded: stats' median
    /// and p95 are estimates that fall between ticks).
    public static func latency(microseconds us: Int64, millisecondClock: Bool = false) -> String {
        if millisecondClock {
            let ms = (us + 500) / 1000
            return ms == 0 ? "<1 ms" : "\(ms) ms"
        }
        return us < 10_000 ? "\(us) µs" : "\(us / 1000) ms"
    }

    /// Human duration: "2 h 03 min", "12.345 s".
    public static func duration(microseconds us: Int64) -> String {
        let s = Double(us) / 1e6
        if s < 60 { return String(format3(s)) + " s" }
        let total = us / 1_000_000
        if total < 3600 { return "\(total / 60) min \(pad2(total % 60)) s" }
        return "\(total / 3600) h \(pad2((total / 60) % 60)) min"
    }

    static func pad2(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }

    static func format3(_ v: Double) -> String {
        let ms = Int64((v * 1000).rounded())
        let frac = ms % 1000
        return "\(ms / 1000)." + (frac < 10 ? "00" : frac < 100 ? "0" : "") + "\(frac)"
    }
}
