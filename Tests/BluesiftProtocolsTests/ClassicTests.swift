import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Classic layers with bytes from the corpus (a2dp_motog_lghbs730 frame numbers given), round
/// trips for what the tool may send, malformed input, and the stateful pipeline parts.
@Suite struct ClassicTests {
    // SDP (Core 5.4 Vol 3 Part B §4.7.1): Service Search Attribute Request for Handsfree, #149.
    @Test func sdpRequestDecodesAndRoundTrips() {
        let hex = "06 00 00 00 16 35 03 19 11 1e 00 f0 35 0c 09 00 01 09 00 04 09 00 09 09 03 11 00"
        withBytes(hex) { b in
            let p = SDPPDU(bytes: b)
            #expect(p.error == nil)
            #expect(p.pduID == .serviceSearchAttributeRequest && p.transactionID == 0 && p.maximum == 0xF0)
            #expect(p.summary == "SDP Service Search Attribute Request tid=0 Handsfree")
            #expect(json(p).contains("\"attribute_ids\":[1,4,9,785]"))
            let params = Array(b[5...])
            #expect(SDPPDU.encode(pduID: p.pduID, transactionID: p.transactionID, parameters: params) == Array(b))
        }
    }

    @Test func sdpRecordSummary() {
        // The attribute list of #155+#158 joined: Handsfree on RFCOMM 3, HFP 1.6.
        let list = "36 00 32 36 00 2f 09 00 01 35 06 19 11 1e 19 12 03 09 00 04 35 0c 35 03 19 01 00 35 05 19 00 03 08 03 09 00 09 35 08 35 06 19 11 1e 09 01 06 09 03 11 09 00 3b"
        withBytes(list) { b in
            let recs = SDPServiceRecord.records(b)
            #expect(recs.count == 1)
            #expect(recs.first?.rfcommChannel == 3)
            #expect(recs.first?.summary == "Handsfree (RFCOMM 3) Handsfree 1.6")
        }
    }

    @Test func sdpLengthBeyondBytesIsANote() {
        withBytes("07 00 01 ff ff 00 0f 35") { b in
            let p = SDPPDU(bytes: b)
            #expect(p.error?.code == .truncated)
            #expect(p.error?.layer == "sdp")
        }
    }

    // RFCOMM 1.2 §5.5.3 PN on DLCI 0, #184: credit-based flow control requested for channel 3.
    @Test func rfcommPNDecodesAndRoundTrips() {
        withBytes("03 ef 15 83 11 06 f0 00 00 00 01 00 07 70") { b in
            let f = RFCOMMFrame(bytes: b)
            #expect(f.error == nil)
            #expect(f.frameType == .uih && f.dlci == 0 && f.mux?.type == .pn && f.mux?.dlci == 6)
            #expect(json(f).contains("\"flow_control\":\"credit based (request)\""))
            #expect(json(f).contains("\"max_frame_size\":256,\"initial_credits\":7"))
            #expect(RFCOMMFrame.encode(address: 0x03, control: 0xEF, information: Array(b[3..<13])) == Array(b))
        }
    }

    // #199: UIH with a credit octet carrying "\r\n+BRSF: 615\r\n".
    @Test func rfcommCreditsAndFCS() {
        let hex = "1b ff 1d 04 0d 0a 2b 42 52 53 46 3a 20 36 31 35 0d 0a 93"
        withBytes(hex) { b in
            let f = RFCOMMFrame(bytes: b)
            #expect(f.error == nil)
            #expect(f.channel == 3 && f.credits == 4 && f.information.count == 14)
            #expect(RFCOMMFrame.encode(address: 0x1B, control: 0xFF, credits: 4, information: Array(f.information)) == Array(b))
        }
        var bad = Hex.parse(hex)!
        bad[bad.count - 1] = 0x94
        bad.withUnsafeBytes { b in #expect(RFCOMMFrame(bytes: b).error?.code == .invalidValue) }
    }

    @Test func atLines() {
        let brsf = ATLine(line: "AT+BRSF=155", isCommand: true)
        #expect(brsf.command == "+BRSF" && brsf.kind == .set && brsf.arguments == "155")
        #expect(brsf.features == ["EC/NR", "three-way calling", "voice recognition", "remote volume control", "codec negotiation"])
        let ag = ATLine(line: "+BRSF: 615", isCommand: false)
        #expect(ag.kind == .result && ag.features == ["three-way calling", "EC/NR", "voice recognition", "reject call", "enhanced call status", "codec negotiation"])
        #expect(ATLine(line: "AT+BAC=1,2", isCommand: true).codecs == ["CVSD", "mSBC"])
        #expect(ATLine(line: "AT+CIND=?", isCommand: true).kind == .test)
        #expect(ATLine(line: "ATD0123456789;", isCommand: true).command == "D")
        #expect(ATLine(line: "OK", isCommand: false).kind == .basicResult)
        let cind = ATLine(line: "+CIND: (\"call\",(0,1)),(\"callsetup\",(0-3))", isCommand: false)
        #expect(cind.indicatorNames == ["call", "callsetup"])
        var s = ATLineSplitter()
        withBytes("41 54 2b 42") { #expect(s.feed($0).isEmpty) }   // "AT+B"
        withBytes("52 53 46 3d 31 0d") { #expect(s.feed($0) == ["AT+BRSF=1"]) }
    }

    // AVDTP 1.3 §8.9 Set Configuration, #335: SBC 48 kHz joint stereo, bitpool 2-53.
    @Test func avdtpSetConfigurationRoundTrips() {
        withBytes("40 03 04 04 01 00 07 06 00 00 11 15 02 35") { b in
            let s = AVDTPSignal(bytes: b)
            #expect(s.signalID == .setConfiguration && s.messageType == .command && s.transaction == 4 && s.acpSEID == 1)
            #expect(s.codec?.summary == "SBC 48000 joint stereo bitpool 2-53")
            #expect(AVDTPSignal.encode(transaction: 4, messageType: .command, signal: .setConfiguration, parameters: Array(b[2...])) == Array(b))
        }
    }

    // #308: Get Capabilities response with the aptX vendor codec (vendor 0x4F, codec 0x0001).
    @Test func avdtpVendorCodec() {
        withBytes("12 02 01 00 07 09 00 ff 4f 00 00 00 01 00 f2") { b in
            let s = AVDTPSignal(bytes: b)
            #expect(s.codec?.name == "aptX")
            #expect(s.codec?.summary == "aptX 16000,32000,44100,48000 stereo")
        }
        withBytes("12 02 07 0a 00 ff 2d 01 00 00 aa 00 30 01") { b in   // LDAC 44.1/48 kHz stereo
            #expect(AVDTPSignal(bytes: b).codec?.summary == "LDAC 44100,48000 stereo")
        }
    }

    @Test func avdtpDiscoverAndReject() {
        withBytes("02 01 14 08 08 08 04 08") { b in   // #295: three audio sinks
            #expect(AVDTPSignal(bytes: b).summary == "AVDTP Discover Response Accept tid=0 [SEID 5 Audio Sink] [SEID 2 Audio Sink] [SEID 1 Audio Sink]")
        }
        withBytes("33 03 07 29") { b in
            #expect(AVDTPSignal(bytes: b).errorCode?.name == "UNSUPPORTED_CONFIGURATION")
        }
        withBytes("") { b in #expect(AVDTPSignal(bytes: b).error?.code == .truncated) }
    }

    // RFC 3550 header + A2DP §4.3.4 SBC payload header, #500.
    @Test func mediaPacket() {
        withBytes("80 60 00 27 00 00 61 80 00 00 00 00 05 9c fd 33") { b in
            let m = AVDTPMediaPacket(bytes: b, codecType: 0)
            #expect(m.sequence == 39 && m.timestamp == 0x6180 && m.sbcFrames == 5)
        }
    }

    // AVCTP 1.4 §6.1 / AVRCP 1.6 §6.4 GetCapabilities response, #392.
    @Test func avrcpVendorDependentRoundTrips() {
        withBytes("12 11 0e 0c 48 00 00 19 58 10 00 00 06 03 04 01 02 05 08") { b in
            let p = AVCTPPDU(bytes: b, browsing: false)
            #expect(p.pid == 0x110E && p.ctype?.name == "Stable" && p.pduID?.name == "GetCapabilities" && p.isResponse)
            #expect(AVCTPPDU.encode(transaction: 1, response: true, ctype: 0x0C, subunit: 0x48, opcode: 0,
                                    operands: Array(b[6...])) == Array(b))
        }
        withBytes("30 11 0e 00 48 7c 44 00") { b in   // pass-through PLAY pressed
            #expect(AVCTPPDU(bytes: b, browsing: false).summary == "AVRCP Control PLAY pressed tid=3")
        }
        // GetElementAttributes response: title "Song".
        withBytes("42 11 0e 0c 48 00 00 19 58 20 00 00 0d 01 00 00 00 01 00 6a 00 04 53 6f 6e 67") { b in
            let p = AVCTPPDU(bytes: b, browsing: false)
            #expect(p.elementAttributes.first?.1 == "Song")
            #expect(p.summary.contains("title=\"Song\""))
        }
    }

    /// Whole capture: SDP names RFCOMM channel 3, AT lines and +CIEV names, AVRCP on a channel
    /// whose ERTM proposal was refused (#324/#327) is basic mode, media packets, `info` profiles.
    @Test func a2dpCapturePipeline() throws {
        let path = Corpus.dir.appendingPathComponent("a2dp_motog_lghbs730_btsnoop_hci.log").path
        guard FileManager.default.fileExists(atPath: path) else { return }
        let reader = try CaptureFile.open(path: path)
        let d = ProtocolDecoder()
        var seen: [Int: String] = [:], media = 0
        while let r = reader.next() {
            let f = d.decode(r)
            guard let c = f.classic else { continue }
            if case .media(let m) = c { media += 1; if m.sbcFrames == nil { seen[r.frame] = "media without SBC" } }
            if [158, 198, 210, 391].contains(r.frame) { seen[r.frame] = c.summary }
        }
        #expect(media == 1585)
        #expect(seen[158] == "SDP Service Search Attribute Response tid=1: Handsfree (RFCOMM 3) Handsfree 1.6")
        #expect(seen[198] == "RFCOMM UIH ch=3 (Handsfree) credits=12 AT+BRSF=155")
        #expect(seen[391] == "AVRCP Status GetCapabilities tid=1")
        #expect(seen.values.filter { $0 == "media without SBC" }.isEmpty)
        let conn = d.connections.first { $0.handle == 2 }
        #expect(conn?.profiles.map(\.description) == ["HFP (AG)", "A2DP (source) SBC 48000 joint stereo bitpool 2-53", "AVRCP (target)"])
    }

    @Test func scoLinkCounted() throws {
        let path = Corpus.dir.appendingPathComponent("btstack_hfp_test3.pklg").path
        guard FileManager.default.fileExists(atPath: path) else { return }
        let reader = try CaptureFile.open(path: path)
        let d = ProtocolDecoder()
        while let r = reader.next() { _ = d.decode(r) }
        let sco = d.connections.filter { $0.linkType != nil }
        #expect(sco.count >= 1)
        #expect(sco.map(\.scoPackets).reduce(0, +) == 8712)
        #expect(sco.first?.airMode == 2)   // CVSD, as +BCS: 1 agreed
    }
}
