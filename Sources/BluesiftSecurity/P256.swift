import Crypto

/// The LE Secure Connections key pair and Diffie-Hellman (Core 5.4 Vol 3 Part H §2.3.5.6.1),
/// on swift-crypto's P-256. Coordinates and DHKey MSB-first, 32 octets each (the Pairing
/// Public Key PDU carries them reversed).
public struct SMPKeyPair: @unchecked Sendable {
    let key: P256.KeyAgreement.PrivateKey

    public init() { key = P256.KeyAgreement.PrivateKey() }

    /// A fixed private scalar (32 octets MSB-first): tests with Appendix D's keys.
    public init(privateKey: [UInt8]) throws(SMPKeyError) {
        do { key = try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey) } catch { throw .invalidPrivateKey }
    }

    public var x: [UInt8] { Array(key.publicKey.rawRepresentation.prefix(32)) }
    public var y: [UInt8] { Array(key.publicKey.rawRepresentation.suffix(32)) }

    /// DHKey: the X coordinate of our scalar times the peer's point. The peer's point is
    /// rejected unless it lies on P-256 (the invalid-curve attack, CVE-2018-5383): swift-crypto
    /// (BoringSSL's EC_POINT_oct2point) refuses points off the curve, and the result is checked.
    public func dhKey(peerX: [UInt8], peerY: [UInt8]) throws(SMPKeyError) -> [UInt8] {
        guard peerX.count == 32, peerY.count == 32 else { throw .notOnCurve }
        let peer: P256.KeyAgreement.PublicKey
        do { peer = try P256.KeyAgreement.PublicKey(rawRepresentation: peerX + peerY) } catch { throw .notOnCurve }
        guard let secret = try? key.sharedSecretFromKeyAgreement(with: peer) else { throw .notOnCurve }
        return secret.withUnsafeBytes { Array($0) }
    }
}

public enum SMPKeyError: Error, Hashable, Sendable {
    /// The peer's public key is not a point of P-256 (Pairing Failed: DHKey Check Failed).
    case notOnCurve
    case invalidPrivateKey
}
