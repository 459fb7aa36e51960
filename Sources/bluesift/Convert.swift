import ArgumentParser
import BluesiftCapture

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert between btsnoop, pcap and pcapng (and from PacketLogger), keeping timestamps, directions and original lengths.",
        discussion: """
        The output format follows --to, or else OUT's extension: .pcap, .pcapng, .btsnoop/.log/.cfa \
        (btsnoop H4, datalink 1002). --to btsnoop-monitor writes datalink 2001, which also keeps \
        notes and index records. The file is written under a temporary name and renamed when complete.
        """)

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case btsnoop, btsnoopMonitor = "btsnoop-monitor", pcap, pcapng
    }

    @Argument(help: "Input capture.") var input: String
    @Argument(help: "Output file.") var output: String
    @Option(help: "Output format: btsnoop, btsnoop-monitor, pcap, pcapng.") var to: Target?

    func run() throws {
        let target: CaptureOutputFormat
        switch to ?? Self.guess(output) {
        case .btsnoop: target = .btsnoop
        case .btsnoopMonitor: target = .btsnoopMonitor
        case .pcap: target = .pcap
        case .pcapng: target = .pcapng
        case nil: throw ValidationError("cannot tell the output format from \(output); add --to btsnoop|btsnoop-monitor|pcap|pcapng")
        }
        let reader = try openOrExit(input)
        let writer: any CaptureWriter
        do { writer = try CaptureFile.writer(path: output, format: target) } catch {
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
            try writer.finish()
        } catch {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
        printWarnings(reader, path: input)
        let skipped = writer.skipped
        stderrLine("bluesift: wrote \(n - skipped) records to \(output)" + (skipped > 0 ? " (\(skipped) records this format cannot hold were skipped)" : ""))
    }

    static func guess(_ path: String) -> Target? {
        let lower = path.lowercased()
        if lower.hasSuffix(".pcapng") { return .pcapng }
        if lower.hasSuffix(".pcap") { return .pcap }
        if lower.hasSuffix(".btsnoop") || lower.hasSuffix(".log") || lower.hasSuffix(".cfa") { return .btsnoop }
        return nil
    }
}
