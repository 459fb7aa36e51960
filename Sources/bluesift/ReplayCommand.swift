import ArgumentParser
import BluesiftSession
import Foundation
import BluesiftWire
import BluesiftReplay
import BluesiftTransport
import BluesiftDissect
import BluesiftSecurity

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a recorded write sequence to a live device and diff its answers against the recording.",
        discussion: """
            INPUT is a replay script (bluesift script … -o FILE.json) or a capture, from which the \
            script of one connection is extracted. The device's GATT database is discovered and \
            each step's handle remapped by (service, characteristic, instance).

            Transports: tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD], hci:N (Linux HCI user channel: \
            an adapter that is up is powered down for the run and up again after it, also after \
            Ctrl-C; needs CAP_NET_ADMIN), l2cap:N (Linux: the kernel's LE L2CAP socket on the ATT \
            channel, the adapter stays with BlueZ; connects by address; pairing is the kernel's, \
            Just Works only). See docs/transport.md.

            Exit codes:
              0   every step matched
              1   differences, or steps skipped because their characteristic is not on the device
              2   unusable input (not a script or capture, a step that cannot be replayed)
              3   transport or device failure: connection lost, device not found, request timed out,
                  another device at the address, pairing failed (a partial report is still written)

            Pairing (--pair auto, the default): before the first step when the recording shows SMP \
            or encryption on the connection, and when the device answers Insufficient \
            Authentication / Encryption / Encryption Key Size (the request is then sent once more) \
            or sends a Security Request. LE Secure Connections (Just Works, Numeric Comparison, \
            Passkey Entry) or legacy pairing, as the device offers. With --keys FILE the keys are \
            kept (JSON, mode 0600) and a later run re-encrypts with them instead of pairing.
            """)

    @Argument(help: "Replay script (JSON) or capture.") var input: String
    @Option(help: "Transport to the controller: tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD], hci:N, l2cap:N.") var transport: String?
    @Option(help: "Connection to extract when INPUT is a capture.") var connection: String?
    @Option(help: "Device address (default: the peer recorded).") var device: String?
    @Option(help: "Match the device by its advertised name instead.") var name: String?
    @Option(help: "Pacing: recorded, asap or fixed:MS.") var timing = Checked<ReplayRunner.Timing>(argument: "recorded")
    @Option(help: "Milliseconds to wait for notifications after a step.") var window = 1000
    @Option(help: "Seconds to wait for any one answer.") var timeout = 5.0
    @Option(help: "Ignore differences: handle=H, bytes=H:A-B, field=NAME or MESSAGE.FIELD (repeatable).") var ignore: [String] = []
    @OptionGroup var plugins: PluginOptions
    @Option(help: "Write the replay session as a btsnoop capture.") var record: String?
    @Option(help: "Write the report as JSON (also on exit 3).") var report: String?
    @Flag(help: "Print what would be sent, send nothing.") var dryRun = false
    @Flag(help: "Replay even when the device's address or GATT database does not match the recording. A step whose characteristic the device does not have is never sent: it is reported skipped, and the run exits 1.") var force = false
    @Flag(help: "Send a step whose characteristic the device does not have to its recorded raw handle (recorded in the report as raw_handles).") var rawHandles = false
    @Option(help: "When to pair: never, auto (recording shows SMP/encryption, or an ATT security error) or always.") var pair = Checked<PairMode>(argument: "auto")
    @Option(help: "Bond store (JSON, written with mode 0600): re-encrypt with its keys, keep new ones.") var keys: String?
    @Option(help: "Passkey (six digits) the device displays, or this host displays for the device to type.") var passkey: String?
    @Flag(help: "Accept Numeric Comparison's six digits without asking.") var confirm = false

    func loadScript() throws -> ReplayScript {
        guard let data = FileManager.default.contents(atPath: input) else {
            stderrLine("bluesift: \(input): cannot read")
            throw Exit.unusableInput
        }
        if data.first == UInt8(ascii: "{") {
            do { return try ReplayScript.decode(data) } catch {
                stderrLine("bluesift: " + jsonErrorLine(file: input, data: data, error: error))
                throw Exit.unusableInput
            }
        }
        var filter = FrameFilter()
        if let c = connection {
            guard let v = parseInteger(c), v >= 0, v <= 0xFFFF else {
                throw usage("--connection", "a connection handle such as 0x0040 or 64", c)
            }
            filter.connection = UInt16(v)
        }
        return try Script.extract(file: input, filter: filter, settings: DecodeSettings())
    }

    /// The options alone, in the order they are said (before any file is read).
    func validate() throws {
        _ = try timing.get("--timing", expected: "recorded, asap or fixed:MS")
        _ = try pair.get("--pair", expected: "never, auto or always")
        _ = try passkeyValue()
        _ = try ignoreRules()
    }

    func passkeyValue() throws -> UInt32? {
        guard let passkey else { return nil }
        guard passkey.count <= 6, let v = UInt32(passkey), v < 1_000_000 else { throw usage("--passkey", "six digits such as 314159", passkey) }
        return v
    }

    func ignoreRules() throws -> [IgnoreRule] {
        try ignore.map { i in
            guard let r = IgnoreRule(parsing: i) else { throw usage("--ignore", "handle=H, bytes=H:A-B or field=NAME", i) }
            return r
        }
    }

    func run() throws {
        var options = ReplayRunner.Options()
        options.timing = try timing.get("--timing", expected: "recorded, asap or fixed:MS")
        options.window = .milliseconds(max(0, window))
        options.force = force
        options.rawHandles = rawHandles
        options.pair = try pair.get("--pair", expected: "never, auto or always")
        let pk = try passkeyValue()
        options.ignore = try ignoreRules()
        try refuseFolder(input, hint: "a replay script or one capture")
        let inputs = [input]
        for out in [record, report].compactMap({ $0 }) { try OutputGuard.refuseSameFile(output: out, inputs: inputs) }
        if let record, let report, OutputGuard.sameFile(record, report) || record == report {
            stderrLine("bluesift: --record and --report name the same file \(record)")
            throw Exit.unusableInput
        }
        if let d = device, BDAddr(string: d) == nil {
            throw usage("--device", "an address such as c0:ba:0d:00:00:01", d)
        }
        if let t = transport {
            do { _ = try TransportSpec(parsing: t) } catch {
                stderrLine("bluesift: --transport: \(error.message)")
                throw Exit.usage
            }
        }
        let script = try loadScript()
        let runner = ReplayRunner(script: script, options: options, interpreter: vendorInterpreter(plugins))
        if dryRun {
            var out = Output()
            out.line(
                "dry run: \(script.steps.count) steps from \(script.source.capture) connection \(Hex.fixed(UInt64(script.source.connection), width: 4))"
                    + (script.source.peer.map { " to \($0)" } ?? ""))
            out.line(runner.pairingPlan())
            for l in runner.plan() { out.line("  " + l) }
            out.flush()
            return
        }
        guard let transport else { throw ValidationError("--transport is required (or use --dry-run)") }
        let target = device ?? script.source.peer
        var progress = Progress("replay")
        runner.progress = { i, n, _ in progress.update(done: i, total: n, unit: "steps") }
        var recorder: Recorder?
        if let record {
            do { recorder = try Recorder(path: record) } catch {
                stderrLine("bluesift: \(error.description)")
                throw Exit.unusableInput
            }
        }
        var bonds = BondStore()
        if let keys {
            do { bonds = try BondStore.load(path: keys) } catch {
                stderrLine("bluesift: \(keys): \(error.description)")
                throw Exit.unusableInput
            }
        }
        var result: ReplayReport
        do {
            let dev = try openLiveDevice(
                transport: transport, address: target, name: name, timeout: timeout, recorder: recorder,
                pairing: pairingPolicy(passkey: pk, confirm: confirm), bonds: bonds, keysPath: keys,
                addressType: device == nil ? script.source.peerAddressType : nil)
            result = runner.run(device: dev)
        } catch {
            // A missing capability is the user's to grant, a missing adapter the user's to name
            // (the line lists those there are): not device failures. One line, exit 2.
            if error.code == .permissionDenied || error.code == .noAdapter {
                progress.finish()
                stderrLine("bluesift: replay: \(error.message)")
                throw Exit.unusableInput
            }
            result = ReplayReport()
            result.fault = .init(code: error.code.rawValue, message: error.message, step: nil)
        }
        progress.finish()
        result.transport = transport
        // The evidence is kept whatever happened: the recording is completed, then renamed into place.
        if let recorder {
            do { try recorder.finish() } catch { stderrLine("bluesift: \(error.description)") }
            if let f = recorder.failed { stderrLine("bluesift: \(record ?? ""): \(f)") }
        }
        Self.printReport(result)
        if let report { try OutputGuard.write(try result.encoded(), to: report) }
        if let f = result.fault { stderrLine("bluesift: replay: \(f.message)") }
        if result.exitCode != 0 { throw ExitCode(result.exitCode) }
    }

    /// The text summary of a report; `emulation`: steps are the app's requests to `emulate`.
    static func printReport(_ r: ReplayReport, emulation: Bool = false) {
        var out = Output()
        for l in ReplayText.lines(r, emulation: emulation) { out.line(l) }
        out.flush()
    }
}
