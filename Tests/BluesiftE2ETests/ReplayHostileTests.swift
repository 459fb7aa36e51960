import Testing
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Issue 13: replay against a hostile transport or device. Exit 3 with a partial report, or 1
/// with the differences; never a hang, never unbounded memory. Ports 9400-9419 (this issue's).
enum HostileRig {
    nonisolated(unsafe) static var next = 9400
    static let lock = NSLock()
    static func port() -> Int { lock.lock(); defer { lock.unlock() }; next += 1; return 9400 + (next - 9400) % 20 }

    struct Result { var status: Int32; var stdout: String; var stderr: String; var seconds: Double; var peakKiB: Int; var report: [String: Any]? }

    /// `bluesift replay` under GNU time (peak RSS), with a report.
    static func replay(_ args: [String], dir: String) throws -> Result {
        let report = dir + "/report.json"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        p.arguments = ["-f", "%M", "-o", dir + "/rss", Rig.binary, "replay"] + args + ["--report", report]
        let o = dir + "/out.txt", e = dir + "/err.txt"
        FileManager.default.createFile(atPath: o, contents: nil); FileManager.default.createFile(atPath: e, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: o))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: e))
        let t0 = Date()
        try p.run()
        p.waitUntilExit()
        let rss = (try? String(contentsOfFile: dir + "/rss", encoding: .utf8))?.split(separator: "\n").last.flatMap { Int($0) } ?? -1
        let r = FileManager.default.contents(atPath: report).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        return Result(status: p.terminationStatus, stdout: (try? String(contentsOfFile: o, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: e, encoding: .utf8)) ?? "", seconds: Date().timeIntervalSince(t0),
                      peakKiB: rss, report: r)
    }

    static func tempDir() -> String {
        let d = "/tmp/bluesift-hostile-\(getpid())-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }
}

@Suite(.serialized, .enabled(if: Rig.available, "needs the Bumble venv: make venv"))
struct ReplayAgainstHostileParts {
    /// Garbage H4 bytes, an endless well-formed stream, ACL bodies that never complete, and a
    /// controller that never answers: exit 3 in bounded time and memory, with a report.
    @Test(arguments: ["garbage", "endless", "hugeacl", "silent"])
    func hostileTransport(_ mode: String) throws {
        let dir = HostileRig.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let port = HostileRig.port()
        let server = try Rig.start("hostile_transport.py", ["\(port)", mode, "--seconds", "20"], log: dir + "/server.log")
        defer { Rig.stop(server) }
        let r = try HostileRig.replay([Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path,
                                       "--transport", "tcp:127.0.0.1:\(port)", "--timeout", "2"], dir: dir)
        #expect(r.status == 3, "\(mode): \(r.stderr)")
        #expect(r.seconds < 15, "\(mode): \(r.seconds) s")
        #expect(r.peakKiB > 0 && r.peakKiB < 150_000, "\(mode): \(r.peakKiB) KiB")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.hasPrefix("bluesift: replay: "), "\(mode): \(r.stderr)")
        #expect(r.report?["complete"] as? Bool == false)
        #expect((r.report?["fault"] as? [String: Any])?["code"] != nil)
    }

    /// Malformed ATT PDUs and wrong response opcodes around each answer: a verdict (exit 1 with
    /// differences, or 3 with a partial report), never a hang.
    @Test(arguments: ["malformed-att", "wrong-opcode"])
    func hostileDevice(_ mode: String) throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--hostile", mode])
        #expect(r.status == 1 || r.status == 3, "\(mode): \(r.stdout)\n\(r.stderr)")
        #expect(r.seconds < 40)
        #expect(r.report != nil)
        if r.status == 3 { #expect(r.report?["complete"] as? Bool == false) }
    }

    /// A server offering an ATT MTU of 65,535: the MTU in force is the client's, replay matches.
    @Test func mtu65535() throws {
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--mtu", "65535"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.summary["mismatched"] == 0)
    }

    /// A notification flood once subscribed: memory stays bounded and the report counts them.
    @Test func notificationFlood() throws {
        // Without plugins each notification is a byte-exact difference of its own.
        let r = try Rig.replay("band_mtu23.btsnoop", band: ["--hostile", "flood", "--flood-seconds", "4"], extra: ["--no-plugins"])
        #expect(r.status == 1 || r.status == 3, "\(r.stdout)\n\(r.stderr)")
        #expect(r.seconds < 40)
        let n = r.report?["notifications"] as? [String: Int] ?? [:]
        #expect((n["received"] ?? 0) > 1_000, "\(n)")
        let listed = r.steps.map { ($0["differences"] as? [Any])?.count ?? 0 }.max() ?? 0
        #expect(listed <= 100)
        #expect(r.steps.contains { ($0["unlisted"] as? Int ?? 0) > 0 })
    }
}

/// The issue's own scenario: the smart lock's capture forced onto the band. Its writes go to a
/// characteristic the band does not have, so none is sent (they went to the band's handle
/// 0x0010 before): three steps skipped, exit 1. --raw-handles sends them, and says so.
let yeelockCapture = Rig.root.deletingLastPathComponent().appendingPathComponent("shared/captures/public/yeelock_btsnoop_hci.log").path

@Suite(.serialized, .enabled(if: Rig.available && FileManager.default.fileExists(atPath: yeelockCapture),
                             "needs the Bumble venv and ../shared/captures/public"))
struct ForcedReplayOntoAnotherDevice {
    @Test func lockCaptureForcedOntoTheBandSendsNothing() throws {
        let r = try Rig.replay("../../shared/captures/public/yeelock_btsnoop_hci.log",
                               extra: ["--device", "c0:ba:0d:00:00:01", "--force"])
        #expect(r.status == 1, "\(r.stdout)\n\(r.stderr)")
        #expect(r.summary["skipped"] == 3 && r.summary["steps"] == 0)
        #expect(r.steps.allSatisfy { $0["status"] as? String == "skipped" && $0["live_handle"] == nil })
        #expect(r.stdout.contains("step 1 frame 638 write (request) 0x0010 58af3dca-6fc0-4fa3-9464-74662f043a39/58af3dca-6fc0-4fa3-9464-74662f043a3b: skipped: characteristic 58af3dca-6fc0-4fa3-9464-74662f043a3b (instance 0) in service 58af3dca-6fc0-4fa3-9464-74662f043a39 not on the device"))
        #expect(r.stdout.contains("3 skipped (not on the device)"))
        #expect(r.report?["raw_handles"] as? Bool == false)

        let raw = try Rig.replay("../../shared/captures/public/yeelock_btsnoop_hci.log",
                                 extra: ["--device", "c0:ba:0d:00:00:01", "--force", "--raw-handles"])
        #expect(raw.report?["raw_handles"] as? Bool == true)
        #expect(raw.summary["skipped"] == 0 && raw.steps.first?["live_handle"] as? Int == 0x0010)
        #expect(raw.stdout.contains("(raw handles)"))
    }
}
