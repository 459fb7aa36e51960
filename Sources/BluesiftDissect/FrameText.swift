import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// Text rendering of decoded frames: one summary line (btmon's direction marks:
/// `<` host→controller, `>` controller→host, `=` notes), or a layered tree with `-v`.
public struct FrameText {
    public var color: Bool
    public var verbose: Bool

    public init(color: Bool, verbose: Bool) {
        self.color = color; self.verbose = verbose
    }

    static let reset = "\u{1B}[0m", red = "\u{1B}[31m", green = "\u{1B}[32m", blue = "\u{1B}[34m",
               yellow = "\u{1B}[33m", dim = "\u{1B}[2m"

    /// The most specific layer's one-line summary.
    public static func summary(_ a: AnalyzedFrame) -> String {
        let f = a.decoded
        if let att = f.att {
            var s = att.summary
            if let n = FrameNaming.summary(a) { s += " " + n }
            if let v = a.vendor { s += VendorRendering.summary(v) }
            if let t = f.attTransaction {
                s += " (reply to #\(t.requestFrame), \(formatLatency(t.latencyMicroseconds)))"
            }
            return s
        }
        if let smp = f.smp { return smp.summary }
        if let l2 = f.l2cap { return l2.summary }
        if let adv = f.adv { return adv.summary }
        if let ll = f.ll { return ll.summary }
        if let hci = f.hci { return hci.summary }
        if let note = f.note { return note }
        return f.record.kind.name
    }

    static func formatLatency(_ us: Int64) -> String {
        us < 10_000 ? "\(us) µs" : "\(us / 1000) ms"
    }

    public func render(_ a: AnalyzedFrame, into out: inout [UInt8]) {
        let f = a.decoded
        let r = f.record
        var line = ""
        let frame = String(r.frame)
        line += String(repeating: " ", count: max(0, 6 - frame.count)) + frame + " "
        var t: [UInt8] = []
        TimeFormat.timeOfDay(r.timestamp, into: &t)
        line += String(decoding: t, as: UTF8.self) + " "
        let mark: String
        switch r.direction {
        case .sent: mark = color ? Self.green + "<" + Self.reset : "<"
        case .received: mark = color ? Self.blue + ">" + Self.reset : ">"
        case nil:
            if r.kind == .ll, let c = f.ll?.fromCentral { mark = c ? "C→P" : "P→C" }
            else { mark = r.kind == .note || r.kind == .index ? "=" : " " }
        }
        line += mark + " "
        if let c = f.connection {
            line += "[" + Hex.fixed(UInt64(c), width: 4) + "] "
        }
        line += TerminalText.escape(Self.summary(a))
        if r.isTruncated {
            line += color ? " \(Self.yellow)[truncated \(r.bytes.count)/\(r.originalLength)]\(Self.reset)"
                          : " [truncated \(r.bytes.count)/\(r.originalLength)]"
        }
        for e in f.errors {
            let msg = TerminalText.escape(" [\(e.layer.isEmpty ? "" : e.layer + ": ")\(e.message)]")
            line += color ? Self.red + msg + Self.reset : msg
        }
        out.append(contentsOf: line.utf8)
        out.append(0x0A)
        guard verbose else { return }
        var tree = TextFieldWriter(depth: 1)
        if let hci = f.hci { tree.beginObject("hci"); hci.describe(into: &tree); tree.endObject() }
        if let ll = f.ll { tree.beginObject("ll"); ll.describe(into: &tree); tree.endObject() }
        if let l2 = f.l2cap { tree.beginObject("l2cap"); l2.describe(into: &tree); tree.endObject() }
        if let att = f.att {
            tree.beginObject("att"); att.describe(into: &tree)
            FrameNaming.describe(a, into: &tree)
            if let t = f.attTransaction {
                tree.int("request_frame", t.requestFrame)
                tree.int("latency_us", Int(t.latencyMicroseconds))
            }
            tree.endObject()
        }
        if let smp = f.smp { tree.beginObject("smp"); smp.describe(into: &tree); tree.endObject() }
        if let adv = f.adv { tree.beginObject("adv"); adv.describe(into: &tree); tree.endObject() }
        if let v = a.vendor { VendorRendering.tree(v, into: &tree) }
        for l in tree.lines { out.append(contentsOf: l.utf8); out.append(0x0A) }
        if !f.errors.isEmpty || r.kind == .unknown {
            out.append(contentsOf: Hex.dump(r.bytes, indent: "    ").utf8)
            out.append(0x0A)
        }
    }
}
