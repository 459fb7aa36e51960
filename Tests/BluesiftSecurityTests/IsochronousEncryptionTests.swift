import Testing
import BluesiftWire
@testable import BluesiftSecurity

/// The BIG key hierarchy and isochronous IVs (Core 6.0 Vol 6 Part E §1-§2, Vol 6 Part B
/// §4.4.6.10): h8 on the specification's sample data, the GSK of a Broadcast_Code against
/// scripts/le_audio_air_crypto_fixtures.py (Python's `cryptography` AES-CMAC, written apart).
@Suite struct IsochronousEncryptionTests {
    static func h(_ s: String) -> [UInt8] { Hex.parse(s.replacingOccurrences(of: " ", with: ""))! }

    // Vol 3 Part H Appendix D, h8 (as Zephyr's smp_h8_test carries it).
    @Test func h8SampleData() {
        let k = Self.h("ec0234a3 57c8ad05 341010a6 0a397d9b"), s = Self.h("1536d18d e3d20df9 9b7044c1 2f9ed5ba")
        #expect(IsochronousEncryption.h8(k: k, s: s, keyID: Self.h("cc030148")) == Self.h("e5e5beba ae7228e7 22a38904 ed350f6d"))
    }

    /// Broadcast_Code "Auracast1234" (zero-padded, first character first) and the fixture's
    /// GSKD: IGLTK and GSK as the Python reference computes them.
    @Test func gskOfABroadcastCode() {
        let code = Array("Auracast1234".utf8) + [0, 0, 0, 0]
        #expect(SMPCrypto.h7(salt: IsochronousEncryption.big1, w: code.reversed()) == Self.h("49419dfdc1bd82071f381ce2ef3a5d3c"))
        let gskd = Self.h("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
        #expect(IsochronousEncryption.gsk(broadcastCode: code, gskd: gskd) == Self.h("b7386a9c0c5e034bc764b8eeb310e742"))
    }

    /// The IV's low 32 bits (its first four octets as sent) XOR the access address; AAD masks.
    @Test func ivAndAdditionalData() {
        let iv = Self.h("badcab24 deafbabe")
        #expect(IsochronousEncryption.iv(iv, accessAddress: 0x6B7D_2C19) == Self.h("a3f0d64f deafbabe"))
        #expect(IsochronousEncryption.cisAAD(header: 0xFF) == 0xA3 && IsochronousEncryption.bisAAD(header: 0xFF) == 0xC3)
    }
}
