/// Encryption of LE isochronous channels (Core 6.0 Vol 6 Part E §1-§2, Vol 6 Part B
/// §4.4.6.10): AES-CCM as on an ACL (`AESCCM`), with
/// - a CIS: the session key of its ACL, the ACL's IV with its low 32 bits XORed with the CIS
///   access address, and the 39-bit cisPayloadCounter in place of the packet counter;
/// - a BIS: the GSK from the Broadcast_Code and the BIGInfo's GSKD, the GIV with its low 32
///   bits XORed with the BIS's access address, the bisPayloadCounter, direction bit 1.
/// Values in the nonce (counters, IVs) as sent: least significant octet first.
public enum IsochronousEncryption {
    /// h8 (Vol 6 Part E §1.1.1; sample data in Vol 3 Part H Appendix D):
    /// AES-CMAC_IK(keyID) with IK = AES-CMAC_S(K). All most significant octet first.
    public static func h8(k: [UInt8], s: [UInt8], keyID: [UInt8]) -> [UInt8] {
        AESCMAC.mac(key: AESCMAC.mac(key: s, message: k), message: keyID)
    }

    /// The key IDs and salt of the BIG key hierarchy: "BIG1", "BIG2", "BIG3" as 32-bit
    /// numbers, most significant octet first (the salt zero-extended to 128 bits).
    static let big1: [UInt8] = [UInt8](repeating: 0, count: 12) + Array("BIG1".utf8)
    static let big2: [UInt8] = Array("BIG2".utf8)
    static let big3: [UInt8] = Array("BIG3".utf8)

    /// GLTK from a Broadcast_Code as HCI and BASS carry it (16 octets, least significant
    /// first: a text code's first character first): IGLTK = h7("BIG1", Broadcast_Code),
    /// GLTK = h6(IGLTK, "BIG2"). Most significant octet first.
    public static func gltk(broadcastCode: [UInt8]) -> [UInt8] {
        let igltk = SMPCrypto.h7(salt: big1, w: broadcastCode.reversed())
        return SMPCrypto.h6(w: igltk, keyID: big2)
    }

    /// GSK = h8(GLTK, GSKD, "BIG3"), the BIG's session key (most significant octet first,
    /// as `AESCCM(key:)` takes it); `gskd` as the BIGInfo carries it.
    public static func gsk(broadcastCode: [UInt8], gskd: [UInt8]) -> [UInt8] {
        h8(k: gltk(broadcastCode: broadcastCode), s: gskd.reversed(), keyID: big3)
    }

    /// A channel's IV: `base` (the ACL's IV, IVm then IVs, or the GIV, as sent) with its
    /// least significant 32 bits XORed with the channel's access address.
    public static func iv(_ base: [UInt8], accessAddress aa: UInt32) -> [UInt8] {
        var iv = base
        for i in 0..<min(4, iv.count) { iv[i] ^= UInt8(truncatingIfNeeded: aa >> (8 * UInt32(i))) }
        return iv
    }

    /// Additional data (Part E §2): the header's first octet with a CIS PDU's NESN, SN, CIE
    /// and NPI, or a BIS PDU's CSSN and CSTF, set to zero (LLID and RFU bits kept).
    @inline(__always) public static func cisAAD(header: UInt8) -> UInt8 { header & 0xA3 }
    @inline(__always) public static func bisAAD(header: UInt8) -> UInt8 { header & 0xC3 }
}
