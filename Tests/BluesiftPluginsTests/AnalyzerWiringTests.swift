import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols
import BluesiftGATT
import BluesiftDissect
import BluesiftPlugins

/// The dump path with a synthetic ATT frame (the protocol decoders are exercised elsewhere).
@Suite struct AnalyzerWiringTests {
    /// The band plugin plus a handle override for captures without discovery.
    static func plugins() throws -> PluginSet {
        var yaml = try String(contentsOfFile: Fixtures.pluginsDir + "/band.yaml", encoding: .utf8)
        yaml = yaml.replacingOccurrences(
            of: "    characteristic: 36f5\n    direction: write",
            with: "    characteristic: 36f5\n    handle: 0x0012\n    direction: write")
        return PluginSet([try PluginLoader.compile(yaml: yaml, path: "band.yaml")])
    }

    /// Runs `body` on an AnalyzedFrame for ATT PDU `att` (sent at `us` µs on connection 0x0040).
    static func frame<R>(_ att: [UInt8], us: Int64 = 1_000_000, frame: Int = 7, _ body: (inout AnalyzedFrame) -> R) -> R {
        att.withUnsafeBytes { p in
            let rec = CaptureRecord(frame: frame, timestamp: Timestamp(microseconds: us), direction: .sent, kind: .acl, bytes: p)
            var d = DecodedFrame(record: rec)
            d.connection = 0x0040
            d.set(ATTPDU(bytes: p))
            var a = AnalyzedFrame(decoded: d)
            return body(&a)
        }
    }

    static func json(_ a: AnalyzedFrame) -> String {
        var w = JSONFieldWriter(capacity: 4096)
        FrameJSON.write(a, into: &w)
        return String(decoding: w.out, as: UTF8.self)
    }

    static func text(_ a: AnalyzedFrame, verbose: Bool = false) -> String {
        var out: [UInt8] = []
        FrameText(color: false, verbose: verbose).render(a, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func handleOverrideNamesAndDecodesAWrite() throws {
        let analyzer = Analyzer()
        analyzer.plugins = try Self.plugins()
        // Write Command, handle 0x0012, band sport_count.
        Self.frame([0x52, 0x12, 0x00, 0xa5, 0x06, 0x03, 0x06, 0x14, 0xb2]) { a in
            analyzer.applyPlugins(&a)
            #expect(a.vendor?.messages.first?.message == "sport_count")
            #expect(a.namedBy == .plugin)
            #expect(a.location?.characteristic == BluetoothUUID(0x36f5))
            let j = Self.json(a)
            #expect(j.contains(#""named_by":"plugin:band""#))
            #expect(j.contains(#""vendor":{"plugin":"band","message":"sport_count","fields":{"month":6,"day":20},"checksum":"ok"}"#))
            #expect(Self.text(a).contains("band sport_count month=6 day=20 checksum ok"))
            #expect(Self.text(a, verbose: true).contains("message"))
        }
    }

    @Test func discoveredLocationAndReassemblyAcrossNotifications() throws {
        let analyzer = Analyzer()
        analyzer.plugins = try Self.plugins()
        var s = GATTDatabase.Service(start: 0x10, end: 0x20, uuid: BluetoothUUID(0xfee7), primary: true)
        s.characteristics = [GATTDatabase.Characteristic(handle: 0x15, valueHandle: 0x16, uuid: BluetoothUUID(0x36f6), properties: 0x10)]
        let loc = GATTDatabase(services: [s]).locate(0x16)
        let frame = Fixtures.bytes("a5 1e 84 01 00 05 00 3c 69 00 3d cd 00 3e 31 01 3f 95 01 40 f9 01 41 5d 02 42 c1 02 43 5f")
        Self.frame([0x1b, 0x16, 0x00] + frame[0..<20], us: 1_000_000) { a in
            a.location = loc; a.namedBy = .discovery
            analyzer.applyPlugins(&a)
            #expect(a.vendor?.messages.isEmpty == true)
            #expect(a.vendor?.pending == 20)
            #expect(Self.json(a).contains(#""vendor":{"plugin":"band","message":null,"pending":20,"need":30}"#))
            #expect(Self.text(a).contains("band (fragment: 20 of 30 bytes)"))
        }
        Self.frame([0x1b, 0x16, 0x00] + frame[20...], us: 1_007_500, frame: 8) { a in
            a.location = loc; a.namedBy = .discovery
            analyzer.applyPlugins(&a)
            #expect(a.vendor?.messages.first?.message == "sport_data_reply")
            #expect(a.namedBy == .discovery)
            #expect(Self.json(a).contains(#""named_by":"discovery""#))
        }
    }

    @Test func noMatchCostsNothingAndLeavesTheFrameAlone() throws {
        let analyzer = Analyzer()
        analyzer.plugins = try Self.plugins()
        // Notification on an unrelated handle, and a descriptor write.
        Self.frame([0x1b, 0x30, 0x00, 0x01]) { a in
            analyzer.applyPlugins(&a)
            #expect(a.vendor == nil)
            #expect(a.location == nil)
            #expect(!Self.json(a).contains("vendor"))
        }
    }

    @Test func twoFramesInOneWrite() throws {
        let analyzer = Analyzer()
        analyzer.plugins = try Self.plugins()
        Self.frame([0x52, 0x12, 0x00] + Fixtures.bytes("a5 04 01 a0 a5 06 03 06 14 b2")) { a in
            analyzer.applyPlugins(&a)
            #expect(a.vendor?.messages.map(\.message) == ["device_info", "sport_count"])
            #expect(Self.json(a).contains(#""vendor_more":[{"plugin":"band","message":"sport_count""#))
        }
    }
}
