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
    let format: Dump.Format
    let quiet: Bool
    let verbose: Bool
    var filter: FrameFilter
    let analyzer: Analyzer
    let text: FrameText
    var json = JSONFieldWriter(capacity: 1 << 12)
    var times = TimeFormat.RFC3339Cache()
    var frame = AnalyzedFrame(decoded: DecodedFrame(record: CaptureRecord.empty))
    var out = LiveOutput()
    private(set) var printed = 0

    /// `analyzer`: the session's (`AnalysisSession.analyzer`: naming, GATT, plugins, keys).
    init(format: Dump.Format, lines: LineOptions, filter: FrameFilter, quiet: Bool, analyzer: Analyzer) {
        self.format = format; self.quiet = quiet; self.filter = filter; verbose = lines.verbose
        self.analyzer = analyzer
        text = FrameText(color: lines.colored, verbose: lines.verbose, width: lines.width)
        if format == .csv && !quiet { out.emit(Array((FrameCSV.header + "\n").utf8)) }
    }

    func show(_ record: CaptureRecord) {
        guard !quiet else { return }
        analyzer.analyze(record, into: &frame)
        guard filter.isEmpty || filter.matches(frame, analyzer: analyzer) else { return }
        printed += 1
        var line: [UInt8] = []
        switch format {
        case .jsonl:
            FrameJSON.write(&frame, into: &json, times: &times)
            json.withBytes { line.append(contentsOf: $0) }
            json.removeAll()
        case .text:
            // As dump: a sniffed retransmission is shown once, unless -v or --frames.
            if !verbose, filter.frames == nil, frame.decoded.record.kind == .ll, frame.decoded.ll?.retransmission == true { return }
            text.render(frame, into: &line)
        case .csv:
            line.append(contentsOf: (TerminalText.escape(FrameCSV.row(frame)) + "\n").utf8)
        }
        out.emit(line)
    }
}
