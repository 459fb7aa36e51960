import Testing
import BluesiftCapture
import BluesiftDissect

@Suite struct TimeFormatTests {
    static func text(_ t: Timestamp, _ cache: inout TimeFormat.RFC3339Cache?) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: TimeFormat.rfc3339MaxCount) { b in
            let n =
                cache == nil
                ? TimeFormat.rfc3339(t, to: b.baseAddress!)
                : TimeFormat.rfc3339(t, to: b.baseAddress!, cache: &cache!)
            return String(decoding: UnsafeBufferPointer(rebasing: b[..<n]), as: UTF8.self)
        }
    }

    @Test func knownInstants() {
        var none: TimeFormat.RFC3339Cache? = nil
        #expect(Self.text(Timestamp(seconds: 0), &none) == "1970-01-01T00:00:00.000000Z")
        // lightctl frame 1 (as `bluesift info` prints it)
        #expect(Self.text(Timestamp(seconds: 1_766_484_759, nanoseconds: 376_322_000), &none) == "2025-12-23T10:12:39.376322Z")
        #expect(Self.text(Timestamp(seconds: -1, nanoseconds: 999_999_000), &none) == "1969-12-31T23:59:59.999999Z")
    }

    /// The cached form writes the same bytes as the plain one, through second and day
    /// boundaries, repeats, backwards steps, and years before 0 and after 9999.
    @Test func cacheWritesTheSameBytes() {
        var seconds: [Int64] = [0, 0, 1, 1, 86_399, 86_400, 86_400, 5, 1_766_484_759, 1_766_484_759, 1_766_484_760]
        seconds += [-1, -1, -86_401, -62_167_219_201, -62_167_219_200, 253_402_300_799, 253_402_300_800, .max / 4, .min / 4]
        var cache: TimeFormat.RFC3339Cache? = TimeFormat.RFC3339Cache()
        var none: TimeFormat.RFC3339Cache? = nil
        for (i, s) in seconds.enumerated() {
            let t = Timestamp(seconds: s, nanoseconds: Int32(i * 37_123_000 % 1_000_000_000))
            let plain = Self.text(t, &none)
            #expect(Self.text(t, &cache) == plain, "seconds \(s)")
        }
        #expect(Self.text(Timestamp(seconds: 1, nanoseconds: 5_000), &cache) == "1970-01-01T00:00:01.000005Z")
    }
}
