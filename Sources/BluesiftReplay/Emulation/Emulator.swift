import BluesiftWire
import BluesiftProtocols
import BluesiftGATT
import BluesiftHost

/// Answers a client as the recorded device did (`EmulationModel`): reads with the recorded
/// values in order (the last one again after them), writes with the recorded response and the
/// notifications that followed, matched by bytes or, where a plugin covers the characteristic,
/// by message and fields with volatile fields ignored. Keeps a report in replay's form: one
/// step per request of the client, what was answered, and what had no recorded answer.
public final class Emulator: GATTServerResponder {
    public enum Timing: Sendable, Equatable {
        /// Notifications after a write at their recorded spacing.
        case recorded
        /// All at once, in recorded order.
        case asap
    }

    public let model: EmulationModel
    public var timing: Timing
    let interpreter: VendorInterpreter?
    public private(set) var report = ReplayReport()
    /// Said as it happens ("session 1: …"), for a live text log.
    public var onLine: ((String) -> Void)?

    var readIndex: [UInt16: Int] = [:]
    var currentRead: [UInt16: ServerReadAnswer] = [:]
    var used: [UInt16: [Bool]] = [:]

    public init(model: EmulationModel, timing: Timing = .recorded, interpreter: VendorInterpreter? = nil) {
        self.model = model
        self.timing = timing
        self.interpreter = interpreter
        report.mode = "emulate"
        report.device = model.address?.description
        report.sessions = 0
        report.complete = true
    }

    /// The MTU this server offers: the recorded device's answer.
    public var preferredMTU: UInt16 { model.mtu ?? 517 }

    /// A new connection: reads start over from the first recorded value, every write can match again.
    public func sessionStarted() {
        readIndex = [:]; currentRead = [:]; used = [:]
        report.sessions = (report.sessions ?? 0) + 1
    }

    // MARK: the database

    /// The recorded database as attributes (Core 5.4 Vol 3 Part G §3.1–§3.3): service
    /// declarations with their UUID, characteristic declarations with properties, value handle
    /// and UUID, then values and descriptors. Include declarations are not rebuilt (the
    /// database keeps which services a service includes, not the handle of the declaration).
    public static func attributes(of db: GATTDatabase) -> [ServerAttribute] {
        var out: [ServerAttribute] = []
        for s in db.services {
            out.append(
                .init(
                    handle: s.start, type: s.primary ? ServerAttribute.primaryService : ServerAttribute.secondaryService,
                    value: uuidBytes(s.uuid), groupEnd: s.end))
            for c in s.characteristics {
                var decl = [c.properties, UInt8(c.valueHandle & 0xFF), UInt8(c.valueHandle >> 8)]
                decl += uuidBytes(c.uuid)
                out.append(.init(handle: c.handle, type: ServerAttribute.characteristic, value: decl))
                out.append(.init(handle: c.valueHandle, type: c.uuid))
                for d in c.descriptors where d.handle != c.valueHandle { out.append(.init(handle: d.handle, type: d.uuid)) }
            }
        }
        var seen = Set<UInt16>()
        return out.filter { seen.insert($0.handle).inserted }
    }

    /// 2 bytes for a 16-bit UUID on the Base UUID, else 16 (ATT has no 32-bit form).
    static func uuidBytes(_ u: BluetoothUUID) -> [UInt8] {
        if let s = u.shortValue, s <= 0xFFFF { return [UInt8(s & 0xFF), UInt8(s >> 8)] }
        return u.littleEndianBytes
    }

    // MARK: steps

    func location(_ handle: UInt16) -> (service: String?, characteristic: String?, isCCCD: Bool) {
        guard let loc = model.database.locate(handle) else { return (nil, nil, false) }
        return (loc.service.description, loc.characteristic?.description, loc.descriptor == BluetoothUUID(0x2902))
    }

    func addStep(kind: String, op: ATTOpcode?, handle: UInt16?, sent: [UInt8]? = nil) -> Int {
        let loc = handle.map(location)
        var s = ReplayReport.Step(
            index: report.steps.count + 1, frame: 0, kind: kind, op: op.map(Self.opName),
            handle: handle.map(Int.init), service: loc?.service, characteristic: loc?.characteristic,
            status: "match")
        s.sent = sent.map { Hex.string($0) }
        report.steps.append(s)
        report.tally()
        return report.steps.count - 1
    }

    static func opName(_ op: ATTOpcode) -> String {
        switch op {
        case .writeRequest: "request"
        case .writeCommand: "command"
        case .signedWriteCommand: "signed"
        case .prepareWriteRequest: "prepared"
        default: op.name
        }
    }

    func finish(_ i: Int, status: String, reason: String?) {
        report.steps[i].status = status
        report.steps[i].reason = reason
        ReplayReport.capped(&report.steps[i])
        report.tally()
        let s = report.steps[i]
        onLine?(
            "\(s.kind)" + (s.handle.map { " " + Hex.fixed(UInt64($0), width: 4) } ?? "") + (s.vendor.map { " \($0)" } ?? s.sent.map { " \($0)" } ?? "")
                + ": " + (status == "match" ? "answered" : "NO RECORDED ANSWER") + (reason.map { " (\($0))" } ?? ""))
    }

    static func describe(_ e: ATTErrorCode) -> String { "error " + ATTErrorNames.describe(e.rawValue) }

    // MARK: GATTServerResponder

    public func mtuExchanged(client: UInt16, agreed: UInt16) {
        let i = addStep(kind: "mtu", op: nil, handle: nil)
        report.steps[i].sent = "\(client)"
        report.steps[i].answers = ["mtu \(preferredMTU)"]
        finish(i, status: "match", reason: model.mtu == nil ? "no MTU exchange recorded: answered \(preferredMTU)" : "MTU \(agreed) in force")
    }

    public func read(handle: UInt16, first: Bool, link: ServerLinkState) -> ServerReadAnswer {
        if !first, let r = currentRead[handle] { return r }
        let i = addStep(kind: "read", op: nil, handle: handle)
        if !link.encrypted, let e = model.securityErrors[handle] {
            report.steps[i].answers = [Self.describe(e)]
            report.steps[i].matchedBy = "security"
            finish(i, status: "match", reason: "answered before pairing as recorded")
            currentRead[handle] = .error(e)
            return .error(e)
        }
        // Reads refused for security are not values to serve once the link is encrypted.
        let list = (model.reads[handle] ?? []).filter { link.encrypted ? !Self.isSecurity($0.error) : true }
        guard !list.isEmpty else {
            let notified = model.writes.values.joined().flatMap(\.notifications).last { $0.handle == handle }
            let answer: ServerReadAnswer
            if let notified {
                answer = .value(notified.value)
                report.steps[i].answers = [Hex.string(notified.value)]
                finish(i, status: "unexpected", reason: "no read of this handle recorded: answered the last value notified (frame \(notified.frame))")
            } else {
                answer = .error(.readNotPermitted)
                report.steps[i].answers = [Self.describe(.readNotPermitted)]
                report.steps[i].differences = [.init(status: "unexpected", what: "read", handle: Int(handle), got: "read")]
                finish(i, status: "unexpected", reason: "no read of this handle recorded")
            }
            currentRead[handle] = answer
            return answer
        }
        let n = readIndex[handle] ?? 0
        readIndex[handle] = n + 1
        let r = list[min(n, list.count - 1)]
        report.steps[i].frame = r.frame
        report.steps[i].matchedBy = "order"
        let answer: ServerReadAnswer = r.error.map { .error($0) } ?? .value(r.value)
        report.steps[i].answers = [r.error.map(Self.describe) ?? Hex.string(r.value)]
        finish(i, status: "match", reason: n < list.count ? "recorded read \(n + 1) of \(list.count)" : "the last recorded value again (\(list.count) recorded)")
        currentRead[handle] = answer
        return answer
    }

    static func isSecurity(_ e: ATTErrorCode?) -> Bool { e?.isSecurityError ?? false }

    public func write(handle: UInt16, value: [UInt8], op: ATTOpcode, link: ServerLinkState) -> ServerWriteAnswer {
        let loc = location(handle)
        let isCommand = op == .writeCommand || op == .signedWriteCommand
        let i = addStep(kind: loc.isCCCD ? "subscribe" : "write", op: op, handle: handle, sent: value)
        let mine = interpreter.flatMap { $0.messages(service: loc.service, characteristic: loc.characteristic, notify: false, values: [value]) }
        if let mine, !mine.isEmpty { report.steps[i].vendor = mine.map(\.summary).joined(separator: "; ") }
        if !link.encrypted, let e = model.securityErrors[handle] {
            report.steps[i].matchedBy = "security"
            report.steps[i].answers = [isCommand ? "none (command)" : Self.describe(e)]
            finish(i, status: "match", reason: "answered before pairing as recorded")
            return ServerWriteAnswer(error: isCommand ? nil : e)
        }
        let recorded = (model.writes[handle] ?? []).filter { link.encrypted ? !Self.isSecurity($0.error) : true }
        var flags = used[handle] ?? Array(repeating: false, count: recorded.count)
        if flags.count != recorded.count { flags = Array(repeating: false, count: recorded.count) }
        var match: (index: Int, by: String, note: String?)?
        // 1. The same bytes: the first not yet answered, else the last answered (a repeat).
        if let j = recorded.indices.first(where: { !flags[$0] && recorded[$0].value == value }) {
            match = (j, "bytes", nil)
        } else if let j = recorded.indices.last(where: { recorded[$0].value == value }) {
            match = (j, "bytes", "repeated: answered as the recorded write again")
        }
        // 2. The same vendor messages, volatile fields aside.
        if match == nil, let interpreter, let mine, !mine.isEmpty {
            let candidates = recorded.indices.filter { !flags[$0] } + recorded.indices.filter { flags[$0] }
            for j in candidates {
                guard
                    let theirs = interpreter.messages(
                        service: loc.service, characteristic: loc.characteristic, notify: false,
                        values: [recorded[j].value]),
                    let changed = Self.sameMessages(theirs, mine)
                else { continue }
                match = (j, "fields", changed.isEmpty ? nil : "volatile fields differ: " + changed.joined(separator: ", "))
                break
            }
        }
        guard let m = match else {
            // No recorded answer: the recorded error for this handle, if any; a command gets none.
            let err = isCommand ? nil : recorded.last(where: { $0.error != nil })?.error
            report.steps[i].answers = [isCommand ? "none (command)" : err.map(Self.describe) ?? "ok"]
            report.steps[i].differences = differences(recorded: recorded, flags: flags, got: value, mine: mine, handle: handle, loc: loc)
            finish(
                i, status: "unexpected",
                reason: recorded.isEmpty
                    ? "no write to this handle recorded"
                    : "no recorded write matches" + (err == nil ? "" : ": the recorded error answered"))
            return ServerWriteAnswer(error: err)
        }
        flags[m.index] = true
        used[handle] = flags
        let w = recorded[m.index]
        report.steps[i].frame = w.frame
        report.steps[i].matchedBy = m.by
        report.steps[i].answers = [isCommand ? "none (command)" : w.error.map(Self.describe) ?? "ok"]
        let then = w.notifications.enumerated().map { k, n in
            ServerNotification(
                handle: n.handle, value: n.value, isIndication: n.indication,
                delay: timing == .asap ? .microseconds(k) : .microseconds(Int64(n.afterMs * 1000)), tag: i)
        }
        finish(
            i, status: "match",
            reason: "matched by \(m.by), frame \(w.frame)" + (m.note.map { "; \($0)" } ?? "")
                + (then.isEmpty ? "" : "; \(then.count) notification\(then.count == 1 ? " follows" : "s follow")"))
        return ServerWriteAnswer(error: isCommand ? nil : w.error, then: then)
    }

    /// Nil unless both are the same messages with equal non-volatile fields; else the names of
    /// the volatile fields that differ ("set_time.year").
    static func sameMessages(_ recorded: [VendorMessageView], _ got: [VendorMessageView]) -> [String]? {
        guard recorded.count == got.count, !got.isEmpty else { return nil }
        var changed: [String] = []
        for (r, g) in zip(recorded, got) {
            guard r.message == g.message, r.fields.map(\.name) == g.fields.map(\.name) else { return nil }
            for (rf, gf) in zip(r.fields, g.fields) where rf.value != gf.value {
                guard r.volatile.contains(rf.name) else { return nil }
                changed.append("\(r.message).\(rf.name) \(rf.value) → \(gf.value)")
            }
        }
        return changed
    }

    /// What differs from the nearest recorded write: fields of the same vendor message, else bytes.
    func differences(
        recorded: [EmulationModel.Write], flags: [Bool], got: [UInt8], mine: [VendorMessageView]?, handle: UInt16,
        loc: (service: String?, characteristic: String?, isCCCD: Bool)
    ) -> [ReplayReport.Difference] {
        let h = Int(handle)
        func messages(_ w: EmulationModel.Write) -> [VendorMessageView]? {
            interpreter?.messages(service: loc.service, characteristic: loc.characteristic, notify: false, values: [w.value])
        }
        // Nearest: a recorded write of the same vendor message, else the next not yet answered.
        let order = recorded.indices.filter { !flags[$0] } + recorded.indices.filter { flags[$0] }
        let sameMessage = mine.flatMap { m in order.first { j in messages(recorded[j])?.map(\.message) == m.map(\.message) } }
        guard let near = (sameMessage ?? order.first).map({ recorded[$0] }) else {
            return [.init(status: "unexpected", what: "write", handle: h, got: Hex.string(got))]
        }
        if let mine, let theirs = messages(near) {
            var out: [ReplayReport.Difference] = []
            for (r, g) in zip(theirs, mine) where r.message == g.message {
                for f in r.fields where !r.volatile.contains(f.name) {
                    let gv = g.fields.first { $0.name == f.name }?.value
                    if gv != f.value {
                        out.append(
                            .init(
                                status: "mismatch", what: "write", handle: h, message: r.message, field: f.name,
                                expected: f.value, got: gv ?? "(absent)"))
                    }
                }
            }
            if !out.isEmpty { return out }
        }
        return [.init(status: "mismatch", what: "write", handle: h, expected: Hex.string(near.value), got: Hex.string(got))]
    }

    /// The peripheral's word on a notification: sent (an answer of its step) or not, and why.
    public func notification(_ e: PeripheralNotificationEvent) {
        let i = e.notification.tag
        guard report.steps.indices.contains(i) else { return }
        let h = Hex.fixed(UInt64(e.notification.handle), width: 4)
        if let why = e.skipped {
            report.steps[i].differences.append(
                .init(
                    status: "missing", what: "notification", handle: Int(e.notification.handle),
                    expected: Hex.string(e.notification.value), got: why))
            onLine?("  notification \(h) not sent: \(why)")
        } else {
            report.notifications.received += 1
            var line = (e.notification.isIndication ? "indicated " : "notified ") + "\(h) \(Hex.string(e.notification.value))"
            if e.truncated { line += " (cut to the MTU)" }
            report.steps[i].answers.append(line)
        }
        ReplayReport.capped(&report.steps[i])
    }
}
