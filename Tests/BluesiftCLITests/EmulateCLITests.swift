import Testing
import Foundation

/// `bluesift emulate` on bad input: one line, the documented exit code, before any transport
/// is opened where the input alone says so.
@Suite struct EmulateCLITests {
    static let band = CLI.capture("band_mtu23.btsnoop")

    @Test func usageErrorsAreOneLineExit64() throws {
        let cases: [([String], String)] = [
            (
                ["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--timing", "fast"],
                "bluesift: --timing: expected recorded or asap (got \"fast\")\n"
            ),
            (
                ["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--pair", "maybe"],
                "bluesift: --pair: expected auto, always or never (got \"maybe\")\n"
            ),
            (
                ["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--passkey", "1234567"],
                "bluesift: --passkey: expected six digits such as 314159 (got \"1234567\")\n"
            ),
            (
                ["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--sessions", "0"],
                "bluesift: --sessions: expected a number of connections, 1 or more (got \"0\")\n"
            ),
            (
                ["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--device", "c0:ba:0d"],
                "bluesift: --device: expected an address such as c0:ba:0d:00:00:01 (got \"c0:ba:0d\")\n"
            )
        ]
        for (args, message) in cases {
            let r = try CLI.run(args)
            #expect(r.status == 64, "\(args)")
            #expect(r.stderr == message, "\(args)")
            #expect(r.stdout.isEmpty, "\(args)")
        }
        let t = try CLI.run(["emulate", Self.band, "--transport", "tpc:127.0.0.1:9"])
        #expect(t.status == 64 && t.stderr.hasPrefix("bluesift: --transport: ") && t.stderr.split(separator: "\n").count == 1, "\(t.stderr)")
    }

    @Test func nothingToEmulateIsExit2() throws {
        let nobody = try CLI.run(["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--device", "11:22:33:44:55:66"])
        #expect(nobody.status == 2)
        #expect(nobody.stderr == "bluesift: emulate: no ATT traffic with 11:22:33:44:55:66 in band_mtu23.btsnoop\n")
        let named = try CLI.run(["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--name", "bluesift-watch"])
        #expect(named.status == 2)
        #expect(named.stderr == "bluesift: emulate: no device advertised the name \"bluesift-watch\" in band_mtu23.btsnoop\n")
        let classic = try CLI.run(["emulate", CLI.capture("classic_a2dp_hfp.btsnoop"), "--transport", "tcp:127.0.0.1:1"])
        #expect(classic.status == 2)
        #expect(classic.stderr == "bluesift: emulate: no device answered ATT requests in classic_a2dp_hfp.btsnoop: nothing to emulate\n")
        let folder = try CLI.run(["emulate", CLI.captures.path, "--transport", "tcp:127.0.0.1:1"])
        #expect(folder.status == 2 && folder.stderr.hasPrefix("bluesift: \(CLI.captures.path) is a folder"))
    }

    /// Nobody listening on the port: exit 3, one line naming the transport, the report written.
    @Test func transportThatCannotBeOpenedIsExit3WithAReport() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-emulate-cli-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = dir.appendingPathComponent("r.json").path
        let r = try CLI.run(["emulate", Self.band, "--transport", "tcp:127.0.0.1:1", "--report", report])
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").last?.hasPrefix("bluesift: emulate: tcp:127.0.0.1:1") == true, "\(r.stderr)")
        let json = try #require(FileManager.default.contents(atPath: report).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(json["mode"] as? String == "emulate" && json["complete"] as? Bool == false)
        #expect((json["fault"] as? [String: Any])?["code"] as? String == "transport_closed")
        #expect(r.stdout.contains("summary: 0 requests"))
    }
}
