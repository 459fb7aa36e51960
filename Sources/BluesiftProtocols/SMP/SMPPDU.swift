import BluesiftWire

/// One SMP PDU (Core 5.4 Vol 3 Part H §3.5-3.6). Borrows its bytes; accessors read the
/// parameters on demand and return nil when the PDU is too short for them.
public struct SMPPDU: FieldDescribable {
    public var bytes: UnsafeRawBufferPointer
    public var code: UInt8
    public var error: DecodeError?

    public init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.code = bytes.first ?? 0
        if bytes.isEmpty {
            error = DecodeError(layer: "smp", code: .truncated, offset: 0, message: "code: need 1 bytes, 0 left")
        } else if let n = smpCode.pduLength, bytes.count != n {
            error =
                bytes.count < n
                ? DecodeError(layer: "smp", code: .truncated, offset: bytes.count, message: "\(smpCode.name): need \(n) bytes, have \(bytes.count)")
                : DecodeError(layer: "smp", code: .invalidLength, offset: n, message: "\(bytes.count - n) bytes after the PDU")
        }
    }

    public var smpCode: SMPCode { SMPCode(rawValue: code) }
    public var name: String { smpCode.name }
    /// Everything after the code.
    public var parameters: UnsafeRawBufferPointer { bytes.isEmpty ? bytes : UnsafeRawBufferPointer(rebasing: bytes[1...]) }

    private func param(_ from: Int, _ count: Int) -> UnsafeRawBufferPointer? {
        let p = parameters
        return from + count <= p.count ? UnsafeRawBufferPointer(rebasing: p[from..<from + count]) : nil
    }

    /// Pairing Request/Response (§3.5.1-2).
    public var pairingFeatures: SMPPairingFeatures? {
        guard smpCode == .pairingRequest || smpCode == .pairingResponse, let p = param(0, 6) else { return nil }
        return SMPPairingFeatures(parameters: p)
    }
    /// Pairing Failed (§3.5.5).
    public var reason: SMPFailureReason? {
        guard smpCode == .pairingFailed, let p = param(0, 1) else { return nil }
        return SMPFailureReason(rawValue: p[0])
    }
    /// Security Request (§3.6.7).
    public var authReq: SMPAuthReq? {
        guard smpCode == .securityRequest, let p = param(0, 1) else { return nil }
        return SMPAuthReq(rawValue: p[0])
    }
    /// The 128-bit value of Confirm, Random, Encryption Information (LTK), Identity
    /// Information (IRK), Signing Information (CSRK) and DHKey Check, little-endian as sent.
    public var value128: UnsafeRawBufferPointer? {
        SMPCommands.secret(smpCode) != nil ? param(0, 16) : nil
    }
    /// Central Identification (§3.6.3).
    public var ediv: UInt16? {
        guard smpCode == .centralIdentification, let p = param(0, 2) else { return nil }
        return UInt16(p[0]) | UInt16(p[1]) << 8
    }
    public var rand: UnsafeRawBufferPointer? { smpCode == .centralIdentification ? param(2, 8) : nil }
    /// Identity Address Information (§3.6.5).
    public var identityAddress: (type: AddressType, address: BDAddr)? {
        guard smpCode == .identityAddressInformation, let p = param(0, 7) else { return nil }
        return (AddressType(rawValue: p[0]), BDAddr(littleEndian: UnsafeRawBufferPointer(rebasing: p[1..<7])))
    }
    /// Pairing Public Key (§3.5.6): X and Y, 32 bytes each.
    public var publicKeyX: UnsafeRawBufferPointer? { smpCode == .pairingPublicKey ? param(0, 32) : nil }
    public var publicKeyY: UnsafeRawBufferPointer? { smpCode == .pairingPublicKey ? param(32, 32) : nil }
    /// Keypress Notification (§3.5.8).
    public var keypressType: SMPKeypressType? {
        guard smpCode == .pairingKeypressNotification, let p = param(0, 1) else { return nil }
        return SMPKeypressType(rawValue: p[0])
    }

    static func valueKey(_ code: SMPCode) -> FieldKey {
        switch code {
        case .pairingConfirm: "confirm"
        case .pairingRandom: "random"
        case .encryptionInformation: "ltk"
        case .identityInformation: "irk"
        case .signingInformation: "csrk"
        default: "dhkey_check"
        }
    }

    /// Fields of the `smp` JSON object: opcode, name, then decoded parameters.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(code)); sink.string("name", name)
        if let f = pairingFeatures {
            sink.int("io_capability", Int(f.ioCapability.rawValue)); sink.string("io_capability_name", f.ioCapability.name)
            sink.int("oob", Int(f.oobDataFlag))
            f.authReq.describe(into: &sink)
            sink.int("max_key_size", Int(f.maxEncryptionKeySize))
            sink.int("initiator_key_distribution", Int(f.initiatorKeys.rawValue))
            f.initiatorKeys.describe("initiator_keys", into: &sink)
            sink.int("responder_key_distribution", Int(f.responderKeys.rawValue))
            f.responderKeys.describe("responder_keys", into: &sink)
        }
        if let r = reason { sink.int("reason", Int(r.rawValue)); sink.string("reason_name", r.name) }
        if let a = authReq { a.describe(into: &sink) }
        if let v = value128 { sink.hex(Self.valueKey(smpCode), v) }
        if let e = ediv { sink.int("ediv", Int(e)) }
        if let r = rand { sink.hex("rand", r) }
        if let a = identityAddress {
            sink.int("address_type", Int(a.type.rawValue)); sink.address("address", a.address)
        }
        if let x = publicKeyX { sink.hex("x", x) }
        if let y = publicKeyY { sink.hex("y", y) }
        if let k = keypressType { sink.int("notification_type", Int(k.rawValue)); sink.string("notification_name", k.name) }
    }

    public var summary: String {
        var s = "SMP " + name
        if let f = pairingFeatures {
            s += " io=" + f.ioCapability.name + " auth=" + Hex.fixed(UInt64(f.authReq.rawValue), width: 2)
            s += " keysize=\(f.maxEncryptionKeySize)"
        }
        if let r = reason { s += " reason=" + r.name }
        if let a = authReq { s += " auth=" + Hex.fixed(UInt64(a.rawValue), width: 2) }
        if let a = identityAddress { s += " " + a.address.description + " (" + a.type.name + ")" }
        if let k = keypressType { s += " " + k.name }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}
