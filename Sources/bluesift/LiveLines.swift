import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins
#if canImport(Glibc)
    import Glibc
#endif

/// The decoded lines of a live session (`tap`, `capture`): each record through one Analyzer,
/// the filter and dump's renderers, written to stdout as it arrives.
final class LiveLines {
    let quiet: Bool
    var filter: FrameFilter
    let analyzer: Analyzer
    var lines: FrameLines
    var frame = AnalyzedFrame(decoded: DecodedFrame(record: CaptureRecord.empty))
    var out = LiveOutput()
    private(set) var printed = 0

    /// `analyzer`: the session's (`AnalysisSession.analyzer`: naming, GATT, plugins, keys).
    init(format: Dump.Format, lines: LineOptions, filter: FrameFilter, quiet: Bool, analyzer: Analyzer) {
        self.quiet = quiet; self.filter = filter
        self.analyzer = analyzer
        // Live: every Empty PDU as it comes (a run is not known to end).
        // As dump: a sniffed retransmission is shown once, unless -v or --frames.
        self.lines = FrameLines(
            format: format, text: FrameText(color: lines.colored, verbose: lines.verbose, width: lines.width),
            foldEmpty: false, retransmissions: lines.verbose || filter.frames != nil)
        if format == .csv && !quiet { out.emit(Array((FrameCSV.header + "\n").utf8)) }
    }

    func show(_ record: CaptureRecord) {
        guard !quiet else { return }
        analyzer.analyze(record, into: &frame)
        guard filter.isEmpty || filter.matches(frame, analyzer: analyzer) else { return }
        printed += 1
        var line: [UInt8] = []
        lines.add(&frame, to: &line)
        lines.json.withBytes { line.append(contentsOf: $0) }
        lines.json.removeAll()
        out.emit(line)
    }
}
