import BluesiftWire

extension MeshControlOpcode {
    public static let pathRequest = Self(rawValue: 0x0B), pathReply = Self(rawValue: 0x0C), pathConfirmation = Self(rawValue: 0x0D)
    public static let pathEchoRequest = Self(rawValue: 0x0E), pathEchoReply = Self(rawValue: 0x0F)
    public static let dependentNodeUpdate = Self(rawValue: 0x10), pathRequestSolicitation = Self(rawValue: 0x11)
}

/// A unicast address range in a directed forwarding message (Mesh Protocol v1.1 §3.6.5.11.1):
/// Length_Present (1) ‖ Range_Start (15), then Range_Length (8) when Length_Present is 1.
/// Big-endian like every transport control parameter.
public struct MeshUnicastAddressRange: Sendable, Hashable {
    public var rangeStart: UInt16
    /// nil when Length_Present is 0 (one address).
    public var rangeLength: UInt8?

    public init(rangeStart: UInt16, rangeLength: UInt8? = nil) { self.rangeStart = rangeStart; self.rangeLength = rangeLength }

    static func decode(_ b: [UInt8], _ i: inout Int, _ what: StaticString) throws(DecodeError) -> Self {
        guard b.count - i >= 2 else { throw meshError(.truncated, i + 1, "\(what): \(b.count - i) octets, needs 2") }
        let present = b[i] & 0x80 != 0
        let start = UInt16(b[i] & 0x7F) << 8 | UInt16(b[i + 1])
        i += 2
        guard present else { return Self(rangeStart: start) }
        guard i < b.count else { throw meshError(.truncated, i + 1, "\(what): Range_Length missing") }
        i += 1
        return Self(rangeStart: start, rangeLength: b[i - 1])
    }

    func encode() -> [UInt8] {
        let hi = UInt8(rangeStart >> 8 & 0x7F) | (rangeLength == nil ? 0 : 0x80)
        return [hi, UInt8(truncatingIfNeeded: rangeStart)] + (rangeLength.map { [$0] } ?? [])
    }

    func describe<S: FieldSink>(_ key: StaticString, into sink: inout S) {
        sink.object(.literal(key)) { o in
            o.int("length_present", rangeLength == nil ? 0 : 1); o.int("range_start", Int(rangeStart))
            if let n = rangeLength { o.int("range_length", Int(n)) }
        }
    }
}

/// The directed forwarding control messages (Mesh Protocol v1.1 §3.6.5.11-§3.6.5.17),
/// opcodes 0x0B-0x11: decoded from and encoded to a control message's parameters. JSON keys
/// are the specification's field names in snake case. Neither tshark 4.0 nor Silvair's
/// bluetooth-mesh decodes them; the tests check bytes built by hand from the field tables.
public enum MeshPathMessage: Sendable, Hashable {
    /// §3.6.5.11 PATH_REQUEST: On_Behalf_Of_Dependent_Origin (1) ‖ Path_Origin_Path_Metric_Type (3)
    /// ‖ Path_Origin_Path_Lifetime (2) ‖ Path_Discovery_Interval (1) ‖ Prohibited (1) ‖
    /// Path_Origin_Forwarding_Number (8) ‖ Path_Origin_Path_Metric (8) ‖ Destination (16) ‖
    /// Path_Origin_Unicast_Addr_Range ‖ Dependent_Origin_Unicast_Addr_Range (when OBO is 1).
    case pathRequest(PathRequest)
    /// §3.6.5.12 PATH_REPLY: Unicast_Destination (1) ‖ On_Behalf_Of_Dependent_Target (1) ‖
    /// Confirmation_Request (1) ‖ Prohibited (5) ‖ Path_Origin (16) ‖ Path_Origin_Forwarding_Number (8)
    /// ‖ Path_Target_Unicast_Addr_Range (when Unicast_Destination is 1) ‖
    /// Dependent_Target_Unicast_Addr_Range (when both flags are 1).
    case pathReply(PathReply)
    /// §3.6.5.13 PATH_CONFIRMATION: Path_Origin (16) ‖ Path_Target (16).
    case pathConfirmation(pathOrigin: UInt16, pathTarget: UInt16)
    /// §3.6.5.14 PATH_ECHO_REQUEST: no parameters.
    case pathEchoRequest
    /// §3.6.5.15 PATH_ECHO_REPLY: Destination (16).
    case pathEchoReply(destination: UInt16)
    /// §3.6.5.16 DEPENDENT_NODE_UPDATE: Type (1) ‖ Prohibited (7) ‖ Path_Endpoint (16) ‖
    /// Dependent_Node_Unicast_Addr_Range.
    case dependentNodeUpdate(type: UInt8, prohibited: UInt8, pathEndpoint: UInt16, dependentNode: MeshUnicastAddressRange)
    /// §3.6.5.17 PATH_REQUEST_SOLICITATION: Addr_List (16 bits each).
    case pathRequestSolicitation(addrList: [UInt16])

    public struct PathRequest: Sendable, Hashable {
        public var pathOriginPathMetricType: UInt8, pathOriginPathLifetime: UInt8, pathDiscoveryInterval: UInt8, prohibited: UInt8
        public var pathOriginForwardingNumber: UInt8, pathOriginPathMetric: UInt8, destination: UInt16
        public var pathOrigin: MeshUnicastAddressRange
        /// Present exactly when On_Behalf_Of_Dependent_Origin is 1.
        public var dependentOrigin: MeshUnicastAddressRange?
    }

    public struct PathReply: Sendable, Hashable {
        public var confirmationRequest: UInt8, prohibited: UInt8, pathOrigin: UInt16, pathOriginForwardingNumber: UInt8
        /// Present exactly when Unicast_Destination is 1.
        public var pathTarget: MeshUnicastAddressRange?
        /// Present exactly when On_Behalf_Of_Dependent_Target is 1 (only with a path target).
        public var dependentTarget: MeshUnicastAddressRange?
        /// On_Behalf_Of_Dependent_Target as sent (the specification prohibits it without
        /// Unicast_Destination; kept so that such a PDU encodes back as it came).
        public var onBehalfOfDependentTarget: UInt8
    }

    /// nil for an opcode outside 0x0B-0x11.
    public init?(opcode: MeshControlOpcode, parameters p: [UInt8]) throws(DecodeError) {
        var i = 0
        func u16(_ what: StaticString) throws(DecodeError) -> UInt16 {
            guard p.count - i >= 2 else { throw meshError(.truncated, i + 1, "\(what): \(p.count - i) octets, needs 2") }
            i += 2
            return UInt16(p[i - 2]) << 8 | UInt16(p[i - 1])
        }
        func u8(_ what: StaticString) throws(DecodeError) -> UInt8 {
            guard i < p.count else { throw meshError(.truncated, i + 1, "\(what): missing") }
            i += 1
            return p[i - 1]
        }
        switch opcode {
        case .pathRequest:
            let f = try u8("PATH_REQUEST flags"), fwd = try u8("Path_Origin_Forwarding_Number"), metric = try u8("Path_Origin_Path_Metric")
            let dst = try u16("Destination")
            let origin = try MeshUnicastAddressRange.decode(p, &i, "Path_Origin_Unicast_Addr_Range")
            var dep: MeshUnicastAddressRange? = nil
            if f & 0x80 != 0 { dep = try MeshUnicastAddressRange.decode(p, &i, "Dependent_Origin_Unicast_Addr_Range") }
            self = .pathRequest(
                PathRequest(
                    pathOriginPathMetricType: f >> 4 & 7, pathOriginPathLifetime: f >> 2 & 3, pathDiscoveryInterval: f >> 1 & 1, prohibited: f & 1,
                    pathOriginForwardingNumber: fwd, pathOriginPathMetric: metric, destination: dst, pathOrigin: origin, dependentOrigin: dep))
        case .pathReply:
            let f = try u8("PATH_REPLY flags"), origin = try u16("Path_Origin"), fwd = try u8("Path_Origin_Forwarding_Number")
            var target: MeshUnicastAddressRange? = nil, dep: MeshUnicastAddressRange? = nil
            if f & 0x80 != 0 { target = try MeshUnicastAddressRange.decode(p, &i, "Path_Target_Unicast_Addr_Range") }
            if f & 0xC0 == 0xC0 { dep = try MeshUnicastAddressRange.decode(p, &i, "Dependent_Target_Unicast_Addr_Range") }
            self = .pathReply(
                PathReply(
                    confirmationRequest: f >> 5 & 1, prohibited: f & 0x1F, pathOrigin: origin, pathOriginForwardingNumber: fwd,
                    pathTarget: target, dependentTarget: dep, onBehalfOfDependentTarget: f >> 6 & 1))
        case .pathConfirmation: self = .pathConfirmation(pathOrigin: try u16("Path_Origin"), pathTarget: try u16("Path_Target"))
        case .pathEchoRequest: self = .pathEchoRequest
        case .pathEchoReply: self = .pathEchoReply(destination: try u16("Destination"))
        case .dependentNodeUpdate:
            let f = try u8("DEPENDENT_NODE_UPDATE flags"), endpoint = try u16("Path_Endpoint")
            let node = try MeshUnicastAddressRange.decode(p, &i, "Dependent_Node_Unicast_Addr_Range")
            self = .dependentNodeUpdate(type: f >> 7, prohibited: f & 0x7F, pathEndpoint: endpoint, dependentNode: node)
        case .pathRequestSolicitation:
            guard p.count % 2 == 0 else { throw meshError(.invalidLength, p.count, "Addr_List: odd length \(p.count)") }
            var l: [UInt16] = []
            while i < p.count { l.append(try u16("Addr_List")) }
            self = .pathRequestSolicitation(addrList: l)
        default: return nil
        }
        guard i == p.count else { throw meshError(.invalidLength, i + 1, "\(opcode.name): \(p.count - i) octets left over") }
    }

    public var opcode: MeshControlOpcode {
        switch self {
        case .pathRequest: .pathRequest
        case .pathReply: .pathReply
        case .pathConfirmation: .pathConfirmation
        case .pathEchoRequest: .pathEchoRequest
        case .pathEchoReply: .pathEchoReply
        case .dependentNodeUpdate: .dependentNodeUpdate
        case .pathRequestSolicitation: .pathRequestSolicitation
        }
    }

    /// The control message's parameters (without the opcode).
    public func encodeParameters() -> [UInt8] {
        func be(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(truncatingIfNeeded: v)] }
        switch self {
        case .pathRequest(let r):
            let obo: UInt8 = r.dependentOrigin == nil ? 0 : 0x80
            let f: UInt8 = obo | (r.pathOriginPathMetricType & 7) << 4 | (r.pathOriginPathLifetime & 3) << 2 | (r.pathDiscoveryInterval & 1) << 1 | r.prohibited & 1
            return [f, r.pathOriginForwardingNumber, r.pathOriginPathMetric] + be(r.destination) + r.pathOrigin.encode()
                + (r.dependentOrigin?.encode() ?? [])
        case .pathReply(let r):
            let ud: UInt8 = r.pathTarget == nil ? 0 : 0x80
            let f: UInt8 = ud | (r.onBehalfOfDependentTarget & 1) << 6 | (r.confirmationRequest & 1) << 5 | r.prohibited & 0x1F
            return [f] + be(r.pathOrigin) + [r.pathOriginForwardingNumber] + (r.pathTarget?.encode() ?? []) + (r.dependentTarget?.encode() ?? [])
        case .pathConfirmation(let o, let t): return be(o) + be(t)
        case .pathEchoRequest: return []
        case .pathEchoReply(let d): return be(d)
        case .dependentNodeUpdate(let t, let p, let e, let n): return [(t & 1) << 7 | p & 0x7F] + be(e) + n.encode()
        case .pathRequestSolicitation(let l): return l.flatMap(be)
        }
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        switch self {
        case .pathRequest(let r):
            sink.int("on_behalf_of_dependent_origin", r.dependentOrigin == nil ? 0 : 1)
            sink.int("path_origin_path_metric_type", Int(r.pathOriginPathMetricType))
            sink.string("path_origin_path_metric_type_name", r.pathOriginPathMetricType == 0 ? "node count" : "RFU")
            sink.int("path_origin_path_lifetime", Int(r.pathOriginPathLifetime))
            sink.string("path_origin_path_lifetime_name", ["12 minutes", "2 hours", "24 hours", "10 days"][Int(r.pathOriginPathLifetime & 3)])
            sink.int("path_discovery_interval", Int(r.pathDiscoveryInterval))
            sink.string("path_discovery_interval_name", r.pathDiscoveryInterval == 0 ? "5 seconds" : "30 seconds")
            sink.int("prohibited", Int(r.prohibited))
            sink.int("path_origin_forwarding_number", Int(r.pathOriginForwardingNumber))
            sink.int("path_origin_path_metric", Int(r.pathOriginPathMetric)); sink.int("destination", Int(r.destination))
            r.pathOrigin.describe("path_origin_unicast_addr_range", into: &sink)
            r.dependentOrigin?.describe("dependent_origin_unicast_addr_range", into: &sink)
        case .pathReply(let r):
            sink.int("unicast_destination", r.pathTarget == nil ? 0 : 1)
            sink.int("on_behalf_of_dependent_target", Int(r.onBehalfOfDependentTarget))
            sink.int("confirmation_request", Int(r.confirmationRequest)); sink.int("prohibited", Int(r.prohibited))
            sink.int("path_origin", Int(r.pathOrigin)); sink.int("path_origin_forwarding_number", Int(r.pathOriginForwardingNumber))
            r.pathTarget?.describe("path_target_unicast_addr_range", into: &sink)
            r.dependentTarget?.describe("dependent_target_unicast_addr_range", into: &sink)
        case .pathConfirmation(let o, let t): sink.int("path_origin", Int(o)); sink.int("path_target", Int(t))
        case .pathEchoRequest: break
        case .pathEchoReply(let d): sink.int("destination", Int(d))
        case .dependentNodeUpdate(let t, let p, let e, let n):
            sink.int("type", Int(t)); sink.string("type_name", t == 0 ? "removed" : "added"); sink.int("prohibited", Int(p))
            sink.int("path_endpoint", Int(e)); n.describe("dependent_node_unicast_addr_range", into: &sink)
        case .pathRequestSolicitation(let l): sink.array("addr_list") { s in for a in l { s.int("", Int(a)) } }
        }
    }

    /// A few fields for the one-line summary.
    var summaryText: String {
        switch self {
        case .pathRequest(let r): " origin=\(Hex.fixed(UInt64(r.pathOrigin.rangeStart), width: 4)) destination=\(Hex.fixed(UInt64(r.destination), width: 4))"
        case .pathReply(let r): " origin=\(Hex.fixed(UInt64(r.pathOrigin), width: 4))" + (r.pathTarget.map { " target=\(Hex.fixed(UInt64($0.rangeStart), width: 4))" } ?? "")
        case .pathConfirmation(let o, let t): " origin=\(Hex.fixed(UInt64(o), width: 4)) target=\(Hex.fixed(UInt64(t), width: 4))"
        case .pathEchoRequest: ""
        case .pathEchoReply(let d): " destination=\(Hex.fixed(UInt64(d), width: 4))"
        case .dependentNodeUpdate(let t, _, let e, let n):
            " \(t == 0 ? "removed" : "added") \(Hex.fixed(UInt64(n.rangeStart), width: 4)) endpoint=\(Hex.fixed(UInt64(e), width: 4))"
        case .pathRequestSolicitation(let l): " addresses=\(l.count)"
        }
    }
}
extension MeshPathMessage: FieldDescribable {}
