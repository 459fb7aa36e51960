import Testing
import Foundation

/// Runs the built `bluesift` binary the way a user does.
struct CLI {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let binary = root.appendingPathComponent(".build/debug/bluesift").path
    static let captures = root.appendingPathComponent("Captures")
    static let corpus = root.deletingLastPathComponent().appendingPathComponent("shared/captures/public")

    struct Result { var status: Int32; var stdout: String; var stderr: String }

    /// `wrapper`: a command that runs bluesift (e.g. /usr/bin/time -f %M -o FILE).
    static func run(_ args: [String], wrapper: [String] = []) throws -> Result {
        try process(wrapper.first ?? binary, wrapper.isEmpty ? args : Array(wrapper.dropFirst()) + [binary] + args)
    }

    /// Any program (tshark, make, python, an installed bluesift), in `cwd` with `env` if given.
    static func process(_ exe: String, _ args: [String], cwd: String? = nil, env: [String: String]? = nil) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        if let env { p.environment = env }
        // Files, not pipes: a large output can never block the child.
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-cli-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: tmp.path + ".out", contents: nil)
        FileManager.default.createFile(atPath: tmp.path + ".err", contents: nil)
        defer { try? FileManager.default.removeItem(atPath: tmp.path + ".out"); try? FileManager.default.removeItem(atPath: tmp.path + ".err") }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: tmp.path + ".out"))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: tmp.path + ".err"))
        try p.run()
        p.waitUntilExit()
        let o = FileManager.default.contents(atPath: tmp.path + ".out") ?? Data()
        let e = FileManager.default.contents(atPath: tmp.path + ".err") ?? Data()
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    static func capture(_ name: String) -> String { captures.appendingPathComponent(name).path }
}

@Suite struct CLIExitCodeTests {
    @Test func missingFileExits2WithOneLine() throws {
        let r = try CLI.run(["info", "/nonexistent/file.log"])
        #expect(r.status == 2)
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(r.stderr.contains("/nonexistent/file.log"))
    }

    @Test func folderWithoutCapturesExits2() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["dump", dir.path])
        #expect(r.status == 2)
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(r.stderr.contains(dir.path))
    }

    /// A folder is a fleet of captures: each file's output whole, in name order, whatever --jobs.
    @Test func folderDumpsEveryCaptureInOrder() throws {
        let one = try CLI.run(["info", "--jobs", "1", CLI.captures.path])
        let two = try CLI.run(["info", "--jobs", "2", CLI.captures.path])
        #expect(one.status == 0 && two.status == 0)
        #expect(one.stdout == two.stdout)
        let files = one.stdout.split(separator: "\n").filter { $0.hasPrefix("file:") }.map { $0.split(separator: "/").last.map(String.init) ?? "" }
        #expect(
            files == [
                "band_moved_mtu517.btsnoop", "band_mtu185.btsnoop", "band_mtu23.btsnoop", "btsnooprs_btsnoop_btmon.log",
                "classic_a2dp_hfp.btsnoop", "crackle_le_secure_connections.pcapng", "crackle_pairing_and_ltk_exchange.pcap", "hciparse_test00.pklg",
                "oppo_BT_HCI_2026_0719_110149.cfa", "oppo_empty_BT_HCI_2026_0719_110549.cfa", "pongbot_btsnoop_hci.log",
                "revcar_btsnoop_hci.log", "whad_btmesh_provisionning.pcap"
            ])
    }

    @Test func nonCaptureExits2() throws {
        let r = try CLI.run(["dump", "--format", "jsonl", CLI.root.appendingPathComponent("Package.swift").path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("not a capture"))
        #expect(r.stdout.isEmpty)
    }

    @Test func emptyCaptureIsFine() throws {
        let r = try CLI.run(["info", CLI.capture("oppo_empty_BT_HCI_2026_0719_110549.cfa")])
        #expect(r.status == 0)
        #expect(r.stdout.contains("records:     0"))
    }
}
