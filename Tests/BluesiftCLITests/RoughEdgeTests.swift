import Testing
import Foundation

/// Issue 27's rough edges (docs/summary-defects.md, "Rough edges"): help texts, option forms,
/// what a folder prints, CSV columns, table widths, Empty PDUs.
@Suite struct RoughEdgeTests {
    /// The paragraph of `--help` output that documents `option`.
    static func optionHelp(_ help: String, _ option: String) -> String {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let i = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(option + " ") }) else { return "" }
        var out = [lines[i]]
        for l in lines[(i + 1)...] { if l.hasPrefix("                  ") { out.append(l) } else { break } }
        return out.joined(separator: "\n")
    }

    /// The top-level help names every exit code the commands use (3: tap, capture, replay,
    /// emulate), says which folders are refused, and lists the Classic protocols; every line
    /// fits 80 columns.
    @Test func topLevelHelp() throws {
        let r = try CLI.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("and Classic SDP, RFCOMM/HFP, AVDTP/A2DP and AVCTP/AVRCP."), "\(r.stdout)")
        #expect(r.stdout.contains("  3   a live side failed: transport, controller or device (tap, capture,\n      replay, emulate)\n"))
        #expect(r.stdout.contains("a folder without captures or given where one capture is read\n      (dump, info, stats and frames read folders)"))
        #expect(!r.stdout.contains("a directory,"))
        #expect(r.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    /// `frames` reads folders as the others do; `--jobs` says its default once, not also the
    /// machine's count.
    @Test func optionHelpTexts() throws {
        #expect(try CLI.run(["frames", "--help"]).stdout.contains("Capture files, or folders of them."))
        for command in ["info", "dump", "stats", "frames"] {
            let jobs = Self.optionHelp(try CLI.run([command, "--help"]).stdout, "--jobs <jobs>")
            #expect(jobs.contains("(default: the number of") && jobs.components(separatedBy: "(default:").count == 2, "\(command): \(jobs)")
        }
        #expect(try CLI.run(["info", "--jobs", "1", CLI.capture("band_mtu23.btsnoop")]).status == 0)
        // One declaration of --jobs (JobsOption) checks it for every command.
        for command in ["info", "dump", "stats", "frames"] {
            let zero = try CLI.run([command, "--jobs", "0", CLI.capture("band_mtu23.btsnoop")])
            #expect(zero.status == 64 && zero.stderr == "bluesift: --jobs must be at least 1 (see 'bluesift \(command) --help')\n", "\(command): \(zero.stderr)")
        }
    }

    /// `help` of a command that does not exist is a usage error in one line (it printed the
    /// top-level help and exited 0).
    @Test func helpOfAnUnknownCommand() throws {
        let r = try CLI.run(["help", "nosuch"])
        #expect(r.status == 64 && r.stdout.isEmpty)
        #expect(r.stderr == "bluesift: help: no command 'nosuch' (commands: info, dump, stats, report, audio, frames, gatt, plugins, script, replay, fuzz, emulate, diff, convert, tap, capture, redact)\n")
        let sub = try CLI.run(["help", "plugins", "nosuch"])
        #expect(sub.status == 64 && sub.stderr == "bluesift: help: no command 'nosuch' (commands: list, check, test, decode, encode, bench, export)\n")
        let ok = try CLI.run(["help", "plugins", "test"])
        #expect(ok.status == 0 && ok.stdout.hasPrefix("OVERVIEW: Run every plugin's examples"))
    }

    /// `plugins test DIR` reads the folder as `plugins check DIR` does; one plugin is "1 plugin".
    @Test func pluginsTestTakesFolders() throws {
        let dir = CLI.root.appendingPathComponent("Plugins").path
        let all = try CLI.run(["plugins", "test", dir])
        #expect(all.status == 0 && all.stderr.isEmpty, "\(all.stderr)")
        let count = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".yaml") }.count
        let lines = all.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("band: 16/16 examples pass") && lines.contains("lego-lwp3: 10/10 examples pass"), "\(all.stdout)")
        #expect(lines.count == count + 1 && lines.last?.hasSuffix("examples pass in \(count) plugins") == true, "\(all.stdout)")
        // Every example of every shipped plugin passes: "N/N".
        #expect(
            lines.last.map { l in
                let n = l.split(separator: " ")[0].split(separator: "/"); return n[0] == n[1]
            } == true)
        let one = try CLI.run(["plugins", "test", dir + "/band.yaml"])
        #expect(one.stdout.hasSuffix("16/16 examples pass in 1 plugin\n"))
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("plugins-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let none = try CLI.run(["plugins", "test", empty.path])
        #expect(none.status == 1 && none.stderr == "bluesift: \(empty.path): no plugin files (*.yaml, *.yml) in this folder\n")
    }

    /// `--frames` takes a list as tshark users type it: ranges and single frames, in any order,
    /// overlapping or not; a bad part names the forms.
    @Test func frameLists() throws {
        let path = CLI.capture("band_mtu23.btsnoop")
        func frames(_ spec: String) throws -> [Int] {
            try CLI.run(["dump", "--frames", spec, path]).stdout.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") }
        }
        #expect(try frames("118,129-131") == [118, 129, 130, 131])
        #expect(try frames("131,129-130,118,130") == [118, 129, 130, 131])
        #expect(try frames("5-7,6-9") == [5, 6, 7, 8, 9])
        #expect(try frames("150-,3") == [3, 150, 151])
        let bad = try CLI.run(["dump", "--frames", "118,,120", path])
        #expect(bad.status == 64 && bad.stderr.hasPrefix("bluesift: --frames: expected N, N-M, N- or -M, or a comma-separated list"))
        #expect(try CLI.run(["stats", "--format", "json", "--frames", "118,129-131", path]).stdout.contains("\"records\":4"))
    }

    /// A folder's other files are one stderr line, and so are the captures `frames` found no
    /// vendor message in; -v lists each (as before).
    @Test func folderNotesAreOneLine() throws {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: d) }
        for c in ["band_mtu23.btsnoop", "crackle_pairing_and_ltk_exchange.pcap", "classic_a2dp_hfp.btsnoop"] {
            try FileManager.default.copyItem(atPath: CLI.capture(c), toPath: d.appendingPathComponent(c).path)
        }
        try "a\n".write(to: d.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
        try "b\n".write(to: d.appendingPathComponent("b.txt"), atomically: true, encoding: .utf8)
        let summary = "bluesift: \(d.path): skipped 2 files that are not captures and 1 folder (-v lists them)\n"
        for command in ["info", "stats", "dump"] {
            let r = try CLI.run([command, d.path])
            #expect(r.status == 0 && r.stderr == summary, "\(command): \(r.stderr)")
        }
        let listed = try CLI.run(["info", "-v", d.path]).stderr.split(separator: "\n")
        #expect(
            listed == [
                "bluesift: skipped \(d.path)/a.txt: not a capture: no btsnoop, pcap, pcapng or PacketLogger signature (starts with 61 0a)",
                "bluesift: skipped \(d.path)/b.txt: not a capture: no btsnoop, pcap, pcapng or PacketLogger signature (starts with 62 0a)",
                "bluesift: skipped \(d.path)/sub: a folder (folders are not searched recursively)"
            ])
        let frames = try CLI.run(["frames", d.path])
        #expect(frames.status == 0 && frames.stderr == summary + "bluesift: no vendor messages in 2 of 3 captures (-v lists them)\n", "\(frames.stderr)")
        let each = try CLI.run(["frames", "-v", d.path]).stderr
        #expect(each.hasSuffix("bluesift: \(d.path)/classic_a2dp_hfp.btsnoop: no vendor messages\nbluesift: \(d.path)/crackle_pairing_and_ltk_exchange.pcap: no vendor messages\n"), "\(each)")
    }

    /// `--since`/`--until` take the time of day dump prints (UTC, on the capture's date) and
    /// RFC 3339 times without a zone (UTC, as dump prints them).
    @Test func timesAsDumpPrintsThem() throws {
        let band = CLI.capture("band_mtu23.btsnoop")
        func frames(_ args: [String], _ path: String) throws -> [Int] {
            let r = try CLI.run(["dump"] + args + [path])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") }
        }
        #expect(try frames(["--since", "01:04:09.285"], band) == [146, 147, 148, 149, 150, 151])
        #expect(try frames(["--since", "01:04:09.285Z", "--until", "01:04:09.2866"], band) == [146, 147])
        #expect(try frames(["--since", "2026-11-23T01:04:09.285", "--until", "2026-11-23 01:04:09.2866"], band) == [146, 147])
        #expect(try frames(["--until", "01:04:08.6012"], band) == [1, 2, 3])
        #expect(try frames(["--since", "01:04:10"], band) == [])
        // A capture past midnight: a time of day earlier than its first record's is the next day.
        let f = FileManager.default.temporaryDirectory.appendingPathComponent("midnight-\(UUID().uuidString).btsnoop")
        defer { try? FileManager.default.removeItem(at: f) }
        var d = Data("btsnoop\0".utf8) + Data([0, 0, 0, 1, 0, 0, 0x03, 0xEA])
        let day: Int64 = 1_790_035_200 - 1_790_035_200 % 86_400 + 86_400 // a UTC midnight
        for us in [day * 1_000_000 - 1_000_000, day * 1_000_000 - 100_000, day * 1_000_000 + 500_000] {
            let ts = UInt64(us + 0x00DC_DDB3_0F2F_8000)
            var rec = [UInt8]()
            for v in [UInt32(4), 4, 0, 0] { rec += withUnsafeBytes(of: v.bigEndian, Array.init) }
            rec += withUnsafeBytes(of: ts.bigEndian, Array.init)
            d += Data(rec + [0x01, 0x03, 0x0C, 0x00]) // HCI Reset
        }
        try d.write(to: f)
        #expect(try CLI.run(["dump", f.path]).stdout.contains("     3 00:00:00.500000 < Reset"))
        #expect(try frames(["--since", "00:00"], f.path) == [3])
        #expect(try frames(["--since", "23:59:59.5"], f.path) == [2, 3])
        #expect(try frames(["--until", "00:00:00"], f.path) == [1, 2])
        let bad = try CLI.run(["dump", "--since", "25:00", band])
        #expect(bad.status == 64 && bad.stderr.contains("a time of day as dump prints it (11:01:49.5)"))
    }

    /// Runs of LL Empty PDUs are one line in text (half of a sniffed dump was Empty PDUs);
    /// JSON Lines and CSV keep them; --empty shows each.
    @Test func emptyPDUsFold() throws {
        let path = try SummaryTruthTests.fixture("sniffed_supervision_timeout.pcap")
        let text = try CLI.run(["dump", "--frames", "1-13", path]).stdout
        #expect(
            text == """
                     1 14:13:20.000000   ADV_IND 11:22:33:44:55:66 rssi=-50
                     2 14:13:20.001000   LL CONNECT_IND a0:b1:c2:d3:e4:f5 → 11:22:33:44:55:66 interval=30 ms timeout=1000 ms
                       … 10 Empty PDUs #3…#12
                    13 14:13:20.153000   ADV_IND 11:22:33:44:55:66 rssi=-50

                """, "\(text)")
        // One alone is itself.
        #expect(try CLI.run(["dump", "--frames", "3", path]).stdout == "     3 14:13:20.003000 C→P [0x0001] LL Empty PDU\n")
        let all = try CLI.run(["dump", "--empty", "--frames", "1-13", path]).stdout.split(separator: "\n")
        #expect(all.count == 13 && all.filter { $0.hasSuffix("LL Empty PDU") }.count == 10)
        #expect(try CLI.run(["dump", "--format", "jsonl", path]).stdout.components(separatedBy: "\"name\":\"Empty PDU\"").count == 11)
        #expect(try CLI.run(["dump", "--format", "csv", path]).stdout.components(separatedBy: ",Empty PDU,").count == 11)
    }
}
