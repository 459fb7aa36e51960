import BluesiftWire

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

    public init(_ plugins: [Plugin]) {
        self.plugins = plugins
        for (i, p) in plugins.enumerated() {
            for m in p.matches {
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
    }

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

    /// Drops partial frames (start of another capture).
    public func reset() { for a in assemblers.values { a.reset() } }

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
