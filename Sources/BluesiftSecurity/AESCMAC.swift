/// AES-CMAC with a 128-bit key (RFC 4493; Core 5.4 Vol 3 Part H §2.2.5 uses it for f4-f6, g2,
/// h6, h7). swift-crypto offers no CMAC, so the mode is written here over its AES block (`AES128Key`);
/// RFC 4493's four examples are its tests. Byte order: the RFC's (first octet first).
public enum AESCMAC {
    /// The 16-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(key.count == 16, "AES-CMAC takes a 16-byte key")
        let t = message.withUnsafeBytes { mac(AES128Key(key), $0) }
        return withUnsafeBytes(of: t) { Array($0) }
    }

    /// The MAC as a block on the stack, the key made once (a Mesh beacon authenticated for
    /// every beacon heard allocates only the message).
    static func mac(_ k: AES128Key, _ m: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var sub: (UInt64, UInt64) = (0, 0), x: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &sub) { s in
            withUnsafeMutableBytes(of: &x) { x in
                // L = AES(K, 0), K1 = L·2; K2 = K1·2 for a padded last block (§2.3, §2.4 step 4).
                k.encrypt(s.baseAddress!)
                double(s)
                let n = max(1, (m.count + 15) / 16)
                let complete = !m.isEmpty && m.count % 16 == 0
                if !complete { double(s) }
                for i in 0..<(n - 1) {
                    for j in 0..<16 { x[j] ^= m[16 * i + j] }
                    k.encrypt(x.baseAddress!)
                }
                let tail = m.count - 16 * (n - 1)
                for j in 0..<tail { x[j] ^= m[16 * (n - 1) + j] }
                if !complete { x[tail] ^= 0x80 }
                for j in 0..<16 { x[j] ^= s[j] }
                k.encrypt(x.baseAddress!)
            }
        }
        return x
    }

    /// v·2 in GF(2^128) (RFC 4493 §2.3), in place.
    static func double(_ v: UnsafeMutableRawBufferPointer) {
        let carry = v[0] & 0x80 != 0
        for i in 0..<15 { v[i] = v[i] << 1 | v[i + 1] >> 7 }
        v[15] <<= 1
        if carry { v[15] ^= 0x87 }
    }

    /// RFC 4493 §2.3: L = AES(K, 0); K1 = L<<1 (^0x87), K2 = K1<<1 (^0x87).
    static func subkeys(_ key: [UInt8]) -> ([UInt8], [UInt8]) {
        func double(_ v: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 16)
            for i in 0..<16 { out[i] = v[i] << 1 | (i < 15 ? v[i + 1] >> 7 : 0) }
            if v[0] & 0x80 != 0 { out[15] ^= 0x87 }
            return out
        }
        let l = AES128.encrypt(key: key, block: [UInt8](repeating: 0, count: 16))
        let k1 = double(l)
        return (k1, double(k1))
    }
}
