import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
@testable import BluesiftPlugins
@testable import BluesiftDissect

/// The text summary line written as bytes (`FrameText.renderPlain`, issue 41) must be the line
/// the general String path writes (`renderLine`), byte for byte.
@Suite struct TextFastPathTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let shared = root.deletingLastPathComponent().appendingPathComponent("shared/captures").path

    static func captures(_ dir: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
        return e.compactMap { $0 as? String }.filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".json") && !$0.hasSuffix(".txt") && !$0.contains("LICENSE") }
            .map { dir + "/" + $0 }.filter {
                var d: ObjCBool = false; return FileManager.default.fileExists(atPath: $0, isDirectory: &d) && !d.boolValue
            }.sorted()
    }

    /// Lines compared and how many carried a vendor decode.
    static func compare(_ path: String, plugins: PluginSet?) -> (lines: Int, vendor: Int) {
        guard let reader = try? CaptureFile.open(path: path) else { return (0, 0) }
        let analyzer = Analyzer()
        analyzer.plugins = plugins
        let text = FrameText(color: false, verbose: false)
        var lines = 0, vendor = 0
        while let r = reader.next() {
            let a = analyzer.analyze(r)
            guard a.decoded.errors.isEmpty else { continue }
            var plain: [UInt8] = [], general: [UInt8] = []
            text.renderPlain(a, into: &plain)
            text.renderLine(a, into: &general)
            #expect(plain == general, "\(path) frame \(r.frame): \(String(decoding: plain, as: UTF8.self))")
            if plain != general { return (lines, vendor) }
            lines += 1
            if a.vendor != nil { vendor += 1 }
        }
        return (lines, vendor)
    }

    @Test func bundledCapturesWithAndWithoutPlugins() {
        let files = Self.captures(Self.root.appendingPathComponent("Captures").path)
        #expect(files.count >= 10)
        var lines = 0, vendor = 0
        for f in files {
            lines += Self.compare(f, plugins: nil).lines
            let p = Self.compare(f, plugins: PluginSet(PluginLoader.loadOnUse(directories: [Fixtures.pluginsDir]).plugins))
            lines += p.lines; vendor += p.vendor
        }
        #expect(lines > 2000)
        #expect(vendor > 0)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: shared), "needs ../shared/captures"))
    func sharedCapturesWithPlugins() {
        var lines = 0, vendor = 0
        let loaded = PluginLoader.loadOnUse(directories: [Fixtures.pluginsDir]).plugins
        for f in Self.captures(Self.shared) {
            let p = Self.compare(f, plugins: PluginSet(loaded))
            lines += p.lines; vendor += p.vendor
        }
        #expect(lines > 10000)
        #expect(vendor > 100)
    }

    /// An HCI LE Advertising Report of two reports: the first's name holds an escape and an
    /// invalid UTF-8 byte; the record is cut short of its original length.
    @Test func advertisingReportWithHostileNameAndTruncation() throws {
        // Subevent 0x02, 2 reports; ADV_IND, public, c0:ba:0d:00:00:01, 9 bytes of data, rssi -60.
        let name: [UInt8] = [0x50, 0x1B, 0x5B, 0x32, 0x4A, 0xFF] // "P", ESC [2J, an invalid byte
        let ad1: [UInt8] = [UInt8(name.count + 1), 0x09] + name
        let ad2: [UInt8] = [0x02, 0x01, 0x06]
        var p: [UInt8] = [0x3E, 0, 0x02, 0x02]
        p += [0x00, 0x00, 0x01, 0x00, 0x00, 0x0D, 0xBA, 0xC0, UInt8(ad1.count)] + ad1 + [0xC4]
        p += [0x00, 0x01, 0x02, 0x00, 0x00, 0x0D, 0xBA, 0xC0, UInt8(ad2.count)] + ad2 + [0xB0]
        p[1] = UInt8(p.count - 2)
        let bytes = p
        try bytes.withUnsafeBytes { buf in
            let r = CaptureRecord(
                frame: 1234567, timestamp: Timestamp(seconds: 1_700_000_000), direction: .received,
                kind: .event, bytes: buf, originalLength: bytes.count + 5)
            let a = Analyzer().analyze(r)
            try #require(a.decoded.errors.isEmpty)
            let text = FrameText(color: false, verbose: false)
            var plain: [UInt8] = [], general: [UInt8] = []
            text.renderPlain(a, into: &plain)
            text.renderLine(a, into: &general)
            let line = String(decoding: plain, as: UTF8.self)
            #expect(plain == general)
            #expect(
                line
                    == "1234567 22:13:20.000000 > LE Advertising Report ADV_IND c0:ba:0d:00:00:01 rssi=-60 name=P\\u001b[2J\u{FFFD} (+1 more) [truncated \(bytes.count)/\(bytes.count + 5)]\n"
            )
        }
    }

    /// Byte helpers against the String forms they replace.
    @Test func textBytesMatchStrings() {
        for v in [0, 7, 9, 10, 99, 100, -1, -9, -10, -128, 127, 1_234_567, Int.max, Int.min] {
            var b: [UInt8] = []
            b.appendDecimal(v)
            #expect(String(decoding: b, as: UTF8.self) == String(v))
        }
        for (v, w) in [(UInt64(0), 4), (0x40, 4), (0x1234_5, 4), (0xFF, 2), (0xABC, 2), (UInt64.max, 4)] {
            var b: [UInt8] = []
            b.appendHex(v, width: w)
            #expect(String(decoding: b, as: UTF8.self) == Hex.fixed(v, width: w))
        }
        for raw in [[0x41, 0x42], [0xC3, 0xA9], [0xFF, 0x41], [0xE2, 0x82]] as [[UInt8]] {
            var b: [UInt8] = []
            raw.withUnsafeBytes { b.appendDecodingUTF8($0) }
            #expect(b == Array(String(decoding: raw, as: UTF8.self).utf8))
        }
    }

    /// The escape check, eight bytes a step, against the byte test it replaces: every byte
    /// value at every position of a word and of the tail, from several starts, over a clean
    /// line (0x20, 0x7E, 0x80, 0xC3, 0xE1, 0xFF beside each other must not trip it).
    @Test func escapeCheckMatchesByteTest() {
        func naive(_ b: [UInt8], _ start: Int) -> Bool { b[start...].contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 } }
        let clean: [UInt8] = Array("ADV_IND c0:ba:0d rssi=-60 ".utf8) + [0x20, 0x7E, 0x80, 0xC3, 0xA9, 0xE1, 0xFF, 0x81, 0xC1, 0xE3, 0x7E, 0x21]
        var checked = 0, tripped = 0
        for start in [0, 1, 5, 13] {
            #expect(!FrameText.mayNeedEscape(clean, from: start))
            for at in start..<clean.count {
                for v in 0...255 {
                    var b = clean
                    b[at] = UInt8(v)
                    let want = naive(b, start)
                    #expect(FrameText.mayNeedEscape(b, from: start) == want, "start \(start) at \(at) byte \(v)")
                    checked += 1
                    if want { tripped += 1 }
                }
            }
        }
        #expect(FrameText.mayNeedEscape([], from: 0) == false)
        #expect(FrameText.mayNeedEscape(Array("x\u{1B}".utf8), from: 1))
        #expect(checked > 30_000 && tripped == checked / 256 * 35)
    }

    /// The vendor text kept per decode: a decode falling in a slot another held is written
    /// from its own message, not the one kept there.
    @Test func vendorTextSlotsKeepEachDecodeApart() {
        func result(_ id: UInt64, _ message: String) -> PluginSet.Result {
            var r = PluginSet.Result(advertising: "p", target: .company(1))
            r.messages = [
                DecodedMessage(
                    plugin: "p", message: message, fields: [], checksum: nil, checksumExpected: nil, checksumFound: nil,
                    header: [:], error: nil, bytes: [], replayID: id)
            ]
            return r
        }
        let text = FrameText(color: false, verbose: false)
        let slots = UInt64(FrameText.VendorTexts.slots)
        for (id, m) in [(UInt64(5), "first"), (5 + slots, "second"), (5, "third"), (0, "uncached"), (0, "other")] {
            var out: [UInt8] = []
            text.writeVendorSummary(result(id, m), into: &out)
            #expect(String(decoding: out, as: UTF8.self) == " p " + m)
        }
        // The same decode again is its kept text.
        var out: [UInt8] = []
        text.writeVendorSummary(result(5, "third"), into: &out)
        #expect(String(decoding: out, as: UTF8.self) == " p third")
    }
}
