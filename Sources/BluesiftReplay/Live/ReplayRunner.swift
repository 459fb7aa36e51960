import BluesiftWire
import BluesiftGATT
import BluesiftProtocols

/// Sends a script's steps to a live device, collects every answer and compares it with the
/// recording. Never throws: a device or transport failure ends the run with `report.fault`
/// set and the steps run so far kept (the evidence is never lost).
public final class ReplayRunner {
    public enum Timing: Sendable, Equatable {
        case recorded, asap, fixed(milliseconds: Int)

        public init?(parsing s: String) {
            switch s {
            case "recorded": self = .recorded
            case "asap": self = .asap
            default:
                guard s.hasPrefix("fixed:"), let ms = Int(s.dropFirst(6)), ms >= 0 else { return nil }
                self = .fixed(milliseconds: ms)
            }
        }
    }

    public struct Options: Sendable {
        public var timing: Timing = .recorded
        /// How long to wait for notifications after a step when fewer than recorded arrived.
        public var window: Duration = .milliseconds(1000)
        public var ignore: [IgnoreRule] = []
        /// Send even when the device's address or GATT database does not match the recording.
        /// A step whose characteristic the device does not have is still never sent: it is
        /// skipped (and the run exits 1).
        public var force = false
        /// Send a step whose characteristic the device does not have to its recorded handle.
        /// Explicit, and recorded in the report: the handle may be another characteristic.
        public var rawHandles = false
        /// When to pair or re-encrypt (default auto).
        public var pair: PairMode = .auto
        public init() {}
    }

    public let script: ReplayScript
    public var options: Options
    public let interpreter: VendorInterpreter?
    /// Called before each step: (step index, step count, description).
    public var progress: ((Int, Int, String) -> Void)?

    public init(script: ReplayScript, options: Options = Options(), interpreter: VendorInterpreter? = nil) {
        self.script = script; self.options = options; self.interpreter = interpreter
    }

    /// The bytes a step sends: its value, or its vendor message rebuilt by the plugin.
    public func payload(_ s: ReplayScript.Step) throws(ReplayFault) -> [UInt8] {
        if let message = s.message {
            guard let interp = interpreter else {
                throw ReplayFault(.init(rawValue: "refused"), "step at frame \(s.frame) names message \(message) but no plugin is loaded")
            }
            do {
                return try interp.encode(
                    plugin: s.plugin, service: s.target?.service, characteristic: s.target?.characteristic,
                    message: message, fields: s.fields ?? [:])
            } catch {
                throw ReplayFault(.init(rawValue: "refused"), "step at frame \(s.frame): cannot build \(message): \(error)")
            }
        }
        guard let v = Hex.parse(s.value ?? "") else {
            throw ReplayFault(.init(rawValue: "refused"), "step at frame \(s.frame): value is not hex")
        }
        return v
    }

    /// One line per step, for `--dry-run`.
    public func plan() -> [String] {
        script.steps.enumerated().map { i, s in
            var line = "step \(i + 1) frame \(s.frame) \(s.kind)"
            if let op = s.op { line += " (\(op))" }
            if let t = s.target { line += " handle \(Hex.fixed(UInt64(t.handle), width: 4))" + identity(t) }
            if s.kind == "mtu" { line += " mtu \(s.mtu ?? 23)" }
            if s.kind == "write" || s.kind == "subscribe" {
                do { line += " value " + Hex.string(try payload(s)) } catch { line += " [\(error)]" }
            }
            if let d = decodeSent(s) { line += "  \(d)" }
            if let r = s.refuse { line += "  REFUSED: \(r)" }
            return line
        }
    }

    /// For `--dry-run`: whether the replay will pair, and why.
    public func pairingPlan() -> String {
        switch options.pair {
        case .never: return "pairing: never (--pair never): protected characteristics will answer with ATT errors"
        case .always: return "pairing: before step 1 (--pair always)"
        case .auto:
            if script.source.secured == true {
                return "pairing: needed, before step 1 (the recording shows SMP or encryption on this connection)"
            }
            return "pairing: not expected (the recording shows none); done if the device answers Insufficient "
                + "Authentication/Encryption/Encryption Key Size or sends a Security Request"
        }
    }

    /// Secures the link and records it in the report.
    func secure(_ device: ReplayDevice, _ why: String, beforeStep: Int, _ report: inout ReplayReport) throws(ReplayFault) {
        var s = try device.secure()
        s.reason = why; s.beforeStep = beforeStep
        report.security = s
    }

    func identity(_ t: ReplayScript.Target) -> String {
        guard let c = t.characteristic else { return "" }
        return " (\(t.service ?? "?")/\(c)" + (t.descriptor.map { "/\($0)" } ?? "") + ")"
    }

    func decodeSent(_ s: ReplayScript.Step) -> String? {
        guard s.kind == "write", let interp = interpreter, let v = try? payload(s),
            let m = interp.messages(service: s.target?.service, characteristic: s.target?.characteristic, notify: false, values: [v]),
            let first = m.first
        else { return nil }
        return first.summary
    }

    public func run(device: ReplayDevice) -> ReplayReport {
        var report = ReplayReport()
        report.device = device.peerAddress
        let clock = ContinuousClock()
        do throws(ReplayFault) {
            // Safety: the same device, with the same GATT identities, unless forced.
            if let want = script.source.peer, let got = device.peerAddress, want.lowercased() != got.lowercased(), !options.force {
                throw ReplayFault(.wrongDevice, "device \(got) is not the recorded \(want); use --force to replay anyway")
            }
            let live = try device.discover()
            let remap = Remapper(script: script, live: live)
            report.remapped = remap.remapped(script: script)
            report.rawHandles = options.rawHandles
            if !remap.unresolved.isEmpty, !options.force, !options.rawHandles {
                throw ReplayFault(
                    .wrongDevice,
                    "the device's GATT database does not match the recording: no \(remap.unresolved[0])"
                        + (remap.unresolved.count > 1 ? " (and \(remap.unresolved.count - 1) more)" : "") + "; use --force to replay anyway")
            }
            let matcher = AnswerMatcher(ignore: options.ignore, interpreter: interpreter)
            if options.pair == .always {
                try secure(device, "--pair always", beforeStep: 1, &report)
            } else if options.pair == .auto, script.source.secured == true {
                try secure(device, "the recording shows SMP or encryption on this connection", beforeStep: 1, &report)
            }
            var lastSend: ContinuousClock.Instant?
            for (i, s) in script.steps.enumerated() {
                var r = ReplayReport.Step(
                    index: i + 1, frame: s.frame, kind: s.kind, op: s.op, handle: s.target?.handle,
                    service: s.target?.service, characteristic: s.target?.characteristic, status: "match")
                if let why = s.refuse {
                    r.status = "refused"; r.reason = why
                    report.steps.append(r)
                    throw ReplayFault(.init(rawValue: "refused"), "step \(i + 1) (frame \(s.frame)) cannot be replayed: \(why)")
                }
                // Under --force, a step aimed at a characteristic the device lacks is never sent
                // (its recorded handle may be anything on this device), unless --raw-handles.
                if let t = s.target, s.kind != "mtu", !remap.resolves(t) {
                    if options.rawHandles {
                        r.reason = "sent to recorded handle \(Hex.fixed(UInt64(t.handle), width: 4)) (--raw-handles): \(Remapper.describe(t)) not on the device"
                    } else {
                        r.status = "skipped"
                        r.reason = "\(Remapper.describe(t)) not on the device"
                        report.steps.append(r)
                        continue
                    }
                }
                progress?(i + 1, script.steps.count, "\(s.kind)" + (s.target.map { identity($0) } ?? ""))
                // Pace as asked, measured from the previous step's send.
                if let last = lastSend {
                    let wait: Duration =
                        switch options.timing {
                        case .recorded: .microseconds(Int64(s.delayMs * 1000))
                        case .asap: .zero
                        case .fixed(let ms): .milliseconds(ms)
                        }
                    let due = last.advanced(by: wait)
                    // Notifications arriving while we wait still belong to the previous step.
                    if due > clock.now, !report.steps.isEmpty {
                        let late = try device.notifications(until: due, atLeast: Int.max)
                        report.notifications.received += late.count
                        if !late.isEmpty { attachLate(late, to: &report, remap: remap, matcher: matcher) }
                    }
                }
                // A Security Request from the device is honoured before the next request (§3.6.7).
                if options.pair != .never, device.securityRequested, device.security == nil {
                    try secure(device, "the device sent a Security Request", beforeStep: i + 1, &report)
                }
                var sent = clock.now
                lastSend = sent
                report.steps.append(r)
                func perform() throws(ReplayFault) -> ATTOutcome {
                    switch s.kind {
                    case "mtu":
                        // Compared as the MTU in force: min(client's, server's) (Core 5.4 Vol 3 Part F §3.4.2.2).
                        let m = try device.exchangeMTU(s.mtu ?? 23)
                        if let e = s.expect.mtu.map({ min($0, s.mtu ?? $0) }), e != m {
                            r.differences.append(.init(status: "mismatch", what: "mtu", expected: "\(e)", got: "\(m)"))
                        }
                        return .ok
                    case "read":
                        guard let t = s.target else { return .ok }
                        r.liveHandle = Int(remap.handle(for: t))
                        return try device.read(handle: remap.handle(for: t))
                    default:
                        guard let t = s.target else { return .ok }
                        let v = try payload(s)
                        r.sent = Hex.string(v)
                        r.vendor = decodeSent(s)
                        r.liveHandle = Int(remap.handle(for: t))
                        return try device.write(handle: remap.handle(for: t), value: v, op: WriteOp(rawValue: s.op ?? "request") ?? .request)
                    }
                }
                var outcome: ATTOutcome
                do {
                    outcome = try perform()
                    // --pair auto: an error pairing can cure, not recorded as the answer, on a link
                    // not yet encrypted: pair, then send the request once more.
                    if options.pair == .auto, case .error(let c) = outcome, ATTErrorCode(rawValue: c).isSecurityError,
                        device.security == nil, s.expect.errorCode != Int(c)
                    {
                        let name = ATTErrorNames.describe(c)
                        try secure(device, "step \(i + 1) answered \(name)", beforeStep: i + 1, &report)
                        r.security = "answered \(name): paired, sent again"
                        sent = clock.now
                        outcome = try perform()
                    }
                } catch {
                    report.steps[report.steps.count - 1] = r
                    throw error
                }
                r.differences += matcher.response(s.expect, got: outcome, recordedHandle: s.target?.handle)
                if case .error(let c) = outcome { r.answers.append("error \(ATTErrorNames.describe(c))") }
                if case .value(let v) = outcome { r.answers.append("value \(Hex.string(v))") }
                // Collect notifications: early once as many as recorded arrived, else until the window ends.
                let exp = s.expect.notifications.map {
                    AnswerMatcher.Expected(liveHandle: remap.handle(for: $0.target), target: $0.target, value: Hex.parse($0.value) ?? [])
                }
                let lastAfter = Duration.microseconds(Int64((s.expect.notifications.map(\.afterMs).max() ?? 0) * 1000))
                let window = max(options.window, lastAfter * 2)
                var got = try device.notifications(until: sent.advanced(by: window), atLeast: exp.count)
                if exp.isEmpty || got.count >= exp.count {
                    // A short grace for answers right behind the ones we waited for.
                    got += try device.notifications(until: clock.now.advanced(by: .milliseconds(exp.isEmpty ? 20 : 60)), atLeast: Int.max)
                }
                report.notifications.received += got.count
                let (d, answers) = matcher.notifications(expected: exp, got: got)
                r.differences += d
                r.answers += answers
                ReplayReport.capped(&r)
                let took = (clock.now - sent).components
                r.elapsedMs = Double(took.seconds) * 1000 + Double(took.attoseconds / 1_000_000_000_000_000)
                r.status = Self.status(r.differences)
                report.steps[report.steps.count - 1] = r
            }
            report.complete = true
            device.disconnect()
        } catch {
            report.fault = .init(code: error.code.rawValue, message: error.message, step: report.steps.last?.index)
            if let i = report.steps.indices.last, report.steps[i].status == "match", error.code.rawValue != "refused" {
                report.steps[i].status = "interrupted"; report.steps[i].reason = error.message
            }
            device.disconnect()
        }
        let kernel = device.kernelDrops
        report.notifications.dropped = device.droppedNotifications + (kernel?.dropped ?? 0)
        report.notifications.kernelDropped = kernel?.dropped
        report.notifications.receiveBuffer = kernel?.receiveBuffer
        report.tally()
        return report
    }

    /// Notifications that arrived after a step's window but before the next step.
    func attachLate(_ late: [ReceivedNotification], to report: inout ReplayReport, remap: Remapper, matcher: AnswerMatcher) {
        let i = report.steps.count - 1
        let reverse = Dictionary(remap.map.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        let limit = ReplayReport.listLimit
        for n in late {
            let recorded = reverse[Int(n.handle)] ?? Int(n.handle)
            if matcher.ignore.ignoresHandle(recorded) { continue }
            // Beyond the listed ones only counted, as `capped` would: a flood between two steps
            // (up to the host's 65,536 buffered) is not turned into as many strings first.
            if report.steps[i].differences.count < limit {
                report.steps[i].differences.append(.init(status: "unexpected", what: "notification", handle: recorded, got: Hex.string(n.value)))
            } else {
                report.steps[i].unlisted = (report.steps[i].unlisted ?? 0) + 1
            }
            if report.steps[i].answers.count < limit {
                report.steps[i].answers.append("\(Hex.fixed(UInt64(n.handle), width: 4)) \(Hex.string(n.value)) (late)")
            } else {
                report.steps[i].unlisted = (report.steps[i].unlisted ?? 0) + 1
            }
        }
        report.steps[i].status = Self.status(report.steps[i].differences)
        ReplayReport.capped(&report.steps[i])
    }

    static func status(_ d: [ReplayReport.Difference]) -> String {
        if d.contains(where: { $0.status == "mismatch" }) { return "mismatch" }
        if d.contains(where: { $0.status == "missing" }) { return "missing" }
        if d.contains(where: { $0.status == "unexpected" }) { return "unexpected" }
        return "match"
    }
}
