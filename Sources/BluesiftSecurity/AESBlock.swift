// One security module for the host's pairing and the decoder's decryption (Core 5.4 Vol 3
// Part H §2.2 toolbox, Vol 6 Part E AES-CCM). Single blocks use swift-crypto's AES-128;
// keys used for many blocks (`AES128Key`) keep their expanded schedule (`AESRounds`,
// checked against swift-crypto block for block in the tests).
import Crypto
import _CryptoExtras

/// AES-128 encryption of one 16-byte block (Core 5.4 Vol 3 Part H §2.2.1 "e").
/// Byte order is the cipher's own (most significant octet first), as FIPS-197 defines it.
public enum AES128 {
    public static func encrypt(key: [UInt8], block: [UInt8]) -> [UInt8] {
        precondition(key.count == 16 && block.count == 16, "AES-128 takes a 16-byte key and block")
        var out = block
        // permute throws only for a key or block of the wrong size, checked above.
        try! AES.permute(&out, key: SymmetricKey(data: key))
        return out
    }

    /// The inverse (one block of AES-ECB decryption: Govee's H512x event frames).
    public static func decrypt(key: [UInt8], block: [UInt8]) -> [UInt8] {
        precondition(key.count == 16 && block.count == 16, "AES-128 takes a 16-byte key and block")
        var out = block
        try! AES.inversePermute(&out, key: SymmetricKey(data: key))
        return out
    }
}

/// AES-128 encryption (FIPS-197) with the key schedule expanded once (§5.2) and the rounds
/// done with the usual 32-bit tables (SubBytes, ShiftRows and MixColumns of one column in
/// one lookup, §5.2 of the Rijndael proposal), built from the S-box at first use. For
/// `AES128Key` only: one key, many blocks.
final class AESRounds: @unchecked Sendable {
    /// 44 round-key words, big-endian (w[0] holds key octets 0-3).
    let w: UnsafeMutablePointer<UInt32>

    init(_ key: [UInt8]) {
        w = .allocate(capacity: 44)
        let t = AESTables.shared
        for i in 0..<4 { w[i] = UInt32(key[4 * i]) << 24 | UInt32(key[4 * i + 1]) << 16 | UInt32(key[4 * i + 2]) << 8 | UInt32(key[4 * i + 3]) }
        var rcon: UInt32 = 0x0100_0000
        for i in 4..<44 {
            var x = w[i - 1]
            if i % 4 == 0 {
                x = (x << 8 | x >> 24) // RotWord
                x = t.subWord(x) ^ rcon // SubWord, Rcon
                rcon = rcon & 0x8000_0000 != 0 ? (rcon << 1) ^ 0x1B00_0000 : rcon << 1
            }
            w[i] = w[i - 4] ^ x
        }
    }

    deinit { w.deallocate() }

    /// Encrypts the 16 bytes at `p` in place.
    @inline(__always)
    func encrypt(_ p: UnsafeMutableRawPointer) {
        let t = AESTables.shared
        let te = t.te, sb = t.sbox, w = self.w
        func load(_ i: Int) -> UInt32 { UInt32(bigEndian: p.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
        var s0 = load(0) ^ w[0], s1 = load(1) ^ w[1], s2 = load(2) ^ w[2], s3 = load(3) ^ w[3]
        @inline(__always) func col(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ k: UInt32) -> UInt32 {
            te[Int(a >> 24)] ^ te[256 + Int(b >> 16 & 0xFF)] ^ te[512 + Int(c >> 8 & 0xFF)] ^ te[768 + Int(d & 0xFF)] ^ k
        }
        var r = 4
        while r < 40 {
            let t0 = col(s0, s1, s2, s3, w[r]), t1 = col(s1, s2, s3, s0, w[r + 1])
            let t2 = col(s2, s3, s0, s1, w[r + 2]), t3 = col(s3, s0, s1, s2, w[r + 3])
            s0 = t0; s1 = t1; s2 = t2; s3 = t3
            r += 4
        }
        // The last round has no MixColumns: the S-box alone.
        @inline(__always) func last(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ k: UInt32) -> UInt32 {
            (UInt32(sb[Int(a >> 24)]) << 24 | UInt32(sb[Int(b >> 16 & 0xFF)]) << 16 | UInt32(sb[Int(c >> 8 & 0xFF)]) << 8
                | UInt32(sb[Int(d & 0xFF)])) ^ k
        }
        let o0 = last(s0, s1, s2, s3, w[40]), o1 = last(s1, s2, s3, s0, w[41])
        let o2 = last(s2, s3, s0, s1, w[42]), o3 = last(s3, s0, s1, s2, w[43])
        p.storeBytes(of: o0.bigEndian, toByteOffset: 0, as: UInt32.self)
        p.storeBytes(of: o1.bigEndian, toByteOffset: 4, as: UInt32.self)
        p.storeBytes(of: o2.bigEndian, toByteOffset: 8, as: UInt32.self)
        p.storeBytes(of: o3.bigEndian, toByteOffset: 12, as: UInt32.self)
    }
}

/// The S-box (FIPS-197 §5.1.1: multiplicative inverse in GF(2^8), then the affine map) and
/// the four round tables made from it, once per process.
final class AESTables: @unchecked Sendable {
    static let shared = AESTables()
    let sbox: UnsafeMutablePointer<UInt8>
    /// Te0..Te3 one after another: Te0[x] = (2·S[x], S[x], S[x], 3·S[x]), Te_k = Te0 rotated
    /// right by 8k bits.
    let te: UnsafeMutablePointer<UInt32>

    private init() {
        sbox = .allocate(capacity: 256)
        te = .allocate(capacity: 1024)
        func rotl(_ x: UInt8, _ n: UInt8) -> UInt8 { x << n | x >> (8 - n) }
        // p runs over the multiplicative group by 3, q over its inverses by 1/3.
        var p: UInt8 = 1, q: UInt8 = 1
        repeat {
            p = p ^ (p << 1) ^ (p & 0x80 != 0 ? 0x1B : 0)
            q ^= q << 1; q ^= q << 2; q ^= q << 4
            if q & 0x80 != 0 { q ^= 0x09 }
            sbox[Int(p)] = q ^ rotl(q, 1) ^ rotl(q, 2) ^ rotl(q, 3) ^ rotl(q, 4) ^ 0x63
        } while p != 1
        sbox[0] = 0x63
        for x in 0..<256 {
            let s = sbox[x]
            let s2 = s << 1 ^ (s & 0x80 != 0 ? 0x1B : 0), s3 = s2 ^ s
            let v = UInt32(s2) << 24 | UInt32(s) << 16 | UInt32(s) << 8 | UInt32(s3)
            te[x] = v
            te[256 + x] = v >> 8 | v << 24
            te[512 + x] = v >> 16 | v << 16
            te[768 + x] = v >> 24 | v << 8
        }
    }

    func subWord(_ x: UInt32) -> UInt32 {
        UInt32(sbox[Int(x >> 24)]) << 24 | UInt32(sbox[Int(x >> 16 & 0xFF)]) << 16 | UInt32(sbox[Int(x >> 8 & 0xFF)]) << 8
            | UInt32(sbox[Int(x & 0xFF)])
    }
}
