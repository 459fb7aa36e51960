import ArgumentParser
import BluesiftSession
import Foundation
import BluesiftWire
import BluesiftReplay
import BluesiftTransport
import BluesiftHost
#if canImport(Glibc)
    import Glibc
#endif

nonisolated(unsafe) var emulateInterrupted: sig_atomic_t = 0

struct Emulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract: "Play a recorded device's part: advertise as it did and answer an app from its capture.",
        discussion: """
            The device is the one that served the most ATT in CAPTURE (or --device / --name). The \
            emulation advertises with its recorded advertising data and scan response, from its \
            recorded address where the controller allows it (a random address is set as recorded; a \
            public one other than the controller's cannot be, and a random static address is used \
            instead, said in one line). It serves the recorded GATT database (from the discovery in \
            the capture, or --gatt FILE) and offers the recorded MTU. When the device's database \
            changed during the capture, the last generation is served with what was answered while \
            it was in force; --generation N serves an earlier one.

            Reads get the recorded values in recorded order, the last one again after them. A write \
            is matched to a recorded write on the same handle by its bytes or, where a plugin covers \
            the characteristic, by message and fields with volatile fields ignored; it gets the \
            recorded response, then the notifications and indications that followed it in the \
            recording at their recorded spacing (--timing asap: at once), each only if the client \
            enabled it in the CCCD. A write with no recorded match gets the recorded error for that \
            handle (a Write Response when none was recorded; nothing for a command) and is reported. \
            A handle answered Insufficient Authentication or Encryption before pairing in the \
            recording is answered so again until the link is encrypted.

            Pairing (--pair auto, the default: when the recording shows SMP or encryption with the \
            device): as SMP responder, with the IO capability, MITM and LE Secure Connections flags \
            of the device's recorded Pairing Response; LE Secure Connections (Just Works, Numeric \
            Comparison, Passkey Entry) or legacy (Just Works, Passkey Entry). A passkey this side \
            displays is --passkey's, or random, printed for the person at the central to type; one \
            the central displays is --passkey's. --pair always pairs with any central that asks, \
            --pair never answers Pairing Not Supported. No keys are distributed (nothing to bond).

            Transports: tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD] (H4), hci:N (Linux HCI user \
            channel; needs CAP_NET_ADMIN). Runs until Ctrl-C / SIGTERM, or --sessions N connections.

            The report (--report FILE.json, and the text summary on stdout) lists each request the \
            app sent, how it was matched, what was answered, and every request that had no recorded \
            answer, in the form of replay's reports; `bluesift report FILE.json` shows it as a page.

            Exit codes:
              0   every request had a recorded answer
              1   requests without a recorded answer (listed)
              2   unusable input (not a capture, no device or no GATT database in it)
              3   transport or controller failure
              64  bad usage
            """)

    @Argument(help: "Capture of the device's session(s).") var capture: String
    @Option(help: "Transport to the controller: tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD], hci:N.") var transport: String
    @Option(help: "The recorded device to emulate, by address (default: the one that served the most ATT).") var device: String?
    @Option(help: "The recorded device to emulate, by its advertised name.") var name: String?
    @OptionGroup var decode: DecodeOptions
    @Option(help: "Notifications after a write: recorded (their recorded spacing) or asap.") var timing = Checked<Emulator.Timing>(argument: "recorded")
    @Option(help: "Stop after serving this many connections (default: until Ctrl-C or SIGTERM).") var sessions: Int?
    @Option(help: "When to pair as the device did: auto (the recording shows pairing or encryption), always or never (Pairing Not Supported).") var pair = Checked<PairMode>(argument: "auto")
    @Option(help: "Passkey (six digits) this emulation displays, or types when the central displays one.") var passkey: String?
    @Option(help: "Write what happened as a btsnoop capture.") var record: String?
    @Option(help: "Write the report as JSON (viewable with `bluesift report`).") var report: String?

    /// The options alone, in the order they are said (before any file is read).
    func validate() throws {
        _ = try timing.get("--timing", expected: "recorded or asap")
        if let s = sessions, s < 1 { throw usage("--sessions", "a number of connections, 1 or more", "\(s)") }
        _ = try address()
        _ = try pair.get("--pair", expected: "auto, always or never")
        _ = try passkeyValue()
        if device != nil && name != nil { throw usage("--name", "either --device or --name, not both", name!) }
        do { _ = try TransportSpec(parsing: transport) } catch {
            stderrLine("bluesift: --transport: \(error.message)")
            throw Exit.usage
        }
    }

    func address() throws -> BDAddr? {
        guard let d = device else { return nil }
        guard let a = BDAddr(string: d) else { throw usage("--device", "an address such as c0:ba:0d:00:00:01", d) }
        return a
    }

    func passkeyValue() throws -> UInt32? {
        guard let passkey else { return nil }
        guard passkey.count <= 6, let v = UInt32(passkey), v < 1_000_000 else { throw usage("--passkey", "six digits such as 314159", passkey) }
        return v
    }

    func run() throws {
        let t = try timing.get("--timing", expected: "recorded or asap")
        let address = try self.address()
        let pair = try self.pair.get("--pair", expected: "auto, always or never")
        let pk = try passkeyValue()
        let inputs = [capture] + (decode.gatt.map { [$0] } ?? [])
        for out in [record, report].compactMap({ $0 }) { try OutputGuard.refuseSameFile(output: out, inputs: inputs) }
        if let record, let report, OutputGuard.sameFile(record, report) || record == report {
            stderrLine("bluesift: --record and --report name the same file \(record)")
            throw Exit.unusableInput
        }

        // The model: the capture read once through the analyzer.
        let settings = try decode.settings(generationOfCapture: true)
        let session = try openSessionOrExit(capture, decode: settings)
        let builder = EmulationModelBuilder(capture: (capture as NSString).lastPathComponent)
        let decoder = session.decoder
        session.forEach { builder.observe($0, decoder: decoder) }
        let model: EmulationModel
        do {
            model = try builder.model(
                address: address, name: name, gatt: settings.gatt,
                generation: decode.gatt == nil ? decode.generation : nil, tracker: session.analyzer.gatt)
        } catch {
            stderrLine("bluesift: emulate: \(error.message)")
            throw Exit.unusableInput
        }

        let emulator = Emulator(model: model, timing: t, interpreter: settings.plugins.map { PluginInterpreter(plugins: $0) })
        emulator.onLine = { stderrLine("bluesift: emulate: " + $0) }
        var options = EmulationRunner.Options()
        options.sessions = sessions
        if pair == .always || (pair == .auto && model.secured) { options.pairing = Self.pairingPolicy(model, passkey: pk) }
        let runner = EmulationRunner(emulator: emulator, options: options)
        runner.notice = { stderrLine("bluesift: emulate: " + $0) }
        var recorder: Recorder?
        if let record {
            do { recorder = try Recorder(path: record) } catch {
                stderrLine("bluesift: \(error.description)")
                throw Exit.unusableInput
            }
        }
        LiveRecording.catchStopSignals { _ in emulateInterrupted = 1 }
        stderrLine(
            "bluesift: emulate: \(model.address?.description ?? "the device") from \(model.capture): "
                + (model.generation.map { "database generation \($0.number) of \($0.of), " } ?? "")
                + "\(model.database.services.count) services, \(model.readCount) reads, \(model.writeCount) writes, "
                + "\(model.notificationCount) notifications recorded")
        let result = runner.run(transport: transport, tap: recorder?.tap, stop: { emulateInterrupted != 0 })
        if let recorder {
            do { try recorder.finish() } catch { stderrLine("bluesift: \(error.description)") }
            if let f = recorder.failed { stderrLine("bluesift: \(record ?? ""): \(f)") }
        }
        Replay.printReport(result, emulation: true)
        if let report { try OutputGuard.write(try result.encoded(), to: report) }
        if let f = result.fault {
            stderrLine("bluesift: emulate: \(f.message)")
            throw f.code == "permission_denied" ? Exit.unusableInput : ExitCode(3)
        }
        if result.summary.unexpected > 0 { throw ExitCode(1) }
    }

    /// Pairs as the recorded device said it would in its Pairing Response (IO capability,
    /// MITM, LE Secure Connections); without one, Just Works with LE Secure Connections.
    static func pairingPolicy(_ model: EmulationModel, passkey: UInt32?) -> PairingPolicy {
        var p = PairingPolicy()
        if let r = model.pairing {
            p.ioCapability = r.ioCapability
            p.mitm = r.authReq.contains(.mitm)
            p.secureConnections = r.authReq.contains(.secureConnections)
            p.bonding = r.authReq.bondingFlags == 1
            p.maxKeySize = max(7, min(16, r.maxKeySize))
        }
        p.passkey = passkey
        return p
    }
}
