import ArgumentParser
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

    @OptionGroup var plugins: PluginOptions

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

    func run() throws {
        let hostSide: TapEndpoint, controllerSide: TapEndpoint
        do { hostSide = try TapEndpoint(parsing: host) } catch {
            stderrLine("bluesift: --host: \(error.message)"); throw Exit.usage
        }
        do { controllerSide = try TapEndpoint(parsing: controller) } catch {
            stderrLine("bluesift: --controller: \(error.message)"); throw Exit.usage
        }
        var rotate: Int?
        if let r = rotateSize {
            guard let n = Self.parseSize(r), n >= BTSnoopSegments.headerSize + 64 else {
                throw usage("--rotate-size", "a size in bytes of at least 80, such as 65536, 64k or 2M", r)
            }
            guard write != nil else { throw usage("--rotate-size", "-w FILE with it", r) }
            rotate = n
        }
        var filter = try self.filter.make()
        guard filter.peerNames.isEmpty else {
            throw usage("--peer", "an address (a live tap cannot look advertised names up ahead)", filter.peerNames[0])
        }
        let db = try lines.gatt.map(loadGATT)
        let pluginList = plugins.loadPlugins()

        // Ctrl-C / SIGTERM end the session cleanly: the recording is completed, not removed.
        for sig in [SIGINT, SIGTERM, SIGHUP] { signal(sig) { _ in tapInterrupted = 1 } }
        var set = sigset_t()
        sigemptyset(&set)
        for sig in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
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
            let inputs = [hostSide.path, controllerSide.path, lines.gatt].compactMap { $0 } + plugins.directories
            recorder = BTSnoopSegments(base: write, rotateSize: rotate, inputs: inputs)
            do {
                let removed = try recorder?.start() ?? []
                if let first = removed.first, let last = removed.last {
                    stderrLine("bluesift: tap: removed \(removed.count) segment\(removed.count == 1 ? "" : "s") of an earlier recording: "
                               + (removed.count == 1 ? first : "\(first) … \(last)"))
                }
            } catch {
                stderrLine("bluesift: \(error)")
                throw Exit.unusableInput
            }
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

        let live = LiveLines(format: format, lines: lines, filter: filter, quiet: quiet, gatt: db, plugins: pluginList)
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
    }

    /// Closes both sides, completes the recording and says what passed.
    func finish(_ tap: HCITap, recorder: BTSnoopSegments?, stop: HCITap.Stop, printed: Int) throws {
        tap.close()
        recorder?.finish()
        let c = tap.counts
        var line = "bluesift: tap: \(stop.description): \(c.sentPackets + c.receivedPackets) packets "
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
/// printing, never the tap (the session still forwards and records).
struct LiveOutput {
    var closed = false

    mutating func emit(_ bytes: [UInt8]) {
        guard !closed, !bytes.isEmpty else { return }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress! + off, $0.count - off) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                closed = true
                return
            }
            off += n
        }
    }
}

/// The tap's btsnoop (datalink 1002; `capture`'s: 2001): one file, or numbered segments FILE.1, FILE.2, … of at
/// most `rotateSize` bytes. Each goes through `AtomicFile` (BTSnoopWriter): written as a
/// temporary file and renamed into place whole, when the next segment starts or at the end.
final class BTSnoopSegments {
    static let headerSize = 16
    let base: String
    let rotateSize: Int?
    let inputs: [String]
    let monitor: Bool
    private var writer: BTSnoopWriter?
    private var size = 0
    private var inSegment = 0
    private(set) var files: [String] = []
    private(set) var records = 0
    /// Why recording stopped, if it did (the tap forwards on).
    private(set) var failure: String?

    init(base: String, rotateSize: Int?, inputs: [String], monitor: Bool = false) {
        self.base = base; self.rotateSize = rotateSize; self.inputs = inputs; self.monitor = monitor
    }

    private var nextName: String { rotateSize == nil ? base : "\(base).\(files.count + 1)" }

    /// Opens the first file now, so an unwritable place is said before anything connects.
    /// With rotation, the numbered segments of an earlier recording under the same name are
    /// removed (as -w FILE replaces FILE): left, `FILE.*` would mix two sessions. Only files
    /// named FILE.N that are btsnoop files go; their names are returned, to be said.
    func start() throws(TapRecordError) -> [String] {
        try open()
        guard rotateSize != nil else { return [] }
        let url = URL(fileURLWithPath: base)
        let dir = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + "."
        var stale: [(Int, String)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where name.hasPrefix(prefix) {
            let n = name.dropFirst(prefix.count)
            guard !n.isEmpty, n.allSatisfy(\.isASCII), n.allSatisfy(\.isNumber), let k = Int(n) else { continue }
            let path = dir + "/" + name
            guard let h = FileHandle(forReadingAtPath: path) else { continue }
            let magic = (try? h.read(upToCount: 8)) ?? Data()
            try? h.close()
            guard magic == Data("btsnoop\0".utf8) else { continue }
            if (try? FileManager.default.removeItem(atPath: path)) != nil { stale.append((k, path)) }
        }
        return stale.sorted { $0.0 < $1.0 }.map(\.1)
    }

    private func open() throws(TapRecordError) {
        let name = nextName
        if let why = OutputGuard.conflict(output: name, inputs: inputs) { throw TapRecordError(message: why) }
        do {
            writer = try BTSnoopWriter(path: name, monitor: monitor)
        } catch {
            throw TapRecordError(message: error.description)
        }
        files.append(name)
        size = Self.headerSize
        inSegment = 0
    }

    func write(_ r: CaptureRecord) {
        append(need: 24 + 1 + r.bytes.count) { w throws(CaptureError) in try w.write(r) }  // record header, H4 indicator, packet
    }

    /// A monitor packet as the kernel gave it (`capture`).
    func writeMonitor(_ p: HCIMonitor.Packet) {
        append(need: 24 + p.payload.count) { w throws(CaptureError) in
            try w.writeMonitor(adapter: p.adapter, opcode: p.opcode, timestamp: p.timestamp, payload: p.payload)
        }
    }

    private func append(need: Int, _ body: (BTSnoopWriter) throws(CaptureError) -> Void) {
        guard failure == nil, writer != nil else { return }
        do throws(TapRecordError) {
            if let limit = rotateSize, inSegment > 0, size + need > limit {
                try commit()
                try open()
            }
            do throws(CaptureError) { if let w = writer { try body(w) } } catch { throw TapRecordError(message: error.description) }
            size += need
            inSegment += 1
            records += 1
        } catch {
            failure = error.message + " (recording stopped; forwarding went on)"
            if writer != nil { files.removeLast() }  // its temporary file goes with it
            writer = nil
        }
    }

    private func commit() throws(TapRecordError) {
        guard let w = writer else { return }
        writer = nil
        do { try w.finish() } catch { throw TapRecordError(message: error.description) }
    }

    func finish() {
        do throws(TapRecordError) { try commit() } catch {
            if failure == nil { failure = error.message }
        }
    }

    func describeFiles() -> String {
        files.count == 1 ? files[0] : "\(files.count) files, \(files[0]) … \(files[files.count - 1])"
    }
}

struct TapRecordError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
