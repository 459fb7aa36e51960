import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftSession

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert between btsnoop, pcap and pcapng (and from PacketLogger), keeping timestamps, directions and original lengths.",
        discussion: """
            The output format follows --to, or else OUT's extension: .pcap, .pcapng, .btsnoop/.log/.cfa \
            (btsnoop H4, datalink 1002). --to btsnoop-monitor writes datalink 2001, which also keeps \
            notes and index records. pcap/pcapng keep the source's link type where they can hold it: \
            Linux monitor (btsnoop 2001, DLT 254) stays DLT 254, sniffer captures (DLT 251/256/272, PPI) \
            become DLT 251 or 256; pcapng adds an interface per link type. From an H4 source (btsnoop 1002, \
            DLT 187/201) records of H4 indicators no spec names are kept too (DLT 201). pcapng keeps \
            packet comments; another target says on stderr how many records' comments it drops. The file is written under a \
            temporary name and renamed when complete; OUT may not be the input (same device and inode).

            The filters (--peer, --characteristic, --since, --errors, …) keep only the records they \
            pass: a session cut out of a long log for Wireshark. Records left out by a filter are \
            counted apart from those the format cannot hold.

            Exit codes:
              0   every record written
              1   records the output format cannot hold were dropped, or times it cannot hold
                  were clamped (the file is written; --allow-loss makes this 0). A capture that starts
                  before 1970 is moved whole for pcap/pcapng: first record at the epoch, intervals kept.
              2   unusable input, OUT is the input, or no record could be kept or passed the filters (nothing is written)
            """)

    @Argument(help: "Input capture.") var input: String
    @Argument(help: "Output file.") var output: String
    @Option(help: "Output format: btsnoop, btsnoop-monitor, pcap, pcapng.") var to: CaptureOutputFormat?
    @Flag(help: "Exit 0 even when records or times the output format cannot hold are dropped or clamped.") var allowLoss = false
    @Flag(
        help:
            "Write sniffed LE link-layer packets decrypted (keys from --ltk/--keys or recovered from the capture; CIS PDUs with their ACL's key, BIS PDUs with --broadcast-code): MIC removed, length and CRC fixed, flagged decrypted in the RF header (DLT 256)."
    )
    var decrypt = false
    @OptionGroup var decode: DecodeOptions
    @OptionGroup var filter: FilterOptions

    func validate() throws {
        guard to != nil || CaptureOutputFormat.guess(path: output) != nil else {
            throw ValidationError("cannot tell the output format from \(output); add --to btsnoop|btsnoop-monitor|pcap|pcapng")
        }
    }

    func run() throws {
        guard let target = to ?? CaptureOutputFormat.guess(path: output) else { return } // validate() said it
        try OutputGuard.refuseSameFile(output: output, inputs: [input])
        let frameFilter = try filter.make()
        // Plugins matter only to what a filter passes; a plain copy decodes nothing.
        let session = try openSessionOrExit(input, decode: try decode.settings(naming: false, plugins: !frameFilter.isEmpty), filter: frameFilter)
        let filtering = session.filtering
        let targetName = target.name
        let reader = session.reader
        let writer: any CaptureWriter
        do { writer = try CaptureFile.writer(path: output, format: target, source: reader.format) } catch {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
        // Decoding only when asked for: a plain conversion copies records as read.
        let decoding = decrypt || filtering
        let decoder = session.decoder
        var result = CaptureConversion.Result()
        do {
            var progress = Progress("convert")
            session.progress = { progress.update(done: $0, total: $1) }
            result = try CaptureConversion.run(session, to: writer, format: target, decrypt: decrypt)
            progress.finish()
            printWarnings(reader, path: input)
            if filtering && result.records == 0 {
                filter.reportNoMatch(input)
                stderrLine("bluesift: nothing written")
                throw Exit.unusableInput
            }
            // Nothing kept: the writer is dropped unfinished, so no file appears.
            if result.records > 0 && writer.written == 0 {
                stderrLine("bluesift: \(input): none of its \(result.records) records (\(reader.format.datalinkName)) can be written as \(targetName); nothing written")
                throw Exit.unusableInput
            }
            try writer.finish()
        } catch let error as CaptureError {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
        let shift = result.shift, commented = result.commentsDropped, decrypted = result.decrypted, filteredOut = result.filteredOut
        if let first = shift?.firstOriginal, let s = shift?.seconds {
            stderrLine(
                "bluesift: \(input) starts before 1970 (\(TimeFormat.rfc3339(first))), which \(targetName) cannot hold: "
                    + "every time moved \(s) s later, so the first record is at \(TimeFormat.rfc3339(Timestamp(seconds: first.seconds &+ s, nanoseconds: first.nanoseconds))) and intervals are kept")
        }
        if writer.clamped > 0 {
            stderrLine("bluesift: warning: \(writer.clamped) records dated before 1970 (and before the first record) written as 1970-01-01 00:00:00 UTC (\(targetName) cannot hold earlier times)")
        }
        if commented > 0 {
            stderrLine("bluesift: warning: the packet comments of \(commented) records are not in \(output): \(targetName) cannot hold them (pcapng can)")
        }
        if decrypt {
            stderrLine("bluesift: \(decrypted) of \(decoder.encryptedPackets) encrypted packets written decrypted")
            if result.decryptedIsochronous > 0 { stderrLine("bluesift: \(result.decryptedIsochronous) CIS/BIS PDUs written decrypted (LE Audio)") }
        }
        if decoding { try decode.keyOptions.save(decoder) }
        let skipped = writer.skipped
        var notes: [String] = []
        if filteredOut > 0 { notes.append("\(filteredOut) left out by the filters") }
        if skipped > 0 { notes.append("\(skipped) records this format cannot hold were dropped") }
        if writer.clamped > 0 { notes.append("\(writer.clamped) times lost") }
        stderrLine("bluesift: wrote \(writer.written) records to \(output)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"))
        if (skipped > 0 || writer.clamped > 0) && !allowLoss { throw ExitCode(1) }
    }
}

/// `--to`: the formats by their command-line names (btsnoop-monitor).
extension CaptureOutputFormat: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { allCases.map(\.name) }
    public var defaultValueDescription: String { name }
}
