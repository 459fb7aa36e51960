// BoringSSL as swift-crypto builds and links it: its AES_KEY keeps the expanded key
// schedule, which `AES.permute` would expand again on every block (a tenth of a Mesh dump
// with keys). AES_encrypt is the same hardware, constant-time AES that `permute` calls.
import CCryptoBoringSSL

/// An AES-128 key made once and used for many blocks (a link's session key, a Mesh
/// network's EncryptionKey and PrivacyKey, a TK candidate): the key schedule is expanded
/// here, once, and kept (zeroed when the key goes).
public struct AES128Key: @unchecked Sendable {
    /// Never mutated after `init`: one schedule shared by every copy of the key.
    final class Schedule {
        let key: UnsafeMutablePointer<AES_KEY>
        init(_ bytes: [UInt8]) {
            key = .allocate(capacity: 1)
            key.initialize(to: AES_KEY())
            // Fails only for a key length other than 128, 192 or 256 bits (checked by the caller).
            let rc = bytes.withUnsafeBufferPointer { CCryptoBoringSSL_AES_set_encrypt_key($0.baseAddress, 128, key) }
            precondition(rc == 0, "AES-128 key schedule")
        }
        deinit {
            UnsafeMutableRawPointer(key).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<AES_KEY>.size)
            key.deallocate()
        }
    }
    let schedule: Schedule

    /// `bytes`: 16 octets in the cipher's order (most significant first).
    public init(_ bytes: [UInt8]) {
        precondition(bytes.count == 16, "AES-128 takes a 16-byte key")
        schedule = Schedule(bytes)
    }

    /// Encrypts one 16-byte block in place.
    @inline(__always)
    public func encrypt(_ block: inout [UInt8]) {
        precondition(block.count == 16, "AES-128 takes a 16-byte block")
        block.withUnsafeMutableBytes { encrypt($0.baseAddress!) }
    }

    /// Encrypts the 16 bytes at `block` in place (a block on the caller's stack).
    @inline(__always)
    func encrypt(_ block: UnsafeMutableRawPointer) {
        let b = block.assumingMemoryBound(to: UInt8.self)
        CCryptoBoringSSL_AES_encrypt(b, b, schedule.key)
    }
}

/// AES-CCM as the LE link layer uses it (Core 5.4 Vol 6 Part E §1-2, after RFC 3610):
/// 13-octet nonce (L = 2), 4-octet MIC (M = 4), one octet of additional data (the PDU
/// header with NESN, SN and MD masked), payloads of up to 251 octets. The internal general
/// form (other nonce lengths and M, no additional data, a truncated tag) serves the vendor
/// advertising presets (VendorCrypto.swift).
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

    /// A 16-octet block on the stack: the CBC-MAC state and key stream blocks, so opening or
    /// sealing a PDU allocates only its output.
    typealias Block = (UInt64, UInt64)

    /// Authentication field T (RFC 3610 §2.2): CBC-MAC over B0, the additional data and the
    /// payload. B0 flags: Adata, M' = (M - 2) / 2, L' = L - 1 with L = 15 - nonce length
    /// (the link layer's 13-octet nonce, one octet of additional data, M = 4: 0x49).
    /// `aad`: none or one octet (l(a) = 1 in two octets, then zero padding).
    func mac(_ payload: UnsafeRawBufferPointer, nonce: [UInt8], aad: UInt8?, tagLength: Int) -> Block {
        guard var a = aad else { return mac(payload, nonce: nonce, aad: UnsafeRawBufferPointer(start: nil, count: 0), tagLength: tagLength) }
        return withUnsafeBytes(of: &a) { mac(payload, nonce: nonce, aad: $0, tagLength: tagLength) }
    }

    /// The CBC-MAC itself, with additional data of any length below 0xFF00 octets (l(a) in
    /// two octets, then the data, zero padded to the block), read in place.
    func mac(_ payload: UnsafeRawBufferPointer, nonce: [UInt8], aad: UnsafeRawBufferPointer, tagLength: Int) -> Block {
        nonce.withUnsafeBytes { mac(payload, nonce: $0, aad: aad, tagLength: tagLength) }
    }

    /// The same with the nonce read in place (a Mesh nonce built on the caller's stack).
    func mac(_ payload: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, tagLength: Int) -> Block {
        var block: Block = (0, 0)
        withUnsafeMutableBytes(of: &block) { x in
            let p = x.baseAddress!
            let n = nonce.count
            x[0] = (aad.isEmpty ? 0 : 0x40) | UInt8((tagLength - 2) / 2) << 3 | UInt8(14 - n)
            for i in 0..<n { x[1 + i] = nonce[i] }
            var length = payload.count, k = 15
            while k > n { x[k] = UInt8(truncatingIfNeeded: length); length >>= 8; k -= 1 }
            key.encrypt(p)
            if !aad.isEmpty {
                x[0] ^= UInt8(truncatingIfNeeded: aad.count >> 8)
                x[1] ^= UInt8(truncatingIfNeeded: aad.count)
                var j = 2
                for b in aad {
                    x[j] ^= b; j += 1
                    if j == 16 { key.encrypt(p); j = 0 }
                }
                if j != 0 { key.encrypt(p) }
            }
            var o = 0
            while o < payload.count {
                let c = min(16, payload.count - o)
                for i in 0..<c { x[i] ^= payload[o + i] }
                key.encrypt(p)
                o += c
            }
        }
        return block
    }

    /// Key stream block S_i = e(K, A_i), A_i = flags L' | nonce | i in L octets (§2.3).
    @inline(__always)
    func stream(_ i: Int, nonce: UnsafeRawBufferPointer, into block: inout Block) {
        withUnsafeMutableBytes(of: &block) { a in
            let n = nonce.count
            a[0] = UInt8(14 - n)
            for k in 0..<n { a[1 + k] = nonce[k] }
            var c = i, k = 15
            while k > n { a[k] = UInt8(truncatingIfNeeded: c); c >>= 8; k -= 1 }
            key.encrypt(a.baseAddress!)
        }
    }

    /// XORs the key stream S_1, S_2, ... into `data`.
    @inline(__always)
    func crypt(_ data: inout [UInt8], nonce: [UInt8]) {
        nonce.withUnsafeBytes { n in data.withUnsafeMutableBytes { crypt($0, nonce: n) } }
    }

    /// XORs the key stream S_1, S_2, ... into the bytes at `d`.
    @inline(__always)
    func crypt(_ d: UnsafeMutableRawBufferPointer, nonce: UnsafeRawBufferPointer) {
        var s: Block = (0, 0)
        var o = 0, i = 1
        let count = d.count
        while o < count {
            stream(i, nonce: nonce, into: &s)
            withUnsafeBytes(of: &s) { s in for k in 0..<min(16, count - o) { d[o + k] ^= s[k] } }
            o += 16; i += 1
        }
    }

    /// The MIC: the first `count` octets of T XOR S_0.
    @inline(__always)
    func tag(_ t: Block, nonce: [UInt8], count: Int) -> [UInt8] {
        nonce.withUnsafeBytes { tag(t, nonce: $0, count: count) }
    }

    @inline(__always)
    func tag(_ t: Block, nonce: UnsafeRawBufferPointer, count: Int) -> [UInt8] {
        var s: Block = (0, 0)
        stream(0, nonce: nonce, into: &s)
        let x = (t.0 ^ s.0, t.1 ^ s.1)
        return withUnsafeBytes(of: x) { Array($0.prefix(count)) }
    }

    /// Whether `tag` equals the first `tag.count` octets (at most `limit`) of T XOR S_0.
    @inline(__always)
    func verify(_ t: Block, nonce: [UInt8], tag: UnsafeRawBufferPointer, limit: Int) -> Bool {
        nonce.withUnsafeBytes { verify(t, nonce: $0, tag: tag, limit: limit) }
    }

    @inline(__always)
    func verify(_ t: Block, nonce: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, limit: Int) -> Bool {
        var s: Block = (0, 0)
        stream(0, nonce: nonce, into: &s)
        let x = (t.0 ^ s.0, t.1 ^ s.1)
        var diff: UInt8 = 0
        withUnsafeBytes(of: x) { u in for k in 0..<min(tag.count, limit) { diff |= u[k] ^ tag[k] } }
        return !tag.isEmpty && diff == 0
    }

    /// Encrypts `plaintext`: ciphertext of the same length followed by the 4-octet MIC.
    public func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: UInt8) -> [UInt8] {
        var out = plaintext
        let tag = sealTag(&out, nonce: nonce, aad: aad, tagLength: Self.micLength, sent: Self.micLength)
        return out + tag
    }

    /// General CCM (RFC 3610), for vendor formats: encrypts `data` in place and returns the
    /// first `sent` octets of the encrypted authentication value U (M = `tagLength` octets).
    /// `nonce`: 7 to 13 octets (L = 15 - count); `aad`: none or one octet.
    func sealTag(_ data: inout [UInt8], nonce: [UInt8], aad: UInt8?, tagLength: Int, sent: Int) -> [UInt8] {
        let t = data.withUnsafeBytes { mac($0, nonce: nonce, aad: aad, tagLength: tagLength) }
        crypt(&data, nonce: nonce)
        return tag(t, nonce: nonce, count: sent)
    }

    /// Decrypts `sealed` (ciphertext then MIC) into `out` (replaced). False when the MIC
    /// does not verify (wrong key, counter or direction, or damaged data); `out` then holds
    /// the unverified plaintext.
    public func open(_ sealed: UnsafeRawBufferPointer, nonce: [UInt8], aad: UInt8, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        guard sealed.count >= Self.micLength else { return false }
        let n = sealed.count - Self.micLength
        return open(
            UnsafeRawBufferPointer(rebasing: sealed[0..<n]), tag: UnsafeRawBufferPointer(rebasing: sealed[n...]),
            nonce: nonce, aad: aad, tagLength: Self.micLength, into: &out)
    }

    /// General CCM: decrypts `ciphertext` into `out` (replaced) and checks `tag`, the first
    /// `tag.count` octets of U (M = `tagLength`). False when they differ.
    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: [UInt8], aad: UInt8?,
        tagLength: Int, into out: inout [UInt8]
    ) -> Bool {
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: ciphertext)
        crypt(&out, nonce: nonce)
        let t = out.withUnsafeBytes { mac($0, nonce: nonce, aad: aad, tagLength: tagLength) }
        return verify(t, nonce: nonce, tag: tag, limit: tagLength)
    }

    /// CBC-MAC with additional data of any length below 0xFF00 octets (RFC 3610 §2.2: l(a) in
    /// two octets, then the data, zero padded to the block): Mesh's upper transport takes a
    /// 16-octet Label UUID here for virtual destinations. Empty `aad`: none (Adata 0).
    func mac(_ payload: UnsafeRawBufferPointer, nonce: [UInt8], aadBytes aad: [UInt8], tagLength: Int) -> Block {
        aad.withUnsafeBytes { mac(payload, nonce: nonce, aad: $0, tagLength: tagLength) }
    }

    /// General CCM with additional data of any length: encrypts `data` in place and returns
    /// the `tagLength`-octet MIC.
    func sealTag(_ data: inout [UInt8], nonce: [UInt8], aadBytes: [UInt8], tagLength: Int) -> [UInt8] {
        let t = data.withUnsafeBytes { mac($0, nonce: nonce, aadBytes: aadBytes, tagLength: tagLength) }
        crypt(&data, nonce: nonce)
        return tag(t, nonce: nonce, count: tagLength)
    }

    /// General CCM with additional data of any length: decrypts `ciphertext` into `out`
    /// (replaced) and checks the `tag.count`-octet MIC. False when it differs.
    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: [UInt8], aadBytes: [UInt8],
        into out: inout [UInt8]
    ) -> Bool {
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: ciphertext)
        crypt(&out, nonce: nonce)
        let t = out.withUnsafeBytes { mac($0, nonce: nonce, aadBytes: aadBytes, tagLength: tag.count) }
        return verify(t, nonce: nonce, tag: tag, limit: 16)
    }

    /// General CCM with everything read and written in place (Mesh network and upper
    /// transport PDUs): decrypts `ciphertext` into `out` (as many octets) and checks the
    /// `tag.count`-octet MIC. False when it differs; `out` then holds unverified plaintext.
    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        precondition(out.count == ciphertext.count)
        if !ciphertext.isEmpty { out.copyMemory(from: ciphertext) }
        crypt(out, nonce: nonce)
        let t = mac(UnsafeRawBufferPointer(out), nonce: nonce, aad: aad, tagLength: tag.count)
        return verify(t, nonce: nonce, tag: tag, limit: 16)
    }

    /// General CCM in place: encrypts the bytes at `data` and writes the `tag.count`-octet MIC
    /// to `tag`.
    func seal(_ data: UnsafeMutableRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, tag: UnsafeMutableRawBufferPointer) {
        let t = mac(UnsafeRawBufferPointer(data), nonce: nonce, aad: aad, tagLength: tag.count)
        crypt(data, nonce: nonce)
        var s: Block = (0, 0)
        stream(0, nonce: nonce, into: &s)
        let x = (t.0 ^ s.0, t.1 ^ s.1)
        withUnsafeBytes(of: x) { u in for k in 0..<tag.count { tag[k] = u[k] } }
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
