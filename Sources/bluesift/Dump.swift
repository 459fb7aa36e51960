import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftGATT
import BluesiftPlugins

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode every record: one summary line each, a layered tree with -v, or JSON Lines.",
        discussion: """
        JSON Lines: one object per record, in file order: frame, ts (RFC 3339 UTC, µs), dir \
        ("sent" | "received" | null), kind, conn, then one object per decoded layer (hci, ll, \
        l2cap, att, smp, adv), each with at least opcode and name; ATT values a plugin decodes \
        add "vendor": {"plugin","message","fields","checksum"}. See README.
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, jsonl }

    @Argument(help: "Capture files, or folders of them.")
    var files: [String]

    @Option(help: "Files decoded in parallel (default: the number of cores); each file's output stays whole and in order.")
    var jobs: Int = FileJobs.defaultJobs

    @Option(help: "Output format: text or jsonl.")
    var format: Format = .text

    @Flag(name: .shortAndLong, help: "Layered detail under each summary line.")
    var verbose = false

    @Option(help: "Only this connection handle (e.g. 0x0040).")
    var connection: String?

    @Option(name: .customLong("protocol"), help: "Only records with this layer: hci, l2cap, att, smp, adv, ll, note (repeatable).")
    var protocols: [String] = []

    @Option(name: .customLong("att-opcode"), help: "Only ATT PDUs with this opcode (e.g. 0x12; repeatable).")
    var attOpcodes: [String] = []

    @Option(name: .customLong("handle"), help: "Only ATT PDUs addressing this attribute handle (repeatable).")
    var handles: [String] = []

    @Option(help: "Frame range, e.g. 100-200, 100- or 42.")
    var frames: String?

    @Flag(help: "Colour the text output (default: when stdout is a terminal).")
    var color = false

    @Flag(help: "Never colour.")
    var noColor = false

    @Option(help: "Import a GATT database (JSON, as written by `bluesift gatt --format json`) to name handles whose discovery was not captured.")
    var gatt: String?

    @Flag(help: "Skip GATT reconstruction and handle naming.")
    var noNaming = false

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var keyOptions: KeyOptions

    func makeFilter() throws -> FrameFilter {
        var filter = FrameFilter()
        if let c = connection {
            guard let v = parseInteger(c), v >= 0, v <= 0xFFFF else { throw ValidationError("bad --connection \(c)") }
            filter.connection = UInt16(v)
        }
        for p in protocols {
            guard FrameFilter.protocolNames.contains(p) else {
                throw ValidationError("unknown --protocol \(p); use one of \(FrameFilter.protocolNames.sorted().joined(separator: ", "))")
            }
            filter.protocols.insert(p)
        }
        for o in attOpcodes {
            guard let v = parseInteger(o), v >= 0, v <= 0xFF else { throw ValidationError("bad --att-opcode \(o)") }
            filter.attOpcodes.insert(UInt8(v))
        }
        for h in handles {
            guard let v = parseInteger(h), v >= 0, v <= 0xFFFF else { throw ValidationError("bad --handle \(h)") }
            filter.handles.insert(UInt16(v))
        }
        if let f = frames {
            let parts = f.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 1, let a = Int(parts[0]) { filter.frames = a...a }
            else if parts.count == 2, let a = Int(parts[0]) {
                let b = parts[1].isEmpty ? Int.max : Int(parts[1])
                guard let b, b >= a else { throw ValidationError("bad --frames \(f)") }
                filter.frames = a...b
            } else { throw ValidationError("bad --frames \(f)") }
        }
        return filter
    }

    func run() throws {
        let filter = try makeFilter()
        let db = try gatt.map(loadGATT)
        let pluginList = plugins.loadPlugins()
        let keys = try keyOptions.keys()
        let color = !noColor && (color || stdoutIsTerminal)
        let code = FileJobs.run(FileJobs.expand(files), jobs: jobs) { path, fd in
            dump(path, fd: fd, filter: filter, gatt: db, plugins: pluginList, color: color, keys: keys)
        }
        if code != 0 { throw ExitCode(code) }
    }

    func dump(_ file: String, fd: Int32, filter: FrameFilter, gatt: GATTDatabase?, plugins: [Plugin]?, color: Bool,
              keys: [KnownLTK] = []) -> Int32 {
        guard let reader = openCapture(file) else { return 2 }
        let analyzer = Analyzer(naming: !noNaming)
        keyOptions.configure(analyzer.decoder, keys: keys)
        if let gatt { analyzer.gatt.importDatabase(gatt) }
        analyzer.plugins = plugins.map { PluginSet($0) }
        var out = Output(fd: fd)
        let text = FrameText(color: color, verbose: verbose)
        var json = JSONFieldWriter(capacity: 1 << 17)
        var progress = Progress(file)
        var times = TimeFormat.RFC3339Cache()
        var frame = AnalyzedFrame(decoded: DecodedFrame(record: CaptureRecord.empty))
        while let record = reader.next() {
            analyzer.analyze(record, into: &frame)
            if filter.isEmpty || filter.matches(frame.decoded) {
                switch format {
                case .jsonl:
                    FrameJSON.write(&frame, into: &json, times: &times)
                    if json.count >= 1 << 16 {
                        json.withBytes { out.write($0) }
                        json.removeAll()
                    }
                case .text:
                    // A sniffed retransmission is shown once (its first sending), unless -v.
                    if !verbose, frame.decoded.record.kind == .ll, frame.decoded.ll?.retransmission == true { break }
                    text.render(frame, into: &out.buffer)
                }
                out.flushIfNeeded()
            }
            if record.frame & 0xFFFF == 0 { progress.update(done: reader.bytesRead, total: reader.fileSize) }
            if filter.isExhausted(after: record.frame) { break }
        }
        progress.finish()
        json.withBytes { out.write($0) }
        out.flush()
        printWarnings(reader, path: file)
        return 0
    }
}
