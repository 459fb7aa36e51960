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
