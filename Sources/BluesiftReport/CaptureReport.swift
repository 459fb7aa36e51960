import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins
import BluesiftDissect
import BluesiftSession

/// Options of `bluesift report`.
public struct ReportOptions: Sendable {
    /// Seconds east of UTC that times are shown in (0: UTC), and its label.
    public var utcOffsetSeconds = 0
    public var zoneLabel = "UTC"
    /// Sequence rows embedded; past it only errors, vendor frames and SMP are kept, and the
    /// page says how many were left out. ~60 bytes a row.
    public var maxOperations = 250_000
    /// `bluesift fuzz` findings for the page's Fuzz view: the bytes of its findings.json
    /// (`{"findings": [...], ...}`, read as plain JSON) and the folder they came from.
    public var fuzz: (json: [UInt8], dir: String)?
    public init() {}
}

/// Writes the self-contained HTML report of a capture, streaming: the sequence rows go to
/// `sink` as the capture is read (never held in memory), the statistics after them.
/// Layout: docs/report.md. The page renders itself from the embedded JSON (ReportAssets.js).
public final class CaptureReportWriter {
    let sink: (UnsafeRawBufferPointer) -> Void
    var buffer: [UInt8] = []
    public private(set) var bytesWritten = 0
    public private(set) var operations = 0
    public private(set) var operationsLeftOut = 0
    var firstLeftOutFrame: Int?

    public init(sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.sink = sink
        buffer.reserveCapacity(1 << 17)
    }

    func flush(force: Bool = false) {
        guard force || buffer.count >= 1 << 16 else { return }
        buffer.withUnsafeBytes { sink($0) }
        bytesWritten += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    func raw(_ s: String) { buffer.append(contentsOf: s.utf8) }

    /// A JSON string safe inside <script>: `<`, `>`, `&` and U+2028/9 escaped too.
    func jsonString(_ s: String) {
        buffer.append(0x22)
        for u in s.unicodeScalars {
            switch u {
            case "\"": buffer.append(contentsOf: [0x5C, 0x22])
            case "\\": buffer.append(contentsOf: [0x5C, 0x5C])
            case "\n": buffer.append(contentsOf: [0x5C, 0x6E])
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                raw(String(format: "\\u%04x", u.value))
            default:
                if u.value < 0x20 { raw(String(format: "\\u%04x", u.value)) } else { buffer.append(contentsOf: String(u).utf8) }
            }
        }
        buffer.append(0x22)
    }

    /// Runs the whole capture: returns the statistics the page shows.
    /// With a non-empty `filter` (the CLI's common filter options) only the records it passes
    /// are shown and counted; the decoder still sees every record.
    public func write(session: AnalysisSession, file: String, options: ReportOptions) -> StatsReport {
        let reader = session.reader, analyzer = session.analyzer
        let f = reader.format
        let stats = CaptureStats(file: file, format: f.container.rawValue + ", " + f.datalinkName)
        maxRows = options.maxOperations
        stats.sensors.keepSeries = true
        raw(ReportAssets.head(title: "bluesift report — " + (file.split(separator: "/").last.map(String.init) ?? file)))
        raw("<script type=\"application/json\" id=\"ops\">[")
        var base: Int64?
        var first = true
        session.forEach { frame in
            stats.add(&frame, decoder: analyzer.decoder)
            if base == nil { base = frame.record.timestamp.microseconds }
            let layers = frame.decoded.layers
            if layers.contains(.att) || layers.contains(.smp) {
                row(&frame, stats, base: base!, first: &first)
            } else if !layers.isDisjoint(with: .anyModule), let m = frame.decoded.module, m.inSequence {
                // Modules' PDUs (Classic signalling, AT lines, AVRCP), not media packets (thousands).
                classicRow(&frame, stats, base: base!, first: &first)
            }
        }
        raw("]</script>\n")
        let report = stats.finish(decoder: analyzer.decoder, warnings: reader.warnings)
        // Everything else the page needs, small: statistics, GATT databases, settings.
        raw("<script type=\"application/json\" id=\"stats\">")
        appendJSON(report)
        raw("</script>\n<script type=\"application/json\" id=\"sensors\">")
        sensorSeries(stats, report)
        raw("</script>\n<script type=\"application/json\" id=\"gatt\">")
        let gatt = GATTJSON.encode(analyzer.gatt.devices)
        buffer.append(contentsOf: Self.scriptSafe(Array(gatt.utf8)))
        raw("</script>\n<script type=\"application/json\" id=\"meta\">")
        raw("{\"kind\":\"capture\",\"base_us\":\(base ?? 0),\"utc_offset_s\":\(options.utcOffsetSeconds),\"zone\":")
        jsonString(options.zoneLabel)
        raw(",\"operations\":\(operations),\"left_out\":\(operationsLeftOut),\"left_out_from\":\(firstLeftOutFrame ?? 0),\"max_operations\":\(options.maxOperations)")
        raw(",\"generator\":\"bluesift report\"}</script>\n")
        var views = ProtocolRegistry.shared.reportViews(report.modules)
        if let fuzz = options.fuzz {
            raw("<script type=\"application/json\" id=\"fuzz\">")
            buffer.append(contentsOf: Self.scriptSafe(fuzz.json))
            raw("</script>\n<script type=\"application/json\" id=\"fuzz-meta\">{\"dir\":")
            jsonString(fuzz.dir)
            raw("}</script>\n")
            views.append(ReportAssets.fuzzView)
        }
        raw(ReportAssets.tail(views: views))
        flush(force: true)
        return report
    }

    /// The chart data of each row of `report.sensors` (same order): `[{"t0_us", "width_us",
    /// "b": [[t_first, first, min, max, last, t_last, count], …]}]`, times in µs from `t0_us`,
    /// one entry per non-empty bucket (at most `SensorSeries.columns`: min/max per column).
    func sensorSeries(_ stats: CaptureStats, _ report: StatsReport) {
        raw("[")
        for (k, i) in stats.sensorOrder.enumerated() {
            let s = stats.sensors.series[i], row = report.sensors![k]
            func v(_ x: Double) -> String { StatsRender.value(SensorTable.rounded(x, row.decimals), row) }
            raw(k == 0 ? "" : ",\n")
            raw("{\"t0_us\":\(s.t0Us),\"width_us\":\(s.widthUs),\"b\":[")
            var first = true
            for b in s.buckets {
                guard let b else { continue }
                raw(first ? "[" : ",[")
                first = false
                raw("\(b.tFirst),\(v(b.first)),\(v(b.min)),\(v(b.max)),\(v(b.last)),\(b.tLast),\(b.count)]")
            }
            raw("]}")
            flush()
        }
        raw("]")
    }

    /// Writes the page of a replay report (`replay --report` JSON, given as bytes).
    public func writeReplay(json: [UInt8], file: String, options: ReportOptions) {
        raw(ReportAssets.head(title: "bluesift replay report — " + (file.split(separator: "/").last.map(String.init) ?? file)))
        raw("<script type=\"application/json\" id=\"replay\">")
        buffer.append(contentsOf: Self.scriptSafe(json))
        raw("</script>\n<script type=\"application/json\" id=\"meta\">{\"kind\":\"replay\",\"file\":")
        jsonString(file)
        raw(",\"utc_offset_s\":\(options.utcOffsetSeconds),\"zone\":")
        jsonString(options.zoneLabel)
        raw("}</script>\n")
        raw(ReportAssets.tail(views: []))
        flush(force: true)
    }

    /// JSON bytes made safe inside a <script> element (`<` only occurs in strings).
    static func scriptSafe(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        for c in b {
            if c == 0x3C { out.append(contentsOf: Array("\\u003c".utf8)) } else { out.append(c) }
        }
        return out
    }

    func appendJSON(_ r: StatsReport) {
        buffer.append(contentsOf: Self.scriptSafe(Array(StatsRender.json(r))))
    }

    /// One sequence row: [frame, t_us, conn, dir, op, handle, char, latency_us, request_frame,
    /// error, value_hex, text, vendor, discovery_end]. discovery_end 1: an Error Response that ends a
    /// discovery (`ATTPDU.endsDiscovery`), not an error. dir 0 host→peer, 1 peer→host, 2 unknown; op is the ATT opcode,
    /// or 0x100 + the SMP code (0x200: a Classic record, `classicRow`). -1 / 0 / "" mean
    /// absent. Documented in docs/report.md.
    func row(_ a: inout AnalyzedFrame, _ stats: CaptureStats, base: Int64, first: inout Bool) {
        let r = a.decoded.record
        let isATT = a.decoded.layers.contains(.att)
        let att = a.decoded.attStorage
        let op: Int = isATT ? Int(att.opcode.rawValue) : Self.smpRowBase + Int(a.decoded.smp?.code ?? 0)
        let isError = isATT ? att.opcode == .errorResponse : a.decoded.smp?.smpCode == .pairingFailed
        if operations >= maxRows && !(isError || a.vendor != nil || !isATT) {
            operationsLeftOut += 1
            if firstLeftOutFrame == nil { firstLeftOutFrame = r.frame }
            return
        }
        operations += 1
        if !first { buffer.append(0x2C) }
        first = false
        if operations & 0x3F == 0 { buffer.append(0x0A) }
        let dir = r.direction.map { $0 == .sent ? 0 : 1 } ?? 2
        let t = a.decoded.attTransaction
        let handle: Int = isATT ? (att.handle ?? t?.requestHandle ?? att.errorHandle).map(Int.init) ?? -1 : -1
        let conn = stats.lastConnection ?? -1
        let ch = isATT ? (stats.lastCharacteristic ?? -1) : -1
        raw("[\(r.frame),\(r.timestamp.microseconds &- base),\(conn),\(dir),\(op),\(handle),\(ch),")
        raw("\(t.map { $0.latencyMicroseconds } ?? -1),\(t?.requestFrame ?? 0),\(isATT ? Int(att.errorCode ?? 0) : 0),")
        // The value, cut to 24 bytes (the page says so with "…").
        buffer.append(0x22)
        let valueBytes: UnsafeRawBufferPointer? = isATT ? att.value : a.decoded.smp.map { $0.parameters }
        if let v = valueBytes {
            let n = min(v.count, 24)
            for i in 0..<n { let b = v[i]; buffer.append(Self.hexDigits[Int(b >> 4)]); buffer.append(Self.hexDigits[Int(b & 15)]) }
            if v.count > 24 { raw("…") }
        }
        buffer.append(0x22); buffer.append(0x2C)
        var text = ""
        if isATT {
            if att.opcode == .errorResponse, let code = att.errorCode {
                text = ATTErrorCode(rawValue: code).name + " (" + (att.requestOpcode?.name ?? "request") + ")"
            } else if let v = a.valueText {
                text = v
            } else if att.opcode == .exchangeMTUResponse || att.opcode == .exchangeMTURequest, let m = att.mtu {
                text = "MTU \(m)"
            }
        } else if let smp = a.decoded.smp {
            text = smp.summary
        }
        if text.utf8.count > 160 { text = String(text.prefix(157)) + "…" }
        jsonString(text)
        raw(a.vendor != nil ? ",1" : ",0")
        raw(isATT && att.endsDiscovery ? ",1]" : ",0]")
        flush()
    }

    /// A Classic row: op 0x200, the record's summary line as its text ("AVDTP Start Command
    /// seid=1", "HFP AT+BRSF=191"); no handle, characteristic, latency or value.
    func classicRow(_ a: inout AnalyzedFrame, _ stats: CaptureStats, base: Int64, first: inout Bool) {
        let r = a.decoded.record
        if operations >= maxRows {
            operationsLeftOut += 1
            if firstLeftOutFrame == nil { firstLeftOutFrame = r.frame }
            return
        }
        operations += 1
        if !first { buffer.append(0x2C) }
        first = false
        if operations & 0x3F == 0 { buffer.append(0x0A) }
        let dir = r.direction.map { $0 == .sent ? 0 : 1 } ?? 2
        raw("[\(r.frame),\(r.timestamp.microseconds &- base),\(stats.lastConnection ?? -1),\(dir),\(Self.classicOp),-1,-1,-1,0,0,\"\",")
        var text = FrameText.summary(a)
        if text.utf8.count > 160 { text = String(text.prefix(157)) + "…" }
        jsonString(text)
        raw(",0,0]")
        flush()
    }

    /// The sequence row op of Classic records (ATT opcodes are below 0x100, SMP 0x100 + code).
    static let classicOp = 0x200
    /// SMP rows: this plus the SMP code (docs/report.md).
    static let smpRowBase = 0x100

    var maxRows = 250_000
    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    public func setMaxOperations(_ n: Int) { maxRows = n }
}
