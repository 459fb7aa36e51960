import Testing
import Foundation
import TestEvents

/// `bluesift emulate` against the rig: the built binary plays a recorded band over H4/TCP to
/// one virtual controller, and the rig's scripted Bumble central (record_session.py) runs the
/// band session against it from another.
@Suite(.serialized, .enabled(if: Rig.available, "needs the Bumble venv: make venv"))
struct EmulateAgainstVirtualCentral {
    struct Run { var status: Int32; var stdout: String; var stderr: String; var report: [String: Any]? }

    /// Runs a rig script to its end; its exit status and output.
    static func script(_ name: String, _ args: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = Rig.root.appendingPathComponent(".venv/bin/python")
        p.currentDirectoryURL = Rig.root.appendingPathComponent("Tests/VirtualDevice")
        p.arguments = [name] + args
        let out = Pipe()
        p.standardOutput = out; p.standardError = out; p.standardInput = FileHandle.nullDevice
        try p.run()
        var text = Data()
        Events.read(out.fileHandleForReading.fileDescriptor, into: &text) { _ in false } // to its end
        if !Events.exit(p) { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        return (p.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    /// `bluesift emulate CAPTURE` on `port` for one session while `central` runs; its result.
    static func emulate(_ capture: String, port: Int, dir: String, extra: [String] = [], central: () throws -> Void) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        let report = dir + "/emulate.json"
        p.arguments =
            [
                "emulate", capture, "--transport", "tcp:127.0.0.1:\(port)", "--sessions", "1", "--report", report,
                "--plugins", Rig.root.appendingPathComponent("Plugins").path
            ] + extra
        let o = dir + "/emu.out", e = dir + "/emu.err"
        FileManager.default.createFile(atPath: o, contents: nil); FileManager.default.createFile(atPath: e, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: o))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: e))
        try p.run()
        // Advertising starts once the controller is set up: wait for its line.
        _ = Events.text("emulate: advertising as", in: e, process: p)
        try central()
        if !Events.exit(p) { p.terminate(); p.waitUntilExit() }
        let r = FileManager.default.contents(atPath: report).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        return Run(
            status: p.terminationStatus, stdout: String(decoding: FileManager.default.contents(atPath: o) ?? Data(), as: UTF8.self),
            stderr: String(decoding: FileManager.default.contents(atPath: e) ?? Data(), as: UTF8.self), report: r)
    }

    /// The ATT PDUs a central logged as received, in order.
    static func received(_ log: String) -> [String] {
        (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").compactMap {
            guard let o = try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], o["dir"] as? String == "received" else { return nil }
            return o["pdu"] as? String
        } ?? []
    }

    static func tempDir(_ tag: String) -> String {
        let dir = NSTemporaryDirectory() + "bluesift-emulate-\(getpid())-\(tag)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The band's session recorded, then emulated: the same central gets every answer the band gave,
    /// byte for byte (discovery, reads, the MTU, every notified vendor frame, the NACK).
    @Test func centralGetsEveryAnswerTheBandGave() throws {
        let dir = Self.tempDir("same")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (central, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        let band = try Rig.start("band_peripheral.py", ["tcp-client:127.0.0.1:\(peripheral)"], log: dir + "/band.log")
        let (bandStatus, bandOut) = try Self.script(
            "record_session.py",
            [
                "tcp-client:127.0.0.1:\(central)", "--log", dir + "/band.jsonl",
                "--snoop", dir + "/band.btsnoop", "--log-level", "WARNING"
            ])
        Rig.stop(band)
        #expect(bandStatus == 0, "\(bandOut)")
        var centralStatus: Int32 = -1, centralOut = ""
        let r = try Self.emulate(dir + "/band.btsnoop", port: peripheral, dir: dir) {
            (centralStatus, centralOut) = try Self.script(
                "record_session.py",
                [
                    "tcp-client:127.0.0.1:\(central)", "--log", dir + "/emu.jsonl",
                    "--log-level", "WARNING"
                ])
        }
        #expect(centralStatus == 0, "\(centralOut)\n\(r.stderr)")
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let fromBand = Self.received(dir + "/band.jsonl"), fromEmulation = Self.received(dir + "/emu.jsonl")
        #expect(fromBand.count == 39)
        #expect(fromEmulation == fromBand)
        // Vendor replies, checksums included: device_info_reply and the NACK of the bad ping.
        #expect(fromEmulation.contains("1b1f00a5078101045771"))
        #expect(fromEmulation.contains("1b1f00a504ee4f"))
        let summary = r.report?["summary"] as? [String: Int] ?? [:]
        #expect(summary["steps"] == 16 && summary["matched"] == 16 && summary["unexpected"] == 0)
        #expect(r.report?["mode"] as? String == "emulate")
        #expect(r.stderr.contains("advertising as c0:ba:0d:00:00:01 (random) \"bluesift-band\""))
        #expect(r.stdout.contains("summary: 16 requests, 16 answered as recorded, 0 without a recorded answer, 9 notifications sent"))
        // The report is one `bluesift report` renders.
        let page = Process()
        page.executableURL = URL(fileURLWithPath: Rig.binary)
        page.arguments = ["report", dir + "/emulate.json", "-o", dir + "/emulate.html"]
        page.standardOutput = FileHandle.nullDevice; page.standardError = FileHandle.nullDevice
        try page.run(); page.waitUntilExit()
        #expect(page.terminationStatus == 0)
        let html = String(decoding: FileManager.default.contents(atPath: dir + "/emulate.html") ?? Data(), as: UTF8.self)
        #expect(html.contains("\"emulate\"") && html.contains("matched by bytes, frame ")) // frames of this run's own recording
    }

    /// The band's session recorded with the central pairing first (the band needs an encrypted
    /// or authenticated link), then emulated: the central pairs with the emulation as it did with
    /// the band (the emulation answers as the recorded Pairing Response said) and gets every answer.
    @Test(arguments: [
        ("sc-just-works", ["--security", "encryption"], ["--pair", "sc"], [String](), "just_works, LE Secure Connections"),
        (
            "sc-passkey", ["--security", "authentication", "--io", "display", "--passkey", "314159"],
            ["--pair", "sc", "--io", "keyboard", "--passkey", "314159"], ["--passkey", "314159"], "passkey_entry, LE Secure Connections"
        ),
        (
            "sc-numeric-comparison", ["--security", "authentication", "--io", "yesno"], ["--pair", "sc", "--io", "yesno"], [],
            "numeric_comparison, LE Secure Connections"
        ),
        ("legacy-just-works", ["--security", "encryption", "--pairing", "legacy"], ["--pair", "legacy"], [], "just_works, legacy"),
        (
            "legacy-passkey", ["--security", "authentication", "--pairing", "legacy", "--io", "display", "--passkey", "271828"],
            ["--pair", "legacy", "--io", "keyboard", "--passkey", "271828"], ["--passkey", "271828"], "passkey_entry, legacy"
        )
    ])
    func centralPairsWithTheEmulationAsWithTheBand(_ tag: String, _ band: [String], _ pair: [String], _ emulate: [String], _ said: String) throws {
        let dir = Self.tempDir(tag)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (central, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        let device = try Rig.start("band_peripheral.py", ["tcp-client:127.0.0.1:\(peripheral)"] + band, log: dir + "/band.log")
        let (bandStatus, bandOut) = try Self.script(
            "record_session.py",
            [
                "tcp-client:127.0.0.1:\(central)", "--log", dir + "/band.jsonl",
                "--snoop", dir + "/band.btsnoop", "--log-level", "WARNING"
            ] + pair)
        Rig.stop(device)
        #expect(bandStatus == 0 && bandOut.contains("PAIRED encrypted=True"), "\(bandOut)")
        var centralStatus: Int32 = -1, centralOut = ""
        let r = try Self.emulate(dir + "/band.btsnoop", port: peripheral, dir: dir, extra: emulate) {
            (centralStatus, centralOut) = try Self.script(
                "record_session.py",
                [
                    "tcp-client:127.0.0.1:\(central)", "--log", dir + "/emu.jsonl",
                    "--log-level", "WARNING"
                ] + pair)
        }
        #expect(centralStatus == 0 && centralOut.contains("PAIRED encrypted=True"), "\(centralOut)\n\(r.stderr)")
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stderr.contains("paired and encrypted: \(said), key size 16"))
        if let pk = emulate.last { #expect(r.stderr.contains("passkey \(pk): type it on the central")) }
        if tag == "sc-numeric-comparison" { #expect(r.stderr.contains("numeric comparison: ") && r.stderr.contains("(the central shows the same six digits)")) }
        #expect(Self.received(dir + "/emu.jsonl") == Self.received(dir + "/band.jsonl"))
        #expect(Self.received(dir + "/emu.jsonl").count == 39)
    }

    /// Pairing refused: the emulation answers Pairing Not Supported and the central gives up.
    @Test func pairNeverRefusesPairing() throws {
        let dir = Self.tempDir("never")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (central, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        var centralStatus: Int32 = -1, centralOut = ""
        let r = try Self.emulate(
            Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path, port: peripheral, dir: dir,
            extra: ["--pair", "never"]
        ) {
            (centralStatus, centralOut) = try Self.script(
                "record_session.py",
                [
                    "tcp-client:127.0.0.1:\(central)", "--pair", "sc",
                    "--log-level", "WARNING"
                ])
        }
        #expect(centralStatus == 1)
        #expect(centralOut.contains("pairing failure (PAIRING_NOT_SUPPORTED)"), "\(centralOut)")
        #expect(r.status == 0 && (r.report?["steps"] as? [Any])?.isEmpty == true)
        #expect(!r.stderr.contains("paired and encrypted"))
    }

    /// An app with today's clock: set_time differs in its year, the band plugin calls the field
    /// volatile, and the write is answered as recorded, matched by fields.
    @Test func changedTimestampIsMatchedByFields() throws {
        let dir = Self.tempDir("fields")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (central, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        var centralStatus: Int32 = -1, centralOut = ""
        let record = dir + "/emulation.btsnoop"
        let r = try Self.emulate(
            Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path, port: peripheral, dir: dir,
            extra: ["--record", record]
        ) {
            (centralStatus, centralOut) = try Self.script(
                "record_session.py",
                [
                    "tcp-client:127.0.0.1:\(central)", "--year", "2027",
                    "--log-level", "WARNING"
                ])
        }
        // --record: the emulation's own HCI, a capture the tool reads (advertising set, the
        // central's set_time of 2027 arriving, the recorded reply going out).
        let dump = Process()
        dump.executableURL = URL(fileURLWithPath: Rig.binary)
        dump.arguments = ["dump", record, "--protocol", "att"]
        let pipe = Pipe()
        dump.standardOutput = pipe; dump.standardError = FileHandle.nullDevice
        try dump.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        dump.waitUntilExit()
        #expect(dump.terminationStatus == 0)
        #expect(text.contains("ATT Write Command handle=0x001d value=a50b02eb070614091e0045"))
        #expect(text.contains("ATT Handle Value Notification handle=0x001f value=a505820022"))
        #expect(centralStatus == 0, "\(centralOut)\n\(r.stderr)")
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let steps = r.report?["steps"] as? [[String: Any]] ?? []
        let setTime = try #require(steps.first { ($0["vendor"] as? String)?.hasPrefix("set_time ") == true })
        #expect(setTime["matched_by"] as? String == "fields")
        #expect(setTime["status"] as? String == "match")
        #expect(setTime["frame"] as? Int == 126)
        #expect((setTime["reason"] as? String)?.contains("set_time.year 2026 → 2027") == true)
        #expect(setTime["answers"] as? [String] == ["none (command)", "notified 0x001f a505820022"])
        #expect(steps.filter { $0["matched_by"] as? String == "bytes" }.count == 9)
    }

    /// A write the recording never saw: answered with nothing recorded, reported by field.
    @Test func unrecordedWriteIsReportedAndExit1() throws {
        let dir = Self.tempDir("unmatched")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (central, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        var centralStatus: Int32 = -1
        let r = try Self.emulate(Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path, port: peripheral, dir: dir) {
            // The central waits for a reply to every write: without one it fails, which is the point.
            (centralStatus, _) = try Self.script(
                "record_session.py",
                [
                    "tcp-client:127.0.0.1:\(central)", "--sport-day", "21",
                    "--log-level", "WARNING"
                ])
        }
        #expect(centralStatus == 1)
        #expect(r.status == 1, "\(r.stdout)\n\(r.stderr)")
        let steps = r.report?["steps"] as? [[String: Any]] ?? []
        let bad = try #require(steps.first { $0["status"] as? String == "unexpected" })
        let d = (bad["differences"] as? [[String: Any]])?.first
        #expect(d?["message"] as? String == "sport_count" && d?["field"] as? String == "day")
        #expect(d?["expected"] as? String == "20" && d?["got"] as? String == "21")
        #expect(r.stdout.contains("mismatch write 0x001d sport_count.day expected 20, got 21"))
    }

    static let corpus = Rig.root.deletingLastPathComponent().appendingPathComponent("shared/captures/public/pogoplus_bt_log_plus_pair.log").path

    /// A real device from the corpus (a Pokémon GO Plus: discovery, pairing, notifications, a
    /// challenge read six times): a Bumble GATT client discovers the emulation and reads every
    /// readable characteristic, and gets the recorded services, handles and values.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: corpus), "needs ../shared/captures/public"))
    func realDeviceIsReadAsRecorded() throws {
        let dir = Self.tempDir("pogo")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (central, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        var readerStatus: Int32 = -1, readerOut = ""
        let r = try Self.emulate(Self.corpus, port: peripheral, dir: dir) {
            // The recorded address is public: the emulation says which random static one it took.
            let err = String(decoding: FileManager.default.contents(atPath: dir + "/emu.err") ?? Data(), as: UTF8.self)
            let line = err.split(separator: "\n").first { $0.contains("emulate: advertising as ") } ?? ""
            let address = line.split(separator: " ").dropFirst(4).first.map(String.init) ?? "?"
            (readerStatus, readerOut) = try Self.script("gatt_reader.py", ["tcp-client:127.0.0.1:\(central)", "--address", address, "--mtu", "128"])
        }
        #expect(readerStatus == 0, "\(readerOut)\n\(r.stderr)")
        #expect(r.stderr.contains("the recorded address 7c:bb:8a:cb:0c:8d is public"))
        #expect(r.stderr.contains("\"Pokemon GO Plus\": 37 attributes"))
        let found = try #require(readerOut.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let services = found["services"] as? [[String: Any]] ?? []
        #expect(
            services.map { "\($0["uuid"] ?? "") \($0["start"] ?? 0)-\($0["end"] ?? 0)" } == [
                "1800 1-9", "1801 12-15", "180f 16-19", "21c5046267cb63a35c4c82b5b9939aeb 20-31", "bbe877095b894433ab7f8b8eef0d8e37 32-39"
            ])
        let chars = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
        #expect(chars.compactMap { $0["handle"] as? Int } == [0x03, 0x05, 0x07, 0x09, 0x0e, 0x12, 0x16, 0x18, 0x1b, 0x1d, 0x1f, 0x22, 0x24, 0x27])
        #expect(chars.compactMap { $0["properties"] as? Int } == [0x02, 0x02, 0x0a, 0x02, 0x22, 0x12, 0x08, 0x10, 0x08, 0x08, 0x02, 0x08, 0x10, 0x02])
        #expect(chars.flatMap { ($0["descriptors"] as? [[String: Any]] ?? []).compactMap { $0["handle"] as? Int } } == [0x0f, 0x13, 0x19, 0x25])
        func value(_ h: Int) -> String? { chars.first { $0["handle"] as? Int == h }?["value"] as? String }
        // Battery Level and the challenge as recorded (the challenge: its first recorded value,
        // a Read Response and two Read Blob Responses, 127 + 127 + 124 bytes).
        #expect(value(0x12) == "37")
        let recorded = try Self.firstReadValue(Self.corpus, handle: 0x27)
        #expect(recorded.count == 2 * 378 && value(0x27) == recorded)
        // Characteristics the recording never read: Read Not Permitted, each reported.
        #expect(chars.filter { $0["error"] as? Int == 2 }.count == 6)
        let summary = r.report?["summary"] as? [String: Int] ?? [:]
        #expect(summary["unexpected"] == 6 && summary["matched"] == 3)
        #expect(r.status == 1)
    }

    /// The first value read from `handle` in a capture (its Read Response and the Read Blob
    /// Responses after it), from `bluesift dump --format jsonl`.
    static func firstReadValue(_ capture: String, handle: Int) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments = ["dump", capture, "--format", "jsonl"]
        let out = Pipe()
        p.standardOutput = out; p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        var value: String?
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let att = o["att"] as? [String: Any], att["request_handle"] as? Int == handle
            else { continue }
            if att["opcode"] as? Int == 0x0B { // Read Response: a read starts (the second ends the first)
                if value != nil { break }
                value = att["value"] as? String ?? ""
            } else if att["opcode"] as? Int == 0x0D, value != nil { // Read Blob Response
                value! += att["value"] as? String ?? ""
            }
        }
        return value ?? ""
    }

    /// With no --sessions the emulation runs until SIGTERM: then it stops advertising, writes
    /// its report (no session served) and exits 0.
    @Test func sigtermEndsTheEmulationWithItsReport() throws {
        let dir = Self.tempDir("sigterm")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (_, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(peripheral - 1)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments = [
            "emulate", Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path, "--transport", "tcp:127.0.0.1:\(peripheral)",
            "--report", dir + "/r.json"
        ]
        let e = dir + "/err"
        FileManager.default.createFile(atPath: e, contents: nil)
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: e))
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        #expect(Events.text("emulate: advertising as", in: e, process: p), "\(Events.contents(e))")
        p.terminate()
        #expect(Events.exit(p), "still running \(Events.hangGuard) after SIGTERM")
        if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        #expect(p.terminationStatus == 0)
        let json = FileManager.default.contents(atPath: dir + "/r.json").flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        #expect(json?["sessions"] as? Int == 0 && json?["complete"] as? Bool == true)
    }

    /// `bluesift replay` with its own arguments against the rig's central port; exit status and stdout.
    static func replay(_ args: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments =
            [
                "replay", Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path, "--timing", "asap",
                "--window", "300", "--timeout", "3"
            ] + args
        let out = Pipe()
        p.standardOutput = out; p.standardError = out; p.standardInput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// A recording where the band refused a write with Insufficient Encryption and the app then
    /// paired (bluesift replay against `band_peripheral.py --security encryption`): emulated,
    /// the same write is refused the same way until the app pairs with the emulation, and
    /// answered as recorded after.
    @Test func insufficientEncryptionBeforePairingIsReplayed() throws {
        let dir = Self.tempDir("enc")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (central, peripheral) = Rig.ports()
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(peripheral)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        let band = try Rig.start("band_peripheral.py", ["tcp-client:127.0.0.1:\(peripheral)", "--security", "encryption"], log: dir + "/band.log")
        let (recStatus, recOut) = try Self.replay(["--transport", "tcp:127.0.0.1:\(central)", "--record", dir + "/enc.btsnoop"])
        Rig.stop(band)
        #expect(recStatus == 0 && recOut.contains("step 9 answered 0x0f (Insufficient Encryption)"), "\(recOut)")
        var status: Int32 = -1, out = ""
        let r = try Self.emulate(dir + "/enc.btsnoop", port: peripheral, dir: dir) {
            (status, out) = try Self.replay(["--transport", "tcp:127.0.0.1:\(central)"])
        }
        #expect(status == 0, "\(out)\n\(r.stderr)")
        #expect(out.contains("step 9 frame 122 write (request) 0x001d fee7/36f5 device_info: MATCH [answered 0x0f (Insufficient Encryption): paired, sent again]"))
        #expect(out.contains("summary: 16 steps, 16 matched, 0 mismatched, 0 missing, 0 unexpected"))
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("device_info: MATCH (answered before pairing as recorded) [by security]"))
        #expect(r.stderr.contains("paired and encrypted: just_works, LE Secure Connections, key size 16"))
        #expect(r.stdout.contains("summary: 17 requests, 17 answered as recorded, 0 without a recorded answer, 9 notifications sent"))
    }
}
