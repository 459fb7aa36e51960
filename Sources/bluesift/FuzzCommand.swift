import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftGATT
import BluesiftSession
import BluesiftDissect
import BluesiftPlugins
import BluesiftReplay
import BluesiftDeviceFuzz
import BluesiftTransport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Set by SIGINT during `fuzz`: the run stops and writes what it found.
nonisolated(unsafe) private var fuzzInterrupted: sig_atomic_t = 0
/// The SIGINT handler before `fuzz` set its own (OutputGuard's: temporary files removed, an
/// `hci:N` adapter powered up again): a second Ctrl-C goes through it.
nonisolated(unsafe) private var fuzzPreviousSIGINT: __sighandler_t? = nil

struct Fuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Send mutated variants of a recorded session to a live device and report how it reacts, each reaction minimised to a replayable capture.",
        discussion: """
            The recorded set-up (connection, MTU, discovery and handle remapping, pairing when the \
            recording paired, CCCD writes) is replayed before every variant, each on a fresh \
            connection. Variants change the write sequence: vendor fields through their plugin \
            (boundaries, values outside an enum, repeated groups; the frame re-encoded with valid \
            length and checksum, split over writes as recorded), ATT (values longer than recorded \
            and than the MTU, the wrong write kind, CCCD values, reads of every handle, a prepared \
            write queue that overflows, characteristics never written) and the sequence (steps \
            dropped, sent twice, swapped, reversed, sent at once). --blind changes bytes instead \
            of fields.

            A finding is a disconnection (with its reason), no answer within the ATT timeout, a \
            reset (the database or a value that read the same twice changed after a \
            disconnection), an ATT error the recording never shows, or a notification its plugin \
            rejects. Each is minimised (delta debugging over steps, then over mutated fields), run \
            again --reruns times, and written to DIR: finding-N.json, finding-N.btsnoop (replay it \
            with `bluesift replay`), and findings.json. Ctrl-C stops and writes what was found.

            Exit codes: 0 no findings, 1 findings, 2 unusable input, 3 the device or transport \
            failed before fuzzing could start. After Ctrl-C the same: 0 or 1 for what was found \
            so far (findings.json says "interrupted": true).
            """)

    @Argument(help: "Capture holding the session to fuzz (or a replay script).") var input: String
    @Option(help: "Transport to the controller: tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD], hci:N, l2cap:N.") var transport: String?
    @Option(help: "Connection to take from the capture (default: the one with most writes).") var connection: String?
    @Option(help: "Device address (default: the peer recorded).") var device: String?
    @Option(help: "Match the device by its advertised name instead.") var name: String?
    @OptionGroup var plugins: PluginOptions
    @Option(help: "Variants to run (default 200).") var steps: Int?
    @Option(help: "Time budget in seconds (instead of --steps): no variant, minimisation or rerun starts after it.") var time: Double?
    @Option(help: "Seed of the mutation choices (same seed and device: same run).") var seed: UInt64 = 1
    @Option(help: "Mutate only steps aimed at this characteristic UUID (repeatable).") var characteristic: [String] = []
    @Option(name: .shortAndLong, help: "Folder for findings.json, finding-N.json and finding-N.btsnoop.") var output: String?
    @Flag(help: "Mutate bytes where they are, without re-encoding through the plugin.") var blind = false
    @Flag(help: "List the set-up and the variants of the first round; connect to nothing.") var dryRun = false
    @Option(help: "At most this many connections a second (0: no limit).") var rate: Double = 10
    @Option(help: "Runs of each minimised finding for its reproduction rate.") var reruns = 10
    @Option(help: "Seconds to wait for any one answer (the ATT timeout).") var timeout = 5.0
    @Option(help: "Milliseconds to wait for a step's recorded notifications.") var window = 300
    @Option(help: "When to pair: never, auto or always.") var pair = Checked<PairMode>(argument: "auto")

    func validate() throws {
        if steps != nil, time != nil { throw usage("--steps", "either --steps or --time, not both", "\(steps!)") }
        if let s = steps, s < 0 { throw usage("--steps", "a count of variants", "\(s)") }
        if let t = time, !(t > 0) { throw usage("--time", "seconds above 0", "\(t)") }
        if reruns < 1 { throw usage("--reruns", "1 or more", "\(reruns)") }
        if !(timeout > 0) { throw usage("--timeout", "seconds above 0", "\(timeout)") }
        if !(rate >= 0) { throw usage("--rate", "connections a second, 0 for no limit", "\(rate)") }
        _ = try pair.get("--pair", expected: "never, auto or always")
        if let d = device, BDAddr(string: d) == nil { throw usage("--device", "an address such as c0:ba:0d:00:00:01", d) }
        if let t = transport {
            do { _ = try TransportSpec(parsing: t) } catch {
                stderrLine("bluesift: --transport: \(error.message)")
                throw Exit.usage
            }
        }
    }

    func loadScript() throws -> ReplayScript {
        var replay = try Replay.parse([input] + (connection.map { ["--connection", $0] } ?? []))
        replay.connection = connection
        return try replay.loadScript()
    }

    /// The recorded GATT database of the peer (for --dry-run, which connects to nothing).
    func recordedDatabase(_ script: ReplayScript) -> GATTDatabase {
        guard input.first != "{", let session = try? openSessionOrExit(input, decode: DecodeSettings()) else { return GATTDatabase() }
        let devices = GATTSelection.chosen(session, filter: FrameFilter())
        return devices.first { $0.address.lowercased() == script.source.peer?.lowercased() }?.database ?? devices.first?.database ?? GATTDatabase()
    }

    func run() throws {
        try refuseFolder(input, hint: "one capture")
        let script = try loadScript()
        // Compiled: the plan encodes frames with the plugins themselves, not stubs.
        let loaded = (plugins.loadPlugins() ?? []).compactMap(\.resolved)
        let base = FuzzBase(script: script, plugins: loaded)
        var options = DeviceFuzzer.Options()
        options.variants = steps ?? (time == nil ? 200 : Int.max)
        options.time = time.map { .milliseconds(Int64($0 * 1000)) }
        options.seed = seed
        options.blind = blind
        options.characteristics = characteristic
        options.rate = rate
        options.reruns = reruns
        options.window = .milliseconds(max(0, window))
        options.pair = try pair.get("--pair", expected: "never, auto or always")
        if dryRun {
            let planner = FuzzPlanner(base: base, live: recordedDatabase(script), blind: blind, characteristics: characteristic, seed: seed)
            var out = Output()
            out.line("dry run: \(script.source.capture) connection \(Hex.fixed(UInt64(script.source.connection), width: 4))" + (script.source.peer.map { " to \($0)" } ?? "") + ", seed \(seed)\(blind ? ", blind" : "")")
            out.line("set-up, before every variant:")
            for i in base.setup {
                let s = script.steps[i]
                out.line("  \(s.kind)" + (s.kind == "mtu" ? " \(s.mtu ?? 23)" : " \(s.target.map { DeviceFuzzer.describeTarget($0) } ?? "") \(s.value ?? "")"))
            }
            out.line("sequence (\(base.sequence.count) steps, \(base.frames.count) vendor frames):")
            for (i, a) in base.sequence.enumerated() { out.line("  \(i + 1). \(a.text)") }
            let n = min(planner.firstRound.count, options.variants)
            out.line("first \(n) of \(planner.firstRound.count) single mutations:")
            for (i, v) in planner.firstRound.prefix(n).enumerated() {
                out.line("  variant \(i + 1) [\(v.mutations.map(\.layer).joined(separator: "+"))] \(v.mutations.map(\.summary).joined(separator: "; "))")
                for a in v.actions where a.mutation != nil { out.line("      sends \(a.text)") }
            }
            out.flush()
            return
        }
        guard let transport else { throw ValidationError("--transport is required (or use --dry-run)") }
        guard let output else { throw ValidationError("-o DIR is required: where the findings go") }
        do { try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true) } catch {
            stderrLine("bluesift: \(output): cannot create the folder")
            throw Exit.unusableInput
        }
        let target = device ?? script.source.peer
        var recorder: Recorder?
        let fuzzer = DeviceFuzzer(base: base, plugins: loaded, options: options) { (recording: String?) throws(ReplayFault) -> any RawATTDevice in
            recorder = nil
            if let recording {
                do throws(CaptureError) { recorder = try Recorder(path: recording) } catch { throw ReplayFault(.init(rawValue: "recording"), error.description) }
            }
            let d = try openLiveDevice(
                transport: transport, address: target, name: name, timeout: timeout, recorder: recorder,
                addressType: device == nil ? script.source.peerAddressType : nil, quiet: true)
            guard let raw = d as? any RawATTDevice else { throw ReplayFault(.transportClosed, "\(transport): raw ATT is not available") }
            return raw
        }
        fuzzer.finishRecording = { (path: String) in
            do throws(CaptureError) { try recorder?.finish() } catch { stderrLine("bluesift: \(path): \(error.description)") }
            recorder = nil
        }
        fuzzer.reproducerPath = { (n: Int) -> String? in "\(output)/finding-\(n).btsnoop" }
        let clock = ContinuousClock()
        let start = clock.now
        fuzzer.elapsed = { () -> Duration in clock.now - start }
        fuzzer.pause = { (d: Duration) in Thread.sleep(forTimeInterval: Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18) }
        fuzzer.shouldStop = { fuzzInterrupted != 0 }
        let tty = isatty(2) == 1
        var lastShown = -1
        fuzzer.progress = { (p: DeviceFuzzer.Progress) in
            let t = clock.now - start
            let secs = Double(t.components.seconds) + Double(t.components.attoseconds) / 1e18
            let line =
                "fuzz: variant \(p.variant)/\(p.variants == Int.max ? "-" : "\(p.variants)"), \(p.findings) finding\(p.findings == 1 ? "" : "s"), "
                + "\(p.connections) connections, \(String(format: "%.1f", secs)) s, \(String(format: "%.2f", secs > 0 ? Double(p.connections) / secs : 0)) connections/s (\(p.phase))"
            if tty {
                stderrRaw("\r\u{1B}[K" + line)
                if p.phase == "done" { stderrRaw("\n") }
            } else if p.variant / 10 != lastShown / 10 || p.phase != "fuzzing" {
                stderrLine(line)
            }
            lastShown = p.variant
        }
        // Ctrl-C: stop between runs and write what was found. A second one ends the process
        // through the common handler, which powers an hci:N adapter up again.
        fuzzPreviousSIGINT = signal(SIGINT) { _ in
            fuzzInterrupted = 1
            signal(SIGINT, fuzzPreviousSIGINT ?? SIG_DFL)
        }
        var summary: FuzzSummary
        do throws(ReplayFault) { summary = try fuzzer.run() } catch {
            if error.code == .permissionDenied || error.code == .noAdapter {
                stderrLine("bluesift: fuzz: \(error.message)")
                throw Exit.unusableInput
            }
            stderrLine("bluesift: fuzz: the recorded session could not be run: \(error.message)")
            throw ExitCode(3)
        }
        for i in summary.findings.indices {
            summary.findings[i].reproducer = summary.findings[i].reproducer.map { ($0 as NSString).lastPathComponent }
            summary.findings[i].json = "finding-\(summary.findings[i].id).json"
            try OutputGuard.write(try Self.encode(summary.findings[i]), to: "\(output)/finding-\(summary.findings[i].id).json")
        }
        try OutputGuard.write(try Self.encode(summary), to: "\(output)/findings.json")
        var out = Output()
        for l in Self.lines(summary) { out.line(l) }
        out.flush()
        if !summary.findings.isEmpty { throw ExitCode(1) }
    }

    static func encode<T: Encodable>(_ v: T) throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.keyEncodingStrategy = .convertToSnakeCase
        var d = try e.encode(v)
        d.append(0x0A)
        return d
    }

    /// The text report.
    static func lines(_ s: FuzzSummary) -> [String] {
        var out = [
            "fuzz: \(s.capture), seed \(s.seed)\(s.blind ? ", blind" : ""): \(s.variants) variants (first round \(s.planned)), \(s.connections) connections"
                + (s.interrupted ? ", interrupted" : "") + ", \(s.findings.count) finding\(s.findings.count == 1 ? "" : "s")"
        ]
        if !s.baseline.isEmpty { out.append("  the recording itself shows: " + s.baseline.joined(separator: "; ")) }
        for f in s.findings {
            out.append("finding \(f.id): \(f.reaction.text)")
            out.append("  found by variant \(f.variant): " + f.mutations.map { "[\($0.layer)] \($0.summary)" }.joined(separator: "; "))
            out.append("  minimised from \(f.originalSteps) to \(f.steps.count) step\(f.steps.count == 1 ? "" : "s") after the set-up:")
            for (i, a) in f.steps.enumerated() { out.append("    \(i + 1). \(a.text)" + (a.mutation.map { "   <- \($0)" } ?? "")) }
            out.append("  reproduced \(f.reproduced) of \(f.runs) runs" + (f.reproducer.map { "; reproducer \($0)" } ?? ""))
        }
        return out
    }
}
