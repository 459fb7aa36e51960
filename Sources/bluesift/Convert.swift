import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftSession

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
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

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case btsnoop, btsnoopMonitor = "btsnoop-monitor", pcap, pcapng
    }

    @Argument(help: "Input capture.") var input: String
    @Argument(help: "Output file.") var output: String
    @Option(help: "Output format: btsnoop, btsnoop-monitor, pcap, pcapng.") var to: Target?
    @Flag(help: "Exit 0 even when records or times the output format cannot hold are dropped or clamped.") var allowLoss = false
    @Flag(help: "Write sniffed LE link-layer packets decrypted (keys from --ltk/--keys or recovered from the capture): MIC removed, length and CRC fixed, flagged decrypted in the RF header (DLT 256).")
    var decrypt = false
    @OptionGroup var decode: DecodeOptions
    @OptionGroup var filter: FilterOptions

    func run() throws {
        let target: CaptureOutputFormat
        switch to ?? Self.guess(output) {
        case .btsnoop: target = .btsnoop
        case .btsnoopMonitor: target = .btsnoopMonitor
        case .pcap: target = .pcap
        case .pcapng: target = .pcapng
        case nil: throw ValidationError("cannot tell the output format from \(output); add --to btsnoop|btsnoop-monitor|pcap|pcapng")
        }
        try OutputGuard.refuseSameFile(output: output, inputs: [input])
        let frameFilter = try filter.make()
        // Plugins matter only to what a filter passes; a plain copy decodes nothing.
        let session = try openSessionOrExit(input, decode: try decode.settings(naming: false, plugins: !frameFilter.isEmpty), filter: frameFilter)
        let filtering = session.filtering
        let targetName = (to ?? Self.guess(output))?.rawValue ?? ""
        let reader = session.reader
        let writer: any CaptureWriter
        do { writer = try CaptureFile.writer(path: output, format: target, source: reader.format) } catch {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
        var n = 0
        // Decoding only when asked for: a plain conversion copies records as read.
        let decoding = decrypt || filtering
        let decoder = session.decoder
        var frame = AnalyzedFrame(decoded: DecodedFrame(record: .empty))
        var sealed: [UInt8] = []
        var decrypted = 0
        var filteredOut = 0
        // pcapng packet comments, which only pcapng holds.
        var commented = 0
        // pcap/pcapng cannot hold times before 1970: such a capture is moved whole, intervals kept.
        var shift: EpochShift? = target == .pcap || target == .pcapng ? EpochShift() : nil
        do {
            var progress = Progress("convert")
            session.progress = { progress.update(done: $0, total: $1) }
            try session.forEachRecord { r in
                if decoding, filtering || r.kind == .ll {
                    if !session.analyze(r, into: &frame) && filtering {
                        filteredOut += 1
                        return
                    }
                }
                if target != .pcapng, let o = r.options, !o.commentRanges.isEmpty { commented += 1 }
                if decrypt, r.kind == .ll {
                    if let p = decoder.plaintextRecord(r, frame.decoded, into: &sealed) {
                        decrypted += 1
                        var failure: CaptureError?
                        sealed.withUnsafeBytes { b in
                            var out = p
                            out.bytes = b; out.originalLength = b.count
                            shift?.apply(&out)
                            do { try writer.write(out) } catch { failure = error as? CaptureError }
                        }
                        if let failure { throw failure }
                        n += 1
                        return
                    }
                }
                if shift == nil { try writer.write(r) } else { var m = r; shift!.apply(&m); try writer.write(m) }
                n += 1
            }
            progress.finish()
            printWarnings(reader, path: input)
            if filtering && n == 0 {
                filter.reportNoMatch(input)
                stderrLine("bluesift: nothing written")
                throw Exit.unusableInput
            }
            // Nothing kept: the writer is dropped unfinished, so no file appears.
            if n > 0 && writer.written == 0 {
                stderrLine("bluesift: \(input): none of its \(n) records (\(reader.format.datalinkName)) can be written as \(targetName); nothing written")
                throw Exit.unusableInput
            }
            try writer.finish()
        } catch let error as CaptureError {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
        if let first = shift?.firstOriginal, let s = shift?.seconds {
            stderrLine("bluesift: \(input) starts before 1970 (\(TimeFormat.rfc3339(first))), which \(targetName) cannot hold: "
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

    static func guess(_ path: String) -> Target? {
        let lower = path.lowercased()
        if lower.hasSuffix(".pcapng") { return .pcapng }
        if lower.hasSuffix(".pcap") { return .pcap }
        if lower.hasSuffix(".btsnoop") || lower.hasSuffix(".log") || lower.hasSuffix(".cfa") { return .btsnoop }
        return nil
    }
}
