import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Issue 26: the layer registry. Each layer's bit, key, group and specificity come from
/// `FrameLayer` alone; a real record's layers and JSON members follow it.
@Suite struct FrameLayerTests {
    @Test func registryIsConsistent() {
        let keys = FrameLayer.allCases.map(\.key.description)
        // The built-in layers, then Classic (the first family of Protocols.all), then the other
        // listed families (not named here: adding one to the list does not edit this test), note last.
        let shared = ProtocolRegistry.shared
        #expect(Array(keys.prefix(11)) == ["hci", "ll", "adv", "l2cap", "att", "smp", "sdp", "rfcomm", "hfp", "avdtp", "avrcp"])
        #expect(keys.last == "note" && keys.count == 7 + shared.layers.count)
        #expect(Set(FrameLayer.allCases.map(\.bit.rawValue)).count == FrameLayer.allCases.count)
        #expect(FrameLayer.names == Set(keys + ["classic"] + shared.layers.compactMap(\.spec.group)))
        #expect(FrameLayer.layers(named: "classic") == .anyClassic)
        #expect(FrameLayer.layers(named: "hfp") == DecodedFrame.Layers(.hfp))
        #expect(FrameLayer.layers(named: "gatt") == nil)
        // The most specific layer names a record: ATT over L2CAP over HCI, AT lines over RFCOMM,
        // an advertising PDU over its LL packet, a note over the HCI record it explains.
        #expect(FrameLayer.mostSpecific(DecodedFrame.Layers(.hci, .l2cap, .att)) == .att)
        #expect(FrameLayer.mostSpecific(DecodedFrame.Layers(.hci, .l2cap, .rfcomm, .hfp)) == .hfp)
        #expect(FrameLayer.mostSpecific(DecodedFrame.Layers(.ll, .adv)) == .adv)
        #expect(FrameLayer.mostSpecific(DecodedFrame.Layers(.hci, .note)) == .note)
        #expect(FrameLayer.mostSpecific([]) == nil)
        // `info` counts Classic layers as one "classic", HFP not again (it rides on RFCOMM).
        #expect(
            Array(FrameLayer.allCases.compactMap(\.countedAs).prefix(10)) == [
                "hci", "ll", "adv", "l2cap", "att", "smp",
                "classic", "classic", "classic", "classic"
            ])
        var seen: [FrameLayer] = []
        DecodedFrame.Layers(.note, .hci, .att).forEach { seen.append($0) }
        #expect(seen == [.hci, .att, .note])
    }

    /// classic_a2dp_hfp.btsnoop frame 200 (RFCOMM UIH carrying AT+BRSF=694), the first AT line: rfcomm and hfp bits, and
    /// the JSON members in registry order.
    @Test func rfcommRecordWithATLines() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Captures/classic_a2dp_hfp.btsnoop").path
        let reader = try CaptureFile.open(path: path)
        let d = ProtocolDecoder()
        var f = DecodedFrame(record: .empty)
        var found: (Int, DecodedFrame.Layers, String, String)?
        while let r = reader.next() {
            d.decode(r, into: &f)
            guard found == nil, f.layers.contains(.hfp) else { continue }
            var w = JSONFieldWriter(capacity: 1024)
            w.beginTopLevel()
            f.layers.forEach { $0.describe(f, into: &w) }
            w.endTopLevel()
            found = (r.frame, f.layers, FrameLayer.hfp.name(f), String(decoding: w.out, as: UTF8.self))
        }
        let (frame, layers, name, json) = try #require(found)
        #expect(layers == DecodedFrame.Layers(.hci, .l2cap, .rfcomm, .hfp))
        #expect(frame == 200)
        #expect(name == "AT+BRSF")
        let keys = ["\"hci\":", "\"l2cap\":", "\"rfcomm\":", "\"hfp\":"].map { json.range(of: $0)?.lowerBound }
        #expect(keys.allSatisfy { $0 != nil })
        #expect(keys.compactMap { $0 } == keys.compactMap { $0 }.sorted())
    }
}
