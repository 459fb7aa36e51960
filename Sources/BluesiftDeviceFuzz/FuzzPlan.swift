import BluesiftWire
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins
import BluesiftReplay

/// The recorded session split for fuzzing: the set-up replayed as recorded before every
/// variant (MTU exchange, CCCD writes) and the write sequence that variants mutate.
public struct FuzzBase: Sendable {
    public var script: ReplayScript
    /// Indices into `script.steps`.
    public var setup: [Int]
    public var sequence: [FuzzAction]
    /// ATT error codes the recording shows (an answer with another one is a finding).
    public var recordedErrors: Set<Int>
    /// Vendor frames among the sequence's writes: the sequence indices each spans, the plugin,
    /// and its decode.
    public var frames: [VendorFrame] = []

    public struct VendorFrame: Sendable {
        public var steps: [Int]
        public var plugin: Plugin
        public var message: DecodedMessage
    }

    public init(script: ReplayScript, plugins: [Plugin]) {
        self.script = script
        setup = script.steps.indices.filter { script.steps[$0].kind == "mtu" || script.steps[$0].kind == "subscribe" }
        recordedErrors = Set(script.steps.compactMap(\.expect.errorCode))
        sequence = []
        for (i, s) in script.steps.enumerated() where s.kind == "write" || s.kind == "read" {
            guard let t = s.target, s.refuse == nil else { continue }
            sequence.append(
                FuzzAction(kind: s.kind == "read" ? .read : .write, op: s.kind == "write" ? (s.op ?? "request") : nil, target: t, value: s.value ?? "", delayMs: s.delayMs, step: i))
        }
        // Reassemble the vendor frames the writes carry, with a set of the plugins per characteristic.
        let set = PluginSet(plugins)
        var pending: [BluetoothUUID: [Int]] = [:]
        for (i, a) in sequence.enumerated() where a.kind == .write {
            guard let c = a.target.characteristic.flatMap(BluetoothUUID.init(string:)) else { continue }
            let s = a.target.service.flatMap(BluetoothUUID.init(string:))
            guard let (p, _, _) = set.match(service: s, characteristic: c, handle: 0, direction: .write), let bytes = Hex.parse(a.value) else { continue }
            pending[c, default: []].append(i)
            let r = bytes.withUnsafeBytes { set.process(service: s, characteristic: c, handle: 0, direction: .write, device: 0, value: $0, timeMicroseconds: 0) }
            guard let m = r?.messages.first else { continue }
            frames.append(VendorFrame(steps: pending[c] ?? [i], plugin: plugins[p], message: m))
            pending[c] = []
        }
    }
}

/// Makes the variants: plugin field mutations re-encoded with valid framing (or, `blind`, bytes
/// changed as they are), ATT-level mutations, and sequence mutations. The first round covers
/// each single mutation once, in an order drawn from the seed; later rounds stack two.
public struct FuzzPlanner {
    public let base: FuzzBase
    public let live: GATTDatabase
    public let blind: Bool
    /// Mutate only steps aimed at these characteristics (empty: all).
    public let characteristics: Set<String>
    public var rng: FuzzRandom
    public private(set) var firstRound: [FuzzVariant] = []
    var next = 0

    public init(base: FuzzBase, live: GATTDatabase, blind: Bool, characteristics: [String] = [], seed: UInt64) {
        self.base = base; self.live = live; self.blind = blind
        self.characteristics = Set(characteristics.map { $0.lowercased() })
        rng = FuzzRandom(seed: seed)
        var all = blind ? blindMutations() : pluginMutations()
        all += attMutations() + sequenceMutations()
        rng.shuffle(&all)
        firstRound = all
    }

    func selected(_ t: ReplayScript.Target) -> Bool {
        characteristics.isEmpty || characteristics.contains((t.characteristic ?? "").lowercased())
    }

    /// The next variant: the first round in order, then random pairs of first-round mutations.
    public mutating func nextVariant() -> FuzzVariant? {
        defer { next += 1 }
        if next < firstRound.count { return firstRound[next] }
        guard firstRound.count > 1 else { return nil }
        // Stack a sequence or ATT mutation on top of a field mutation of another step.
        let a = firstRound[rng.below(firstRound.count)]
        if let r = a.rebuild, rng.below(2) == 0, let v = pluginVariant(frame: r.frame, fields: stackedFields(frame: r.frame)) { return v }
        let b = firstRound[rng.below(firstRound.count)]
        return combine(a, b)
    }

    /// Two variants' changes applied together where they touch different steps.
    func combine(_ a: FuzzVariant, _ b: FuzzVariant) -> FuzzVariant {
        var actions = a.actions
        let changedA = Set(a.actions.compactMap { $0.mutation == nil ? nil : $0.step })
        for x in b.actions where x.mutation != nil && x.kind != .raw && x.kind != .prepareQueue {
            guard let s = x.step, !changedA.contains(s), let i = actions.firstIndex(where: { $0.step == s && $0.mutation == nil }) else { continue }
            actions[i] = x
        }
        return FuzzVariant(actions: actions, mutations: a.mutations + b.mutations)
    }

    // MARK: plugin

    /// Values to try in a field, at and just past what its layout allows.
    mutating func candidates(_ shape: PluginFieldShape, recorded: PluginValue?) -> [(PluginValue, String)] {
        switch shape.kind {
        case .integer, .enumeration:
            guard let r = shape.integerRange else { return [] }
            var out: [(Int64, String)] = [(r.lowerBound, "minimum"), (r.upperBound, "maximum"), (r.upperBound - 1, "maximum - 1")]
            if case .enumeration(_, let values) = shape.kind, let top = values.max() {
                out.append((top + 1, "past the enum's last value"))
                if let low = values.min(), low > r.lowerBound { out.append((low - 1, "below the enum's first value")) }
            }
            if let v = recorded?.integer {
                out.append((v &+ 1, "recorded + 1")); out.append((v &- 1, "recorded - 1"))
                if v != 0, v < r.upperBound / 2 { out.append((v * 2, "recorded × 2")) }
            }
            var seen = Set<Int64>()
            return out.filter { r.contains($0.0) && $0.0 != recorded?.integer && seen.insert($0.0).inserted }
                .map { (r.lowerBound < 0 ? PluginValue.int($0.0) : PluginValue.uint(UInt64($0.0)), $0.1) }
        case .string:
            let n = { if case .string(let s)? = recorded { s.utf8.count } else { 0 } }()
            return [(0, "empty"), (n + 1, "recorded length + 1"), (n * 2 + 1, "twice the recorded length"), (250, "250 bytes")]
                .filter { $0.0 != n }.map { (PluginValue.string(String(repeating: "A", count: $0.0)), $0.1) }
        case .bytes:
            let n = { if case .bytes(let b)? = recorded { b.count } else { 0 } }()
            return [(0, "empty"), (n + 1, "recorded length + 1"), (250, "250 bytes")].filter { $0.0 != n }
                .map { (PluginValue.bytes([UInt8](repeating: 0xFF, count: $0.0)), $0.1) }
        case .list(let count):
            guard case .list(let items)? = recorded else { return [] }
            var out: [(PluginValue, String)] = [(.list([]), "no items")]
            if let last = items.last { out.append((.list(items + [last]), "one item more" + (count.map { " than the \($0) declared" } ?? ""))) }
            if items.count > 1 { out.append((.list(Array(items.dropLast())), "one item fewer")) }
            return out
        case .other:
            return []
        }
    }

    /// Field values of a frame with `changes` applied, re-encoded by its plugin and split over
    /// writes as the recording split it.
    func reencode(frame f: Int, changes: [String: PluginValue]) -> [UInt8]? {
        let vf = base.frames[f]
        var ordered = vf.message.fields
        for i in ordered.indices { if let v = changes[ordered[i].name] { ordered[i].value = v } }
        var d: [String: PluginValue] = [:]
        for x in ordered { d[x.name] = x.value }
        for (k, v) in vf.message.header where d[k] == nil && changes[k] == nil { d[k] = .int(v) }
        for (k, v) in changes where d[k] == nil { d[k] = v }
        return try? vf.plugin.encode(message: vf.message.message, fields: d, ordered: ordered, nullRaws: vf.message.header)
    }

    /// The sequence with frame `f` replaced by `bytes`, cut at the recorded write sizes.
    func replacing(frame f: Int, with bytes: [UInt8], note: String) -> [FuzzAction] {
        let steps = base.frames[f].steps
        var actions = base.sequence
        let sizes = steps.map { (Hex.parse(base.sequence[$0].value) ?? []).count }
        var chunks: [[UInt8]] = [], at = 0
        for (k, n) in sizes.enumerated() {
            let end = k == sizes.count - 1 ? bytes.count : min(bytes.count, at + n)
            chunks.append(Array(bytes[min(at, bytes.count)..<end])); at = end
        }
        // A longer frame than recorded: the extra bytes go in the last write (split again when
        // it no longer fits, by the replayer's prepared write).
        for (k, i) in steps.enumerated() {
            actions[i].value = Hex.string(chunks[k])
            actions[i].mutation = note
        }
        // A frame now empty in a write: that write is dropped.
        return actions.enumerated().filter { e in !(steps.contains(e.offset) && e.element.value.isEmpty) }.map(\.element)
    }

    func pluginVariant(frame f: Int, fields: [String: (PluginValue, String)]) -> FuzzVariant? {
        guard !fields.isEmpty, let bytes = reencode(frame: f, changes: fields.mapValues(\.0)) else { return nil }
        let m = base.frames[f].message
        let shapes = base.frames[f].plugin.fieldShapes(message: m.message)
        let notes = fields.keys.sorted().map { k -> String in
            let s = shapes.first { $0.name == k }
            var flags: [String] = []
            if s?.volatile == true { flags.append("volatile") }
            if s?.checksumCovered == true { flags.append("checksum recomputed") }
            return "\(m.message).\(k) = \(fields[k]!.0.description) (\(fields[k]!.1)\(flags.isEmpty ? "" : "; " + flags.joined(separator: ", ")))"
        }
        let note = notes.joined(separator: "; ")
        var v = FuzzVariant(
            actions: replacing(frame: f, with: bytes, note: note),
            mutations: [FuzzMutation(layer: "plugin", summary: note, message: m.message, fields: fields.mapValues { $0.0.description })])
        v.rebuild = PluginRebuild(frame: f, fields: fields)
        return v
    }

    /// Two or three fields of the frame mutated at once (later rounds).
    mutating func stackedFields(frame f: Int) -> [String: (PluginValue, String)] {
        let m = base.frames[f].message
        var out: [String: (PluginValue, String)] = [:]
        let shapes = base.frames[f].plugin.fieldShapes(message: m.message)
        guard !shapes.isEmpty else { return out }
        for _ in 0..<(2 + rng.below(2)) {
            let s = shapes[rng.below(shapes.count)]
            let c = candidates(s, recorded: m[s.name])
            if !c.isEmpty { out[s.name] = c[rng.below(c.count)] }
        }
        return out
    }

    mutating func pluginMutations() -> [FuzzVariant] {
        var out: [FuzzVariant] = []
        for (f, vf) in base.frames.enumerated() where selected(base.sequence[vf.steps[0]].target) {
            for shape in vf.plugin.fieldShapes(message: vf.message.message) {
                for c in candidates(shape, recorded: vf.message[shape.name]) {
                    if let v = pluginVariant(frame: f, fields: [shape.name: c]) { out.append(v) }
                }
            }
        }
        return out
    }

    /// `--blind`: the recorded write values with bytes changed where they are, nothing
    /// recomputed (as a byte-level fuzzer would).
    mutating func blindMutations() -> [FuzzVariant] {
        var out: [FuzzVariant] = []
        for (i, a) in base.sequence.enumerated() where a.kind == .write && selected(a.target) {
            guard let bytes = Hex.parse(a.value), !bytes.isEmpty else { continue }
            for p in 0..<bytes.count {
                for (v, what) in [(UInt8(0x00), "zero"), (UInt8(0xFF), "all ones"), (bytes[p] ^ 0x80, "top bit flipped")] where v != bytes[p] {
                    var b = bytes; b[p] = v
                    out.append(single(i, value: b, layer: "blind", note: "byte \(p) = \(Hex.fixed(UInt64(v), width: 2)) (\(what))"))
                }
            }
        }
        return out
    }

    func single(_ i: Int, value: [UInt8], op: String? = nil, layer: String, note: String) -> FuzzVariant {
        var actions = base.sequence
        actions[i].value = Hex.string(value)
        if let op { actions[i].op = op }
        actions[i].mutation = note
        let what = actions[i].target.characteristic ?? Hex.fixed(UInt64(actions[i].target.handle), width: 4)
        return FuzzVariant(actions: actions, mutations: [FuzzMutation(layer: layer, summary: "step \(i + 1) (\(what)): \(note)")])
    }

    func appended(_ extra: [FuzzAction], note: String) -> FuzzVariant {
        FuzzVariant(
            actions: base.sequence
                + extra.map {
                    var a = $0; a.mutation = note; return a
                }, mutations: [FuzzMutation(layer: "att", summary: note)])
    }

    static func target(_ db: GATTDatabase, handle: UInt16) -> ReplayScript.Target {
        var t = ReplayScript.Target.handle(Int(handle))
        for s in db.services {
            for (n, c) in s.characteristics.enumerated() {
                let instance = s.characteristics[..<n].filter { $0.uuid == c.uuid }.count
                if c.valueHandle == handle || c.descriptors.contains(where: { $0.handle == handle }) {
                    t.service = s.uuid.description; t.characteristic = c.uuid.description; t.instance = instance
                    t.descriptor = c.descriptors.first { $0.handle == handle }?.uuid.description
                    return t
                }
            }
        }
        return t
    }

    // MARK: ATT

    mutating func attMutations() -> [FuzzVariant] {
        var out: [FuzzVariant] = []
        let mtu = base.script.source.mtu ?? 23
        var longest: [Int: Int] = [:]
        for a in base.sequence where a.kind == .write { longest[a.target.handle] = max(longest[a.target.handle] ?? 0, (Hex.parse(a.value) ?? []).count) }
        var seenKind = Set<String>()
        for (i, a) in base.sequence.enumerated() where a.kind == .write && selected(a.target) {
            let bytes = Hex.parse(a.value) ?? []
            let recordedMax = longest[a.target.handle] ?? bytes.count
            // Longer than this characteristic was ever written (sent as the recorded write kind,
            // as prepared writes past the MTU), and longer than the MTU in one PDU.
            if (Hex.parse(a.value) ?? []).count == recordedMax {
                for extra in [1, 2, 4, 8] {
                    out.append(single(i, value: bytes + [UInt8](repeating: 0x00, count: extra), layer: "att", note: "value \(recordedMax + extra) bytes, longer than the \(recordedMax) recorded"))
                }
                var over = base.sequence
                let pad = [UInt8](repeating: 0x00, count: max(0, mtu - 3 + 1 - bytes.count))
                over[i] = FuzzAction(
                    kind: .raw, op: a.op, target: a.target, value: Hex.string(bytes + pad), opcode: Int((a.op == "command" ? ATTOpcode.writeCommand : ATTOpcode.writeRequest).rawValue), delayMs: a.delayMs, step: a.step,
                    mutation: "value of \(mtu - 2) bytes in one PDU, over the MTU of \(mtu)")
                out.append(FuzzVariant(actions: over, mutations: [FuzzMutation(layer: "att", summary: "step \(i + 1): \(over[i].mutation!)")]))
            }
            // The wrong write kind, once per characteristic and kind.
            for op in ["request", "command", "prepared", "signed"] where op != a.op && seenKind.insert("\(a.target.handle)/\(op)").inserted {
                if op == "signed" {
                    var x = base.sequence
                    // Signed Write Command (Vol 3 Part F §3.4.5.4): value then a 12-byte signature, here zeros.
                    x[i] = FuzzAction(
                        kind: .raw, op: "signed", target: a.target, value: Hex.string(bytes + [UInt8](repeating: 0, count: 12)), opcode: Int(ATTOpcode.signedWriteCommand.rawValue), delayMs: a.delayMs,
                        step: a.step, mutation: "sent as a Signed Write Command (zero signature)")
                    out.append(FuzzVariant(actions: x, mutations: [FuzzMutation(layer: "att", summary: "step \(i + 1): \(x[i].mutation!)")]))
                } else {
                    out.append(single(i, value: bytes, op: op, layer: "att", note: "sent as a write \(op) instead of \(a.op ?? "request")"))
                }
            }
        }
        // CCCD values the recording never wrote.
        for s in live.services {
            for c in s.characteristics {
                for d in c.descriptors where d.uuid == BluetoothUUID(UInt32(0x2902)) {
                    let t = Self.target(live, handle: d.handle)
                    guard selected(t) else { continue }
                    for v: [UInt8] in [[0x02, 0x00], [0x03, 0x00], [0xFF, 0xFF], [0x01], [0x01, 0x00, 0x00]] {
                        out.append(appended([FuzzAction(kind: .write, op: "request", target: t, value: Hex.string(v))], note: "CCCD of \(c.uuid) written \(Hex.string(v))"))
                    }
                }
            }
        }
        // Reads of every handle, in one variant (minimisation isolates the one that mattered).
        let last = live.services.map(\.end).max() ?? 0
        if last > 0 {
            let reads = (1...last).map { FuzzAction(kind: .read, target: Self.target(live, handle: $0)) }.filter { selected($0.target) }
            if !reads.isEmpty { out.append(appended(reads, note: "read of every handle")) }
        }
        // Writes to characteristics the session never wrote.
        let written = Set(base.sequence.filter { $0.kind == .write }.map { $0.target.characteristic ?? "" })
        for s in live.services {
            for c in s.characteristics where !written.contains(c.uuid.description) && c.properties & 0x0C != 0 {
                let t = Self.target(live, handle: c.valueHandle)
                guard selected(t) else { continue }
                out.append(appended([FuzzAction(kind: .write, op: c.properties & 0x08 != 0 ? "request" : "command", target: t, value: "00")], note: "write to \(c.uuid), never written in the recording"))
            }
        }
        // A queue of prepared writes longer than any device keeps (64 × MTU-5 bytes).
        if let w = base.sequence.first(where: { $0.kind == .write && selected($0.target) }) {
            out.append(
                appended(
                    [FuzzAction(kind: .prepareQueue, target: w.target, value: Hex.string([UInt8](repeating: 0x41, count: max(1, mtu - 5))), count: 64)], note: "64 Prepare Write Requests queued (\(64 * max(1, mtu - 5)) bytes), then Execute Write"))
        }
        return out
    }

    // MARK: sequence

    func sequenceMutations() -> [FuzzVariant] {
        var out: [FuzzVariant] = []
        let seq = base.sequence
        let chosen = seq.indices.filter { selected(seq[$0].target) }
        func v(_ a: [FuzzAction], _ note: String) -> FuzzVariant { FuzzVariant(actions: a, mutations: [FuzzMutation(layer: "sequence", summary: note)]) }
        for i in chosen {
            var a = seq; a.remove(at: i)
            out.append(v(a, "step \(i + 1) dropped"))
            a = seq; var d = seq[i]; d.mutation = "duplicated"; d.delayMs = 0; a.insert(d, at: i + 1)
            out.append(v(a, "step \(i + 1) sent twice"))
            if i + 1 < seq.count {
                a = seq; a.swapAt(i, i + 1); a[i].mutation = "moved before step \(i + 1)"
                out.append(v(a, "steps \(i + 1) and \(i + 2) swapped"))
            }
        }
        if chosen.count > 1 {
            out.append(
                v(
                    Array(seq.reversed()).map {
                        var x = $0; x.mutation = "order reversed"; return x
                    }, "every step in reverse order"))
        }
        out.append(
            v(
                seq.map {
                    var x = $0; x.delayMs = 0; if x.op == "request" { x.op = "command"; x.mutation = "sent at once, without waiting for answers" }; return x
                }, "every write sent back to back as commands, faster than recorded"))
        return out
    }
}
