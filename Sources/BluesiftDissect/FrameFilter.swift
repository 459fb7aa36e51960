import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// Which records a command reads: the same conditions, with the same meaning, on every
/// command that reads captures (the CLI's `FilterOptions` builds one). All given conditions
/// must hold. Conditions by what a user knows (characteristic, peer, time, errors) need the
/// analyzer's state, so matching is `matches(_:analyzer:)`, called once per record in order.
public struct FrameFilter: Sendable {
    public var connection: UInt16?
    /// `--protocol` names (`protocolNames`: a layer's key or a group such as `classic`); a
    /// record matches when it carries any of their layers.
    public var protocols: Set<String> = [] {
        didSet { protocolLayers = protocols.reduce(into: []) { $0.formUnion(FrameLayer.layers(named: $1) ?? []) } }
    }
    var protocolLayers: DecodedFrame.Layers = []
    public var attOpcodes: Set<UInt8> = []
    public var handles: Set<UInt16> = []
    public var frames: FrameSet?
    /// ATT records addressing this characteristic (its declaration, value or descriptors).
    public var characteristic: Attribute?
    /// ATT records inside this service (with `characteristic`: that characteristic of it).
    public var service: Attribute?
    /// Records of every connection to one of these devices, and their advertising.
    public var peerAddresses: Set<BDAddr> = []
    /// Advertised names (case-insensitive) standing for devices; `resolvePeerNames` turns
    /// them into addresses before the records are read.
    public var peerNames: [String] = []
    public var since: TimeBound?
    public var until: TimeBound?
    /// Only records with decode errors, ATT Error Responses, SMP Pairing Failed, HCI events
    /// with a failure status and disconnections for other reasons than a host's or user's
    /// choice.
    public var errorsOnly = false
    /// Conditions of protocol modules' filter options (`--mesh-src`; `ProtocolRegistry.filters`).
    public var modules: [any ModuleFrameFilter] = []

    /// Time of the first record: what `+12.5s` counts from.
    var origin: Timestamp?
    /// Recent ATT requests that matched the attribute conditions (characteristic, service,
    /// handle): their responses, which carry no handle, match with them. ATT allows one
    /// outstanding request per bearer, so a few suffice.
    var matchedRequests = [Int](repeating: -1, count: 16)
    var nextRequestSlot = 0

    public init() {}

    /// Frame numbers as tshark users type them (`347,431-435`): ranges, sorted and merged.
    public struct FrameSet: Sendable, Equatable {
        public private(set) var ranges: [ClosedRange<Int>] = []

        public init(_ ranges: [ClosedRange<Int>]) {
            for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = self.ranges.last, r.lowerBound <= last.upperBound &+ 1 {
                    self.ranges[self.ranges.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
                } else {
                    self.ranges.append(r)
                }
            }
        }

        @inlinable public func contains(_ frame: Int) -> Bool {
            // One or two ranges as a rule: a walk beats a search.
            for r in ranges where frame <= r.upperBound { return frame >= r.lowerBound }
            return false
        }

        public var last: Int { ranges.last?.upperBound ?? 0 }
    }

    /// A characteristic or service, by UUID or by name ("Battery Level", "battery-level").
    public enum Attribute: Sendable, Equatable {
        case uuid(BluetoothUUID)
        case name(String)

        /// A UUID ("2a19", "0x2A19", 128-bit with or without dashes), else a name.
        public init(_ text: String) {
            if let u = BluetoothUUID(string: text) { self = .uuid(u) } else { self = .name(Self.fold(text)) }
        }

        public func matches(_ uuid: BluetoothUUID) -> Bool {
            switch self {
            case .uuid(let u): return u == uuid
            case .name(let n): return GATTNames.name(uuid).map { Self.fold($0) == n } ?? false
            }
        }

        /// Lower case, without spaces, dashes or underscores.
        static func fold(_ s: String) -> String {
            String(s.lowercased().unicodeScalars.filter { $0 != " " && $0 != "-" && $0 != "_" })
        }
    }

    /// An absolute time, an offset from the capture's first record, or a time of day (UTC, as
    /// `dump` prints it) on the capture's date.
    public enum TimeBound: Sendable, Equatable {
        case absolute(Timestamp)
        case relative(microseconds: Int64)
        case timeOfDay(nanoseconds: Int64)

        /// RFC 3339 (`2026-07-19T11:01:49.5Z`, `…+02:00`; without a zone, UTC as `dump` prints
        /// times), a time of day as `dump` prints it (`11:01:49.5`, `11:01`), or `+12.5s` /
        /// `+250ms` / `+5min` / `+1h` / `+90` (seconds) after the first record.
        public init?(_ text: String) {
            if text.hasPrefix("+") {
                var body = Substring(text.dropFirst())
                var scale = 1_000_000.0
                if body.hasSuffix("ms") {
                    body = body.dropLast(2); scale = 1000
                } else if body.hasSuffix("us") || body.hasSuffix("µs") {
                    body = body.dropLast(2); scale = 1
                } else if body.hasSuffix("s") {
                    body = body.dropLast()
                } else if body.hasSuffix("min") {
                    body = body.dropLast(3); scale = 60_000_000
                } else if body.hasSuffix("m") {
                    body = body.dropLast(); scale = 60_000_000
                } else if body.hasSuffix("h") {
                    body = body.dropLast(); scale = 3_600_000_000
                }
                guard let v = Double(body), v >= 0, v.isFinite, v * scale < 9e18 else { return nil }
                self = .relative(microseconds: Int64((v * scale).rounded()))
                return
            }
            if let ns = Self.parseTimeOfDay(text) { self = .timeOfDay(nanoseconds: ns); return }
            guard let t = Self.parseRFC3339(text) else { return nil }
            self = .absolute(t)
        }

        /// A time of day is the first such time at or after the first record: on its date, or
        /// the next day for a capture that runs past midnight (dump's times read on from the
        /// first record).
        public func resolve(_ origin: Timestamp) -> Timestamp {
            switch self {
            case .absolute(let t): return t
            case .relative(let us):
                return Timestamp(seconds: origin.seconds, overflowingNanoseconds: Int64(origin.nanoseconds) + us * 1000)
            case .timeOfDay(let ns):
                var day = origin.seconds - ((origin.seconds % 86_400) + 86_400) % 86_400
                var t = Timestamp(seconds: day, overflowingNanoseconds: ns)
                if t < origin { day += 86_400; t = Timestamp(seconds: day, overflowingNanoseconds: ns) }
                return t
            }
        }

        /// The `n` decimal digits of `b` at `from`; nil when one is not a digit or is missing.
        static func decimal(_ b: [UInt8], _ from: Int, _ n: Int) -> Int64? {
            guard from >= 0, from + n <= b.count else { return nil }
            var v: Int64 = 0
            for c in b[from..<from + n] {
                guard c >= 0x30 && c <= 0x39 else { return nil }
                v = v * 10 + Int64(c - 0x30)
            }
            return v
        }

        /// `HH:MM[:SS[.frac]]`, optionally ending in `Z`: nanoseconds since midnight.
        static func parseTimeOfDay(_ s: String) -> Int64? {
            var b = Array(s.utf8)
            if b.last == 0x5A || b.last == 0x7A { b.removeLast() }
            guard b.count >= 5, b[2] == 0x3A else { return nil }
            func num(_ from: Int, _ n: Int) -> Int64? { decimal(b, from, n) }
            guard let h = num(0, 2), let m = num(3, 2), h < 24, m < 60 else { return nil }
            var sec: Int64 = 0, nanos: Int64 = 0, i = 5
            if i < b.count {
                guard b[i] == 0x3A, let s = num(i + 1, 2), s < 60 else { return nil }
                sec = s; i += 3
                if i < b.count {
                    guard b[i] == 0x2E else { return nil }
                    i += 1
                    var digits = 0
                    while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                        if digits < 9 { nanos = nanos * 10 + Int64(b[i] - 0x30); digits += 1 }
                        i += 1
                    }
                    guard digits > 0, i == b.count else { return nil }
                    for _ in digits..<9 { nanos *= 10 }
                }
            }
            return ((h * 60 + m) * 60 + sec) * 1_000_000_000 + nanos
        }

        /// `YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM]`; a space may stand for `T`; no zone is UTC.
        static func parseRFC3339(_ s: String) -> Timestamp? {
            let b = Array(s.utf8)
            guard b.count >= 19 else { return nil }
            func num(_ from: Int, _ n: Int) -> Int64? { decimal(b, from, n) }
            guard let y = num(0, 4), b[4] == 0x2D, let mo = num(5, 2), b[7] == 0x2D, let d = num(8, 2),
                b[10] == 0x54 || b[10] == 0x74 || b[10] == 0x20,
                let h = num(11, 2), b[13] == 0x3A, let mi = num(14, 2), b[16] == 0x3A, let sec = num(17, 2),
                (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, sec < 61
            else { return nil }
            var i = 19
            var nanos: Int64 = 0
            if i < b.count, b[i] == 0x2E {
                i += 1
                var digits = 0
                while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                    if digits < 9 { nanos = nanos * 10 + Int64(b[i] - 0x30); digits += 1 }
                    i += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<9 { nanos *= 10 }
            }
            var offset: Int64 = 0
            if i == b.count {
            } // no zone: UTC, as dump and info print times
            else if b[i] == 0x5A || b[i] == 0x7A {
                i += 1
            } else if b[i] == 0x2B || b[i] == 0x2D, let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A, let om = num(i + 4, 2) {
                offset = (oh * 3600 + om * 60) * (b[i] == 0x2D ? -1 : 1)
                i += 6
            } else {
                return nil
            }
            guard i == b.count else { return nil }
            // Days from civil (Howard Hinnant's algorithm).
            let yy = mo <= 2 ? y - 1 : y
            let era = (yy >= 0 ? yy : yy - 399) / 400
            let yoe = yy - era * 400
            let mp = (mo + 9) % 12
            let doy = (153 * mp + 2) / 5 + d - 1
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
            let days = era * 146097 + doe - 719468
            return Timestamp(seconds: days * 86400 + h * 3600 + mi * 60 + sec - offset, nanoseconds: Int32(nanos))
        }
    }

    public var isEmpty: Bool {
        connection == nil && protocols.isEmpty && attOpcodes.isEmpty && handles.isEmpty && frames == nil
            && characteristic == nil && service == nil && peerAddresses.isEmpty && peerNames.isEmpty
            && since == nil && until == nil && !errorsOnly && modules.isEmpty
    }

    /// Characteristic and service conditions read the GATT names: the analyzer must name.
    public var needsNaming: Bool { characteristic != nil || service != nil }

    /// True once no later frame can match (frame range passed): lets a command stop reading.
    public func isExhausted(after frame: Int) -> Bool {
        if let r = frames { return frame >= r.last }
        return false
    }

    /// The conditions on the decoded layers alone (connection, protocol, opcode, handle, frames).
    public func matches(_ f: DecodedFrame) -> Bool {
        matchesLayers(f) && matchesHandle(f)
    }

    func matchesHandle(_ f: DecodedFrame) -> Bool {
        if !handles.isEmpty {
            guard let att = f.att, let h = att.handle ?? att.errorHandle, handles.contains(h) else { return false }
        }
        return true
    }

    /// Connection, protocol, opcode and frames.
    func matchesLayers(_ f: DecodedFrame) -> Bool {
        if let r = frames, !r.contains(f.record.frame) { return false }
        if let c = connection, f.connection != c { return false }
        if !protocols.isEmpty {
            if f.layers.isDisjoint(with: protocolLayers) { return false }
        }
        if !attOpcodes.isEmpty {
            guard let att = f.att, attOpcodes.contains(att.opcode.rawValue) else { return false }
        }
        for m in modules where !m.matches(f) { return false }
        return true
    }

    /// Every condition. Call it for every record in file order (the first record fixes what
    /// relative times count from), after `analyzer.analyze` produced `a`.
    public mutating func matches(_ a: AnalyzedFrame, analyzer: Analyzer) -> Bool {
        let f = a.decoded
        let t = f.record.timestamp
        if origin == nil { origin = t }
        if !matchesLayers(f) { return false }
        if let s = since, t < s.resolve(origin!) { return false }
        if let u = until, t > u.resolve(origin!) { return false }
        if !handles.isEmpty || characteristic != nil || service != nil {
            if matchesHandle(f) && matchesAttribute(a) {
                if f.layers.contains(.att) {
                    matchedRequests[nextRequestSlot] = f.record.frame
                    nextRequestSlot = (nextRequestSlot + 1) % matchedRequests.count
                }
            } else if handles.isEmpty, listsAttribute(f, analyzer) {
                // A discovery response that lists the characteristic's declaration or descriptors.
            } else {
                // A response (Read Response, Write Response…) belongs to its request's attribute.
                guard let req = f.attTransaction?.requestFrame, matchedRequests.contains(req) else { return false }
            }
        }
        if !peerAddresses.isEmpty || !peerNames.isEmpty, !Self.involves(f, peerAddresses, analyzer.decoder) { return false }
        if errorsOnly, !Self.isError(f) { return false }
        return true
    }

    func matchesAttribute(_ a: AnalyzedFrame) -> Bool {
        guard characteristic != nil || service != nil else { return true }
        guard let loc = a.location else { return false }
        if let s = service, !s.matches(loc.service) { return false }
        if let c = characteristic {
            guard let uuid = loc.characteristic, c.matches(uuid) else { return false }
        }
        return true
    }

    /// A discovery response whose list holds an attribute of the characteristic (or service):
    /// Read By Type Response (Core 5.4 Vol 3 Part F §3.4.4.2: the characteristic declarations
    /// of Vol 3 Part G §4.6.1) and Find Information Response (Part F §3.4.3.2: descriptor
    /// discovery, Part G §4.7.1). Their entries are named once the analyzer has seen them.
    func listsAttribute(_ f: DecodedFrame, _ analyzer: Analyzer) -> Bool {
        guard characteristic != nil || service != nil, f.layers.contains(.att), let conn = f.connection else { return false }
        let att = f.attStorage
        guard att.opcode == .readByTypeResponse || att.opcode == .findInformationResponse else { return false }
        let serverIsPeer = GATTTracker.serverIsPeer(opcode: att.opcode, direction: GATTTracker.direction(of: f))
        func named(_ h: UInt16) -> Bool {
            guard let (loc, _) = analyzer.gatt.locate(adapter: f.record.adapter, connection: conn, handle: h, serverIsPeer: serverIsPeer) else { return false }
            if let s = service, !s.matches(loc.service) { return false }
            if let c = characteristic { guard let uuid = loc.characteristic, c.matches(uuid) else { return false } }
            return true
        }
        if let list = att.attributeData { for e in list where named(e.handle) { return true } }
        if let list = att.findInformation { for e in list where named(e.handle) { return true } }
        return false
    }

    /// The record belongs to a connection to one of `peers`, or names one of them (connection
    /// requests and completions, advertising reports).
    static func involves(_ f: DecodedFrame, _ peers: Set<BDAddr>, _ decoder: ProtocolDecoder) -> Bool {
        if let c = f.connection, let p = decoder.connection(adapter: f.record.adapter, handle: c)?.peer {
            return peers.contains(p)
        }
        if f.layers.contains(.hci), let p = f.hciStorage.peer, peers.contains(p) { return true }
        if f.layers.contains(.adv) {
            var found = false
            f.advStorage.forEachReport { r in if let a = r.address, peers.contains(a) { found = true } }
            return found
        }
        return false
    }

    /// Disconnection reasons that are someone's choice, not a failure (Core 5.4 Vol 1 Part F
    /// §2.14/§2.17: Remote User Terminated Connection, Connection Terminated by Local Host).
    static let normalDisconnectReasons: Set<UInt8> = [0x13, 0x16]

    /// Decode errors, ATT Error Response, SMP Pairing Failed, an HCI event reporting a failure
    /// status (a failed command, connection or encryption), a disconnection for a failure reason.
    public static func isError(_ f: DecodedFrame) -> Bool {
        !f.errors.isEmpty || isFailure(f)
    }

    /// What the protocols report as failed (not damage): ATT Error Response (not one that ends
    /// a discovery, `ATTPDU.endsDiscovery`), SMP Pairing
    /// Failed, an HCI event with a failure status, a disconnection for a failure reason.
    public static func isFailure(_ f: DecodedFrame) -> Bool {
        if f.layers.contains(.att), f.attStorage.opcode == .errorResponse, !f.attStorage.endsDiscovery { return true }
        if let smp = f.smp, smp.smpCode == .pairingFailed { return true }
        if f.layers.contains(.hci), f.record.kind == .event {
            let h = f.hciStorage
            if let s = h.status, s != .success { return true }
            if h.eventCode == .disconnectionComplete, let r = h.reason, !normalDisconnectReasons.contains(r.rawValue) { return true }
        }
        return false
    }

    /// Turns `peerNames` into addresses: devices that advertised one of the names (Complete
    /// or Shortened Local Name) or answered a Remote Name Request with it, anywhere in the
    /// capture. Returns the names no device used.
    public mutating func resolvePeerNames(_ reader: any CaptureReader) -> [String] {
        guard !peerNames.isEmpty else { return [] }
        let wanted = Set(peerNames.map { $0.lowercased() })
        var found: Set<String> = []
        let decoder = ProtocolDecoder()
        var f = DecodedFrame(record: .empty)
        while let r = reader.next() {
            guard r.kind == .event || r.kind == .ll else { continue }
            decoder.decode(r, into: &f)
            if f.layers.contains(.adv) {
                f.advStorage.forEachReport { rep in
                    if let a = rep.address, let n = rep.localName?.lowercased(), wanted.contains(n) {
                        peerAddresses.insert(a); found.insert(n)
                    }
                }
            } else if f.layers.contains(.hci), f.hciStorage.kind == .event, f.hciStorage.eventCode == .remoteNameRequestComplete,
                let a = f.hciStorage.peer
            {
                // §7.7.7 Remote Name Request Complete: status, BD_ADDR, 248-byte name (NUL-padded).
                let p = f.hciStorage.parameters
                if p.count > 7, p[0] == 0 {
                    let name = String(decoding: p[7...].prefix { $0 != 0 }, as: UTF8.self).lowercased()
                    if wanted.contains(name) { peerAddresses.insert(a); found.insert(name) }
                }
            }
        }
        return peerNames.filter { !found.contains($0.lowercased()) }
    }

    /// `--protocol` names: each layer's key and each group (`FrameLayer`).
    public static var protocolNames: Set<String> { FrameLayer.names }

    /// `--att-opcode` names: every opcode's spec name in lower case with dashes
    /// ("write-request", "handle-value-notification") and the short forms below.
    public static let attOpcodeAliases: [String: [UInt8]] = {
        let o: [String: [ATTOpcode]] = [
            "write": [.writeRequest, .writeCommand, .signedWriteCommand], "read": [.readRequest, .readBlobRequest],
            "notify": [.handleValueNotification, .multipleHandleValueNotification],
            "notification": [.handleValueNotification, .multipleHandleValueNotification],
            "indicate": [.handleValueIndication], "indication": [.handleValueIndication], "error": [.errorResponse],
            "mtu": [.exchangeMTURequest, .exchangeMTUResponse], "write-cmd": [.writeCommand], "prepare-write": [.prepareWriteRequest],
            "execute-write": [.executeWriteRequest], "confirmation": [.handleValueConfirmation]
        ]
        return o.mapValues { $0.map(\.rawValue) }
    }()

    /// The opcodes an `--att-opcode` value stands for: a number (0x12, 18) or a name.
    public static func attOpcodes(named text: String) -> [UInt8]? {
        let key = text.lowercased().replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "_", with: "-")
        if let v = attOpcodeAliases[key] { return v }
        for v in UInt8.min...UInt8.max {
            let name = ATTOpcode(rawValue: v).name
            if name != "Unknown", name.lowercased().replacingOccurrences(of: " ", with: "-") == key { return [v] }
        }
        return nil
    }
}
