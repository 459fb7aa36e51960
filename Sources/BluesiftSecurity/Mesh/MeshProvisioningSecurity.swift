/// Provisioning algorithms (Mesh Protocol v1.1 §5.4.1.2, Provisioning Capabilities
/// Algorithms; §5.4.2.4 for what each computes). Open: an unknown value stays printable.
public struct MeshProvisioningAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// BTM_ECDH_P256_CMAC_AES128_AES_CCM: 16-octet Random, AuthValue, Confirmation.
    public static let cmacAES128 = MeshProvisioningAlgorithm(rawValue: 0x00)
    /// BTM_ECDH_P256_HMAC_SHA256_AES_CCM: 32-octet Random, AuthValue, Confirmation.
    public static let hmacSHA256 = MeshProvisioningAlgorithm(rawValue: 0x01)
    public var description: String {
        switch self {
        case .cmacAES128: "BTM_ECDH_P256_CMAC_AES128_AES_CCM"
        case .hmacSHA256: "BTM_ECDH_P256_HMAC_SHA256_AES_CCM"
        default: "unknown (0x\(String(rawValue, radix: 16)))"
        }
    }
    /// Octets of Random, AuthValue and Confirmation; nil for an unknown algorithm.
    public var valueSize: Int? { self == .cmacAES128 ? 16 : self == .hmacSHA256 ? 32 : nil }
}

/// The fields of the Provisioning Data PDU's plaintext (Mesh Protocol v1.1 §5.4.2.5):
/// NetKey (16) ‖ Key Index (2) ‖ Flags (1) ‖ IV Index (4) ‖ Unicast Address (2), big-endian.
public struct MeshProvisioningData: Sendable, Hashable, CustomStringConvertible {
    public static let size = 25
    public var netKey: [UInt8]
    public var keyIndex: UInt16
    public var flags: UInt8
    public var ivIndex: UInt32
    public var unicastAddress: UInt16

    public init(netKey: [UInt8], keyIndex: UInt16, flags: UInt8, ivIndex: UInt32, unicastAddress: UInt16) {
        self.netKey = netKey; self.keyIndex = keyIndex; self.flags = flags; self.ivIndex = ivIndex; self.unicastAddress = unicastAddress
    }

    public init(decoding b: [UInt8]) throws(MeshCryptoError) {
        guard b.count >= Self.size else { throw .truncated("provisioning data", need: Self.size, got: b.count) }
        netKey = Array(b[0..<16]); keyIndex = UInt16(b[16]) << 8 | UInt16(b[17]); flags = b[18]
        ivIndex = b[19..<23].reduce(0) { $0 << 8 | UInt32($1) }; unicastAddress = UInt16(b[23]) << 8 | UInt16(b[24])
    }

    public func encode() -> [UInt8] {
        netKey + MeshCrypto.be16(keyIndex) + [flags] + MeshCrypto.be32(ivIndex) + MeshCrypto.be16(unicastAddress)
    }

    // The NetKey is a key: never printed.
    public var description: String {
        "MeshProvisioningData(keyIndex: \(keyIndex), flags: \(flags), ivIndex: \(ivIndex), unicastAddress: 0x\(String(unicastAddress, radix: 16)))"
    }
}

/// Provisioning security (Mesh Protocol v1.1 §5.4.2.4 authentication, §5.4.2.5 distribution
/// of provisioning data). Values MSB-first as the Provisioning PDUs carry them; the ECDH
/// secret is the 32-octet X coordinate of the shared point.
public enum MeshProvisioningSecurity {
    /// ConfirmationInputs (§5.4.2.4): the parameters (without the type octet) of Provisioning
    /// Invite (1) ‖ Capabilities (11) ‖ Start (5) ‖ provisioner's Public Key (64) ‖ device's
    /// Public Key (64): 145 octets.
    public static func confirmationInputs(
        invite: [UInt8], capabilities: [UInt8], start: [UInt8],
        provisionerPublicKey: [UInt8], devicePublicKey: [UInt8]
    ) -> [UInt8] {
        invite + capabilities + start + provisionerPublicKey + devicePublicKey
    }

    /// ConfirmationSalt (§5.4.2.4): s1(ConfirmationInputs) for CMAC-AES128, s2 (32 octets) for
    /// HMAC-SHA256.
    public static func confirmationSalt(inputs: [UInt8], algorithm: MeshProvisioningAlgorithm) -> [UInt8] {
        algorithm == .hmacSHA256 ? MeshCrypto.s2(inputs) : MeshCrypto.s1(inputs)
    }

    /// ConfirmationKey (§5.4.2.4): k1(ECDHSecret, ConfirmationSalt, "prck") for CMAC-AES128;
    /// k5(ECDHSecret ‖ AuthValue, ConfirmationSalt, "prck256") for HMAC-SHA256.
    public static func confirmationKey(ecdhSecret: [UInt8], salt: [UInt8], authValue: [UInt8], algorithm: MeshProvisioningAlgorithm) -> [UInt8] {
        algorithm == .hmacSHA256
            ? MeshCrypto.k5(n: ecdhSecret + authValue, salt: salt, p: Array("prck256".utf8))
            : MeshCrypto.k1(n: ecdhSecret, salt: salt, p: Array("prck".utf8))
    }

    /// Confirmation value (§5.4.2.4) of one side from its Random: AES-CMAC_ConfirmationKey(
    /// Random ‖ AuthValue) for CMAC-AES128, HMAC-SHA-256_ConfirmationKey(Random) for
    /// HMAC-SHA256 (its AuthValue is in the key).
    public static func confirmation(key: [UInt8], random: [UInt8], authValue: [UInt8], algorithm: MeshProvisioningAlgorithm) -> [UInt8] {
        algorithm == .hmacSHA256 ? MeshCrypto.hmac(key: key, random) : AESCMAC.mac(key: key, message: random + authValue)
    }

    /// Checks a received Confirmation against the peer's Random once it is revealed.
    public static func verifyConfirmation(
        _ received: [UInt8], key: [UInt8], random: [UInt8], authValue: [UInt8],
        algorithm: MeshProvisioningAlgorithm
    ) -> Bool {
        confirmation(key: key, random: random, authValue: authValue, algorithm: algorithm) == received
    }

    /// ProvisioningSalt (§5.4.2.5): s1(ConfirmationSalt ‖ RandomProvisioner ‖ RandomDevice).
    public static func provisioningSalt(confirmationSalt: [UInt8], randomProvisioner: [UInt8], randomDevice: [UInt8]) -> [UInt8] {
        MeshCrypto.s1(confirmationSalt + randomProvisioner + randomDevice)
    }

    /// SessionKey (§5.4.2.5): k1(ECDHSecret, ProvisioningSalt, "prsk").
    public static func sessionKey(ecdhSecret: [UInt8], provisioningSalt: [UInt8]) -> [UInt8] {
        MeshCrypto.k1(n: ecdhSecret, salt: provisioningSalt, p: Array("prsk".utf8))
    }

    /// SessionNonce (§5.4.2.5): the 13 least significant octets of
    /// k1(ECDHSecret, ProvisioningSalt, "prsn").
    public static func sessionNonce(ecdhSecret: [UInt8], provisioningSalt: [UInt8]) -> [UInt8] {
        Array(MeshCrypto.k1(n: ecdhSecret, salt: provisioningSalt, p: Array("prsn".utf8))[3..<16])
    }

    /// DevKey (§3.9.6.1): k1(ECDHSecret, ProvisioningSalt, "prdk").
    public static func deviceKey(ecdhSecret: [UInt8], provisioningSalt: [UInt8]) -> [UInt8] {
        MeshCrypto.k1(n: ecdhSecret, salt: provisioningSalt, p: Array("prdk".utf8))
    }

    /// Decrypts the Provisioning Data PDU's parameters (Encrypted Provisioning Data (25) ‖
    /// Provisioning Data MIC (8)) with AES-CCM under the SessionKey and SessionNonce (§5.4.2.5).
    public static func decryptData(_ pdu: [UInt8], sessionKey: [UInt8], sessionNonce: [UInt8]) throws(MeshCryptoError) -> MeshProvisioningData {
        guard pdu.count >= MeshProvisioningData.size + 8 else {
            throw .truncated("provisioning data PDU", need: MeshProvisioningData.size + 8, got: pdu.count)
        }
        guard sessionKey.count == 16, sessionNonce.count == 13 else {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "session key must be 16 octets and nonce 13")
        }
        var plain: [UInt8] = []
        let ok = pdu.withUnsafeBytes { b in
            AESCCM(key: sessionKey).open(
                UnsafeRawBufferPointer(rebasing: b[0..<25]), tag: UnsafeRawBufferPointer(rebasing: b[25..<33]),
                nonce: sessionNonce, aadBytes: [], into: &plain)
        }
        guard ok else { throw MeshCryptoError(code: .micMismatch, offset: 25, message: "provisioning data MIC does not verify") }
        return try MeshProvisioningData(decoding: plain)
    }

    /// The inverse: Encrypted Provisioning Data ‖ MIC (33 octets).
    public static func encryptData(_ data: MeshProvisioningData, sessionKey: [UInt8], sessionNonce: [UInt8]) throws(MeshCryptoError) -> [UInt8] {
        guard sessionKey.count == 16, sessionNonce.count == 13, data.netKey.count == 16 else {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "session key and NetKey must be 16 octets and nonce 13")
        }
        var out = data.encode()
        let mic = AESCCM(key: sessionKey).sealTag(&out, nonce: sessionNonce, aadBytes: [], tagLength: 8)
        return out + mic
    }
}
