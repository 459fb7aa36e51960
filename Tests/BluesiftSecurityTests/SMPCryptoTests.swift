import Testing
import BluesiftWire
@testable import BluesiftSecurity

/// "20b003d2 f297be2c" → bytes, MSB-first as the documents print them.
func h(_ s: String) -> [UInt8] { Hex.parse(s)! }

@Suite struct AESCMACTests {
    // RFC 4493 §4, the four examples (key 2b7e1516...).
    let key = h("2b7e1516 28aed2a6 abf71588 09cf4f3c")
    let m64 = h("6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51 30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710")

    @Test func subkeys() {
        let (k1, k2) = AESCMAC.subkeys(key)
        #expect(k1 == h("fbeed618 35713366 7c85e08f 7236a8de"))
        #expect(k2 == h("f7ddac30 6ae266cc f90bc11e e46d513b"))
    }
    @Test func example1Empty() { #expect(AESCMAC.mac(key: key, message: []) == h("bb1d6929 e9593728 7fa37d12 9b756746")) }
    @Test func example2OneBlock() { #expect(AESCMAC.mac(key: key, message: Array(m64[0..<16])) == h("070a16b4 6b4d4144 f79bdd9d d04a287c")) }
    @Test func example3Partial() { #expect(AESCMAC.mac(key: key, message: Array(m64[0..<40])) == h("dfa66747 de9ae630 30ca3261 1497c827")) }
    @Test func example4FourBlocks() { #expect(AESCMAC.mac(key: key, message: m64) == h("51f0bebf 7e3b9d92 fc497417 79363cfe")) }
}

/// Core 5.4 Vol 3 Part H Appendix D sample data (MSB-first as printed there).
@Suite struct SMPCryptoTests {
    let pkaX = h("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    let pkbX = h("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    let n1 = h("d5cb8454 d177733e ffffb2ec 712baeab")
    let n2 = h("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf")
    let dhKey = h("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")
    let a1 = h("00561237 37bfce")
    let a2 = h("00a71370 2dcfc1")

    // D.1-D.2 (legacy): c1 and s1 with k = 0.
    @Test func c1() {
        let r = SMPCrypto.c1(
            k: [UInt8](repeating: 0, count: 16), r: h("5783D52156AD6F0E6388274EC6702EE0"),
            preq: h("07071000000101"), pres: h("05000800000302"),
            iat: 1, ia: h("A1A2A3A4A5A6"), rat: 0, ra: h("B1B2B3B4B5B6"))
        #expect(r == h("1e1e3fef878988ead2a74dc5bef13b86"))
    }
    @Test func s1() {
        let r = SMPCrypto.s1(
            k: [UInt8](repeating: 0, count: 16), r1: h("000F0E0D0C0B0A091122334455667788"),
            r2: h("010203040506070899AABBCCDDEEFF00"))
        #expect(r == h("9a1fe1f0e8b0f49b5b4216ae796da062"))
    }
    // D.2 f4.
    @Test func f4() {
        #expect(SMPCrypto.f4(u: pkaX, v: pkbX, x: n1, z: 0) == h("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }
    // D.3 f5.
    @Test func f5() {
        let (mac, ltk) = SMPCrypto.f5(w: dhKey, n1: n1, n2: n2, a1: a1, a2: a2)
        #expect(mac == h("2965f176 a1084a02 fd3f6a20 ce636e20"))
        #expect(ltk == h("69867911 69d7cd23 980522b5 94750a38"))
    }
    // D.4 f6.
    @Test func f6() {
        let e = SMPCrypto.f6(
            w: h("2965f176 a1084a02 fd3f6a20 ce636e20"), n1: n1, n2: n2,
            r: h("12a3343b b453bb54 08da42d2 0c2d0fc8"), ioCap: h("010102"), a1: a1, a2: a2)
        #expect(e == h("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }
    // D.5 g2: 0x2f9ed5ba; the six digits shown are 798938554 mod 10^6 = 938554.
    @Test func g2() {
        let v = SMPCrypto.g2(u: pkaX, v: pkbX, x: n1, y: n2)
        #expect(v == 0x2F9E_D5BA)
        #expect(v % 1_000_000 == 938_554)
    }
    // D.6 h6, D.8 h7.
    @Test func h6h7() {
        let w = h("ec0234a3 57c8ad05 341010a6 0a397d9b")
        #expect(SMPCrypto.h6(w: w, keyID: h("6c656272")) == h("2d9ae102 e76dc91c e8d3a9e2 80b16399"))
        #expect(SMPCrypto.h7(salt: h("00000000 00000000 00000000 746D7031"), w: w) == h("fb173597 c6a3c0ec d2998c2a 75a57011"))
    }
    // D.7 ah, and resolving the RPA 70:81:94:0d:fb:aa with that IRK (and not with another).
    @Test func ahAndResolve() {
        let irk = h("ec0234a3 57c8ad05 341010a6 0a397d9b")
        #expect(SMPCrypto.ah(k: irk, r: h("708194")) == h("0dfbaa"))
        #expect(SMPCrypto.resolves(address: h("708194 0dfbaa"), irk: irk))
        #expect(!SMPCrypto.resolves(address: h("708194 0dfbab"), irk: irk))
        #expect(!SMPCrypto.resolves(address: h("708194 0dfbaa"), irk: h("00000000 00000000 00000000 00000001")))
    }
    // Appendix D.1 P-256: both sides reach the same DHKey from the sample private keys.
    @Test func ecdhSampleKeys() throws {
        let a = try SMPKeyPair(privateKey: h("3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd"))
        let b = try SMPKeyPair(privateKey: h("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd"))
        #expect(a.x == pkaX)
        #expect(a.y == h("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b"))
        #expect(b.x == h("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190"))
        #expect(try a.dhKey(peerX: b.x, peerY: b.y) == dhKey)
        #expect(try b.dhKey(peerX: a.x, peerY: a.y) == dhKey)
    }
    // CVE-2018-5383: a point off the curve (the valid Y with its last bit flipped, and Y = 0
    // as the attack sends) is refused, never multiplied.
    @Test func peerKeyOffCurveRefused() throws {
        let a = SMPKeyPair()
        let b = SMPKeyPair()
        var y = b.y; y[31] ^= 1
        #expect(throws: SMPKeyError.notOnCurve) { try a.dhKey(peerX: b.x, peerY: y) }
        #expect(throws: SMPKeyError.notOnCurve) { try a.dhKey(peerX: b.x, peerY: [UInt8](repeating: 0, count: 32)) }
        #expect(try a.dhKey(peerX: b.x, peerY: b.y) == b.dhKey(peerX: a.x, peerY: a.y))
    }
}
