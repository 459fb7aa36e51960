import Testing
@testable import BluesiftWire

/// The JSON writer's fast paths (word-at-a-time escape scan, bit-register container stack)
/// must write exactly what the byte-by-byte rules say.
struct JSONFieldWriterTests {
    func json(_ body: (inout JSONFieldWriter) -> Void) -> String {
        var w = JSONFieldWriter(capacity: 8)  // small: growth is exercised too
        w.beginTopLevel(); body(&w); w.endTopLevel()
        return String(decoding: w.out, as: UTF8.self)
    }

    @Test func escapesInLongStringsAtEveryPosition() {
        // A quote, backslash or control byte at each offset of a 20-byte string, on both
        // sides of the 8-byte word boundaries.
        for (c, escaped) in [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{1}", #"\u0001"#)] {
            for i in 0..<20 {
                var s = String(repeating: "a", count: 20)
                s.replaceSubrange(s.index(s.startIndex, offsetBy: i)...s.index(s.startIndex, offsetBy: i), with: c)
                let expected = String(repeating: "a", count: i) + escaped + String(repeating: "a", count: 19 - i)
                #expect(json { $0.string("k", s) } == #"{"k":""# + expected + #""}"#)
            }
        }
        // Bytes above 0x7F, and 0x20, 0x21, 0x23 next to the escaped ones, pass unchanged.
        #expect(json { $0.string("k", "é !#~ ünïcødé 0123456789") } == #"{"k":"é !#~ ünïcødé 0123456789"}"#)
    }

    @Test func nestsDeeperThanTheRegisters() {
        let out = json { w in
            for _ in 0..<70 { w.beginArray("a"); w.int("", 1); w.beginObject("") ; w.int("x", 2) }
            for _ in 0..<70 { w.endObject(); w.int("", 3); w.endArray() }
        }
        let unit = #""a":[1,{"x":2,"#
        var expected = "{" + String(repeating: unit, count: 70)
        expected.removeLast()  // the innermost object has no further member
        expected += String(repeating: "},3]", count: 70) + "}"
        #expect(out == expected)
    }

    @Test func timestampsDecimalsAndHex() {
        #expect(json { w in
            w.uint("u", UInt64.max); w.int("i", Int.min); w.int("z", 0)
            w.hex("h", [0x00, 0xAB, 0xFF]); w.bool("b", false); w.null("n")
        } == #"{"u":18446744073709551615,"i":-9223372036854775808,"z":0,"h":"00abff","b":false,"n":null}"#)
    }
}

/// `array(_:renderedFrom:_:)` replays earlier renderings of the same source bytes.
@Suite struct JSONFragmentCacheTests {
    /// Members derived from the bytes only: one number per byte and a hex copy.
    static func members(_ w: inout JSONFieldWriter, _ src: UnsafeRawBufferPointer) {
        for b in src { w.beginObject(""); w.int("v", Int(b)); w.endObject() }
        w.hex("", src)
    }

    static func render(_ sources: [[UInt8]], cached: Bool) -> (String, Int) {
        var w = JSONFieldWriter(capacity: 64)
        var calls = 0
        w.beginTopLevel()
        w.beginArray("all")
        for s in sources {
            s.withUnsafeBytes { p in
                w.beginObject("")
                w.int("n", s.count)
                if cached {
                    w.array("data", renderedFrom: p) { w in calls += 1; members(&w, p) }
                } else {
                    w.beginArray("data"); calls += 1; members(&w, p); w.endArray()
                }
                w.endObject()
            }
        }
        w.endArray()
        w.endTopLevel()
        return (String(decoding: w.out, as: UTF8.self), calls)
    }

    @Test func repeatsAreReplayedAndTheOutputIsUnchanged() {
        let sources: [[UInt8]] = [[2, 1, 6], [], [2, 1, 6], [2, 1, 7], [], [2, 1, 6, 0, 0, 0, 0, 0, 0, 9], [2, 1, 6]]
        let (plain, plainCalls) = Self.render(sources, cached: false)
        let (cached, cachedCalls) = Self.render(sources, cached: true)
        #expect(cached == plain)
        #expect(plain.hasPrefix(#"{"all":[{"n":3,"data":[{"v":2},{"v":1},{"v":6},"020106"]},{"n":0,"data":[""]}"#))
        #expect(plainCalls == 7 && cachedCalls == 4)   // [2,1,6] and [] rendered once each
    }

    /// Thousands of distinct sources (the table empties itself when half full) and one
    /// rendering too large to keep: still the same output.
    @Test func fullTableAndLargeRenderings() {
        var sources: [[UInt8]] = (0..<5000).map { i in [UInt8(i & 0xFF), UInt8(i >> 8), 0x55] }
        sources += sources.suffix(300)   // kept since the last emptying: replayed
        sources.append([UInt8](repeating: 0xAB, count: 4000))   // ~40 kB of JSON
        sources.append([UInt8](repeating: 0xAB, count: 4000))
        let (plain, _) = Self.render(sources, cached: false)
        let (cached, calls) = Self.render(sources, cached: true)
        #expect(cached == plain)
        #expect(calls == 5000 + 2)   // the large one is rendered both times
    }
}
