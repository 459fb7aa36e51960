import BluesiftSecurity
import BluesiftWire
import BluesiftCapture

/// The stateful decoder: feed records in file order, get one DecodedFrame each.
/// State (connections, reassembly, dynamic channels, pending ATT requests) is bounded.
public final class ProtocolDecoder {
    /// Per-connection protocol state; dropped at disconnection.
    final class ConnState {
        var reassembly: [Reassembler?] = [nil, nil, nil] // by side: 0, 1, unknown
        var channels = L2CAPChannels()
        var att = ATTPairing()
        /// Module families' state (`ModuleContext.state`), by state type: created on a
        /// family's first PDU, dropped with the connection.
        var modules: [ObjectIdentifier: AnyObject] = [:]
        /// Profiles already recorded in the connection table (`ModuleContext.profile`).
        var profilesRecorded: Set<String> = []
        /// Order of creation: at the bound the oldest goes (a Dictionary's order is seeded
        /// per process, so its `first` would differ from run to run).
        var born = 0
    }
    struct StateKey: Hashable { var adapter: UInt16; var connection: UInt32 }

    var table: ConnectionTable
    var states: [StateKey: ConnState] = [:]
    var statesBorn = 0
    /// Sniffed LE connections: access address → small stable connection number.
    var sniffed: [UInt32: UInt16] = [:]
    var nextSniffedNumber: UInt16 = 1
    /// Reassemblers of closed connections, kept for reuse.
    var pool: [Reassembler] = []
    /// Peer of the last Create Connection per adapter: its Connection Complete makes us central.
    var pendingCreate: [UInt16: BDAddr] = [:]
    /// CIS and BIS handles (DecoderHCI.swift `noteISO`): isochronous, not connections.
    var isoHandles: Set<StateKey> = []
    var lastISO: StateKey?
    static let maxStates = 1024
    /// The connection of the last ACL packet, with the table's generation then: consecutive
    /// packets mostly share one, and its two hash lookups cost ~800 instructions a packet.
    /// `release` clears it (a connection that ends is released); a new connection changes
    /// the generation.
    var lastACL: (key: StateKey, state: ConnState, generation: Int)?
    /// Messages modules put together (SDP attribute lists joined across continuations,
    /// AVDTP/AVCTP messages from their packets), borrowed by the frame (one module layer each).
    let moduleBytes = OwnedBytes()
    /// The protocol modules and their carriers.
    public let registry: ProtocolRegistry
    /// Module families' state outside connections (advertising bearers), by state type.
    var moduleGlobals: [ObjectIdentifier: AnyObject] = [:]
    /// Extended advertising data in pieces, per advertiser (ExtendedAdvertisingPieces.swift).
    let extendedPieces = ExtendedAdvertisingPieces()
    /// Sniffed access addresses modules claimed (`ModuleContext.claim`): what they carry and
    /// the module taking their PDUs (DecoderModules.swift). Bounded.
    var claimedAccessAddresses: [UInt32: (kind: LLAccessAddressClaim, module: Int)] = [:]
    /// What the modules made of their command-line options (`ProtocolRegistry.configure`).
    public var moduleConfiguration = ModuleConfiguration()
    /// `redact` is reading: modules holding key material say where it lies and what replaces
    /// it (`ModuleLayer.secrets`); other commands leave that work undone.
    public var redacting = false

    /// Sniffed connections by number: roles, SN/NESN, encryption and pairing state.
    var links: [UInt16: SniffedLink] = [:]
    /// LTKs to try on sniffed encrypted links (`--ltk`, `--keys`).
    public var knownKeys: [KnownLTK] = []
    /// LTKs found in this capture's key distributions: tried on later sessions.
    var learnedKeys: [KnownLTK] = []
    /// Keys recovered from the capture (cracked legacy pairings, distributed LTKs), in order.
    public internal(set) var recoveredKeys: [RecoveredKey] = []
    /// Called now and then during a passkey search with the number of candidates tried.
    public var crackProgress: (@Sendable (Int) -> Void)?
    /// Over-the-air totals: packets the sniffer marked CRC-bad, sent encrypted, decrypted,
    /// and retransmissions.
    public internal(set) var crcBadPackets = 0
    /// Link-layer packets; those whose CRC bluesift checked because the sniffer did not (and
    /// of `crcBadPackets`, those it found bad); those the sniffer called valid whose CRC fails.
    public internal(set) var airPackets = 0
    public internal(set) var crcComputedPackets = 0
    public internal(set) var crcComputedBad = 0
    public internal(set) var crcValidatedWrongly = 0
    public internal(set) var firstCRCValidatedWrongly: Int?
    /// Data PDUs not decoded because their CRC could not be checked: on an access address
    /// no CONNECT_IND announced and no second packet confirmed (noise), or a known link's
    /// packet with its access address corrupted.
    public internal(set) var unverifiedPackets = 0
    public internal(set) var firstUnverifiedPacket: Int?
    public internal(set) var accessAddressBitErrors = 0
    public internal(set) var firstAccessAddressBitError: Int?
    /// Access addresses seen once, without CONNECT_IND, CRC unchecked: the CRCInit their
    /// packet implies, confirmed by the next packet (`decodeLL`). Bounded.
    /// `since`: order of arrival, for dropping the oldest at the bound.
    var unconfirmed: [UInt32: (crcInit: UInt32, since: Int)] = [:]
    var unconfirmedSeen = 0
    public internal(set) var encryptedPackets = 0
    public internal(set) var decryptedPackets = 0
    public internal(set) var retransmissions = 0
    /// Plaintext of the last decrypted PDU: frames borrow it until the next decode.
    var plainScratch: [UInt8] = []
    let plainStorage = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 8)
    var lastTimestamp: Timestamp?
    /// The last passkey search: candidates tried, seconds, threads.
    public internal(set) var lastCrack: (tried: Int, seconds: Double, threads: Int)?

    public init(connectionHistoryCapacity: Int = 4096, registry: ProtocolRegistry = .shared) {
        table = ConnectionTable(capacity: connectionHistoryCapacity)
        self.registry = registry
        plainScratch.reserveCapacity(256)
    }

    deinit { plainStorage.deallocate() }

    /// Every connection seen so far, in order of first appearance (the oldest are dropped
    /// past the history capacity, see `droppedConnections`).
    public var connections: [ConnectionInfo] {
        if !links.isEmpty { flushLinks(endOfCapture: lastTimestamp) }
        return table.history
    }

    /// The connection number (`DecodedFrame.connection`) of the sniffed link on an access
    /// address, once a CONNECT_IND or CRC-valid packets opened it.
    public func sniffedConnection(accessAddress: UInt32) -> UInt16? { sniffed[accessAddress] }

    /// Connections dropped from `connections` to keep it bounded.
    public var droppedConnections: Int { table.dropped }

    /// The latest connection on (adapter, handle): O(1). For sniffed connections `handle`
    /// is the connection number of `DecodedFrame.connection`.
    public func connection(adapter: UInt16, handle: UInt16) -> ConnectionInfo? {
        table.info(.init(adapter: adapter, handle: handle))
    }

    public func decode(_ record: CaptureRecord) -> DecodedFrame {
        var f = DecodedFrame(record: record)
        decode(record, into: &f)
        return f
    }

    /// Decodes `record` into `f`, reusing its storage: the loop form for whole captures.
    public func decode(_ record: CaptureRecord, into f: inout DecodedFrame) {
        f.reset(record)
        switch record.kind {
        case .command, .event, .acl, .sco, .iso: decodeHCI(record, &f)
        case .ll: lastTimestamp = record.timestamp; decodeLL(record, &f)
        case .note: f.set(note: String(decoding: record.bytes, as: UTF8.self))
        case .index, .control: f.set(note: Self.monitorNote(record.sourceType))
        default: break
        }
        if registry.hasRecordCarriers { recordCarriers(record, &f) }
    }

    /// Linux monitor opcodes (BlueZ monitor/bt.h) of index and control records.
    static func monitorNote(_ opcode: UInt16) -> String {
        switch opcode {
        case 0: "New Index"
        case 1: "Delete Index"
        case 8: "Open Index"
        case 9: "Close Index"
        case 10: "Index Info"
        case 11: "Vendor Diagnostic"
        case 14: "Control Open"
        case 15: "Control Close"
        case 16: "Control Command"
        case 17: "Control Event"
        default: "Monitor Record"
        }
    }

    static func side(_ d: Direction?) -> UInt8 {
        switch d {
        case .sent: 0
        case .received: 1
        case nil: 2
        }
    }

    func state(_ key: StateKey) -> ConnState {
        if let s = states[key] { return s }
        if states.count >= Self.maxStates, let victim = states.min(by: { $0.value.born < $1.value.born }) {
            release(victim.key)
        }
        let s = ConnState()
        s.born = statesBorn
        statesBorn &+= 1
        states[key] = s
        return s
    }

    /// Drops a connection's protocol state; its reassembly buffers go back to the pool.
    func release(_ key: StateKey) {
        lastACL = nil
        guard let s = states.removeValue(forKey: key) else { return }
        for case let r? in s.reassembly where pool.count < 8 {
            r.reset()
            pool.append(r)
        }
    }

    func reassembler(_ s: ConnState, side: UInt8) -> Reassembler {
        if let r = s.reassembly[Int(side)] { return r }
        let r = pool.popLast() ?? Reassembler()
        s.reassembly[Int(side)] = r
        return r
    }
}

extension ProtocolDecoder {
    /// What `decode` would find in `record`: its layers and whether it is damaged. For counting
    /// (`bluesift info`). An LE advertising report event, most of a typical capture, is proved
    /// whole by its lengths alone and changes no decoder state, so it is answered without
    /// building the frame; every other record is decoded in full into `scratch`.
    @inlinable @inline(__always)
    public func layers(of record: CaptureRecord, scratch f: inout DecodedFrame)
        -> (layers: DecodedFrame.Layers, damaged: Bool)
    {
        if record.kind == .event, isPlainAdvertisingEvent(record.bytes) {
            return (.advertisingEvent, false)
        }
        decode(record, into: &f)
        return (f.layers, !f.errors.isEmpty)
    }

    /// An LE Meta advertising report event (§7.7.65.2/.11/.13) whose parameter length is the
    /// record's length and whose reports are whole: `decode` finds the hci and adv layers and
    /// no damage. False sends the record the long way (which may still find it whole).
    static func isWholeAdvertisingEvent(_ b: UnsafeRawBufferPointer) -> Bool {
        guard b.count >= 4, b[0] == 0x3E, Int(b[1]) == b.count - 2 else { return false }
        let sub = b[2]
        guard HCIPacket.isAdvertisingReport(subevent: sub) else { return false }
        return AdvertisingLayer.isWellFormed(sub, UnsafeRawBufferPointer(rebasing: b[3...]))
    }
}
