import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect

/// Issue 38 item 2: a protocol family moves in through one door. `Echo` below is written
/// only in this file, as a new family would be in its folder, and joins the registry by
/// being listed (here a registry built from `Protocols.all` plus it, as one more line in
/// Protocols.swift would make it): its layer is a `--protocol` name, its PSM and AD type
/// carry PDUs to its `decode`, with per-connection state, and its collector's member and
/// count are in the stats JSON, its table in CSV, its section in the text.
@Suite struct ProtocolDoorTests {
    static let registry = ProtocolRegistry(Protocols.all + [Echo.self])

    enum Echo: ProtocolModule {
        static let layers = [LayerSpec("echo", group: "lab", specificity: 6)]
        static let carriers: [Carrier] = [.psm(0x1001), .adType(0xEE)]
        static var collector: (any StatsCollector.Type)? { EchoStats.self }
        // A decode option (its configuration reaches `decode`) and a record filter.
        static let options = [
            ModuleOption("echo-salt", valueName: "N", kind: .decode, help: "Added to every nth"),
            ModuleOption("echo-nth", valueName: "N", kind: .filter, help: "Only the nth echo")
        ]
        static func configure(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any Sendable)? {
            guard let v = values.last("echo-salt") else { return nil }
            guard let n = Int(v) else { throw ModuleOptionError(option: "echo-salt", value: v, "expected a number") }
            return n
        }
        static func filter(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any ModuleFrameFilter)? {
            var s = Set<Int>()
            for v in values["echo-nth"] {
                guard let n = Int(v) else { throw ModuleOptionError(option: "echo-nth", value: v, "expected a number") }
                s.insert(n)
            }
            return NthFilter(nths: s)
        }
        struct NthFilter: ModuleFrameFilter {
            var nths: Set<Int>
            func matches(_ frame: borrowing DecodedFrame) -> Bool { frame.moduleLayer(EchoPDU.self).map { nths.contains($0.nth) } ?? false }
        }
        final class State { var seen = 0 }
        static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
            let s = x.state(State.self, State.init)
            s.seen += 1
            return EchoPDU(bytes: Array(pdu), carrier: x.carrier, nth: s.seen + (x.configuration(Int.self) ?? 0))
        }
    }

    struct EchoPDU: ModuleLayer {
        var bytes: [UInt8]
        var carrier: Carrier
        var nth: Int
        var layers: DecodedFrame.Layers { ProtocolDoorTests.registry.layer("echo")!.bit }
        var error: DecodeError? { nil }
        func name(_ layer: FrameLayer) -> String { "Echo" }
        func summary(_ layer: FrameLayer) -> String { "Echo #\(nth) " + Hex.string(bytes) }
        func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
            w.beginObject("echo"); w.int("nth", nth); w.endObject()
        }
    }

    final class EchoStats: StatsCollector {
        var frames = 0, rows: [[String?]] = []
        init() {}
        static var tables: [(name: String, header: String)] { [("echo", "file,connection,nth")] }
        func add(_ f: borrowing DecodedFrame, _ stats: any StatsContext) {
            guard let p = f.moduleLayer(EchoPDU.self) else { return }
            frames += 1
            rows.append([stats.file, stats.connectionIndex(f).map(String.init), String(p.nth)])
        }
        func finish(_ stats: any StatsContext) -> ModuleStats {
            var m = ModuleStats()
            m.members = [("echoFrames", frames)]
            m.counts = [("echo", frames)]
            m.text = ["", "echo: \(frames) frames"]
            m.tables["echo"] = rows
            return m
        }
    }

    @Test func aNewModuleIsNamedDispatchedAndCounted() throws {
        let r = Self.registry
        // Its layer takes the bit after the listed modules' (whatever Protocols.all lists), before
        // note; `--protocol` and `--help` know it. Worked out from the shared registry, so a
        // family added to the list does not edit this test.
        let shared = ProtocolRegistry.shared
        let echo = try #require(r.layer("echo"))
        #expect(Int(echo.rawValue) == Int(ProtocolRegistry.firstModuleBit) + shared.layers.count)
        #expect(r.names.contains("echo") && r.names.contains("lab"))
        #expect(r.layers(named: "lab") == echo.bit)
        let listed = shared.allLayers.dropLast().map(shared.key).joined(separator: ", ")
        #expect(r.helpList.hasPrefix(listed + ", echo, note, "), "\(r.helpList)")
        #expect(r.helpList.contains("lab (any of echo)") && r.helpList.contains("classic (any of sdp, rfcomm, hfp, avdtp, avrcp)"))
        #expect(r.module(for: .psm(0x1001)).map(ObjectIdentifier.init) == ObjectIdentifier(Echo.self))
        #expect(!FrameLayer.names.contains("echo")) // the shared registry lists only Protocols.all

        let store = Store()
        let d = ProtocolDecoder(registry: r)
        let stats = CaptureStats(file: "door.btsnoop", format: "test", registry: r)
        var frames: [AnalyzedFrame] = []
        func feed(_ rec: CaptureRecord) {
            var a = AnalyzedFrame(decoded: d.decode(rec))
            stats.add(&a, decoder: d)
            frames.append(a)
        }
        // Connection Complete (handle 0x000b), then L2CAP Connection Request for PSM 0x1001
        // (ours 0x0040) and its response (the peer's 0x0041), then two PDUs on the channel.
        feed(store.record(1, PacketKind(rawValue: 0x04), .received, Hex.parse("03 0b 00 0b 00 11 22 33 44 55 66 01 00")!))
        feed(store.record(2, .acl, .sent, Self.acl(0x000B, Self.l2(0x0001, [0x02, 0x01, 0x04, 0x00, 0x01, 0x10, 0x40, 0x00]))))
        feed(store.record(3, .acl, .received, Self.acl(0x000B, Self.l2(0x0001, Hex.parse("03 01 08 00 41 00 40 00 00 00 00 00")!))))
        feed(store.record(4, .acl, .received, Self.acl(0x000B, Self.l2(0x0040, [0xCA, 0xFE]))))
        feed(store.record(5, .acl, .sent, Self.acl(0x000B, Self.l2(0x0041, [0x01]))))
        // LE Advertising Report (§7.7.65.2): one report whose data holds AD type 0xEE.
        feed(
            store.record(
                6, PacketKind(rawValue: 0x04), .received,
                Hex.parse("3e 13 02 01 00 00 01 02 03 04 05 06 07 02 01 06 03 ee 0a 0b c5")!))

        let onChannel = frames[3].decoded
        #expect(onChannel.layers.contains(echo) && onChannel.layers.contains(.l2cap))
        #expect(onChannel.l2cap?.psm == 0x1001)
        let p4 = try #require(onChannel.moduleLayer(EchoPDU.self))
        #expect(p4.bytes == [0xCA, 0xFE] && p4.carrier == .psm(0x1001) && p4.nth == 1)
        #expect(frames[4].decoded.moduleLayer(EchoPDU.self)?.nth == 2) // the connection's state
        let adv = try #require(frames[5].decoded.moduleLayer(EchoPDU.self))
        #expect(adv.bytes == [0x0A, 0x0B] && adv.carrier == .adType(0xEE) && adv.nth == 1) // the decoder's state
        #expect(frames[5].decoded.layers.isSuperset(of: DecodedFrame.Layers.advertisingEvent.union(echo.bit)))

        let report = stats.finish(decoder: d, warnings: [])
        let json = String(decoding: StatsRender.json(report), as: UTF8.self)
        #expect(json.contains("\"echo_frames\":3"))
        #expect(json.contains("\"echo\":3"))
        #expect(json.contains("\"classic\":[]")) // the Classic modules' member is still there
        #expect(StatsRender.text(report, width: nil).contains("echo: 3 frames"))
        #expect(
            report.modules.compactMap { $0.tables["echo"] }.first?.map { $0.compactMap { $0 } }
                == [["door.btsnoop", "0", "1"], ["door.btsnoop", "0", "2"], ["door.btsnoop", "1"]])
    }

    /// Issue 40 step 1: a module declares its command-line options. A decode option's value
    /// becomes the module's configuration (read in `decode`), a filter option's a record
    /// condition of `FrameFilter`; bad values are typed errors naming the option.
    @Test func aModuleDeclaresOptionsAndFilters() throws {
        let r = Self.registry
        #expect(r.option(named: "echo-salt")?.kind == .decode && r.option(named: "echo-nth")?.kind == .filter)
        #expect(r.optionHelp(.decode)?.contains("--echo-salt N: Added to every nth") == true)
        #expect(r.optionHelp(.filter)?.contains("--echo-nth N: Only the nth echo") == true)
        #expect(ProtocolRegistry(Protocols.all).optionHelp(.decode) == ProtocolRegistry.shared.optionHelp(.decode))
        #expect(throws: ModuleOptionError(option: "echo-salt", value: "ten", "expected a number")) { try r.configure([("echo-salt", "ten")]) }
        #expect(throws: ModuleOptionError(option: "echo-nth", value: "x", "expected a number")) { try r.filters([("echo-nth", "x")]) }
        #expect(try r.configure([]).isEmpty)

        let store = Store()
        let d = ProtocolDecoder(registry: r)
        d.moduleConfiguration = try r.configure([("echo-salt", "1"), ("echo-salt", "100")]) // the last wins
        var filter = FrameFilter()
        filter.modules = try r.filters([("echo-nth", "102"), ("echo-nth", "7")])
        #expect(!filter.isEmpty)
        let adv = { (n: Int) in
            store.record(n, PacketKind(rawValue: 0x04), .received, Hex.parse("3e 13 02 01 00 00 01 02 03 04 05 06 07 02 01 06 03 ee 0a 0b c5")!)
        }
        let first = d.decode(adv(1)), second = d.decode(adv(2))
        #expect(first.moduleLayer(EchoPDU.self)?.nth == 101 && second.moduleLayer(EchoPDU.self)?.nth == 102)
        #expect(!filter.matches(first) && filter.matches(second))
        // Without the option, decode sees no configuration.
        #expect(ProtocolDecoder(registry: r).decode(adv(3)).moduleLayer(EchoPDU.self)?.nth == 1)
    }

    /// Owns record bytes for the test (records borrow them).
    final class Store {
        var kept: [UnsafeMutableRawBufferPointer] = []
        deinit { for b in kept { b.deallocate() } }
        func record(_ frame: Int, _ kind: PacketKind, _ dir: Direction?, _ b: [UInt8]) -> CaptureRecord {
            let m = UnsafeMutableRawBufferPointer.allocate(byteCount: max(b.count, 1), alignment: 1)
            m.copyBytes(from: b)
            kept.append(m)
            return CaptureRecord(
                frame: frame, timestamp: Timestamp(microseconds: Int64(frame) * 1000), direction: dir, adapter: 0,
                kind: kind, bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(m)[0..<b.count]),
                originalLength: nil, sniffer: nil)
        }
    }

    static func acl(_ handle: UInt16, _ data: [UInt8]) -> [UInt8] {
        [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0b10 << 4, UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data
    }
    static func l2(_ cid: UInt16, _ p: [UInt8]) -> [UInt8] {
        [UInt8(p.count & 0xFF), UInt8(p.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + p
    }
}
