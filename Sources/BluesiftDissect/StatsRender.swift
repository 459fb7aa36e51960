import Foundation
import BluesiftWire
import BluesiftGATT
import BluesiftPlugins
import BluesiftCapture
import BluesiftProtocols

/// What `stats` prints of a `StatsReport`: the text screen, JSON (docs/stats.md), and the
/// CSV tables (per characteristic, sensors, the modules' tables), each header written once per output.
public enum StatsRender {
    /// Keys sorted: the encoder's own order follows a hash seeded per process, so the same
    /// capture gave differently ordered objects run to run.
    public static func json(_ r: StatsReport) -> Data {
        let e = JSONEncoder()
        e.keyEncodingStrategy = .convertToSnakeCase
        e.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return (try? e.encode(r)) ?? Data("{}".utf8)
    }

    public static func csvField(_ s: String?) -> String {
        s.map(CSV.quote) ?? ""
    }

    public static let csvHeader =
        "file,connection,conn_handle,peer,handle,service,service_name,characteristic,characteristic_name,descriptor,descriptor_name,named_by,reads,write_requests,write_commands,notifications,indications,errors,bytes_to_server,bytes_from_server,latency_count,latency_min_us,latency_median_us,latency_p95_us,latency_max_us"

    /// The per-characteristic rows, without the header (written once per output).
    public static func csv(_ r: StatsReport) -> String {
        var lines: [String] = []
        for c in r.characteristics {
            let conn = r.connections[c.connection]
            let l = c.latency
            let cols: [String?] = [
                r.file, String(c.connection), Hex.fixed(UInt64(conn.handle), width: 4), conn.peer,
                Hex.fixed(UInt64(c.handle), width: 4), c.service, c.serviceName, c.characteristic,
                c.characteristicName, c.descriptor, c.descriptorName, c.namedBy,
                String(c.reads), String(c.writeRequests), String(c.writeCommands), String(c.notifications),
                String(c.indications), String(c.errors), String(c.bytesToServer), String(c.bytesFromServer),
                l.map { String($0.count) } ?? "0", l.map { String($0.minUs) }, l.map { String($0.medianUs) },
                l.map { String($0.p95Us) }, l.map { String($0.maxUs) }
            ]
            lines.append(cols.map(csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    /// A module's CSV table (`StatsCollector.tables`): its header, and its rows without it.
    public static func moduleTable(_ name: String) -> (header: String, collector: Int)? {
        for (i, c) in ProtocolRegistry.shared.collectors.enumerated() {
            if let t = c.type.tables.first(where: { $0.name == name }) { return (t.header, i) }
        }
        return nil
    }

    public static func moduleCSV(_ r: StatsReport, table name: String) -> String {
        var lines: [String] = []
        for m in r.modules { for row in m.tables[name] ?? [] { lines.append(row.map(csvField).joined(separator: ",")) } }
        return lines.joined(separator: "\n")
    }

    public static let sensorsCSVHeader = "file,address,plugin,message,field,unit,count,na,min,max,first,first_us,first_frame,last,last_us,last_frame"

    /// The sensor rows (numeric fields plugins decoded from advertising data), without the header.
    public static func sensorsCSV(_ r: StatsReport) -> String {
        var lines: [String] = []
        for s in r.sensors ?? [] {
            let cols: [String?] = [
                r.file, s.address, s.plugin, s.message, s.field, s.unit, String(s.count), String(s.na),
                s.min.map { value($0, s) }, s.max.map { value($0, s) },
                s.first.map { value($0, s) }, s.firstUs.map { String($0) }, s.firstFrame.map(String.init),
                s.last.map { value($0, s) }, s.lastUs.map { String($0) }, s.lastFrame.map(String.init)
            ]
            lines.append(cols.map(csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    /// A sensor value as dump shows the field: its decimal places, else the shortest text.
    public static func value(_ v: Double, _ s: StatsReport.Sensor) -> String {
        if let d = s.decimals { return PluginValue.format(v, decimals: d) }
        return PluginValue.real(v).description
    }

    /// "12:34:56.123456" (UTC, as the summary line of dump); with `date`, RFC 3339 (a capture
    /// longer than a day).
    static func timeOfDay(_ us: Int64?, date: Bool = false) -> String {
        guard let us else { return "" }
        if date { return TimeFormat.rfc3339(Timestamp(microseconds: us)) }
        var b: [UInt8] = []
        TimeFormat.timeOfDay(Timestamp(microseconds: us), into: &b)
        return String(decoding: b, as: UTF8.self)
    }

    /// The sensor table: per device (address, advertised name) and plugin message, one row per
    /// numeric field: readings, min, max, first and last with their time of day (UTC). Rows
    /// that do not fit `width` take two lines (the field, then its values), as characteristics do.
    static func sensorLines(_ r: StatsReport, _ sensors: [StatsReport.Sensor], width: Int?) -> [String] {
        var o: [String] = []
        let devices = Set(sensors.map(\.address)).count
        o.append(
            "sensors: \(sensors.count) field\(sensors.count == 1 ? "" : "s") of \(devices) device\(devices == 1 ? "" : "s") (decoded from advertising data; times UTC)"
                + ((r.sensorsNotListed ?? 0) > 0 ? " (+\(r.sensorsNotListed!) readings of fields not listed)" : ""))
        func label(_ s: StatsReport.Sensor) -> String { s.field + (s.unit.map { " (\($0))" } ?? "") }
        let w = max(14, sensors.map { label($0).count }.max() ?? 0)
        let names = Dictionary(r.devices.map { ($0.address, $0.names) }, uniquingKeysWith: { a, _ in a })
        func text(_ v: Double?, _ s: StatsReport.Sensor) -> String { v.map { value($0, s) } ?? "n/a" }
        func cell(_ t: String, _ n: Int) -> String { String(repeating: " ", count: max(0, n - t.count)) + t }
        let days = r.durationUs >= 86_400_000_000
        func timeOfDay(_ us: Int64?) -> String { StatsRender.timeOfDay(us, date: days) }
        var rows: [(group: String, line: String, s: StatsReport.Sensor)] = []
        for s in sensors {
            let first = s.first.map { "\(value($0, s)) at \(timeOfDay(s.firstUs))" } ?? "-"
            let last = s.last.map { "\(value($0, s)) at \(timeOfDay(s.lastUs))" } ?? "-"
            var line = "    " + label(s) + String(repeating: " ", count: w - label(s).count)
            line += " " + cell(String(s.count), 6) + " " + cell(text(s.min, s), 10) + " " + cell(text(s.max, s), 10)
            line += "  " + first + String(repeating: " ", count: max(1, (days ? 42 : 30) - first.count)) + last
            if s.na > 0 { line += "  (\(s.na) n/a)" }
            var group = "  " + s.address
            if let n = names[s.address], !n.isEmpty { group += "  \"" + n.joined(separator: "\", \"") + "\"" }
            group += "  " + s.plugin + " " + s.message
            rows.append((group, line, s))
        }
        let wide = width.map { wd in rows.contains { $0.line.count > wd } } ?? false
        if !wide {
            o.append("    " + "field" + String(repeating: " ", count: w - 5) + "  count        min        max  first" + String(repeating: " ", count: days ? 37 : 25) + "last")
        }
        var group = ""
        for row in rows {
            if row.group != group { o.append(row.group); group = row.group }
            if let width, wide {
                let s = row.s
                var items = ["\(s.count) reading\(s.count == 1 ? "" : "s")"]
                if s.count > 0 {
                    items += [
                        "min \(text(s.min, s))", "max \(text(s.max, s))",
                        "first \(text(s.first, s)) at \(timeOfDay(s.firstUs))", "last \(text(s.last, s)) at \(timeOfDay(s.lastUs))"
                    ]
                }
                if s.na > 0 { items.append("\(s.na) n/a") }
                o.append("    " + label(s))
                o += joined(String(repeating: " ", count: 8), items, ", ", hang: 8, width)
            } else {
                o.append(row.line)
            }
        }
        return o
    }

    public static func ms(_ us: Int64) -> String { TimeFormat.duration(microseconds: us) }

    /// `v` right-aligned in `w` columns.
    public static func padded(_ v: Int, _ w: Int) -> String { let s = String(v); return String(repeating: " ", count: max(0, w - s.count)) + s }

    public static func characteristicLabel(_ c: StatsReport.Characteristic) -> String {
        var parts: [String] = []
        if let s = c.service { parts.append(GATTNames.label(s, name: c.serviceName)) } else if let n = c.serviceName { parts.append(n) }
        if let ch = c.characteristic { parts.append(GATTNames.label(ch, name: c.characteristicName)) } else if let n = c.characteristicName { parts.append(n) }
        if let d = c.descriptorName ?? c.descriptor { parts.append(d) }
        return parts.isEmpty ? "(unnamed)" : parts.joined(separator: " / ")
    }

    /// `width`: a terminal's columns: long lines are wrapped under themselves, and the
    /// characteristics table, when its rows do not fit, takes two lines per characteristic
    /// (its name, then the counts that are not 0). Nil: every line whole (files, pipes).
    public static func text(_ r: StatsReport, width: Int? = nil) -> String {
        var o: [String] = []
        o.append("file:        \(r.file)")
        o.append("format:      \(r.format)")
        var span = ""
        if let a = r.first, let b = r.last { span = ", \(a) → \(b) (\(ms(r.durationUs)))" }
        o.append("records:     \(r.records)" + (r.truncatedRecords > 0 ? " (\(r.truncatedRecords) truncated)" : "") + span)
        o.append("")
        o.append("capture quality:")
        if r.quality.isEmpty { o.append("  no problems found with the capture itself") }
        for q in r.quality {
            o.append("  \(q.severity == "warning" ? "!" : "i") \(q.message)" + (q.frame.map { " (from frame \($0))" } ?? ""))
            o.append("    → \(q.advice)")
        }
        o.append("")
        // Advertisers and connected peers (those that never advertised in the capture have 0 reports).
        let silent = r.devices.filter { $0.advertisingReports == 0 }.count
        o.append(
            "devices: \(r.devices.count)" + (r.devicesNotListed > 0 ? " (+\(r.devicesNotListed) not listed)" : "")
                + (silent > 0 ? " (\(silent) connected without advertising)" : ""))
        for d in r.devices.sorted(by: { ($0.connections.count, $0.advertisingReports) > ($1.connections.count, $1.advertisingReports) }).prefix(20) {
            var s = "  \(d.address)"
            if let t = d.addressType { s += " (\(t))" }
            if !d.names.isEmpty { s += "  \"" + d.names.joined(separator: "\", \"") + "\"" }
            if let lo = d.rssiMin, let hi = d.rssiMax { s += "  RSSI \(lo)…\(hi) dBm" }
            if !d.companies.isEmpty { s += "  " + d.companies.joined(separator: ", ") }
            s += "  \(d.advertisingReports) reports"
            if !d.connections.isEmpty { s += ", connections " + d.connections.map { "#\($0)" }.joined(separator: " ") }
            o.append(s)
        }
        if r.devices.count > 20 { o.append("  … \(r.devices.count - 20) more (--format json lists all)") }
        o.append("")
        var attempts: [String] = []
        for (outcome, label) in [("failed", "failed"), ("cancelled", "cancelled by the host"), ("never_completed", "never completed")] {
            let n = r.failedConnections.filter { $0.outcome == outcome }.count
            if n > 0 { attempts.append("\(n) \(label)") }
        }
        o.append("connections: \(r.connections.count)" + (attempts.isEmpty ? "" : "; attempts: " + attempts.joined(separator: ", ")))
        for c in r.connections {
            var s = "  #\(c.index) \(Hex.fixed(UInt64(c.handle), width: 4)) \(c.transport ?? "?") peer \(c.peer ?? "unknown")"
            if let n = c.peerName { s += " \"\(n)\"" }
            if let role = c.role { s += " \(role)" }
            if let start = c.startFrame {
                s += "  frames \(start)…" + (c.endFrame.map { "\($0)" } ?? " open at end")
            } else {
                s += "  started before the capture, first seen #\(c.firstFrame)" + (c.endFrame.map { ", ended #\($0)" } ?? ", open at end")
            }
            s += "  \(ms(c.durationUs))"
            o.append(s)
            for (i, p) in c.parameters.enumerated() {
                o.append("      \(i == 0 ? "parameters" : "update    ") #\(p.frame): interval \(p.intervalMs) ms, latency \(p.latency), timeout \(p.timeout * 10) ms")
            }
            var facts: [String] = []
            if let m = c.mtu { facts.append("MTU \(m)") }
            if let tx = c.txPhy, let rx = c.rxPhy { facts.append("PHY \(tx)/\(rx)") }
            if let tx = c.maxTxOctets, let rx = c.maxRxOctets { facts.append("data length tx \(tx) rx \(rx)") }
            for e in c.encryption where e.enabled {
                facts.append("encrypted #\(e.frame)" + (e.keySize.map { " key \($0) bytes" } ?? ""))
            }
            if let p = c.pairingFrame { facts.append("pairing #\(p)" + (c.pairingFailed.map { " FAILED (\($0))" } ?? "")) }
            facts.append("\(c.attOperations) ATT" + (c.attErrors > 0 ? ", \(c.attErrors) errors" : ""))
            if let reason = c.disconnectReasonName { facts.append("ended: \(reason)") }
            o.append("      " + facts.joined(separator: "; "))
        }
        for f in r.failedConnections {
            o.append("  attempt #\(f.frame) peer \(f.peer ?? "?"): \(f.outcome.replacingOccurrences(of: "_", with: " "))" + (f.statusName.map { " (\($0))" } ?? ""))
        }
        o.append("")
        o.append("characteristics: \(r.characteristics.count)")
        let rows = characteristicRows(r)
        if let width, rows.contains(where: { $0.count > width }) {
            o.append("  conn handle  name; then counts not 0, latency min/median/p95/max")
            for c in r.characteristics {
                var counts: [String] = []
                for (n, label) in [
                    (c.reads, "reads"), (c.writeRequests, "write requests"), (c.writeCommands, "write commands"),
                    (c.notifications, "notifications"), (c.indications, "indications"), (c.errors, "errors"),
                    (c.bytesToServer, "bytes to server"), (c.bytesFromServer, "bytes from server")
                ] where n > 0 {
                    counts.append("\(n) " + (n == 1 ? label.replacingOccurrences(of: "s ", with: " ").replacingOccurrences(of: "s$", with: "", options: .regularExpression) : label))
                }
                if let l = c.latency { counts.append("latency " + latencyText(l, r)) }
                // Broken between the parts of the name and between counts, never inside one.
                let head = "  \(StatsRender.padded(c.connection, 4)) \(Hex.fixed(UInt64(c.handle), width: 4))  "
                o += joined(head, characteristicLabel(c).components(separatedBy: " / "), " / ", hang: head.count, width)
                o += joined(String(repeating: " ", count: 14), counts.isEmpty ? ["no operations"] : counts, ", ", hang: 14, width)
            }
        } else if !r.characteristics.isEmpty {
            o.append("  conn handle  reads wr-req wr-cmd notif indic errs   bytes→srv  bytes←srv  latency min/median/p95/max      name")
            o += rows
        }
        for m in r.modules { o += m.text }
        if let sensors = r.sensors, !sensors.isEmpty { o.append(""); o += sensorLines(r, sensors, width: width) }
        o.append("")
        let total = r.problemCounts.reduce(0) { $0 + $1.count }
        o.append("problems: \(total)" + (total > 0 ? " (" + r.problemCounts.map { "\($0.kind) \($0.count)" }.joined(separator: ", ") + ")" : ""))
        for p in r.problems.prefix(50) {
            o.append("  #\(p.frame) \(p.kind): \(p.message)" + (p.requestFrame.map { " (request #\($0))" } ?? ""))
        }
        if total > 50 { o.append("  … \(total - 50) more (--format json lists up to \(StatsLimits.problems))") }
        guard let width else { return o.joined(separator: "\n") }
        return o.flatMap { wrap($0, width) }.joined(separator: "\n")
    }

    /// The characteristics table's rows (one line each, as files and pipes get them).
    static func characteristicRows(_ r: StatsReport) -> [String] {
        r.characteristics.map { c in
            let n = StatsRender.padded
            var lat = c.latency.map { latencyText($0, r) } ?? "-"
            lat += String(repeating: " ", count: max(0, 31 - lat.count)) // "9999 µs" four times
            return
                "  \(n(c.connection, 4)) \(Hex.fixed(UInt64(c.handle), width: 4)) \(n(c.reads, 6)) \(n(c.writeRequests, 6)) \(n(c.writeCommands, 6)) \(n(c.notifications, 5)) \(n(c.indications, 5)) \(n(c.errors, 4)) \(n(c.bytesToServer, 11)) \(n(c.bytesFromServer, 10))  \(lat) \(characteristicLabel(c))"
        }
    }

    static func latencyText(_ l: StatsReport.Latency, _ r: StatsReport) -> String {
        [l.minUs, l.medianUs, l.p95Us, l.maxUs].map { TimeFormat.latency(microseconds: $0, millisecondClock: r.millisecondClock) }
            .joined(separator: "/")
    }

    /// `items` after `head`, joined by `separator`, broken between items (the separator ends
    /// the line), the rest `hang` columns in; an item longer than a line is left to `wrap`.
    static func joined(_ head: String, _ items: [String], _ separator: String, hang: Int, _ width: Int) -> [String] {
        var out: [String] = [], line = head, first = true
        let sep = separator.hasSuffix(" ") ? String(separator.dropLast()) : separator
        for (i, item) in items.enumerated() {
            let piece = item + (i < items.count - 1 ? sep : "")
            if !first && line.count + 1 + piece.count > width {
                out.append(line)
                line = String(repeating: " ", count: hang) + piece
            } else {
                line += (first ? "" : " ") + piece
            }
            first = false
        }
        out.append(line)
        return out
    }

    /// A line in `width` columns, broken at spaces; the rest under its text (after a "! ",
    /// "i " or "→ " mark), or 4 columns in. A word longer than the line is cut.
    static func wrap(_ line: String, _ width: Int) -> [String] {
        guard line.count > width else { return [line] }
        let lead = line.prefix { $0 == " " }.count
        let body = line.dropFirst(lead)
        var hang = lead + (["! ", "i ", "→ "].contains { body.hasPrefix($0) } ? 2 : 4)
        // "records:     61318, …": under the value.
        if lead == 0, let colon = line.firstIndex(of: ":"), line[line.index(after: colon)...].hasPrefix(" ") {
            let value = line[line.index(after: colon)...].prefix { $0 == " " }.count
            hang = line.distance(from: line.startIndex, to: colon) + 1 + value
        }
        var out: [String] = [], current = String(line.prefix(lead))
        for word in body.split(separator: " ", omittingEmptySubsequences: false) {
            let atStart = current.count == (out.isEmpty ? lead : hang)
            if !atStart && current.count + 1 + word.count > width {
                out.append(current)
                current = String(repeating: " ", count: hang)
            }
            let w = current.count + word.count > width ? String(word.prefix(max(1, width - current.count - 1))) + "…" : String(word)
            current += (current.count == (out.isEmpty ? lead : hang) ? "" : " ") + w
        }
        out.append(current)
        return out
    }
}
