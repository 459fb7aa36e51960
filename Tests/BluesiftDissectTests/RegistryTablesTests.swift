import Testing
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols

/// The carriers read off every record (HCI events, LE subevents, AD types, service data) go
/// through the registry's flat tables: each reaches its module with the bytes after its code,
/// and a record no module registered gets none (issue 38: the advertising path pays no hash).
@Suite struct RegistryTablesTests {
    static let registry = ProtocolRegistry(Protocols.all + [Probe.self])

    enum Probe: ProtocolModule {
        static let layers = [LayerSpec("probe", specificity: 6)]
        static let carriers: [Carrier] = [.hciEvent(0x57), .leSubevent(0x7E), .adType(0xED), .serviceData(0xFEED)]
        static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
            ProbePDU(bytes: Array(pdu), carrier: x.carrier)
        }
    }

    struct ProbePDU: ModuleLayer {
        var bytes: [UInt8]
        var carrier: Carrier
        var layers: DecodedFrame.Layers { RegistryTablesTests.registry.layer("probe")!.bit }
        var error: DecodeError? { nil }
        func name(_ layer: FrameLayer) -> String { "Probe" }
        func summary(_ layer: FrameLayer) -> String { "Probe" }
        func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {}
    }

    /// The module layer a record's decode gives, with its carrier and bytes.
    func probe(_ kind: PacketKind, _ hex: String) throws -> ProbePDU? {
        let bytes = try #require(Hex.parse(hex))
        let d = ProtocolDecoder(registry: Self.registry)
        return bytes.withUnsafeBytes { b in
            let r = CaptureRecord(
                frame: 1, timestamp: Timestamp(microseconds: 0), direction: .received, adapter: 0, kind: kind, bytes: b,
                originalLength: nil, sniffer: nil)
            return d.decode(r).moduleLayer(ProbePDU.self)
        }
    }

    @Test func eventsSubeventsAndAdvertisingDataReachTheirModule() throws {
        let event = PacketKind(rawValue: 0x04)
        // Authenticated Payload Timeout Expired (event 0x57): the parameters after code and length.
        let e = try #require(try probe(event, "57 02 0b 00"))
        #expect(e.carrier == .hciEvent(0x57) && e.bytes == [0x0B, 0x00])
        // An LE Meta event (0x3E) of subevent 0x7E: the parameters after the subevent code.
        let s = try #require(try probe(event, "3e 03 7e aa bb"))
        #expect(s.carrier == .leSubevent(0x7E) && s.bytes == [0xAA, 0xBB])
        // An LE Advertising Report (§7.7.65.2) whose data holds service data for 0xFEED (after
        // a Flags structure): the value after the UUID.
        let sd = try #require(try probe(event, "3e 17 02 01 00 00 01 02 03 04 05 06 0b 02 01 06 07 16 ed fe 01 02 03 04 c5"))
        #expect(sd.carrier == .serviceData(0xFEED) && sd.bytes == [0x01, 0x02, 0x03, 0x04])
        // AD type 0xED, the first registered structure of the report.
        let ad = try #require(try probe(event, "3e 11 02 01 00 00 01 02 03 04 05 06 05 04 ed 09 08 07 c5"))
        #expect(ad.carrier == .adType(0xED) && ad.bytes == [0x09, 0x08, 0x07])
        // Number Of Completed Packets (0x13) and an advertising report without those structures: none.
        #expect(try probe(event, "13 05 01 0b 00 01 00") == nil)
        #expect(try probe(event, "3e 0f 02 01 00 00 01 02 03 04 05 06 03 02 01 06 c5") == nil)
    }
}
