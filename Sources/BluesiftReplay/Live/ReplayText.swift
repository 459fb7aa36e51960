import Foundation
import BluesiftWire

/// `replay` and `emulate`'s text report.
public enum ReplayText {
    /// The text summary of a report, one line each (the CLI escapes and prints them);
    /// `emulation`: steps are the app's requests to `emulate`.
    public static func lines(_ r: ReplayReport, emulation: Bool = false) -> [String] {
        var out: [String] = []
        if emulation, let n = r.sessions { out.append("sessions: \(n)") }
        if let d = r.device { out.append("device \(d)") }
        if let s = r.security {
            out.append(
                "security: level \(s.level) (\(s.levelName)), \(s.paired ? "paired, " + s.method.replacingOccurrences(of: "_", with: " ") : "re-encrypted with the stored key"), "
                    // The kernel's pairing (l2cap:N) does not say whether it used Secure Connections.
                    + (s.method == "kernel" ? "" : "\(s.secureConnections ? "LE Secure Connections" : "legacy"), ")
                    + "key size \(s.keySize)" + (s.bonded ? ", keys stored" : "") + (s.reason.map { "; \($0)" } ?? ""))
        }
        for m in r.remapped {
            let what = [m.service, m.characteristic, m.descriptor].compactMap { $0 }.joined(separator: "/")
            out.append("remapped \(Hex.fixed(UInt64(m.from), width: 4)) → \(Hex.fixed(UInt64(m.to), width: 4)) (\(what))")
        }
        for s in r.steps {
            var line = "step \(s.index) frame \(s.frame) \(s.kind)"
            if let op = s.op { line += " (\(op))" }
            if let h = s.handle { line += " " + Hex.fixed(UInt64(h), width: 4) }
            if let c = s.characteristic { line += " \(s.service ?? "?")/\(c)" }
            if let v = s.vendor { line += " \(v)" } else if let v = s.sent { line += " \(v)" }
            if s.status == "skipped" {
                line += ": skipped: \(s.reason ?? "")"
            } else {
                line += ": " + s.status.uppercased().replacingOccurrences(of: "_", with: " ")
                if let why = s.reason { line += " (\(why))" }
            }
            if let sec = s.security { line += " [\(sec)]" }
            if emulation, let m = s.matchedBy { line += " [by \(m)]" }
            out.append(line)
            for d in s.differences {
                var l = "    \(d.status) \(d.what)"
                if let h = d.handle { l += " " + Hex.fixed(UInt64(h), width: 4) }
                if let m = d.message { l += " \(m)" + (d.field.map { ".\($0)" } ?? "") }
                if let e = d.expected { l += " expected \(e)" }
                if let g = d.got { l += (d.expected == nil ? " " : ", ") + "got \(g)" }
                out.append(l)
            }
            if let n = s.unlisted { out.append("    … \(n) more differences and answers not listed") }
        }
        let n = r.notifications
        if let k = n.kernelDropped, k > 0 {
            // One line: the kernel's share of the drops, and what the host could not buffer.
            let buffer = n.receiveBuffer.map { " \($0 % (1 << 20) == 0 ? "\($0 >> 20) MiB" : "\($0 >> 10) KiB")" } ?? ""
            out.append(
                "notifications: \(n.received) received, \(n.dropped) dropped (the device flooded): \(k) by the kernel before bluesift read them "
                    + "(the user channel's\(buffer) receive buffer was full), \(n.dropped - k) not buffered by bluesift")
        } else if n.dropped > 0 {
            out.append("notifications: \(n.received) received, \(n.dropped) not buffered (the device flooded)")
        }
        let s = r.summary
        if emulation {
            out.append(
                "summary: \(s.steps) requests, \(s.matched) answered as recorded, \(s.unexpected) without a recorded answer, "
                    + "\(r.notifications.received) notifications sent" + (r.complete ? "" : " (incomplete)"))
            return out
        }
        out.append(
            "summary: \(s.steps) steps, \(s.matched) matched, \(s.mismatched) mismatched, \(s.missing) missing, \(s.unexpected) unexpected"
                + (s.skipped > 0 ? ", \(s.skipped) skipped (not on the device)" : "") + (r.rawHandles ? " (raw handles)" : "")
                + (r.complete ? "" : " (incomplete)"))
        return out
    }
}
