import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert between btsnoop, pcap and pcapng (and from PacketLogger), keeping timestamps, directions and original lengths.",
        discussion: """
        The output format follows --to, or else OUT's extension: .pcap, .pcapng, .btsnoop/.log/.cfa \
        (btsnoop H4, datalink 1002). --to btsnoop-monitor writes datalink 2001, which also keeps \
        notes and index records. pcap/pcapng keep the source's link type where they can hold it: \
        Linux monitor (btsnoop 2001, DLT 254) stays DLT 254, sniffer captures (DLT 251/256/272, PPI) \
        become DLT 251 or 256; pcapng adds an interface per link type. The file is written under a \
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
    @OptionGroup var keyOptions: KeyOptions
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
        guard var frameFilter = filter.prepare(try filter.make(), file: input) else { throw Exit.unusableInput }
        let filtering = !frameFilter.isEmpty
        let targetName = (to ?? Self.guess(output))?.rawValue ?? ""
        let reader = try openOrExit(input)
        let writer: any CaptureWriter
        do { writer = try CaptureFile.writer(path: output, format: target, source: reader.format) } catch {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
        var n = 0
        // Decoding only when asked for: a plain conversion copies records as read.
        let analyzer: Analyzer? = decrypt || filtering ? Analyzer(naming: frameFilter.needsNaming) : nil
        let decoder = analyzer?.decoder
        if let decoder { keyOptions.configure(decoder, keys: try keyOptions.keys()) }
        var frame = AnalyzedFrame(decoded: DecodedFrame(record: .empty))
        var sealed: [UInt8] = []
        var decrypted = 0
        var filteredOut = 0
        // pcap/pcapng cannot hold times before 1970: such a capture is moved whole, intervals kept.
        var shift: EpochShift? = target == .pcap || target == .pcapng ? EpochShift() : nil
        do {
            var progress = Progress("convert")
            while let r = reader.next() {
                if let analyzer, filtering || r.kind == .ll {
                    analyzer.analyze(r, into: &frame)
                    if filtering && !frameFilter.matches(frame, analyzer: analyzer) {
                        filteredOut += 1
                        continue
                    }
                }
                if decrypt, let decoder, r.kind == .ll {
                    if let p = Self.plaintextRecord(r, frame.decoded, decoder, into: &sealed) {
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
                        continue
                    }
                }
                if shift == nil { try writer.write(r) } else { var m = r; shift!.apply(&m); try writer.write(m) }
                n += 1
                if n & 0xFFFF == 0 { progress.update(done: reader.bytesRead, total: reader.fileSize) }
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
                       + "every time moved \(s) s later, so the first record is at 1970-01-01T00:00:00Z and intervals are kept")
        }
        if writer.clamped > 0 {
            stderrLine("bluesift: warning: \(writer.clamped) records dated before 1970 (and before the first record) written as 1970-01-01 00:00:00 UTC (\(targetName) cannot hold earlier times)")
        }
        if decrypt, let decoder {
            stderrLine("bluesift: \(decrypted) of \(decoder.encryptedPackets) encrypted packets written decrypted")
            do { try keyOptions.save(decoder) } catch { stderrLine("bluesift: \(error)"); throw Exit.unusableInput }
        }
        let skipped = writer.skipped
        var notes: [String] = []
        if filteredOut > 0 { notes.append("\(filteredOut) left out by the filters") }
        if skipped > 0 { notes.append("\(skipped) records this format cannot hold were dropped") }
        if writer.clamped > 0 { notes.append("\(writer.clamped) times lost") }
        stderrLine("bluesift: wrote \(writer.written) records to \(output)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"))
        if (skipped > 0 || writer.clamped > 0) && !allowLoss { throw ExitCode(1) }
    }

    /// A decrypted PDU as the air would carry it in clear: access address (and Coded PHY
    /// Coding Indicator), header with the plaintext's length, plaintext, CRC recomputed with
    /// the connection's CRCInit (Core 5.4 Vol 6 Part B §3.1.1), marked decrypted and CRC-valid.
    /// Nil for anything else (written as read), and for PDUs the sniffer itself decrypted.
    static func plaintextRecord(_ r: CaptureRecord, _ f: DecodedFrame, _ d: ProtocolDecoder,
                                into out: inout [UInt8]) -> CaptureRecord? {
        guard f.layers.contains(.ll), let ll = f.ll, ll.decrypted, r.sniffer?.encrypted != false,
              let conn = f.connection else { return nil }
        let head = 4 + (ll.codingIndicator == nil ? 0 : 1)
        guard r.bytes.count >= head + 2 else { return nil }
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: r.bytes[0..<head + 1])
        out.append(UInt8(ll.payload.count))
        out.append(contentsOf: ll.payload)
        let crcInit = d.connection(adapter: r.adapter, handle: conn)?.air?.crcInit
        let crc = crcInit.map { i in out.withUnsafeBytes { LLCRC.compute(UnsafeRawBufferPointer(rebasing: $0[head...]), crcInit: i) } }
            ?? ll.crc ?? 0
        out.append(UInt8(crc & 0xFF)); out.append(UInt8(crc >> 8 & 0xFF)); out.append(UInt8(crc >> 16 & 0xFF))
        var p = r
        var s = r.sniffer ?? SnifferInfo()
        s.encrypted = false; s.crcOK = true; s.hasCRC = true
        if s.fromCentral == nil { s.fromCentral = ll.fromCentral }
        p.sniffer = s
        // Never the bare DLT 251 form: only the RF header can say "decrypted".
        if p.sourceType == UInt16(LinkType.leLL) { p.sourceType = UInt16(LinkType.leLLWithPHDR) }
        return p
    }

    static func guess(_ path: String) -> Target? {
        let lower = path.lowercased()
        if lower.hasSuffix(".pcapng") { return .pcapng }
        if lower.hasSuffix(".pcap") { return .pcap }
        if lower.hasSuffix(".btsnoop") || lower.hasSuffix(".log") || lower.hasSuffix(".cfa") { return .btsnoop }
        return nil
    }
}
