import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// HCI ISO data packets, SDU reassembly, the CIG/CIS/BIG commands and events, and the
/// per-capture LE Audio state, from literal bytes.
@Suite struct LEAudioISOTests {
    static let setCIG = "01 10 27 00 10 27 00 00 00 00 0a 00 0a 00 02 01 28 00 28 00 02 02 02 02 02 28 00 00 00 02 02 02 02"
    static let cisEstablished = "00 60 00 10 00 00 08 00 00 20 4e 00 20 4e 00 02 02 02 01 01 01 01 28 00 28 00 08 00"

    @Test func isoHeaderCompleteSDUWithTimeStamp() {
        // Handle 0x060, PB 0b10 complete, TS set; load 12: TS 1000, SN 7, SDU 4 valid, 4 bytes.
        let bytes = Hex.parse("60 60 0c 00 e8 03 00 00 07 00 04 00 01 02 03 04")!
        let h = bytes.withUnsafeBytes { ISODataHeader(packet: $0) }
        #expect(h.error == nil)
        #expect(h.handle == 0x060 && h.pbFlag == .complete && h.tsFlag)
        #expect(h.timeStamp == 1000 && h.packetSequenceNumber == 7 && h.sduLength == 4 && h.packetStatus == .valid)
        #expect(h.fragmentOffset == 12 && h.fragmentLength == 4)
        #expect(h.encode(fragment: [1, 2, 3, 4]) == bytes)
        #expect(h.summary == "ISO 0x0060 SN 7 TS 1000 SDU 4 B")
    }

    @Test func isoHeaderLostStatusAndTruncation() {
        let lost = Hex.parse("61 20 04 00 09 00 00 80")!.withUnsafeBytes { ISODataHeader(packet: $0) }
        #expect(lost.packetStatus == .lost && lost.sduLength == 0 && lost.handle == 0x061)
        let cut = Hex.parse("60 20 08 00 07 00")!.withUnsafeBytes { ISODataHeader(packet: $0) }
        #expect(cut.error?.code == .truncated && cut.error?.layer == "iso")
    }

    @Test func reassemblesFragmentsAndReportsOrphans() {
        var r = ISOReassembler(maxHandles: 2)
        var got: [(ISOSDU, [UInt8])] = []
        func feed(_ hex: String) -> DecodeError? {
            let b = Hex.parse(hex)!
            return b.withUnsafeBytes { p in
                let h = ISODataHeader(packet: p)
                return r.add(h, fragment: UnsafeRawBufferPointer(rebasing: p[h.fragmentOffset..<(h.fragmentOffset + h.fragmentLength)])) { got.append(($0, Array($1))) }
            }
        }
        // First (SN 3, SDU 6: 2 bytes), continuation (2), last (2).
        #expect(feed("60 00 06 00 03 00 06 00 aa bb") == nil)
        #expect(feed("60 10 02 00 cc dd") == nil)
        #expect(feed("60 30 02 00 ee ff") == nil)
        #expect(got.count == 1)
        #expect(got[0].0.packetSequenceNumber == 3 && got[0].0.fragments == 3 && got[0].1 == [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        // A continuation with nothing started is damage; decoding goes on.
        #expect(feed("60 10 02 00 01 02")?.code == .reassembly)
        // A first fragment over an unfinished SDU reports the unfinished one.
        #expect(feed("60 00 05 00 04 00 04 00 01") == nil)
        #expect(feed("60 00 05 00 05 00 04 00 01")?.message.contains("unfinished") == true)
        // Bounded: a third handle is refused while two are reassembling.
        #expect(feed("61 00 05 00 01 00 04 00 01") == nil)
        #expect(feed("62 00 05 00 01 00 04 00 01")?.message.contains("more than 2") == true)
    }

    @Test func setCIGParametersEveryParameter() {
        let p = Hex.parse(Self.setCIG)!
        let m = p.withUnsafeBytes { LEAudioHCIMessage(.command(0x2062), parameters: $0) }!
        #expect(m.error == nil)
        #expect(m.uint("cig_id") == 1 && m.uint("sdu_interval_c_to_p") == 10000 && m.uint("max_transport_latency_p_to_c") == 10)
        #expect(m.uints("cis_id") == [1, 2] && m.uints("max_sdu_p_to_c") == [40, 0])
        #expect(m.encode() == p)
        #expect(
            json(m).hasPrefix(
                #"{"cig_id":1,"sdu_interval_c_to_p":10000,"sdu_interval_p_to_c":10000,"worst_case_sca":0,"packing":0,"framing":0,"max_transport_latency_c_to_p":10,"max_transport_latency_p_to_c":10,"cis_count":2,"cis":[{"cis_id":1,"max_sdu_c_to_p":40,"max_sdu_p_to_c":40,"phy_c_to_p":2,"phy_c_to_p_name":"LE 2M""#
            ))
    }

    @Test func cisEstablishedV1() {
        let p = Hex.parse(Self.cisEstablished)!
        let m = p.withUnsafeBytes { LEAudioHCIMessage(.subevent(0x19), parameters: $0) }!
        #expect(m.error == nil)
        #expect(m.uint("connection_handle") == 0x60 && m.uint("cig_sync_delay") == 16 && m.uint("transport_latency_c_to_p") == 20000)
        #expect(m.uint("max_pdu_p_to_c") == 40 && m.uint("iso_interval") == 8)
        #expect(m.encode() == p)
        #expect(m.summary == "LE CIS Established Success connection_handle=0x0060")
        // One byte short: a note, values read so far kept.
        let cut = p.dropLast().withUnsafeBytes { LEAudioHCIMessage(.subevent(0x19), parameters: UnsafeRawBufferPointer($0)) }!
        #expect(cut.error?.code == .truncated && cut.uint("max_pdu_p_to_c") == 40)
    }

    @Test func createBIGHidesTheBroadcastCode() {
        let p = Hex.parse("01 00 02 10 27 00 28 00 0a 00 02 02 00 00 01 " + String(repeating: "11 ", count: 16))!
        var m = p.withUnsafeBytes { LEAudioHCIMessage(.command(0x2068), parameters: $0) }!
        #expect(m.error == nil && m.uint("num_bis") == 2 && m.uint("encryption") == 1)
        #expect(json(m).contains(#""broadcast_code":"hidden""#))
        m.showKeys = true
        #expect(json(m).contains(#""broadcast_code":"11111111111111111111111111111111""#))
        #expect(m.encode() == p)
    }

    @Test func bigCreateSyncListsBISes() {
        let p = Hex.parse("01 01 00 00 " + String(repeating: "00 ", count: 16) + "00 e8 03 02 01 02")!
        let m = p.withUnsafeBytes { LEAudioHCIMessage(.command(0x206B), parameters: $0) }!
        #expect(m.error == nil && m.uints("bis") == [1, 2])
        #expect(json(m).hasSuffix(#""num_bis":2,"bis":[1,2]}"#))
        #expect(m.encode() == p)
    }

    @Test func failedCommandCompleteIsNotDamage() {
        let m = Hex.parse("0c")!.withUnsafeBytes { LEAudioHCIMessage(.returnParameters(0x2062), parameters: $0) }!
        #expect(m.error == nil && m.uint("status") == 0x0C)
    }

    @Test func stateBindsASEToCISAndMeasuresTheStream() {
        var s = LEAudioState()
        s.bind(connection: 0x40, handle: 0x20, uuid: LEAudioUUIDs.sinkASE)
        s.bind(connection: 0x40, handle: 0x26, uuid: LEAudioUUIDs.aseControlPoint)
        func att(_ h: UInt16, _ w: Bool, _ hex: String, _ f: Int) { Hex.parse(hex)!.withUnsafeBytes { _ = s.attValue(connection: 0x40, handle: h, written: w, bytes: $0, frame: f) } }
        att(0x26, true, "01 01 01 01 02 06 00 00 00 00 10 " + LEAudioProfileTests.config16_2, 10)
        att(0x26, false, "01 01 01 00 00", 11)
        att(0x20, false, "01 01 00 02 02 0a 00 40 9c 00 40 9c 00 00 00 00 00 00 00 06 00 00 00 00 10 " + LEAudioProfileTests.config16_2, 12)
        att(0x26, true, "02 01 01 01 01 10 27 00 00 02 28 00 02 0a 00 40 9c 00", 13)
        att(0x20, false, "01 02 01 01 10 27 00 00 02 28 00 02 0a 00 40 9c 00", 14)
        att(0x26, true, "03 01 01 00", 15)
        att(0x20, false, "01 03 01 01 00", 16)
        att(0x20, false, "01 04 01 01 00", 30)
        Hex.parse(Self.setCIG)!.withUnsafeBytes { s.command(opcode: 0x2062, parameters: $0) }
        Hex.parse("00 01 02 60 00 61 00")!.withUnsafeBytes { s.commandComplete(opcode: 0x2062, returnParameters: $0) }
        Hex.parse("01 60 00 40 00")!.withUnsafeBytes { s.command(opcode: 0x2064, parameters: $0) }
        Hex.parse(Self.cisEstablished)!.withUnsafeBytes { s.subevent(0x19, parameters: $0, frame: 20) }
        let ase = s.ases(onCIS: 0x60)
        #expect(ase.count == 1 && ase[0].key.aseID == 1 && ase[0].reachedStreaming)
        #expect(s.timeline(ase[0]) == "ASE 1 (sink) on 0x0040: Codec Configured (Config Codec) #12 → QoS Configured (Config QoS) #14 → Enabling (Enable) #16 → Streaming #30")
        #expect(s.cises[0x60]?.status == 0 && s.cises[0x61]?.cisID == 2)
        // SDUs SN 0,1,3 (2 lost), 10 ms apart by time stamp, the third 10 100 us late.
        for (sn, ts) in [(0, 0), (1, 10000), (3, 30100)] {
            let h = ISODataHeader(handle: 0x60, pbFlag: .complete, timeStamp: UInt32(ts), packetSequenceNumber: UInt16(sn), sduLength: 2, packetStatus: .valid, fragmentLength: 2)
            h.encode(fragment: [1, 2]).withUnsafeBytes { _ = s.isoPacket($0, sent: true, frame: 40 + sn) }
        }
        let st = s.streams[0x60 << 1 | 1]!
        #expect(st.sdus == 3 && st.lostBySequence == 1 && st.statusCounts == [3, 0, 0])
        #expect(st.jitterSamples == 2 && st.jitterMax == 100)
        #expect(s.health(st) == "ISO 0x0060 sent: 3 SDUs, 1 lost by sequence, status valid 3 / possibly invalid 0 / lost 0, jitter mean 50 us max 100 us")
    }

    /// LE Remove ISO Data Path (Core 6.0 Vol 4 Part E §7.8.110) clears the directions its
    /// bit field names (bit 0 input, bit 1 output); Setup's direction is a value (0, 1).
    @Test func removeISODataPathClearsThePath() {
        var s = LEAudioState()
        Hex.parse(Self.setCIG)!.withUnsafeBytes { s.command(opcode: 0x2062, parameters: $0) }
        Hex.parse("00 01 02 60 00 61 00")!.withUnsafeBytes { s.commandComplete(opcode: 0x2062, returnParameters: $0) }
        // Setup input and output on 0x0060 (HCI, LC3 transparent: coding format 0x03), then on 0x0061.
        for (h, d) in [("60 00", "00"), ("60 00", "01"), ("61 00", "01")] {
            Hex.parse(h + " " + d + " 00 03 00 00 00 00 00 00 00 00")!.withUnsafeBytes { s.command(opcode: 0x206E, parameters: $0) }
        }
        #expect(s.cises[0x60]?.dataPaths == 3 && s.cises[0x61]?.dataPaths == 2)
        // Remove input (bit 0) of 0x0060: output stays.
        Hex.parse("60 00 01")!.withUnsafeBytes { s.command(opcode: 0x206F, parameters: $0) }
        #expect(s.cises[0x60]?.dataPaths == 2)
        // Remove both (0x03) of 0x0061, which had only output.
        Hex.parse("61 00 03")!.withUnsafeBytes { s.command(opcode: 0x206F, parameters: $0) }
        #expect(s.cises[0x61]?.dataPaths == 0 && s.cises[0x60]?.dataPaths == 2)
    }

    @Test func aseErrorIsKeptWithItsReason() {
        var s = LEAudioState()
        s.bind(connection: 0x40, handle: 0x26, uuid: LEAudioUUIDs.aseControlPoint)
        Hex.parse("02 01 02 08 05")!.withUnsafeBytes { _ = s.attValue(connection: 0x40, handle: 0x26, written: false, bytes: $0, frame: 5) }
        let a = s.ases[.init(connection: 0x40, aseID: 2)]!
        #expect(a.errors.count == 1 && a.errors[0].code.rawValue == 8 && a.errors[0].reason.name == "PHY")
    }
}
