/// The SMP cryptographic toolbox (Core 5.4 Vol 3 Part H §2.2).
///
/// Byte order: every value passed to and returned by these functions is MOST significant
/// octet first, as the specification writes them and as Appendix D prints its sample data.
/// SMP PDUs, HCI and the bond store carry the same values LEAST significant octet first:
/// reverse at that boundary (`SMPCrypto.swapped`). Addresses are 6 octets MSB-first
/// (`c0:ba:0d:00:00:01` → c0 ba 0d 00 00 01); Pairing Request/Response are the 7-octet PDU
/// reversed (so the code is the last octet), as c1's p1 wants them.
public enum SMPCrypto {
    /// Reverses octet order: PDU (little-endian) ⇄ toolbox (MSB-first).
    @inlinable public static func swapped(_ v: [UInt8]) -> [UInt8] { v.reversed() }

    static func xor(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] { zip(a, b).map { $0 ^ $1 } }

    /// Security function e (§2.2.1).
    public static func e(_ key: [UInt8], _ plaintext: [UInt8]) -> [UInt8] { AES128.encrypt(key: key, block: plaintext) }

    /// Legacy confirm value c1 (§2.2.3): e(k, e(k, r ⊕ p1) ⊕ p2) with
    /// p1 = pres ‖ preq ‖ rat ‖ iat and p2 = padding ‖ ia ‖ ra.
    /// `preq`/`pres` 7 octets, `ia`/`ra` 6 octets, `iat`/`rat` 0 public, 1 random.
    public static func c1(
        k: [UInt8], r: [UInt8], preq: [UInt8], pres: [UInt8],
        iat: UInt8, ia: [UInt8], rat: UInt8, ra: [UInt8]
    ) -> [UInt8] {
        precondition(preq.count == 7 && pres.count == 7 && ia.count == 6 && ra.count == 6)
        let p1 = pres + preq + [rat & 1, iat & 1]
        let p2 = [0, 0, 0, 0] + ia + ra
        return e(k, xor(e(k, xor(r, p1)), p2))
    }

    /// Legacy STK s1 (§2.2.4): e(k, r1' ‖ r2'), r1'/r2' the low 64 bits of r1/r2.
    public static func s1(k: [UInt8], r1: [UInt8], r2: [UInt8]) -> [UInt8] {
        e(k, Array(r1[8..<16]) + Array(r2[8..<16]))
    }

    /// LE SC confirm value f4 (§2.2.6): AES-CMAC_X(U ‖ V ‖ Z); U, V are 32-octet X coordinates.
    public static func f4(u: [UInt8], v: [UInt8], x: [UInt8], z: UInt8) -> [UInt8] {
        AESCMAC.mac(key: x, message: u + v + [z])
    }

    static let f5Salt: [UInt8] = [0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE]

    /// LE SC key generation f5 (§2.2.7): (MacKey, LTK) from the DHKey `w`.
    /// `a1`/`a2` are 7 octets: address type (0 public, 1 random) then the address.
    public static func f5(w: [UInt8], n1: [UInt8], n2: [UInt8], a1: [UInt8], a2: [UInt8]) -> (macKey: [UInt8], ltk: [UInt8]) {
        let t = AESCMAC.mac(key: f5Salt, message: w)
        let body: [UInt8] = [0x62, 0x74, 0x6C, 0x65] + n1 + n2 + a1 + a2 + [0x01, 0x00] // keyID "btle", length 256
        return (AESCMAC.mac(key: t, message: [0] + body), AESCMAC.mac(key: t, message: [1] + body))
    }

    /// LE SC check value f6 (§2.2.8): AES-CMAC_W(N1 ‖ N2 ‖ R ‖ IOcap ‖ A1 ‖ A2).
    /// `ioCap` is 3 octets MSB-first: AuthReq, OOB flag, IO capability.
    public static func f6(w: [UInt8], n1: [UInt8], n2: [UInt8], r: [UInt8], ioCap: [UInt8], a1: [UInt8], a2: [UInt8]) -> [UInt8] {
        AESCMAC.mac(key: w, message: n1 + n2 + r + ioCap + a1 + a2)
    }

    /// LE SC numeric comparison g2 (§2.2.9): the low 32 bits of AES-CMAC_X(U ‖ V ‖ Y);
    /// the six digits shown are this value mod 1 000 000.
    public static func g2(u: [UInt8], v: [UInt8], x: [UInt8], y: [UInt8]) -> UInt32 {
        AESCMAC.mac(key: x, message: u + v + y)[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Random address hash ah (§2.2.2): e(k, padding ‖ r) mod 2^24. `r` is prand, 3 octets.
    public static func ah(k: [UInt8], r: [UInt8]) -> [UInt8] {
        Array(e(k, [UInt8](repeating: 0, count: 13) + r)[13..<16])
    }

    /// Whether a resolvable private address (MSB-first, 6 octets) was made with `irk`
    /// (Core 5.4 Vol 6 Part B §1.3.2.3): hash = ah(IRK, prand).
    public static func resolves(address: [UInt8], irk: [UInt8]) -> Bool {
        address.count == 6 && address[0] & 0xC0 == 0x40 && ah(k: irk, r: Array(address[0..<3])) == Array(address[3..<6])
    }

    /// Link key conversion h6 (§2.2.10): AES-CMAC_W(keyID).
    public static func h6(w: [UInt8], keyID: [UInt8]) -> [UInt8] { AESCMAC.mac(key: w, message: keyID) }

    /// Link key conversion h7 (§2.2.11): AES-CMAC_SALT(W).
    public static func h7(salt: [UInt8], w: [UInt8]) -> [UInt8] { AESCMAC.mac(key: salt, message: w) }
}
