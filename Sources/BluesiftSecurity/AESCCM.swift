import Crypto
import _CryptoExtras

/// An AES-128 key made once and used for many blocks (a link's session key, a TK candidate).
public struct AES128Key: @unchecked Sendable {
    let key: SymmetricKey

    /// `bytes`: 16 octets in the cipher's order (most significant first).
    public init(_ bytes: [UInt8]) {
        precondition(bytes.count == 16, "AES-128 takes a 16-byte key")
        key = SymmetricKey(data: bytes)
    }

    /// Encrypts one 16-byte block in place.
    @inline(__always)
    public func encrypt(_ block: inout [UInt8]) {
        // permute throws only for a key or block of the wrong size.
        try! AES.permute(&block, key: key)
    }
}

/// AES-CCM as the LE link layer uses it (Core 5.4 Vol 6 Part E §1-2, after RFC 3610):
/// 13-octet nonce (L = 2), 4-octet MIC (M = 4), one octet of additional data (the PDU
/// header with NESN, SN and MD masked), payloads of up to 251 octets.
public struct AESCCM: Sendable {
    public static let micLength = 4
    let key: AES128Key

    /// `key`: the session key SK, most significant octet first (Vol 6 Part E §1).
    public init(key: [UInt8]) { self.key = AES128Key(key) }

    /// Nonce (Vol 6 Part E §2.1): the 39-bit packetCounter and the direction bit (1 when
    /// the central sent the PDU) in five octets, least significant first, then the IV
    /// (IVm then IVs, each as sent on air).
    public static func nonce(counter: UInt64, fromCentral: Bool, iv: [UInt8]) -> [UInt8] {
        var n = [UInt8](repeating: 0, count: 13)
        for i in 0..<4 { n[i] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(i))) }
        n[4] = UInt8(truncatingIfNeeded: counter >> 32) & 0x7F | (fromCentral ? 0x80 : 0)
        for i in 0..<min(8, iv.count) { n[5 + i] = iv[i] }
        return n
    }

    /// Authentication field T: CBC-MAC over B0, the additional data and the payload
    /// (§2.2: B0 flags 0x49 = Adata, M = 4, L = 2).
    func mac(_ payload: UnsafeRawBufferPointer, nonce: [UInt8], aad: UInt8) -> [UInt8] {
        var x = [UInt8](repeating: 0, count: 16)
        x[0] = 0x49
        for i in 0..<13 { x[1 + i] = nonce[i] }
        x[14] = UInt8(payload.count >> 8); x[15] = UInt8(truncatingIfNeeded: payload.count)
        key.encrypt(&x)
        // B1: l(a) = 1 (two octets), the header octet, zero padding.
        x[1] ^= 0x01; x[2] ^= aad
        key.encrypt(&x)
        var o = 0
        while o < payload.count {
            let n = min(16, payload.count - o)
            for i in 0..<n { x[i] ^= payload[o + i] }
            key.encrypt(&x)
            o += n
        }
        return x
    }

    /// Key stream block S_i = e(SK, A_i), A_i = flags 0x01 | nonce | i (§2.3).
    @inline(__always)
    func stream(_ i: Int, nonce: [UInt8], into a: inout [UInt8]) {
        a[0] = 0x01
        for k in 0..<13 { a[1 + k] = nonce[k] }
        a[14] = UInt8(i >> 8); a[15] = UInt8(truncatingIfNeeded: i)
        key.encrypt(&a)
    }

    /// Encrypts `plaintext`: ciphertext of the same length followed by the 4-octet MIC.
    public func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: UInt8) -> [UInt8] {
        let t = plaintext.withUnsafeBytes { mac($0, nonce: nonce, aad: aad) }
        var out = plaintext
        var s = [UInt8](repeating: 0, count: 16)
        var o = 0, i = 1
        while o < out.count {
            stream(i, nonce: nonce, into: &s)
            for k in 0..<min(16, out.count - o) { out[o + k] ^= s[k] }
            o += 16; i += 1
        }
        stream(0, nonce: nonce, into: &s)
        for k in 0..<Self.micLength { out.append(t[k] ^ s[k]) }
        return out
    }

    /// Decrypts `sealed` (ciphertext then MIC) into `out` (replaced). False when the MIC
    /// does not verify (wrong key, counter or direction, or damaged data); `out` then holds
    /// the unverified plaintext.
    public func open(_ sealed: UnsafeRawBufferPointer, nonce: [UInt8], aad: UInt8, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        guard sealed.count >= Self.micLength else { return false }
        let n = sealed.count - Self.micLength
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: sealed[0..<n]))
        var s = [UInt8](repeating: 0, count: 16)
        var o = 0, i = 1
        while o < n {
            stream(i, nonce: nonce, into: &s)
            for k in 0..<min(16, n - o) { out[o + k] ^= s[k] }
            o += 16; i += 1
        }
        let t = out.withUnsafeBytes { mac($0, nonce: nonce, aad: aad) }
        stream(0, nonce: nonce, into: &s)
        var diff: UInt8 = 0
        for k in 0..<Self.micLength { diff |= (t[k] ^ s[k]) ^ sealed[n + k] }
        return diff == 0
    }

    /// Additional data of a data channel PDU (§2.2): the first header octet with NESN, SN
    /// and MD set to zero.
    @inline(__always)
    public static func aad(header: UInt8) -> UInt8 { header & 0xE3 }
}

/// LE link encryption set-up (Core 5.4 Vol 6 Part B §5.1.3.1, Part E §1).
public enum LinkEncryption {
    /// SK = e(LTK, SKD), SKD = SKDs || SKDm (SKDm in the least significant half).
    /// `ltk` most significant octet first; `skdm`, `skds` as sent (least significant first).
    public static func sessionKey(ltk: [UInt8], skdm: [UInt8], skds: [UInt8]) -> [UInt8] {
        var skd = Array(skds.reversed()) + Array(skdm.reversed())
        AES128Key(ltk).encrypt(&skd)
        return skd
    }

    /// IV = IVs || IVm, in the nonce least significant first: IVm as sent, then IVs.
    public static func iv(ivm: [UInt8], ivs: [UInt8]) -> [UInt8] { ivm + ivs }
}
