import BluesiftWire

/// Big-endian helpers: Mesh carries every field below the access layer MSB first (§3.9.1).
@inline(__always) func meshBE(_ b: [UInt8], _ at: Int, _ n: Int) -> UInt32 {
    var v: UInt32 = 0
    for i in 0..<n { v = v << 8 | UInt32(b[at + i]) }
    return v
}
@inline(__always) func meshPutBE(_ v: UInt32, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32(n - 1 - $0))) } }
func meshError(_ code: DecodeError.Code, _ offset: Int, _ message: String) -> DecodeError {
    DecodeError(layer: "mesh", code: code, offset: offset, message: message)
}
func meshNeed(_ b: [UInt8], _ n: Int, _ what: String) throws(DecodeError) {
    guard b.count >= n else { throw meshError(.truncated, b.count, "\(what): \(b.count) octets, needs \(n)") }
}

/// A Provisioning PDU (Mesh Protocol v1.1 §5.4.1): Padding (2 bits) ‖ Type (6 bits) ‖
/// Parameters, every field big-endian. One case per PDU of §5.4.1.1-§5.4.1.14.
public struct MeshProvisioningPDU: Sendable, Hashable {
    public var type: MeshProvisioningPDUType
    public var parameters: [UInt8]

    public init(type: MeshProvisioningPDUType, parameters: [UInt8]) { self.type = type; self.parameters = parameters }

    /// Checks the size each type has (§5.4.1.1-§5.4.1.10); Confirmation and Random are 16
    /// or 32 octets (the two algorithms of §5.4.1.2).
    public init(decoding b: [UInt8]) throws(DecodeError) {
        try meshNeed(b, 1, "provisioning PDU")
        guard b[0] & 0xC0 == 0 else { throw meshError(.invalidValue, 0, "provisioning PDU padding bits are not 0") }
        type = MeshProvisioningPDUType(rawValue: b[0] & 0x3F)
        parameters = Array(b[1...])
        let n = parameters.count
        let ok: Bool =
            switch type.rawValue {
            case 0x00, 0x09: n == 1
            case 0x01: n == 11
            case 0x02: n == 5
            case 0x03: n == 64
            case 0x04, 0x08, 0x0C: n == 0
            case 0x05, 0x06: n == 16 || n == 32
            case 0x07: n == 33
            case 0x0A: n == 6
            case 0x0B: n >= 7
            case 0x0D: n >= 2 && n % 2 == 0
            default: true
            }
        guard ok else { throw meshError(.invalidLength, 1, "\(type.name): \(n) parameter octets") }
    }

    public func encode() -> [UInt8] { [type.rawValue & 0x3F] + parameters }

    var p: [UInt8] { parameters }

    /// Provisioning Failed's error code (§5.4.1.10).
    public var errorCode: MeshProvisioningError? { type == .failed && p.count == 1 ? MeshProvisioningError(rawValue: p[0]) : nil }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("type", Int(type.rawValue)); sink.string("name", type.name)
        let n = p.count
        switch type.rawValue {
        case 0x00 where n == 1: sink.int("attention_duration", Int(p[0])) // §5.4.1.1
        case 0x01 where n == 11: // §5.4.1.2
            sink.int("number_of_elements", Int(p[0])); sink.int("algorithms", Int(meshBE(p, 1, 2)))
            sink.int("public_key_type", Int(p[3])); sink.int("oob_type", Int(p[4]))
            sink.int("output_oob_size", Int(p[5])); sink.int("output_oob_action", Int(meshBE(p, 6, 2)))
            sink.int("input_oob_size", Int(p[8])); sink.int("input_oob_action", Int(meshBE(p, 9, 2)))
        case 0x02 where n == 5: // §5.4.1.3
            sink.int("algorithm", Int(p[0])); sink.int("public_key", Int(p[1]))
            sink.int("authentication_method", Int(p[2])); sink.int("authentication_action", Int(p[3]))
            sink.int("authentication_size", Int(p[4]))
        case 0x03 where n == 64: // §5.4.1.4
            sink.hex("public_key_x", Array(p[0..<32])); sink.hex("public_key_y", Array(p[32..<64]))
        case 0x05: sink.hex("confirmation", p) // §5.4.1.6
        case 0x06: sink.hex("random", p) // §5.4.1.7
        case 0x07 where n == 33: // §5.4.1.8
            sink.hex("encrypted_provisioning_data", Array(p[0..<25])); sink.hex("provisioning_data_mic", Array(p[25..<33]))
        case 0x09 where n == 1: // §5.4.1.10
            sink.int("error_code", Int(p[0])); sink.string("error_name", MeshProvisioningError(rawValue: p[0]).name)
        case 0x0A where n == 6: // §5.4.1.11
            sink.int("record_id", Int(meshBE(p, 0, 2))); sink.int("fragment_offset", Int(meshBE(p, 2, 2)))
            sink.int("fragment_maximum_size", Int(meshBE(p, 4, 2)))
        case 0x0B where n >= 7: // §5.4.1.12
            sink.int("status", Int(p[0])); sink.int("record_id", Int(meshBE(p, 1, 2)))
            sink.int("fragment_offset", Int(meshBE(p, 3, 2))); sink.int("total_length", Int(meshBE(p, 5, 2)))
            sink.hex("data", Array(p[7...]))
        case 0x0D where n >= 2: // §5.4.1.14
            sink.int("provisioning_extensions", Int(meshBE(p, 0, 2)))
            sink.array("records_list") { s in
                var i = 2
                while i + 2 <= n { s.int("", Int(meshBE(p, i, 2))); i += 2 }
            }
        case 0x04, 0x08, 0x0C: break
        default: if n > 0 { sink.hex("parameters", p) }
        }
    }

    public var summary: String {
        var s = "Mesh " + type.name
        if let e = errorCode { s += " error=" + e.name }
        if type == .capabilities, p.count == 11 { s += " elements=\(p[0])" }
        return s
    }
}

/// The FCS of a Transaction Start (Mesh Protocol v1.1 §5.3.2): the 8-bit CRC of 3GPP TS
/// 27.010 §5.2.1.6 (reflected polynomial 0xE0, initial 0xFF, ones' complement) over the
/// whole Provisioning PDU.
public enum MeshFCS {
    public static func compute(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0xFF
        for b in bytes {
            crc ^= b
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xE0 : crc >> 1 }
        }
        return 0xFF &- crc
    }
}

/// A Generic Provisioning PDU (Mesh Protocol v1.1 §5.3.1): GPCF in the low 2 bits of the
/// first octet, then one of the four formats of §5.3.1.1-§5.3.1.4.
public enum MeshGenericProvisioningPDU: Sendable, Hashable {
    /// §5.3.1.1: SegN (6 bits) ‖ GPCF ‖ TotalLength (2) ‖ FCS (1) ‖ the first segment.
    case transactionStart(segN: UInt8, totalLength: UInt16, fcs: UInt8, data: [UInt8])
    /// §5.3.1.2: Padding (6 bits, 0) ‖ GPCF.
    case transactionAck
    /// §5.3.1.3: SegmentIndex (6 bits) ‖ GPCF ‖ a segment.
    case transactionContinuation(segmentIndex: UInt8, data: [UInt8])
    /// §5.3.1.4.1: Link Open with the Device UUID.
    case linkOpen(deviceUUID: [UInt8])
    /// §5.3.1.4.2.
    case linkAck
    /// §5.3.1.4.3: the reason.
    case linkClose(reason: MeshLinkCloseReason)
    /// A bearer control opcode this decoder does not know, kept whole.
    case bearerControl(opcode: MeshBearerOpcode, parameters: [UInt8])

    public init(decoding b: [UInt8]) throws(DecodeError) {
        try meshNeed(b, 1, "generic provisioning PDU")
        let six = b[0] >> 2
        switch MeshGPCF(rawValue: b[0]) {
        case .transactionStart:
            try meshNeed(b, 4, "Transaction Start")
            self = .transactionStart(segN: six, totalLength: UInt16(meshBE(b, 1, 2)), fcs: b[3], data: Array(b[4...]))
        case .transactionAck:
            self = .transactionAck
        case .transactionContinuation:
            self = .transactionContinuation(segmentIndex: six, data: Array(b[1...]))
        default:
            let op = MeshBearerOpcode(rawValue: six)
            switch op {
            case .linkOpen:
                guard b.count == 17 else { throw meshError(.invalidLength, 1, "Link Open: \(b.count - 1) parameter octets, needs 16") }
                self = .linkOpen(deviceUUID: Array(b[1...]))
            case .linkAck:
                self = .linkAck
            case .linkClose:
                guard b.count == 2 else { throw meshError(.invalidLength, 1, "Link Close: \(b.count - 1) parameter octets, needs 1") }
                self = .linkClose(reason: MeshLinkCloseReason(rawValue: b[1]))
            default:
                self = .bearerControl(opcode: op, parameters: Array(b[1...]))
            }
        }
    }

    public func encode() -> [UInt8] {
        switch self {
        case .transactionStart(let n, let len, let fcs, let d): [n << 2 | 0] + meshPutBE(UInt32(len), 2) + [fcs] + d
        case .transactionAck: [0x01]
        case .transactionContinuation(let i, let d): [i << 2 | 2] + d
        case .linkOpen(let u): [0x03] + u
        case .linkAck: [0x07]
        case .linkClose(let r): [0x0B, r.rawValue]
        case .bearerControl(let op, let p): [op.rawValue << 2 | 3] + p
        }
    }

    public var gpcf: MeshGPCF {
        switch self {
        case .transactionStart: .transactionStart
        case .transactionAck: .transactionAck
        case .transactionContinuation: .transactionContinuation
        default: .bearerControl
        }
    }

    public var name: String {
        switch self {
        case .linkOpen: "Link Open"
        case .linkAck: "Link ACK"
        case .linkClose: "Link Close"
        case .bearerControl(let op, _): op.name
        default: gpcf.name
        }
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("gpcf", Int(gpcf.rawValue)); sink.string("name", name)
        switch self {
        case .transactionStart(let n, let len, let fcs, let d):
            sink.int("seg_n", Int(n)); sink.int("total_length", Int(len)); sink.int("fcs", Int(fcs)); sink.hex("data", d)
        case .transactionContinuation(let i, let d):
            sink.int("segment_index", Int(i)); sink.hex("data", d)
        case .linkOpen(let u): sink.int("bearer_opcode", 0); sink.hex("device_uuid", u)
        case .linkAck: sink.int("bearer_opcode", 1)
        case .linkClose(let r): sink.int("bearer_opcode", 2); sink.int("reason", Int(r.rawValue)); sink.string("reason_name", r.name)
        case .bearerControl(let op, let p): sink.int("opcode", Int(op.rawValue)); sink.hex("parameters", p)
        case .transactionAck: break
        }
    }
}

/// A PB-ADV PDU (Mesh Protocol v1.1 §5.2.1): Link ID (4) ‖ Transaction Number (1) ‖ Generic
/// Provisioning PDU, the data of a PB-ADV AD structure (type 0x29).
public struct MeshPBADVPDU: Sendable, Hashable {
    public var linkID: UInt32
    public var transactionNumber: UInt8
    public var pdu: MeshGenericProvisioningPDU

    public init(linkID: UInt32, transactionNumber: UInt8, pdu: MeshGenericProvisioningPDU) {
        self.linkID = linkID; self.transactionNumber = transactionNumber; self.pdu = pdu
    }

    public init(decoding b: [UInt8]) throws(DecodeError) {
        try meshNeed(b, 6, "PB-ADV PDU")
        linkID = meshBE(b, 0, 4); transactionNumber = b[4]
        do throws(DecodeError) { pdu = try MeshGenericProvisioningPDU(decoding: Array(b[5...])) } catch { throw meshError(error.code, error.offset + 5, error.message) }
    }

    public func encode() -> [UInt8] { meshPutBE(linkID, 4) + [transactionNumber] + pdu.encode() }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("link_id", Int(linkID)); sink.int("transaction_number", Int(transactionNumber))
        pdu.describe(into: &sink)
    }
}

/// Unprovisioned Device beacon (Mesh Protocol v1.1 §3.10.2): Beacon Type 0x00 ‖ Device UUID
/// (16) ‖ OOB Information (2) ‖ URI Hash (4, optional).
public struct MeshUnprovisionedBeacon: Sendable, Hashable {
    public var deviceUUID: [UInt8]
    public var oobInformation: UInt16
    public var uriHash: UInt32?

    public init(deviceUUID: [UInt8], oobInformation: UInt16, uriHash: UInt32? = nil) {
        self.deviceUUID = deviceUUID; self.oobInformation = oobInformation; self.uriHash = uriHash
    }

    public init(decoding b: [UInt8]) throws(DecodeError) {
        guard b.count == 19 || b.count == 23 else { throw meshError(.invalidLength, 0, "unprovisioned device beacon: \(b.count) octets, needs 19 or 23") }
        deviceUUID = Array(b[1..<17]); oobInformation = UInt16(meshBE(b, 17, 2))
        uriHash = b.count == 23 ? meshBE(b, 19, 4) : nil
    }

    public func encode() -> [UInt8] { [0x00] + deviceUUID + meshPutBE(UInt32(oobInformation), 2) + (uriHash.map { meshPutBE($0, 4) } ?? []) }

    /// Names of the OOB Information bits (§3.10.2, Table 3.64).
    public static func oobNames(_ v: UInt16) -> [String] {
        let names = [
            "Other", "Electronic / URI", "2D machine-readable code", "Bar code", "Near Field Communication (NFC)",
            "Number", "String", "Certificate-based provisioning", "Provisioning records", "Reserved", "Reserved",
            "On box", "Inside box", "On piece of paper", "Inside manual", "On device"
        ]
        return (0..<16).filter { v & (1 << $0) != 0 }.map { names[$0] }
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.hex("device_uuid", deviceUUID); sink.int("oob_information", Int(oobInformation))
        sink.array("oob_names") { s in for n in Self.oobNames(oobInformation) { s.string("", n) } }
        if let h = uriHash { sink.int("uri_hash", Int(h)) }
    }
}

/// A Mesh Beacon (Mesh Protocol v1.1 §3.10), the data of a Mesh Beacon AD structure (0x2B)
/// or of a proxy PDU of type Mesh Beacon.
public enum MeshBeacon: Sendable, Hashable {
    case unprovisioned(MeshUnprovisionedBeacon)
    /// §3.10.3; `authenticated`: nil without the NetKey of its Network ID.
    case secureNetwork(flags: UInt8, networkID: [UInt8], ivIndex: UInt32, authenticationValue: [UInt8], authenticated: Bool?)
    /// §3.10.4; the decrypted Flags and IV Index when a NetKey's PrivateBeaconKey opens it.
    case meshPrivate(random: [UInt8], obfuscatedData: [UInt8], authenticationTag: [UInt8], flags: UInt8?, ivIndex: UInt32?)
    case unknown(type: MeshBeaconType, data: [UInt8])

    public var type: MeshBeaconType {
        switch self {
        case .unprovisioned: .unprovisionedDevice
        case .secureNetwork: .secureNetwork
        case .meshPrivate: .meshPrivate
        case .unknown(let t, _): t
        }
    }

    /// Structure only; authentication and decryption are the decoder's (it has the keys).
    public init(decoding b: [UInt8]) throws(DecodeError) {
        try meshNeed(b, 1, "mesh beacon")
        switch b[0] {
        case 0x00: self = .unprovisioned(try MeshUnprovisionedBeacon(decoding: b))
        case 0x01:
            guard b.count == 22 else { throw meshError(.invalidLength, 0, "secure network beacon: \(b.count) octets, needs 22") }
            self = .secureNetwork(
                flags: b[1], networkID: Array(b[2..<10]), ivIndex: meshBE(b, 10, 4), authenticationValue: Array(b[14..<22]),
                authenticated: nil)
        case 0x02:
            guard b.count == 27 else { throw meshError(.invalidLength, 0, "mesh private beacon: \(b.count) octets, needs 27") }
            self = .meshPrivate(random: Array(b[1..<14]), obfuscatedData: Array(b[14..<19]), authenticationTag: Array(b[19..<27]), flags: nil, ivIndex: nil)
        default: self = .unknown(type: MeshBeaconType(rawValue: b[0]), data: Array(b[1...]))
        }
    }

    public func encode() -> [UInt8] {
        switch self {
        case .unprovisioned(let u): u.encode()
        case .secureNetwork(let f, let id, let iv, let auth, _): [0x01, f] + id + meshPutBE(iv, 4) + auth
        case .meshPrivate(let r, let d, let t, _, _): [0x02] + r + d + t
        case .unknown(let t, let d): [t.rawValue] + d
        }
    }

    static func flagFields<S: FieldSink>(_ f: UInt8, into sink: inout S) {
        sink.int("flags", Int(f)); sink.bool("key_refresh", f & 1 != 0); sink.bool("iv_update", f & 2 != 0)
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("type", Int(type.rawValue)); sink.string("name", type.name)
        switch self {
        case .unprovisioned(let u): u.describe(into: &sink)
        case .secureNetwork(let f, let id, let iv, let auth, let ok):
            Self.flagFields(f, into: &sink)
            sink.hex("network_id", id); sink.int("iv_index", Int(iv)); sink.hex("authentication_value", auth)
            sink.string("auth", ok.map { $0 ? "ok" : "bad" } ?? "no NetKey for this Network ID")
        case .meshPrivate(let r, let d, let t, let f, let iv):
            sink.hex("random", r)
            if let f, let iv {
                Self.flagFields(f, into: &sink); sink.int("iv_index", Int(iv)); sink.string("auth", "ok")
            } else {
                sink.hex("obfuscated_private_beacon_data", d); sink.string("auth", "no PrivateBeaconKey opens it")
            }
            sink.hex("authentication_tag", t)
        case .unknown(_, let d): sink.hex("data", d)
        }
    }

    public var summary: String {
        switch self {
        case .unprovisioned(let u): "Mesh Unprovisioned Device beacon uuid=" + Hex.string(u.deviceUUID)
        case .secureNetwork(let f, let id, let iv, _, let ok):
            "Mesh Secure Network beacon net=" + Hex.string(id) + " iv_index=\(iv)" + (f & 2 != 0 ? " iv_update" : "")
                + (f & 1 != 0 ? " key_refresh" : "") + (ok.map { $0 ? " auth ok" : " auth bad" } ?? "")
        case .meshPrivate(_, _, _, _, let iv): "Mesh Private beacon" + (iv.map { " iv_index=\($0)" } ?? " (encrypted)")
        case .unknown(let t, _): "Mesh beacon type \(t.rawValue)"
        }
    }
}
