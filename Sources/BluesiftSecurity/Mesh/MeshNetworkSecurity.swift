/// One set of network credentials made once from a NetKey (Mesh Protocol v1.1 §3.9.6.3.1):
/// the NID and the cipher states of EncryptionKey and PrivacyKey, so a decoder matches a
/// PDU's NID and decrypts without deriving anything per packet. Never shows key bytes.
public struct MeshNetworkCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let nid: UInt8
    let encryption: AESCCM
    let privacy: AES128Key

    /// `p`: 0x00 for the managed flooding credentials, `MeshCrypto.friendshipP` for the
    /// friendship credentials of one friendship.
    public init?(netKey: [UInt8], p: [UInt8] = [0x00]) {
        guard netKey.count == 16 else { return nil }
        let (nid, enc, priv) = MeshCrypto.k2(n: netKey, p: p)
        self.init(nid: nid, encryptionKey: enc, privacyKey: priv)
    }

    /// From derived keys (16 octets each; checked by the caller).
    init(nid: UInt8, encryptionKey: [UInt8], privacyKey: [UInt8]) {
        self.nid = nid
        encryption = AESCCM(key: encryptionKey)
        privacy = AES128Key(privacyKey)
    }

    public var description: String { "MeshNetworkCredentials(nid: 0x\(String(nid, radix: 16)))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["nid": nid]) }
}

/// The kind of nonce a network PDU is encrypted with (§3.9.5): advertising and GATT network
/// PDUs the network nonce, proxy configuration messages the proxy nonce, Solicitation PDUs
/// the proxy solicitation nonce.
public enum MeshNetworkNonceKind: Sendable, Hashable {
    case network, proxy, proxySolicitation
}

/// A network PDU in the clear (Mesh Protocol v1.1 §3.4.4): header fields, DST, the lower
/// transport PDU, and the IV index it was encrypted with.
public struct MeshNetworkPDU: Sendable, Hashable {
    /// Least significant bit of the IV index used.
    public var ivi: UInt8
    public var nid: UInt8
    public var ctl: Bool
    public var ttl: UInt8
    /// 24 bits.
    public var seq: UInt32
    public var src: UInt16
    public var dst: UInt16
    public var transportPDU: [UInt8]
    public var ivIndex: UInt32

    public init(nid: UInt8, ctl: Bool, ttl: UInt8, seq: UInt32, src: UInt16, dst: UInt16, transportPDU: [UInt8], ivIndex: UInt32) {
        self.ivi = UInt8(ivIndex & 1); self.nid = nid & 0x7F; self.ctl = ctl; self.ttl = ttl & 0x7F
        self.seq = seq & 0xFF_FFFF; self.src = src; self.dst = dst; self.transportPDU = transportPDU; self.ivIndex = ivIndex
    }

    /// NetMIC size (§3.4.4.6): 64 bits for control messages, 32 for access messages.
    public var netMICSize: Int { ctl ? 8 : 4 }
}

/// The deobfuscated header of a network PDU (§3.9.7.3), before decryption: what a decoder can
/// show when the MIC does not verify.
public struct MeshNetworkHeader: Sendable, Hashable {
    public var ivi: UInt8
    public var nid: UInt8
    public var ctl: Bool
    public var ttl: UInt8
    public var seq: UInt32
    public var src: UInt16
}

/// Network layer security: obfuscation (§3.9.7.3) and authenticated encryption (§3.9.7.2).
public enum MeshNetworkSecurity {
    /// Smallest network PDU: IVI·NID and 6 obfuscated octets, then the 7 octets of Privacy
    /// Random (DST, transport PDU and NetMIC: one transport octet with a 32-bit NetMIC).
    public static let minimumPDUSize = 14

    /// The IV index a received PDU used (§3.10.5): `current` when its low bit is the PDU's IVI,
    /// else the one before it (a node accepts the previous index during an IV update).
    public static func ivIndex(ivi: UInt8, current: UInt32) -> UInt32 {
        current & 1 == UInt32(ivi & 1) ? current : current &- 1
    }

    /// PECB (§3.9.7.3): e(PrivacyKey, 0x0000000000 ‖ IV Index ‖ Privacy Random), Privacy
    /// Random = the 7 octets after the obfuscated header (EncDST ‖ EncTransportPDU ‖ NetMIC).
    static func pecb(_ privacy: AES128Key, ivIndex: UInt32, random: ArraySlice<UInt8>) -> (UInt64, UInt64) {
        // One block on the stack: this runs for every network PDU and every candidate key.
        var block: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &block) { b in
            b[5] = UInt8(ivIndex >> 24); b[6] = UInt8(ivIndex >> 16 & 0xFF); b[7] = UInt8(ivIndex >> 8 & 0xFF); b[8] = UInt8(ivIndex & 0xFF)
            var i = 9
            for x in random { b[i] = x; i += 1 }
            privacy.encrypt(b.baseAddress!)
        }
        return block
    }

    /// Privacy (de-)obfuscation (§3.9.7.3): CTL·TTL ‖ SEQ ‖ SRC XOR PECB[0..<6]. The same
    /// operation both ways; returns the PDU with octets 1..<7 replaced.
    public static func obfuscate(_ pdu: [UInt8], credentials c: MeshNetworkCredentials, ivIndex: UInt32) throws(MeshCryptoError) -> [UInt8] {
        guard pdu.count >= minimumPDUSize else { throw .truncated("network PDU", need: minimumPDUSize, got: pdu.count) }
        var out = pdu
        obfuscateInPlace(&out, c, ivIndex: ivIndex)
        return out
    }

    /// `obfuscate` on a PDU of at least `minimumPDUSize` octets, in place.
    static func obfuscateInPlace(_ pdu: inout [UInt8], _ c: MeshNetworkCredentials, ivIndex: UInt32) {
        let p = pecb(c.privacy, ivIndex: ivIndex, random: pdu[7..<14])
        withUnsafeBytes(of: p) { p in for i in 0..<6 { pdu[1 + i] ^= p[i] } }
    }

    /// The header of an obfuscated PDU, deobfuscated with `credentials` (checks the NID).
    public static func deobfuscate(_ pdu: [UInt8], credentials c: MeshNetworkCredentials, ivIndex: UInt32) throws(MeshCryptoError) -> MeshNetworkHeader {
        guard pdu.count >= minimumPDUSize else { throw .truncated("network PDU", need: minimumPDUSize, got: pdu.count) }
        guard pdu[0] & 0x7F == c.nid else {
            throw MeshCryptoError(code: .nidMismatch, offset: 0, message: "NID 0x\(String(pdu[0] & 0x7F, radix: 16)) is not the key's")
        }
        // Only the six header octets are needed: no copy of the PDU.
        let p = pecb(c.privacy, ivIndex: ivIndex, random: pdu[7..<14])
        let h = withUnsafeBytes(of: p) { p in (pdu[1] ^ p[0], pdu[2] ^ p[1], pdu[3] ^ p[2], pdu[4] ^ p[3], pdu[5] ^ p[4], pdu[6] ^ p[5]) }
        return MeshNetworkHeader(
            ivi: pdu[0] >> 7, nid: pdu[0] & 0x7F, ctl: h.0 & 0x80 != 0, ttl: h.0 & 0x7F,
            seq: UInt32(h.1) << 16 | UInt32(h.2) << 8 | UInt32(h.3), src: UInt16(h.4) << 8 | UInt16(h.5))
    }

    static func nonce(_ kind: MeshNetworkNonceKind, ctl: Bool, ttl: UInt8, seq: UInt32, src: UInt16, ivIndex: UInt32) -> MeshNonceBlock {
        switch kind {
        case .network: MeshNonceBlock.network(ctl: ctl, ttl: ttl, seq: seq, src: src, ivIndex: ivIndex)
        case .proxy: MeshNonceBlock.proxy(seq: seq, src: src, ivIndex: ivIndex)
        case .proxySolicitation: MeshNonceBlock.proxySolicitation(sseq: seq, ssrc: src)
        }
    }

    /// Decrypts a received network PDU (§3.9.7.2, §3.9.7.3): deobfuscates the header with the
    /// IV index its IVI selects from `currentIVIndex`, then opens DST ‖ TransportPDU with
    /// AES-CCM (EncryptionKey, the nonce of `kind`, NetMIC of 32 bits, or 64 when CTL is 1).
    public static func decrypt(
        _ pdu: [UInt8], credentials c: MeshNetworkCredentials, currentIVIndex: UInt32,
        nonce kind: MeshNetworkNonceKind = .network
    ) throws(MeshCryptoError) -> MeshNetworkPDU {
        guard pdu.count >= minimumPDUSize else { throw .truncated("network PDU", need: minimumPDUSize, got: pdu.count) }
        let iv = ivIndex(ivi: pdu[0] >> 7, current: currentIVIndex)
        let h = try deobfuscate(pdu, credentials: c, ivIndex: iv)
        let mic = h.ctl ? 8 : 4
        // DST (2) before the MIC; the transport PDU may be empty (Solicitation PDUs).
        guard pdu.count >= 7 + 2 + mic else { throw .truncated("network PDU", need: 7 + 2 + mic, got: pdu.count) }
        let n = nonce(kind, ctl: h.ctl, ttl: h.ttl, seq: h.seq, src: h.src, ivIndex: iv)
        // DST ‖ TransportPDU opened on the stack: the transport PDU is the one array made.
        let end = pdu.count - mic
        var dst: UInt16 = 0
        var transport: [UInt8] = []
        let ok = pdu.withUnsafeBytes { b in
            withUnsafeTemporaryAllocation(byteCount: end - 7, alignment: 1) { plain in
                let ok = n.withBytes { n in
                    c.encryption.open(
                        UnsafeRawBufferPointer(rebasing: b[7..<end]), tag: UnsafeRawBufferPointer(rebasing: b[end...]),
                        nonce: n, aad: UnsafeRawBufferPointer(start: nil, count: 0), into: plain)
                }
                if ok {
                    dst = UInt16(plain[0]) << 8 | UInt16(plain[1])
                    transport = [UInt8](UnsafeRawBufferPointer(rebasing: plain[2...]))
                }
                return ok
            }
        }
        guard ok else { throw MeshCryptoError(code: .micMismatch, offset: end, message: "NetMIC does not verify") }
        return MeshNetworkPDU(nid: h.nid, ctl: h.ctl, ttl: h.ttl, seq: h.seq, src: h.src, dst: dst, transportPDU: transport, ivIndex: iv)
    }

    /// The inverse of `decrypt`: encrypts DST ‖ TransportPDU, then obfuscates the header.
    /// The PDU's NID is the credentials'.
    public static func encrypt(
        _ p: MeshNetworkPDU, credentials c: MeshNetworkCredentials,
        nonce kind: MeshNetworkNonceKind = .network
    ) throws(MeshCryptoError) -> [UInt8] {
        // Privacy Random takes 7 octets after the header: DST, transport PDU and NetMIC.
        guard 2 + p.transportPDU.count + p.netMICSize >= 7 else { throw .truncated("transport PDU", need: 1, got: 0) }
        // IVI·NID ‖ CTL·TTL ‖ SEQ ‖ SRC ‖ DST ‖ TransportPDU ‖ NetMIC written once, sealed and
        // obfuscated in place.
        let t = p.transportPDU.count, mic = p.netMICSize
        var out = [UInt8](repeating: 0, count: 9 + t + mic)
        out[0] = UInt8(p.ivIndex & 1) << 7 | c.nid; out[1] = (p.ctl ? 0x80 : 0) | p.ttl & 0x7F
        out[2] = UInt8(truncatingIfNeeded: p.seq >> 16); out[3] = UInt8(truncatingIfNeeded: p.seq >> 8); out[4] = UInt8(truncatingIfNeeded: p.seq)
        out[5] = UInt8(p.src >> 8); out[6] = UInt8(truncatingIfNeeded: p.src); out[7] = UInt8(p.dst >> 8); out[8] = UInt8(truncatingIfNeeded: p.dst)
        for i in 0..<t { out[9 + i] = p.transportPDU[i] }
        let n = nonce(kind, ctl: p.ctl, ttl: p.ttl, seq: p.seq, src: p.src, ivIndex: p.ivIndex)
        out.withUnsafeMutableBytes { o in
            n.withBytes { n in
                c.encryption.seal(
                    UnsafeMutableRawBufferPointer(rebasing: o[7..<(9 + t)]), nonce: n, aad: UnsafeRawBufferPointer(start: nil, count: 0),
                    tag: UnsafeMutableRawBufferPointer(rebasing: o[(9 + t)...]))
            }
        }
        obfuscateInPlace(&out, c, ivIndex: p.ivIndex)
        return out
    }
}
