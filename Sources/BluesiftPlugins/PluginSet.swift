import BluesiftWire
import Synchronization
import BluesiftProtocols

/// Replay ids of cached decodes: never reused, whichever set made them.
private let replayIDs = Atomic<UInt64>(1)

/// Loaded plugins indexed for the dump hot path: a record that no plugin matches costs one
/// dictionary lookup and no allocation. Holds the reassembly state of one capture: use one
/// set per capture (`PluginSet(other.plugins)`, or `reset()` in between).
public final class PluginSet {
    /// Stubs (`PluginLoader.loadOnUse`) are replaced by their compiled plugin on first use.
    public private(set) var plugins: [Plugin]
    /// Stubs that failed to compile: their rules take nothing.
    var dead: [Bool]
    /// Per plugin, its stub's pending compile until it is compiled (read per structure: a
    /// look at `plugins[i]` copied the plugin).
    var stubs: [PendingPlugin?]
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
    /// Name patterns as written, each compiled when a name is first tested against it (the
    /// compiler checked them; compiling all of them again made start-up slower).
    var patternTexts: [String] = []
    var patterns: [Regex<AnyRegexOutput>?] = []
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
    /// Keys of `decrypt:` fields by advertiser address (`--vendor-keys`). Decodes of plugins that
    /// decrypt are cached by address too; new keys empty the cache.
    public var vendorKeys: [UInt64: [UInt8]] = [:] {
        didSet { cache = DecodeCache(); results.removeAll(); reports.removeAll() }
    }
    /// Last local name seen per address (a name often comes in the scan response only).
    var names: [UInt64: String] = [:]
    /// Some rule filters on a name, or a plugin shows `context: _name` (the analyzer then
    /// keeps names per address).
    public private(set) var needsNames = false
    /// Decodes of payloads seen before: a device repeats its advertisement many times a
    /// second, and a decode depends only on the plugin, the bytes and the context it reads.
    var cache = DecodeCache()
    static let cacheLimit = 4096
    /// Results of whole reports (`advertisingReport`), and what the report being decoded read
    /// of its context (`contextMasks`' bits: 2 RSSI, 32 name).
    var reports = ReportCache()
    var reportReads: UInt8 = 0

    public init(_ plugins: [Plugin]) {
        self.plugins = plugins
        dead = Array(repeating: false, count: plugins.count)
        stubs = plugins.map(\.pending)
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
                    if let n = a.name { r.pattern = Int32(patternTexts.count); patternTexts.append(n); patterns.append(nil); needsNames = true }
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
                    if case .mesh = c { targetsMesh = true } else { targetsChannels = true }
                    continue
                }
                byCharacteristic[m.characteristic, default: []].append(Entry(plugin: i, match: m))
                if let h = m.handle { byHandle[h, default: []].append(Entry(plugin: i, match: m)) }
            }
            if let f = p.framing { assemblers[i] = FrameAssembler(framing: f) }
        }
        contextMasks = plugins.map(Self.contextMask)
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
        // The lists again, flat: a company id indexes a table (hashing it per structure showed).
        func list(_ l: [Int32]) -> Int32 {
            lists.append((Int32(listPool.count), Int32(l.count))); listPool += l
            return Int32(lists.count - 1)
        }
        if !byCompany.isEmpty {
            companyList = Array(repeating: -1, count: 1 << 16)
            for (c, l) in byCompany { companyList[Int(c)] = list(l) }
        }
        anyCompanyList = anyCompany.isEmpty ? -1 : list(anyCompany)
        for (u, l) in byServiceData { serviceDataList[u] = list(l) }
        targetsAdvertising = !byCompany.isEmpty || !anyCompany.isEmpty || !byServiceData.isEmpty
    }

    /// `byCompany` as a table by company id (-1: none), `anyCompany` and `byServiceData`: each an
    /// index in `lists`, a range of `listPool`.
    var companyList: [Int32] = []
    var anyCompanyList: Int32 = -1
    var serviceDataList: [BluetoothUUID: Int32] = [:]
    var lists: [(start: Int32, count: Int32)] = []
    var listPool: [Int32] = []

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

    /// Some plugin decodes advertising data (stored: asked per record, three dictionaries showed).
    public private(set) var targetsAdvertising = false

    public var isEmpty: Bool { plugins.isEmpty }

    /// Some plugin targets a Classic channel (the analyzer looks at Classic data only then).
    public private(set) var targetsChannels = false

    /// Some plugin targets a Mesh vendor model (the analyzer looks at access messages only then).
    public private(set) var targetsMesh = false

    /// Runs the plugin of a Mesh vendor model over a decrypted access message (opcode ‖
    /// parameters; Mesh Protocol v1.1 §3.7.3): a rule naming its opcode first, else one naming
    /// only its company. `device` keys the plugin's state (the message's source).
    public func process(meshAccess value: UnsafeRawBufferPointer, device: UInt64, timeMicroseconds: Int64) -> Result? {
        // A 3-octet opcode: 0b11xxxxxx, then the company identifier, little-endian.
        guard value.count >= 3, value[0] & 0xC0 == 0xC0 else { return nil }
        let company = UInt16(value[1]) | UInt16(value[2]) << 8
        let t = timeMicroseconds
        return process(channel: .mesh(company: company, opcode: value[0]), direction: .write, device: device, value: value, timeMicroseconds: t)
            ?? process(channel: .mesh(company: company, opcode: nil), direction: .write, device: device, value: value, timeMicroseconds: t)
    }

    /// Some plugin targets an RFCOMM channel by its SDP service name.
    public private(set) var targetsServices = false

    /// Runs the plugin of a Classic channel over its data (see `PluginMatch`). `stream` keys the
    /// frame reassembly (default: from the channel); a service match passes its server channel.
    public func process(
        channel: PluginChannel, direction: PluginDirection, device: UInt64,
        value: UnsafeRawBufferPointer, timeMicroseconds: Int64, stream: UInt16? = nil
    ) -> Result? {
        // A stub is compiled when its channel first carries data; one that fails takes nothing.
        guard let e = byChannel[channel]?.first(where: { $0.match.directions.contains(direction) && ready($0.plugin) }) else { return nil }
        let key: UInt16
        switch channel {
        case .rfcomm(let c): key = 0x8000 | UInt16(c)
        case .rfcommService: key = stream ?? 0x8000
        case .psm(let p): key = p
        case .mesh(let c, _): key = c
        }
        return run(
            e.plugin, e.match, handle: key, direction: direction, byHandle: false, device: device,
            value: value, timeMicroseconds: timeMicroseconds)
    }

    /// Drops partial frames and names (start of another capture).
    public func reset() { for a in assemblers.values { a.reset() }; names.removeAll(); reports.removeAll() }

    /// Remembers an advertiser's local name for `name:` rules.
    public func observeName(_ name: String, address: UInt64) {
        if names[address] != name { names[address] = name }
    }

    /// The same from the name's bytes (UTF-8, invalid bytes replaced): a String is made only
    /// when the name differs from the one kept (names repeat in every report of a device).
    public func observeName(_ bytes: UnsafeRawBufferPointer, address: UInt64) {
        if var kept = names[address], kept.withUTF8({ $0.elementsEqual(bytes) }) { return }
        names[address] = String(decoding: bytes, as: UTF8.self)
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
    public func decodeAdvertising(
        type: UInt8, value: UnsafeRawBufferPointer, context: AdvertisingContext,
        serviceUUIDs: () -> [BluetoothUUID],
        report: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    )
        -> (plugin: Int, message: DecodedMessage, target: AdvertisingTarget)?
    {
        var ctx = context
        guard
            let (rule, payload, target) = takeAdvertising(
                type: type, value: value, context: &ctx, serviceUUIDs: serviceUUIDs,
                report: report)
        else { return nil }
        let i = Int(advRules[rule].plugin)
        return (i, decode(i, payload, ctx).message, target)
    }

    /// As `decodeAdvertising`, the structure's result as a record holds it (`sources` set): a
    /// payload decoded before from the same advertiser gives the very result it gave then.
    public func advertisingResult(
        type: UInt8, value: UnsafeRawBufferPointer, context: AdvertisingContext,
        serviceUUIDs: () -> [BluetoothUUID], report: UnsafeRawBufferPointer
    ) -> Result? {
        var ctx = context
        guard
            let (rule, payload, target) = takeAdvertising(
                type: type, value: value, context: &ctx, serviceUUIDs: serviceUUIDs,
                report: report)
        else { return nil }
        let i = Int(advRules[rule].plugin)
        reportReads |= contextMasks[i]
        // The entry first: a record repeating an earlier one takes its result without
        // touching the message (a retain and a release per structure).
        let e = entry(i, payload, ctx)
        if e >= 0, cache.entries[e].resultAddress == ctx.address, cache.entries[e].resultTarget == target,
            let r = cache.entries[e].result
        {
            return r
        }
        let m = e >= 0 ? cache.entries[e].message : plugins[i].decode(payload, context: ctx, keys: vendorKeys)
        // Several advertisers often send one payload (Apple's short ones): their results by
        // decode and advertiser, beside the entry's last one.
        let key = ResultKey(replayID: m.replayID, address: ctx.address, target: target)
        let r: Result
        if e >= 0, let known = results[key] {
            r = known
        } else {
            var n = Result(advertising: m.plugin, target: target)
            n.messages = [m]
            n.sources = [AdvertisingSource(address: ctx.address, target: target)]
            guard e >= 0 else { return n }
            if results.count >= Self.cacheLimit * 2 { results.removeAll(keepingCapacity: true) }
            results[key] = n
            r = n
        }
        cache.entries[e].result = r; cache.entries[e].resultAddress = ctx.address; cache.entries[e].resultTarget = target
        return r
    }

    struct ResultKey: Hashable { var replayID: UInt64; var address: UInt64?; var target: AdvertisingTarget }
    var results: [ResultKey: Result] = [:]

    /// The rule that takes an AD structure, the payload it decodes and the structure's target;
    /// fills in the context's company, rule and (when a rule or the plugin reads it) name.
    func takeAdvertising(
        type: UInt8, value: UnsafeRawBufferPointer, context ctx: inout AdvertisingContext,
        serviceUUIDs: () -> [BluetoothUUID], report: UnsafeRawBufferPointer
    )
        -> (rule: Int, payload: UnsafeRawBufferPointer, target: AdvertisingTarget)?
    {
        let payloadStart: Int
        let target: AdvertisingTarget
        var first: Int32
        var second: Int32 = -1
        let structure = ADStructure(type: ADType(rawValue: type), value: value)
        if let (company, data) = structure.manufacturerData {
            ctx.company = Int64(company)
            let listed = companyList.isEmpty ? -1 : companyList[Int(company)]
            if listed >= 0 {
                first = listed; second = anyCompanyList
            } else {
                guard anyCompanyList >= 0 else { return nil }
                first = anyCompanyList
            }
            payloadStart = value.count - data.count
            target = .company(company)
        } else if let (u, data) = structure.serviceData {
            guard let list = serviceDataList[u] else { return nil }
            first = list
            payloadStart = value.count - data.count
            target = .serviceData(u)
        } else {
            return nil
        }
        let size = Int32(value.count - payloadStart)
        var uuids: [BluetoothUUID]?
        var nameLooked = false
        func take(_ list: Int32) -> Int32? {
            guard list >= 0 else { return nil }
            let (start, count) = lists[Int(list)]
            for e in listPool[Int(start)..<Int(start + count)] {
                let r = advRules[Int(e)]
                guard size >= r.sizeLo, size <= r.sizeHi, !dead[Int(r.plugin)] else { continue }
                if r.prefixCount > 0 {
                    let start = r.withCompany ? 0 : payloadStart
                    guard value.count - start >= Int(r.prefixCount) else { continue }
                    var same = true
                    for k in 0..<Int(r.prefixCount) where value[start + k] & maskPool[Int(r.prefixAt) + k] != prefixPool[Int(r.prefixAt) + k] { same = false; break }
                    guard same else { continue }
                }
                if r.pattern >= 0 {
                    reportReads |= 32
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
        // A stub is compiled now; one that fails is dropped and the rules are tried again.
        if !ready(Int(r.plugin)) {
            return takeAdvertising(type: type, value: value, context: &ctx, serviceUUIDs: serviceUUIDs, report: report)
        }
        let payload = UnsafeRawBufferPointer(rebasing: value[(r.withCompany ? 0 : payloadStart)...])
        if !nameLooked, ctx.name == nil, contextMasks[Int(r.plugin)] & 32 != 0, let a = ctx.address { ctx.name = names[a] }
        ctx.rule = Int64(r.ordinal)
        return (Int(e), payload, target)
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
        if patterns[slot] == nil {
            // Unreachable for a compiled plugin (the compiler rejects a bad pattern): none matches.
            guard let re = try? Regex(patternTexts[slot]) else { return false }
            patterns[slot] = re
        }
        let v = (try? patterns[slot]!.wholeMatch(in: name)) != nil
        if nameVerdicts.count >= Self.cacheLimit { nameVerdicts.removeAll(keepingCapacity: true) }
        nameVerdicts[key] = v
        return v
    }
    struct NameKey: Hashable { var slot: Int; var name: String }
    var nameVerdicts: [NameKey: Bool] = [:]

    /// A decode through the cache, and its entry in it. The key holds the context values the
    /// plugin reads (the name's text too); a plugin that decrypts keys on the address (its key
    /// is the address's, and new keys empty the cache).
    func decode(_ i: Int, _ payload: UnsafeRawBufferPointer, _ ctx: AdvertisingContext) -> (message: DecodedMessage, entry: Int) {
        let e = entry(i, payload, ctx)
        return e >= 0 ? (cache.entries[e].message, e) : (plugins[i].decode(payload, context: ctx, keys: vendorKeys), -1)
    }

    /// The cache entry of this decode, decoded and added when new (-1: not cached, never today;
    /// a plugin that decrypts was decoded afresh per structure, 2% of a dump with every plugin).
    func entry(_ i: Int, _ payload: UnsafeRawBufferPointer, _ ctx: AdvertisingContext) -> Int {
        // Flags read from a table: copying a Plugin (or hashing its names) per record showed.
        let use = contextMasks[i]
        var a: Int64 = 0, c: Int64 = 0
        if use != 0 {
            // Exact, not hashed together: a collision would give another device's values.
            if use & 65 != 0 { a = Int64(ctx.address ?? 0) | 1 << 62 }
            if use & 2 != 0 { c |= (ctx.rssi & 0xFFFF) << 32 | 1 << 60 }
            if use & 4 != 0 { c |= (ctx.company & 0xFFFF) << 8 | 1 << 59 }
            if use & 8 != 0 { c |= (ctx.addressType & 0xF) << 4 | 1 << 58 }
            if use & 16 != 0 { c |= (ctx.pdu & 0xF) | 1 << 57 }
            if use & 128 != 0 { c |= (ctx.rule & 0xFF) << 48 | 1 << 56 }
            if use & 32 != 0 { c |= (ctx.name == nil ? 0 : 1 << 55) | 1 << 54 }
        }
        let key = DecodeCache.Key(plugin: Int32(i), a: a, c: c)
        var name = use & 32 != 0 ? ctx.name ?? "" : ""
        let found = name.withUTF8 { n in cache.find(key, payload, UnsafeRawBufferPointer(n)) }
        if found.entry >= 0 { return found.entry }
        var d = use & 64 != 0 ? plugins[i].decode(payload, context: ctx, keys: vendorKeys) : plugins[i].decode(payload, context: ctx)
        d.replayID = replayIDs.add(1, ordering: .relaxed).oldValue
        return name.withUTF8 { n in cache.insert(key, found.hash, payload, UnsafeRawBufferPointer(n), d, limit: Self.cacheLimit) }
    }

    /// Per plugin: the context it reads (1 address, 2 rssi, 4 company, 8 address type, 16 pdu,
    /// 32 name, 128 rule) and 64 when it decrypts.
    var contextMasks: [UInt8] = []

    static func contextMask(_ p: Plugin) -> UInt8 {
        var m: UInt8 = p.decrypts ? 64 : 0
        for (bit, name) in [(1, "_address"), (2, "_rssi"), (4, "_company"), (8, "_address_type"), (16, "_pdu"), (32, "_name"), (128, "_rule")]
        where p.contextUse.contains(name) { m |= UInt8(bit) }
        return m
    }

    /// Compiles plugin `i` if it is a stub; false when that failed (it is then dead).
    func ready(_ i: Int) -> Bool {
        guard let pending = stubs[i] else { return !dead[i] }
        stubs[i] = nil
        switch pending.compiled() {
        case .success(let p):
            plugins[i] = p
            contextMasks[i] = Self.contextMask(p)
            if let f = p.framing { assemblers[i] = FrameAssembler(framing: f) }
            return true
        case .failure:
            plugins[i].pending = nil
            dead[i] = true
            return false
        }
    }

    public func plugin(id: String) -> Plugin? {
        guard let i = plugins.firstIndex(where: { $0.id == id }), ready(i) else { return nil }
        return plugins[i]
    }

    /// The plugin for a characteristic (known from GATT naming), else for a bare handle
    /// (`byHandle` true: the plugin's handle override named it).
    public func match(
        service: BluetoothUUID?, characteristic: BluetoothUUID?, handle: UInt16,
        direction: PluginDirection
    ) -> (plugin: Int, match: PluginMatch, byHandle: Bool)? {
        if let c = characteristic {
            if let list = byCharacteristic[c] {
                for e in list where e.match.directions.contains(direction) && (e.match.service == nil || e.match.service == service) {
                    guard ready(e.plugin) else { continue }
                    return (e.plugin, e.match, false)
                }
            }
            return nil
        }
        if let list = byHandle[handle] {
            for e in list where e.match.directions.contains(direction) && ready(e.plugin) { return (e.plugin, e.match, true) }
        }
        return nil
    }

    /// What a matched ATT value turned into. Its members live in one box (copy on write): an
    /// advertising record usually repeats an earlier one, and takes that record's result as it
    /// is (one retain, where copying ten members cost ten).
    public struct Result: Sendable {
        final class Storage: @unchecked Sendable {
            var plugin: String
            var match: PluginMatch
            var handle: UInt16
            var direction: PluginDirection
            var namedByHandle: Bool
            var messages: [DecodedMessage]
            var sources: [AdvertisingSource]
            var pending: Int
            var pendingNeed: Int?
            var dropped: [String]
            /// What writers rendered for this result (`hold`); a change drops it, a copy has none.
            var held: HeldRendering?
            init(
                plugin: String, match: PluginMatch, handle: UInt16, direction: PluginDirection, namedByHandle: Bool,
                messages: [DecodedMessage], sources: [AdvertisingSource], pending: Int, pendingNeed: Int?, dropped: [String]
            ) {
                self.plugin = plugin; self.match = match; self.handle = handle; self.direction = direction
                self.namedByHandle = namedByHandle; self.messages = messages; self.sources = sources
                self.pending = pending; self.pendingNeed = pendingNeed; self.dropped = dropped
            }
            func copy() -> Storage {
                Storage(
                    plugin: plugin, match: match, handle: handle, direction: direction, namedByHandle: namedByHandle,
                    messages: messages, sources: sources, pending: pending, pendingNeed: pendingNeed, dropped: dropped)
            }
        }
        var storage: Storage

        init(
            plugin: String, match: PluginMatch, handle: UInt16, direction: PluginDirection, namedByHandle: Bool,
            messages: [DecodedMessage], sources: [AdvertisingSource] = [], pending: Int, pendingNeed: Int?, dropped: [String]
        ) {
            storage = Storage(
                plugin: plugin, match: match, handle: handle, direction: direction, namedByHandle: namedByHandle,
                messages: messages, sources: sources, pending: pending, pendingNeed: pendingNeed, dropped: dropped)
        }

        mutating func unique() {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() } else if storage.held != nil { storage.held = nil }
        }

        /// The renderings writers keep for this result (`VendorRendering`): nil unless the
        /// result is one that records share (`hold`).
        public var held: HeldRendering? { storage.held }

        /// Lets writers keep this result's rendering: for a result that records share and
        /// that a replay would take (1 to 4 messages, each with a `replayID`, none dropped).
        func hold() {
            guard storage.held == nil, storage.dropped.isEmpty, !storage.messages.isEmpty, storage.messages.count <= 4,
                storage.messages.allSatisfy({ $0.replayID != 0 })
            else { return }
            storage.held = HeldRendering()
        }

        public var plugin: String {
            get { storage.plugin }
            _modify { unique(); yield &storage.plugin }
        }
        public var match: PluginMatch {
            get { storage.match }
            _modify { unique(); yield &storage.match }
        }
        public var handle: UInt16 {
            get { storage.handle }
            _modify { unique(); yield &storage.handle }
        }
        public var direction: PluginDirection {
            get { storage.direction }
            _modify { unique(); yield &storage.direction }
        }
        /// The plugin's handle override named the characteristic (no discovery in the capture).
        public var namedByHandle: Bool {
            get { storage.namedByHandle }
            _modify { unique(); yield &storage.namedByHandle }
        }
        /// Complete frames ending in this value (usually one; none while a frame is incomplete).
        public var messages: [DecodedMessage] {
            get { storage.messages }
            _modify { unique(); yield &storage.messages }
        }
        /// Advertising data: where each message came from (parallel to `messages`).
        public var sources: [AdvertisingSource] {
            get { storage.sources }
            _modify { unique(); yield &storage.sources }
        }
        /// Bytes buffered for an incomplete frame.
        public var pending: Int {
            get { storage.pending }
            _modify { unique(); yield &storage.pending }
        }
        public var pendingNeed: Int? {
            get { storage.pendingNeed }
            _modify { unique(); yield &storage.pendingNeed }
        }
        public var dropped: [String] {
            get { storage.dropped }
            _modify { unique(); yield &storage.dropped }
        }

        /// Which result this is: records repeating a payload share one (`advertisingResult`), and
        /// a copy keeps it until it is changed.
        public var identity: ObjectIdentifier { ObjectIdentifier(storage) }
    }

    /// Matches, reassembles (when the plugin declares framing) and decodes one ATT value.
    public func process(
        service: BluetoothUUID?, characteristic: BluetoothUUID?, handle: UInt16,
        direction: PluginDirection, device: UInt64, value: UnsafeRawBufferPointer,
        timeMicroseconds: Int64
    ) -> Result? {
        guard let (i, m, byHandle) = match(service: service, characteristic: characteristic, handle: handle, direction: direction) else {
            return nil
        }
        return run(
            i, m, handle: handle, direction: direction, byHandle: byHandle, device: device, value: value,
            timeMicroseconds: timeMicroseconds)
    }

    func run(
        _ i: Int, _ m: PluginMatch, handle: UInt16, direction: PluginDirection, byHandle: Bool, device: UInt64,
        value: UnsafeRawBufferPointer, timeMicroseconds: Int64
    ) -> Result? {
        let p = plugins[i]
        var r = Result(plugin: p.id, match: m, handle: handle, direction: direction, namedByHandle: byHandle, messages: [], pending: 0, pendingNeed: nil, dropped: [])
        if let a = assemblers[i] {
            let out = a.push(
                FrameAssembler.StreamKey(device: device, handle: handle, direction: direction), value,
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
    public func isResponse(
        _ response: DecodedMessage, direction responseDirection: PluginDirection,
        to request: DecodedMessage, direction requestDirection: PluginDirection,
        elapsedMicroseconds: Int64
    ) -> Bool {
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
        self.init(
            plugin: plugin,
            match: PluginMatch(
                service: nil, characteristic: BluetoothUUID(0), handle: nil, directions: Self.notify,
                advertising: AdvertisingMatch(target: target)),
            handle: 0, direction: .notify, namedByHandle: false, messages: [], pending: 0, pendingNeed: nil, dropped: [])
    }
}
