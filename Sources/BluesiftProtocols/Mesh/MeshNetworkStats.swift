import BluesiftWire

/// The network, not just the PDUs (issue 40): what `stats` says about the mesh of a capture,
/// gathered from the `MeshLayer`s in frame order. Every table is keyed by something bounded
/// (16-bit addresses, opcodes, 8-octet network IDs) or capped, so memory stays flat.
public struct MeshNetworkStats: Sendable {
    public struct Node: Sendable, Hashable {
        public var address: UInt16
        public var messages = 0
        public var firstFrame: Int
        public var bearers: Set<String> = []
        /// From a Config Composition Data Status page 0 it sent.
        public var cid: Int?, pid: Int?, vid: Int?, elements: Int?, features: Int?
    }

    public struct NetworkID: Sendable, Hashable {
        public var networkID: String
        public var beacons = 0
        public var ivIndex: UInt32
        public var ivUpdate = false
        public var authenticated: Bool?
    }

    public struct ProvisioningSession: Sendable, Hashable {
        /// "pb-adv 0x0a0b0c0d" or "pb-gatt".
        public var link: String
        public var firstFrame: Int
        public var deviceUUID: String?
        public var pdus = 0
        /// "complete", "failed: <error>", "closed: <reason>" or "incomplete".
        public var outcome = "incomplete"
        /// Its link messages and provisioning PDUs in order (at most `maxSteps`).
        public var steps: [Step] = []
    }
    public struct Step: Sendable, Hashable {
        public var frame: Int
        public var name: String
    }

    /// Network PDUs from one source to one destination, with the names of the access and
    /// control messages among them.
    public struct Flow: Sendable {
        public var messages = 0
        public var names: [String: Int] = [:]
    }

    /// Consecutive secure network beacons of one network saying the same (IV index, flags,
    /// authentication): a new run starts when any of it changes.
    public struct BeaconRun: Sendable, Hashable {
        public var networkID: String
        public var ivIndex: UInt32
        public var keyRefresh: Bool, ivUpdate: Bool
        public var authenticated: Bool?
        public var firstFrame: Int, lastFrame: Int
        public var firstUs: Int64?, lastUs: Int64?
        public var beacons = 1
    }

    /// Vendor model messages a plugin decoded (`mesh:` rules): one vendor opcode and the
    /// plugin's message name, counted per source → destination pair (`src << 16 | dst`).
    public struct VendorMessage: Sendable {
        public var opcode: UInt32
        public var plugin: String, message: String
        public var messages = 0
        public var pairs: [UInt32: Int] = [:]
        public var company: UInt16 { MeshOpcode(rawValue: opcode).companyID ?? 0 }
        public var name: String { "Vendor " + Hex.fixed(UInt64(opcode), width: 6) }
        func count(_ by: (UInt32) -> UInt16) -> [(address: UInt16, messages: Int)] {
            var d: [UInt16: Int] = [:]
            for (k, c) in pairs { d[by(k), default: 0] += c }
            return d.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        public var bySource: [(address: UInt16, messages: Int)] { count { UInt16($0 >> 16) } }
        public var byDestination: [(address: UInt16, messages: Int)] { count { UInt16($0 & 0xFFFF) } }
    }

    public var meshPDUs = 0, beacons = 0, networkPDUs = 0, decrypted = 0, netMICBad = 0, notDecrypted = 0
    public var accessMessages = 0, controlMessages = 0, upperMICBad = 0, upperEncrypted = 0
    public var nodes: [UInt16: Node] = [:]
    public var networks: [String: NetworkID] = [:]
    /// Each IV index the network announced or used, in the order first seen.
    public var ivIndexes: [UInt32] = []
    public var bySource: [UInt16: Int] = [:], byDestination: [UInt16: Int] = [:]
    public var byOpcode: [String: Int] = [:]
    public var byTTL: [UInt8: Int] = [:]
    /// The same SEQ of a source heard again: relayed (lower TTL) or repeated.
    public var relayed = 0, repeated = 0
    /// A SEQ lower than the last one of its source (and not a copy heard before).
    public var replays: [(frame: Int, src: UInt16, seq: UInt32, previous: UInt32)] = []
    public var segmentedStarted = 0, segmentedCompleted = 0, segmentAcks = 0
    public var provisioning: [ProvisioningSession] = []
    /// Keyed `src << 16 | dst`; at most `maxFlows` pairs (the others go uncounted here).
    public var traffic: [UInt32: Flow] = [:]
    /// At most `maxListed` runs.
    public var beaconRuns: [BeaconRun] = []
    /// Keyed by opcode, plugin and message; at most `maxListed` (then at most `maxFlows` pairs each).
    public var vendorMessages: [String: VendorMessage] = [:]
    var lastRun: [String: Int] = [:]

    var lastSeq: [UInt16: UInt32] = [:]
    var recent: [UInt16: [(seq: UInt32, ttl: UInt8)]] = [:]
    var segmentsSeen: Set<UInt64> = []
    var pbadvSessions: [UInt32: Int] = [:]
    var gattSession: Int?

    public init() {}

    /// Replays and sessions kept at most this many (the counts go on).
    public static let maxListed = 1000
    public static let maxFlows = 4096, maxSteps = 64

    public mutating func add(_ l: MeshLayer, frame: Int, us: Int64? = nil) {
        meshPDUs += 1
        if let b = l.beacon { beacon(b, frame: frame, us: us) }
        provisioning(l, frame: frame)
        if l.networkPDU != nil {
            networkPDUs += 1
            if l.netMIC == "bad" { netMICBad += 1 } else if l.network == nil { notDecrypted += 1 }
        }
        // A proxy advertising its node identity (resolved with the keys): the node is there,
        // heard on "proxy-identity", though it sent no message.
        if let a = l.identity?.nodeAddress {
            var node = nodes[a] ?? Node(address: a, firstFrame: frame)
            node.bearers.insert("proxy-identity"); nodes[a] = node
        }
        guard let n = l.network else { return }
        decrypted += 1
        seen(n.ivIndex)
        var node = nodes[n.src] ?? Node(address: n.src, firstFrame: frame)
        node.messages += 1; node.bearers.insert(l.bearer.rawValue)
        bySource[n.src, default: 0] += 1; byDestination[n.dst, default: 0] += 1; byTTL[n.ttl, default: 0] += 1
        let pair = UInt32(n.src) << 16 | UInt32(n.dst)
        if traffic[pair] != nil || traffic.count < Self.maxFlows { traffic[pair, default: Flow()].messages += 1 }
        // Relays and replays: a SEQ heard before (within the last 64 of its source) is a copy.
        var r = recent[n.src] ?? []
        if let copy = r.first(where: { $0.seq == n.seq }) {
            if n.ttl < copy.ttl { relayed += 1 } else { repeated += 1 }
        } else {
            if let last = lastSeq[n.src], n.seq < last {
                if replays.count < Self.maxListed { replays.append((frame, n.src, n.seq, last)) }
            }
            lastSeq[n.src] = max(lastSeq[n.src] ?? 0, n.seq)
            r.append((n.seq, n.ttl)); if r.count > 64 { r.removeFirst() }
            recent[n.src] = r
        }
        if let lower = l.lower {
            switch lower {
            case .segmentedAccess(_, _, _, let z, _, _, _), .segmentedControl(_, let z, _, _, _):
                let key = UInt64(n.src) << 32 | UInt64(MeshLowerTransportPDU.seqAuth(seq: n.seq, seqZero: z))
                if segmentsSeen.count < 1 << 16, segmentsSeen.insert(key).inserted { segmentedStarted += 1 }
                if let h = l.segmentsHeld, h.held == h.total, l.upper?.encrypted != MeshDecoder.alreadyReassembled { segmentedCompleted += 1 }
            case .segmentAck: segmentAcks += 1
            default: break
            }
        }
        if let u = l.upper {
            if u.mic == "bad" { upperMICBad += 1 } else if u.encrypted != nil, u.mic == nil, u.segments > 0, l.segmentsHeld == nil || l.access != nil { upperEncrypted += 1 }
        }
        if let c = l.control {
            controlMessages += 1
            byOpcode["control " + c.opcode.name, default: 0] += 1
            traffic[pair]?.names["control " + c.opcode.name, default: 0] += 1
        }
        if let a = l.access {
            accessMessages += 1
            let name = a.opcode.name == "Vendor" ? "Vendor " + Hex.fixed(UInt64(a.opcode.rawValue), width: 6) : a.opcode.name
            byOpcode[name, default: 0] += 1
            traffic[pair]?.names[name, default: 0] += 1
            if a.opcode == .configCompositionDataStatus, a.parameters.first == 0, a.parameters.count >= 11 {
                let p = a.parameters
                func le(_ i: Int) -> Int { Int(p[i]) | Int(p[i + 1]) << 8 }
                node.cid = le(1); node.pid = le(3); node.vid = le(5); node.features = le(9)
                var i = 11, elements = 0
                while i + 4 <= p.count { elements += 1; i += 4 + 2 * Int(p[i + 2]) + 4 * Int(p[i + 3]) }
                node.elements = elements
            }
        }
        nodes[n.src] = node
    }

    /// A vendor access message of `l` (already `add`ed) that plugins decoded as `messages`.
    public mutating func vendor(_ l: MeshLayer, _ messages: [(plugin: String, message: String)]) {
        guard let n = l.network, let a = l.access, a.opcode.size == 3 else { return }
        let pair = UInt32(n.src) << 16 | UInt32(n.dst)
        for m in messages {
            let key = Hex.fixed(UInt64(a.opcode.rawValue), width: 6) + " " + m.plugin + " " + m.message
            guard vendorMessages[key] != nil || vendorMessages.count < Self.maxListed else { continue }
            var v = vendorMessages[key] ?? VendorMessage(opcode: a.opcode.rawValue, plugin: m.plugin, message: m.message)
            v.messages += 1
            if v.pairs[pair] != nil || v.pairs.count < Self.maxFlows { v.pairs[pair, default: 0] += 1 }
            vendorMessages[key] = v
        }
    }

    mutating func seen(_ iv: UInt32) { if !ivIndexes.contains(iv) { ivIndexes.append(iv) } }

    mutating func beacon(_ b: MeshBeacon, frame: Int, us: Int64?) {
        beacons += 1
        switch b {
        case .secureNetwork(let f, let id, let iv, _, let ok):
            let key = Hex.string(id)
            // Flags: bit 0 Key Refresh, bit 1 IV Update (Mesh Protocol v1.1 §3.10.3).
            if let i = lastRun[key], beaconRuns[i].ivIndex == iv, beaconRuns[i].keyRefresh == (f & 1 != 0), beaconRuns[i].ivUpdate == (f & 2 != 0),
                beaconRuns[i].authenticated == ok
            {
                beaconRuns[i].beacons += 1; beaconRuns[i].lastFrame = frame; beaconRuns[i].lastUs = us
            } else if beaconRuns.count < Self.maxListed {
                beaconRuns.append(
                    BeaconRun(
                        networkID: key, ivIndex: iv, keyRefresh: f & 1 != 0, ivUpdate: f & 2 != 0, authenticated: ok, firstFrame: frame, lastFrame: frame,
                        firstUs: us, lastUs: us))
                lastRun[key] = beaconRuns.count - 1
            }
            var e = networks[key] ?? NetworkID(networkID: key, ivIndex: iv)
            e.beacons += 1; e.ivIndex = iv; e.ivUpdate = e.ivUpdate || f & 2 != 0
            if let ok { e.authenticated = (e.authenticated ?? true) && ok }
            if networks.count < 256 || networks[key] != nil { networks[key] = e }
            if ok == true { seen(iv) }
        case .meshPrivate(_, _, _, _, let iv?): seen(iv)
        default: break
        }
    }

    mutating func provisioning(_ l: MeshLayer, frame: Int) {
        var index: Int?
        if let p = l.pbadv {
            index = pbadvSessions[p.linkID]
            if case .linkOpen(let uuid) = p.pdu, index == nil || provisioning[index!].outcome != "incomplete" {
                guard provisioning.count < Self.maxListed else { return }
                provisioning.append(ProvisioningSession(link: "pb-adv " + Hex.fixed(UInt64(p.linkID), width: 8), firstFrame: frame, deviceUUID: Hex.string(uuid)))
                index = provisioning.count - 1; pbadvSessions[p.linkID] = index
            }
            // Link messages once each: over PB-ADV both sides send each several times.
            if let i = index {
                let name: String? =
                    switch p.pdu {
                    case .linkOpen, .linkAck: p.pdu.name
                    case .linkClose(let reason): "Link Close (" + reason.name + ")"
                    default: nil
                    }
                if let name, !provisioning[i].steps.contains(where: { $0.name == name }) { step(i, frame, name) }
            }
            if let i = index, case .linkClose(let reason) = p.pdu, provisioning[i].outcome == "incomplete" || reason != .success {
                if provisioning[i].outcome == "incomplete" || provisioning[i].outcome == "complete" && reason != .success {
                    provisioning[i].outcome = reason == .success && provisioning[i].outcome == "complete" ? "complete" : "closed: " + reason.name
                }
            }
        } else if l.bearer == .gatt, l.provisioning != nil {
            if gattSession == nil || provisioning[gattSession!].outcome != "incomplete" {
                guard provisioning.count < Self.maxListed else { return }
                provisioning.append(ProvisioningSession(link: "pb-gatt", firstFrame: frame))
                gattSession = provisioning.count - 1
            }
            index = gattSession
        }
        guard let i = index, let p = l.provisioning, !l.retransmission else { return }
        provisioning[i].pdus += 1
        step(i, frame, p.type.name + (p.errorCode.map { ": " + $0.name } ?? ""))
        if p.type == .complete { provisioning[i].outcome = "complete" }
        if let e = p.errorCode { provisioning[i].outcome = "failed: " + e.name }
    }

    mutating func step(_ i: Int, _ frame: Int, _ name: String) {
        if provisioning[i].steps.count < Self.maxSteps { provisioning[i].steps.append(Step(frame: frame, name: name)) }
    }

    /// The `mesh` member of `stats` JSON.
    public func describe<S: FieldSink>(into sink: inout S, incompleteSegmented: Int) {
        sink.int("pdus", meshPDUs); sink.int("beacons", beacons); sink.int("network_pdus", networkPDUs)
        sink.int("decrypted", decrypted); sink.int("net_mic_bad", netMICBad); sink.int("not_decrypted", notDecrypted)
        sink.int("access_messages", accessMessages); sink.int("control_messages", controlMessages); sink.int("trans_mic_bad", upperMICBad)
        sink.array("iv_indexes") { s in for v in ivIndexes { s.int("", Int(v)) } }
        sink.array("networks") { s in
            for n in networks.values.sorted(by: { $0.networkID < $1.networkID }) {
                s.object("") { o in
                    o.string("network_id", n.networkID); o.int("beacons", n.beacons); o.int("iv_index", Int(n.ivIndex))
                    o.bool("iv_update", n.ivUpdate); if let a = n.authenticated { o.bool("authenticated", a) }
                }
            }
        }
        sink.array("nodes") { s in
            for n in nodes.values.sorted(by: { $0.address < $1.address }) {
                s.object("") { o in
                    o.int("address", Int(n.address)); o.int("messages", n.messages); o.int("first_frame", n.firstFrame)
                    o.array("bearers") { b in for x in n.bearers.sorted() { b.string("", x) } }
                    if let v = n.cid { o.int("cid", v) }; if let v = n.pid { o.int("pid", v) }; if let v = n.vid { o.int("vid", v) }
                    if let v = n.elements { o.int("elements", v) }; if let v = n.features { o.int("features", v) }
                }
            }
        }
        func table(_ key: FieldKey, _ d: [UInt16: Int]) {
            sink.array(key) { s in
                for (a, c) in d.sorted(by: { $0.key < $1.key }) {
                    s.object("") { o in
                        o.int("address", Int(a)); o.int("messages", c)
                    }
                }
            }
        }
        table("by_source", bySource); table("by_destination", byDestination)
        sink.array("by_opcode") { s in
            for (k, c) in byOpcode.sorted(by: { $0.key < $1.key }) {
                s.object("") { o in
                    o.string("name", k); o.int("messages", c)
                }
            }
        }
        sink.array("by_ttl") { s in
            for (t, c) in byTTL.sorted(by: { $0.key < $1.key }) {
                s.object("") { o in
                    o.int("ttl", Int(t)); o.int("messages", c)
                }
            }
        }
        sink.int("relayed", relayed); sink.int("repeated", repeated)
        sink.int("segmented_started", segmentedStarted); sink.int("segmented_completed", segmentedCompleted)
        sink.int("segmented_incomplete", incompleteSegmented); sink.int("segment_acks", segmentAcks)
        sink.array("replays") { s in
            for r in replays {
                s.object("") { o in
                    o.int("frame", r.frame); o.int("src", Int(r.src)); o.int("seq", Int(r.seq)); o.int("previous_seq", Int(r.previous))
                }
            }
        }
        sink.array("provisioning") { s in
            for p in provisioning {
                s.object("") { o in
                    o.string("link", p.link); o.int("first_frame", p.firstFrame); o.optionalString("device_uuid", p.deviceUUID)
                    o.int("pdus", p.pdus); o.string("outcome", p.outcome)
                }
            }
        }
    }

    /// The mesh section of `stats` text.
    public func text(incompleteSegmented: Int) -> [String] {
        guard meshPDUs > 0 else { return [] }
        var out = ["Mesh: \(meshPDUs) PDUs, \(beacons) beacons, \(networkPDUs) network PDUs (\(decrypted) decrypted, \(netMICBad) NetMIC bad, \(notDecrypted) without key)"]
        if !ivIndexes.isEmpty { out.append("  IV index: " + ivIndexes.map { String($0) }.joined(separator: " → ")) }
        for n in networks.values.sorted(by: { $0.networkID < $1.networkID }) {
            out.append(
                "  network \(n.networkID): \(n.beacons) beacons, IV index \(n.ivIndex)" + (n.ivUpdate ? " (IV update)" : "")
                    + (n.authenticated.map { $0 ? ", authenticated" : ", authentication FAILED" } ?? ""))
        }
        for n in nodes.values.sorted(by: { $0.address < $1.address }) {
            var s = "  node \(MeshAddress.text(n.address)): \(n.messages) messages sent (" + n.bearers.sorted().joined(separator: ", ") + ")"
            if let e = n.elements { s += ", \(e) elements" }
            if let c = n.cid { s += ", CID " + Hex.fixed(UInt64(c), width: 4) + " PID " + Hex.fixed(UInt64(n.pid ?? 0), width: 4) }
            out.append(s)
        }
        for (k, c) in byOpcode.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }).prefix(20) { out.append("  \(c) × \(k)") }
        if !byTTL.isEmpty {
            out.append(
                "  TTL: " + byTTL.sorted(by: { $0.key < $1.key }).map { "\($0.key): \($0.value)" }.joined(separator: ", ")
                    + "; relayed \(relayed), repeated \(repeated), replays \(replays.count)")
        }
        for v in vendorMessages.values.sorted(by: { ($0.opcode, $0.plugin, $0.message) < ($1.opcode, $1.plugin, $1.message) }) {
            func list(_ l: [(address: UInt16, messages: Int)]) -> String { l.map { MeshAddress.text($0.address) + " \($0.messages)" }.joined(separator: ", ") }
            out.append(
                "  \(v.messages) × \(v.plugin) \(v.message) (\(v.name), company " + Hex.fixed(UInt64(v.company), width: 4) + "): from "
                    + list(v.bySource) + "; to " + list(v.byDestination))
        }
        out.append("  segmented: \(segmentedStarted) started, \(segmentedCompleted) completed, \(incompleteSegmented) incomplete, \(segmentAcks) acknowledgments")
        for p in provisioning {
            out.append("  provisioning \(p.link) frame \(p.firstFrame)" + (p.deviceUUID.map { " device " + $0 } ?? "") + ": \(p.pdus) PDUs, " + p.outcome)
        }
        return out
    }
}
