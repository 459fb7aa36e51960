import BluesiftSecurity
import BluesiftWire

/// Where a mesh PDU was carried (Mesh Protocol v1.1 §3.3): an AD structure of an
/// advertising bearer, or a Proxy PDU on the GATT bearer.
public struct MeshBearer: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let advertising = MeshBearer(rawValue: "adv")
    public static let gatt = MeshBearer(rawValue: "gatt")
    public var description: String { rawValue }
}

/// The network header of a decrypted network PDU (Mesh Protocol v1.1 §3.4.4) and the IV
/// index it was decrypted with.
public struct MeshNetworkInfo: Sendable, Hashable {
    public var ivi: UInt8, nid: UInt8, ctl: Bool, ttl: UInt8, seq: UInt32, src: UInt16, dst: UInt16
    public var ivIndex: UInt32
    /// Decrypted with friendship credentials (§3.9.6.3.1).
    public var friendship: Bool
    /// Decrypted with the proxy nonce: a proxy configuration message (§6.7).
    public var proxyNonce: Bool
}

/// What the upper transport layer did with an access or control message (§3.6).
public struct MeshUpperTransportInfo: Sendable, Hashable {
    /// "ok", "bad", or nil when not tried (`encrypted` says why).
    public var mic: String?
    public var encrypted: String?
    /// "app" or "dev"; for a virtual destination the label UUID that opened it.
    public var key: String?
    public var seqAuth: UInt32
    public var segments: Int
    public var label: [UInt8]?
}

/// One mesh PDU as the decoder saw it: the bearer's PDU and every layer it opened, with
/// `mic: ok|bad` per secured layer or why it stayed encrypted. Errors are notes.
public struct MeshLayer: Sendable, FieldDescribable {
    public var bearer: MeshBearer
    /// AD type 0x29/0x2A/0x2B, or nil on GATT.
    public var adType: UInt8?
    public var proxy: MeshProxyPDU?
    /// A proxy PDU segment kept until its last segment (§6.3.2).
    public var proxyReassembling = false
    public var beacon: MeshBeacon?
    public var serviceData: MeshServiceData?
    /// A Node Identity or private identity resolved with the key file's NetKeys.
    public var identity: MeshIdentityMatch?
    public var pbadv: MeshPBADVPDU?
    public var provisioning: MeshProvisioningPDU?
    /// A provisioning PDU completed by this record: its FCS (PB-ADV) verified or not.
    public var fcsOK: Bool?
    /// The Provisioning Data PDU decrypted (`MeshDecoder.provisioningSecrets`).
    public var provisioningData: MeshProvisioningData?
    /// The same transaction completed before (PB-ADV repeats every transaction).
    public var retransmission = false
    public var networkPDU: [UInt8]?
    public var network: MeshNetworkInfo?
    /// "ok" / "bad" for the NetMIC; nil with `encrypted` when no key was tried.
    public var netMIC: String?
    public var encrypted: String?
    public var lower: MeshLowerTransportPDU?
    /// Segments held and needed of the segmented message this PDU belongs to.
    public var segmentsHeld: (held: Int, total: Int)?
    public var upper: MeshUpperTransportInfo?
    public var control: MeshControlMessage?
    public var proxyConfig: MeshProxyConfigMessage?
    public var access: MeshAccessMessage?
    public var notes: [DecodeError] = []
    /// Key material `redact` rewrites (`ModuleSecret`): records sealed again with the keys
    /// zeroed, or an empty range that says what was left as it was.
    public var redactions: [ModuleSecret] = []

    public init(bearer: MeshBearer, adType: UInt8? = nil) { self.bearer = bearer; self.adType = adType }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.string("bearer", bearer.rawValue)
        if let t = adType { sink.int("ad_type", Int(t)) }
        if let p = proxy {
            sink.object("proxy") { s in
                p.describe(into: &s); if proxyReassembling { s.string("reassembly", "waiting for the last segment") }
            }
        }
        if let b = beacon { sink.object("beacon") { b.describe(into: &$0) } }
        if let d = serviceData {
            sink.object("service_data") {
                d.describe(into: &$0); identity?.describe(into: &$0)
            }
        }
        if let p = pbadv { sink.object("pb_adv") { p.describe(into: &$0) } }
        if let p = provisioning {
            sink.object("provisioning") { s in
                p.describe(into: &s)
                if let ok = fcsOK { s.string("fcs_check", ok ? "ok" : "bad") }
                if retransmission { s.bool("retransmission", true) }
                if let d = provisioningData {
                    // The NetKey is a key: never printed.
                    s.object("provisioning_data") { o in
                        o.int("key_index", Int(d.keyIndex)); MeshBeacon.flagFields(d.flags, into: &o)
                        o.int("iv_index", Int(d.ivIndex)); o.int("unicast_address", Int(d.unicastAddress))
                    }
                    s.string("mic", "ok")
                } else if p.type == .data {
                    s.string("encrypted", "needs the session's ECDH secret or a private key")
                }
            }
        }
        if networkPDU != nil || network != nil {
            sink.object("network") { s in
                if let n = network {
                    s.int("ivi", Int(n.ivi)); s.int("nid", Int(n.nid)); s.int("ctl", n.ctl ? 1 : 0); s.int("ttl", Int(n.ttl))
                    s.int("seq", Int(n.seq)); s.int("src", Int(n.src)); s.int("dst", Int(n.dst)); s.int("iv_index", Int(n.ivIndex))
                    if n.friendship { s.string("credentials", "friendship") }
                } else if let p = networkPDU, let h = p.first {
                    s.int("ivi", Int(h >> 7)); s.int("nid", Int(h & 0x7F)); s.hex("obfuscated", p)
                }
                if let m = netMIC { s.string("mic", m) }
                if let e = encrypted { s.string("encrypted", e) }
            }
        }
        if let l = lower {
            sink.object("lower_transport") { s in
                l.describe(into: &s)
                if let h = segmentsHeld { s.int("segments_held", h.held); s.int("segments_total", h.total) }
            }
        }
        if let u = upper {
            sink.object("upper_transport") { s in
                if let m = u.mic { s.string("mic", m) }
                if let e = u.encrypted { s.string("encrypted", e) }
                if let k = u.key { s.string("key", k) }
                s.int("seq_auth", Int(u.seqAuth)); s.int("segments", u.segments)
                if let l = u.label { s.hex("label_uuid", l) }
            }
        }
        if let c = control { sink.object("control") { c.describe(into: &$0) } }
        if let c = proxyConfig { sink.object("proxy_configuration") { c.describe(into: &$0) } }
        if let a = access { sink.object("access") { a.describe(into: &$0) } }
        if !notes.isEmpty { sink.array("notes") { s in for n in notes { s.string("", n.description) } } }
    }

    /// One line starting "Mesh …": the deepest layer opened.
    public var summary: String {
        let route = network.map { " " + MeshAddress.text($0.src) + "→" + MeshAddress.text($0.dst) + " ttl=\($0.ttl) seq=\($0.seq)" } ?? ""
        if let a = access { return "Mesh " + a.summaryText + route }
        if let c = control { return c.summary + route }
        if let c = proxyConfig { return "Mesh Proxy " + c.opcode.name + route }
        if let b = beacon { return b.summary }
        if let d = serviceData { return d.summary + (identity?.summaryText ?? "") }
        if let p = provisioning {
            let d = provisioningData.map { " unicast=" + MeshAddress.text($0.unicastAddress) + " iv_index=\($0.ivIndex)" } ?? ""
            return p.summary + d + (fcsOK == false ? " [FCS bad]" : "") + (retransmission ? " (retransmission)" : "")
        }
        if let p = pbadv { return "Mesh PB-ADV " + p.pdu.name + " link=" + Hex.fixed(UInt64(p.linkID), width: 8) + " tn=\(p.transactionNumber)" }
        if proxyReassembling, let p = proxy { return "Mesh Proxy " + p.messageType.name + " segment (" + p.sar.name + ")" }
        if let l = lower {
            switch l {
            case .segmentAck(_, let z, let ack): return "Mesh Segment Acknowledgment seq_zero=\(z) block_ack=" + Hex.fixed(UInt64(ack), width: 8) + route
            case .segmentedAccess(_, _, _, let z, let o, let n, _), .segmentedControl(_, let z, let o, let n, _):
                let why = upper?.encrypted ?? upper?.mic.map { "mic " + $0 } ?? "reassembling"
                return "Mesh segment \(o)/\(n) seq_zero=\(z)" + route + " [" + why + "]"
            default:
                return "Mesh Access" + route + " [" + (upper?.encrypted ?? upper?.mic.map { "mic " + $0 } ?? "encrypted") + "]"
            }
        }
        if networkPDU != nil {
            return "Mesh Network PDU" + (network == nil ? " nid=" + Hex.fixed(UInt64((networkPDU?.first ?? 0) & 0x7F), width: 2) : route)
                + " [" + (encrypted ?? netMIC.map { "mic " + $0 } ?? "") + "]"
        }
        if let n = notes.first { return "Mesh [" + n.message + "]" }
        return "Mesh"
    }
}

/// Mesh Provisioning (0x1827) and Mesh Proxy (0x1828) service data (Mesh Protocol v1.1
/// §7.1.2.2.1, §7.2.2.2.1-§7.2.2.2.4).
public enum MeshServiceData: Sendable, Hashable {
    case provisioning(deviceUUID: [UInt8], oobInformation: UInt16)
    /// Identification Type 0x00: Network ID; `known` when a NetKey of the key file has it.
    case networkID(networkID: [UInt8], known: Bool?)
    /// 0x01 Node Identity, 0x02 Private Network Identity, 0x03 Private Node Identity.
    case identity(type: UInt8, hash: [UInt8], random: [UInt8])
    case unknown(uuid: UInt16, data: [UInt8])

    public init(uuid: UInt16, data b: [UInt8]) throws(DecodeError) {
        switch uuid {
        case 0x1827:
            guard b.count == 18 else { throw meshError(.invalidLength, 0, "mesh provisioning service data: \(b.count) octets, needs 18") }
            self = .provisioning(deviceUUID: Array(b[0..<16]), oobInformation: UInt16(meshBE(b, 16, 2)))
        case 0x1828:
            try meshNeed(b, 1, "mesh proxy service data")
            switch b[0] {
            case 0x00:
                guard b.count == 9 else { throw meshError(.invalidLength, 0, "network ID service data: \(b.count) octets, needs 9") }
                self = .networkID(networkID: Array(b[1...]), known: nil)
            case 0x01, 0x02, 0x03:
                guard b.count == 17 else { throw meshError(.invalidLength, 0, "identity service data: \(b.count) octets, needs 17") }
                self = .identity(type: b[0], hash: Array(b[1..<9]), random: Array(b[9..<17]))
            default: self = .unknown(uuid: uuid, data: b)
            }
        default: self = .unknown(uuid: uuid, data: b)
        }
    }

    public func encode() -> [UInt8] {
        switch self {
        case .provisioning(let u, let o): u + meshPutBE(UInt32(o), 2)
        case .networkID(let id, _): [0x00] + id
        case .identity(let t, let h, let r): [t] + h + r
        case .unknown(_, let d): d
        }
    }

    static let identityNames = ["Network ID", "Node Identity", "Private Network Identity", "Private Node Identity"]

    public func describe<S: FieldSink>(into sink: inout S) {
        switch self {
        case .provisioning(let u, let o):
            sink.int("uuid", 0x1827); sink.hex("device_uuid", u); sink.int("oob_information", Int(o))
        case .networkID(let id, let known):
            sink.int("uuid", 0x1828); sink.int("identification_type", 0); sink.string("identification_name", Self.identityNames[0])
            sink.hex("network_id", id); if let k = known { sink.bool("network_known", k) }
        case .identity(let t, let h, let r):
            sink.int("uuid", 0x1828); sink.int("identification_type", Int(t)); sink.string("identification_name", Self.identityNames[Int(t)])
            sink.hex("hash", h); sink.hex("random", r)
        case .unknown(let u, let d): sink.int("uuid", Int(u)); sink.hex("data", d)
        }
    }

    public var summary: String {
        switch self {
        case .provisioning(let u, _): "Mesh Provisioning service uuid=" + Hex.string(u)
        case .networkID(let id, _): "Mesh Proxy service network_id=" + Hex.string(id)
        case .identity(let t, _, _): "Mesh Proxy service " + Self.identityNames[Int(t)]
        case .unknown(let u, _): "Mesh service data " + Hex.fixed(UInt64(u), width: 4)
        }
    }
}
