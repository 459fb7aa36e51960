import BluesiftWire

/// One SMP PDU as a type (Core 6.0 Vol 3 Part H §3.5-3.6): decoded from the borrowed
/// ``SMPPDU`` (the one reading of the layout, also the analyzer's), encoded back. The host's
/// initiator and responder, the decoder's key observer and the redactor all go through these.
public protocol SMPCommand: Sendable, Hashable {
    static var code: SMPCode { get }
    /// From the view; nil when its code is another one or it is too short.
    init?(_ pdu: SMPPDU)
    /// The parameters after the code.
    func encodeParameters(into w: inout ByteWriter)
}

extension SMPCommand {
    /// Code then parameters.
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 65)
        w.writeUInt8(Self.code.rawValue)
        encodeParameters(into: &w)
        return w.bytes
    }

    /// Strict decode: the code must be this one and the length the spec's.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Self {
        let r = bytes.withUnsafeBytes { p in
            Result { () throws(DecodeError) -> Self in
                let v = SMPPDU(bytes: p)
                if let e = v.error { throw e }
                guard let m = Self(v) else {
                    throw DecodeError(layer: "smp", code: .unexpected, offset: 0, message: "\(v.name) is not \(Self.code.name)")
                }
                return m
            }
        }
        return try r.get()
    }
}

/// Commands carrying one 128-bit value, little-endian as sent (Confirm, Random, LTK, IRK,
/// CSRK, DHKey Check): one codec for all six.
public protocol SMPValue128Command: SMPCommand {
    var value: [UInt8] { get }
    init(value: [UInt8])
}

extension SMPValue128Command {
    public init?(_ pdu: SMPPDU) {
        guard pdu.code == Self.code.rawValue, let v = pdu.value128 else { return nil }
        self.init(value: Array(v))
    }
    public func encodeParameters(into w: inout ByteWriter) {
        precondition(value.count == 16, "an SMP 128-bit value is 16 octets")
        w.writeBytes(value)
    }
}

/// Pairing Request and Response carry the same six feature octets (§3.5.1-3.5.2): one codec.
public protocol SMPFeaturesCommand: SMPCommand {
    var features: SMPPairingFeatures { get }
    init(_ features: SMPPairingFeatures)
}

extension SMPFeaturesCommand {
    public init?(_ pdu: SMPPDU) {
        guard pdu.code == Self.code.rawValue, let f = pdu.pairingFeatures else { return nil }
        self.init(f)
    }
    public func encodeParameters(into w: inout ByteWriter) { features.encodeParameters(into: &w) }
}

/// §3.5.1 Pairing Request.
public struct SMPPairingRequest: SMPFeaturesCommand {
    public static let code = SMPCode.pairingRequest
    public var features: SMPPairingFeatures
    public init(_ features: SMPPairingFeatures) { self.features = features }
}

/// §3.5.2 Pairing Response.
public struct SMPPairingResponse: SMPFeaturesCommand {
    public static let code = SMPCode.pairingResponse
    public var features: SMPPairingFeatures
    public init(_ features: SMPPairingFeatures) { self.features = features }
}

/// §3.5.3 Pairing Confirm.
public struct SMPPairingConfirm: SMPValue128Command {
    public static let code = SMPCode.pairingConfirm
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
}

/// §3.5.4 Pairing Random.
public struct SMPPairingRandom: SMPValue128Command {
    public static let code = SMPCode.pairingRandom
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
}

/// §3.5.5 Pairing Failed.
public struct SMPPairingFailed: SMPCommand {
    public static let code = SMPCode.pairingFailed
    public var reason: SMPFailureReason
    public init(_ reason: SMPFailureReason) { self.reason = reason }
    public init?(_ pdu: SMPPDU) {
        guard let r = pdu.reason else { return nil }
        reason = r
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(reason.rawValue) }
}

/// §3.5.6 Pairing Public Key: X then Y, 32 octets each, little-endian as sent.
public struct SMPPairingPublicKey: SMPCommand {
    public static let code = SMPCode.pairingPublicKey
    public var x: [UInt8]
    public var y: [UInt8]
    public init(x: [UInt8], y: [UInt8]) { self.x = x; self.y = y }
    public init?(_ pdu: SMPPDU) {
        guard let x = pdu.publicKeyX, let y = pdu.publicKeyY else { return nil }
        self.x = Array(x); self.y = Array(y)
    }
    public func encodeParameters(into w: inout ByteWriter) {
        precondition(x.count == 32 && y.count == 32, "public key coordinates are 32 octets")
        w.writeBytes(x); w.writeBytes(y)
    }
}

/// §3.5.7 Pairing DHKey Check.
public struct SMPPairingDHKeyCheck: SMPValue128Command {
    public static let code = SMPCode.pairingDHKeyCheck
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
}

/// §3.5.8 Pairing Keypress Notification.
public struct SMPPairingKeypressNotification: SMPCommand {
    public static let code = SMPCode.pairingKeypressNotification
    public var type: SMPKeypressType
    public init(_ type: SMPKeypressType) { self.type = type }
    public init?(_ pdu: SMPPDU) {
        guard let t = pdu.keypressType else { return nil }
        type = t
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(type.rawValue) }
}

/// §3.6.2 Encryption Information: the LTK.
public struct SMPEncryptionInformation: SMPValue128Command {
    public static let code = SMPCode.encryptionInformation
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
}

/// §3.6.3 Central Identification: EDIV and Rand of the LTK just distributed.
public struct SMPCentralIdentification: SMPCommand {
    public static let code = SMPCode.centralIdentification
    public var ediv: UInt16
    /// 8 octets, little-endian as sent.
    public var rand: [UInt8]
    public init(ediv: UInt16, rand: [UInt8]) { self.ediv = ediv; self.rand = rand }
    public init?(_ pdu: SMPPDU) {
        guard let e = pdu.ediv, let r = pdu.rand else { return nil }
        ediv = e; rand = Array(r)
    }
    public func encodeParameters(into w: inout ByteWriter) {
        precondition(rand.count == 8, "Rand is 8 octets")
        w.writeUInt16(ediv); w.writeBytes(rand)
    }
}

/// §3.6.4 Identity Information: the IRK.
public struct SMPIdentityInformation: SMPValue128Command {
    public static let code = SMPCode.identityInformation
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
}

/// §3.6.5 Identity Address Information.
public struct SMPIdentityAddressInformation: SMPCommand {
    public static let code = SMPCode.identityAddressInformation
    /// Where the address starts in the PDU (after the code and the address type).
    public static let addressOffset = 2
    public var addressType: AddressType
    public var address: BDAddr
    public init(addressType: AddressType, address: BDAddr) { self.addressType = addressType; self.address = address }
    public init?(_ pdu: SMPPDU) {
        guard let a = pdu.identityAddress else { return nil }
        addressType = a.type; address = a.address
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(addressType.rawValue); w.writeBytes(address.littleEndianBytes) }
}

/// §3.6.6 Signing Information: the CSRK.
public struct SMPSigningInformation: SMPValue128Command {
    public static let code = SMPCode.signingInformation
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
}

/// §3.6.7 Security Request.
public struct SMPSecurityRequest: SMPCommand {
    public static let code = SMPCode.securityRequest
    public var authReq: SMPAuthReq
    public init(_ authReq: SMPAuthReq) { self.authReq = authReq }
    public init?(_ pdu: SMPPDU) {
        guard let a = pdu.authReq else { return nil }
        authReq = a
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(authReq.rawValue) }
}

/// Every SMP command type, registered by its code (§3.3 Table 3.3; Bumble's `SMP_Command.smp_classes`).
public enum SMPCommands {
    public static let types: [SMPCode: any SMPCommand.Type] = {
        let all: [any SMPCommand.Type] = [
            SMPPairingRequest.self, SMPPairingResponse.self, SMPPairingConfirm.self, SMPPairingRandom.self,
            SMPPairingFailed.self, SMPPairingPublicKey.self, SMPPairingDHKeyCheck.self, SMPPairingKeypressNotification.self,
            SMPEncryptionInformation.self, SMPCentralIdentification.self, SMPIdentityInformation.self,
            SMPIdentityAddressInformation.self, SMPSigningInformation.self, SMPSecurityRequest.self
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.code, $0) })
    }()

    /// The typed command in a whole, well-formed PDU; nil for unknown codes and bad lengths.
    public static func decode(_ pdu: SMPPDU) -> (any SMPCommand)? {
        guard pdu.error == nil, let t = types[pdu.smpCode] else { return nil }
        return t.init(pdu)
    }

    /// Key material a redactor zeroes: the 128-bit value's range in the PDU and its label, for
    /// the six codes that carry one (§3.5.3, §3.5.4, §3.5.7, §3.6.2, §3.6.4, §3.6.6).
    public static func secret(_ code: SMPCode) -> (range: Range<Int>, label: String)? {
        switch code {
        case .pairingConfirm: (1..<17, "SMP Pairing Confirm value")
        case .pairingRandom: (1..<17, "SMP Pairing Random value")
        case .encryptionInformation: (1..<17, "SMP Encryption Information LTK")
        case .identityInformation: (1..<17, "SMP Identity Information IRK")
        case .signingInformation: (1..<17, "SMP Signing Information CSRK")
        case .pairingDHKeyCheck: (1..<17, "SMP Pairing DHKey Check value")
        default: nil
        }
    }
}
