import Foundation
import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftGATT
import BluesiftPlugins
import BluesiftSession

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "One screen per capture: capture quality, devices, connections, per-characteristic counts and latency, sensor readings, problems.",
        discussion: """
            One streaming pass, memory bounded. --format json writes one object per file per line \
            (schema: docs/stats.md); csv writes the per-characteristic table, or with --table classic \
            the Classic channels (SDP, AVDTP, A2DP media, AVRCP, RFCOMM per DLCI, SCO), with --table \
            sensors the numeric fields plugins decoded from advertising data (per device: count, \
            min, max, first, last), its header once. \
            Every json object and csv row names its "file"; --output-dir DIR writes DIR/NAME.json \
            (.csv, .txt) per capture, atomically.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, csv }
    /// The built-in tables and those of the protocol modules (`StatsCollector.tables`).
    struct Table: ExpressibleByArgument, Equatable {
        var name: String
        init?(argument: String) { guard Self.names.contains(argument) else { return nil }; name = argument }
        static let names = ["characteristics"] + ProtocolRegistry.shared.collectors.flatMap { c in c.type.tables.map { $0.name } } + ["sensors"]
        static var allValueStrings: [String] { names }
        static let characteristics = Table(argument: "characteristics")!, sensors = Table(argument: "sensors")!
        static var helpList: String { names.dropLast().joined(separator: ", ") + " or " + names.last! }
    }

    @Argument(help: "Capture files, or folders of them.")
    var files: [String]

    @Option(help: "Output format: text, json or csv.")
    var format: Format = .text

    @Option(help: ArgumentHelp("Table written by --format csv: " + Table.helpList + "."))
    var table: Table = .characteristics

    @OptionGroup var jobs: JobsOption

    @Flag(name: .shortAndLong, help: "List each file of a folder that is skipped, with why (by default one line counts them).")
    var verbose = false

    @Flag(help: "Keep text lines whole on a terminal (by default they are wrapped to its width).")
    var wide = false

    @OptionGroup var decode: DecodeOptions

    @OptionGroup var filter: FilterOptions

    @OptionGroup var output: OutputDirOption

    func run() throws {
        let settings = try decode.settings()
        let keys = decode.keyOptions
        let format = self.format, table = self.table
        let frameFilter = try filter.make()
        let options = filter
        let inputs = FileJobs.expand(files, listSkipped: verbose)
        let toDirectory = output.outputDir != nil
        let width = wide || toDirectory || !stdoutIsTerminal ? nil : terminalColumns()
        // One header for all files on stdout; one per file in --output-dir.
        let module = StatsRender.moduleTable(table.name)
        let csvHeader = module?.header ?? (table == .sensors ? StatsRender.sensorsCSVHeader : StatsRender.csvHeader)
        if format == .csv && !toDirectory { var out = Output(); out.line(csvHeader); out.flush() }
        let body: (String, Int32) -> Int32 = { path, fd in
            guard let report = Stats.compute(path, settings: settings, filter: frameFilter, keys: keys) else { return 2 }
            if !frameFilter.isEmpty && report.records == 0 { options.reportNoMatch(path) }
            var out = Output(fd: fd)
            switch format {
            case .json: out.buffer.append(contentsOf: StatsRender.json(report)); out.buffer.append(0x0A)
            // One line at a time: `line` escapes control characters from the air.
            case .csv:
                if toDirectory { out.line(csvHeader) }
                let rows =
                    module != nil
                    ? StatsRender.moduleCSV(report, table: table.name)
                    : table == .sensors ? StatsRender.sensorsCSV(report) : StatsRender.csv(report)
                for l in rows.split(separator: "\n") { out.line(String(l)) }
            case .text: for l in StatsRender.text(report, width: width).split(separator: "\n", omittingEmptySubsequences: false) { out.line(String(l)) }
            }
            out.flush()
            return 0
        }
        let code = try output.run(inputs, ext: format == .text ? "txt" : format.rawValue, jobs: jobs, body: body)
        if code != 0 { throw ExitCode(code) }
    }

    /// One pass over the capture; nil (message printed) when it cannot be opened.
    /// With a filter, only the records it passes are counted (the decoder still sees all).
    static func compute(_ file: String, settings: DecodeSettings, filter: FrameFilter = FrameFilter(), keys: KeyOptions? = nil) -> StatsReport? {
        guard let session = openSession(file, decode: settings, filter: filter) else { return nil }
        let f = session.reader.format
        let stats = CaptureStats(file: file, format: f.container.rawValue + ", " + f.datalinkName)
        var progress = Progress(file)
        session.progress = { progress.update(done: $0, total: $1) }
        let decoder = session.decoder
        session.forEach { frame in stats.add(&frame, decoder: decoder) }
        progress.finish()
        printWarnings(session.reader, path: file)
        do { try keys?.save(session.decoder) } catch { return nil }
        return stats.finish(decoder: session.decoder, warnings: session.reader.warnings)
    }
}
