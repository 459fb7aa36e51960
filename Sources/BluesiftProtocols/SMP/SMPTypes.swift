import BluesiftWire

/// SMP command code (Core 5.4 Vol 3 Part H §3.3 Table 3.3). Open.
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let pairingRequest = SMPCode(rawValue: 0x01)
    public static let pairingResponse = SMPCode(rawValue: 0x02)
    public static let pairingConfirm = SMPCode(rawValue: 0x03)
    public static let pairingRandom = SMPCode(rawValue: 0x04)
    public static let pairingFailed = SMPCode(rawValue: 0x05)
    public static let encryptionInformation = SMPCode(rawValue: 0x06)
    public static let centralIdentification = SMPCode(rawValue: 0x07)
    public static let identityInformation = SMPCode(rawValue: 0x08)
    public static let identityAddressInformation = SMPCode(rawValue: 0x09)
    public static let signingInformation = SMPCode(rawValue: 0x0A)
    public static let securityRequest = SMPCode(rawValue: 0x0B)
    public static let pairingPublicKey = SMPCode(rawValue: 0x0C)
    public static let pairingDHKeyCheck = SMPCode(rawValue: 0x0D)
    public static let pairingKeypressNotification = SMPCode(rawValue: 0x0E)

    public var name: String {
        switch rawValue {
        case 0x01: "Pairing Request"
        case 0x02: "Pairing Response"
        case 0x03: "Pairing Confirm"
        case 0x04: "Pairing Random"
        case 0x05: "Pairing Failed"
        case 0x06: "Encryption Information"
        case 0x07: "Central Identification"
        case 0x08: "Identity Information"
        case 0x09: "Identity Address Information"
        case 0x0A: "Signing Information"
        case 0x0B: "Security Request"
        case 0x0C: "Pairing Public Key"
        case 0x0D: "Pairing DHKey Check"
        case 0x0E: "Pairing Keypress Notification"
        default: "Unknown"
        }
    }

    /// Length of the whole PDU including the code (§3.5-§3.6); nil for unknown codes.
    public var pduLength: Int? {
        switch rawValue {
        case 0x01, 0x02: 7
        case 0x03, 0x04, 0x06, 0x08, 0x0A, 0x0D: 17
        case 0x05, 0x0B, 0x0E: 2
        case 0x07: 11
        case 0x09: 8
        case 0x0C: 65
        default: nil
        }
    }

    public var description: String { name }
}

/// IO Capability (§3.5.1 Table 3.4). Open.
public struct SMPIOCapability: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let displayOnly = SMPIOCapability(rawValue: 0)
    public static let displayYesNo = SMPIOCapability(rawValue: 1)
    public static let keyboardOnly = SMPIOCapability(rawValue: 2)
    public static let noInputNoOutput = SMPIOCapability(rawValue: 3)
    public static let keyboardDisplay = SMPIOCapability(rawValue: 4)
    public var name: String {
        switch rawValue {
        case 0: "DisplayOnly"
        case 1: "DisplayYesNo"
        case 2: "KeyboardOnly"
        case 3: "NoInputNoOutput"
        case 4: "KeyboardDisplay"
        default: "Unknown"
        }
    }
}

/// AuthReq bit field (§3.5.1 Figure 3.3).
public struct SMPAuthReq: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bonding_Flags = 0b01; 0b00 is No Bonding, the rest reserved.
    public static let bonding = SMPAuthReq(rawValue: 0x01)
    public static let mitm = SMPAuthReq(rawValue: 0x04)
    public static let secureConnections = SMPAuthReq(rawValue: 0x08)
    public static let keypress = SMPAuthReq(rawValue: 0x10)
    public static let ct2 = SMPAuthReq(rawValue: 0x20)
    public var bondingFlags: UInt8 { rawValue & 0x03 }

    func describe<S: FieldSink>(into sink: inout S) {
        sink.int("auth_req", Int(rawValue))
        sink.bool("bonding", bondingFlags == 1)
        sink.bool("mitm", contains(.mitm))
        sink.bool("sc", contains(.secureConnections))
        sink.bool("keypress", contains(.keypress))
        sink.bool("ct2", contains(.ct2))
    }
}

/// Initiator/Responder Key Distribution bits (§3.6.1 Figure 3.11).
public struct SMPKeyDistribution: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let encKey = SMPKeyDistribution(rawValue: 0x01)
    public static let idKey = SMPKeyDistribution(rawValue: 0x02)
    public static let signKey = SMPKeyDistribution(rawValue: 0x04)
    public static let linkKey = SMPKeyDistribution(rawValue: 0x08)

    func describe<S: FieldSink>(_ key: FieldKey, into sink: inout S) {
        sink.beginArray(key)
        if contains(.encKey) { sink.string("", "EncKey") }
        if contains(.idKey) { sink.string("", "IdKey") }
        if contains(.signKey) { sink.string("", "SignKey") }
        if contains(.linkKey) { sink.string("", "LinkKey") }
        sink.endArray()
    }
}

/// Pairing Failed reason (§3.5.5 Table 3.7). Open.
public struct SMPFailureReason: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let passkeyEntryFailed = SMPFailureReason(rawValue: 0x01)
    public static let oobNotAvailable = SMPFailureReason(rawValue: 0x02)
    public static let authenticationRequirements = SMPFailureReason(rawValue: 0x03)
    public static let confirmValueFailed = SMPFailureReason(rawValue: 0x04)
    public static let pairingNotSupported = SMPFailureReason(rawValue: 0x05)
    public static let encryptionKeySize = SMPFailureReason(rawValue: 0x06)
    public static let commandNotSupported = SMPFailureReason(rawValue: 0x07)
    public static let unspecifiedReason = SMPFailureReason(rawValue: 0x08)
    public static let repeatedAttempts = SMPFailureReason(rawValue: 0x09)
    public static let invalidParameters = SMPFailureReason(rawValue: 0x0A)
    public static let dhKeyCheckFailed = SMPFailureReason(rawValue: 0x0B)
    public static let numericComparisonFailed = SMPFailureReason(rawValue: 0x0C)
    public var name: String {
        switch rawValue {
        case 0x01: "Passkey Entry Failed"
        case 0x02: "OOB Not Available"
        case 0x03: "Authentication Requirements"
        case 0x04: "Confirm Value Failed"
        case 0x05: "Pairing Not Supported"
        case 0x06: "Encryption Key Size"
        case 0x07: "Command Not Supported"
        case 0x08: "Unspecified Reason"
        case 0x09: "Repeated Attempts"
        case 0x0A: "Invalid Parameters"
        case 0x0B: "DHKey Check Failed"
        case 0x0C: "Numeric Comparison Failed"
        case 0x0D: "BR/EDR Pairing in Progress"
        case 0x0E: "Cross-transport Key Derivation/Generation Not Allowed"
        case 0x0F: "Key Rejected"
        default: "Unknown"
        }
    }
}

/// Keypress Notification Type (§3.5.8 Table 3.8). Open.
public struct SMPKeypressType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0: "Passkey Entry Started"
        case 1: "Passkey Digit Entered"
        case 2: "Passkey Digit Erased"
        case 3: "Passkey Cleared"
        case 4: "Passkey Entry Completed"
        default: "Unknown"
        }
    }
}

/// Pairing Request/Response parameters (§3.5.1, §3.5.2), with encode for a host.
public struct SMPPairingFeatures: Hashable, Sendable {
    public var ioCapability: SMPIOCapability
    /// OOB Data Flag: 0 not present, 1 present.
    public var oobDataFlag: UInt8
    public var authReq: SMPAuthReq
    public var maxEncryptionKeySize: UInt8
    public var initiatorKeys: SMPKeyDistribution
    public var responderKeys: SMPKeyDistribution

    public init(
        ioCapability: SMPIOCapability, oobDataFlag: UInt8 = 0, authReq: SMPAuthReq,
        maxEncryptionKeySize: UInt8 = 16, initiatorKeys: SMPKeyDistribution, responderKeys: SMPKeyDistribution
    ) {
        self.ioCapability = ioCapability; self.oobDataFlag = oobDataFlag; self.authReq = authReq
        self.maxEncryptionKeySize = maxEncryptionKeySize; self.initiatorKeys = initiatorKeys; self.responderKeys = responderKeys
    }

    /// From the 6 parameter bytes.
    public init(parameters p: UnsafeRawBufferPointer) {
        ioCapability = SMPIOCapability(rawValue: p[0]); oobDataFlag = p[1]; authReq = SMPAuthReq(rawValue: p[2])
        maxEncryptionKeySize = p[3]; initiatorKeys = SMPKeyDistribution(rawValue: p[4]); responderKeys = SMPKeyDistribution(rawValue: p[5])
    }

    /// The 6 parameter bytes of ``SMPPairingRequest`` and ``SMPPairingResponse``.
    public func encodeParameters(into w: inout ByteWriter) {
        for b in [ioCapability.rawValue, oobDataFlag, authReq.rawValue, maxEncryptionKeySize, initiatorKeys.rawValue, responderKeys.rawValue] {
            w.writeUInt8(b)
        }
    }
}
