import Testing
@testable import BluesiftWire

/// The JSON writer's fast paths (word-at-a-time escape scan, bit-register container stack)
/// must write exactly what the byte-by-byte rules say.
struct JSONFieldWriterTests {
    func json(_ body: (inout JSONFieldWriter) -> Void) -> String {
        var w = JSONFieldWriter(capacity: 8) // small: growth is exercised too
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
            for _ in 0..<70 { w.beginArray("a"); w.int("", 1); w.beginObject(""); w.int("x", 2) }
            for _ in 0..<70 { w.endObject(); w.int("", 3); w.endArray() }
        }
        let unit = #""a":[1,{"x":2,"#
        var expected = "{" + String(repeating: unit, count: 70)
        expected.removeLast() // the innermost object has no further member
        expected += String(repeating: "},3]", count: 70) + "}"
        #expect(out == expected)
    }

    @Test func timestampsDecimalsAndHex() {
        #expect(
            json { w in
                w.uint("u", UInt64.max); w.int("i", Int.min); w.int("z", 0)
                w.hex("h", [0x00, 0xAB, 0xFF]); w.bool("b", false); w.null("n")
            } == #"{"u":18446744073709551615,"i":-9223372036854775808,"z":0,"h":"00abff","b":false,"n":null}"#)
    }
}

/// Integers written two digits at a time match Swift's own decimal text.
@Test func decimalsAtEveryLength() {
    var values: [Int] = [
        0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 9999, 10000, 12345, 65535, 99999, 100000,
        1_655_586, Int.max, Int.min, Int.min + 1, -1, -9, -10, -87, -100, -127
    ]
    var p = 1
    for _ in 0..<18 { p *= 10; values += [p - 1, p, p + 1, -p] }
    let w = JSONFieldWriter(capacity: 16)
    w.beginTopLevel(); w.beginArray("v")
    for v in values { w.int("", v) }
    w.uint("", UInt64.max)
    w.endArray(); w.endTopLevel()
    let expected = "{\"v\":[" + values.map(String.init).joined(separator: ",") + ",\(UInt64.max)]}"
    #expect(String(decoding: w.out, as: UTF8.self) == expected)
}

/// `replaying(_:_:_:)` replays earlier renderings of the same tag and source bytes.
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
                    w.replaying(.gattNames, p) { w in
                        calls += 1; w.beginArray("data"); members(&w, p); w.endArray()
                    }
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
        #expect(plainCalls == 7 && cachedCalls == 4) // [2,1,6] and [] rendered once each
    }

    /// Thousands of distinct sources (the table empties itself when half full) and one
    /// rendering too large to keep: still the same output.
    @Test func fullTableAndLargeRenderings() {
        var sources: [[UInt8]] = (0..<5000).map { i in [UInt8(i & 0xFF), UInt8(i >> 8), 0x55] }
        sources += sources.suffix(300) // kept since the last emptying: replayed
        sources.append([UInt8](repeating: 0xAB, count: 4000)) // ~40 kB of JSON
        sources.append([UInt8](repeating: 0xAB, count: 4000))
        let (plain, _) = Self.render(sources, cached: false)
        let (cached, calls) = Self.render(sources, cached: true)
        #expect(cached == plain)
        #expect(calls == 5000 + 2) // the large one is rendered both times
    }

    /// The same source under another tag, at the start of an object (no comma), after a
    /// member, and inside an array (no keys): each is its own rendering.
    @Test func tagAndWriterStateArePartOfTheKey() {
        let src: [UInt8] = [1, 2]
        func run(_ cached: Bool) -> String {
            var w = JSONFieldWriter(capacity: 64)
            src.withUnsafeBytes { p in
                func fields(_ w: inout JSONFieldWriter, _ tag: UInt8) {
                    let body: (inout JSONFieldWriter) -> Void = { w in
                        w.int("a", Int(tag)); w.hex("b", p)
                    }
                    if cached { w.replaying(tag == 1 ? .advertisingHead : .advertisingTail, p, body) } else { body(&w) }
                }
                w.beginTopLevel()
                w.beginObject("first"); fields(&w, 1); w.endObject()
                w.beginObject("second"); w.int("x", 0); fields(&w, 1); fields(&w, 2); w.endObject()
                w.beginArray("list"); fields(&w, 1); fields(&w, 1); w.endArray()
                w.beginObject("again"); fields(&w, 1); w.endObject()
                w.endTopLevel()
            }
            return String(decoding: w.out, as: UTF8.self)
        }
        let plain = run(false)
        #expect(plain == #"{"first":{"a":1,"b":"0102"},"second":{"x":0,"a":1,"b":"0102","a":2,"b":"0102"},"list":[1,"0102",1,"0102"],"again":{"a":1,"b":"0102"}}"#)
        #expect(run(true) == plain)
    }

    /// A replayed run may leave containers open (an object, an array, an object in it): the
    /// replay reopens them, so what follows gets the same commas and closes the same way.
    @Test func runsThatLeaveContainersOpen() {
        func run(_ cached: Bool) -> String {
            var w = JSONFieldWriter(capacity: 64)
            for i in 0..<3 {
                withUnsafeBytes(of: UInt8(i % 2)) { key in
                    w.beginTopLevel()
                    w.int("n", i)
                    let body: (inout JSONFieldWriter) -> Void = { w in
                        w.string("kind", key[0] == 0 ? "even" : "odd")
                        w.beginObject("adv"); w.int("op", 13); w.beginArray("reports"); w.beginObject(""); w.int("type", Int(key[0]))
                    }
                    if cached { w.replaying(.advertisingEvent, key, body) } else { body(&w) }
                    w.int("rssi", -40 - i)
                    w.endObject(); w.beginObject(""); w.int("type", 9); w.endObject()
                    w.endArray(); w.endObject()
                    w.bool("last", true)
                    w.endTopLevel(); w.newline()
                }
            }
            return String(decoding: w.out, as: UTF8.self)
        }
        let plain = run(false)
        #expect(plain.hasPrefix(#"{"n":0,"kind":"even","adv":{"op":13,"reports":[{"type":0,"rssi":-40},{"type":9}]},"last":true}"#))
        #expect(run(true) == plain)
    }
}
