import BluesiftWire
import BluesiftProtocols

/// Compares what the live device answered with what the recording says it answered.
/// Byte-exact by default; field-aware where a plugin decodes the characteristic.
struct AnswerMatcher {
    var ignore: [IgnoreRule]
    var interpreter: VendorInterpreter?

    struct Expected {
        var liveHandle: UInt16
        var target: ReplayScript.Target
        var value: [UInt8]
    }

    func response(_ expect: ReplayScript.Expect, got: ATTOutcome, recordedHandle: Int?) -> [ReplayReport.Difference] {
        func diff(_ what: String, _ e: String, _ g: String) -> [ReplayReport.Difference] {
            [.init(status: "mismatch", what: what, handle: recordedHandle, expected: e, got: g)]
        }
        if let h = recordedHandle, ignore.ignoresHandle(h) { return [] }
        switch (expect.response, got) {
        case (nil, _), ("ok", .ok): return []
        case ("ok", .value(let v)):
            guard let e = expect.value.flatMap(Hex.parse) else { return [] }
            let h = recordedHandle ?? -1
            return ignore.masked(e, handle: h) == ignore.masked(v, handle: h) ? [] : diff("value", Hex.string(e), Hex.string(v))
        case ("ok", .error(let c)): return diff("response", "ok", "error \(ATTErrorNames.describe(c))")
        case ("error", .error(let c)):
            guard let e = expect.errorCode, e != Int(c) else { return [] }
            return diff("response", "error \(ATTErrorNames.describe(UInt8(truncatingIfNeeded: e)))", "error \(ATTErrorNames.describe(c))")
        case ("error", _):
            return diff("response", "error \(expect.errorCode.map { ATTErrorNames.describe(UInt8(truncatingIfNeeded: $0)) } ?? "")", "ok")
        default: return []
        }
    }

    /// Pairs expected notifications with received ones on the same handle, whatever the
    /// interleaving between handles. Returns the differences and a line per answer seen.
    func notifications(expected: [Expected], got: [ReceivedNotification]) -> (diffs: [ReplayReport.Difference], answers: [String]) {
        var diffs: [ReplayReport.Difference] = []
        var answers: [String] = []
        var handles: [UInt16] = []
        for h in expected.map(\.liveHandle) + got.map(\.handle) where !handles.contains(h) { handles.append(h) }
        for h in handles {
            let exp = expected.filter { $0.liveHandle == h }
            let rcv = got.filter { $0.handle == h }
            let recorded = exp.first?.target.handle ?? Int(h)
            if ignore.ignoresHandle(recorded) { continue }
            let target = exp.first?.target
            if let interp = interpreter,
                let em = interp.messages(service: target?.service, characteristic: target?.characteristic, notify: true, values: exp.map(\.value)),
                let gm = interp.messages(service: target?.service, characteristic: target?.characteristic, notify: true, values: rcv.map(\.value))
            {
                let r = vendor(expected: em, got: gm, handle: recorded)
                diffs += r; answers += gm.map { "\(Hex.fixed(UInt64(h), width: 4)) \($0.summary)" + ($0.checksum.map { " checksum \($0)" } ?? "") }
                continue
            }
            answers += rcv.map { "\(Hex.fixed(UInt64(h), width: 4)) \(Hex.string($0.value))" }
            var used = Array(repeating: false, count: rcv.count)
            var unpaired: [Expected] = []
            for e in exp {
                let m = ignore.masked(e.value, handle: recorded)
                if let i = rcv.indices.first(where: { !used[$0] && ignore.masked(rcv[$0].value, handle: recorded) == m }) {
                    used[i] = true
                } else {
                    unpaired.append(e)
                }
            }
            for e in unpaired {
                if let i = rcv.indices.first(where: { !used[$0] }) {
                    used[i] = true
                    diffs.append(
                        .init(
                            status: "mismatch", what: "notification", handle: recorded,
                            expected: Hex.string(e.value), got: Hex.string(rcv[i].value)))
                } else {
                    diffs.append(.init(status: "missing", what: "notification", handle: recorded, expected: Hex.string(e.value)))
                }
            }
            for i in rcv.indices where !used[i] {
                diffs.append(.init(status: "unexpected", what: "notification", handle: recorded, got: Hex.string(rcv[i].value)))
            }
        }
        return (diffs, answers)
    }

    /// Field-aware: messages paired by name in order; volatile and ignored fields skipped;
    /// a checksum is judged by its verdict, not its bytes.
    func vendor(expected: [VendorMessageView], got: [VendorMessageView], handle: Int) -> [ReplayReport.Difference] {
        var diffs: [ReplayReport.Difference] = []
        var used = Array(repeating: false, count: got.count)
        for e in expected {
            guard let i = got.indices.first(where: { !used[$0] && got[$0].message == e.message }) else {
                diffs.append(.init(status: "missing", what: "notification", handle: handle, message: e.message, expected: e.summary))
                continue
            }
            used[i] = true
            let g = got[i]
            for f in e.fields where !e.volatile.contains(f.name) && !ignore.ignoresField(message: e.message, field: f.name) {
                let gv = g.fields.first(where: { $0.name == f.name })?.value
                if gv != f.value {
                    diffs.append(
                        .init(
                            status: "mismatch", what: "notification", handle: handle, message: e.message,
                            field: f.name, expected: f.value, got: gv ?? "(absent)"))
                }
            }
            if e.checksum != g.checksum, let gc = g.checksum {
                diffs.append(
                    .init(
                        status: "mismatch", what: "notification", handle: handle, message: e.message,
                        field: "checksum", expected: e.checksum ?? "none", got: gc))
            }
        }
        for i in got.indices where !used[i] {
            diffs.append(.init(status: "unexpected", what: "notification", handle: handle, message: got[i].message, got: got[i].summary))
        }
        return diffs
    }
}

/// "0x0e (Unlikely Error)" for the report.
enum ATTErrorNames {
    static func describe(_ c: UInt8) -> String {
        Hex.fixed(UInt64(c), width: 2) + " (\(ATTErrorCode(rawValue: c).name))"
    }
}
