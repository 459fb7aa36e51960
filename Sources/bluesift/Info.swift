import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftSession

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Summarise a capture: format, records, time span, controllers, connections, protocols, warnings.")

    @Argument(help: "Capture files (btsnoop, pcap, pcapng or PacketLogger), or folders of them.")
    var files: [String]

    @OptionGroup var jobs: JobsOption

    @OptionGroup var decode: DecodeOptions

    @OptionGroup var filter: FilterOptions

    @OptionGroup var merging: MergeOption

    @Flag(name: .shortAndLong, help: "List each file of a folder that is skipped, with why (by default one line counts them).")
    var verbose = false

    func run() throws {
        let frameFilter = try filter.make()
        // Plugins change nothing info counts but which records a filter passes.
        let settings = try decode.settings(naming: false, plugins: !frameFilter.isEmpty)
        let keys = decode.keyOptions
        let filterOptions = filter
        let code = FileJobs.run(MergedInputs.inputs(files, merge: merging.merge, listSkipped: verbose), jobs: jobs.count) { path, fd in
            Info.report(path, fd: fd, settings: settings, keys: keys, filter: frameFilter, filterOptions: filterOptions)
        }
        if code != 0 { throw ExitCode(code) }
    }

    /// With a filter, the summary counts the records it passes, and lists the connections
    /// they belong to; every record is still decoded (connection state needs them all).
    static func report(
        _ file: String, fd: Int32, settings: DecodeSettings, keys: KeyOptions,
        filter: FrameFilter, filterOptions: FilterOptions
    ) -> Int32 {
        guard let session = openSession(file, decode: settings, filter: filter) else { return 2 }
        let reader = session.reader, decoder = session.decoder, filtering = session.filtering
        var progress = Progress(file)
        session.progress = { progress.update(done: $0, total: $1) }
        let (summary, matchedConnections) = session.summarize()
        let total = session.records
        progress.finish()
        var out = Output(fd: fd)
        var warnings = reader.warnings + (summary.recordsWithErrors > 0 ? ["\(summary.recordsWithErrors) records with malformed data (see dump)"] : [])
        // The same finding as `stats`'s quality note `gaps`.
        if let f = summary.firstBackwardFrame { warnings.append(CaptureSummary.backwardsMessage(summary.backwardSteps) + " (from frame \(f))") }
        for l in InfoRender.lines(
            file: file, format: reader.format, summary: summary, total: total, decoder: decoder,
            filter: filtering ? filterOptions.summary : nil, connections: matchedConnections, warnings: warnings)
        {
            out.line(l)
        }
        out.flush()
        printWarnings(reader, path: file)
        if filtering && summary.records == 0 { filterOptions.reportNoMatch(file) }
        do { try keys.save(decoder) } catch { return 2 }
        return 0
    }
}
