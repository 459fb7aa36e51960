import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftSession
import BluesiftPlugins

struct Frames: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frames",
        abstract: "Vendor messages only, decoded by plugins: time, direction, characteristic, message, fields.",
        discussion: """
            Frames spanning several ATT values are listed once, at the value that completes them. \
            csv columns: file, frame, time, direction, characteristic, plugin, message, fields, checksum. \
            jsonl: one object per message: {"file","frame","ts","dir","characteristic","plugin","message","fields","checksum"}.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, csv, jsonl }

    @Argument(help: "Capture files, or folders of them.") var files: [String]
    @OptionGroup var merging: MergeOption
    @Option(help: "Output format: text, csv or jsonl.") var format: Format = .text
    @OptionGroup var decode: DecodeOptions
    @OptionGroup var filter: FilterOptions

    @OptionGroup var jobs: JobsOption

    @Flag(name: .shortAndLong, help: "List each file of a folder that is skipped and each capture without vendor messages (by default one line counts them).")
    var verbose = false

    @OptionGroup var output: OutputDirOption

    func validate() throws {
        if output.outputDir != nil, merging.merge { throw ValidationError("--output-dir writes one file per capture: not with --merge") }
    }

    func run() throws {
        let filter = try self.filter.make()
        let settings = try decode.settings()
        let list = settings.plugins, plugins = decode.plugins
        if list == nil && !plugins.noPlugins {
            stderrLine(
                "bluesift: no vendor plugins found (looked in: \(plugins.searchPath().joined(separator: ", "))); "
                    + "point --plugins DIR or $BLUESIFT_PLUGINS at a folder of *.yaml plugins")
        }
        let header = "file,frame,time,direction,characteristic,plugin,message,fields,checksum"
        if format == .csv && output.outputDir == nil {
            var out = Output()
            out.line(header)
            out.flush()
        }
        let expanded = MergedInputs.inputs(files, merge: merging.merge, listSkipped: verbose)
        let quiet = FileJobs.Quiet()
        let many = files.count > 1 || expanded.count > 1
        let toDirectory = output.outputDir != nil
        let body: (String, Int32) -> Int32 = { file, fd in
            if toDirectory && format == .csv { var out = Output(fd: fd); out.line(header); out.flush() }
            guard let session = openSession(file, decode: settings, filter: filter) else { return 2 }
            var out = Output(fd: fd)
            var messages = 0
            session.forEach(stopEarly: true) { a in
                guard let v = a.vendor, !v.messages.isEmpty else { return }
                let ch = a.location?.characteristic?.description ?? v.match.channel?.description ?? Hex.fixed(UInt64(v.handle), width: 4)
                for (i, m) in v.messages.enumerated() {
                    // Advertising data: "adv" and the advertiser in place of a direction and a handle.
                    if v.match.advertising != nil, i < v.sources.count {
                        write(m, v, v.sources[i].address.map { BDAddr($0).description } ?? "?", a.record, file, many, &out, dir: "adv")
                    } else {
                        write(m, v, ch, a.record, file, many, &out)
                    }
                }
                messages += v.messages.count
                out.flushIfNeeded()
            }
            out.flush()
            printWarnings(session.reader, path: file)
            let filtering = session.filtering
            if filtering && session.matched == 0 {
                self.filter.reportNoMatch(file)
            } else if messages == 0 {
                quiet.add(
                    file,
                    "bluesift: \(file): no vendor messages" + (filtering ? " in the records that match \(self.filter.summary)" : "")
                        + (list == nil ? " (no plugins loaded)" : ""))
            }
            do { try decode.keyOptions.save(session.decoder) } catch { return 2 }
            return 0
        }
        let code = try output.run(expanded, ext: format == .text ? "txt" : format.rawValue, jobs: jobs, body: body)
        quiet.report(order: expanded, list: verbose) { n in
            "bluesift: no vendor messages in \(n) of \(expanded.count) captures" + (filter.isEmpty ? "" : " in the records that match \(self.filter.summary)")
                + (list == nil ? " (no plugins loaded)" : "") + " (-v lists them)"
        }
        if code != 0 { throw ExitCode(code) }
    }

    func write(
        _ m: DecodedMessage, _ v: PluginSet.Result, _ ch: String, _ r: CaptureRecord, _ file: String, _ many: Bool, _ out: inout Output,
        dir: String? = nil
    ) {
        let direction = dir ?? v.direction.rawValue
        switch format {
        case .text:
            var t: [UInt8] = []
            TimeFormat.timeOfDay(r.timestamp, into: &t)
            let prefix = many ? file + ": " : ""
            let frame = String(r.frame)
            out.line(
                prefix + String(repeating: " ", count: max(0, 6 - frame.count)) + frame + " " + String(decoding: t, as: UTF8.self)
                    + " " + direction.padding(8) + ch + "  " + m.plugin + " " + m.summary)
        case .csv:
            let fields = m.fields.map { $0.name + "=" + $0.value.description }.joined(separator: " ")
            let cols = [
                file, String(r.frame), TimeFormat.rfc3339(r.timestamp), direction, ch, m.plugin, m.message,
                fields, m.checksum?.rawValue ?? ""
            ]
            out.line(cols.map(CSV.quote).joined(separator: ","))
        case .jsonl:
            var w = JSONFieldWriter(capacity: 512)
            w.beginTopLevel()
            w.string("file", file)
            w.int("frame", r.frame)
            w.string("ts", TimeFormat.rfc3339(r.timestamp))
            w.string("dir", direction)
            if dir == "adv" { w.string("address", ch) } else { w.string("characteristic", ch) }
            m.describe(into: &w)
            w.endTopLevel()
            out.buffer.append(contentsOf: w.out)
            out.buffer.append(0x0A)
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}
