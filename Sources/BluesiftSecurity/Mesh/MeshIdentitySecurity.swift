/// Mesh Proxy service data identities (Mesh Protocol v1.1 §7.2.2.2.2-§7.2.2.2.4): the hash a
/// proxy node advertises, computed with the IdentityKey of a NetKey
/// (k1(NetKey, s1("nkik"), "id128" ‖ 0x01), §3.9.6.3.3). The keys never leave this type.
extension MeshNetKey {
    /// The 8-octet hash of Node Identity (type 0x01: e(IdentityKey, 0x00×6 ‖ Random ‖ Address),
    /// §7.2.2.2.2) or Private Node Identity (type 0x03: e(IdentityKey, 0x00×5 ‖ 0x03 ‖ Random ‖
    /// Address), §7.2.2.2.4), the last 8 octets (mod 2^64). nil for another type or a random
    /// that is not 8 octets.
    public func nodeIdentityHash(type: UInt8, random: [UInt8], address: UInt16) -> [UInt8]? {
        guard type == 0x01 || type == 0x03, random.count == 8 else { return nil }
        let head: [UInt8] = [0, 0, 0, 0, 0, type == 0x03 ? 0x03 : 0]
        let block = head + random + [UInt8(address >> 8), UInt8(truncatingIfNeeded: address)]
        return Array(AES128.encrypt(key: identityKey, block: block)[8...])
    }

    /// The hash of Private Network Identity (type 0x02, §7.2.2.2.3): e(IdentityKey, Network ID
    /// ‖ Random) mod 2^64.
    public func privateNetworkIdentityHash(random: [UInt8]) -> [UInt8]? {
        guard random.count == 8 else { return nil }
        return Array(AES128.encrypt(key: identityKey, block: networkID + random)[8...])
    }
}
