import Testing
@testable import BluesiftSecurity
import BluesiftWire

func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = [], i = s.startIndex
    while i < s.endIndex { let j = s.index(i, offsetBy: 2); out.append(UInt8(s[i..<j], radix: 16)!); i = j }
    return out
}

/// Core 5.4 Vol 6 Part C §1 sample data (encrypted LL_START_ENC_RSP in both directions).
@Suite struct AESCCMTests {
    let ltk = hex("4C68384139F574D836BCF34E9DFB01BF")
    let skdm = hex("1302F1E0DFCEBDAC"), skds = hex("7968574635241302") // as sent
    let ivm = hex("24ABDCBA"), ivs = hex("BEBAAFDE")

    @Test func sessionKey() {
        #expect(LinkEncryption.sessionKey(ltk: ltk, skdm: skdm, skds: skds) == hex("99AD1B5226A37E3E058E3B8E27C2C666"))
    }

    @Test func startEncRspBothDirections() {
        let ccm = AESCCM(key: LinkEncryption.sessionKey(ltk: ltk, skdm: skdm, skds: skds))
        let iv = LinkEncryption.iv(ivm: ivm, ivs: ivs)
        let n0 = AESCCM.nonce(counter: 0, fromCentral: true, iv: iv)
        #expect(n0 == hex("0000000080") + hex("24ABDCBABEBAAFDE"))
        #expect(ccm.seal([0x06], nonce: n0, aad: AESCCM.aad(header: 0x0F)) == hex("9FCDA7F448"))
        let n1 = AESCCM.nonce(counter: 0, fromCentral: false, iv: iv)
        #expect(ccm.seal([0x06], nonce: n1, aad: AESCCM.aad(header: 0x07)) == hex("A34C13A415"))
        var out: [UInt8] = []
        #expect(hex("A34C13A415").withUnsafeBytes { ccm.open($0, nonce: n1, aad: 0x03, into: &out) })
        #expect(out == [0x06])
        // Wrong direction: the MIC fails.
        #expect(!hex("A34C13A415").withUnsafeBytes { ccm.open($0, nonce: n0, aad: 0x03, into: &out) })
    }

    @Test func roundTripLongPayload() {
        let ccm = AESCCM(key: hex("99AD1B5226A37E3E058E3B8E27C2C666"))
        let nonce = AESCCM.nonce(counter: 0x12_3456_789A, fromCentral: false, iv: hex("24ABDCBABEBAAFDE"))
        let plain = (0..<251).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let sealed = ccm.seal(plain, nonce: nonce, aad: 0x02)
        #expect(sealed.count == 255)
        var out: [UInt8] = []
        #expect(sealed.withUnsafeBytes { ccm.open($0, nonce: nonce, aad: 0x02, into: &out) })
        #expect(out == plain)
        var bad = sealed; bad[100] ^= 1
        #expect(!bad.withUnsafeBytes { ccm.open($0, nonce: nonce, aad: 0x02, into: &out) })
    }
}

/// The TK search finds the passkey whose confirm SMPCrypto.c1 makes (and TK 0 at once).
@Suite struct SMPLegacyTests {
    func capture(passkey: UInt32) -> LegacyPairingCapture {
        let preq = hex("01030005100001"), pres = hex("02000005100001")
        let ia = BDAddr(0xA1A2A3A4A5A6), ra = BDAddr(0xB1B2B3B4B5B6)
        let mrand = (0..<16).map { UInt8($0 * 11 & 0xFF) }, srand = (0..<16).map { UInt8($0 * 7 & 0xFF) }
        let confirm = SMPCrypto.c1(
            k: SMPLegacy.tk(passkey), r: mrand.reversed(), preq: preq.reversed(), pres: pres.reversed(),
            iat: 0, ia: ia.littleEndianBytes.reversed(), rat: 1, ra: ra.littleEndianBytes.reversed())
        return LegacyPairingCapture(
            preq: preq, pres: pres, initiator: ia, initiatorRandom: false, responder: ra,
            responderRandom: true, mconfirm: confirm.reversed(), sconfirm: nil, mrand: mrand, srand: srand)
    }

    @Test func findsJustWorksAndPasskey() {
        #expect(capture(passkey: 0).crackTK(threads: 2).tk == 0)
        let c = capture(passkey: 20_480)
        let found = c.crackTK(threads: 2)
        #expect(found.tk == 20_480)
        #expect(found.tried > 4096)
        #expect(c.stk(tk: 20_480) == SMPCrypto.s1(k: SMPLegacy.tk(20_480), r1: c.srand.reversed(), r2: c.mrand.reversed()))
    }
}
