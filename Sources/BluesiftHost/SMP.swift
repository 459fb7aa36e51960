import BluesiftProtocols
import BluesiftSecurity
import BluesiftWire

// The Security Manager (Core 5.4 Vol 3 Part H), one module with two state machines: the
// initiator run by `LECentral` (LECentral+Security.swift) and the responder `SMPResponder`
// under `LEPeripheral`. What both share is here; PDUs are read and written with the protocol
// layer's command types (SMPCommands.swift), one per PDU.

enum SMP {
    /// A passkey or comparison value as six digits, leading zeros kept.
    static func sixDigits(_ v: UInt32) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, 6 - s.count)) + s
    }

    static func random(_ n: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
    }

    /// The passkey as the 128-bit r (SC, §2.3.5.6.3) or TK (legacy, §2.3.5.5), MSB-first.
    static func passkeyBytes(_ p: UInt32) -> [UInt8] {
        var r = [UInt8](repeating: 0, count: 16)
        r[12] = UInt8(p >> 24); r[13] = UInt8(truncatingIfNeeded: p >> 16); r[14] = UInt8(truncatingIfNeeded: p >> 8)
        r[15] = UInt8(truncatingIfNeeded: p)
        return r
    }

    /// Reads an owned PDU through the protocol layer's borrowed view.
    static func read<T>(_ pdu: [UInt8], _ body: (SMPPDU) -> T) -> T {
        pdu.withUnsafeBytes { body(SMPPDU(bytes: $0)) }
    }

    /// The typed command of a whole, well-formed PDU (nil: unknown code or bad length).
    static func command(_ pdu: [UInt8]) -> (any SMPCommand)? { read(pdu) { SMPCommands.decode($0) } }

    /// A 16-octet value PDU (Confirm, Random, DHKey Check, ...) from an MSB-first value.
    static func value(_ code: SMPCode, _ msbFirst: [UInt8]) -> [UInt8] {
        guard let t = SMPCommands.types[code] as? any SMPValue128Command.Type else {
            preconditionFailure("\(code.name) carries no 128-bit value")
        }
        return t.init(value: SMPCrypto.swapped(msbFirst)).encode()
    }

    /// The Pairing Public Key PDU of a key pair (coordinates MSB-first in the pair).
    static func publicKey(_ k: SMPKeyPair) -> [UInt8] {
        SMPPairingPublicKey(x: SMPCrypto.swapped(k.x), y: SMPCrypto.swapped(k.y)).encode()
    }
}

/// How this host pairs as initiator (Core 5.4 Vol 3 Part H §2.3).
public struct PairingPolicy {
    public var ioCapability: SMPIOCapability = .noInputNoOutput
    public var bonding = true
    public var secureConnections = true
    /// Ask for MITM protection; the default asks whenever this host has input or output.
    public var mitm: Bool?
    public var maxKeySize: UInt8 = 16
    /// The passkey, in either direction: typed when the device displays one, displayed
    /// (instead of a random one) when the device has the keyboard.
    public var passkey: UInt32?
    /// Asked when the device displays a passkey and `passkey` is nil; nil answer: fail.
    public var askPasskey: (() -> UInt32?)?
    /// Numeric Comparison: the six digits; true accepts them. nil: refuse.
    public var confirmNumber: ((UInt32) -> Bool)?
    /// What a person must see: the passkey to type on the device, the digits to compare.
    public var display: ((String) -> Void)?
    /// SMP's transaction timeout (§3.4).
    public var timeout: Duration = .seconds(30)
    public init() {}
}

/// The security of a link once encrypted.
public struct LinkSecurity: Sendable, Hashable {
    public var authenticated: Bool
    public var secureConnections: Bool
    public var keySize: Int
    /// just_works, numeric_comparison, passkey_entry, or stored_key (re-encryption).
    public var method: String
    public init(authenticated: Bool, secureConnections: Bool, keySize: Int, method: String) {
        self.authenticated = authenticated; self.secureConnections = secureConnections
        self.keySize = keySize; self.method = method
    }

    /// LE security mode 1 level (Vol 3 Part C §10.2.1): 2 encrypted, 3 authenticated,
    /// 4 authenticated LE Secure Connections with a 128-bit key.
    public var level: Int { !authenticated ? 2 : (secureConnections && keySize == 16 ? 4 : 3) }
    public var levelName: String {
        switch level {
        case 2: "encrypted unauthenticated"
        case 3: "authenticated"
        default: "authenticated secure connections"
        }
    }
}

/// What `secure` did.
public struct SecureOutcome: Sendable {
    public var security: LinkSecurity
    /// Keys to keep when pairing bonded (nil after a re-encryption or an unbonded pairing).
    public var bond: Bond?
    /// The stored key was refused (PIN or Key Missing) and the host paired again.
    public var bondForgotten = false
    /// SMP ran on this link (false: re-encrypted with a stored key).
    public var paired: Bool
}

/// The association model (Vol 3 Part H §2.3.5.1 Tables 2.7, 2.8).
enum AssociationModel: Equatable {
    case justWorks, numericComparison
    /// The device displays, this host types.
    case passkeyHostInputs
    /// This host displays, the device types.
    case passkeyHostDisplays

    var name: String {
        switch self {
        case .justWorks: "just_works"
        case .numericComparison: "numeric_comparison"
        case .passkeyHostInputs, .passkeyHostDisplays: "passkey_entry"
        }
    }

    /// `initiator` is this host (central).
    static func choose(initiator i: SMPIOCapability, responder r: SMPIOCapability, mitm: Bool, sc: Bool) -> AssociationModel {
        guard mitm, i.rawValue <= 4, r.rawValue <= 4, i != .noInputNoOutput, r != .noInputNoOutput else { return .justWorks }
        // Table 2.8, rows the responder, columns the initiator: 0 DisplayOnly, 1 DisplayYesNo,
        // 2 KeyboardOnly, 4 KeyboardDisplay.
        switch (r.rawValue, i.rawValue) {
        case (0, 0), (0, 1), (1, 0): return .justWorks
        case (0, 2), (0, 4), (1, 2), (4, 2): return .passkeyHostInputs
        case (1, 1): return sc ? .numericComparison : .justWorks
        case (1, 4): return sc ? .numericComparison : .passkeyHostInputs
        case (2, 0), (2, 1), (2, 4), (4, 0): return .passkeyHostDisplays
        case (2, 2): return .passkeyHostInputs // both type the same passkey
        case (4, 1), (4, 4): return sc ? .numericComparison : .passkeyHostDisplays
        default: return .justWorks
        }
    }
}
