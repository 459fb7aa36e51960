import Testing
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols

/// Issue 38: a module gets all of its AD structures of an advertising report in one call
/// (`decode(advertising:)`), in report order, by AD type and by service data UUID alike, and
/// none of another module's; a module without it gets the first alone (`decode`).
@Suite struct AdvertisingStructuresTests {
    static let registry = ProtocolRegistry(Protocols.all + [Pair.self, First.self])

    /// Takes AD type 0xEE and service data 0xFFEE: what one call saw.
    enum Pair: ProtocolModule {
        static let layers = [LayerSpec("pair", group: "lab", specificity: 6)]
        static let carriers: [Carrier] = [.adType(0xEE), .serviceData(0xFFEE)]
        final class Calls { var n = 0 }
        static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? { nil }
        static func decode(advertising s: ModuleADStructures, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
            let calls = x.state(Calls.self, Calls.init)
            calls.n += 1
            return Seen(structures: s.map { ($0.carrier, Array($0.value)) }, call: calls.n, key: "pair")
        }
    }

    /// Takes AD type 0xED through `decode` alone.
    enum First: ProtocolModule {
        static let layers = [LayerSpec("first", group: "lab", specificity: 6)]
        static let carriers: [Carrier] = [.adType(0xED)]
        static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
            Seen(structures: [(x.carrier, Array(pdu))], call: 1, key: "first")
        }
    }

    struct Seen: ModuleLayer {
        var structures: [(Carrier, [UInt8])]
        var call: Int
        var key: String
        var layers: DecodedFrame.Layers { AdvertisingStructuresTests.registry.layer(key)!.bit }
        var error: DecodeError? { nil }
        func name(_ layer: FrameLayer) -> String { key }
        func summary(_ layer: FrameLayer) -> String { key }
        func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {}
    }

    /// An LE Advertising Report event (§7.7.65.2) with these reports' data.
    static func report(_ data: [UInt8]...) -> [UInt8] {
        var p: [UInt8] = [0x02, UInt8(data.count)]
        for (i, d) in data.enumerated() { p += [0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, UInt8(i)] + [UInt8(d.count)] + d + [0xC5] }
        return [0x3E, UInt8(p.count)] + p
    }

    @Test func aModuleGetsItsStructuresOfAReportInOneCall() throws {
        let store = ProtocolDoorTests.Store()
        let d = ProtocolDecoder(registry: Self.registry)
        // Report 1: 0xEE "a", Flags, service data 0xFFEE "bc", Mesh Message (another module's),
        // 0xEE "d"; report 2: 0xEE "e" (a later report: not this record's).
        let event = Self.report(
            [0x02, 0xEE, 0x61, 0x02, 0x01, 0x06, 0x05, 0x16, 0xEE, 0xFF, 0x62, 0x63, 0x03, 0x2A, 0x00, 0x01, 0x02, 0xEE, 0x64],
            [0x02, 0xEE, 0x65])
        let f = d.decode(store.record(1, PacketKind(rawValue: 0x04), .received, event))
        let seen = try #require(f.moduleLayer(Seen.self))
        #expect(seen.call == 1, "one call for the report")
        #expect(seen.structures.map(\.0) == [.adType(0xEE), .serviceData(0xFFEE), .adType(0xEE)])
        #expect(seen.structures.map(\.1) == [[0x61], [0x62, 0x63], [0x64]])
        #expect(f.errors.isEmpty)

        // A module without `decode(advertising:)`: its first structure alone.
        let g = d.decode(store.record(2, PacketKind(rawValue: 0x04), .received, Self.report([0x02, 0xED, 0x01, 0x02, 0xED, 0x02])))
        let first = try #require(g.moduleLayer(Seen.self))
        #expect(first.key == "first" && first.structures.map(\.1) == [[0x01]])
    }
}
