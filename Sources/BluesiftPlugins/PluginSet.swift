import BluesiftWire
import Synchronization
import BluesiftProtocols

/// Replay ids of cached decodes: never reused, whichever set made them.
private let replayIDs = Atomic<UInt64>(1)

/// Loaded plugins indexed for the dump hot path: a record that no plugin matches costs one
/// dictionary lookup and no allocation. Holds the reassembly state of one capture: use one
/// set per capture (`PluginSet(other.plugins)`, or `reset()` in between).
public final class PluginSet {
    public let plugins: [Plugin]
    struct Entry { var plugin: Int; var match: PluginMatch }
    var byCharacteristic: [BluetoothUUID: [Entry]] = [:]
    var byHandle: [UInt16: [Entry]] = [:]
    var byChannel: [PluginChannel: [Entry]] = [:]
    var assemblers: [Int: FrameAssembler] = [:]
    /// Advertising rules by company id (nil key: `company: any`) and by service data UUID,
    /// most specific first.
    var byCompany: [UInt16: [Int32]] = [:]
    var anyCompany: [Int32] = []
    var byServiceData: [BluetoothUUID: [Int32]] = [:]
    /// Every advertising rule as plain data (no references: checking one costs no retain),
    /// indexed by the tables above; prefixes in one pool, patterns and UUIDs beside.
    var advRules: [AdvRule] = []
    var prefixPool: [UInt8] = []
    /// The bits of each prefix byte compared (0xFF, or 0x00 for a `??` byte), beside `prefixPool`.
    var maskPool: [UInt8] = []
    var patterns: [Regex<AnyRegexOutput>] = []
    var ruleUUIDs: [BluetoothUUID] = []
    struct AdvRule {
        var plugin: Int32
        var sizeLo: Int32 = 0, sizeHi: Int32 = .max
        var prefixAt: Int32 = 0, prefixCount: Int32 = 0
        /// Index in `patterns` / `ruleUUIDs`, -1 for none.
        var pattern: Int32 = -1, uuid: Int32 = -1
        var withCompany = false
        var specificity: Int32 = 0
        /// Which advertising rule of its plugin (for `_rule`); index in `alsoFilters`, -1 none.
        var ordinal: Int32 = 0
        var also: Int32 = -1
    }
    var alsoFilters: [AlsoFilter] = []
    /// Keys of `decrypt:` fields by advertiser address (`--vendor-keys`).
    public var vendorKeys: [UInt64: [UInt8]] = [:]
    /// Last local name seen per address (a name often comes in the scan response only).
    var names: [UInt64: String] = [:]
    /// Some rule filters on a name, or a plugin shows `context: _name` (the analyzer then
    /// keeps names per address).
    public private(set) var needsNames = false
    /// Decodes of payloads seen before: a device repeats its advertisement many times a
    /// second, and a decode depends only on the plugin, the bytes and the context it reads.
    var cache: [CacheKey: DecodedMessage] = [:]
    struct CacheKey: Hashable {
        var plugin: Int; var address: Int64; var context: Int64; var bytes: [UInt8]
        /// The bytes hashed as one block (element by element cost a call per byte).
        func hash(into h: inout Hasher) {
            h.combine(plugin); h.combine(address); h.combine(context)
            bytes.withUnsafeBytes { h.combine(bytes: $0) }
        }
    }
    static let cacheLimit = 4096

    public init(_ plugins: [Plugin]) {
        self.plugins = plugins
        for (i, p) in plugins.enumerated() {
            var ordinal: Int32 = 0
            for m in p.matches {
                if let a = m.advertising {
                    var r = AdvRule(plugin: Int32(i))
                    r.ordinal = ordinal; ordinal += 1
                    if let f = a.also { r.also = Int32(alsoFilters.count); alsoFilters.append(f) }
                    if let sz = a.size { r.sizeLo = Int32(sz.lowerBound); r.sizeHi = Int32(sz.upperBound) }
                    r.prefixAt = Int32(prefixPool.count); r.prefixCount = Int32(a.prefix.count)
                    prefixPool += a.prefix
                    maskPool += a.prefixMask.isEmpty ? Array(repeating: 0xFF, count: a.prefix.count) : a.prefixMask
                    if let n = a.name, let re = try? Regex(n) { r.pattern = Int32(patterns.count); patterns.append(re); needsNames = true }
                    if p.contextUse.contains("_name") { needsNames = true }
                    if let u = a.uuid { r.uuid = Int32(ruleUUIDs.count); ruleUUIDs.append(u) }
                    r.withCompany = a.withCompany
                    r.specificity = Int32(a.specificity)
                    let e = Int32(advRules.count)
                    advRules.append(r)
                    switch a.target {
                    case .company(let c?): byCompany[c, default: []].append(e)
                    case .company(nil): anyCompany.append(e)
                    case .serviceData(let u): byServiceData[u, default: []].append(e)
                    }
                    continue
                }
                if let c = m.channel {
                    byChannel[c, default: []].append(Entry(plugin: i, match: m))
                    if case .rfcommService = c { targetsServices = true }
                    continue
                }
                byCharacteristic[m.characteristic, default: []].append(Entry(plugin: i, match: m))
                if let h = m.handle { byHandle[h, default: []].append(Entry(plugin: i, match: m)) }
            }
            if let f = p.framing { assemblers[i] = FrameAssembler(framing: f) }
        }
        contextMasks = plugins.map { p in
            var m: UInt8 = p.decrypts ? 64 : 0
            for (bit, name) in [(1, "_address"), (2, "_rssi"), (4, "_company"), (8, "_address_type"), (16, "_pdu"), (32, "_name"), (128, "_rule")]
            where p.contextUse.contains(name) { m |= UInt8(bit) }
            return m
        }
        // Most specific first; the sort is stable, so file order breaks ties.
        let rules = advRules
        func order(_ l: inout [Int32]) {
            l = l.enumerated().sorted { a, b in
                let x = rules[Int(a.element)].specificity, y = rules[Int(b.element)].specificity
                return x != y ? x > y : a.offset < b.offset
            }.map(\.element)
        }
        for k in byCompany.keys { order(&byCompany[k]!) }
        order(&anyCompany)
        for k in byServiceData.keys { order(&byServiceData[k]!) }
    }

    /// For each advertising target, the rules in the order they are tried ("tilt: company
    /// 0x004c prefix 0215a495…"), then those of `company: any` (tried after a company's own).
    public var advertisingOrder: [(target: String, rules: [String])] {
        func names(_ l: [Int32]) -> [String] {
            l.map { e in
                let p = plugins[Int(advRules[Int(e)].plugin)]
                let m = p.matches.compactMap(\.advertising)
                let r = advRules[Int(e)]
                // The rule's own text: the n-th advertising rule of its plugin.
                let k = advRules[..<Int(e)].filter { $0.plugin == r.plugin }.count
                return p.id + ": " + (k < m.count ? m[k].description : "")
            }
        }
        var out: [(String, [String])] = []
        for c in byCompany.keys.sorted() { out.append((AdvertisingTarget.company(c).description, names(byCompany[c]!))) }
        if !anyCompany.isEmpty { out.append((AdvertisingTarget.company(nil).description, names(anyCompany))) }
        for u in byServiceData.keys.sorted() { out.append((AdvertisingTarget.serviceData(u).description, names(byServiceData[u]!))) }
        return out
    }

    /// Some plugin decodes advertising data.
    public var targetsAdvertising: Bool { !byCompany.isEmpty || !anyCompany.isEmpty || !byServiceData.isEmpty }

    public var isEmpty: Bool { plugins.isEmpty }

    /// Some plugin targets a Classic channel (the analyzer looks at Classic data only then).
    public var targetsChannels: Bool { !byChannel.isEmpty }

    /// Some plugin targets an RFCOMM channel by its SDP service name.
    public private(set) var targetsServices = false

    /// Runs the plugin of a Classic channel over its data (see `PluginMatch`). `stream` keys the
    /// frame reassembly (default: from the channel); a service match passes its server channel.
    public func process(channel: PluginChannel, direction: PluginDirection, device: UInt64,
                        value: UnsafeRawBufferPointer, timeMicroseconds: Int64, stream: UInt16? = nil) -> Result? {
        guard let e = byChannel[channel]?.first(where: { $0.match.directions.contains(direction) }) else { return nil }
        let key: UInt16
        switch channel {
        case .rfcomm(let c): key = 0x8000 | UInt16(c)
        case .rfcommService: key = stream ?? 0x8000
        case .psm(let p): key = p
        }
        return run(e.plugin, e.match, handle: key, direction: direction, byHandle: false, device: device,
                   value: value, timeMicroseconds: timeMicroseconds)
    }

    /// Drops partial frames and names (start of another capture).
    public func reset() { for a in assemblers.values { a.reset() }; names.removeAll() }

    /// Remembers an advertiser's local name for `name:` rules.
    public func observeName(_ name: String, address: UInt64) {
        if names[address] != name { names[address] = name }
    }

    /// Where a decoded advertising payload came from.
    public struct AdvertisingSource: Sendable {
        public var address: UInt64?
        public var target: AdvertisingTarget
        public init(address: UInt64?, target: AdvertisingTarget) { self.address = address; self.target = target }
    }

    /// Decodes one AD structure of a report: Manufacturer Specific Data (type 0xFF: company id,
    /// then the payload) or Service Data (0x16, 0x20, 0x21: UUID, then the payload). nil when
    /// no plugin takes it. `serviceUUIDs` answers `uuid:` filters (called only for them).
    public func decodeAdvertising(type: UInt8, value: UnsafeRawBufferPointer, context: AdvertisingContext,
                                  serviceUUIDs: () -> [BluetoothUUID],
                                  report: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0))
        -> (plugin: Int, message: DecodedMessage, target: AdvertisingTarget)? {
        var ctx = context
        let payloadStart: Int
        let target: AdvertisingTarget
        var first: [Int32]
        var second: [Int32] = []
        let structure = ADStructure(type: ADType(rawValue: type), value: value)
        if let (company, data) = structure.manufacturerData {
            ctx.company = Int64(company)
            if let listed = byCompany[company] { first = listed; second = anyCompany } else {
                guard !anyCompany.isEmpty else { return nil }
                first = anyCompany
            }
            payloadStart = value.count - data.count
            target = .company(company)
        } else if let (u, data) = structure.serviceData {
            guard let list = byServiceData[u] else { return nil }
            first = list
            payloadStart = value.count - data.count
            target = .serviceData(u)
        } else {
            return nil
        }
        let size = Int32(value.count - payloadStart)
        var uuids: [BluetoothUUID]?
        var nameLooked = false
        func take(_ list: [Int32]) -> Int32? {
            for e in list {
                let r = advRules[Int(e)]
                guard size >= r.sizeLo, size <= r.sizeHi else { continue }
                if r.prefixCount > 0 {
                    let start = r.withCompany ? 0 : payloadStart
                    guard value.count - start >= Int(r.prefixCount) else { continue }
                    var same = true
                    for k in 0..<Int(r.prefixCount) where value[start + k] & maskPool[Int(r.prefixAt) + k] != prefixPool[Int(r.prefixAt) + k] { same = false; break }
                    guard same else { continue }
                }
                if r.pattern >= 0 {
                    if !nameLooked, ctx.name == nil, let a = ctx.address { ctx.name = names[a] }
                    nameLooked = true
                    guard let n = ctx.name, nameMatches(Int(r.pattern), n) else { continue }
                }
                if r.uuid >= 0 {
                    if uuids == nil { uuids = serviceUUIDs() }
                    guard uuids!.contains(ruleUUIDs[Int(r.uuid)]) else { continue }
                }
                if r.also >= 0, !Self.carries(report, alsoFilters[Int(r.also)]) { continue }
                return e
            }
            return nil
        }
        guard let e = take(first) ?? take(second) else { return nil }
        let r = advRules[Int(e)]
        let payload = UnsafeRawBufferPointer(rebasing: value[(r.withCompany ? 0 : payloadStart)...])
        if !nameLooked, ctx.name == nil, contextMasks[Int(r.plugin)] & 32 != 0, let a = ctx.address { ctx.name = names[a] }
        ctx.rule = Int64(r.ordinal)
        return (Int(r.plugin), decode(Int(r.plugin), payload, ctx), target)
    }

    /// The report's AD data holds a structure `f` names (service data by UUID or manufacturer
    /// data by company id) that starts with its prefix.
    static func carries(_ report: UnsafeRawBufferPointer, _ f: AlsoFilter) -> Bool {
        for s in ADStructures(report) {
            let data: UnsafeRawBufferPointer
            switch f.target {
            case .company(let c?):
                guard let m = s.manufacturerData, m.company == c else { continue }
                data = m.data
            case .serviceData(let u):
                guard let d = s.serviceData, d.uuid == u else { continue }
                data = d.data
            case .company(nil): continue
            }
            if data.count >= f.prefix.count, zip(data, f.prefix).allSatisfy({ $0 == $1 }) { return true }
        }
        return false
    }

    /// A rule's name pattern against a name, remembered (names are few; a regex match is slow).
    func nameMatches(_ slot: Int, _ name: String) -> Bool {
        let key = NameKey(slot: slot, name: name)
        if let v = nameVerdicts[key] { return v }
        let v = (try? patterns[slot].wholeMatch(in: name)) != nil
        if nameVerdicts.count >= Self.cacheLimit { nameVerdicts.removeAll(keepingCapacity: true) }
        nameVerdicts[key] = v
        return v
    }
    struct NameKey: Hashable { var slot: Int; var name: String }
    var nameVerdicts: [NameKey: Bool] = [:]

    /// A decode through the cache. The key holds the context values the plugin reads; a
    /// plugin that decrypts is never cached (its keys may differ between runs of a set).
    func decode(_ i: Int, _ payload: UnsafeRawBufferPointer, _ ctx: AdvertisingContext) -> DecodedMessage {
        // Flags read from a table: copying a Plugin (or hashing its names) per record showed.
        let use = contextMasks[i]
        if use & Self.usesKeysOrName != 0 { return plugins[i].decode(payload, context: ctx, keys: vendorKeys) }
        var a: Int64 = 0, c: Int64 = 0
        if use != 0 {
            // Exact, not hashed together: a collision would give another device's values.
            if use & 1 != 0 { a = Int64(ctx.address ?? 0) | 1 << 62 }
            if use & 2 != 0 { c |= (ctx.rssi & 0xFFFF) << 32 | 1 << 60 }
            if use & 4 != 0 { c |= (ctx.company & 0xFFFF) << 8 | 1 << 59 }
            if use & 8 != 0 { c |= (ctx.addressType & 0xF) << 4 | 1 << 58 }
            if use & 16 != 0 { c |= (ctx.pdu & 0xF) | 1 << 57 }
            if use & 128 != 0 { c |= (ctx.rule & 0xFF) << 48 | 1 << 56 }
        }
        let key = CacheKey(plugin: i, address: a, context: c, bytes: Array(payload))
        if let hit = cache[key] { return hit }
        var d = plugins[i].decode(payload, context: ctx)
        if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
        d.replayID = replayIDs.add(1, ordering: .relaxed).oldValue
        cache[key] = d
        return d
    }

    /// Per plugin: the context it reads (1 address, 2 rssi, 4 company, 8 address type, 16 pdu,
    /// 32 name, 128 rule) and 64 when it decrypts.
    var contextMasks: [UInt8] = []
    static let usesKeysOrName: UInt8 = 32 | 64

    public func plugin(id: String) -> Plugin? { plugins.first { $0.id == id } }

    /// The plugin for a characteristic (known from GATT naming), else for a bare handle
    /// (`byHandle` true: the plugin's handle override named it).
    public func match(service: BluetoothUUID?, characteristic: BluetoothUUID?, handle: UInt16,
                      direction: PluginDirection) -> (plugin: Int, match: PluginMatch, byHandle: Bool)? {
        if let c = characteristic {
            if let list = byCharacteristic[c] {
                for e in list where e.match.directions.contains(direction) && (e.match.service == nil || e.match.service == service) {
                    return (e.plugin, e.match, false)
                }
            }
            return nil
        }
        if let list = byHandle[handle] {
            for e in list where e.match.directions.contains(direction) { return (e.plugin, e.match, true) }
        }
        return nil
    }

    /// What a matched ATT value turned into.
    public struct Result: Sendable {
        public var plugin: String
        public var match: PluginMatch
        public var handle: UInt16
        public var direction: PluginDirection
        /// The plugin's handle override named the characteristic (no discovery in the capture).
        public var namedByHandle: Bool
        /// Complete frames ending in this value (usually one; none while a frame is incomplete).
        public var messages: [DecodedMessage]
        /// Advertising data: where each message came from (parallel to `messages`).
        public var sources: [AdvertisingSource] = []
        /// Bytes buffered for an incomplete frame.
        public var pending: Int
        public var pendingNeed: Int?
        public var dropped: [String]
    }

    /// Matches, reassembles (when the plugin declares framing) and decodes one ATT value.
    public func process(service: BluetoothUUID?, characteristic: BluetoothUUID?, handle: UInt16,
                        direction: PluginDirection, device: UInt64, value: UnsafeRawBufferPointer,
                        timeMicroseconds: Int64) -> Result? {
        guard let (i, m, byHandle) = match(service: service, characteristic: characteristic, handle: handle, direction: direction) else {
            return nil
        }
        return run(i, m, handle: handle, direction: direction, byHandle: byHandle, device: device, value: value,
                   timeMicroseconds: timeMicroseconds)
    }

    func run(_ i: Int, _ m: PluginMatch, handle: UInt16, direction: PluginDirection, byHandle: Bool, device: UInt64,
             value: UnsafeRawBufferPointer, timeMicroseconds: Int64) -> Result? {
        let p = plugins[i]
        var r = Result(plugin: p.id, match: m, handle: handle, direction: direction, namedByHandle: byHandle, messages: [], pending: 0, pendingNeed: nil, dropped: [])
        if let a = assemblers[i] {
            let out = a.push(FrameAssembler.StreamKey(device: device, handle: handle, direction: direction), value,
                             atMicroseconds: timeMicroseconds)
            r.messages = out.frames.map { p.decode($0) }
            r.pending = out.pending
            r.pendingNeed = out.pendingNeed
            r.dropped = out.dropped
        } else {
            r.messages = [p.decode(value)]
        }
        return r
    }
}

extension Plugin {
    /// True when `response` answers `request` under one of the plugin's rules, e.g.
    /// "reply command = request command | 0x80 within 500 ms".
    public func isResponse(_ response: DecodedMessage, direction responseDirection: PluginDirection,
                           to request: DecodedMessage, direction requestDirection: PluginDirection,
                           elapsedMicroseconds: Int64) -> Bool {
        for r in rules where r.requestDirection == requestDirection && r.responseDirection == responseDirection {
            guard elapsedMicroseconds >= 0, elapsedMicroseconds <= r.withinMicroseconds else { continue }
            if !r.requests.isEmpty && !r.requests.contains(request.message) { continue }
            let v = try? r.match.evaluate { name in
                if name.hasPrefix("request.") { return request.header[String(name.dropFirst(8))] }
                if name.hasPrefix("response.") { return response.header[String(name.dropFirst(9))] }
                return nil
            }
            if let v, v != 0 { return true }
        }
        return false
    }

    /// The longest time a request may wait for its response (nil: no rule applies).
    public func responseTimeout(for request: DecodedMessage, direction: PluginDirection) -> Int64? {
        rules.filter { $0.requestDirection == direction && ($0.requests.isEmpty || $0.requests.contains(request.message)) }
            .map(\.withinMicroseconds).max()
    }
}

extension PluginSet.Result {
    /// Built once: a set literal per advertising record allocated.
    static let notify: Set<PluginDirection> = [.notify]

    /// An empty result for advertising data (a plugin's messages are added as decoded).
    public init(advertising plugin: String, target: AdvertisingTarget) {
        self.init(plugin: plugin, match: PluginMatch(service: nil, characteristic: BluetoothUUID(0), handle: nil, directions: Self.notify,
                                                     advertising: AdvertisingMatch(target: target)),
                  handle: 0, direction: .notify, namedByHandle: false, messages: [], pending: 0, pendingNeed: nil, dropped: [])
    }
}
