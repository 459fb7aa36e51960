import BluesiftWire

/// Output formats of decoded records: `dump`, `tap` and `capture` print the same lines.
public enum FrameFormat: String, CaseIterable, Sendable { case text, jsonl, csv }

/// One record at a time in `dump`'s formats: the text line (or `-v` tree), a JSON Lines
/// record, a CSV row. The one renderer of `dump` and the live commands (`tap`, `capture`).
public struct FrameLines {
    public let format: FrameFormat
    public let text: FrameText
    /// Fold runs of LL Empty PDUs in text (`dump`; live output shows each as it comes).
    public let foldEmpty: Bool
    /// Show every sending of a sniffed retransmission (`-v`), not only the first.
    public let retransmissions: Bool
    /// `,"file":"PATH"}` + newline, replacing each JSON record's closing brace (fleets).
    let fileKey: [UInt8]?
    /// The CSV row's first column(s), already quoted ("PATH," in fleets).
    let csvPrefix: String
    /// JSON Lines records accumulate here, written out by the caller (no copy per record).
    public var json: JSONFieldWriter
    var times = TimeFormat.RFC3339Cache()
    var runs = EmptyPDURuns()

    /// `retransmissions`: default, `text.verbose`.
    public init(
        format: FrameFormat, text: FrameText, foldEmpty: Bool, retransmissions: Bool? = nil,
        fileKey: [UInt8]? = nil, csvPrefix: String = "", jsonCapacity: Int = 1 << 12
    ) {
        self.format = format; self.text = text; self.foldEmpty = foldEmpty
        self.retransmissions = retransmissions ?? text.verbose
        self.fileKey = fileKey; self.csvPrefix = csvPrefix
        json = JSONFieldWriter(capacity: jsonCapacity)
    }

    /// Renders one record: text and CSV onto `out`, JSON Lines into `json`.
    public mutating func add(_ frame: inout AnalyzedFrame, to out: inout [UInt8]) {
        switch format {
        case .jsonl:
            FrameJSON.write(&frame, into: &json, times: &times)
            if let fileKey {
                json.removeLast(2)
                fileKey.withUnsafeBytes { json.appendRaw($0) }
            }
        case .text:
            // A sniffed retransmission is shown once (its first sending), unless asked for.
            if !retransmissions, frame.decoded.record.kind == .ll, frame.decoded.ll?.retransmission == true { return }
            if foldEmpty, EmptyPDURuns.isEmptyPDU(frame.decoded) { runs.add(frame, text); return }
            runs.flush(into: &out, color: text.color)
            text.render(frame, into: &out)
        case .csv:
            // Control characters and terminal escapes in names from the air are escaped.
            out.append(contentsOf: TerminalText.escape(csvPrefix + FrameCSV.row(frame)).utf8)
            out.append(0x0A)
        }
    }

    /// The end of the records: a pending run of Empty PDUs.
    public mutating func finish(to out: inout [UInt8]) {
        runs.flush(into: &out, color: text.color)
    }
}
