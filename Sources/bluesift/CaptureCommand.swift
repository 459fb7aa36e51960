import ArgumentParser
import BluesiftSession
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftTransport
#if canImport(Glibc)
    import Glibc
#endif

nonisolated(unsafe) var captureInterrupted: sig_atomic_t = 0

struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Record live from the Linux kernel's HCI monitor channel, as btmon -w does, printing each packet decoded as dump does.",
        discussion: """
            Reads every adapter's HCI traffic as the kernel's Bluetooth stack sees it (the \
            monitor channel btmon reads), with the index records (New Index, Index Info, Open \
            and Close Index) and notes the kernel adds. Nothing is sent: BlueZ keeps using its \
            adapters. Each packet is printed decoded, as `dump` prints a file (the same filters, \
            formats, GATT naming and plugins).

            -i hciN keeps one adapter's packets (and the kernel's notes, which belong to none); \
            the default, any, keeps all.

            -w FILE writes a btsnoop with datalink 2001 (Linux monitor), record for record what \
            `btmon -w FILE` writes of the same session; `dump`, `stats`, `gatt` and the rest read \
            it. With --rotate-size N the session goes to FILE.1, FILE.2, … (each whole when the \
            next starts; read them back with `dump --merge FILE.*`). A file being written is \
            .NAME.tmp-PID beside it.

            Stops on Ctrl-C or SIGTERM; the file is completed, never cut. Needs CAP_NET_RAW (root, \
            or `sudo setcap cap_net_admin,cap_net_raw+ep $(which bluesift)`); without it one line \
            says so and the exit code is 2. See docs/transport.md.
            """)

    @Option(name: [.customShort("i"), .customLong("interface")], help: ArgumentHelp("The adapter: hciN, or any.", valueName: "hciN|any"))
    var interface = "any"

    @Option(name: [.customShort("w"), .customLong("write")], help: ArgumentHelp("Record to this btsnoop (datalink 2001, as btmon -w).", valueName: "FILE"))
    var write: String?

    @Option(help: ArgumentHelp("Start a new file before one would pass N bytes: FILE.1, FILE.2, … (N, Nk, NM; k = 1024).", valueName: "N"))
    var rotateSize: String?

    @Option(help: "Output format: text, jsonl or csv.")
    var format: Dump.Format = .text

    @OptionGroup var lines: LineOptions

    @Flag(help: "Print no decoded lines (only record).")
    var quiet = false

    @OptionGroup var filter: FilterOptions

    @OptionGroup var decode: DecodeOptions

    /// nil: every adapter.
    static func parseInterface(_ s: String) -> UInt16?? {
        if s == "any" { return .some(nil) }
        let digits = s.hasPrefix("hci") ? s.dropFirst(3) : Substring(s)
        guard let n = UInt16(digits), n != 0xFFFF else { return nil }
        return .some(n)
    }

    /// The options alone, before the monitor socket is opened.
    func validate() throws {
        _ = try adapter()
        _ = try LiveRecording.rotation(rotateSize, write: write)
        try LiveRecording.refuseAdvertisedNames(try filter.make(), tool: "capture")
    }

    func adapter() throws -> UInt16? {
        guard let only = Self.parseInterface(interface) else { throw usage("-i", "hciN (such as hci0) or any", interface) }
        return only
    }

    func run() throws {
        let only = try adapter()
        let rotate = try LiveRecording.rotation(rotateSize, write: write)
        let filter = try self.filter.make()
        let settings = try decode.settings(naming: !lines.noNaming)

        let monitor: HCIMonitor
        do { monitor = try HCIMonitor() } catch {
            stderrLine("bluesift: capture: \(error.message)")
            throw Exit.unusableInput
        }
        LiveRecording.catchStopSignals { _ in captureInterrupted = 1 }

        var recorder: BTSnoopSegments?
        if let write {
            let inputs = [decode.gatt].compactMap { $0 } + decode.plugins.directories
            let r = BTSnoopSegments(base: write, rotateSize: rotate, monitor: true) { OutputGuard.conflict(output: $0, inputs: inputs) }
            try LiveRecording.start(r, tool: "capture")
            recorder = r
        }
        stderrLine("bluesift: capture: reading the monitor channel (\(only.map { "hci\($0)" } ?? "every adapter")); Ctrl-C stops")
        let live = LiveLines(
            format: format, lines: lines, filter: filter, quiet: quiet,
            analyzer: AnalysisSession.analyzer(settings, filter: filter))
        let builder = MonitorRecordBuilder()
        var records = 0
        var failure: String?
        while captureInterrupted == 0 {
            let packet: HCIMonitor.Packet?
            do { packet = try monitor.next(timeout: .milliseconds(100)) } catch {
                failure = error.message
                break
            }
            guard let p = packet else { continue }
            // The kernel's notes belong to no adapter (0xFFFF): kept with any adapter chosen.
            if let only, p.adapter != only, p.adapter != 0xFFFF { continue }
            records += 1
            recorder?.writeMonitor(adapter: p.adapter, opcode: p.opcode, timestamp: p.timestamp, payload: p.payload)
            live.show(builder.record(frame: records, timestamp: p.timestamp, adapter: p.adapter, opcode: p.opcode, data: p.payload))
        }
        monitor.close()
        recorder?.finish()
        var line = "bluesift: capture: \(failure == nil ? "stopped" : "failed: \(failure!)"): \(records) records"
        if !self.filter.summary.isEmpty || quiet { line += ", \(live.printed) shown" }
        if let r = recorder { line += r.files.isEmpty ? ", nothing recorded" : ", recorded \(r.records) in " + r.describeFiles() }
        stderrLine(line)
        if let why = recorder?.failure {
            stderrLine("bluesift: \(why)")
            throw Exit.unusableInput
        }
        if failure != nil { throw ExitCode(3) }
        if live.out.failure != nil { throw Exit.unusableInput }
    }
}
