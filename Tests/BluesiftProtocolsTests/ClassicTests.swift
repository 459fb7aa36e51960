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
        withBytes("41 54 2b 42") { #expect(s.feed($0).isEmpty) } // "AT+B"
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
        withBytes("12 02 07 0a 00 ff 2d 01 00 00 aa 00 30 01") { b in // LDAC 44.1/48 kHz stereo
            #expect(AVDTPSignal(bytes: b).codec?.summary == "LDAC 44100,48000 stereo")
        }
    }

    @Test func avdtpDiscoverAndReject() {
        withBytes("02 01 14 08 08 08 04 08") { b in // #295: three audio sinks
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
            #expect(
                AVCTPPDU.encode(
                    transaction: 1, response: true, ctype: 0x0C, subunit: 0x48, opcode: 0,
                    operands: Array(b[6...])) == Array(b))
        }
        withBytes("30 11 0e 00 48 7c 44 00") { b in // pass-through PLAY pressed
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
    @Test(.enabled(if: Corpus.has("a2dp_motog_lghbs730_btsnoop_hci.log"), "needs ../shared/captures/public")) func a2dpCapturePipeline() throws {
        let path = Corpus.dir.appendingPathComponent("a2dp_motog_lghbs730_btsnoop_hci.log").path
        let reader = try CaptureFile.open(path: path)
        let d = ProtocolDecoder()
        var seen: [Int: String] = [:], media = 0
        while let r = reader.next() {
            let f = d.decode(r)
            guard f.module != nil, let top = FrameLayer.mostSpecific(f.layers) else { continue }
            if let m = f.moduleLayer(AVDTPMediaPacket.self) { media += 1; if m.sbcFrames == nil { seen[r.frame] = "media without SBC" } }
            if [158, 198, 210, 391].contains(r.frame) { seen[r.frame] = top.summary(f) }
        }
        #expect(media == 1585)
        #expect(seen[158] == "SDP Service Search Attribute Response tid=1: Handsfree (RFCOMM 3) Handsfree 1.6")
        #expect(seen[198] == "RFCOMM UIH ch=3 (Handsfree) credits=12 AT+BRSF=155")
        #expect(seen[391] == "AVRCP Status GetCapabilities tid=1")
        #expect(seen.values.filter { $0 == "media without SBC" }.isEmpty)
        let conn = d.connections.first { $0.handle == 2 }
        #expect(conn?.profiles.map(\.description) == ["HFP (AG)", "A2DP (source) SBC 48000 joint stereo bitpool 2-53", "AVRCP (target)"])
    }

    @Test(.enabled(if: Corpus.has("btstack_hfp_test3.pklg"), "needs ../shared/captures/public")) func scoLinkCounted() throws {
        let path = Corpus.dir.appendingPathComponent("btstack_hfp_test3.pklg").path
        let reader = try CaptureFile.open(path: path)
        let d = ProtocolDecoder()
        while let r = reader.next() { _ = d.decode(r) }
        let sco = d.connections.filter { $0.linkType != nil }
        #expect(sco.count >= 1)
        #expect(sco.map(\.scoPackets).reduce(0, +) == 8712)
        #expect(sco.first?.airMode == 2) // CVSD, as +BCS: 1 agreed
    }
}

/// AVDTP signalling (AVDTP 1.3 §8.4.2) and AVCTP (AVCTP 1.4 §6.1.2) messages split over
/// start/continue/end packets, built here byte by byte: the end packet carries the whole
/// message; parts out of order, a wrong count and a message past the cap are notes.
@Suite struct ClassicFragmentTests {
    let h: UInt16 = 0x000B
    let store = RecordStore()

    /// Connection Complete, then an L2CAP channel for `psm`: ours 0x0040, the peer's 0x0041.
    func open(_ d: ProtocolDecoder, psm: UInt8) {
        _ = d.decode(store.h4(1, .received, "04 03 0b 00 0b 00 11 22 33 44 55 66 01 00"))
        _ = d.decode(store.record(2, .acl, .sent, acl(h, pb: 0b10, l2(0x0001, [0x02, 0x01, 0x04, 0x00, psm, 0x00, 0x40, 0x00]))))
        _ = d.decode(store.record(3, .acl, .received, acl(h, pb: 0b10, l2(0x0001, hx("03 01 08 00 41 00 40 00 00 00 00 00")))))
    }

    func received(_ d: ProtocolDecoder, _ frame: Int, _ payload: [UInt8]) -> DecodedFrame {
        d.decode(store.record(frame, .acl, .received, acl(h, pb: 0b10, l2(0x0040, payload))))
    }

    // Get All Capabilities response (§8.8): media transport, SBC, aptX (vendor 0x004F id 0x0001), delay reporting.
    static let caps = hx("01 00 07 06 00 00 ff ff 02 35 07 09 00 ff 4f 00 00 00 01 00 ff 08 00")

    @Test func avdtpStartContinueEndMakeOneMessage() {
        let d = ProtocolDecoder()
        open(d, psm: 0x19)
        let c = Self.caps
        // tid 1, Response Accept (2): start (NOSP 3, signal 0x0C), continue, end.
        let start = received(d, 4, [0x1 << 4 | 1 << 2 | 2, 3, 0x0C] + c[0..<8])
        let cont = received(d, 5, [0x1 << 4 | 2 << 2 | 2] + c[8..<16])
        let end = received(d, 6, [0x1 << 4 | 3 << 2 | 2] + c[16...])
        #expect(FrameLayer.mostSpecific(start.layers)?.summary(start) == "AVDTP Get All Capabilities Response Accept tid=1 (start packet)")
        #expect(FrameLayer.mostSpecific(cont.layers)?.summary(cont) == "AVDTP Fragment Response Accept tid=1 (continue packet)")
        guard let sig = end.moduleLayer(AVDTPSignal.self) else { Issue.record("no AVDTP layer"); return }
        #expect(end.errors.isEmpty)
        #expect(sig.signalID == .getAllCapabilities && sig.reassembled == 3 && sig.startFrame == 4)
        #expect(Array(sig.parameters) == c)
        #expect(sig.summary == "AVDTP Get All Capabilities Response Accept tid=1 (3 packets from #4) aptX 16000,32000,44100,48000 mono,stereo")
        let j = json(sig)
        #expect(j.contains(#""packet_type":"end","reassembled_packets":3,"start_frame":4"#))
        #expect(j.contains(#""codec":"SBC""#) && j.contains(#""codec":"aptX""#) && j.contains(#""name":"Delay Reporting""#))
    }

    @Test func avdtpPartsOutOfOrderAreNotes() {
        let d = ProtocolDecoder()
        open(d, psm: 0x19)
        // An end packet with no start: a note, the packet keeps its header only.
        let orphan = received(d, 4, [0x2 << 4 | 3 << 2 | 2, 0xAA])
        #expect(orphan.errors.map(\.message) == ["end packet (tid=2) without a start packet"])
        #expect(orphan.errors.first?.layer == "avdtp" && orphan.errors.first?.code == .reassembly)
        // Start announcing 3 packets, then the end: reassembled, with a note on the count.
        _ = received(d, 5, [0x3 << 4 | 1 << 2 | 2, 3, 0x0C] + Self.caps[0..<10])
        let end = received(d, 6, [0x3 << 4 | 3 << 2 | 2] + Self.caps[10...])
        #expect(end.errors.map(\.message) == ["2 packets from #5, the start packet announced 3"])
        if let sig = end.moduleLayer(AVDTPSignal.self) { #expect(sig.reassembled == 2 && Array(sig.parameters) == Self.caps) } else { Issue.record("no AVDTP layer") }
        // A second start before the first ended: the first is dropped with a note.
        _ = received(d, 7, [0x4 << 4 | 1 << 2 | 2, 2, 0x0C] + Self.caps[0..<4])
        let again = received(d, 8, [0x5 << 4 | 1 << 2 | 2, 2, 0x0C] + Self.caps[0..<4])
        #expect(again.errors.map(\.message) == ["start packet before the message started in #7 ended; that message is dropped"])
    }

    @Test func avdtpMessagePastTheCapIsDropped() {
        let d = ProtocolDecoder()
        open(d, psm: 0x19)
        let big = [UInt8](repeating: 0x55, count: 9_000)
        _ = received(d, 4, [0x1 << 4 | 1 << 2 | 2, 3, 0x0C] + big)
        let over = received(d, 5, [0x1 << 4 | 2 << 2 | 2] + big)
        #expect(over.errors.map(\.message) == ["message started in #4 is over 16384 bytes: not reassembled"])
        let end = received(d, 6, [0x1 << 4 | 3 << 2 | 2] + big)
        #expect(end.errors.isEmpty)
        if let sig = end.moduleLayer(AVDTPSignal.self) { #expect(sig.reassembled == nil && sig.packetType == 3) }
        // The next message on the channel decodes normally.
        let next = received(d, 7, [0x2 << 4 | 2, 0x0C] + Self.caps)
        if let sig = next.moduleLayer(AVDTPSignal.self) { #expect(sig.signalID == .getAllCapabilities && sig.codec != nil) } else { Issue.record("no AVDTP layer") }
    }

    @Test func avctpStartEndMakeOneAVRCPResponse() {
        let d = ProtocolDecoder()
        open(d, psm: 0x17)
        // GetElementAttributes response (AVRCP 1.6 §6.6.1): title and artist, UTF-8 (0x006A).
        func attr(_ id: UInt8, _ s: String) -> [UInt8] { [0, 0, 0, id, 0x00, 0x6A, 0, UInt8(s.utf8.count)] + Array(s.utf8) }
        let params = [2] + attr(1, "A title long enough to need two AVCTP packets") + attr(2, "Somebody")
        let avc: [UInt8] = [0x0C, 0x48, 0x00, 0x00, 0x19, 0x58, 0x20, 0x00, 0x00, UInt8(params.count)] + params
        // tl 3, response: start (2 packets, PID 0x110E) with the first 20 octets, end with the rest.
        let start = received(d, 4, [0x3 << 4 | 1 << 2 | 2, 2, 0x11, 0x0E] + avc[0..<20])
        let end = received(d, 5, [0x3 << 4 | 3 << 2 | 2] + avc[20...])
        #expect(FrameLayer.mostSpecific(start.layers)?.summary(start).hasSuffix("(start packet) tid=3") == true)
        guard let p = end.moduleLayer(AVCTPPDU.self) else { Issue.record("no AVRCP layer"); return }
        #expect(end.errors.isEmpty)
        #expect(p.pid == 0x110E && p.isResponse && p.pduID?.rawValue == 0x20 && p.reassembled == 2 && p.startFrame == 4)
        #expect(p.elementAttributes.map(\.1) == ["A title long enough to need two AVCTP packets", "Somebody"])
        #expect(p.summary == "AVRCP Stable GetElementAttributes title=\"A title long enough to need two AVCTP packets\" artist=\"Somebody\" (2 packets from #4) tid=3")
        #expect(json(p).contains(#""response":true,"packet_type":"end","reassembled_packets":2,"start_frame":4,"pid":4366"#))
        // A continue packet with no start on the other side: a note in the avrcp layer.
        let orphan = d.decode(store.record(6, .acl, .sent, acl(h, pb: 0b10, l2(0x0041, [0x4 << 4 | 2 << 2]))))
        #expect(orphan.errors.map { "\($0.layer) \($0.message)" } == ["avrcp continue packet (tid=4) without a start packet"])
    }

    /// AVRCP 1.6 §6.5.1: a GetElementAttributes response in three fragments (start, then
    /// continue and end, each asked for by RequestContinuingResponse with its own label).
    @Test func avrcpFragmentsMakeOneResponse() {
        let d = ProtocolDecoder()
        open(d, psm: 0x17)
        func attr(_ id: UInt8, _ s: String) -> [UInt8] { [0, 0, 0, id, 0x00, 0x6A, 0, UInt8(s.utf8.count)] + Array(s.utf8) }
        let title = String(repeating: "Very long title ", count: 6), artist = "Somebody"
        let params = [2] + attr(1, title) + attr(2, artist)
        // One AVCTP message (tl, response) with a vendor-dependent AV/C frame of AVRCP packet type `type`.
        func fragment(_ tl: UInt8, _ type: UInt8, _ part: ArraySlice<UInt8>) -> [UInt8] {
            [tl << 4 | 2, 0x11, 0x0E, 0x0C, 0x48, 0x00, 0x00, 0x19, 0x58, 0x20, type, 0, UInt8(part.count)] + part
        }
        func sent(_ frame: Int, _ payload: [UInt8]) -> DecodedFrame {
            d.decode(store.record(frame, .acl, .sent, acl(h, pb: 0b10, l2(0x0041, payload))))
        }
        let requestMore: (UInt8) -> [UInt8] = { tl in [tl << 4, 0x11, 0x0E, 0x00, 0x48, 0x00, 0x00, 0x19, 0x58, 0x40, 0x00, 0x00, 0x01, 0x20] }
        let start = received(d, 4, fragment(3, 1, params[0..<40]))
        #expect(FrameLayer.mostSpecific(start.layers)?.summary(start) == "AVRCP Stable GetElementAttributes (start fragment) tid=3")
        #expect(FrameLayer.avrcp.summary(sent(5, requestMore(4))) == "AVRCP Control RequestContinuingResponse tid=4")
        _ = received(d, 6, fragment(4, 2, params[40..<80]))
        _ = sent(7, requestMore(5))
        let end = received(d, 8, fragment(5, 3, params[80...]))
        guard let p = end.moduleLayer(AVCTPPDU.self) else { Issue.record("no AVRCP layer"); return }
        #expect(end.errors.isEmpty)
        #expect(p.reassembled == 3 && p.startFrame == 4 && p.avrcpPacketType == 0)
        #expect(Array(p.parameters) == params)
        #expect(p.elementAttributes.map(\.1) == [title, artist])
        #expect(p.summary == "AVRCP Stable GetElementAttributes title=\"\(title)\" artist=\"Somebody\" (3 fragments from #4) tid=5")
        #expect(json(p).contains(#""reassembled_fragments":3,"start_frame":4"#))
        // AbortContinuingResponse drops what was gathered: a later end fragment is an orphan.
        _ = received(d, 9, fragment(6, 1, params[0..<40]))
        _ = sent(10, [7 << 4, 0x11, 0x0E, 0x00, 0x48, 0x00, 0x00, 0x19, 0x58, 0x41, 0x00, 0x00, 0x01, 0x20])
        let orphan = received(d, 11, fragment(7, 3, params[40...]))
        #expect(orphan.errors.map { "\($0.layer) \($0.message)" } == ["avrcp end fragment of GetElementAttributes without a start fragment"])
    }
}
