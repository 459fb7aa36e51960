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
    /// The carriers read per record, as flat tables (module index + 1, 0 for none) and a short
    /// list: an event, LE subevent, packet kind or AD type costs one load, not a hash.
    let eventModules: [UInt8]
    let leSubeventModules: [UInt8]
    let packetModules: [UInt8]
    let adTypeModules: [UInt8]
    let serviceDataUUIDs: [(uuid: UInt16, module: Int)]
    /// LL Control opcodes (module index + 1, 0 for none), and the modules of the claimed
    /// access addresses' PDUs.
    let llControlModules: [UInt8]
    let llIsochronousModule: Int?
    let llPeriodicModule: Int?
    public let hasLLControlCarriers: Bool
    /// A module may claim access addresses (`.llIsochronous`, `.llPeriodicAdvertising`).
    public let hasLLAddressCarriers: Bool
    /// The bytes an advertising carrier's AD type can be (its own, 0x16 for service data).
    let adCarrierBytes: [Bool]
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
    /// Every module's command-line options, in list order, with the module declaring each.
    public let options: [(option: ModuleOption, module: Int)]

    public init(_ modules: [any ProtocolModule.Type]) {
        self.modules = modules
        var layers: [(spec: LayerSpec, module: Int)] = []
        var psms: [(psm: UInt16, module: Int)] = [], cids: [(cid: UInt16, module: Int)] = []
        var by: [Carrier: Int] = [:]
        var collectors: [(type: any StatsCollector.Type, layers: DecodedFrame.Layers)] = []
        var mask = DecodedFrame.Layers()
        var options: [(option: ModuleOption, module: Int)] = []
        for (i, m) in modules.enumerated() {
            for o in m.options {
                precondition(!options.contains { $0.option.name == o.name }, "option --\(o.name) declared twice")
                options.append((o, i))
            }
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
        var events = [UInt8](repeating: 0, count: 256), subevents = events, packets = events, adTypes = events
        var serviceData: [(uuid: UInt16, module: Int)] = []
        var llControl = events
        for (c, i) in by.sorted(by: { $0.value < $1.value }) {
            precondition(i < 255, "more than 254 protocol modules")
            switch c {
            case .hciEvent(let e): events[Int(e)] = UInt8(i + 1)
            case .leSubevent(let e): subevents[Int(e)] = UInt8(i + 1)
            case .hciPacket(let k): packets[Int(k.rawValue)] = UInt8(i + 1)
            case .adType(let t): adTypes[Int(t)] = UInt8(i + 1)
            case .serviceData(let u): serviceData.append((u, i))
            case .llControl(let op): llControl[Int(op)] = UInt8(i + 1)
            default: break
            }
        }
        llControlModules = llControl
        llIsochronousModule = by[.llIsochronous]
        llPeriodicModule = by[.llPeriodicAdvertising]
        hasLLControlCarriers = llControl.contains { $0 != 0 }
        hasLLAddressCarriers = llIsochronousModule != nil || llPeriodicModule != nil
        eventModules = events; leSubeventModules = subevents; packetModules = packets; adTypeModules = adTypes
        serviceDataUUIDs = serviceData
        var scan = adTypes.map { $0 != 0 }
        if !serviceData.isEmpty { scan[Int(ADType.serviceData16.rawValue)] = true }
        adCarrierBytes = scan
        self.collectors = collectors
        self.options = options
        hasEventCarriers = by.keys.contains { if case .hciEvent = $0 { true } else if case .leSubevent = $0 { true } else { false } }
        hasCommandCarriers = by.keys.contains { if case .hciCommand = $0 { true } else { false } }
        hasPacketCarriers = by.keys.contains { if case .hciPacket = $0 { true } else { false } }
        hasAdvertisingCarriers = by.keys.contains { if case .adType = $0 { true } else if case .serviceData = $0 { true } else { false } }
        hasRecordCarriers = hasEventCarriers || hasCommandCarriers || hasPacketCarriers || hasAdvertisingCarriers
        hasGATTCarriers = by.keys.contains { if case .gattCharacteristic = $0 { true } else if case .gattService = $0 { true } else { false } }
        holdsSecrets = modules.contains { $0.holdsSecrets }
    }

    /// A declared option by name (without dashes).
    public func option(named name: String) -> ModuleOption? { options.first { $0.option.name == name }?.option }

    /// Each module's decode options given (`(name, value)` in command-line order) → their
    /// configurations. Every module is asked, with its own values (empty when none given).
    public func configure(_ given: [(name: String, value: String)]) throws(ModuleOptionError) -> ModuleConfiguration {
        var c = ModuleConfiguration()
        for (i, m) in modules.enumerated() where !m.options.isEmpty {
            if let v = try m.configure(values(given, module: i, kind: .decode)) { c.byModule[i] = v }
        }
        return c
    }

    /// The modules' filter options given → their record conditions (all must hold).
    public func filters(_ given: [(name: String, value: String)]) throws(ModuleOptionError) -> [any ModuleFrameFilter] {
        var f: [any ModuleFrameFilter] = []
        for (i, m) in modules.enumerated() where !m.options.isEmpty {
            let v = values(given, module: i, kind: .filter)
            if !v.isEmpty, let x = try m.filter(v) { f.append(x) }
        }
        return f
    }

    private func values(_ given: [(name: String, value: String)], module: Int, kind: ModuleOption.Kind) -> ModuleOptionValues {
        var v: [String: [String]] = [:]
        for (name, value) in given where options.contains(where: { $0.module == module && $0.option.name == name && $0.option.kind == kind }) {
            v[name, default: []].append(value)
        }
        return ModuleOptionValues(v)
    }

    /// "--mesh-keys FILE: …; --mesh-src ADDR: …" for `--help`, or nil when no module has options.
    public func optionHelp(_ kind: ModuleOption.Kind) -> String? {
        let o = options.filter { $0.option.kind == kind }
        return o.isEmpty ? nil : o.map { "--\($0.option.name) \($0.option.valueName): \($0.option.help)" }.joined(separator: "; ")
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

    @inline(__always)
    func module(event code: UInt8) -> Int? { let m = eventModules[Int(code)]; return m == 0 ? nil : Int(m) - 1 }
    @inline(__always)
    func module(leSubevent code: UInt8) -> Int? { let m = leSubeventModules[Int(code)]; return m == 0 ? nil : Int(m) - 1 }
    @inline(__always)
    func module(packet kind: PacketKind) -> Int? { let m = packetModules[Int(kind.rawValue)]; return m == 0 ? nil : Int(m) - 1 }
    @inline(__always)
    func module(llControl op: UInt8) -> Int? { let m = llControlModules[Int(op)]; return m == 0 ? nil : Int(m) - 1 }
    @inline(__always)
    func module(adType t: UInt8) -> Int? { let m = adTypeModules[Int(t)]; return m == 0 ? nil : Int(m) - 1 }
    /// Whether `bytes` (a report's, or an event's parameters) hold a byte a registered AD
    /// structure's type could be: without one no report can carry a module, and the reports
    /// need no walk (a necessary condition, exact: most advertising records fail it).
    @inline(__always)
    func mayCarryAdvertising(_ bytes: UnsafeRawBufferPointer) -> Bool {
        adCarrierBytes.withUnsafeBufferPointer { (t) -> Bool in
            for b in bytes where t[Int(b)] { return true }
            return false
        }
    }

    /// Whether AD structures in place (`count` octets at `p`) hold one `advertisingCarrier`
    /// finds: a registered AD type, or service data of a registered 16-bit UUID. Stops as
    /// `ADStructures` does, at a zero Length or a structure that does not fit.
    @inline(__always)
    func carriesModule(_ p: UnsafeRawPointer, count: Int) -> Bool {
        var j = 0
        while j < count {
            let n = Int(p.load(fromByteOffset: j, as: UInt8.self))
            if n == 0 || j &+ 1 &+ n > count { return false }
            let t = p.load(fromByteOffset: j &+ 1, as: UInt8.self)
            if adTypeModules[Int(t)] != 0 { return true }
            if t == ADType.serviceData16.rawValue, n >= 3 {
                let uuid = UInt16(p.load(fromByteOffset: j &+ 2, as: UInt8.self)) | UInt16(p.load(fromByteOffset: j &+ 3, as: UInt8.self)) << 8
                if module(serviceData: uuid) != nil { return true }
            }
            j &+= 1 &+ n
        }
        return false
    }

    /// AD structures in place (`count` octets at `p`) that are whole (`ADStructures.isWellFormed`)
    /// and hold nothing `carriesModule` finds (when `carriers`): both answers in one walk.
    @inline(__always)
    func isPlainADData(_ p: UnsafeRawPointer, count: Int, carriers: Bool) -> Bool {
        var j = 0
        while j < count {
            let n = Int(p.load(fromByteOffset: j, as: UInt8.self))
            if n == 0 { return true } // zero Length: the rest is padding
            if j &+ 1 &+ n > count { return false }
            if carriers {
                let t = p.load(fromByteOffset: j &+ 1, as: UInt8.self)
                if adTypeModules[Int(t)] != 0 { return false }
                if t == ADType.serviceData16.rawValue, n >= 3 {
                    let uuid = UInt16(p.load(fromByteOffset: j &+ 2, as: UInt8.self)) | UInt16(p.load(fromByteOffset: j &+ 3, as: UInt8.self)) << 8
                    if module(serviceData: uuid) != nil { return false }
                }
            }
            j &+= 1 &+ n
        }
        return true
    }

    @inline(__always)
    func module(serviceData uuid: UInt16) -> Int? {
        for e in serviceDataUUIDs where e.uuid == uuid { return e.module }
        return nil
    }

    /// The report's views (`StatsCollector.reportView`), in order, of the collectors whose
    /// output (`modules`, `StatsReport.modules`: one per collector, same order) has data.
    public func reportViews(_ modules: [ModuleStats]) -> [String] {
        zip(collectors, modules).compactMap { $1.hasData ? $0.type.reportView : nil }
    }

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
