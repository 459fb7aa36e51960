/// Secure Network beacon (Mesh Protocol v1.1 §3.10.3): Beacon Type 0x01 ‖ Flags ‖ Network ID
/// (8) ‖ IV Index (4) ‖ Authentication Value (8), the value AES-CMAC_BeaconKey(Flags ‖
/// Network ID ‖ IV Index) truncated to 64 bits. 22 octets with the type.
public struct MeshSecureNetworkBeacon: Sendable, Hashable {
    public static let type: UInt8 = 0x01
    public static let size = 22
    /// Bit 0 Key Refresh, bit 1 IV Update.
    public var flags: UInt8
    public var networkID: [UInt8]
    public var ivIndex: UInt32
    public var authenticationValue: [UInt8]

    public var keyRefresh: Bool { flags & 0x01 != 0 }
    public var ivUpdate: Bool { flags & 0x02 != 0 }

    /// `bytes`: the beacon from its type octet on (the Mesh Beacon AD structure's data).
    public init(decoding bytes: [UInt8]) throws(MeshCryptoError) {
        guard bytes.count >= Self.size else { throw .truncated("secure network beacon", need: Self.size, got: bytes.count) }
        guard bytes[0] == Self.type else {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "beacon type 0x\(String(bytes[0], radix: 16)) is not 0x01")
        }
        flags = bytes[1]; networkID = Array(bytes[2..<10])
        ivIndex = bytes[10..<14].reduce(0) { $0 << 8 | UInt32($1) }
        authenticationValue = Array(bytes[14..<22])
    }

    /// A beacon authenticated with `beaconKey` (16 octets).
    public init(flags: UInt8, networkID: [UInt8], ivIndex: UInt32, beaconKey: [UInt8]) {
        self.flags = flags; self.networkID = networkID; self.ivIndex = ivIndex
        authenticationValue = []
        authenticationValue = Self.authentication(flags: flags, networkID: networkID, ivIndex: ivIndex, beaconKey: beaconKey)
    }

    static func authentication(flags: UInt8, networkID: [UInt8], ivIndex: UInt32, beaconKey: [UInt8]) -> [UInt8] {
        Array(AESCMAC.mac(key: beaconKey, message: [flags] + networkID + MeshCrypto.be32(ivIndex))[0..<8])
    }

    /// True when the authentication value verifies with `beaconKey` (§3.10.3).
    public func authenticates(beaconKey: [UInt8]) -> Bool {
        beaconKey.count == 16 && networkID.count == 8
            && Self.authentication(flags: flags, networkID: networkID, ivIndex: ivIndex, beaconKey: beaconKey) == authenticationValue
    }

    public func encode() -> [UInt8] { [Self.type, flags] + networkID + MeshCrypto.be32(ivIndex) + authenticationValue }
}

/// Mesh Private beacon (Mesh Protocol v1.1 §3.10.4): Beacon Type 0x02 ‖ Random (13) ‖
/// Obfuscated Private Beacon Data (5) ‖ Authentication Tag (8). The data (Flags ‖ IV Index)
/// and tag are AES-CCM under the PrivateBeaconKey with the Random as nonce and a 64-bit tag.
public struct MeshPrivateBeacon: Sendable, Hashable {
    public static let type: UInt8 = 0x02
    public static let size = 27
    public var random: [UInt8]
    public var flags: UInt8
    public var ivIndex: UInt32

    public var keyRefresh: Bool { flags & 0x01 != 0 }
    public var ivUpdate: Bool { flags & 0x02 != 0 }

    public init(random: [UInt8], flags: UInt8, ivIndex: UInt32) {
        self.random = random; self.flags = flags; self.ivIndex = ivIndex
    }

    /// Decrypts and authenticates `bytes` (from the type octet on) with the PrivateBeaconKey;
    /// `micMismatch` when the tag does not verify (another network's beacon).
    public init(decrypting bytes: [UInt8], privateBeaconKey: [UInt8]) throws(MeshCryptoError) {
        guard bytes.count >= Self.size else { throw .truncated("mesh private beacon", need: Self.size, got: bytes.count) }
        guard bytes[0] == Self.type else {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "beacon type 0x\(String(bytes[0], radix: 16)) is not 0x02")
        }
        guard privateBeaconKey.count == 16 else {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "PrivateBeaconKey of \(privateBeaconKey.count) octets, needs 16")
        }
        let nonce = Array(bytes[1..<14])
        var plain: [UInt8] = []
        let ok = bytes.withUnsafeBytes { b in
            AESCCM(key: privateBeaconKey).open(
                UnsafeRawBufferPointer(rebasing: b[14..<19]), tag: UnsafeRawBufferPointer(rebasing: b[19..<27]),
                nonce: nonce, aadBytes: [], into: &plain)
        }
        guard ok else { throw MeshCryptoError(code: .micMismatch, offset: 19, message: "private beacon authentication tag does not verify") }
        self.init(random: nonce, flags: plain[0], ivIndex: plain[1..<5].reduce(0) { $0 << 8 | UInt32($1) })
    }

    /// The inverse: the 27-octet beacon. `random` must be 13 octets.
    public func encrypt(privateBeaconKey: [UInt8]) throws(MeshCryptoError) -> [UInt8] {
        guard random.count == 13 else {
            throw MeshCryptoError(code: .invalidValue, offset: 1, message: "Random of \(random.count) octets, needs 13")
        }
        guard privateBeaconKey.count == 16 else {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "PrivateBeaconKey of \(privateBeaconKey.count) octets, needs 16")
        }
        var data = [flags] + MeshCrypto.be32(ivIndex)
        let tag = AESCCM(key: privateBeaconKey).sealTag(&data, nonce: random, aadBytes: [], tagLength: 8)
        return [Self.type] + random + data + tag
    }
}
