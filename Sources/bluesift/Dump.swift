import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftSession
import BluesiftGATT
import BluesiftPlugins
#if canImport(Glibc)
    import Glibc
#endif

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Decode every record: one summary line each, a layered tree with -v, JSON Lines or CSV.",
        discussion: """
            JSON Lines: one object per record, in file order: frame, ts (RFC 3339 UTC, µs), dir \
            ("sent" | "received" | null), kind, conn, then one object per decoded layer (hci, ll, \
            l2cap, att, smp, adv), each with at least opcode and name; ATT values a plugin decodes \
            add "vendor": {"plugin","message","fields","checksum"}. See README.

            Several files or a folder: each JSON Lines record ends with "file" (the capture's path \
            as found), and each CSV row starts with a "file" column; --output-dir DIR writes each \
            capture's output to DIR/NAME.jsonl (.csv, .txt), atomically, so that an engine reads \
            the folder in parallel (docs/fleet.md).

            CSV (RFC 4180, header row first): frame, ts, dir, kind, conn, layer (the most specific), \
            name (its PDU name), handle, service, characteristic, descriptor (GATT names, else UUIDs), value (ATT \
            value, hex), summary (the text line), errors ("; "-separated).
            """)

    typealias Format = FrameFormat

    @Argument(help: "Capture files, or folders of them.")
    var files: [String]

    @OptionGroup var jobs: JobsOption

    @Option(help: "Output format: text, jsonl or csv.")
    var format: Format = .text

    @OptionGroup var lines: LineOptions

    @OptionGroup var filter: FilterOptions

    @OptionGroup var decode: DecodeOptions

    @OptionGroup var merging: MergeOption

    @OptionGroup var output: OutputDirOption

    @Flag(name: .customLong("with-file"), help: "Add \"file\" to every JSON Lines record even for one capture (a Spark task handed one path).")
    var withFile = false

    @Flag(help: "Show every LL Empty PDU in text output (by default a run of two or more is one line, \"… 37 Empty PDUs #1203…#1240\"; JSON Lines and CSV always keep them).")
    var empty = false

    @Flag(help: "Keep reading the file as it grows (btsnoop, pcap, pcapng, PacketLogger), printing each record as it arrives, until Ctrl-C.")
    var follow = false

    func validate() throws {
        if output.outputDir != nil, merging.merge || follow { throw ValidationError("--output-dir writes one file per capture: not with --merge or --follow") }
        if follow, files.count != 1 { throw ValidationError("--follow reads one file") }
    }

    func run() throws {
        let filter = try self.filter.make()
        let settings = try decode.settings(naming: !lines.noNaming)
        let color = lines.colored
        let width = lines.width
        if follow {
            if format == .csv { var out = Output(); out.line(FrameCSV.header); out.flush() }
            signal(SIGINT) { _ in followInterrupted = 1 }
            signal(SIGTERM) { _ in followInterrupted = 1 }
            // A parent may have started us with these blocked (spawned from a dispatch thread).
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGINT)
            sigaddset(&set, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            let code = dump(files[0], fd: 1, filter: filter, settings: settings, color: color, width: width)
            if code != 0 { throw ExitCode(code) }
            return
        }
        let inputs = MergedInputs.inputs(files, merge: merging.merge, listSkipped: lines.verbose)
        // Fleets: a "file" key on every record (a first "file" column in csv, as in stats and
        // frames), only when there is more than one source.
        let fleet = withFile || (!merging.merge && (files.count > 1 || files.contains(where: isFolder)))
        let json = format == .jsonl
        let csvHeader = (fleet ? "file," : "") + FrameCSV.header
        if format == .csv && output.outputDir == nil {
            var out = Output()
            out.line(csvHeader)
            out.flush()
        }
        // In --output-dir each file gets its own header, and no colour or terminal width.
        let toDirectory = output.outputDir != nil
        let body: (String, Int32) -> Int32 = { path, fd in
            if toDirectory && format == .csv { var out = Output(fd: fd); out.line(csvHeader); out.flush() }
            return dump(
                path, fd: fd, filter: filter, settings: settings, color: color && !toDirectory,
                width: toDirectory ? nil : width,
                fileKey: fleet && json ? Self.fileKey(path) : nil, fileColumn: fleet ? path : nil)
        }
        let code = try output.run(inputs, ext: format == .text ? "txt" : format.rawValue, jobs: jobs, body: body)
        if code != 0 { throw ExitCode(code) }
    }

    /// `,"file":"PATH"}` + newline: replaces a record's closing brace, so the per-record
    /// path is unchanged when there is one file.
    static func fileKey(_ path: String) -> [UInt8] {
        var w = JSONFieldWriter(capacity: 256)
        w.beginTopLevel()
        w.string("file", path)
        w.endTopLevel()
        w.newline()
        var b = w.out
        b[0] = UInt8(ascii: ",")
        return b
    }

    func dump(
        _ file: String, fd: Int32, filter: FrameFilter, settings: DecodeSettings, color: Bool,
        width: Int? = nil, fileKey: [UInt8]? = nil, fileColumn: String? = nil
    ) -> Int32 {
        guard let session = openSession(file, decode: settings, filter: filter, following: follow ? { followInterrupted != 0 } : nil) else { return 2 }
        var out = Output(fd: fd)
        // A sniffed retransmission is shown once (its first sending), unless -v or asked for by
        // number (--frames): then it is shown, marked "(retransmission)".
        var lines = FrameLines(
            format: format, text: FrameText(color: color, verbose: self.lines.verbose, width: width),
            foldEmpty: !empty, retransmissions: self.lines.verbose || filter.frames != nil, fileKey: fileKey,
            csvPrefix: fileColumn.map { CSV.quote($0) + "," } ?? "",
            jsonCapacity: 2 * out.limit)
        var progress = Progress(file)
        session.progress = { progress.update(done: $0, total: $1) }
        session.forEach(stopEarly: true) { frame in
            lines.add(&frame, to: &out.buffer)
            if follow {
                // Live: each record as it arrives, whole lines only.
                lines.json.withBytes { out.write($0) }
                lines.json.removeAll()
                out.flush()
            } else {
                if lines.json.count >= out.limit {
                    lines.json.withBytes { out.write($0) }
                    lines.json.removeAll()
                }
                out.flushIfNeeded()
            }
        }
        progress.finish()
        lines.finish(to: &out.buffer)
        lines.json.withBytes { out.write($0) }
        out.flush()
        printWarnings(session.reader, path: file)
        if session.filtering && session.matched == 0 { self.filter.reportNoMatch(file) }
        do { try decode.keyOptions.save(session.decoder) } catch { return 2 }
        return 0
    }
}

extension FrameFormat: ExpressibleByArgument {}
