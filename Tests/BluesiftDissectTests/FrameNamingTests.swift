import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftGATT
import BluesiftProtocols
@testable import BluesiftDissect

/// The GATT names of an ATT record are replayed by location and naming source; locations
/// that differ in anything shown must never share a rendering.
@Suite struct FrameNamingTests {
    static func render(_ a: AnalyzedFrame, _ writer: JSONFieldWriter) -> String {
        var w = writer
        let start = w.count
        w.beginObject("")
        FrameNaming.describe(a, into: &w)
        w.endObject()
        return String(decoding: w.out[start...], as: UTF8.self)
    }

    @Test func replayedNamesKeepEveryDifference() {
        let battery = BluetoothUUID(0x180F), level = BluetoothUUID(0x2A19), cccd = BluetoothUUID(0x2902)
        let vendor = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
        let base = GATTDatabase.Location(
            service: battery, characteristic: level, descriptor: nil,
            instance: 0, isDeclaration: false)
        var variants: [(GATTDatabase.Location, NamingSource?)] = [(base, .discovery)]
        func vary(_ by: NamingSource? = .discovery, _ change: (inout GATTDatabase.Location) -> Void) {
            var l = base; change(&l); variants.append((l, by))
        }
        vary { $0.service = vendor }; vary { $0.characteristic = nil }; vary { $0.characteristic = vendor }
        vary { $0.instance = 1 }; vary { $0.instance = 2 }; vary { $0.descriptor = cccd }
        vary { $0.descriptor = BluetoothUUID(high: 0, low: 0) } // a zero UUID is not "absent"
        vary(nil) { _ in }; vary(.imported) { _ in }
        let store = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        defer { store.deallocate() }
        let record = CaptureRecord(
            frame: 1, timestamp: Timestamp(seconds: 0), direction: .received,
            kind: .acl, bytes: UnsafeRawBufferPointer(store))
        let shared = JSONFieldWriter(capacity: 256)
        shared.beginTopLevel(); shared.beginArray("n")
        var seen = Set<String>()
        for (i, (loc, by)) in (variants + variants).enumerated() {
            var a = AnalyzedFrame(decoded: DecodedFrame(record: record))
            a.location = loc; a.namedBy = by
            let fresh = JSONFieldWriter(capacity: 256)
            fresh.beginTopLevel(); fresh.beginArray("n")
            let expected = Self.render(a, fresh)
            let replayed = Self.render(a, shared)
            #expect(replayed == (i == 0 ? expected : "," + expected), "variant \(i % variants.count)")
            seen.insert(expected)
        }
        #expect(seen.count == variants.count) // every variant renders differently
        #expect(seen.contains("{\"service\":\"180f\",\"service_name\":\"Battery Service\",\"characteristic\":\"2a19\",\"characteristic_name\":\"Battery Level\",\"instance\":1,\"named_by\":\"discovery\"}"))
    }
}
