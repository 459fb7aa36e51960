// Bluetooth Mesh security (Mesh Protocol v1.1 §3.9): the toolbox, the derived keys, the
// nonces. Every value is MOST significant octet first, as the specification writes it and as
// Mesh sends it (Mesh is big-endian on the air, §3.9.1): no reversal anywhere, unlike SMP.
// Built on AES128/AESCMAC/AESCCM of this module and swift-crypto's HMAC-SHA-256.
import Crypto

/// The Mesh security toolbox (Mesh Protocol v1.1 §3.9.2).
public enum MeshCrypto {
    /// s1 SALT generation function (§3.9.2): AES-CMAC with a zero key.
    public static func s1(_ m: [UInt8]) -> [UInt8] {
        AESCMAC.mac(key: [UInt8](repeating: 0, count: 16), message: m)
    }

    /// s1 of an ASCII string ("smk2", "vtad", "nkbk", ...).
    public static func s1(_ m: String) -> [UInt8] { s1(Array(m.utf8)) }

    /// k1 derivation function (§3.9.2): T = AES-CMAC_SALT(N), k1 = AES-CMAC_T(P).
    public static func k1(n: [UInt8], salt: [UInt8], p: [UInt8]) -> [UInt8] {
        AESCMAC.mac(key: AESCMAC.mac(key: salt, message: n), message: p)
    }

    static let smk2 = s1("smk2"), smk3 = s1("smk3"), smk4 = s1("smk4")

    /// k2 network key material derivation function (§3.9.2): NID (7 bits), EncryptionKey,
    /// PrivacyKey from a NetKey and P (0x00 for the managed flooding credentials, the
    /// friendship P of `friendshipP` for friendship credentials). T = AES-CMAC_s1("smk2")(N),
    /// T1 = AES-CMAC_T(T0 ‖ P ‖ 0x01), T2 = …(T1 ‖ P ‖ 0x02), T3 = …(T2 ‖ P ‖ 0x03);
    /// k2 = (T1 ‖ T2 ‖ T3) mod 2^263.
    public static func k2(n: [UInt8], p: [UInt8]) -> (nid: UInt8, encryptionKey: [UInt8], privacyKey: [UInt8]) {
        let t = AESCMAC.mac(key: smk2, message: n)
        let t1 = AESCMAC.mac(key: t, message: p + [0x01])
        let t2 = AESCMAC.mac(key: t, message: t1 + p + [0x02])
        let t3 = AESCMAC.mac(key: t, message: t2 + p + [0x03])
        return (t1[15] & 0x7F, t2, t3)
    }

    /// k3 derivation function (§3.9.2): the 64-bit Network ID,
    /// AES-CMAC_T("id64" ‖ 0x01) mod 2^64 with T = AES-CMAC_s1("smk3")(N).
    public static func k3(_ n: [UInt8]) -> [UInt8] {
        Array(AESCMAC.mac(key: AESCMAC.mac(key: smk3, message: n), message: Array("id64".utf8) + [0x01])[8..<16])
    }

    /// k4 derivation function (§3.9.2): the 6-bit AID,
    /// AES-CMAC_T("id6" ‖ 0x01) mod 2^6 with T = AES-CMAC_s1("smk4")(N).
    public static func k4(_ n: [UInt8]) -> UInt8 {
        AESCMAC.mac(key: AESCMAC.mac(key: smk4, message: n), message: Array("id6".utf8) + [0x01])[15] & 0x3F
    }

    /// s2 SALT generation function (§3.9.2, v1.1): HMAC-SHA-256 with a zero 32-octet key.
    public static func s2(_ m: [UInt8]) -> [UInt8] {
        hmac(key: [UInt8](repeating: 0, count: 32), m)
    }

    /// k5 derivation function (§3.9.2, v1.1): T = HMAC-SHA-256_SALT(N), k5 = HMAC-SHA-256_T(P).
    public static func k5(n: [UInt8], salt: [UInt8], p: [UInt8]) -> [UInt8] {
        hmac(key: hmac(key: salt, n), p)
    }

    static func hmac(key: [UInt8], _ m: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: m, using: SymmetricKey(data: key)))
    }

    static let id128: [UInt8] = Array("id128".utf8) + [0x01]

    /// IdentityKey (§3.9.6.3.3): k1(NetKey, s1("nkik"), "id128" ‖ 0x01).
    public static func identityKey(netKey: [UInt8]) -> [UInt8] { k1(n: netKey, salt: s1("nkik"), p: id128) }

    /// BeaconKey (§3.9.6.3.4): k1(NetKey, s1("nkbk"), "id128" ‖ 0x01).
    public static func beaconKey(netKey: [UInt8]) -> [UInt8] { k1(n: netKey, salt: s1("nkbk"), p: id128) }

    /// PrivateBeaconKey (§3.9.6.3.5): k1(NetKey, s1("nkpk"), "id128" ‖ 0x01).
    public static func privateBeaconKey(netKey: [UInt8]) -> [UInt8] { k1(n: netKey, salt: s1("nkpk"), p: id128) }

    /// P of the friendship credentials (§3.9.6.3.1): 0x01 ‖ LPNAddress ‖ FriendAddress ‖
    /// LPNCounter ‖ FriendCounter.
    public static func friendshipP(lpnAddress: UInt16, friendAddress: UInt16, lpnCounter: UInt16, friendCounter: UInt16) -> [UInt8] {
        [0x01] + be16(lpnAddress) + be16(friendAddress) + be16(lpnCounter) + be16(friendCounter)
    }

    static let vtad = s1("vtad")

    /// Virtual address of a Label UUID (§3.4.2.3): 0b10 in the top two bits, then
    /// AES-CMAC_s1("vtad")(Label UUID) mod 2^14. Nil unless `label` is 16 octets.
    public static func virtualAddress(label: [UInt8]) -> UInt16? {
        guard label.count == 16 else { return nil }
        let h = AESCMAC.mac(key: vtad, message: label)
        return 0x8000 | (UInt16(h[14]) << 8 | UInt16(h[15])) & 0x3FFF
    }

    @inline(__always) static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(truncatingIfNeeded: v)] }
    @inline(__always) static func be24(_ v: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }
    @inline(__always) static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }
}

/// The 13-octet nonces (Mesh Protocol v1.1 §3.9.5): type, then fields big-endian.
public enum MeshNonce {
    /// Network nonce (§3.9.5.1): 0x00 ‖ CTL·TTL ‖ SEQ ‖ SRC ‖ 0x0000 ‖ IV Index.
    public static func network(ctl: Bool, ttl: UInt8, seq: UInt32, src: UInt16, ivIndex: UInt32) -> [UInt8] {
        MeshNonceBlock.network(ctl: ctl, ttl: ttl, seq: seq, src: src, ivIndex: ivIndex).array
    }

    /// Application nonce (§3.9.5.2): 0x01 ‖ ASZMIC·0 ‖ SEQ ‖ SRC ‖ DST ‖ IV Index.
    /// ASZMIC is the SZMIC of a segmented access message, 0 for an unsegmented one.
    public static func application(aszmic: Bool, seq: UInt32, src: UInt16, dst: UInt16, ivIndex: UInt32) -> [UInt8] {
        MeshNonceBlock.access(application: true, aszmic: aszmic, seq: seq, src: src, dst: dst, ivIndex: ivIndex).array
    }

    /// Device nonce (§3.9.5.3): 0x02 ‖ ASZMIC·0 ‖ SEQ ‖ SRC ‖ DST ‖ IV Index.
    public static func device(aszmic: Bool, seq: UInt32, src: UInt16, dst: UInt16, ivIndex: UInt32) -> [UInt8] {
        MeshNonceBlock.access(application: false, aszmic: aszmic, seq: seq, src: src, dst: dst, ivIndex: ivIndex).array
    }

    /// Proxy nonce (§3.9.5.4), proxy configuration messages: 0x03 ‖ 0x00 ‖ SEQ ‖ SRC ‖
    /// 0x0000 ‖ IV Index.
    public static func proxy(seq: UInt32, src: UInt16, ivIndex: UInt32) -> [UInt8] {
        MeshNonceBlock.proxy(seq: seq, src: src, ivIndex: ivIndex).array
    }

    /// Proxy solicitation nonce (§3.9.5.5): 0x04 ‖ 0x00 ‖ SSEQ ‖ SSRC ‖ 0x0000 ‖ 0x00000000
    /// (solicitation PDUs carry no IV Index; their IVI bit is 0).
    public static func proxySolicitation(sseq: UInt32, ssrc: UInt16) -> [UInt8] {
        MeshNonceBlock.proxySolicitation(sseq: sseq, ssrc: ssrc).array
    }
}

/// A nonce of §3.9.5 on the stack: every kind is type ‖ octet ‖ SEQ (3) ‖ SRC (2) ‖ DST or
/// 0x0000 (2) ‖ IV Index or 0 (4). Made for each PDU (network, upper transport) without an
/// allocation; `MeshNonce` gives the same octets as arrays.
struct MeshNonceBlock {
    /// 13 octets used of 16.
    var bytes: (UInt64, UInt64) = (0, 0)

    init(type: UInt8, second: UInt8, seq: UInt32, src: UInt16, dst: UInt16, ivIndex: UInt32) {
        withUnsafeMutableBytes(of: &bytes) { b in
            b[0] = type; b[1] = second
            b[2] = UInt8(truncatingIfNeeded: seq >> 16); b[3] = UInt8(truncatingIfNeeded: seq >> 8); b[4] = UInt8(truncatingIfNeeded: seq)
            b[5] = UInt8(src >> 8); b[6] = UInt8(truncatingIfNeeded: src)
            b[7] = UInt8(dst >> 8); b[8] = UInt8(truncatingIfNeeded: dst)
            b[9] = UInt8(ivIndex >> 24); b[10] = UInt8(truncatingIfNeeded: ivIndex >> 16)
            b[11] = UInt8(truncatingIfNeeded: ivIndex >> 8); b[12] = UInt8(truncatingIfNeeded: ivIndex)
        }
    }

    static func network(ctl: Bool, ttl: UInt8, seq: UInt32, src: UInt16, ivIndex: UInt32) -> MeshNonceBlock {
        MeshNonceBlock(type: 0x00, second: (ctl ? 0x80 : 0) | ttl & 0x7F, seq: seq, src: src, dst: 0, ivIndex: ivIndex)
    }

    /// Application (AppKey) or device (DevKey) nonce.
    static func access(application: Bool, aszmic: Bool, seq: UInt32, src: UInt16, dst: UInt16, ivIndex: UInt32) -> MeshNonceBlock {
        MeshNonceBlock(type: application ? 0x01 : 0x02, second: aszmic ? 0x80 : 0, seq: seq, src: src, dst: dst, ivIndex: ivIndex)
    }

    static func proxy(seq: UInt32, src: UInt16, ivIndex: UInt32) -> MeshNonceBlock {
        MeshNonceBlock(type: 0x03, second: 0, seq: seq, src: src, dst: 0, ivIndex: ivIndex)
    }

    static func proxySolicitation(sseq: UInt32, ssrc: UInt16) -> MeshNonceBlock {
        MeshNonceBlock(type: 0x04, second: 0, seq: sseq, src: ssrc, dst: 0, ivIndex: 0)
    }

    /// The 13 octets, read in place.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(of: bytes) { body(UnsafeRawBufferPointer(rebasing: $0[0..<13])) }
    }

    var array: [UInt8] { withBytes { Array($0) } }
}

/// Why a Mesh PDU could not be decrypted or authenticated. Key values never appear here.
public struct MeshCryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Fewer octets than the structure needs.
        public static let truncated = Code(rawValue: "truncated")
        /// A field of the wrong size or value (key length, beacon type, MIC size).
        public static let invalidValue = Code(rawValue: "invalid_value")
        /// The NID of the PDU is not the key's.
        public static let nidMismatch = Code(rawValue: "nid_mismatch")
        /// The MIC or authentication value does not verify: wrong key, IV index or damaged data.
        public static let micMismatch = Code(rawValue: "mic_mismatch")
        public var description: String { rawValue }
    }

    public var code: Code
    /// Octet offset in the input where the problem was found.
    public var offset: Int
    public var message: String

    public init(code: Code, offset: Int, message: String) {
        self.code = code; self.offset = offset; self.message = message
    }

    public var description: String { "\(message) (\(code) at offset \(offset))" }

    static func truncated(_ what: String, need: Int, got: Int) -> MeshCryptoError {
        MeshCryptoError(code: .truncated, offset: got, message: "\(what): \(got) octets, needs \(need)")
    }
}
