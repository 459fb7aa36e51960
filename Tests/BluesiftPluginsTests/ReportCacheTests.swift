import Testing
import Foundation
@testable import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
@testable import BluesiftDissect
@testable import BluesiftPlugins

/// Whole advertising reports seen before take the result they gave (`PluginSet.advertisingReport`):
/// a report repeated by its advertiser is one result, shared; what the cache must not hide is
/// a plugin reading the RSSI, a rule or plugin reading a name that came later, another
/// advertiser, or other bytes.
@Suite struct ReportCacheTests {
    /// An HCI LE Advertising Report event (Core 6.0 Vol 4 Part E §7.7.65.2) with one report.
    static func event(type: UInt8 = 0x00, address: [UInt8], data: String, rssi: Int8) -> [UInt8] {
        let ad = Hex.parse(data.replacingOccurrences(of: " ", with: ""))!
        let params: [UInt8] = [0x02, 0x01, type, 0x00] + address + [UInt8(ad.count)] + ad + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(params.count)] + params
    }

    /// The analyzer's results for these events, in order (frame numbers from 1).
    static func results(_ plugins: [Plugin], _ events: [[UInt8]]) -> [PluginSet.Result?] {
        let analyzer = Analyzer()
        analyzer.plugins = PluginSet(plugins)
        var out: [PluginSet.Result?] = []
        for (i, e) in events.enumerated() {
            e.withUnsafeBytes { b in
                let r = CaptureRecord(frame: i + 1, timestamp: Timestamp(seconds: Int64(i)), direction: .received, kind: .event, bytes: b)
                out.append(analyzer.analyze(r).vendor)
            }
        }
        return out
    }

    static let a1: [UInt8] = [0xF8, 0xDB, 0xDD, 0x38, 0xC1, 0xA4], a2: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06]
    /// Two Govee H5075 structures in one report (23.2 °C; 46.8 %, then 46.9 %).
    static let two = "09ff88ec00038c146400 09ff88ec00038c156400"

    /// A report decoded into two messages is one result for every record repeating it (the
    /// record took a new copy each time); another advertiser or other bytes get their own.
    @Test func repeatedReportSharesOneResult() throws {
        let govee = try PluginLoader.compile(yaml: AdvertisingPluginTests.govee, path: "g.yaml")
        let r = Self.results(
            [govee],
            [
                Self.event(address: Self.a1, data: Self.two, rssi: -60), Self.event(address: Self.a1, data: Self.two, rssi: -70),
                Self.event(address: Self.a2, data: Self.two, rssi: -70),
                Self.event(address: Self.a1, data: "09ff88ec00038c146400", rssi: -60)
            ])
        let first = try #require(r[0]), again = try #require(r[1]), other = try #require(r[2]), one = try #require(r[3])
        #expect(first.messages.count == 2 && first.messages[0]["humidity"] != first.messages[1]["humidity"])
        #expect(first.sources.map(\.address) == [0xA4C1_38DD_DBF8, 0xA4C1_38DD_DBF8])
        #expect(again.identity == first.identity)
        #expect(other.identity != first.identity && other.sources.map(\.address) == [0x0605_0403_0201, 0x0605_0403_0201])
        #expect(one.identity != first.identity && one.messages.count == 1)
    }

    static let rssi = """
        id: loud
        match:
          - { company: 0x0059 }
        frame:
          - { id: v, type: u1 }
          - { id: rssi, context: _rssi, unit: dBm }
        """

    /// A plugin reading `_rssi` sees each record's RSSI though the report's bytes repeat.
    @Test func pluginReadingRSSISeesEachRecordsRSSI() throws {
        let p = try PluginLoader.compile(yaml: Self.rssi, path: "r.yaml")
        let r = Self.results(
            [p], [-60, -70, -70, -60].map { Self.event(address: Self.a1, data: "04ff590007", rssi: $0) })
        #expect(r.map { $0?.messages.first?["rssi"] } == [.int(-60), .int(-70), .int(-70), .int(-60)])
        #expect(r[1]?.identity == r[2]?.identity)
    }

    static let byName = """
        id: byname
        match:
          - { company: 0x0059, name: "Sensor.*" }
        frame:
          - { id: v, type: u1 }
        """

    /// A `name:` rule takes a report once its advertiser's name is known (from a scan
    /// response), though the same report did not match before.
    @Test func nameRuleTakesRepeatedReportOnceNameIsKnown() throws {
        let p = try PluginLoader.compile(yaml: Self.byName, path: "n.yaml")
        let adv = Self.event(address: Self.a1, data: "04ff590007", rssi: -60)
        // "Sensor 1" in a Complete Local Name, SCAN_RSP (event type 0x04).
        let scan = Self.event(type: 0x04, address: Self.a1, data: "0909" + "53656e736f722031", rssi: -60)
        let r = Self.results([p], [adv, adv, scan, adv, adv])
        #expect(r.map { $0 == nil } == [true, true, true, false, false])
        #expect(r[3]?.messages.first?["v"] == .uint(7))
    }

    /// `"{"frame":1,<vendor>}"` as a record's JSON writes the result, in a new writer.
    static func json(_ v: PluginSet.Result) -> String {
        var w = JSONFieldWriter()
        w.beginObject(""); w.int("frame", 1)
        VendorRendering.json(v, into: &w)
        w.endObject()
        return String(decoding: w.out, as: UTF8.self)
    }

    /// A result that records share keeps its JSON and text (`HeldRendering`): the next record
    /// appends them. The bytes are those the replay and the plain writer give.
    @Test func sharedResultKeepsItsRendering() throws {
        let govee = try PluginLoader.compile(yaml: AdvertisingPluginTests.govee, path: "g.yaml")
        let r = Self.results([govee], [Self.event(address: Self.a1, data: Self.two, rssi: -60), Self.event(address: Self.a1, data: Self.two, rssi: -70)])
        let v = try #require(r[1])
        let held = try #require(v.held)
        #expect(held.json.isEmpty && !held.textKnown)
        let first = Self.json(v)
        #expect(!held.json.isEmpty)
        #expect(Self.json(v) == first)
        var plain = JSONFieldWriter()
        plain.beginObject(""); plain.int("frame", 1); VendorRendering.write(v, into: &plain); plain.endObject()
        #expect(first == String(decoding: plain.out, as: UTF8.self))
        #expect(first.contains(#""frame":1,"vendor":{"plugin":""#) && first.contains(#""vendor_more":[{"plugin":""#))
        #expect(first.contains(#""address":"a4:c1:38:dd:db:f8"}"#))
        let text = FrameText(color: false, verbose: false)
        var a: [UInt8] = [], b: [UInt8] = []
        text.writeVendorSummary(v, into: &a)
        #expect(held.textKnown)
        text.writeVendorSummary(v, into: &b)
        #expect(a == b && String(decoding: a, as: UTF8.self) == VendorRendering.summary(v))
    }

    /// A result changed in place (no other holder) drops what writers kept: the next record
    /// shows the change, not the bytes kept before it.
    @Test func changedResultDropsItsRendering() throws {
        let govee = try PluginLoader.compile(yaml: AdvertisingPluginTests.govee, path: "g.yaml")
        let v = try #require(Self.results([govee], [Self.event(address: Self.a1, data: Self.two, rssi: -60)])[0])
        var x = PluginSet.Result(advertising: v.plugin, target: v.sources[0].target)
        x.messages = v.messages; x.sources = v.sources
        x.hold()
        let two = Self.json(x)
        #expect(two.contains("vendor_more") && x.held?.json.isEmpty == false)
        x.messages.removeLast(); x.sources.removeLast()
        #expect(x.held == nil)
        let one = Self.json(x)
        #expect(!one.contains("vendor_more") && one.contains(#""frame":1,"vendor":{"plugin":""#))
    }

    /// Reports of 1 to 40 bytes that differ only in their last byte are different reports
    /// (the hash reads a tail by overlapping words; the compare too).
    @Test func reportsDifferingInTheLastByteAreTwo() {
        var set = ReportCache()
        for n in 1...40 {
            let x = [UInt8](repeating: 0x5A, count: n - 1) + [1], y = [UInt8](repeating: 0x5A, count: n - 1) + [2]
            let (a, c) = ReportCache.key(address: UInt64(n), addressType: 1, pdu: 0)
            x.withUnsafeBytes { x in
                let (e, h) = set.find(a, c, x)
                #expect(e == -1)
                set.insert(a, c, h, x, ReportCache.Entry(hash: 0, a: 0, c: 0, at: 0, count: 0, hasName: false, rssiDependent: false, rssi: 0, nameDependent: false), nil)
                #expect(set.find(a, c, x).entry == set.entries.count - 1)
            }
            y.withUnsafeBytes { y in #expect(set.find(a, c, y).entry == -1, "\(n) bytes") }
        }
    }
}
