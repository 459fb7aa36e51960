import BluesiftProtocols
import BluesiftSecurity
import BluesiftWire

/// The Security Manager as responder (Core 5.4 Vol 3 Part H §2.3, §3.5): answers a central's
/// pairing and hands the controller the key when the central starts encryption.
public final class SMPResponder {
    /// How this peripheral pairs: IO capability, passkey, LE Secure Connections or legacy only.
    public var policy: PairingPolicy
    /// The link's key once pairing finished (LTK, or the legacy STK), little-endian.
    public internal(set) var ltk: [UInt8]?
    public internal(set) var authenticated = false
    /// What happened, for the caller's report: "paired just_works (LE Secure Connections)".
    public var onEvent: ((String) -> Void)?

    public init(policy: PairingPolicy = PairingPolicy()) { self.policy = policy }

    /// A new link.
    func reset() { ltk = nil; authenticated = false }

    /// One SMP PDU from the central; the PDUs to answer with.
    func handle(_ pdu: [UInt8], peripheral: LEPeripheral) throws(HostError) -> [[UInt8]] {
        guard let code = pdu.first else { return [] }
        if code == SMPCode.pairingRequest.rawValue { return [SMPPDU.encodePairingFailed(.pairingNotSupported)] }
        return []
    }

    /// The key for an LE Long Term Key Request (§7.7.65.5), nil: negative reply.
    func longTermKey(rand: [UInt8], ediv: UInt16) -> [UInt8]? { ltk }

    func encryptionChanged(status: UInt8, enabled: Bool, peripheral: LEPeripheral) {}
}
