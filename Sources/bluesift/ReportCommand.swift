import Foundation
import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftSession
import BluesiftGATT
import BluesiftPlugins
import BluesiftReport

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write one self-contained HTML file: timeline, sequence view, GATT tree, per-characteristic table, problems (or a replay report's steps).",
        discussion: """
            FILE is a capture, or the JSON that `replay --report` writes. The page needs no network: \
            its SVG charts and script are inside it. Default output: FILE's name with .html, in the \
            current directory. --fuzz DIR adds a Fuzz view of what `bluesift fuzz -o DIR` found \
            (its findings.json, or its finding-N.json files): each finding's steps, mutated fields \
            by name, the device's reaction and reproduction rate. Exit codes: 0 written, 2 \
            unusable input or output.
            """)

    @Argument(help: "A capture file, or a replay report (JSON from `bluesift replay --report`).")
    var file: String

    @Option(name: .shortAndLong, help: "Output HTML file (default: <file name>.html in the current directory).")
    var output: String?

    @Flag(help: "Show times in this machine's time zone instead of UTC.")
    var local = false

    @Option(help: "Sequence rows kept in the page; past it only errors, vendor messages and SMP (default 250000).")
    var maxOperations: Int = 250_000

    @Option(help: "A `bluesift fuzz` output folder (or its findings.json): its findings become the page's Fuzz view.")
    var fuzz: String?

    @OptionGroup var decode: DecodeOptions

    @OptionGroup var filter: FilterOptions

    func run() throws {
        try refuseFolder(file, hint: "for a folder, `bluesift stats DIR` summarises every capture in it")
        let out = output ?? ((file.split(separator: "/").last.map(String.init) ?? "report") + ".html")
        try OutputGuard.refuseSameFile(output: out, inputs: [file])
        var options = ReportOptions()
        options.maxOperations = max(1000, maxOperations)
        if let fuzz { options.fuzz = try Self.fuzzFindings(fuzz) }
        if local {
            let tz = TimeZone.current
            options.utcOffsetSeconds = tz.secondsFromGMT()
            options.zoneLabel = tz.abbreviation() ?? tz.identifier
        }
        let sink: AtomicFile
        do { sink = try AtomicFile(path: out) } catch {
            stderrLine("bluesift: \(error)")
            throw Exit.unusableInput
        }
        var writeError: (any Error)?
        let writer = CaptureReportWriter { bytes in
            guard writeError == nil else { return }
            sink.out.writeBytes(bytes)
            do { try sink.flushIfNeeded() } catch { writeError = error }
        }
        if let replay = Self.replayJSON(file) {
            if fuzz != nil {
                sink.discard()
                stderrLine("bluesift: --fuzz goes with a capture (the one fuzzed), not a replay report")
                throw Exit.unusableInput
            }
            writer.writeReplay(json: replay, file: file, options: options)
        } else {
            let session = try openSessionOrExit(file, decode: try decode.settings(), filter: try filter.make())
            var progress = Progress(file)
            session.progress = { progress.update(done: $0, total: $1) }
            let report = writer.write(session: session, file: file, options: options)
            progress.finish()
            printWarnings(session.reader, path: file)
            if session.filtering && report.records == 0 { filter.reportNoMatch(file) }
            try decode.keyOptions.save(session.decoder)
        }
        do {
            if let writeError { throw writeError }
            try sink.commit()
        } catch {
            sink.discard()
            stderrLine("bluesift: \(error)")
            throw Exit.unusableInput
        }
        stderrLine("bluesift: report written to \(out) (\(writer.bytesWritten) bytes" + (writer.operationsLeftOut > 0 ? ", \(writer.operationsLeftOut) operations left out of the sequence view" : "") + ")")
    }

    /// The findings of `bluesift fuzz -o DIR` as one JSON object with a "findings" array: DIR's
    /// findings.json as written, or, without it (a run killed before its end), its
    /// finding-N.json files in N order; `path` may also name one of these files.
    static func fuzzFindings(_ path: String) throws -> (json: [UInt8], dir: String) {
        func object(_ p: String) -> [String: Any]? {
            FileManager.default.contents(atPath: p).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            stderrLine("bluesift: --fuzz \(path): no such folder or file")
            throw Exit.unusableInput
        }
        let dir = isDir.boolValue ? path : (path as NSString).deletingLastPathComponent
        let summary = isDir.boolValue ? dir + "/findings.json" : path
        if let o = object(summary) {
            if o["findings"] is [Any] { return (Array(FileManager.default.contents(atPath: summary)!), dir) }
            if o["reaction"] != nil, o["steps"] is [Any] {
                return (Array("{\"findings\":[".utf8) + Array(FileManager.default.contents(atPath: summary)!) + Array("]}".utf8), dir)
            }
        }
        // finding-N.json, N ascending.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).compactMap { n -> (Int, String)? in
            guard isDir.boolValue, n.hasPrefix("finding-"), n.hasSuffix(".json"), let k = Int(n.dropFirst(8).dropLast(5)) else { return nil }
            return (k, n)
        }.sorted { $0.0 < $1.0 }
        var out = Array("{\"findings\":[".utf8)
        for (i, (_, n)) in names.enumerated() {
            guard let d = FileManager.default.contents(atPath: dir + "/" + n), (try? JSONSerialization.jsonObject(with: d) as? [String: Any])?["reaction"] != nil else {
                stderrLine("bluesift: --fuzz \(dir)/\(n): not a finding of bluesift fuzz")
                throw Exit.unusableInput
            }
            if i > 0 { out.append(0x2C) }
            out += Array(d)
        }
        guard !names.isEmpty else {
            stderrLine("bluesift: --fuzz \(path): no findings.json or finding-N.json of bluesift fuzz")
            throw Exit.unusableInput
        }
        return (out + Array("]}".utf8), dir)
    }

    /// The bytes of a replay report (a JSON object with "steps"), nil for anything else.
    static func replayJSON(_ path: String) -> [UInt8]? {
        guard let fh = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? fh.close() }
        let head = fh.readData(ofLength: 64)
        guard let first = head.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }), first == UInt8(ascii: "{") else { return nil }
        fh.seek(toFileOffset: 0)
        let data = fh.readDataToEndOfFile()
        guard let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any], obj["steps"] is [Any] else { return nil }
        return Array(data)
    }
}
