import Testing
import Foundation
import TestEvents

/// End to end, with real parts: the built `bluesift` replays a recorded band session over
/// H4/TCP to Bumble's virtual controllers, where Tests/VirtualDevice/band_peripheral.py answers.
/// Each test starts its own rig on its own ports (Tests/VirtualDevice/start_rig.sh).
enum Rig {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let binary = root.appendingPathComponent(".build/debug/bluesift").path
    static var available: Bool { FileManager.default.isExecutableFile(atPath: root.appendingPathComponent(".venv/bin/python").path) }
    nonisolated(unsafe) static var nextPort = 20000 + Int(getpid() % 400) * 40
    static let lock = NSLock()

    static func ports() -> (Int, Int) {
        lock.lock(); defer { lock.unlock() }
        nextPort += 2
        return (nextPort, nextPort + 1)
    }

    struct Result { var status: Int32; var stdout: String; var stderr: String; var seconds: Double; var report: [String: Any]?; var peakKiB = -1 }

    /// Starts a rig process (controllers.py or band_peripheral.py) and waits for its READY line.
    /// Started directly, not through start_rig.sh: Foundation's Process waits for every holder
    /// of its exit-status pipe, which backgrounded grandchildren would keep open.
    static func start(_ script: String, _ args: [String], log: String, lifetime: Int = 60) throws -> Process {
        let p = Process()
        p.executableURL = root.appendingPathComponent(".venv/bin/python")
        p.currentDirectoryURL = root.appendingPathComponent("Tests/VirtualDevice")
        p.arguments = [script] + args + ["--timeout", "\(lifetime)", "--watch-pid", "\(getpid())"]
        FileManager.default.createFile(atPath: log, contents: nil)
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        p.standardOutput = h; p.standardError = h
        p.standardInput = FileHandle.nullDevice
        try p.run()
        if Events.text("READY", in: log, process: p) { return p }
        p.terminate()
        throw RigError(message: "\(script) not ready: \(String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self))")
    }

    static func stop(_ p: Process) {
        guard p.isRunning else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    /// Starts the rig with band options, runs `bluesift replay` against it, stops the rig.
    /// `during` runs while the replay does, with the controllers process (e.g. to kill it) and
    /// the rig's folder (band.log: a `WRITE n` line per vendor write the band received).
    /// `timed`: under GNU time, for bluesift's peak RSS (`peakKiB`).
    static func replay(
        _ capture: String, band: [String] = [], extra: [String] = [], controllers: [String] = [],
        timed: Bool = false, during: ((Process, String) -> Void)? = nil
    ) throws -> Result {
        let (central, bandPort) = ports()
        let dir = NSTemporaryDirectory() + "bluesift-e2e-\(getpid())-\(bandPort)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ctl = try start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(bandPort)"] + controllers, log: dir + "/controllers.log")
        defer { stop(ctl) }
        let dev = try start("band_peripheral.py", ["tcp-client:127.0.0.1:\(bandPort)"] + band, log: dir + "/band.log")
        defer { stop(dev) }
        let report = dir + "/report.json"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: timed ? "/usr/bin/time" : binary)
        p.arguments =
            (timed ? ["-f", "%M", "-o", dir + "/rss", binary] : []) + [
                "replay", root.appendingPathComponent("Captures/\(capture)").path,
                "--transport", "tcp:127.0.0.1:\(central)", "--timing", "asap", "--window", "300",
                "--timeout", "3", "--report", report
            ] + extra
        let o = dir + "/out.txt", e = dir + "/err.txt"
        FileManager.default.createFile(atPath: o, contents: nil); FileManager.default.createFile(atPath: e, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: o))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: e))
        let t0 = Date()
        try p.run()
        during?(ctl, dir)
        p.waitUntilExit()
        let secs = Date().timeIntervalSince(t0)
        let r = FileManager.default.contents(atPath: report).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let rss = timed ? (try? String(contentsOfFile: dir + "/rss", encoding: .utf8))?.split(separator: "\n").last.flatMap { Int($0) } ?? -1 : -1
        return Result(
            status: p.terminationStatus, stdout: String(decoding: FileManager.default.contents(atPath: o) ?? Data(), as: UTF8.self),
            stderr: String(decoding: FileManager.default.contents(atPath: e) ?? Data(), as: UTF8.self), seconds: secs, report: r,
            peakKiB: rss)
    }

    struct RigError: Error, CustomStringConvertible { var message: String; var description: String { message } }
}

extension Rig.Result {
    var summary: [String: Int] { report?["summary"] as? [String: Int] ?? [:] }
    var steps: [[String: Any]] { report?["steps"] as? [[String: Any]] ?? [] }
}

@Suite(.serialized, .enabled(if: Rig.available, "needs the Bumble venv: make venv"))
struct ReplayAgainstVirtualBand {
    @Test func samePeripheralMatchesEveryStep() throws {
        let r = try Rig.replay("band_mtu23.btsnoop")
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.summary["mismatched"] == 0 && r.summary["missing"] == 0 && r.summary["unexpected"] == 0)
        #expect((r.summary["steps"] ?? 0) >= 8)
        #expect(r.stdout.contains("summary:"))
    }

    /// The regressed firmware also reports version 1.4.3: two steps differ, each named.
    @Test func regressionInOneCommandIsExit1NamingTheStepAndField() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--regression", "03"])
        #expect(r.status == 1, "\(r.stdout)\n\(r.stderr)")
        let bad = r.steps.filter { $0["status"] as? String == "mismatch" }
        #expect(bad.compactMap { $0["frame"] as? Int } == [100, 129])
        let diffs = bad.last?["differences"] as? [[String: Any]] ?? []
        #expect(diffs.first?["message"] as? String == "sport_count_reply")
        #expect(diffs.first?["field"] as? String == "count")
        #expect(diffs.first?["expected"] as? String == "9")
        #expect(r.stdout.contains("sport_count_reply.count expected 9, got 10"))
        #expect(r.stdout.contains("expected 312e342e32, got 312e342e33"))
    }

    @Test func movedServicesAreRemappedAndMatch() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--layout", "moved"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let remapped = r.report?["remapped"] as? [[String: Any]] ?? []
        #expect(remapped.contains { $0["characteristic"] as? String == "36f5" && $0["from"] as? Int != $0["to"] as? Int })
        #expect(r.stdout.contains("remapped"))
    }

    @Test func vanishingPeripheralIsExit3WithAPartialReport() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--vanish-after", "3"])
        #expect(r.status == 3, "\(r.stdout)\n\(r.stderr)")
        #expect((r.report?["fault"] as? [String: Any])?["code"] as? String == "connection_lost")
        #expect(r.report?["complete"] as? Bool == false)
        #expect(r.stderr.split(separator: "\n").last?.contains("connection") == true)
    }

    @Test func peripheralThatStopsAnsweringFramesIsMissingAnswers() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--silent-after", "2"])
        #expect(r.status == 1, "\(r.stdout)\n\(r.stderr)")
        #expect(r.summary["missing"] == 5)
    }

    @Test func hungDeviceTimesOutWithExit3() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--mute-after", "2"])
        #expect(r.status == 3, "\(r.stdout)\n\(r.stderr)")
        #expect((r.report?["fault"] as? [String: Any])?["code"] as? String == "timeout")
        #expect(r.summary["matched"] == 10)
    }

    @Test func controllerRejectingACommandIsExit3() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", controllers: ["--reject", "0x200d"])
        #expect(r.status == 3, "\(r.stdout)\n\(r.stderr)")
        #expect((r.report?["fault"] as? [String: Any])?["code"] as? String == "command_rejected")
        #expect(r.stderr.contains("LE Create Connection") && r.stderr.contains("Command Disallowed"))
    }

    @Test func anotherDeviceAtTheAddressIsRefused() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--layout", "impostor"])
        #expect(r.status == 3, "\(r.stdout)\n\(r.stderr)")
        #expect((r.report?["fault"] as? [String: Any])?["code"] as? String == "wrong_device")
        #expect(r.stderr.contains("does not match the recording"))
    }

    @Test func transportClosingMidReplayIsExit3() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", extra: ["--timing", "fixed:250"]) { controllers, dir in
            // Kill the controllers (the far end of the transport) once the band has received
            // its second vendor write: mid-replay, however loaded the machine is.
            _ = Events.text("WRITE 2\n", in: dir + "/band.log")
            kill(controllers.processIdentifier, SIGKILL)
        }
        #expect(r.status == 3, "\(r.stdout)\n\(r.stderr)")
        #expect(["transport_closed", "connection_lost"].contains((r.report?["fault"] as? [String: Any])?["code"] as? String ?? ""))
        #expect((r.summary["steps"] ?? 0) >= 2)
    }

    @Test func recordedReplayIsACaptureTheToolReads() throws {
        let out = NSTemporaryDirectory() + "bluesift-e2e-\(getpid())-record.btsnoop"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try Rig.replay("band_mtu185.btsnoop", extra: ["--record", out])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments = ["info", out]
        p.standardOutput = FileHandle.nullDevice
        try p.run(); p.waitUntilExit()
        #expect(p.terminationStatus == 0)
    }

    /// A replay recorded against the regressed band, diffed with the original session: the
    /// firmware string and the one vendor field differ; the split frames and MTU do not.
    @Test func diffOfTheRecordingNamesTheRegression() throws {
        let out = NSTemporaryDirectory() + "bluesift-e2e-\(getpid())-regressed.btsnoop"
        defer { try? FileManager.default.removeItem(atPath: out) }
        _ = try Rig.replay("band_mtu23.btsnoop", band: ["--regression", "03"], extra: ["--record", out])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments = ["diff", Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path, out]
        let file = out + ".diff"
        FileManager.default.createFile(atPath: file, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: file) }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        try p.run(); p.waitUntilExit()
        let text = String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self)
        #expect(p.terminationStatus == 1)
        #expect(text.contains("sport_count_reply count=9 checksum ok)  →  sport_count_reply count=10 checksum ok"))
        #expect(text.contains("summary: 20 same, 2 changed, 0 only in A, 0 only in B"))
    }
}
