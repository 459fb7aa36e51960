import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Sniffed LE Audio (Sources/BluesiftProtocols/LEAudio/LL/): the LL CIS control PDUs, CIS and
/// BIS PDUs and the periodic advertising train, each decoded and encoded back, and a sniffed
/// capture built from bytes (pcap LINKTYPE 256) read through the decoder's LL carriers and
/// compared field by field with tshark's btle dissector.
@Suite struct LEAudioAirTests {
    static func bytes(_ hex: String) -> [UInt8] { Hex.parse(hex)! }

    // MARK: - The PDU types, both ways

    /// §2.4.2.29: every field at a distinct value, Framed set, RFU clear.
    static let cisReqCtrData = bytes(
        "01 02 02 02 64 80 78 00 10 27 00 10 27 00 64 00 78 00 03 c4 09 00 21 02 02 08 00 10 00 00 20 00 00 05 00")

    @Test func cisControlPDUsRoundTrip() {
        Self.cisReqCtrData.withUnsafeBytes { p in
            let r = LLCISReq(.cisReq, p)!
            #expect(r.cigID == 1 && r.cisID == 2 && r.phyCToP == 2 && r.phyPToC == 2)
            #expect(r.maxSDUCToP == 100 && r.framed && r.maxSDUPToC == 120)
            #expect(r.sduIntervalCToP == 10_000 && r.sduIntervalPToC == 10_000)
            #expect(r.maxPDUCToP == 100 && r.maxPDUPToC == 120 && r.nse == 3 && r.subInterval == 2500)
            #expect(r.bnCToP == 1 && r.bnPToC == 2 && r.ftCToP == 2 && r.ftPToC == 2 && r.isoInterval == 8)
            #expect(r.cisOffsetMin == 16 && r.cisOffsetMax == 32 && r.connEventCount == 5)
            #expect(r.encode() == [0x1F] + Self.cisReqCtrData)
        }
        let rsp = Self.bytes("11 00 00 22 00 00 06 00")
        rsp.withUnsafeBytes { p in
            let r = LLCISRsp(.cisRsp, p)!
            #expect(r.cisOffsetMin == 17 && r.cisOffsetMax == 34 && r.connEventCount == 6)
            #expect(r.encode() == [0x20] + rsp)
        }
        let ind = Self.bytes("19 2c 7d 6b 18 00 00 e8 03 00 d0 07 00 07 00")
        ind.withUnsafeBytes { p in
            let r = LLCISInd(.cisInd, p)!
            #expect(r.accessAddress == 0x6B7D_2C19 && r.cisOffset == 24 && r.cigSyncDelay == 1000 && r.cisSyncDelay == 2000)
            #expect(r.connEventCount == 7)
            #expect(r.encode() == [0x21] + ind)
        }
        [UInt8]([1, 2, 0x13]).withUnsafeBytes { p in
            let t = LLCISTerminateInd(.cisTerminateInd, p)!
            #expect(t.cigID == 1 && t.cisID == 2 && t.errorCode == 0x13 && t.encode() == [0x22, 1, 2, 0x13])
            // Too short for its opcode, or another opcode: none.
            #expect(LLCISControl(.cisInd, p) == nil)
            #expect(LLCISControl(.cisTerminateInd, p) == .terminate(t))
        }
    }

    @Test func isochronousPDUsRoundTrip() {
        // CIS: LLID 0b10, NESN 1, SN 0, CIE 1, NPI 0; one framed segment: SC 0, CMPLT 1,
        // Time_Offset 0x000123, 4 data octets.
        let cis = Self.bytes("16 09 02 07 23 01 00 aa bb cc dd")
        cis.withUnsafeBytes { p in
            let v = LLIsochronousPDU(.cis, bytes: p)
            #expect(v.llid == 2 && v.nesn && !v.sn && v.cie && !v.npi && v.length == 9 && v.error == nil)
            #expect(v.encode() == cis)
            let (s, e) = ISOALSegment.segments(v.payload)
            #expect(e == nil && s.count == 1)
            #expect(s.first == ISOALSegment(continuation: false, complete: true, timeOffset: 0x123, data: [0xAA, 0xBB, 0xCC, 0xDD]))
            #expect(s.first?.encode() == Array(cis[2...]))
        }
        // BIS: LLID 0b00, CSSN 5, CSTF 1 (the bit a data PDU's CP would be).
        let bis = Self.bytes("34 03 01 02 03")
        bis.withUnsafeBytes { p in
            let v = LLIsochronousPDU(.bis, bytes: p)
            #expect(v.llid == 0 && v.cssn == 5 && v.cstf && v.payload == [1, 2, 3] && v.encode() == bis)
        }
        // Null PDU (NPI) and a cut one.
        #expect(LLIsochronousPDU(cis: 0, nesn: false, sn: true, cie: false, npi: true, payload: []).encode() == [0x48, 0x00])
        Self.bytes("00 05 01").withUnsafeBytes { p in #expect(LLIsochronousPDU(.cis, bytes: p).error?.code == .truncated) }
        // BIG Control PDUs (§2.6.3).
        let term = BIGControlPDU([0x01, 0x13, 0x64, 0x00])
        #expect(term == .terminateInd(reason: 0x13, instant: 100) && term?.encode() == [0x01, 0x13, 0x64, 0x00])
        let map = BIGControlPDU([0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x0A, 0x00])
        #expect(map == .channelMapInd(channelMap: 0x1F_FFFF_FFFF, instant: 10) && map?.encode() == [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x0A, 0x00])
        // A first segment too short for its Time_Offset.
        #expect(ISOALSegment.segments([0x00, 0x02, 0x01, 0x02]).error?.code == .invalidLength)
    }

    @Test func periodicAdvertisingPDUsRoundTrip() throws {
        let big = Self.bigInfo(encrypted: true)
        let b = try #require(big.withUnsafeBytes { LLBIGInfo($0) })
        #expect(b.bigOffset == 0x123 && b.bigOffsetUnits == 1 && b.isoInterval == 8 && b.numBIS == 2)
        #expect(b.nse == 4 && b.bn == 2 && b.subInterval == 4000 && b.pto == 1 && b.bisSpacing == 2000 && b.irc == 2)
        #expect(b.maxPDU == 100 && b.seedAccessAddress == 0x4D2A_1C3B && b.sduInterval == 10_000 && b.maxSDU == 100)
        #expect(b.baseCRCInit == 0xA5C3 && b.channelMap == 0x1F_FFFF_FFFF && b.phy == 1 && b.bisPayloadCount == 0x12_3456 && b.framed)
        #expect(b.encrypted && b.giv == Array(repeating: 0x11, count: 8) && b.gskd == Array(repeating: 0x22, count: 16))
        #expect(b.encode() == big)
        #expect(Self.bigInfo(encrypted: false).withUnsafeBytes { LLBIGInfo($0) }?.encode() == Self.bigInfo(encrypted: false))
        // §2.1.2 with the seed above: tshark 4.0's btcommon.eir_ad.entry.biginfo.bis_access_address.
        #expect(b.bisAccessAddresses == [0xB02C_1C3B, 0x4C1A_1C3B])

        let sync = Self.syncInfo()
        let s = try #require(sync.withUnsafeBytes { LLSyncInfo($0) })
        #expect(s.syncPacketOffset == 0x2A && s.offsetUnits == 1 && s.offsetAdjust == 0 && s.interval == 80)
        #expect(s.channelMap == 0x1F_FFFF_FFFF && s.sca == 5 && s.accessAddress == Self.trainAA && s.crcInit == 0x5A_A55A && s.eventCounter == 3)
        var w = ByteWriter(capacity: 18)
        s.encode(into: &w)
        #expect(w.bytes == sync)

        let pdu = Self.auxSyncInd()
        pdu.withUnsafeBytes { p in
            let v = LLPeriodicAdvertisingPDU(kind: .auxSyncInd, bytes: p)
            #expect(v.error == nil && v.flags == 0x10 && v.auxPtr == LLAuxPtr(channelIndex: 12, clockAccuracy: 1, offsetUnits: 0, auxOffset: 100, auxPHY: 1))
            #expect(v.bigInfo?.numBIS == 2 && v.advData == Self.baseAD)
            #expect(v.encode() == pdu)
        }
    }

    // MARK: - A sniffed capture from bytes

    static let aclAA: UInt32 = 0x5065_4A27, aclCRCInit: UInt32 = 0x12_3456
    static let cisAA: UInt32 = 0x6B7D_2C19
    static let trainAA: UInt32 = 0x2F8E_3D4C
    static let seed: UInt32 = 0x4D2A_1C3B

    static func syncInfo() -> [UInt8] {
        // Offset 0x2A in 300 µs units, interval 80 (100 ms), all channels, SCA 5, AA, CRCInit, counter 3.
        var w = ByteWriter(capacity: 18)
        w.writeUInt16(0x2A | 1 << 13); w.writeUInt16(80)
        w.writeUInt(0x1F_FFFF_FFFF | 5 << 37, size: 5, endianness: .little)
        w.writeUInt32(trainAA); w.writeLE(0x5A_A55A, 3); w.writeUInt16(3)
        return w.bytes
    }

    static func bigInfo(encrypted: Bool) -> [UInt8] {
        var w = ByteWriter(capacity: 57)
        w.writeUInt32(0x123 | 1 << 14 | 8 << 15 | 2 << 27)
        w.writeUInt32(4 | 2 << 5 | 4000 << 8 | 1 << 28)
        w.writeLE(2000 | 2 << 20, 3)
        w.writeUInt8(100); w.writeUInt8(0); w.writeUInt32(seed)
        w.writeUInt32(10_000 | 100 << 20); w.writeUInt16(0xA5C3)
        w.writeUInt(0x1F_FFFF_FFFF | 1 << 37, size: 5, endianness: .little)
        w.writeUInt(0x12_3456 | 1 << 39, size: 5, endianness: .little)
        if encrypted { w.writeBytes(Array(repeating: 0x11, count: 8)); w.writeBytes(Array(repeating: 0x22, count: 16)) }
        return w.bytes
    }

    /// Service data 0x1851: a BASE, 40 ms presentation delay, one subgroup of LC3 48 kHz 10 ms
    /// 100 octets, one BIS (index 1, front left).
    static let baseAD: [UInt8] = {
        let base = bytes("51 18 40 9c 00 01 01 06 00 00 00 00 0a 02 01 08 02 02 01 03 04 64 00 00 01 06 05 03 01 00 00 00")
        return [UInt8(base.count + 1), 0x16] + base
    }()

    static func auxSyncInd() -> [UInt8] {
        let big = bigInfo(encrypted: false)
        var p = LLPeriodicAdvertisingPDU(kind: .auxSyncInd, flags: 0x10, acad: [UInt8(big.count + 1), 0x2C] + big, advData: baseAD)
        p.auxPtr = LLAuxPtr(channelIndex: 12, clockAccuracy: 1, offsetUnits: 0, auxOffset: 100, auxPHY: 1)
        return p.encode()
    }

    /// AUX_ADV_IND (secondary channel): AdvA, ADI, SyncInfo; AdvData: a Broadcast Audio
    /// Announcement (Broadcast_ID 0x123456) and a Broadcast_Name.
    static func auxAdvInd() -> [UInt8] {
        var ext = ByteWriter(capacity: 40)
        ext.writeUInt8(0x01 | 0x08 | 0x20)
        ext.writeBytes(bytes("66 55 44 33 22 c1")); ext.writeUInt16(0x1001); ext.writeBytes(syncInfo())
        let adv = bytes("06 16 52 18 56 34 12 05 30 44 65 6d 6f")
        let payload = [UInt8(ext.bytes.count)] + ext.bytes + adv
        return [0x47, UInt8(payload.count)] + payload
    }

    struct Packet { var t: Int; var aa: UInt32; var pdu: [UInt8]; var crcInit: UInt32; var rfType: UInt16; var channel: UInt8 }

    /// Frames: 1 CONNECT_IND; 2 LL_CIS_REQ; 3 LL_CIS_RSP; 4 LL_CIS_IND; 5 CIS PDU unframed
    /// (C→P); 6 CIS null PDU (P→C); 7 CIS PDU framed (C→P); 8 LL_CIS_TERMINATE_IND;
    /// 9 AUX_ADV_IND; 10 AUX_SYNC_IND; 11 AUX_CHAIN_IND; 12 BIS 1 PDU; 13 BIS 2 PDU with CSTF;
    /// 14 BIG_TERMINATE_IND; 15 frame 7 again (a retransmission: same SN and bytes; after the
    /// terminate, as the decoder follows the capture's order only); 16 CIS PDU P→C, unframed
    /// SDU start.
    static func packets() -> [Packet] {
        var out: [Packet] = []
        func add(_ t: Int, _ aa: UInt32, _ pdu: [UInt8], _ crcInit: UInt32, _ rfType: UInt16, channel: UInt8 = 5) {
            out.append(Packet(t: t, aa: aa, pdu: pdu, crcInit: crcInit, rfType: rfType, channel: channel))
        }
        var connect = ByteWriter(capacity: 34)
        connect.writeBytes(bytes("01 02 03 04 05 c6 11 12 13 14 15 d6")); connect.writeUInt32(aclAA); connect.writeLE(aclCRCInit, 3)
        connect.writeUInt8(2); connect.writeUInt16(0); connect.writeUInt16(24); connect.writeUInt16(0); connect.writeUInt16(100)
        connect.writeBytes(bytes("ff ff ff ff 1f 05"))
        add(1_000, LLPacket.advertisingAccessAddress, [0xC5, 34] + connect.bytes, LLCRC.advertisingInit, 0, channel: 0)
        let ctrl: (Int, Bool, Bool, [UInt8]) -> Void = { t, fromCentral, sn, payload in
            add(t, aclAA, [0x03 | (sn ? 0x08 : 0) | (fromCentral ? 0 : 0x04), UInt8(payload.count)] + payload, aclCRCInit, fromCentral ? 2 : 3)
        }
        ctrl(10_000, true, false, [0x1F] + cisReqCtrData)
        ctrl(10_150, false, false, bytes("20 11 00 00 22 00 00 06 00"))
        ctrl(40_000, true, true, bytes("21 19 2c 7d 6b 18 00 00 e8 03 00 d0 07 00 07 00"))
        add(50_000, cisAA, LLIsochronousPDU(cis: 0, nesn: false, sn: false, cie: false, npi: false, payload: Array(0..<40)).encode(), aclCRCInit, 4)
        add(50_300, cisAA, LLIsochronousPDU(cis: 0, nesn: true, sn: false, cie: true, npi: true, payload: []).encode(), aclCRCInit, 5)
        add(60_000, cisAA, framedCIS, aclCRCInit, 4)
        ctrl(90_000, true, false, bytes("22 01 02 13"))
        add(200_000, LLPacket.advertisingAccessAddress, auxAdvInd(), LLCRC.advertisingInit, 1, channel: 10)
        add(300_000, trainAA, auxSyncInd(), 0x5A_A55A, 1, channel: 13)
        var chain = LLPeriodicAdvertisingPDU(kind: .auxChainInd, flags: 0x00, advData: bytes("05 ff 59 00 01 02"))
        chain.header = 0x07
        add(303_000, trainAA, chain.encode(), 0x5A_A55A, 1, channel: 14)
        let big = bigInfo(encrypted: false).withUnsafeBytes { LLBIGInfo($0) }!
        add(310_000, big.bisAccessAddresses[0], LLIsochronousPDU(bis: 0, cssn: 0, cstf: false, payload: Array(100..<140)).encode(), big.crcInit(bis: 1), 6)
        add(312_000, big.bisAccessAddresses[1], LLIsochronousPDU(bis: 0, cssn: 1, cstf: true, payload: [9, 8, 7]).encode(), big.crcInit(bis: 2), 6)
        add(
            320_000, big.controlAccessAddress, LLIsochronousPDU(bis: 3, cssn: 1, cstf: false, payload: [0x01, 0x13, 0x64, 0x00]).encode(),
            big.crcInit(bis: 0), 6)
        add(400_000, cisAA, framedCIS, aclCRCInit, 4)
        add(400_300, cisAA, bytes("05 03 01 02 03"), aclCRCInit, 5)
        return out
    }

    /// LLID 0b10, NESN 1, SN 1, CIE 1; one whole SDU in one segment.
    static let framedCIS = bytes("1e 09 02 07 23 01 00 aa bb cc dd")

    /// pcap, LINKTYPE 256: the RF header (channel, signal, noise, AA offenses, reference AA,
    /// flags: dewhitened, signal valid, reference AA valid, CRC checked and valid, PDU type),
    /// then access address, PDU, CRC.
    static func pcap() -> [UInt8] {
        var w = ByteWriter(capacity: 4096)
        w.writeUInt32(0xA1B2_C3D4); w.writeUInt16(2); w.writeUInt16(4); w.writeUInt32(0); w.writeUInt32(0); w.writeUInt32(65535); w.writeUInt32(256)
        for p in packets() {
            var r = ByteWriter(capacity: 300)
            r.writeUInt8(p.channel); r.writeUInt8(UInt8(bitPattern: -50)); r.writeUInt8(UInt8(bitPattern: -90)); r.writeUInt8(0)
            r.writeUInt32(p.aa); r.writeUInt16(0x0001 | 0x0002 | 0x0010 | 0x0400 | 0x0800 | p.rfType << 7)
            r.writeUInt32(p.aa); r.writeBytes(p.pdu)
            r.writeLE(p.pdu.withUnsafeBytes { LLCRC.compute($0, crcInit: p.crcInit) }, 3)
            w.writeUInt32(UInt32(p.t / 1_000_000)); w.writeUInt32(UInt32(p.t % 1_000_000))
            w.writeUInt32(UInt32(r.bytes.count)); w.writeUInt32(UInt32(r.bytes.count)); w.writeBytes(r.bytes)
        }
        return w.bytes
    }

    static func writeCapture() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-le-audio-air-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("air.pcap").path
        try Data(pcap()).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The `le_audio` layer of each frame that has one.
    static func decoded(_ path: String) throws -> [Int: LEAudioAirLayer] {
        let reader = try CaptureFile.open(path: path)
        let decoder = ProtocolDecoder()
        var out: [Int: LEAudioAirLayer] = [:]
        while let r = reader.next() {
            let f = decoder.decode(r)
            #expect(f.errors.isEmpty, "frame \(r.frame): \(f.errors.map(\.message))")
            if let v = f.moduleLayer(LEAudioAirLayer.self) { out[r.frame] = v }
        }
        return out
    }

    @Test func sniffedCaptureReachesLEAudioThroughTheLLCarriers() throws {
        let path = try Self.writeCapture()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let v = try Self.decoded(path)
        #expect(v.keys.sorted() == [2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16])
        #expect(v[2]?.cisControl == .request(Self.cisReqCtrData.withUnsafeBytes { LLCISReq(ctrData: $0) }))
        #expect(v[4]?.name(LEAudio.layer) == "LL_CIS_IND")
        // The CIS learnt from LL_CIS_IND, its IDs and framing from LL_CIS_REQ.
        let unframed = try #require(v[5]?.isochronous)
        #expect(unframed.stream == .cis && unframed.llid == 0 && unframed.payload == Array(0..<40))
        #expect(v[5]?.summary(LEAudio.layer) == "CIG 1 CIS 2 SN 0 NESN 0, unframed, SDU end or complete, 40 B")
        #expect(v[6]?.isochronous?.npi == true && v[6]?.isochronous?.cie == true)
        #expect(v[7]?.segments == [ISOALSegment(continuation: false, complete: true, timeOffset: 0x123, data: [0xAA, 0xBB, 0xCC, 0xDD])])
        #expect(v[8]?.cisControl == .terminate(LLCISTerminateInd(cigID: 1, cisID: 2, errorCode: 0x13)))
        // The train learnt from AUX_ADV_IND's SyncInfo; the BASE by LE Audio's BASE code.
        #expect(v[10]?.periodic?.kind == .auxSyncInd && v[10]?.bigInfo?.numBIS == 2)
        guard case .base(let base)? = v[10]?.advertising.first else { Issue.record("no BASE in frame 10"); return }
        #expect(base.presentationDelay == 40_000 && base.subgroups.count == 1 && base.subgroups.first?.bises.first?.index == 1)
        #expect(v[11]?.periodic?.kind == .auxChainInd)
        // The BISes learnt from BIGInfo; CSTF is not a CP bit; BIG control on BIS 0.
        #expect(v[12]?.isochronous?.payload == Array(100..<140) && v[12]?.stream?.bis == 1)
        #expect(v[13]?.isochronous?.cstf == true && v[13]?.isochronous?.payload == [9, 8, 7] && v[13]?.stream?.bis == 2)
        #expect(v[14]?.bigControl == .terminateInd(reason: 0x13, instant: 100) && v[14]?.name(LEAudio.layer) == "BIG_TERMINATE_IND")
    }

    // MARK: - tshark

    static var tshark: String? {
        ["/usr/bin/tshark", "/usr/local/bin/tshark"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// tshark's values of `fields` per frame ("" when absent; several joined by ",").
    static func tsharkFields(_ path: String, _ fields: [String]) throws -> [Int: [String: String]] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tshark!)
        p.arguments = ["-r", path, "-T", "fields", "-E", "separator=|", "-e", "frame.number"] + fields.flatMap { ["-e", $0] }
        let pipe = Pipe(), errors = Pipe()
        p.standardOutput = pipe
        p.standardError = errors
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "tshark: \(said)")
        var out: [Int: [String: String]] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let cols = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard let n = Int(cols[0]) else { continue }
            out[n] = Dictionary(uniqueKeysWithValues: zip(fields, cols.dropFirst()))
        }
        return out
    }

    /// A number as tshark prints it (decimal, or 0x hex).
    static func number(_ s: String?) -> UInt64? {
        guard let s = s?.split(separator: ",").first.map(String.init), !s.isEmpty else { return nil }
        return s.hasPrefix("0x") ? UInt64(s.dropFirst(2), radix: 16) : UInt64(s)
    }

    @Test(.enabled(if: tshark != nil, "needs tshark (Debian's tshark package)"))
    func fieldsAgreeWithTshark() throws {
        let path = try Self.writeCapture()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let ours = try Self.decoded(path)
        let control = [
            "btle.control_opcode", "btle.control.cig_id", "btle.control.cis_id", "btle.control.max_sdu_m_to_s",
            "btle.control.framed", "btle.control.max_sdu_s_to_m", "btle.control.sdu_interval_m_to_s", "btle.control.sdu_interval_s_to_m",
            "btle.control.max_pdu_m_to_s", "btle.control.max_pdu_s_to_m", "btle.control.num_sub_events", "btle.control.sub_interval",
            "btle.control.bn_m_to_s", "btle.control.bn_s_to_m", "btle.control.ft_m_to_s", "btle.control.ft_s_to_m",
            "btle.control.iso_interval", "btle.control.cis_offset_min", "btle.control.cis_offset_max", "btle.control.conn_event_count",
            "btle.control.access_address", "btle.control.cis_offset", "btle.control.cig_sync_delay", "btle.control.cis_sync_delay",
            "btle.control.error_code"
        ]
        let header = [
            "btle_rf.pdu_type", "btle.data_header.llid", "btle.data_header.next_expected_sequence_number", "btle.data_header.sequence_number",
            "btle.data_header.close_isochronous_event", "btle.data_header.null_pdu_indicator",
            "btle.data_header.control_subevent_sequence_number", "btle.data_header.control_subevent_transmission_flag",
            "btle.data_header.length", "btle.big_control_opcode"
        ]
        let big = [
            "btcommon.eir_ad.entry.biginfo.big_offset", "btcommon.eir_ad.entry.biginfo.big_offset_units",
            "btcommon.eir_ad.entry.biginfo.iso_interval", "btcommon.eir_ad.entry.biginfo.num_bis", "btcommon.eir_ad.entry.biginfo.nse",
            "btcommon.eir_ad.entry.biginfo.bn", "btcommon.eir_ad.entry.biginfo.sub_interval", "btcommon.eir_ad.entry.biginfo.pto",
            "btcommon.eir_ad.entry.biginfo.bis_spacing", "btcommon.eir_ad.entry.biginfo.irc", "btcommon.eir_ad.entry.biginfo.max_pdu",
            "btcommon.eir_ad.entry.biginfo.seed_access_address", "btcommon.eir_ad.entry.biginfo.sdu_interval",
            "btcommon.eir_ad.entry.biginfo.max_sdu", "btcommon.eir_ad.entry.biginfo.base_crc_init", "btcommon.eir_ad.entry.biginfo.phy",
            "btcommon.eir_ad.entry.biginfo.bis_payload_count", "btcommon.eir_ad.entry.biginfo.framing",
            "btcommon.eir_ad.entry.biginfo.bis_access_address",
            "btle.extended_advertising_header.aux_pointer.channel", "btle.extended_advertising_header.aux_pointer.ca",
            "btle.extended_advertising_header.aux_pointer.offset_units", "btle.extended_advertising_header.aux_pointer.aux_offset",
            "btle.extended_advertising_header.aux_pointer.aux_phy",
            "btle.extended_advertising_header.sync_info.sync_offset", "btle.extended_advertising_header.sync_info.offset_units",
            "btle.extended_advertising_header.sync_info.interval", "btle.extended_advertising_header.sync_info.sleep_clock_accuracy",
            "btle.extended_advertising_header.sync_info.access_address", "btle.extended_advertising_header.sync_info.crc_init",
            "btle.extended_advertising_header.sync_info.event_counter"
        ]
        let theirs = try Self.tsharkFields(path, control + header + big)
        var compared = 0, agree = 0
        func check(_ frame: Int, _ field: String, _ value: UInt64?) {
            let t = Self.number(theirs[frame]?[field])
            compared += 1
            if t == value { agree += 1 } else { Issue.record("frame \(frame) \(field): ours \(String(describing: value)), tshark \(theirs[frame]?[field] ?? "-")") }
        }
        // LL_CIS_REQ / RSP / IND / TERMINATE_IND, every field tshark shows.
        if case .request(let r)? = ours[2]?.cisControl {
            let values: [(String, UInt64)] = [
                ("btle.control_opcode", 0x1F), ("btle.control.cig_id", UInt64(r.cigID)), ("btle.control.cis_id", UInt64(r.cisID)),
                ("btle.control.max_sdu_m_to_s", UInt64(r.maxSDUCToP)), ("btle.control.framed", r.framed ? 1 : 0),
                ("btle.control.max_sdu_s_to_m", UInt64(r.maxSDUPToC)), ("btle.control.sdu_interval_m_to_s", UInt64(r.sduIntervalCToP)),
                ("btle.control.sdu_interval_s_to_m", UInt64(r.sduIntervalPToC)), ("btle.control.max_pdu_m_to_s", UInt64(r.maxPDUCToP)),
                ("btle.control.max_pdu_s_to_m", UInt64(r.maxPDUPToC)), ("btle.control.num_sub_events", UInt64(r.nse)),
                ("btle.control.sub_interval", UInt64(r.subInterval)), ("btle.control.bn_m_to_s", UInt64(r.bnCToP)),
                ("btle.control.bn_s_to_m", UInt64(r.bnPToC)), ("btle.control.ft_m_to_s", UInt64(r.ftCToP)),
                ("btle.control.ft_s_to_m", UInt64(r.ftPToC)), ("btle.control.iso_interval", UInt64(r.isoInterval)),
                ("btle.control.cis_offset_min", UInt64(r.cisOffsetMin)), ("btle.control.cis_offset_max", UInt64(r.cisOffsetMax)),
                ("btle.control.conn_event_count", UInt64(r.connEventCount))
            ]
            for (field, value) in values { check(2, field, value) }
        } else {
            Issue.record("frame 2 is not LL_CIS_REQ")
        }
        if case .response(let r)? = ours[3]?.cisControl {
            check(3, "btle.control.cis_offset_min", UInt64(r.cisOffsetMin)); check(3, "btle.control.cis_offset_max", UInt64(r.cisOffsetMax))
            check(3, "btle.control.conn_event_count", UInt64(r.connEventCount))
        } else {
            Issue.record("frame 3 is not LL_CIS_RSP")
        }
        if case .indication(let i)? = ours[4]?.cisControl {
            check(4, "btle.control.access_address", UInt64(i.accessAddress)); check(4, "btle.control.cis_offset", UInt64(i.cisOffset))
            check(4, "btle.control.cig_sync_delay", UInt64(i.cigSyncDelay)); check(4, "btle.control.cis_sync_delay", UInt64(i.cisSyncDelay))
            check(4, "btle.control.conn_event_count", UInt64(i.connEventCount))
        } else {
            Issue.record("frame 4 is not LL_CIS_IND")
        }
        if case .terminate(let t)? = ours[8]?.cisControl {
            check(8, "btle.control.cig_id", UInt64(t.cigID)); check(8, "btle.control.cis_id", UInt64(t.cisID))
            check(8, "btle.control.error_code", UInt64(t.errorCode))
        } else {
            Issue.record("frame 8 is not LL_CIS_TERMINATE_IND")
        }
        // CIS and BIS headers.
        for frame in [5, 6, 7, 12, 13, 14, 15, 16] {
            guard let p = ours[frame]?.isochronous else { Issue.record("frame \(frame): no isochronous PDU"); continue }
            // The direction read off the RF header: PDU type 4 C→P, 5 P→C, 6 broadcast.
            let type: UInt64? = ours[frame]?.fromCentral.map { $0 ? 4 : 5 } ?? (p.stream == .bis ? 6 : nil)
            check(frame, "btle_rf.pdu_type", type)
            check(frame, "btle.data_header.llid", UInt64(p.llid)); check(frame, "btle.data_header.length", UInt64(p.length))
            if p.stream == .cis {
                check(frame, "btle.data_header.next_expected_sequence_number", p.nesn ? 1 : 0)
                check(frame, "btle.data_header.sequence_number", p.sn ? 1 : 0)
                check(frame, "btle.data_header.close_isochronous_event", p.cie ? 1 : 0)
                check(frame, "btle.data_header.null_pdu_indicator", p.npi ? 1 : 0)
            } else {
                check(frame, "btle.data_header.control_subevent_sequence_number", UInt64(p.cssn))
                check(frame, "btle.data_header.control_subevent_transmission_flag", p.cstf ? 1 : 0)
            }
            if p.isBIGControl { check(frame, "btle.big_control_opcode", p.payload.first.map(UInt64.init)) }
        }
        // BIGInfo in the ACAD, AuxPtr, and the SyncInfo of the AUX_ADV_IND (frame 9, adv layer).
        if let b = ours[10]?.bigInfo, let a = ours[10]?.periodic?.auxPtr {
            let values: [(String, UInt64)] = [
                ("big_offset", UInt64(b.bigOffset)), ("big_offset_units", UInt64(b.bigOffsetUnits)), ("iso_interval", UInt64(b.isoInterval)),
                ("num_bis", UInt64(b.numBIS)), ("nse", UInt64(b.nse)), ("bn", UInt64(b.bn)), ("sub_interval", UInt64(b.subInterval)),
                ("pto", UInt64(b.pto)), ("bis_spacing", UInt64(b.bisSpacing)), ("irc", UInt64(b.irc)), ("max_pdu", UInt64(b.maxPDU)),
                ("seed_access_address", UInt64(b.seedAccessAddress)), ("sdu_interval", UInt64(b.sduInterval)),
                ("max_sdu", UInt64(b.maxSDU)), ("base_crc_init", UInt64(b.baseCRCInit)), ("phy", UInt64(b.phy)),
                ("bis_payload_count", b.bisPayloadCount), ("framing", b.framed ? 1 : 0)
            ]
            for (field, value) in values { check(10, "btcommon.eir_ad.entry.biginfo." + field, value) }
            let aas = (theirs[10]?["btcommon.eir_ad.entry.biginfo.bis_access_address"] ?? "").split(separator: ",").compactMap { Self.number(String($0)) }
            compared += 1
            if aas == b.bisAccessAddresses.map(UInt64.init) { agree += 1 } else { Issue.record("BIS access addresses: ours \(b.bisAccessAddresses), tshark \(aas)") }
            check(10, "btle.extended_advertising_header.aux_pointer.channel", UInt64(a.channelIndex))
            check(10, "btle.extended_advertising_header.aux_pointer.ca", UInt64(a.clockAccuracy))
            check(10, "btle.extended_advertising_header.aux_pointer.offset_units", UInt64(a.offsetUnits))
            check(10, "btle.extended_advertising_header.aux_pointer.aux_offset", UInt64(a.auxOffset))
            check(10, "btle.extended_advertising_header.aux_pointer.aux_phy", UInt64(a.auxPHY))
        } else {
            Issue.record("frame 10: no BIGInfo or AuxPtr")
        }
        let sync = try #require(Self.syncInfo().withUnsafeBytes { LLSyncInfo($0) })
        let syncValues: [(String, UInt64)] = [
            ("sync_offset", UInt64(sync.syncPacketOffset)), ("offset_units", UInt64(sync.offsetUnits)), ("interval", UInt64(sync.interval)),
            ("sleep_clock_accuracy", UInt64(sync.sca)), ("access_address", UInt64(sync.accessAddress)), ("crc_init", UInt64(sync.crcInit)),
            ("event_counter", UInt64(sync.eventCounter))
        ]
        for (field, value) in syncValues { check(9, "btle.extended_advertising_header.sync_info." + field, value) }
        print("LE Audio air vs tshark: \(compared) values, \(agree) agree")
        #expect(compared >= 100 && agree == compared)
    }

    // MARK: - Direction, per-direction stats, --cis on the air

    @Test func sniffedCISDirectionFromTheRFHeader() throws {
        let path = try Self.writeCapture()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        // The reader: PDU types 4/5 are a CIS's directions, 6 a BIS (none).
        let reader = try CaptureFile.open(path: path)
        var said: [Int: (Bool?, Bool)] = [:]
        while let r = reader.next() { said[r.frame] = (r.sniffer?.fromCentral, r.sniffer?.isochronous ?? false) }
        #expect(said[5]?.0 == true && said[5]?.1 == true && said[6]?.0 == false && said[6]?.1 == true)
        #expect(said[12]?.0 == nil && said[12]?.1 == true && said[2]?.0 == true && said[2]?.1 == false)
        // The layer, its summary and JSON.
        let v = try Self.decoded(path)
        #expect([5, 6, 7, 15, 16].map { v[$0]?.fromCentral } == [true, false, true, true, false])
        #expect([12, 13, 14].allSatisfy { v[$0]?.fromCentral == nil && v[$0]?.accessAddress != nil })
        var w = JSONFieldWriter(capacity: 512)
        w.beginTopLevel()
        v[6]?.describe(LEAudio.layer, into: &w)
        w.endTopLevel()
        let json = String(decoding: w.out, as: UTF8.self)
        #expect(json.contains("\"direction\":\"peripheral_to_central\""), "\(json)")
    }

    final class Context: StatsContext {
        func connectionIndex(_ frame: borrowing DecodedFrame) -> Int? { nil }
        func problem(_ kind: String, _ record: CaptureRecord, connection: Int?, _ message: String) {}
        var file: String { "air.pcap" }
        func connectionHandle(_ index: Int) -> Int { 0 }
        func connectionPeer(_ index: Int) -> String? { nil }
    }

    @Test(.enabled(if: tshark != nil, "needs tshark (Debian's tshark package)"))
    func airStreamStatsPerDirectionAgreeWithTshark() throws {
        let path = try Self.writeCapture()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let stats = LEAudioStats(), context = Context()
        let reader = try CaptureFile.open(path: path)
        let decoder = ProtocolDecoder()
        while let r = reader.next() { stats.add(decoder.decode(r), context) }
        let m = stats.finish(context)
        let rows = try #require(m.members.first { $0.key == "leAudioAirStreams" }?.value as? [LEAudioStats.AirStreamRow])
        let cis = Hex.fixed(UInt64(Self.cisAA), width: 8)
        let cToP = try #require(rows.first { $0.accessAddress == cis && $0.direction == "central_to_peripheral" })
        let pToC = try #require(rows.first { $0.accessAddress == cis && $0.direction == "peripheral_to_central" })
        // C→P: 5 (unframed, an SDU end, 40 B), 7 (framed, one complete segment, 9 B), 15 (7 again).
        #expect(cToP.pdus == 3 && cToP.nullPdus == 0 && cToP.retransmissions == 1 && cToP.sdus == 2 && cToP.bytes == 49)
        #expect(cToP.cigId == 1 && cToP.cisId == 2 && cToP.firstFrame == 5 && cToP.lastFrame == 15 && !cToP.encrypted)
        // P→C: 6 (null), 16 (an SDU's start: no SDU ends).
        #expect(pToC.pdus == 2 && pToC.nullPdus == 1 && pToC.retransmissions == 0 && pToC.sdus == 0 && pToC.bytes == 3)
        let bis = rows.filter { $0.stream == "bis" }.sorted { ($0.bis ?? 0) < ($1.bis ?? 0) }
        #expect(bis.map(\.bis) == [0, 1, 2] && bis.map(\.sdus) == [0, 1, 1] && bis.map(\.bytes) == [0, 40, 3] && bis.allSatisfy { $0.direction == nil })
        #expect(m.text.contains("  \(cis) CIS (CIG 1 CIS 2) C→P: 3 PDUs (0 null, 1 retransmitted), 2 SDUs, 49 B, frames 5-15"), "\(m.text)")
        // PDUs and null PDUs per access address and direction, as tshark counts them.
        let theirs = try Self.tsharkFields(path, ["btle.access_address", "btle_rf.pdu_type", "btle.data_header.null_pdu_indicator", "btle.data_header.length"])
        var counted: [String: (pdus: Int, nulls: Int)] = [:]
        for (_, t) in theirs {
            guard let type = Self.number(t["btle_rf.pdu_type"]), (4...6).contains(type), let aa = Self.number(t["btle.access_address"]) else { continue }
            let key = Hex.fixed(aa, width: 8) + "/\(type)"
            let null = Self.number(t["btle.data_header.null_pdu_indicator"]) == 1 || Self.number(t["btle.data_header.length"]) == 0
            counted[key, default: (0, 0)].pdus += 1
            if null { counted[key, default: (0, 0)].nulls += 1 }
        }
        let ours = Dictionary(
            uniqueKeysWithValues: rows.map { r in
                (r.accessAddress + "/" + (r.direction == nil ? "6" : r.direction == "central_to_peripheral" ? "4" : "5"), (pdus: r.pdus, nulls: r.nullPdus))
            })
        #expect(counted.count == 5 && counted.count == ours.count)
        for (k, t) in counted { #expect(ours[k]?.pdus == t.pdus && ours[k]?.nulls == t.nulls, "\(k): ours \(String(describing: ours[k])), tshark \(t)") }
    }

    /// The frames of the capture `--cis VALUE` keeps.
    static func kept(_ path: String, _ values: [String]) throws -> [Int] {
        let filter = try #require(try LEAudio.filter(ModuleOptionValues(["cis": values])))
        let reader = try CaptureFile.open(path: path)
        let decoder = ProtocolDecoder()
        var out: [Int] = []
        while let r = reader.next() {
            let f = decoder.decode(r)
            if filter.matches(f) { out.append(r.frame) }
        }
        return out
    }

    @Test func cisFilterSelectsASniffedCIS() throws {
        let path = try Self.writeCapture()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        // CIG:CIS: the control PDUs about it (REQ, RSP, IND, TERMINATE) and its PDUs.
        #expect(try Self.kept(path, ["1:2"]) == [2, 3, 4, 5, 6, 7, 8, 15, 16])
        #expect(try Self.kept(path, ["1:3"]) == [])
        // An access address: the LL_CIS_IND naming it and the PDUs on it; a BIS's too.
        #expect(try Self.kept(path, [Hex.fixed(UInt64(Self.cisAA), width: 8)]) == [4, 5, 6, 7, 15, 16])
        let big = try #require(Self.bigInfo(encrypted: false).withUnsafeBytes { LLBIGInfo($0) })
        #expect(try Self.kept(path, [String(big.bisAccessAddresses[1])]) == [13])
        // A handle is HCI's: nothing on the air.
        #expect(try Self.kept(path, ["0x0060"]) == [])
        #expect(throws: ModuleOptionError.self) { try LEAudio.filter(ModuleOptionValues(["cis": ["1:300"]])) }
        #expect(throws: ModuleOptionError.self) { try LEAudio.filter(ModuleOptionValues(["cis": ["0x100000000"]])) }
    }

    // MARK: - nRF Sniffer: the auxiliary PDU type

    /// pcap, LINKTYPE 272 (nRF Sniffer, protocol version 3): board, payload length, version,
    /// counter, packet id (0x02 advertising), then the event header (length 10, flags with the
    /// CRC OK bit, the auxiliary type in bits 1-2 and PHY 1M, channel, RSSI, event counter,
    /// time stamp) and the packet with access address and CRC.
    static func nordicPcap(_ packets: [(t: Int, aa: UInt32, pdu: [UInt8], crcInit: UInt32, channel: UInt8, aux: UInt8)]) -> [UInt8] {
        var w = ByteWriter(capacity: 2048)
        w.writeUInt32(0xA1B2_C3D4); w.writeUInt16(2); w.writeUInt16(4); w.writeUInt32(0); w.writeUInt32(0); w.writeUInt32(65535); w.writeUInt32(272)
        for (i, p) in packets.enumerated() {
            var ll = ByteWriter(capacity: 300)
            ll.writeUInt32(p.aa); ll.writeBytes(p.pdu); ll.writeLE(p.pdu.withUnsafeBytes { LLCRC.compute($0, crcInit: p.crcInit) }, 3)
            var r = ByteWriter(capacity: 320)
            r.writeUInt8(0); r.writeUInt16(UInt16(10 + ll.bytes.count)); r.writeUInt8(3); r.writeUInt16(UInt16(i)); r.writeUInt8(0x02)
            r.writeUInt8(10); r.writeUInt8(0x01 | p.aux << 1); r.writeUInt8(p.channel); r.writeUInt8(50); r.writeUInt16(0); r.writeUInt32(UInt32(p.t))
            r.writeBytes(ll.bytes)
            w.writeUInt32(UInt32(p.t / 1_000_000)); w.writeUInt32(UInt32(p.t % 1_000_000))
            w.writeUInt32(UInt32(r.bytes.count)); w.writeUInt32(UInt32(r.bytes.count)); w.writeBytes(r.bytes)
        }
        return w.bytes
    }

    /// Frames: 1 AUX_ADV_IND (the train's SyncInfo); 2 AUX_SYNC_IND with an AuxPtr; 3 the next
    /// AUX_SYNC_IND 3 ms later (the sniffer says so: by time alone it would be the chain);
    /// 4 an AUX_CHAIN_IND 300 ms later (the sniffer says so: by time alone a new event).
    static func writeNordicCapture() throws -> String {
        var chain = LLPeriodicAdvertisingPDU(kind: .auxChainInd, flags: 0x00, advData: bytes("05 ff 59 00 01 02"))
        chain.header = 0x07
        let capture = nordicPcap([
            (200_000, LLPacket.advertisingAccessAddress, auxAdvInd(), LLCRC.advertisingInit, 10, 0),
            (300_000, trainAA, auxSyncInd(), 0x5A_A55A, 13, 2),
            (303_000, trainAA, auxSyncInd(), 0x5A_A55A, 14, 2),
            (603_000, trainAA, chain.encode(), 0x5A_A55A, 15, 1)
        ])
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-le-audio-nordic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("nordic.pcap").path
        try Data(capture).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func nordicAuxiliaryTypeNamesSyncAndChain() throws {
        let path = try Self.writeNordicCapture()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let v = try Self.decoded(path)
        #expect(v.keys.sorted() == [2, 3, 4])
        #expect(v[2]?.periodic?.kind == .auxSyncInd && v[3]?.periodic?.kind == .auxSyncInd && v[4]?.periodic?.kind == .auxChainInd)
        #expect(v[3]?.bigInfo?.numBIS == 2)
    }

    @Test(.enabled(if: tshark != nil, "needs tshark (Debian's tshark package)"))
    func nordicAuxiliaryTypeAgreesWithTshark() throws {
        let path = try Self.writeNordicCapture()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let v = try Self.decoded(path)
        let theirs = try Self.tsharkFields(path, ["nordic_ble.aux_type"])
        #expect(Self.number(theirs[1]?["nordic_ble.aux_type"]) == 0)
        for frame in [2, 3, 4] {
            let ours: UInt64? = v[frame]?.periodic.map { $0.kind == .auxSyncInd ? 2 : 1 }
            #expect(ours == Self.number(theirs[frame]?["nordic_ble.aux_type"]), "frame \(frame)")
        }
    }
}
