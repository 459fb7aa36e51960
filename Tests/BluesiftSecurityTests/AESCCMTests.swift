import Testing
@testable import BluesiftSecurity

func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = [], i = s.startIndex
    while i < s.endIndex { let j = s.index(i, offsetBy: 2); out.append(UInt8(s[i..<j], radix: 16)!); i = j }
    return out
}

/// Core 5.4 Vol 6 Part C §1 sample data (encrypted LL_START_ENC_RSP in both directions).
@Suite struct AESCCMTests {
    let ltk = hex("4C68384139F574D836BCF34E9DFB01BF")
    let skdm = hex("1302F1E0DFCEBDAC"), skds = hex("7968574635241302")   // as sent
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

/// Vol 3 Part H Appendix D.2 / D.3 (c1 and s1 sample data).
@Suite struct SMPLegacyTests {
    @Test func c1Sample() {
        // k = 0, r = 5783D52156AD6F0E6388274EC6702EE0, p1 = 05000800000302070710000001010001,
        // p2 = 00000000A1A2A3A4A5A6B1B2B3B4B5B6 → 1E1E3FEF878988EAD2A74DC5BEF13B86
        let c = SMPLegacy.c1(k: [UInt8](repeating: 0, count: 16), r: hex("5783D52156AD6F0E6388274EC6702EE0"),
                             p1: hex("05000800000302070710000001010001"), p2: hex("00000000A1A2A3A4A5A6B1B2B3B4B5B6"))
        #expect(c == hex("1E1E3FEF878988EAD2A74DC5BEF13B86"))
    }

    @Test func s1Sample() {
        let s = SMPLegacy.s1(k: [UInt8](repeating: 0, count: 16), r1: hex("000F0E0D0C0B0A091122334455667788"),
                             r2: hex("010203040506070899AABBCCDDEEFF00"))
        #expect(s == hex("9A1FE1F0E8B0F49B5B4216AE796DA062"))
    }
}
