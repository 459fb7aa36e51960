import BluesiftWire

/// A lower transport PDU (Mesh Protocol v1.1 §3.5.2): the transport PDU of a network PDU,
/// read with its CTL bit. Big-endian.
public enum MeshLowerTransportPDU: Sendable, Hashable {
    /// §3.5.2.1: SEG 0 ‖ AKF ‖ AID (6) ‖ Upper Transport Access PDU.
    case unsegmentedAccess(akf: Bool, aid: UInt8, upper: [UInt8])
    /// §3.5.2.2: SEG 1 ‖ AKF ‖ AID ‖ SZMIC ‖ SeqZero (13) ‖ SegO (5) ‖ SegN (5) ‖ segment.
    case segmentedAccess(akf: Bool, aid: UInt8, szmic: Bool, seqZero: UInt16, segO: UInt8, segN: UInt8, segment: [UInt8])
    /// §3.5.2.3: SEG 0 ‖ Opcode (7) ‖ Parameters; opcode 0 is the Segment Acknowledgment.
    case unsegmentedControl(opcode: MeshControlOpcode, parameters: [UInt8])
    /// §3.5.2.3.1: Opcode 0x00 ‖ OBO ‖ SeqZero (13) ‖ RFU (2) ‖ BlockAck (32).
    case segmentAck(obo: Bool, seqZero: UInt16, blockAck: UInt32)
    /// §3.5.2.4: SEG 1 ‖ Opcode ‖ RFU ‖ SeqZero ‖ SegO ‖ SegN ‖ segment.
    case segmentedControl(opcode: MeshControlOpcode, seqZero: UInt16, segO: UInt8, segN: UInt8, segment: [UInt8])

    public init(decoding b: [UInt8], ctl: Bool) throws(DecodeError) {
        try meshNeed(b, 1, "lower transport PDU")
        let seg = b[0] & 0x80 != 0
        if seg {
            try meshNeed(b, 5, "segmented lower transport PDU")
            let seqZero = UInt16(b[1] & 0x7F) << 6 | UInt16(b[2] >> 2)
            let segO = (b[2] & 0x03) << 3 | b[3] >> 5, segN = b[3] & 0x1F
            guard segO <= segN else { throw meshError(.invalidValue, 2, "SegO \(segO) is after SegN \(segN)") }
            if ctl {
                self = .segmentedControl(opcode: MeshControlOpcode(rawValue: b[0]), seqZero: seqZero, segO: segO, segN: segN, segment: Array(b[4...]))
            } else {
                self = .segmentedAccess(
                    akf: b[0] & 0x40 != 0, aid: b[0] & 0x3F, szmic: b[1] & 0x80 != 0, seqZero: seqZero,
                    segO: segO, segN: segN, segment: Array(b[4...]))
            }
        } else if ctl {
            let op = MeshControlOpcode(rawValue: b[0])
            if op == .segmentAck {
                guard b.count == 7 else { throw meshError(.invalidLength, 0, "Segment Acknowledgment: \(b.count) octets, needs 7") }
                self = .segmentAck(obo: b[1] & 0x80 != 0, seqZero: UInt16(b[1] & 0x7F) << 6 | UInt16(b[2] >> 2), blockAck: meshBE(b, 3, 4))
            } else {
                self = .unsegmentedControl(opcode: op, parameters: Array(b[1...]))
            }
        } else {
            try meshNeed(b, 6, "unsegmented access PDU") // 1 + at least 1 octet + 32-bit TransMIC
            self = .unsegmentedAccess(akf: b[0] & 0x40 != 0, aid: b[0] & 0x3F, upper: Array(b[1...]))
        }
    }

    /// SEG, the first bit of every lower transport PDU (§3.5.2).
    static let segBit: UInt8 = 0x80

    static func segHeader(_ szOrRFU: Bool, _ seqZero: UInt16, _ segO: UInt8, _ segN: UInt8) -> [UInt8] {
        [(szOrRFU ? 0x80 : 0) | UInt8(seqZero >> 6 & 0x7F), UInt8(truncatingIfNeeded: seqZero << 2) | segO >> 3, (segO & 7) << 5 | segN & 0x1F]
    }

    public func encode() -> [UInt8] {
        switch self {
        case .unsegmentedAccess(let akf, let aid, let u): [(akf ? 0x40 : 0) | aid & 0x3F] + u
        case .segmentedAccess(let akf, let aid, let sz, let z, let o, let n, let s):
            [Self.segBit | (akf ? 0x40 : 0) | aid & 0x3F] + Self.segHeader(sz, z, o, n) + s
        case .unsegmentedControl(let op, let p): [op.rawValue] + p
        case .segmentAck(let obo, let z, let ack):
            [0x00, (obo ? 0x80 : 0) | UInt8(z >> 6 & 0x7F), UInt8(truncatingIfNeeded: z << 2)] + meshPutBE(ack, 4)
        case .segmentedControl(let c, let z, let o, let n, let s): [Self.segBit | c.rawValue] + Self.segHeader(false, z, o, n) + s
        }
    }

    public var isSegmented: Bool {
        switch self {
        case .segmentedAccess, .segmentedControl: true
        default: false
        }
    }

    /// `seg`, `akf`, `aid`, `szmic`, `seq_zero`, `seg_o`, `seg_n`, `opcode`, `obo`,
    /// `block_ack` as the specification names them.
    public func describe<S: FieldSink>(into sink: inout S) {
        switch self {
        case .unsegmentedAccess(let akf, let aid, _):
            sink.int("seg", 0); sink.int("akf", akf ? 1 : 0); sink.int("aid", Int(aid))
        case .segmentedAccess(let akf, let aid, let sz, let z, let o, let n, let s):
            sink.int("seg", 1); sink.int("akf", akf ? 1 : 0); sink.int("aid", Int(aid)); sink.int("szmic", sz ? 1 : 0)
            sink.int("seq_zero", Int(z)); sink.int("seg_o", Int(o)); sink.int("seg_n", Int(n)); sink.hex("segment", s)
        case .unsegmentedControl(let op, _):
            sink.int("seg", 0); sink.int("opcode", Int(op.rawValue)); sink.string("opcode_name", op.name)
        case .segmentAck(let obo, let z, let ack):
            sink.int("seg", 0); sink.int("opcode", 0); sink.string("opcode_name", MeshControlOpcode.segmentAck.name)
            sink.int("obo", obo ? 1 : 0); sink.int("seq_zero", Int(z)); sink.int("block_ack", Int(ack))
        case .segmentedControl(let op, let z, let o, let n, let s):
            sink.int("seg", 1); sink.int("opcode", Int(op.rawValue)); sink.string("opcode_name", op.name)
            sink.int("seq_zero", Int(z)); sink.int("seg_o", Int(o)); sink.int("seg_n", Int(n)); sink.hex("segment", s)
        }
    }

    /// SeqAuth's low 24 bits (§3.5.3.1): the SEQ of the first segment, recovered from the
    /// SEQ of any segment and its SeqZero.
    public static func seqAuth(seq: UInt32, seqZero: UInt16) -> UInt32 {
        (seq &- ((seq &- UInt32(seqZero)) & 0x1FFF)) & 0xFF_FFFF
    }
}

/// A transport control message (Mesh Protocol v1.1 §3.6.5): opcode and parameters, fields
/// big-endian. Friend Update's FriendCounter-free layout, Friend Clear's 2-octet LPNAddress
/// and the signed RSSI are as the specification writes them (tshark 4.0 reads some of them
/// one octet wide).
public struct MeshControlMessage: Sendable, Hashable {
    public var opcode: MeshControlOpcode
    public var parameters: [UInt8]

    public init(opcode: MeshControlOpcode, parameters: [UInt8]) { self.opcode = opcode; self.parameters = parameters }

    /// Checks the size of the known messages (§3.6.5.1-§3.6.5.10).
    public func validate() throws(DecodeError) {
        let n = parameters.count
        let ok: Bool =
            switch opcode {
            case .friendPoll, .friendSubscriptionListConfirm: n == 1
            case .friendUpdate, .friendOffer: n == 6
            case .friendRequest: n == 10
            case .friendClear, .friendClearConfirm: n == 4
            case .friendSubscriptionListAdd, .friendSubscriptionListRemove: n >= 1 && n % 2 == 1
            case .heartbeat: n == 3
            default: true
            }
        guard ok else { throw meshError(.invalidLength, 1, "\(opcode.name): \(n) parameter octets") }
        _ = try MeshPathMessage(opcode: opcode, parameters: parameters) // §3.6.5.11-§3.6.5.17
    }

    public func encode() -> [UInt8] { [opcode.rawValue] + parameters }

    public func describe<S: FieldSink>(into sink: inout S) {
        let p = parameters, n = p.count
        sink.int("opcode", Int(opcode.rawValue)); sink.string("name", opcode.name)
        switch opcode {
        case .friendPoll where n == 1: sink.int("fsn", Int(p[0] & 1)) // §3.6.5.1
        case .friendUpdate where n == 6: // §3.6.5.2
            MeshBeacon.flagFields(p[0], into: &sink); sink.int("iv_index", Int(meshBE(p, 1, 4))); sink.int("md", Int(p[5]))
        case .friendRequest where n == 10: // §3.6.5.3
            sink.int("criteria", Int(p[0]))
            sink.int("rssi_factor", Int(p[0] >> 5 & 3)); sink.int("receive_window_factor", Int(p[0] >> 3 & 3))
            sink.int("min_queue_size_log", Int(p[0] & 7))
            sink.int("receive_delay", Int(p[1])); sink.int("poll_timeout", Int(meshBE(p, 2, 3)))
            sink.int("previous_address", Int(meshBE(p, 5, 2))); sink.int("num_elements", Int(p[7]))
            sink.int("lpn_counter", Int(meshBE(p, 8, 2)))
        case .friendOffer where n == 6: // §3.6.5.4
            sink.int("receive_window", Int(p[0])); sink.int("queue_size", Int(p[1]))
            sink.int("subscription_list_size", Int(p[2])); sink.int("rssi", Int(Int8(bitPattern: p[3])))
            sink.int("friend_counter", Int(meshBE(p, 4, 2)))
        case .friendClear where n == 4, .friendClearConfirm where n == 4: // §3.6.5.5, §3.6.5.6
            sink.int("lpn_address", Int(meshBE(p, 0, 2))); sink.int("lpn_counter", Int(meshBE(p, 2, 2)))
        case .friendSubscriptionListAdd where n >= 1, .friendSubscriptionListRemove where n >= 1: // §3.6.5.7, §3.6.5.8
            sink.int("transaction_number", Int(p[0]))
            sink.array("address_list") { s in
                var i = 1
                while i + 2 <= n { s.int("", Int(meshBE(p, i, 2))); i += 2 }
            }
        case .friendSubscriptionListConfirm where n == 1: sink.int("transaction_number", Int(p[0])) // §3.6.5.9
        case .heartbeat where n == 3: // §3.6.5.10
            sink.int("init_ttl", Int(p[0] & 0x7F)); sink.int("features", Int(meshBE(p, 1, 2)))
        case .pathRequest, .pathReply, .pathConfirmation, .pathEchoRequest, .pathEchoReply, .dependentNodeUpdate, .pathRequestSolicitation: // §3.6.5.11-17
            do throws(DecodeError) {
                try MeshPathMessage(opcode: opcode, parameters: p)?.describe(into: &sink)
            } catch {
                sink.hex("parameters", p); sink.string("error", error.message)
            }
        default: if n > 0 { sink.hex("parameters", p) }
        }
    }

    public var summary: String {
        var s = "Mesh " + opcode.name
        let p = parameters
        if opcode == .heartbeat, p.count == 3 { s += " init_ttl=\(p[0] & 0x7F)" }
        if opcode == .friendPoll, p.count == 1 { s += " fsn=\(p[0] & 1)" }
        if let m = try? MeshPathMessage(opcode: opcode, parameters: p) { s += m.summaryText }
        return s
    }
}

/// A proxy configuration message (Mesh Protocol v1.1 §6.7): the transport PDU of a network
/// PDU encrypted with the proxy nonce, CTL 1, DST 0x0000. Big-endian.
public struct MeshProxyConfigMessage: Sendable, Hashable {
    public var opcode: MeshProxyConfigOpcode
    public var parameters: [UInt8]

    public init(opcode: MeshProxyConfigOpcode, parameters: [UInt8]) { self.opcode = opcode; self.parameters = parameters }

    public init(decoding b: [UInt8]) throws(DecodeError) {
        try meshNeed(b, 1, "proxy configuration message")
        opcode = MeshProxyConfigOpcode(rawValue: b[0]); parameters = Array(b[1...])
    }

    public func encode() -> [UInt8] { [opcode.rawValue] + parameters }

    public func describe<S: FieldSink>(into sink: inout S) {
        let p = parameters, n = p.count
        sink.int("opcode", Int(opcode.rawValue)); sink.string("name", opcode.name)
        switch opcode {
        case .setFilterType where n == 1: // §6.7.1
            sink.int("filter_type", Int(p[0])); sink.string("filter_type_name", p[0] == 0 ? "accept list" : p[0] == 1 ? "reject list" : "unknown")
        case .addAddresses, .removeAddresses: // §6.7.2, §6.7.3
            sink.array("address_list") { s in
                var i = 0
                while i + 2 <= n { s.int("", Int(meshBE(p, i, 2))); i += 2 }
            }
        case .filterStatus where n == 3: // §6.7.4
            sink.int("filter_type", Int(p[0])); sink.int("list_size", Int(meshBE(p, 1, 2)))
        default: if n > 0 { sink.hex("parameters", p) }
        }
    }
}

/// A Proxy PDU (Mesh Protocol v1.1 §6.3.1): SAR (2 bits) ‖ Message Type (6 bits) ‖ Data, on
/// the Mesh Proxy and Mesh Provisioning Data In/Out characteristics.
public struct MeshProxyPDU: Sendable, Hashable {
    public var sar: MeshProxySAR
    public var messageType: MeshProxyMessageType
    public var data: [UInt8]

    public init(sar: MeshProxySAR, messageType: MeshProxyMessageType, data: [UInt8]) {
        self.sar = sar; self.messageType = messageType; self.data = data
    }

    public init(decoding b: [UInt8]) throws(DecodeError) {
        try meshNeed(b, 1, "proxy PDU")
        sar = MeshProxySAR(rawValue: b[0] >> 6); messageType = MeshProxyMessageType(rawValue: b[0] & 0x3F); data = Array(b[1...])
    }

    public func encode() -> [UInt8] { [sar.rawValue << 6 | messageType.rawValue & 0x3F] + data }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("sar", Int(sar.rawValue)); sink.string("sar_name", sar.name)
        sink.int("message_type", Int(messageType.rawValue)); sink.string("message_type_name", messageType.name)
    }
}
