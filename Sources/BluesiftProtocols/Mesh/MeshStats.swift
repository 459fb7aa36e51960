import BluesiftWire

/// What Mesh adds to `stats` and the report (docs/stats.md, "mesh"): `MeshNetworkStats`
/// over the capture's `mesh` layers, written only when the capture has any (captures
/// without mesh keep their stats byte for byte).
public final class MeshStats: StatsCollector {
    var network = MeshNetworkStats()
    /// The connection of the PB-GATT session being counted: another connection is another session.
    var provisioningConnection: UInt16?
    public init() {}

    public static var tables: [(name: String, header: String)] {
        [
            ("mesh_nodes", "file,address,messages,first_frame,bearers,elements,cid,pid,vid,features"),
            ("mesh_provisioning", "file,link,first_frame,device_uuid,pdus,outcome"),
            ("mesh_vendor_messages", "file,opcode,company,plugin,message,src,dst,messages")
        ]
    }

    public func add(_ f: borrowing DecodedFrame, _ stats: any StatsContext) {
        guard let p = f.moduleLayer(MeshPDU.self) else { return }
        let replays = network.replays.count
        if p.mesh.bearer == .gatt, p.mesh.provisioning != nil, f.connection != provisioningConnection {
            network.gattSession = nil
            provisioningConnection = f.connection
        }
        network.add(p.mesh, frame: f.record.frame, us: f.record.timestamp.microseconds)
        if let a = p.mesh.access, a.opcode.size == 3, case let m = stats.pluginMessages, !m.isEmpty { network.vendor(p.mesh, m) }
        if network.replays.count > replays, let r = network.replays.last {
            stats.problem(
                "mesh_seq_backwards", f.record, connection: nil,
                "mesh source \(MeshAddress.text(r.src)) sent SEQ \(r.seq) after \(r.previous): a replay, or a node that lost its sequence number")
        }
    }

    public func finish(_ stats: any StatsContext) -> ModuleStats {
        var m = ModuleStats()
        let n = network
        guard n.meshPDUs > 0 else {
            m.hasData = false
            return m
        }
        let incomplete = max(0, n.segmentedStarted - n.segmentedCompleted)
        let nodes = n.nodes.values.sorted { $0.address < $1.address }.map {
            Node(
                address: Int($0.address), messages: $0.messages, firstFrame: $0.firstFrame, bearers: $0.bearers.sorted(),
                elements: $0.elements, cid: $0.cid, pid: $0.pid, vid: $0.vid, features: $0.features)
        }
        let vendor = n.vendorMessages.values.sorted { ($0.opcode, $0.plugin, $0.message) < ($1.opcode, $1.plugin, $1.message) }
        let summary = Summary(
            pdus: n.meshPDUs, beacons: n.beacons, networkPdus: n.networkPDUs, decrypted: n.decrypted, netMicBad: n.netMICBad,
            notDecrypted: n.notDecrypted, accessMessages: n.accessMessages, controlMessages: n.controlMessages, transMicBad: n.upperMICBad,
            ivIndexes: n.ivIndexes.map(Int.init),
            networks: n.networks.values.sorted { $0.networkID < $1.networkID }.map {
                Network(networkId: $0.networkID, beacons: $0.beacons, ivIndex: Int($0.ivIndex), ivUpdate: $0.ivUpdate, authenticated: $0.authenticated)
            },
            nodes: nodes,
            bySource: n.bySource.sorted { $0.key < $1.key }.map { Count(address: Int($0.key), messages: $0.value) },
            byDestination: n.byDestination.sorted { $0.key < $1.key }.map { Count(address: Int($0.key), messages: $0.value) },
            byOpcode: n.byOpcode.sorted { $0.key < $1.key }.map { OpcodeCount(name: $0.key, messages: $0.value) },
            byTtl: n.byTTL.sorted { $0.key < $1.key }.map { TTLCount(ttl: Int($0.key), messages: $0.value) },
            relayed: n.relayed, repeated: n.repeated, segmentedStarted: n.segmentedStarted, segmentedCompleted: n.segmentedCompleted,
            segmentedIncomplete: incomplete, segmentAcks: n.segmentAcks,
            replays: n.replays.map { Replay(frame: $0.frame, src: Int($0.src), seq: Int($0.seq), previousSeq: Int($0.previous)) },
            provisioning: n.provisioning.map {
                Provisioning(
                    link: $0.link, firstFrame: $0.firstFrame, deviceUuid: $0.deviceUUID, pdus: $0.pdus, outcome: $0.outcome,
                    steps: $0.steps.map { Step(frame: $0.frame, name: $0.name) })
            },
            traffic: n.traffic.sorted { $0.key < $1.key }.map {
                Flow(
                    src: Int($0.key >> 16), dst: Int($0.key & 0xFFFF), messages: $0.value.messages,
                    byOpcode: $0.value.names.sorted { $0.key < $1.key }.map { OpcodeCount(name: $0.key, messages: $0.value) })
            },
            secureBeacons: n.beaconRuns.map {
                BeaconRun(
                    networkId: $0.networkID, ivIndex: Int($0.ivIndex), keyRefresh: $0.keyRefresh, ivUpdate: $0.ivUpdate, authenticated: $0.authenticated,
                    firstFrame: $0.firstFrame, lastFrame: $0.lastFrame, firstUs: $0.firstUs, lastUs: $0.lastUs, beacons: $0.beacons)
            },
            vendorMessages: vendor.isEmpty
                ? nil
                : vendor.map {
                    VendorMessage(
                        name: $0.name, opcode: Int($0.opcode), company: Int($0.company), plugin: $0.plugin, message: $0.message, messages: $0.messages,
                        bySource: $0.bySource.map { Count(address: Int($0.address), messages: $0.messages) },
                        byDestination: $0.byDestination.map { Count(address: Int($0.address), messages: $0.messages) })
                })
        m.members = [("mesh", summary)]
        m.counts = [("meshPdus", n.meshPDUs), ("meshNetworkPdus", n.networkPDUs), ("meshDecrypted", n.decrypted)]
        m.text = [""] + n.text(incompleteSegmented: incomplete)
        let file = stats.file
        m.tables["mesh_nodes"] = nodes.map {
            [
                file, MeshAddress.text(UInt16($0.address)), String($0.messages), String($0.firstFrame), $0.bearers.joined(separator: " "),
                $0.elements.map { String($0) }, $0.cid.map { Hex.fixed(UInt64($0), width: 4) }, $0.pid.map { Hex.fixed(UInt64($0), width: 4) },
                $0.vid.map { Hex.fixed(UInt64($0), width: 4) }, $0.features.map { Hex.fixed(UInt64($0), width: 4) }
            ]
        }
        m.tables["mesh_provisioning"] = summary.provisioning.map { [file, $0.link, String($0.firstFrame), $0.deviceUuid, String($0.pdus), $0.outcome] }
        m.tables["mesh_vendor_messages"] = vendor.flatMap { v in
            v.pairs.sorted { $0.key < $1.key }.map {
                [
                    file, Hex.fixed(UInt64(v.opcode), width: 6), Hex.fixed(UInt64(v.company), width: 4), v.plugin, v.message,
                    MeshAddress.text(UInt16($0.key >> 16)), MeshAddress.text(UInt16($0.key & 0xFFFF)), String($0.value)
                ]
            }
        }
        return m
    }

    // The stats JSON's `mesh` member (docs/stats.md); the encoder writes the keys snake_case.
    struct Summary: Encodable, Sendable {
        var pdus, beacons, networkPdus, decrypted, netMicBad, notDecrypted, accessMessages, controlMessages, transMicBad: Int
        var ivIndexes: [Int]
        var networks: [Network]
        var nodes: [Node]
        var bySource, byDestination: [Count]
        var byOpcode: [OpcodeCount]
        var byTtl: [TTLCount]
        var relayed, repeated, segmentedStarted, segmentedCompleted, segmentedIncomplete, segmentAcks: Int
        var replays: [Replay]
        var provisioning: [Provisioning]
        var traffic: [Flow]
        var secureBeacons: [BeaconRun]
        /// Absent when no plugin decoded a vendor message.
        var vendorMessages: [VendorMessage]?
    }
    struct VendorMessage: Encodable, Sendable {
        var name: String, opcode: Int, company: Int, plugin: String, message: String, messages: Int
        var bySource, byDestination: [Count]
    }
    struct Network: Encodable, Sendable { var networkId: String, beacons: Int, ivIndex: Int, ivUpdate: Bool, authenticated: Bool? }
    struct Node: Encodable, Sendable {
        var address, messages, firstFrame: Int
        var bearers: [String]
        var elements, cid, pid, vid, features: Int?
    }
    struct Count: Encodable, Sendable { var address, messages: Int }
    struct OpcodeCount: Encodable, Sendable { var name: String, messages: Int }
    struct TTLCount: Encodable, Sendable { var ttl, messages: Int }
    struct Replay: Encodable, Sendable { var frame, src, seq, previousSeq: Int }
    struct Provisioning: Encodable, Sendable {
        var link: String, firstFrame: Int, deviceUuid: String?, pdus: Int, outcome: String
        var steps: [Step]
    }
    struct Step: Encodable, Sendable { var frame: Int, name: String }
    struct Flow: Encodable, Sendable {
        var src, dst, messages: Int
        var byOpcode: [OpcodeCount]
    }
    struct BeaconRun: Encodable, Sendable {
        var networkId: String, ivIndex: Int, keyRefresh: Bool, ivUpdate: Bool, authenticated: Bool?
        var firstFrame, lastFrame: Int
        var firstUs, lastUs: Int64?
        var beacons: Int
    }
}
