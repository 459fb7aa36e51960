import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftSecurity
@testable import BluesiftProtocols

/// Encrypted sniffed CIS and BIS (issue 39): the captures of
/// scripts/le_audio_air_crypto_fixtures.py, encrypted there with Python's `cryptography`
/// (AES-CCM, AES-CMAC) after Core 6.0 Vol 6 Part E §1-§2, decrypted here with the payload
/// counter rebuilt from the schedule; the SDUs of unframed PDUs rebuilt from their fragments.
@Suite struct LEAudioAirCryptoTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/le-audio-air")
    static let ltk = Hex.parse("4c68384139f574d836bcf34e9dfb01bf")!
    static let cisAA: UInt32 = 0x6B7D_2C19

    /// The fixture's `payload(seed, n)`.
    static func payload(_ seed: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((seed * 7 + $0) & 0xFF) } }

    static func decode(_ name: String, ltk: Bool = true, codes: [String] = []) throws -> (layers: [Int: LEAudioAirLayer], stats: LEAudioStats.ModuleStatsRows) {
        let decoder = ProtocolDecoder()
        if ltk { decoder.knownKeys = [KnownLTK(ltk: Self.ltk, source: "test")] }
        decoder.moduleConfiguration = try ProtocolRegistry.shared.configure(codes.map { ("broadcast-code", $0) })
        let reader = try CaptureFile.open(path: fixtures.appendingPathComponent(name).path)
        let stats = LEAudioStats(), context = LEAudioAirTests.Context()
        var out: [Int: LEAudioAirLayer] = [:]
        while let r = reader.next() {
            let f = decoder.decode(r)
            if let v = f.moduleLayer(LEAudioAirLayer.self) { out[r.frame] = v }
            stats.add(f, context)
        }
        let m = stats.finish(context)
        let rows = m.members.first { $0.key == "leAudioAirStreams" }?.value as? [LEAudioStats.AirStreamRow] ?? []
        return (out, .init(rows: rows, text: m.text))
    }

    @Test func encryptedCISDecryptedWithTheACLsSessionKey() throws {
        let (v, _) = try Self.decode("encrypted_cis.pcap")
        // LL_CIS_REQ/IND read off the decrypted ACL.
        #expect(v[7]?.cisControl?.opcode == .cisReq && v[9]?.cisControl?.opcode == .cisInd)
        // C→P: payloads 2e and 2e+1 of events 0, 1, 2, 7 (its start missed), 8.
        let cToP = [10: 0, 12: 1, 14: 2, 16: 3, 18: 4, 20: 5, 23: 15, 25: 16, 27: 17]
        for (frame, counter) in cToP { #expect(v[frame]?.decryption == .decrypted(UInt64(counter)), "frame \(frame)") }
        #expect(v[10]?.isochronous?.payload == Self.payload(0, 40) && v[12]?.isochronous?.payload == Array(Self.payload(0, 80)[40...]))
        #expect(v[27]?.isochronous?.payload == Array(Self.payload(8, 80)[40...]))
        // P→C: payload e of events 0, 1, 2, 7 (the missed events skipped by the time stamps).
        for (frame, e) in [11: 0, 15: 1, 19: 2, 22: 7] {
            #expect(v[frame]?.decryption == .decrypted(UInt64(e)) && v[frame]?.isochronous?.payload == Self.payload(100 + e, 20), "frame \(frame)")
        }
        // Event 8's P→C PDU has a damaged MIC: said on the record, payload left as it was.
        guard case .notDecrypted(let why)? = v[26]?.decryption else { Issue.record("frame 26: \(String(describing: v[26]?.decryption))"); return }
        #expect(why.hasPrefix("counter unknown") && v[26]?.isochronous?.payload.count == 24)
        #expect(v[12]?.summary(LEAudio.layer) == "CIG 1 CIS 2 SN 1 NESN 0 CIE, unframed, SDU end or complete, 44 B (decrypted, payload 1)")
        var w = JSONFieldWriter(capacity: 512)
        w.beginTopLevel(); v[26]?.describe(LEAudio.layer, into: &w); w.endTopLevel()
        #expect(String(decoding: w.out, as: UTF8.self).contains("\"decrypted\":false,\"not_decrypted\":\"counter unknown"))
    }

    @Test func encryptedCISStreamStatsCountRebuiltSDUs() throws {
        let rows = try Self.decode("encrypted_cis.pcap").stats.rows
        let cToP = try #require(rows.first { $0.direction == "central_to_peripheral" })
        // 9 PDUs; SDUs of events 0, 1, 2, 8 whole; event 7's end without its start.
        #expect(cToP.pdus == 9 && cToP.decrypted == 9 && cToP.notDecrypted == 0 && cToP.sdus == 4 && cToP.sdusIncomplete == 1)
        #expect(cToP.bytes == 9 * 40)
        let pToC = try #require(rows.first { $0.direction == "peripheral_to_central" })
        #expect(pToC.pdus == 10 && pToC.nullPdus == 5 && pToC.decrypted == 4 && pToC.notDecrypted == 1 && pToC.sdus == 4 && pToC.sdusIncomplete == nil)
        #expect(pToC.bytes == 4 * 20 + 20)
    }

    @Test func encryptedBISDecryptedWithTheBroadcastCode() throws {
        let (v, stats) = try Self.decode("encrypted_bis.pcap", ltk: false, codes: ["0123456789abcdef0123456789abcdef", "Auracast1234"])
        #expect(v[2]?.bigInfo?.encrypted == true)
        // BIS 1: events 0 (twice), 1, 2, 6; BIS 2: events 0 and 6; counters from BIGInfo's 1000.
        let expected: [Int: (bis: Int, counter: UInt64, seed: Int)] = [
            3: (1, 1000, 200), 4: (2, 1000, 300), 5: (1, 1000, 200), 6: (1, 1001, 201), 7: (1, 1002, 202), 8: (1, 1006, 206), 9: (2, 1006, 306)
        ]
        for (frame, x) in expected {
            #expect(v[frame]?.stream?.bis == x.bis && v[frame]?.decryption == .decrypted(x.counter), "frame \(frame)")
            #expect(v[frame]?.isochronous?.payload == Self.payload(x.seed, 40), "frame \(frame)")
        }
        let bis1 = try #require(stats.rows.first { $0.bis == 1 })
        // Event 0's repetition is not a new SDU.
        #expect(bis1.pdus == 5 && bis1.retransmissions == 1 && bis1.sdus == 4 && bis1.decrypted == 4)
        #expect(stats.text.contains { $0.hasSuffix("BIS 1: 5 PDUs (0 null, 1 retransmitted), 4 SDUs, 160 B, encrypted (4 decrypted, 0 not), frames 3-8") }, "\(stats.text)")
    }

    @Test func encryptedBISWithoutItsCodeSaysWhy() throws {
        let (v, _) = try Self.decode("encrypted_bis.pcap", ltk: false, codes: ["wrong code"])
        #expect(v[3]?.decryption == .notDecrypted("counter unknown: no payload counter near the schedule verifies the MIC"))
        let (none, _) = try Self.decode("encrypted_bis.pcap", ltk: false)
        #expect(none[3]?.decryption == .notDecrypted("no key: give the Broadcast_Code (--broadcast-code)"))
        #expect(none[3]?.summary(LEAudio.layer) == "BIS 1 CSSN 0, unframed, SDU end or complete, 44 B (encrypted: no key: give the Broadcast_Code (--broadcast-code))")
    }

    @Test func broadcastCodeOption() throws {
        #expect(LEAudioAirKeys.parse("Auracast1234") == Array("Auracast1234".utf8) + [0, 0, 0, 0])
        #expect(LEAudioAirKeys.parse("0x000102030405060708090a0b0c0d0e0f") == Array(0..<16))
        #expect(LEAudioAirKeys.parse("") == nil && LEAudioAirKeys.parse(String(repeating: "x", count: 17)) == nil)
        // The error does not repeat the value.
        do {
            _ = try ProtocolRegistry.shared.configure([("broadcast-code", String(repeating: "s", count: 17))])
            Issue.record("a 17-octet code was taken")
        } catch {
            #expect(error.value == "(hidden)" && !error.message.contains("sss"))
        }
    }
}

extension LEAudioStats {
    struct ModuleStatsRows {
        var rows: [AirStreamRow]
        var text: [String]
    }
}
