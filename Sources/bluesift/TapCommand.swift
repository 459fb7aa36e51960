import ArgumentParser
import BluesiftSession
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftGATT
import BluesiftPlugins
import BluesiftTransport
#if canImport(Glibc)
    import Glibc
#endif

nonisolated(unsafe) var tapInterrupted: sig_atomic_t = 0

struct Tap: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tap",
        abstract: "Sit between a host stack and a controller speaking H4: forward every byte both ways unchanged, record a btsnoop, print each packet decoded as it passes.",
        discussion: """
            Each side is a transport opened as `replay --transport` opens it, or one the tap \
            listens on:
              tcp:HOST:PORT          connect (a virtual controller, an H4 bridge)
              unix:PATH              connect to a UNIX socket
              serial:PATH[@BAUD][,rtscts]
                                     open a UART or pty (115200 baud, 8N1 by default)
              listen:tcp:HOST:PORT   listen; the first connection is this side
              listen:unix:PATH       the same on a UNIX socket (removed at the end)

            A host stack usually connects to its controller, so the host side is typically \
            listen:… and the controller side tcp:/unix:/serial:. The tap prints "listening on …" \
            on stderr once a listening side can be connected to. For example:
              bluesift tap --host listen:tcp:127.0.0.1:9000 \\
                           --controller tcp:127.0.0.1:9001 -w s.btsnoop

            Bytes are written to the other side as soon as they are read, whatever packet \
            boundaries the reads fall on; a copy is framed into H4 packets for the recording \
            (host→controller recorded as sent, controller→host as received, wall-clock times) and \
            for the decoded lines (as `dump`: the same filters, formats and plugins).

            -w FILE writes a btsnoop (datalink 1002). Without --rotate-size it is FILE, renamed into \
            place when the tap stops. With --rotate-size N the session goes to FILE.1, FILE.2, … \
            in order, each at most N bytes (unless one packet is larger), each renamed into place \
            whole as soon as the next starts; read them back with `dump --merge FILE.*`. Numbered \
            btsnoop segments of an earlier recording under the same name are removed at the start \
            (said on stderr), so FILE.* is one session. A file being written is .NAME.tmp-PID beside \
            it, never under its final name.

            Stops when either side closes its connection, or on Ctrl-C / SIGTERM; the last line \
            on stderr gives the packet and byte counts. Exit 0 then; 2 when the recording cannot be \
            written (forwarding went on); 3 when a side cannot be opened; 64 for a bad side spec.
            """)

    @Option(help: ArgumentHelp("The host stack's side: listen:tcp:HOST:PORT, listen:unix:PATH, tcp:HOST:PORT, unix:PATH or serial:PATH[@BAUD].", valueName: "SPEC"))
    var host: String

    @Option(help: ArgumentHelp("The controller's side: tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD][,rtscts], or listen:tcp:…/listen:unix:….", valueName: "SPEC"))
    var controller: String

    @Option(name: [.customShort("w"), .customLong("write")], help: ArgumentHelp("Record every H4 packet to this btsnoop.", valueName: "FILE"))
    var write: String?

    @Option(help: ArgumentHelp("Start a new file before one would pass N bytes: FILE.1, FILE.2, … (N, Nk, NM; k = 1024).", valueName: "N"))
    var rotateSize: String?

    @Option(help: "Output format: text, jsonl or csv.")
    var format: Dump.Format = .text

    @OptionGroup var lines: LineOptions

    @Flag(help: "Print no decoded lines (only record and forward).")
    var quiet = false

    @OptionGroup var filter: FilterOptions

    @OptionGroup var decode: DecodeOptions

    /// "65536", "64k", "2M" (k = 1024).
    static func parseSize(_ s: String) -> Int? {
        var digits = Substring(s), scale = 1
        switch s.last {
        case "k", "K": scale = 1 << 10; digits = digits.dropLast()
        case "m", "M": scale = 1 << 20; digits = digits.dropLast()
        default: break
        }
        guard let n = Int(digits), n > 0, n <= Int.max / scale else { return nil }
        return n * scale
    }

    /// The options alone, before any socket is opened.
    func validate() throws {
        _ = try endpoints()
        _ = try LiveRecording.rotation(rotateSize, write: write)
        try LiveRecording.refuseAdvertisedNames(try filter.make(), tool: "tap")
    }

    func endpoints() throws -> (host: TapEndpoint, controller: TapEndpoint) {
        let hostSide: TapEndpoint, controllerSide: TapEndpoint
        do { hostSide = try TapEndpoint(parsing: host) } catch {
            stderrLine("bluesift: --host: \(error.message)"); throw Exit.usage
        }
        do { controllerSide = try TapEndpoint(parsing: controller) } catch {
            stderrLine("bluesift: --controller: \(error.message)"); throw Exit.usage
        }
        return (hostSide, controllerSide)
    }

    func run() throws {
        let (hostSide, controllerSide) = try endpoints()
        let rotate = try LiveRecording.rotation(rotateSize, write: write)
        let filter = try self.filter.make()
        let settings = try decode.settings(naming: !lines.noNaming)
        LiveRecording.catchStopSignals { _ in tapInterrupted = 1 }
        let stopRequested = { tapInterrupted != 0 }

        let tap = HCITap(host: hostSide, controller: controllerSide)
        do {
            try tap.prepare { stderrLine("bluesift: tap: listening on \($0)") }
        } catch {
            stderrLine("bluesift: tap: \(error.message)")
            throw ExitCode(3)
        }
        // The output may be neither side's file (a socket or a serial device) nor an input.
        var recorder: BTSnoopSegments?
        if let write {
            let inputs = [hostSide.path, controllerSide.path, decode.gatt].compactMap { $0 } + decode.plugins.directories
            let r = BTSnoopSegments(base: write, rotateSize: rotate) { OutputGuard.conflict(output: $0, inputs: inputs) }
            try LiveRecording.start(r, tool: "tap")
            recorder = r
        }
        let accepted: Bool
        do { accepted = try tap.accept(shouldStop: stopRequested) } catch {
            stderrLine("bluesift: tap: \(error.message)")
            recorder?.finish()
            throw ExitCode(3)
        }
        guard accepted else {
            try finish(tap, recorder: recorder, stop: .interrupted, printed: 0)
            return
        }
        stderrLine("bluesift: tap: forwarding \(hostSide) ⇄ \(controllerSide)")

        let live = LiveLines(
            format: format, lines: lines, filter: filter, quiet: quiet,
            analyzer: AnalysisSession.analyzer(settings, filter: filter))
        var number = 0

        let stop = tap.run(shouldStop: stopRequested) { event in
            number += 1
            event.withCaptureRecord(frame: number) { record in
                recorder?.write(record)
                live.show(record)
            }
        }
        try finish(tap, recorder: recorder, stop: stop, printed: live.printed)
        if case .failed = stop { throw ExitCode(3) }
        if live.out.failure != nil { throw Exit.unusableInput }
    }

    /// Closes both sides, completes the recording and says what passed.
    func finish(_ tap: HCITap, recorder: BTSnoopSegments?, stop: HCITap.Stop, printed: Int) throws {
        tap.close()
        recorder?.finish()
        let c = tap.counts
        var line =
            "bluesift: tap: \(stop.description): \(c.sentPackets + c.receivedPackets) packets "
            + "(\(c.sentPackets) host→controller, \(c.receivedPackets) controller→host), "
            + "\(c.sentBytes) + \(c.receivedBytes) bytes forwarded"
        if !filter.summary.isEmpty || quiet { line += ", \(printed) shown" }
        if c.discardedBytes > 0 { line += ", \(c.discardedBytes) bytes not H4 (forwarded, not recorded)" }
        if c.pendingBytes > 0 { line += ", \(c.pendingBytes) bytes of an unfinished packet" }
        if let r = recorder {
            line += r.files.isEmpty ? ", nothing recorded" : ", recorded \(r.records) packets in " + r.describeFiles()
        }
        stderrLine(line)
        if let why = recorder?.failure {
            stderrLine("bluesift: \(why)")
            throw Exit.unusableInput
        }
    }
}

/// Stdout for live lines: written at once; a reader that went away (`| head`) stops the
/// printing, never the tap (the session still forwards and records). Any other failed write
/// (a full disk) also stops the printing, is said once, and makes the run's exit code 2.
struct LiveOutput {
    var closed = false
    var failure: String?

    mutating func emit(_ bytes: [UInt8]) {
        guard !closed, !bytes.isEmpty else { return }
        let err = WriteAll.write(1, bytes)
        guard err != 0 else { return }
        closed = true
        if err != EPIPE {
            failure = "cannot write standard output: \(String(cString: strerror(err))); the tap goes on forwarding and recording"
            stderrLine("bluesift: \(failure!)")
        }
    }
}
