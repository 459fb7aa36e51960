import BluesiftWire
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins
import BluesiftReplay

/// Runs variants of a recorded session against a live device, one fresh connection each:
/// the recorded set-up, then the variant's steps; records each distinct reaction once,
/// minimises it and measures how often the minimised sequence reproduces it.
public final class DeviceFuzzer {
    public struct Options: Sendable {
        /// Notifications are awaited this long after a step that the recording shows answered.
        public var window: Duration = .milliseconds(300)
        /// Recorded pauses between steps are kept up to this long.
        public var maxDelay: Duration = .milliseconds(20)
        /// Variants to run (the first round covers each single mutation once).
        public var variants = 200
        /// The run's time budget (nil: only `variants` limits it): no variant, minimisation
        /// test or rerun starts once `elapsed` reaches it.
        public var time: Duration?
        /// At most this many connections a second (0: no limit).
        public var rate: Double = 0
        /// Runs of each minimised finding to measure its reproduction rate.
        public var reruns = 10
        /// Tests of candidate sequences per finding while minimising.
        public var minimiseBudget = 48
        public var pair: PairMode = .auto
        public var seed: UInt64 = 1
        public var blind = false
        public var characteristics: [String] = []
        public init() {}
    }

    /// What a run of the fuzzer tells its caller while it goes.
    public struct Progress: Sendable {
        public var variant: Int
        public var variants: Int
        public var findings: Int
        public var connections: Int
        public var phase: String
    }

    public let base: FuzzBase
    public let plugins: [Plugin]
    public var options: Options
    /// A fresh connection to the device; `recording`: write its HCI traffic there (btsnoop).
    public var connect: (_ recording: String?) throws(ReplayFault) -> any RawATTDevice
    /// Called once the connection that recorded to `path` is closed.
    public var finishRecording: (_ path: String) -> Void = { _ in }
    public var progress: ((Progress) -> Void)?
    /// Polled between runs (Ctrl-C): the fuzzer stops and returns what it has.
    public var shouldStop: () -> Bool = { false }
    /// Path for finding `n`'s reproducer (nil: none written).
    public var reproducerPath: (Int) -> String? = { _ in nil }
    /// Waits between connections for `rate` (the caller's clock; nothing is decided by it).
    public var pause: (Duration) -> Void = { _ in }
    /// Elapsed time for `time`, from the caller (tests inject a clock).
    public var elapsed: () -> Duration = { .zero }

    /// The time budget is spent: nothing more starts (a finding being minimised keeps what it has).
    var outOfTime: Bool { options.time.map { elapsed() >= $0 } ?? false }

    public private(set) var connections = 0
    var baselineDB: GATTDatabase?
    /// Live handle → value of readable characteristics that read the same on two connections
    /// (a boot counter among them): a change after a disconnection means the device reset.
    var stable: [UInt16: [UInt8]] = [:]
    var readable: [UInt16] = []
    var planner: FuzzPlanner?

    public init(base: FuzzBase, plugins: [Plugin], options: Options, connect: @escaping (_ recording: String?) throws(ReplayFault) -> any RawATTDevice) {
        self.base = base; self.plugins = plugins; self.options = options; self.connect = connect
    }

    // MARK: one run

    struct Observation {
        var reaction: FuzzReaction
        /// Index of the step during or after which it happened.
        var at: Int
    }

    struct RunResult {
        var observations: [Observation] = []
        /// The device could not be reached or set up (not a reaction to the variant).
        var setupFault: ReplayFault?
        var db: GATTDatabase?
        var values: [UInt16: [UInt8]] = [:]
    }

    static func resolve(_ t: ReplayScript.Target, in db: GATTDatabase) -> UInt16 {
        guard let s = t.service.flatMap(BluetoothUUID.init(string:)), let c = t.characteristic.flatMap(BluetoothUUID.init(string:)) else {
            return UInt16(truncatingIfNeeded: t.handle)
        }
        if let d = t.descriptor.flatMap(BluetoothUUID.init(string:)) {
            return db.descriptorHandle(service: s, characteristic: c, instance: t.instance ?? 0, descriptor: d) ?? UInt16(truncatingIfNeeded: t.handle)
        }
        return db.valueHandle(service: s, characteristic: c, instance: t.instance ?? 0) ?? UInt16(truncatingIfNeeded: t.handle)
    }

    public static func describeTarget(_ t: ReplayScript.Target) -> String { describe(t) }

    static func describe(_ t: ReplayScript.Target) -> String {
        guard let c = t.characteristic else { return Hex.fixed(UInt64(t.handle), width: 4) }
        return t.descriptor.map { "\(c)/\($0)" } ?? c
    }

    func linkLost(_ device: any RawATTDevice, _ e: ReplayFault, at i: Int) -> Observation {
        if e.code == .timeout {
            return Observation(reaction: FuzzReaction(kind: "timeout", detail: "no answer within the ATT timeout"), at: i)
        }
        var reason = device.linkLossReason.map(Int.init)
        if reason == nil, let r = e.message.range(of: "(0x", options: .backwards) {
            reason = Int(e.message[r.upperBound...].prefix(2), radix: 16)
        }
        return Observation(reaction: FuzzReaction(kind: "disconnect", code: reason, codeName: reason.map { HCIStatus(UInt8($0)).name }), at: i)
    }

    /// Sends the recorded set-up, then `actions`; `readValues`: also read every readable
    /// characteristic (the baseline for reset detection).
    func execute(_ actions: [FuzzAction], recording: String? = nil, readValues: Bool = false) -> RunResult {
        var result = RunResult()
        if options.rate > 0, connections > 0 { pause(.milliseconds(Int64(1000 / options.rate))) }
        connections += 1
        let device: any RawATTDevice
        do { device = try connect(recording) } catch {
            result.setupFault = error
            if let recording { finishRecording(recording) }
            return result
        }
        defer {
            device.disconnect() // clean: the link is closed before the next variant
            if let recording { finishRecording(recording) }
        }
        let notify = PluginSet(plugins)
        var step = -1
        do throws(ReplayFault) {
            let db = try device.discover()
            result.db = db
            if options.pair == .always || (options.pair == .auto && base.script.source.secured == true) { _ = try device.secure() }
            for i in base.setup {
                let s = base.script.steps[i]
                if s.kind == "mtu" {
                    _ = try device.exchangeMTU(s.mtu ?? 23)
                } else if let t = s.target {
                    _ = try device.write(handle: Self.resolve(t, in: db), value: Hex.parse(s.value ?? "") ?? [], op: WriteOp(rawValue: s.op ?? "request") ?? .request)
                }
            }
            _ = try device.notifications(until: .now + .milliseconds(20), atLeast: Int.max)
            if readValues {
                for h in readable { if case .value(let v) = try device.read(handle: h) { result.values[h] = v } }
            }
            let clock = ContinuousClock()
            for (i, a) in actions.enumerated() {
                step = i
                let wait = min(.microseconds(Int64(a.delayMs * 1000)), options.maxDelay)
                if wait > .zero { _ = try device.notifications(until: clock.now + wait, atLeast: Int.max) }
                let handle = Self.resolve(a.target, in: db)
                let value = Hex.parse(a.value) ?? []
                var error: UInt8?
                var request = a.kind == .read ? "read" : "write \(a.op ?? "request")"
                switch a.kind {
                case .write where (a.op == "command" || a.op == "signed") && value.count > device.attMTU - 3:
                    // A Write Command cannot be split: past the MTU it goes out as one PDU all the same.
                    _ = try device.sendRaw([ATTOpcode.writeCommand.rawValue, UInt8(handle & 0xFF), UInt8(handle >> 8)] + value)
                case .write:
                    if case .error(let c) = try device.write(handle: handle, value: value, op: WriteOp(rawValue: a.op ?? "request") ?? .request) { error = c }
                case .read:
                    if case .error(let c) = try device.read(handle: handle) { error = c }
                case .raw:
                    let op = a.opcode.map { UInt8(truncatingIfNeeded: $0) } ?? ATTOpcode.writeRequest.rawValue
                    request = ATTOpcode(rawValue: op).name
                    let pdu = [op, UInt8(handle & 0xFF), UInt8(handle >> 8)] + value
                    if let r = try device.sendRaw(pdu), r.first == ATTOpcode.errorResponse.rawValue, r.count >= 5 { error = r[4] }
                case .prepareQueue:
                    request = "Prepare Write queue"
                    for k in 0..<(a.count ?? 1) {
                        let offset = k * value.count
                        let pdu = [ATTOpcode.prepareWriteRequest.rawValue, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(offset & 0xFF), UInt8(offset >> 8 & 0xFF)] + value
                        if let r = try device.sendRaw(pdu), r.first == ATTOpcode.errorResponse.rawValue, r.count >= 5 {
                            error = r[4]; break
                        }
                    }
                    if let r = try device.sendRaw([ATTOpcode.executeWriteRequest.rawValue, error == nil ? 1 : 0]), error == nil,
                        r.first == ATTOpcode.errorResponse.rawValue, r.count >= 5
                    {
                        error = r[4]
                    }
                }
                if let c = error, !base.recordedErrors.contains(Int(c)) {
                    result.observations.append(
                        Observation(reaction: FuzzReaction(kind: "error", code: Int(c), codeName: ATTErrorCode(rawValue: c).name, detail: "on \(request) of \(Self.describe(a.target))"), at: i))
                }
                // The answers the recording shows for this step, or a short look for unrecorded ones.
                let expected = a.step.map { base.script.steps[$0].expect.notifications.count } ?? 0
                let got = try device.notifications(until: clock.now + (expected > 0 ? options.window : .milliseconds(15)), atLeast: expected > 0 ? expected : Int.max)
                for n in got { rejected(n, db: db, set: notify, at: i, into: &result) }
            }
            // A device that hangs shows it on the next request: one read to end every variant.
            step = actions.count
            if let h = readable.first ?? db.services.first?.characteristics.first?.valueHandle { _ = try device.read(handle: h) }
            let late = try device.notifications(until: clock.now + .milliseconds(10), atLeast: Int.max)
            for n in late { rejected(n, db: db, set: notify, at: max(0, actions.count - 1), into: &result) }
        } catch {
            if step < 0, error.code != .connectionLost, error.code != .timeout {
                result.setupFault = error
            } else {
                result.observations.append(linkLost(device, error, at: max(0, min(step, actions.count - 1))))
            }
        }
        return result
    }

    /// A notification its plugin rejects: bad checksum, or a field it cannot hold.
    func rejected(_ n: ReceivedNotification, db: GATTDatabase, set: PluginSet, at i: Int, into result: inout RunResult) {
        let t = FuzzPlanner.target(db, handle: n.handle)
        guard let c = t.characteristic.flatMap(BluetoothUUID.init(string:)) else { return }
        let s = t.service.flatMap(BluetoothUUID.init(string:))
        let dir: PluginDirection = n.indication ? .indicate : .notify
        guard let r = n.value.withUnsafeBytes({ set.process(service: s, characteristic: c, handle: n.handle, direction: dir, device: 0, value: $0, timeMicroseconds: 0) }) else { return }
        for m in r.messages {
            if m.checksum == .bad {
                result.observations.append(Observation(reaction: FuzzReaction(kind: "rejected_frame", detail: "\(m.plugin) \(m.message): bad checksum"), at: i))
            } else if let e = m.error {
                result.observations.append(Observation(reaction: FuzzReaction(kind: "rejected_frame", detail: "\(m.plugin) \(m.message): \(e)"), at: i))
            }
        }
    }

    /// After a disconnection: reconnects and compares the database and the stable values with
    /// the baseline; a difference makes the disconnection a reset (and the new state the baseline).
    func classify(_ r: RunResult) -> RunResult {
        guard r.observations.contains(where: { $0.reaction.kind == "disconnect" }), baselineDB != nil else { return r }
        let check = execute([], readValues: true)
        var why: String?
        if let db = check.db, db != baselineDB {
            why = "its GATT database changed"
        } else {
            for (h, v) in stable.sorted(by: { $0.key < $1.key }) where check.values[h] != nil && check.values[h] != v {
                let t = baselineDB.map { FuzzPlanner.target($0, handle: h) }.map { Self.describe($0) } ?? Hex.fixed(UInt64(h), width: 4)
                why = "\(t) read \(Hex.string(v)) before, \(Hex.string(check.values[h]!)) after"
                break
            }
        }
        guard let why else { return r }
        if let db = check.db { baselineDB = db }
        for (h, v) in check.values where stable[h] != nil { stable[h] = v }
        var out = r
        for i in out.observations.indices where out.observations[i].reaction.kind == "disconnect" {
            out.observations[i].reaction.kind = "reset"
            out.observations[i].reaction.detail = why
        }
        return out
    }

    func signatures(_ r: RunResult) -> [String] { r.observations.map(\.reaction.signature) }

    // MARK: the run

    /// Baseline, then variants until the budget ends; returns what was found.
    public func run(dryRunPlanner: ((FuzzPlanner) -> Void)? = nil) throws(ReplayFault) -> FuzzSummary {
        // The recording as is: the device's usual reactions are no findings.
        let first = execute(base.sequence, readValues: false)
        if let f = first.setupFault { throw f }
        guard let db = first.db else { throw ReplayFault(.connectionLost, "no GATT database discovered") }
        baselineDB = db
        readable = db.services.flatMap { $0.characteristics.filter { $0.properties & 0x02 != 0 }.map(\.valueHandle) }
        let a = execute([], readValues: true), b = execute([], readValues: true)
        if let f = a.setupFault ?? b.setupFault { throw f }
        for (h, v) in a.values where b.values[h] == v { stable[h] = v }
        var known = Set(signatures(first))
        let baseline = known.sorted()
        planner = FuzzPlanner(base: base, live: db, blind: options.blind, characteristics: options.characteristics, seed: options.seed)
        dryRunPlanner?(planner!)
        var findings: [FuzzFinding] = []
        var variant = 0
        var interrupted = false
        func report(_ phase: String) {
            progress?(Progress(variant: variant, variants: options.variants, findings: findings.count, connections: connections, phase: phase))
        }
        while variant < options.variants {
            if shouldStop() { interrupted = true; break }
            if outOfTime { break }
            guard let v = planner?.nextVariant() else { break }
            variant += 1
            report("fuzzing")
            var r = execute(v.actions)
            if let f = r.setupFault {
                // The device no longer lets itself be reached: that is the finding, and the end.
                let reaction = FuzzReaction(kind: "unreachable", detail: f.message)
                if !known.contains(reaction.signature) {
                    findings.append(finding(findings.count + 1, reaction, variant: variant, v, at: 0, minimise: false))
                }
                break
            }
            r = classify(r)
            for o in r.observations where !known.contains(o.reaction.signature) {
                known.insert(o.reaction.signature)
                report("minimising")
                findings.append(finding(findings.count + 1, o.reaction, variant: variant, v, at: o.at, minimise: true))
                if shouldStop() { interrupted = true; break }
            }
            if interrupted { break }
        }
        report("done")
        return FuzzSummary(
            capture: base.script.source.capture, seed: options.seed, blind: options.blind, variants: variant, planned: planner?.firstRound.count ?? 0,
            connections: connections, interrupted: interrupted, baseline: baseline, findings: findings)
    }

    /// Does `actions` show `signature` again?
    func reproduces(_ actions: [FuzzAction], _ signature: String, budget: inout Int) -> Bool {
        guard budget > 0, !shouldStop(), !outOfTime else { return false }
        budget -= 1
        return signatures(classify(execute(actions))).contains(signature)
    }

    func finding(_ id: Int, _ reaction: FuzzReaction, variant: Int, _ v: FuzzVariant, at: Int, minimise: Bool) -> FuzzFinding {
        let sig = reaction.signature
        var steps = Array(v.actions.prefix(at + 1))
        var mutations = v.mutations
        if minimise {
            var budget = options.minimiseBudget
            // The step that showed it, alone, first: most reactions need nothing before it.
            if steps.count > 1, reproduces([steps[steps.count - 1]], sig, budget: &budget) {
                steps = [steps[steps.count - 1]]
            } else {
                steps = Minimiser.ddmin(steps) { reproduces($0, sig, budget: &budget) }
            }
            // Then the mutated fields, one at a time put back as recorded.
            if let r = v.rebuild, r.fields.count > 1, let planner {
                var keep = r.fields
                for name in r.fields.keys.sorted() where keep.count > 1 {
                    var fewer = keep
                    fewer[name] = nil
                    guard let w = planner.pluginVariant(frame: r.frame, fields: fewer) else { continue }
                    let kept = Set(steps.compactMap(\.step))
                    let candidate = w.actions.filter { $0.step.map(kept.contains) ?? false }
                    if reproduces(candidate, sig, budget: &budget) { keep = fewer; steps = candidate; mutations = w.mutations }
                }
            }
        }
        // The reproduction rate, the first reproducing run recorded as the reproducer.
        var runs = 0, reproduced = 0
        var reproducer: String?
        let path = reproducerPath(id)
        if minimise {
            for _ in 0..<options.reruns where !shouldStop() && !outOfTime {
                let record = reproducer == nil ? path : nil
                runs += 1
                if signatures(classify(execute(steps, recording: record))).contains(sig) {
                    reproduced += 1
                    if record != nil { reproducer = record }
                }
            }
        }
        return FuzzFinding(
            id: id, reaction: reaction, signature: sig, variant: variant, seed: options.seed, mutations: mutations, steps: steps, originalSteps: v.actions.count,
            runs: runs, reproduced: reproduced, reproducer: reproducer, json: nil, at: at + 1)
    }
}

/// Delta debugging (Zeller & Hildebrandt, "Simplifying and Isolating Failure-Inducing Input",
/// 2002): the smallest subsequence, 1-minimal, that still passes `test`.
public enum Minimiser {
    public static func ddmin<T>(_ input: [T], _ test: ([T]) -> Bool) -> [T] {
        var c = input
        var n = 2
        while c.count >= 2 {
            let size = (c.count + n - 1) / n
            let chunks = stride(from: 0, to: c.count, by: size).map { Array(c[$0..<min($0 + size, c.count)]) }
            var reduced = false
            for chunk in chunks where test(chunk) {
                c = chunk; n = 2; reduced = true; break
            }
            if !reduced, chunks.count > 2 || n > 2 {
                for k in chunks.indices {
                    let rest = chunks.enumerated().filter { $0.offset != k }.flatMap(\.element)
                    if test(rest) { c = rest; n = max(n - 1, 2); reduced = true; break }
                }
            } else if !reduced, chunks.count == 2 {
                // n = 2: the complements are the chunks, already tried.
            }
            if !reduced {
                if n >= c.count { break }
                n = min(c.count, n * 2)
            }
        }
        return c
    }
}
