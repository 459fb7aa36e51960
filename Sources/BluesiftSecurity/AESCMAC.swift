/// AES-CMAC with a 128-bit key (RFC 4493; Core 5.4 Vol 3 Part H §2.2.5 uses it for f4-f6, g2,
/// h6, h7). swift-crypto offers no CMAC, so the mode is written here over `AES128.encrypt`;
/// RFC 4493's four examples are its tests. Byte order: the RFC's (first octet first).
public enum AESCMAC {
    /// The 16-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(key.count == 16, "AES-CMAC takes a 16-byte key")
        let (k1, k2) = subkeys(key)
        let n = max(1, (message.count + 15) / 16)
        let complete = !message.isEmpty && message.count % 16 == 0
        var x = [UInt8](repeating: 0, count: 16)
        for i in 0..<(n - 1) {
            for j in 0..<16 { x[j] ^= message[16 * i + j] }
            x = AES128.encrypt(key: key, block: x)
        }
        // Last block: XOR K1 when complete, else pad 10* and XOR K2 (RFC 4493 §2.4 step 4).
        var last = [UInt8](repeating: 0, count: 16)
        let tail = message[(16 * (n - 1))...]
        for (j, b) in tail.enumerated() { last[j] = b }
        if !complete { last[tail.count] = 0x80 }
        let k = complete ? k1 : k2
        for j in 0..<16 { x[j] ^= last[j] ^ k[j] }
        return AES128.encrypt(key: key, block: x)
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
