// One security module for the host's pairing and the decoder's decryption (Core 5.4 Vol 3
// Part H §2.2 toolbox, Vol 6 Part E AES-CCM). Everything here builds on one AES-128 block
// encryption from swift-crypto; nothing is hand-written below the block cipher.
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
