import BluesiftWire
import BluesiftCapture

/// The protocol modules of `Protocols.all`, with what the pipeline reads of them: the bit of
/// each module layer, and lookup tables from each carrier to its module. Built once.
public struct ProtocolRegistry: @unchecked Sendable { // metatypes of immutable types
    public static let shared = ProtocolRegistry(Protocols.all)

    /// Module layers take bits from here up; `FrameLayer.note` keeps the last bit.
    public static let firstModuleBit: UInt8 = 6
    static let lastModuleBit: UInt8 = 62

    public let modules: [any ProtocolModule.Type]
    /// Module layers in bit order (bit = firstModuleBit + index): spec and module index.
    public let layers: [(spec: LayerSpec, module: Int)]
    /// Their keys and specificities alone, read per record by the renderers.
    let keys: [StaticString]
    let specificities: [Int]
    /// All module layers.
    public let moduleLayers: DecodedFrame.Layers
    /// Module index by carrier; the PSM table is a short array (a few entries, scanned).
    let psms: [(psm: UInt16, module: Int)]
    let fixedCIDs: [(cid: UInt16, module: Int)]
    let byCarrier: [Carrier: Int]
    public let hasEventCarriers: Bool
    public let hasCommandCarriers: Bool
    public let hasPacketCarriers: Bool
    public let hasAdvertisingCarriers: Bool
    public let hasGATTCarriers: Bool
    /// Any carrier read off a whole record (events, commands, packets, advertising data).
    public let hasRecordCarriers: Bool
    /// A module whose layers may carry key material (`ModuleLayer.secrets`).
    public let holdsSecrets: Bool
    /// One collector type per family (modules sharing one are listed once), with the layers
    /// of the modules that declare it.
    public let collectors: [(type: any StatsCollector.Type, layers: DecodedFrame.Layers)]

    public init(_ modules: [any ProtocolModule.Type]) {
        self.modules = modules
        var layers: [(spec: LayerSpec, module: Int)] = []
        var psms: [(psm: UInt16, module: Int)] = [], cids: [(cid: UInt16, module: Int)] = []
        var by: [Carrier: Int] = [:]
        var collectors: [(type: any StatsCollector.Type, layers: DecodedFrame.Layers)] = []
        var mask = DecodedFrame.Layers()
        for (i, m) in modules.enumerated() {
            var own = DecodedFrame.Layers()
            for spec in m.layers {
                let bit = Self.firstModuleBit + UInt8(layers.count)
                precondition(bit <= Self.lastModuleBit, "more module layers than DecodedFrame.Layers has bits")
                precondition(
                    !FrameLayer.builtIn.contains { $0.key.description == spec.key.description }
                        && !layers.contains { $0.spec.key.description == spec.key.description },
                    "layer key \(spec.key) declared twice")
                layers.append((spec, i))
                own.insert(FrameLayer(rawValue: bit))
            }
            mask.formUnion(own)
            for c in m.carriers {
                precondition(by[c] == nil, "\(c) carries two modules")
                by[c] = i
                switch c {
                case .psm(let p): psms.append((p, i))
                case .fixedCID(let cid): cids.append((cid, i))
                default: break
                }
            }
            if let t = m.collector {
                if let j = collectors.firstIndex(where: { ObjectIdentifier($0.type) == ObjectIdentifier(t) }) {
                    collectors[j].layers.formUnion(own)
                } else {
                    collectors.append((t, own))
                }
            }
        }
        self.layers = layers
        keys = layers.map { $0.spec.key }
        specificities = layers.map { $0.spec.specificity }
        moduleLayers = mask
        self.psms = psms; fixedCIDs = cids; byCarrier = by
        self.collectors = collectors
        hasEventCarriers = by.keys.contains { if case .hciEvent = $0 { true } else if case .leSubevent = $0 { true } else { false } }
        hasCommandCarriers = by.keys.contains { if case .hciCommand = $0 { true } else { false } }
        hasPacketCarriers = by.keys.contains { if case .hciPacket = $0 { true } else { false } }
        hasAdvertisingCarriers = by.keys.contains { if case .adType = $0 { true } else if case .serviceData = $0 { true } else { false } }
        hasRecordCarriers = hasEventCarriers || hasCommandCarriers || hasPacketCarriers || hasAdvertisingCarriers
        hasGATTCarriers = by.keys.contains { if case .gattCharacteristic = $0 { true } else if case .gattService = $0 { true } else { false } }
        holdsSecrets = modules.contains { $0.holdsSecrets }
    }

    /// The module a carrier reaches, if any.
    public func module(for c: Carrier) -> (any ProtocolModule.Type)? { byCarrier[c].map { modules[$0] } }

    @inline(__always)
    func module(psm: UInt16) -> Int? {
        for e in psms where e.psm == psm { return e.module }
        return nil
    }

    @inline(__always)
    func module(fixedCID: UInt16) -> Int? {
        for e in fixedCIDs where e.cid == fixedCID { return e.module }
        return nil
    }

    /// The report's views of the collectors that have one (`StatsCollector.reportView`), in
    /// order, each followed by a blank line.
    public var reportViews: String { collectors.compactMap { $0.type.reportView.map { $0 + "\n\n" } }.joined() }

    /// The spec of a module layer's bit.
    @inline(__always)
    func spec(_ bit: UInt8) -> LayerSpec? {
        let i = Int(bit) - Int(Self.firstModuleBit)
        return i >= 0 && i < layers.count ? layers[i].spec : nil
    }

    /// The bit of a module layer by key.
    public func layer(_ key: String) -> FrameLayer? {
        layers.firstIndex { $0.spec.key.description == key }.map { FrameLayer(rawValue: Self.firstModuleBit + UInt8($0)) }
    }

    /// A layer's key and group as this registry declares them.
    public func key(_ l: FrameLayer) -> String { l.isModule ? spec(l.rawValue)?.key.description ?? "unknown" : l.key.description }
    public func group(_ l: FrameLayer) -> String? { l.isModule ? spec(l.rawValue)?.group : nil }

    /// All layers answering to a `--protocol` name (a key or a group); nil for none.
    public func layers(named name: String) -> DecodedFrame.Layers? {
        var m = DecodedFrame.Layers()
        for l in allLayers where key(l) == name || group(l) == name { m.insert(l) }
        return m.isEmpty ? nil : m
    }

    /// Every `--protocol` name: the keys and the groups.
    public var names: Set<String> { Set(allLayers.map(key) + allLayers.compactMap(group)) }

    /// "hci, ll, adv, …, avrcp, note, classic (any of sdp, rfcomm, hfp, avdtp, avrcp)" for `--help`.
    public var helpList: String {
        var groups: [String: [String]] = [:]
        for l in allLayers { if let g = group(l) { groups[g, default: []].append(key(l)) } }
        return (allLayers.map(key) + groups.keys.sorted().map { "\($0) (any of \(groups[$0]!.joined(separator: ", ")))" })
            .joined(separator: ", ")
    }

    /// Every layer, built in and module, in declaration order (`note` last).
    public var allLayers: [FrameLayer] {
        FrameLayer.builtIn.dropLast() + layers.indices.map { FrameLayer(rawValue: Self.firstModuleBit + UInt8($0)) } + [.note]
    }
}
