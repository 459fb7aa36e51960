import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// LE Audio profile values from literal bytes: decode, field names, summaries, round trips.
@Suite struct LEAudioProfileTests {
    /// A 16_2 configuration: 16 kHz, 10 ms, Front Left, 40 octets (BAP Table 5.2).
    static let config16_2 = "02 01 03 02 02 01 05 03 01 00 00 00 03 04 28 00"

    @Test func codecConfigurationNamesItsPreset() {
        let c = LEAudioCodecConfiguration(bytes: Hex.parse(Self.config16_2)!)
        #expect(c.samplingFrequency?.hertz == 16000)
        #expect(c.frameDuration?.microseconds == 10000)
        #expect(c.audioChannelAllocation == .frontLeft)
        #expect(c.octetsPerCodecFrame == 40)
        #expect(c.preset == "16_2")
        #expect(c.encode() == Hex.parse(Self.config16_2)!)
        #expect(
            json(c) == #"{"sampling_frequency":3,"sampling_frequency_hz":16000,"frame_duration":1,"frame_duration_us":10000,"audio_channel_allocation":1,"audio_channel_allocation_names":["Front Left"],"octets_per_codec_frame":40,"preset":"16_2"}"#)
        #expect(c.summary == "16_2 16000 Hz 10 ms 40 octets Front Left")
    }

    @Test func truncatedLTVIsANoteAndKeepsWhatCameBefore() {
        let c = LEAudioCodecConfiguration(bytes: Hex.parse("02 01 08 05 03 01 00")!)
        #expect(c.samplingFrequency?.hertz == 48000)
        #expect(c.error?.code == .truncated)
        #expect(c.error?.offset == 3)
    }

    @Test func aseConfigCodecOperation() {
        // Config Codec, one ASE (id 1), low latency, 2M PHY, LC3, 16_2.
        let bytes = Hex.parse("01 01 01 01 02 06 00 00 00 00 10 " + Self.config16_2)!
        let op = bytes.withUnsafeBytes { ASEControlPointOperation(bytes: $0) }
        #expect(op.error == nil)
        #expect(op.opcode == .configCodec)
        #expect(op.entries.count == 1)
        #expect(op.entries[0].aseID == 1)
        #expect(op.entries[0].targetLatency?.name == "Low Latency")
        #expect(op.entries[0].codec?.codecID == .lc3)
        #expect(op.entries[0].codec?.configuration?.preset == "16_2")
        #expect(op.encode() == bytes)
        #expect(op.summary == "ASE CP Config Codec ASE 1 LC3 16_2 16000 Hz 10 ms 40 octets Front Left")
    }

    @Test func aseConfigQoSNamesTheQoSPreset() {
        // Config QoS for ASE 1: CIG 1 CIS 1, 10000 us, unframed, 2M, 40 octets, RTN 2, 10 ms, 40000 us: 16_2_1.
        let bytes = Hex.parse("02 01 01 01 01 10 27 00 00 02 28 00 02 0a 00 40 9c 00")!
        let op = bytes.withUnsafeBytes { ASEControlPointOperation(bytes: $0) }
        #expect(op.error == nil)
        let q = op.entries[0].qos!
        #expect(q.cigID == 1 && q.cisID == 1 && q.sduInterval == 10000 && q.maxSDU == 40 && q.presentationDelay == 40000)
        #expect(q.preset == "16_2_1")
        #expect(op.encode() == bytes)
    }

    @Test func aseStateCodecConfigured() {
        let bytes = Hex.parse("01 01 00 02 02 0a 00 40 9c 00 40 9c 00 00 00 00 00 00 00 06 00 00 00 00 10 " + Self.config16_2)!
        let s = bytes.withUnsafeBytes { ASEStateValue(bytes: $0) }
        #expect(s.error == nil)
        #expect(s.state == .codecConfigured)
        #expect(s.codecConfigured?.presentationDelayMin == 40000)
        #expect(s.codecConfigured?.codec.configuration?.preset == "16_2")
        #expect(s.encode() == bytes)
        #expect(s.summary.hasPrefix("ASE 1 Codec Configured LC3 16_2"))
    }

    @Test func aseStateStreamingWithMetadata() {
        // Streaming, CIG 1 CIS 2, metadata Streaming_Audio_Contexts = Media.
        let bytes = Hex.parse("03 04 01 02 04 03 02 04 00")!
        let s = bytes.withUnsafeBytes { ASEStateValue(bytes: $0) }
        #expect(s.state == .streaming)
        #expect(s.enabled?.cisID == 2)
        #expect(s.enabled?.metadata.streamingAudioContexts == .media)
        #expect(json(s) == #"{"ase_id":3,"ase_state":4,"ase_state_name":"Streaming","cig_id":1,"cis_id":2,"metadata":{"streaming_audio_contexts":4,"streaming_audio_contexts_names":["Media"]}}"#)
        #expect(s.encode() == bytes)
    }

    @Test func controlPointNotificationWithReason() {
        // Config QoS answered: ASE 1 Success; ASE 2 Rejected Configuration Parameter value, reason PHY.
        let bytes = Hex.parse("02 02 01 00 00 02 08 05")!
        let n = bytes.withUnsafeBytes { ASEControlPointNotification(bytes: $0) }
        #expect(n.failed)
        #expect(n.responses[1].code.name == "Rejected Configuration Parameter value")
        #expect(n.responses[1].reason.name == "PHY")
        #expect(n.summary == "ASE CP response Config QoS: ASE 1 Success, ASE 2 Rejected Configuration Parameter value (PHY)")
        #expect(n.encode() == bytes)
        // 0xFF ASEs: one response for the whole operation (Invalid Length).
        let bad = Hex.parse("03 ff 00 02 00")!.withUnsafeBytes { ASEControlPointNotification(bytes: $0) }
        #expect(bad.error == nil && bad.responses.count == 1 && bad.responses[0].code.rawValue == 2)
    }

    @Test func pacRecordWithCapabilities() {
        // One LC3 record: 16/24/48 kHz, 10 ms, 1 channel, 40-120 octets; metadata Preferred contexts Media.
        let caps = "03 01 94 00 02 02 02 02 03 01 05 04 28 00 78 00"
        let bytes = Hex.parse("01 06 00 00 00 00 10 " + caps + " 04 03 01 04 00")!
        let p = bytes.withUnsafeBytes { PACRecordList(bytes: $0) }
        #expect(p.error == nil)
        let c = p.records[0].capabilities!
        #expect(c.supportedSamplingFrequencies!.hertz == [16000, 24000, 48000])
        #expect(c.octetsPerCodecFrame! == (40, 120))
        #expect(p.encode() == bytes)
        #expect(p.summary == "PAC 1 record LC3 16/24/48 kHz 40-120 octets")
    }

    @Test func vendorCodecCapabilitiesStayBytes() {
        let bytes = Hex.parse("01 ff 0f 00 01 00 03 aa bb cc 00")!
        let p = bytes.withUnsafeBytes { PACRecordList(bytes: $0) }
        #expect(p.records[0].codecID.isVendor)
        #expect(p.records[0].capabilities == nil)
        #expect(json(p).contains(#""codec_specific_capabilities":"aabbcc""#))
        #expect(p.records[0].codecID.summary == "vendor 0x000f:0x0001")
    }

    @Test func baseThreeLevels() {
        // 40000 us, one subgroup: 2 BIS, LC3 16_2 without allocation, language "eng";
        // BIS 1 Front Left, BIS 2 Front Right.
        let bytes = Hex.parse("40 9c 00 01 02 06 00 00 00 00 0a 02 01 03 02 02 01 03 04 28 00 05 04 04 65 6e 67 01 06 05 03 01 00 00 00 02 06 05 03 02 00 00 00")!
        let b = bytes.withUnsafeBytes { BASE(bytes: $0) }
        #expect(b.error == nil)
        #expect(b.presentationDelay == 40000)
        #expect(b.subgroups[0].metadata.language == "eng")
        #expect(b.subgroups[0].bises.map(\.index) == [1, 2])
        let merged = b.subgroups[0].configuration(of: b.subgroups[0].bises[1])!
        #expect(merged.audioChannelAllocation == .frontRight && merged.preset == "16_2")
        #expect(b.encode() == bytes)
        #expect(b.summary == "BASE delay 40000 us, 1 subgroup; LC3 16_2 16000 Hz 10 ms 40 octets BIS 1,2 eng")
    }

    @Test func broadcastCodeIsHidden() {
        let code = "01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10"
        let bytes = Hex.parse("04 01 " + code)!
        var op = bytes.withUnsafeBytes { BASSControlPointOperation(bytes: $0) }
        #expect(json(op) == #"{"opcode":4,"opcode_name":"Set Broadcast_Code","source_id":1,"broadcast_code":"hidden"}"#)
        op.showKeys = true
        #expect(json(op).contains(#""broadcast_code":"0102030405060708090a0b0c0d0e0f10""#))
        #expect(op.encode() == bytes)
    }

    @Test func receiveStateWithBadCode() {
        let bytes = Hex.parse("01 00 06 05 04 03 02 01 00 56 34 12 02 03 " + String(repeating: "aa ", count: 16) + "01 02 00 00 00 00")!
        let s = bytes.withUnsafeBytes { BASSReceiveState(bytes: $0) }
        #expect(s.error == nil)
        #expect(s.broadcastID == 0x123456)
        #expect(s.sourceAddress.description == "01:02:03:04:05:06")
        #expect(s.bigEncryption == .badCode)
        #expect(!json(s).contains("aaaa"))
        #expect(s.subgroups[0].bisSync == 2)
        #expect(s.encode() == bytes)
    }

    @Test func addSourceOperation() {
        let bytes = Hex.parse("02 01 06 05 04 03 02 01 03 56 34 12 01 ff ff 01 ff ff ff ff 00")!
        let op = bytes.withUnsafeBytes { BASSControlPointOperation(bytes: $0) }
        #expect(op.error == nil)
        #expect(op.advertisingSID == 3 && op.broadcastID == 0x123456 && op.paInterval == 0xFFFF)
        #expect(op.subgroups?[0].bisSync == 0xFFFF_FFFF)
        #expect(op.encode() == bytes)
    }

    @Test func announcementsAndName() {
        let ba = Hex.parse("56 34 12")!.withUnsafeBytes { BroadcastAudioAnnouncement(bytes: $0) }
        #expect(ba.broadcastID == 0x123456 && ba.encode() == [0x56, 0x34, 0x12])
        let pb = Hex.parse("03 00")!.withUnsafeBytes { PublicBroadcastAnnouncement(bytes: $0) }
        #expect(pb.summary == "Public Broadcast Announcement encrypted SQ")
        let an = Hex.parse("01 04 00 02 00 00")!.withUnsafeBytes { LEAudioAnnouncement(bytes: $0, ascs: true) }
        #expect(an.typeName == "Targeted" && an.availableAudioContexts?.sink == .media && an.availableAudioContexts?.source == .conversational)
        #expect(an.encode() == [1, 4, 0, 2, 0, 0])
        let name = Hex.parse("42 61 72")!.withUnsafeBytes { BroadcastName(bytes: $0) }
        #expect(name.error?.code == .invalidLength)
    }

    @Test func sirkIsAKey() {
        let bytes = Hex.parse("01 " + String(repeating: "5a ", count: 16))!
        let k = bytes.withUnsafeBytes { CSISSIRK(bytes: $0) }
        #expect(json(k) == #"{"sirk_type":1,"sirk_type_name":"Plain text","sirk":"hidden"}"#)
        #expect(k.encode() == bytes)
    }

    @Test func presetsTableHasEveryRow() {
        #expect(LEAudioPresets.codecs.count == 16)
        #expect(LEAudioPresets.unicastQoS.count == 32)
        let q = LEAudioPresets.unicastQoS.first { $0.name == "48_6_2" }!
        #expect(q.retransmissionNumber == 13 && q.maxTransportLatencyMilliseconds == 100 && q.maxSDU == 155)
        let b = LEAudioPresets.broadcastQoS.first { $0.name == "441_1_2" }!
        #expect(b.framed && b.sduIntervalMicroseconds == 8163 && b.maxTransportLatencyMilliseconds == 54)
    }
}
