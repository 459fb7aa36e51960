import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins

/// Text rendering of decoded frames: one summary line (btmon's direction marks:
/// `<` host→controller, `>` controller→host, `=` notes), or a layered tree with `-v`.
public struct FrameText {
    public var color: Bool
    public var verbose: Bool
    /// Columns a summary line may take (a terminal's width); nil keeps every line whole.
    /// Lines cut to fit end in "…"; 128-bit UUIDs without a name are shortened (and shown
    /// whole once, on a line of their own).
    public var width: Int?
    /// Shortened 128-bit UUIDs already shown whole (on a terminal, each once, on a line of
    /// its own after the first record that names it).
    let shown = ShownUUIDs()
    /// Plugin messages' summary text, by decode (`replayID`): equal advertising payloads share
    /// one decode, so its text is built once.
    let vendorTexts = VendorTexts()

    public init(color: Bool, verbose: Bool, width: Int? = nil) {
        self.color = color; self.verbose = verbose; self.width = width
    }

    final class ShownUUIDs: @unchecked Sendable {
        var uuids: Set<BluetoothUUID> = []
        static let limit = 4096 // a hostile capture's thousands of UUIDs: no more legends past it
    }

    /// A fixed number of slots (memory stays flat), each the last decode that fell in it.
    final class VendorTexts: @unchecked Sendable {
        static let slots = 1024
        var ids = [UInt64](repeating: 0, count: slots)
        var texts = [[UInt8]](repeating: [], count: slots)
        var escapes = [Bool](repeating: false, count: slots)
    }

    /// `VendorRendering.summary(v)`'s bytes appended to `out`; true when they may need
    /// escaping (`mayNeedEscape`, kept with each cached text: checking them on every line was
    /// ~30 % of what plugins added to a text dump).
    @discardableResult
    func writeVendorSummary(_ v: PluginSet.Result, into out: inout [UInt8]) -> Bool {
        guard !v.messages.isEmpty else {
            let start = out.count
            out.appendText(VendorRendering.summary(v))
            return Self.mayNeedEscape(out, from: start)
        }
        // A result records share keeps its bytes: one append.
        if let held = v.held {
            if held.textKnown {
                out.append(contentsOf: held.text)
                return held.textEscape
            }
            let start = out.count
            let escape = writeMessageSummaries(v, into: &out)
            held.text.removeAll(keepingCapacity: true)
            held.text.append(contentsOf: out[start...])
            held.textEscape = escape
            held.textKnown = true
            return escape
        }
        return writeMessageSummaries(v, into: &out)
    }

    /// Each message's " plugin summary", by decode from `vendorTexts`; true when they may need escaping.
    func writeMessageSummaries(_ v: PluginSet.Result, into out: inout [UInt8]) -> Bool {
        let cache = vendorTexts
        var escape = false
        for m in v.messages {
            let id = m.replayID
            let slot = Int(id % UInt64(VendorTexts.slots))
            if id != 0, cache.ids[slot] == id {
                out.append(contentsOf: cache.texts[slot])
                escape = escape || cache.escapes[slot]
                continue
            }
            let start = out.count
            out.append(0x20); out.appendText(m.plugin); out.append(0x20); out.appendText(m.summary)
            let e = Self.mayNeedEscape(out, from: start)
            escape = escape || e
            if id != 0 {
                cache.ids[slot] = id
                cache.escapes[slot] = e
                cache.texts[slot].removeAll(keepingCapacity: true)
                cache.texts[slot].append(contentsOf: out[start...])
            }
        }
        return escape
    }

    /// "                       = characteristic 00020005-574f-4f20-5370-6865726f2121": the
    /// whole of each unnamed 128-bit UUID that the summary line shortened, the first time.
    /// Only those the line shows (a narrow line drops the service, or cuts the name).
    func legend(_ a: AnalyzedFrame, line: String, into out: inout [UInt8]) {
        guard let loc = a.location else { return }
        for (role, u) in [("service", loc.service), ("characteristic", loc.characteristic), ("descriptor", loc.descriptor)] {
            guard let u, GATTNames.name(u) == nil, u.description.count > 8, line.contains(FrameNaming.shortText(u, loc)),
                shown.uuids.count < ShownUUIDs.limit, shown.uuids.insert(u).inserted
            else { continue }
            let line = String(repeating: " ", count: 23) + "= " + role + " " + u.description
            out.append(contentsOf: (color ? Self.dim + line + Self.reset : line).utf8)
            out.append(0x0A)
        }
    }

    static let reset = "\u{1B}[0m", red = "\u{1B}[31m", green = "\u{1B}[32m", blue = "\u{1B}[34m",
        yellow = "\u{1B}[33m", dim = "\u{1B}[2m"

    /// The most specific layer's one-line summary.
    public static func summary(_ a: AnalyzedFrame) -> String { summary(a, short: false) }

    /// `short`: 128-bit UUIDs without a name as their first 8 digits and "…".
    static func summary(_ a: AnalyzedFrame, short: Bool) -> String {
        let p = parts(a, short: short)
        return p.core + p.naming + p.vendor + p.reply
    }

    /// The summary's parts: the PDU's own text, its GATT name (with a service, and without
    /// one: `nil` when the same), a plugin's messages, "(reply to …)" (with the request's
    /// handle, and without).
    struct Parts {
        var core: String, naming = "", namingWithoutService: String? = nil, vendor = "", reply = "", shortReply = ""
    }

    static func parts(_ a: AnalyzedFrame, short: Bool) -> Parts {
        let f = a.decoded
        guard let top = FrameLayer.mostSpecific(f.layers) else { return Parts(core: f.record.kindName) }
        var p = Parts(core: top.summary(f))
        if top == .att, let n = FrameNaming.summary(a, short: short) {
            p.naming = " " + n
            if let w = FrameNaming.summary(a, short: short, service: false), w != n { p.namingWithoutService = " " + w }
        }
        if let v = a.vendor { p.vendor = VendorRendering.summary(v) }
        if top == .att, let t = f.attTransaction {
            let msClock = f.record.timestamp.nanoseconds % 1_000_000 == 0 && t.latencyMicroseconds % 1000 == 0
            let h = t.requestHandle.map { " handle " + Hex.fixed(UInt64($0), width: 4) } ?? ""
            let latency = TimeFormat.latency(microseconds: t.latencyMicroseconds, millisecondClock: msClock)
            p.reply = " (reply to #\(t.requestFrame)\(h), \(latency))"
            p.shortReply = " (reply to #\(t.requestFrame), \(latency))"
        }
        return p
    }

    /// The summary in `room` columns. Too long, it loses, one step at a time until it fits:
    /// the reply's handle (the request shows it), the service of its GATT name, the end of the
    /// PDU's own fields (at a space), the reply's latency, the end of the GATT name; so that
    /// what the PDU is, what it is about and what it answers stay readable. Past that it is
    /// cut at its end.
    static func fitted(_ a: AnalyzedFrame, room: Int) -> String {
        let p = parts(a, short: true)
        let core = TerminalText.escape(p.core), vendor = TerminalText.escape(p.vendor)
        let naming = TerminalText.escape(p.naming), narrow = p.namingWithoutService.map(TerminalText.escape) ?? naming
        let bare = a.decoded.attTransaction.map { " (reply to #\($0.requestFrame))" } ?? ""
        // The PDU's name, never cut: the words before its first field ("handle=0x0020").
        let nameEnd = core.split(separator: " ", omittingEmptySubsequences: false).prefix { !$0.contains("=") }
            .reduce(-1) { $0 + $1.count + 1 }
        // The PDU's name and as many whole fields as fit ("ATT Write Request handle=0x0020…").
        func cut(_ tail: String) -> String? {
            if core.count + tail.count <= room { return core + tail }
            let keep = room - tail.count - 1
            guard !tail.isEmpty, keep >= nameEnd else { return nil }
            var c = core.prefix(keep)
            if let sp = c.lastIndex(of: " "), c.distance(from: c.startIndex, to: sp) >= nameEnd { c = c[..<sp] }
            return String(c) + "…" + tail
        }
        for (n, r, cutting) in [
            (naming, p.reply, false), (naming, p.shortReply, false), (narrow, p.shortReply, false),
            (narrow, p.shortReply, true), (narrow, bare, false), (narrow, bare, true)
        ] {
            let tail = n + vendor + r
            if core.count + tail.count <= room { return core + tail }
            if cutting, let s = cut(tail) { return s }
        }
        let coreRoom = nameEnd
        let nameRoom = room - coreRoom - (coreRoom < core.count ? 1 : 0) - vendor.count - bare.count
        if narrow.count > 6, nameRoom >= 6 {
            let c = coreRoom < core.count ? String(core.prefix(coreRoom)) + "…" : core
            return c + String(narrow.prefix(nameRoom - 1)) + "…" + vendor + bare
        }
        let all = core + narrow + vendor + bare
        return all.count <= room ? all : String(all.prefix(room - 1)) + "…"
    }

    public func render(_ a: AnalyzedFrame, into out: inout [UInt8]) {
        if width == nil, !color, a.decoded.errors.isEmpty { renderPlain(a, into: &out) } else { renderLine(a, into: &out) }
        if verbose { renderTree(a, into: &out) }
    }

    /// The summary line in general: colour, a terminal's width, errors (and the legend of the
    /// UUIDs a fitted line shortened).
    func renderLine(_ a: AnalyzedFrame, into out: inout [UInt8]) {
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
            if r.kind == .ll, let c = f.ll?.fromCentral { mark = c ? "C→P" : "P→C" } else { mark = r.kind == .note || r.kind == .index ? "=" : " " }
        }
        line += mark + " "
        if let c = f.connection {
            line += "[" + Hex.fixed(UInt64(c), width: 4) + "] "
        }
        // ATT errors, failed commands and disconnections for a failure are marked red.
        let failed = color && FrameFilter.isFailure(f)
        // The head (frame, time, mark, connection) is plain ASCII but for the mark's colour.
        // The mark is one column ("<", ">", "=") or three ("C→P" of a sniffer), then a space.
        let markColumns = r.direction == nil && r.kind == .ll && f.ll?.fromCentral != nil ? 3 : 1
        let headColumns = 6 + 1 + 15 + 1 + markColumns + 1 + (f.connection != nil ? 9 : 0) + max(0, frame.count - 6)
        let room = width.map { max(10, $0 - headColumns) }
        let truncation = r.isTruncated ? " [truncated \(r.bytes.count)/\(r.originalLength)]" : ""
        let fit = room.map { Self.fitted(a, room: $0 - truncation.count) }
        var rest = fit ?? TerminalText.escape(Self.summary(a, short: false))
        rest += truncation
        var errorText = ""
        for (i, e) in f.errors.enumerated() {
            // One damage can be found by two layers (an LL advertising PDU and its AD data): once.
            // (A layer's summary may name its damage already: not again.)
            if f.errors[..<i].contains(where: { $0.message == e.message }) || rest.contains(e.message) { continue }
            errorText += TerminalText.escape(" [\(e.layer.isEmpty ? "" : e.layer + ": ")\(e.message)]")
        }
        if let room {
            let all = rest + errorText
            if all.count > room {
                let cut = String(all.prefix(room - 1)) + "…"
                rest = String(cut.prefix(rest.count)); errorText = String(cut.dropFirst(rest.count))
            }
        }
        if color {
            line += (failed ? Self.red + rest + Self.reset : rest)
            if r.isTruncated && !failed {
                // Keep the truncation mark yellow as before.
                let mark = " [truncated \(r.bytes.count)/\(r.originalLength)]"
                if line.hasSuffix(mark) { line = String(line.dropLast(mark.count)) + Self.yellow + mark + Self.reset }
            }
            if !errorText.isEmpty { line += Self.red + errorText + Self.reset }
        } else {
            line += rest + errorText
        }
        // pcapng packet comments, whole (the capture's author wrote them).
        let comments = r.options?.comments ?? []
        for c in comments { line += TerminalText.escape(" [comment: \(c)]") }
        out.append(contentsOf: line.utf8)
        out.append(0x0A)
        if let fit { legend(a, line: fit, into: &out) }
    }

    /// The summary line without colour, width or errors (output to a file or a pipe): the
    /// same bytes as the general path, written in place without a String per piece.
    func renderPlain(_ a: AnalyzedFrame, into out: inout [UInt8]) {
        // The frame read in place (`a.decoded.…`), not copied into a local (it is 1.4 kB).
        let r = a.decoded.record
        var digits = 1, x = r.frame.magnitude
        while x >= 10 { digits += 1; x /= 10 }
        if r.frame < 0 { digits += 1 }
        for _ in digits..<max(digits, 6) { out.append(0x20) }
        out.appendDecimal(r.frame); out.append(0x20)
        TimeFormat.timeOfDay(r.timestamp, into: &out)
        out.append(0x20)
        switch r.direction {
        case .sent: out.append(UInt8(ascii: "<"))
        case .received: out.append(UInt8(ascii: ">"))
        case nil:
            if r.kind == .ll, let c = a.decoded.ll?.fromCentral {
                out.appendText(c ? "C→P" : "P→C")
            } else {
                out.append(r.kind == .note || r.kind == .index ? UInt8(ascii: "=") : 0x20)
            }
        }
        out.append(0x20)
        if let c = a.decoded.connection { out.append(UInt8(ascii: "[")); out.appendHex(UInt64(c), width: 4); out.appendText("] ") }
        let start = out.count
        // The vendor summary's bytes, checked for escaping when first written (`writeVendorSummary`).
        var vendorAt = -1, vendorEnd = -1, vendorEscape = false
        if let top = FrameLayer.mostSpecific(a.decoded.layers) {
            top.writeSummary(a.decoded, into: &out)
            if top == .att, let n = FrameNaming.summary(a, short: false) { out.append(0x20); out.appendText(n) }
            if let v = a.vendor {
                vendorAt = out.count
                vendorEscape = writeVendorSummary(v, into: &out)
                vendorEnd = out.count
            }
            if top == .att, let t = a.decoded.attTransaction {
                let msClock = r.timestamp.nanoseconds % 1_000_000 == 0 && t.latencyMicroseconds % 1000 == 0
                out.appendText(" (reply to #"); out.appendDecimal(t.requestFrame)
                if let h = t.requestHandle { out.appendText(" handle "); out.appendHex(UInt64(h), width: 4) }
                out.appendText(", "); out.appendText(TimeFormat.latency(microseconds: t.latencyMicroseconds, millisecondClock: msClock))
                out.append(UInt8(ascii: ")"))
            }
        } else {
            out.appendText(r.kindName)
        }
        // Text from the air may hold what a terminal acts on: the rare line that might, escaped
        // as the general path does (bytes that cannot start or be such a character pass).
        if vendorAt < 0
            ? Self.mayNeedEscape(out, from: start)
            : vendorEscape || Self.mayNeedEscape(out, from: start, to: vendorAt) || Self.mayNeedEscape(out, from: vendorEnd)
        {
            let s = String(decoding: out[start...], as: UTF8.self)
            out.removeSubrange(start...)
            out.appendText(TerminalText.escape(s))
        }
        if r.isTruncated {
            out.appendText(" [truncated "); out.appendDecimal(r.bytes.count); out.append(UInt8(ascii: "/"))
            out.appendDecimal(Int(r.originalLength)); out.append(UInt8(ascii: "]"))
        }
        for c in r.options?.comments ?? [] { out.appendText(TerminalText.escape(" [comment: \(c)]")) }
        out.append(0x0A)
    }

    /// Whether `out[start...]` holds a byte below 0x20, 0x7F, or 0xC2/0xE2 (the lead bytes of
    /// C1 controls and of the bidirectional and line separator characters). Eight bytes a step
    /// (a byte loop was three quarters of a plain line's own cost, most with plugin summaries):
    /// `(x - 0x01…·n) & ~x & 0x80…` is non-zero exactly when some byte of x is below n ≤ 0x80.
    static func mayNeedEscape(_ out: [UInt8], from start: Int, to end: Int? = nil) -> Bool {
        out.withUnsafeBytes { all in
            let b = UnsafeRawBufferPointer(rebasing: all[start..<(end ?? all.count)])
            let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
            @inline(__always) func below(_ x: UInt64, _ n: UInt64) -> Bool { (x &- ones &* n) & ~x & high != 0 }
            var i = 0
            while i + 8 <= b.count {
                let x = b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if below(x, 0x20) || below(x ^ (ones &* 0x7F), 1) || below(x ^ (ones &* 0xC2), 1) || below(x ^ (ones &* 0xE2), 1) {
                    return true
                }
                i += 8
            }
            while i < b.count {
                let c = b[i]
                if c < 0x20 || c == 0x7F || c == 0xC2 || c == 0xE2 { return true }
                i += 1
            }
            return false
        }
    }

    /// `-v`: the comments, the layered tree, and a hex dump of damaged or unknown records.
    func renderTree(_ a: AnalyzedFrame, into out: inout [UInt8]) {
        let f = a.decoded
        let r = f.record
        let comments = r.options?.comments ?? []
        for c in comments { out.append(contentsOf: ("  comment: " + TerminalText.escape(c)).utf8); out.append(0x0A) }
        var tree = TextFieldWriter(depth: 1)
        var layers = f.layers
        while let layer = layers.popFirst() {
            guard layer.inTree else { continue }
            layer.open(f, into: &tree)
            if layer == .att { FrameNaming.describe(a, into: &tree) }
            layer.close(f, into: &tree)
        }
        if let v = a.vendor { VendorRendering.tree(v, into: &tree) }
        for l in tree.lines { out.append(contentsOf: l.utf8); out.append(0x0A) }
        if !f.errors.isEmpty || r.kind == .unknown {
            out.append(contentsOf: Hex.dump(r.bytes, indent: "    ").utf8)
            out.append(0x0A)
        }
    }
}

/// Runs of LL Empty PDUs in text output, folded into one line ("… 37 Empty PDUs #1203…#1240"):
/// half of a sniffed connection's packets say nothing. One alone is shown as it is. JSON
/// Lines and CSV keep every record; `dump --empty` shows them all.
public struct EmptyPDURuns {
    var count = 0, first = 0, last = 0
    /// The lines of a run while it is short enough to show as is.
    var pending: [UInt8] = []
    static let fold = 2

    public init() {}

    public static func isEmptyPDU(_ f: DecodedFrame) -> Bool {
        f.record.kind == .ll && f.ll?.isEmptyPDU == true && f.ll?.crcOK != false
    }

    public mutating func add(_ a: AnalyzedFrame, _ text: FrameText) {
        if count == 0 { first = a.decoded.record.frame }
        last = a.decoded.record.frame
        count += 1
        if count < Self.fold { text.render(a, into: &pending) } else { pending.removeAll(keepingCapacity: true) }
    }

    /// Writes the run ended (before another record, or at the end).
    public mutating func flush(into out: inout [UInt8], color: Bool) {
        guard count > 0 else { return }
        if count < Self.fold {
            out += pending
        } else {
            let line = String(repeating: " ", count: 7) + "… \(count) Empty PDUs #\(first)…#\(last)"
            out += Array((color ? FrameText.dim + line + FrameText.reset : line).utf8)
            out.append(0x0A)
        }
        count = 0
        pending.removeAll(keepingCapacity: true)
    }
}
