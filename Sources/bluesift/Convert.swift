import ArgumentParser
import BluesiftCapture

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

        Exit codes:
          0   every record written
          1   records the output format cannot hold were dropped (the file is written; --allow-loss makes this 0)
          2   unusable input, OUT is the input, or no record could be kept (nothing is written)
        """)

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case btsnoop, btsnoopMonitor = "btsnoop-monitor", pcap, pcapng
    }

    @Argument(help: "Input capture.") var input: String
    @Argument(help: "Output file.") var output: String
    @Option(help: "Output format: btsnoop, btsnoop-monitor, pcap, pcapng.") var to: Target?
    @Flag(help: "Exit 0 even when records the output format cannot hold are dropped.") var allowLoss = false

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
        let targetName = (to ?? Self.guess(output))?.rawValue ?? ""
        let reader = try openOrExit(input)
        let writer: any CaptureWriter
        do { writer = try CaptureFile.writer(path: output, format: target, source: reader.format) } catch {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
        var n = 0
        do {
            var progress = Progress("convert")
            while let r = reader.next() {
                try writer.write(r); n += 1
                if n & 0xFFFF == 0 { progress.update(done: reader.bytesRead, total: reader.fileSize) }
            }
            progress.finish()
            printWarnings(reader, path: input)
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
        if writer.clamped > 0 {
            stderrLine("bluesift: warning: \(writer.clamped) records dated before 1970 written as 1970-01-01 00:00:00 UTC (\(targetName) cannot hold earlier times)")
        }
        let skipped = writer.skipped
        stderrLine("bluesift: wrote \(writer.written) records to \(output)" + (skipped > 0 ? " (\(skipped) records this format cannot hold were dropped)" : ""))
        if skipped > 0 && !allowLoss { throw ExitCode(1) }
    }

    static func guess(_ path: String) -> Target? {
        let lower = path.lowercased()
        if lower.hasSuffix(".pcapng") { return .pcapng }
        if lower.hasSuffix(".pcap") { return .pcap }
        if lower.hasSuffix(".btsnoop") || lower.hasSuffix(".log") || lower.hasSuffix(".cfa") { return .btsnoop }
        return nil
    }
}
