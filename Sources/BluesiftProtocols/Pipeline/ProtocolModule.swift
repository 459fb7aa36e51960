import BluesiftWire
import BluesiftCapture

// A protocol family moves into bluesift through one door (docs/DESIGN.md, "Adding a
// protocol"): its types conform to `ProtocolModule` in its own folder and one line in
// Protocols.swift lists them. The registry (`ProtocolRegistry`) gives its layers their bits
// in `DecodedFrame.Layers`, routes what carries it to its `decode`, and hands the frames
// that carry it to its stats collector; renderers, the filter, `info`, `stats` and the
// report iterate the registry. The hot layers (hci, ll, adv, l2cap, att, smp) are built in
// (`FrameLayer`'s constants) and keep their in-place storage.

/// One layer a module declares: its key (JSON Lines member, CSV `layer`, `--protocol`
/// name), the group it also answers to, how specific it is (the most specific layer names a
/// frame: 6 for a protocol on L2CAP, 7 for one above that), whether `info` counts it (under
/// the group, else the key) and whether `-v` draws it. Declaration order (the list's order,
/// then the module's) is the order of JSON members and of the `-v` tree.
public struct LayerSpec: Sendable {
    public var key: StaticString
    public var group: String?
    public var specificity: Int
    public var counted: Bool
    public var inTree: Bool
    public init(_ key: StaticString, group: String? = nil, specificity: Int, counted: Bool = true, inTree: Bool = true) {
        self.key = key; self.group = group; self.specificity = specificity; self.counted = counted; self.inTree = inTree
    }
}

/// What carries a module's PDUs to its `decode`.
public enum Carrier: Sendable, Hashable {
    /// An L2CAP channel opened with this PSM (from the signalling), basic, ERTM/streaming
    /// (whole I-frames) or credit-based (whole SDUs) (Core 5.4 Vol 3 Part A).
    case psm(UInt16)
    /// A fixed L2CAP channel (Vol 3 Part A §2.1), other than signalling, ATT and SMP.
    case fixedCID(UInt16)
    /// HCI packets of a record kind the decoder does not take apart: `.iso` (H4 0x05).
    case hciPacket(PacketKind)
    /// An HCI event (Vol 4 Part E §7.7), or an LE Meta event's subevent (event 0x3E).
    case hciEvent(UInt8)
    case leSubevent(UInt8)
    /// An HCI command by opcode (OGF << 10 | OCF).
    case hciCommand(UInt16)
    /// An AD structure of this type in advertising data (CSS Part A §1), or service data
    /// (type 0x16) for this 16-bit UUID: the module gets the structure's value (after the UUID).
    case adType(UInt8)
    case serviceData(UInt16)
    /// ATT values of a GATT characteristic, or of any characteristic of a service: reached
    /// where GATT names are known (`Analyzer`), the value after the ATT header.
    case gattCharacteristic(BluetoothUUID)
    case gattService(BluetoothUUID)
    /// A sniffed LL Control PDU by opcode (Core 6.0 Vol 6 Part B §2.4.2), the CtrData after
    /// the opcode, on its connection (decrypted when the link's key is known). The control
    /// PDUs the link tracker reads stay built in (LinkLayer/LLControlPDUs.swift).
    case llControl(UInt8)
    /// Sniffed PDUs on an access address the module claimed (`ModuleContext.claim`): the PDU
    /// (header, payload; no access address, no CRC). `.llIsochronous`: CIS and BIS PDUs
    /// (§2.6); `.llPeriodicAdvertising`: a periodic advertising train's AUX_SYNC_IND and
    /// AUX_CHAIN_IND (§2.3.4).
    case llIsochronous
    case llPeriodicAdvertising
}

/// What a sniffed access address a module claims carries (`ModuleContext.claim`).
public enum LLAccessAddressClaim: Sendable, Hashable {
    case isochronous
    case periodicAdvertising
}

/// A decoded layer value of a module, held in `DecodedFrame.module`.
public protocol ModuleLayer {
    /// The frame layers it stands for (its own; RFCOMM adds `hfp` when it carries AT lines).
    var layers: DecodedFrame.Layers { get }
    /// Damage found decoding it (appended to the frame's errors, unless the capture cut it).
    var error: DecodeError? { get }
    /// CSV `name` and the text line of `layer` (one of `layers`).
    func name(_ layer: FrameLayer) -> String
    func summary(_ layer: FrameLayer) -> String
    /// Writes the layer's whole member (`"sdp": {…}`) under `layer.key`.
    func describe<S: FieldSink>(_ layer: FrameLayer, into sink: inout S)
    /// Whether the report's sequence view lists it (not audio media packets, thousands).
    var inSequence: Bool { get }
    /// Key material in the bytes its module's `decode` was given (ranges in those bytes),
    /// which `redact` zeroes; reached on ATT values and HCI commands and events.
    var secrets: [ModuleSecret] { get }
}

extension ModuleLayer {
    public var inSequence: Bool { true }
    public var secrets: [ModuleSecret] { [] }
}

/// Key material a module found in its PDU: where (in the PDU's bytes) and what it is (the
/// label `redact` counts it under).
public struct ModuleSecret: Sendable, Hashable {
    public var range: Range<Int>
    public var label: String
    /// Set when the key material lies in a record of its own (a segment of a message heard
    /// earlier): `range` is then in that record's bytes, not in the PDU.
    public var frame: Int?
    /// Written over `range` instead of zeros (same count): key material under a MIC, sealed
    /// again with the key zeroed so the record still decodes. An empty range only counts.
    public var replacement: [UInt8]?
    public init(_ range: Range<Int>, _ label: String) { self.range = range; self.label = label }
    public init(frame: Int, range: Range<Int>, replacement: [UInt8]?, _ label: String) {
        self.range = range; self.label = label; self.frame = frame; self.replacement = replacement
    }
}

/// A protocol family's entry in the registry: what it declares in its own files.
public protocol ProtocolModule {
    /// Its layers; `FrameLayer.registered(key)` gives each its bit.
    static var layers: [LayerSpec] { get }
    /// What carries it.
    static var carriers: [Carrier] { get }
    /// One PDU (bytes the frame may borrow until the next decode) → its layer value, nil for
    /// none. State lives in `context.state(…)`; damage goes in `frame.errors` or the value's
    /// `error`.
    static func decode(_ pdu: UnsafeRawBufferPointer, _ context: ModuleContext, _ frame: inout DecodedFrame) -> (any ModuleLayer)?
    /// What it adds to `stats` (and through it to the report); modules of one family may
    /// share one collector type (the registry makes one per session).
    static var collector: (any StatsCollector.Type)? { get }
    /// Whether its layers may carry `secrets` (then `redact` decodes the capture to find them).
    static var holdsSecrets: Bool { get }
    /// The AD structures it registered of one advertising report (the first report holding
    /// one), in report order: one call per report, so a module sees them together (an
    /// Auracast source's announcement, name and PBP features). It puts each structure's
    /// damage in `frame.errors` itself. By default the first goes to `decode` alone.
    static func decode(advertising: ModuleADStructures, _ context: ModuleContext, _ frame: inout DecodedFrame) -> (any ModuleLayer)?
    /// Its command-line options (`--mesh-keys FILE`, `--mesh-src ADDR`), on every command
    /// that reads captures; names unique across the registry.
    static var options: [ModuleOption] { get }
    /// Its decode options' values (those of `.decode` options it declares, empty when none
    /// was given) → its configuration, read back by `ModuleContext.configuration`. Called
    /// once per command, before any capture is read: a bad value is said then.
    static func configure(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any Sendable)?
    /// Its filter options' values → a record condition, nil when none was given.
    static func filter(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any ModuleFrameFilter)?
}

extension ProtocolModule {
    public static var collector: (any StatsCollector.Type)? { nil }
    public static var holdsSecrets: Bool { false }
    public static func decode(advertising s: ModuleADStructures, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        guard let first = s.first, let v = decode(first.value, x, &f) else { return nil }
        if let e = v.error { f.errors.append(e) }
        return v
    }
    public static var options: [ModuleOption] { [] }
    public static func configure(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any Sendable)? { nil }
    public static func filter(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any ModuleFrameFilter)? { nil }
}

/// The AD structures of one advertising report that reach one module (by AD type, or by
/// service data UUID: the value then after the UUID), in report order, read in place from
/// the report's data (valid until the next decode); at most 16.
public struct ModuleADStructures: Sequence {
    public let data: UnsafeRawBufferPointer
    let module: Int
    let registry: ProtocolRegistry
    /// Extended advertising data put back together from this many reports (`data` is the
    /// whole; ExtendedAdvertisingPieces.swift), with the advertiser of the report completing it.
    public var pieces = 1
    public var advertiser: (address: BDAddr, sid: UInt8)?

    init(data: UnsafeRawBufferPointer, module: Int, registry: ProtocolRegistry) {
        self.data = data; self.module = module; self.registry = registry
    }

    public struct Iterator: IteratorProtocol {
        var structures: ADStructures
        let module: Int
        let registry: ProtocolRegistry
        var count = 0
        public mutating func next() -> (carrier: Carrier, value: UnsafeRawBufferPointer)? {
            while count < 16, let s = structures.next() {
                guard let hit = registry.advertisingCarrier(s), hit.module == module else { continue }
                count += 1
                return (hit.carrier, hit.value)
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(structures: ADStructures(data), module: module, registry: registry) }

    /// The first (the pipeline calls a module for a report holding one).
    public var first: (carrier: Carrier, value: UnsafeRawBufferPointer)? {
        var i = makeIterator()
        return i.next()
    }
}

/// A command-line option a module declares. The CLI cannot declare options at run time: it
/// takes `--NAME VALUE` (or `--NAME=VALUE`) for every declared name into one option group
/// and hands the values to `ProtocolRegistry.configure` (decode options, with the decode
/// settings) or `ProtocolRegistry.filters` (filter options, with the record filter).
public struct ModuleOption: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Changes how records decode (a key file): reaches `configure`.
        case decode
        /// Selects records (`--mesh-src`): reaches `filter`; repeatable, any value matches.
        case filter
    }
    /// Without dashes: "mesh-keys".
    public var name: String
    /// The value's placeholder in `--help`: "FILE", "ADDR".
    public var valueName: String
    public var help: String
    public var kind: Kind
    public init(_ name: String, valueName: String, kind: Kind, help: String) {
        self.name = name; self.valueName = valueName; self.kind = kind; self.help = help
    }
}

/// The values given to a module's options, by name, in command-line order.
public struct ModuleOptionValues: Sendable {
    public var values: [String: [String]]
    public init(_ values: [String: [String]] = [:]) { self.values = values }
    public var isEmpty: Bool { values.isEmpty }
    public subscript(_ name: String) -> [String] { values[name] ?? [] }
    /// The last value of an option (a later one overrides, as for single-valued options).
    public func last(_ name: String) -> String? { values[name]?.last }
}

/// A bad option value, one line: `bluesift: --OPTION VALUE: message`. `unusableInput`: a
/// file that cannot be read or is not what it should be (exit 2); otherwise a usage error
/// (exit 64). Never holds a key.
public struct ModuleOptionError: Error, Sendable, Hashable {
    public var option: String
    public var value: String
    public var message: String
    public var unusableInput: Bool
    public init(option: String, value: String, _ message: String, unusableInput: Bool = false) {
        self.option = option; self.value = value; self.message = message; self.unusableInput = unusableInput
    }
}

/// A record condition built from a module's filter options, tested on the decoded frame
/// (only when given: a filter is not on the hot path of unfiltered commands).
public protocol ModuleFrameFilter: Sendable {
    func matches(_ frame: borrowing DecodedFrame) -> Bool
}

/// The modules' configurations (`ProtocolModule.configure`), by module index in the
/// registry that made them; handed to the decoder (`ProtocolDecoder.moduleConfiguration`).
public struct ModuleConfiguration: Sendable {
    var byModule: [Int: any Sendable] = [:]
    public init() {}
    public var isEmpty: Bool { byModule.isEmpty }
}

/// What a module's `decode` gets besides its bytes.
public struct ModuleContext {
    let decoder: ProtocolDecoder
    let connectionState: ProtocolDecoder.ConnState?
    /// The module's index in the registry (its configuration's key).
    let module: Int
    public let record: CaptureRecord
    /// The carrier that matched.
    public let carrier: Carrier
    /// 0: sent by the capturing host, 1: received, 2: unknown.
    public let side: UInt8
    /// The L2CAP channel (its `bearer`, equal in both directions), 0 when not on L2CAP.
    public let bearer: UInt16
    /// The capture cut the L2CAP PDU short: a truncated PDU is not damage.
    public let truncated: Bool

    /// The module family's state of S: per connection (created on its first PDU, dropped
    /// with the connection) when the carrier is on a connection, else the decoder's (one per
    /// capture, e.g. advertising bearers). Keep it bounded.
    public func state<S: AnyObject>(_ type: S.Type, _ make: () -> S) -> S {
        let id = ObjectIdentifier(type)
        if let c = connectionState {
            if let s = c.modules[id] as? S { return s }
            let s = make(); c.modules[id] = s; return s
        }
        if let s = decoder.moduleGlobals[id] as? S { return s }
        let s = make(); decoder.moduleGlobals[id] = s; return s
    }

    /// The family's state of S for the whole capture, whatever the carrier (a network heard
    /// over advertising and over GATT proxies alike). Keep it bounded.
    public func captureState<S: AnyObject>(_ type: S.Type, _ make: () -> S) -> S {
        let id = ObjectIdentifier(type)
        if let s = decoder.moduleGlobals[id] as? S { return s }
        let s = make(); decoder.moduleGlobals[id] = s; return s
    }

    /// Sends the sniffed PDUs on access address `aa` to this module (carrier
    /// `.llIsochronous` or `.llPeriodicAdvertising`) from the next record on, instead of
    /// treating them as a connection's. Only an access address announced on the air (LL_CIS_IND,
    /// BIGInfo, SyncInfo) should be claimed; bounded (the oldest claim goes first).
    public func claim(accessAddress aa: UInt32, as kind: LLAccessAddressClaim) {
        guard aa != LLPacket.advertisingAccessAddress else { return }
        decoder.claimAccessAddress(aa, kind, module: module)
    }

    /// The module's configuration from its options (`ProtocolModule.configure`), nil when
    /// it made none.
    public func configuration<C>(_ type: C.Type) -> C? { decoder.moduleConfiguration.byModule[module] as? C }

    /// `redact` is reading (`ProtocolDecoder.redacting`): the only reader of `ModuleLayer.secrets`.
    public var redacting: Bool { decoder.redacting }

    /// Bytes the decoder keeps until the next decode call (a reassembled message the frame borrows).
    public func hold(_ bytes: [UInt8]) -> UnsafeRawBufferPointer { decoder.moduleBytes.hold(bytes) }

    /// Records a profile on the connection's entry for `info` ("A2DP (source) SBC …"), once per
    /// name and role.
    public func profile(_ name: String, role: String?) { decoder.profile(record, name, role: role, connectionState) }
    public func profileDetail(_ name: String, detail: String) { decoder.profileDetail(record, name, detail: detail) }
}

/// Collects what a module family adds to `stats`: its JSON members and counts (docs/stats.md),
/// its text section and CSV tables, problems; the report shows its data with `reportView`.
public protocol StatsCollector: AnyObject {
    init()
    /// Frames carrying one of the family's layers come to `add`, and records of these kinds.
    static var recordKinds: [PacketKind] { get }
    func add(_ frame: borrowing DecodedFrame, _ stats: any StatsContext)
    func finish(_ stats: any StatsContext) -> ModuleStats
    /// The report's view of its data (JavaScript run in the page, reading `S`, the stats
    /// JSON), nil for none.
    static var reportView: String? { get }
    /// Its CSV tables: name (`--table NAME`) and header, known before any capture is read.
    static var tables: [(name: String, header: String)] { get }
}

extension StatsCollector {
    public static var recordKinds: [PacketKind] { [] }
    public static var reportView: String? { nil }
    public static var tables: [(name: String, header: String)] { [] }
}

/// What a collector may ask of the session's statistics.
public protocol StatsContext: AnyObject {
    /// The stats connection (index into `connections`) of the frame, created on first sight;
    /// it becomes the report's connection of the frame.
    func connectionIndex(_ frame: borrowing DecodedFrame) -> Int?
    /// A problem (docs/stats.md `problems[]`).
    func problem(_ kind: String, _ record: CaptureRecord, connection: Int?, _ message: String)
    var file: String { get }
    /// Handle and peer of a stats connection, for CSV rows.
    func connectionHandle(_ index: Int) -> Int
    func connectionPeer(_ index: Int) -> String?
    /// The plugin messages decoded from the frame being added (plugin id, message name): a
    /// module's payload a plugin rule took (Mesh vendor models, `mesh:`); empty for none.
    var pluginMessages: [(plugin: String, message: String)] { get }
}

extension StatsContext {
    public var pluginMessages: [(plugin: String, message: String)] { [] }
}

/// A collector's output, kept in `StatsReport.modules`.
public struct ModuleStats: Sendable {
    /// Members of the stats JSON object (camelCase: the encoder writes snake_case).
    public var members: [(key: String, value: any Encodable & Sendable)] = []
    /// Members of its `counts` object.
    public var counts: [(key: String, value: Int)] = []
    /// Lines of its section in `stats`' text (empty: none), after the characteristics.
    public var text: [String] = []
    /// Rows of its CSV tables by name (`StatsCollector.tables`), fields unquoted.
    public var tables: [String: [[String?]]] = [:]
    /// Whether the capture gave the family anything its report view shows: the report embeds
    /// the view's script only then.
    public var hasData = true
    public init() {}
}
