import Testing
import Foundation

/// Fleet output: with several captures or a folder every JSON Lines record and stats/frames
/// row names its "file"; `--output-dir` writes one file per capture, atomically.
@Suite struct FleetTests {
    static let enabled = FileManager.default.isExecutableFile(atPath: CLI.binary)
    static let a = CLI.capture("band_mtu23.btsnoop"), b = CLI.capture("band_mtu185.btsnoop")

    static func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func lines(_ s: String) -> [Substring] { s.split(separator: "\n") }

    /// A single file's record with the fleet key added: the same bytes, `,"file":PATH` before the brace.
    static func withFile(_ line: Substring, _ path: String) -> String {
        String(line.dropLast()) + ",\"file\":\"" + path + "\"}"
    }

    @Test(.enabled(if: enabled)) func severalFilesAddFileToEveryRecordAndNothingElse() throws {
        let one = Self.lines(try CLI.run(["dump", Self.a, "--format", "jsonl"]).stdout)
        let two = Self.lines(try CLI.run(["dump", Self.b, "--format", "jsonl"]).stdout)
        #expect(one.count == 151)
        #expect(!one[0].contains("\"file\"")) // one file: unchanged
        let both = Self.lines(try CLI.run(["dump", Self.a, Self.b, "--format", "jsonl", "--jobs", "2"]).stdout)
        #expect(both.count == one.count + two.count)
        #expect(both.map(String.init) == one.map { Self.withFile($0, Self.a) } + two.map { Self.withFile($0, Self.b) })
        // --with-file: the key for one capture too (a Spark task handed one path).
        let forced = Self.lines(try CLI.run(["dump", Self.a, "--format", "jsonl", "--with-file"]).stdout)
        #expect(forced.map(String.init) == one.map { Self.withFile($0, Self.a) })
    }

    @Test(.enabled(if: enabled)) func aFolderOfOneCaptureStillNamesIt() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.copyItem(atPath: Self.a, toPath: dir.appendingPathComponent("x.btsnoop").path)
        let out = Self.lines(try CLI.run(["dump", dir.path, "--format", "jsonl"]).stdout)
        #expect(out.count == 151)
        let path = dir.path + "/x.btsnoop"
        #expect(out.allSatisfy { $0.hasSuffix(",\"file\":\"\(path)\"}") })
        let first = try JSONSerialization.jsonObject(with: Data(out[0].utf8)) as! [String: Any]
        #expect(first["file"] as? String == path && first["frame"] as? Int == 1)
    }

    @Test(.enabled(if: enabled)) func outputDirWritesOneFilePerCaptureAtomically() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("jsonl").path
        let r = try CLI.run(["dump", Self.a, Self.b, "--format", "jsonl", "--output-dir", out])
        #expect(r.status == 0 && r.stdout.isEmpty && r.stderr.isEmpty, "\(r.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(names == ["band_mtu185.btsnoop.jsonl", "band_mtu23.btsnoop.jsonl"]) // no temporary file left
        let one = Self.lines(try CLI.run(["dump", Self.a, "--format", "jsonl"]).stdout)
        let written = try String(contentsOfFile: out + "/band_mtu23.btsnoop.jsonl", encoding: .utf8)
        #expect(Self.lines(written).map(String.init) == one.map { Self.withFile($0, Self.a) })
        // Stats and frames too, one file each.
        #expect(try CLI.run(["stats", Self.a, Self.b, "--format", "json", "--output-dir", out]).status == 0)
        let stats = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/band_mtu185.btsnoop.json"))) as! [String: Any]
        #expect(stats["file"] as? String == Self.b)
        #expect(
            try CLI.run([
                "frames", Self.a, Self.b, "--format", "jsonl", "--plugins", CLI.root.appendingPathComponent("Plugins").path,
                "--output-dir", out
            ]).status == 0)
        let frames = Self.lines(try String(contentsOfFile: out + "/band_mtu23.btsnoop.jsonl", encoding: .utf8))
        #expect(frames.count == 15 && frames.allSatisfy { $0.hasPrefix("{\"file\":\"\(Self.a)\",") })
    }

    @Test(.enabled(if: enabled)) func sameNameInTwoFoldersGetsItsPath() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        for d in ["p1", "p2"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(d), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: d == "p1" ? Self.a : Self.b, toPath: dir.appendingPathComponent("\(d)/btsnoop_hci.log").path)
        }
        let out = dir.appendingPathComponent("o").path
        let r = try CLI.run(["dump", dir.path + "/p1", dir.path + "/p2", "--format", "jsonl", "--output-dir", out])
        #expect(r.status == 0, "\(r.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        let flat = dir.path.split(separator: "/").joined(separator: "_")
        #expect(names == ["\(flat)_p1_btsnoop_hci.log.jsonl", "\(flat)_p2_btsnoop_hci.log.jsonl"])
    }

    @Test(.enabled(if: enabled)) func anOutputThatIsAnInputIsRefusedBeforeAnythingIsWritten() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = dir.appendingPathComponent("c").path, cj = dir.appendingPathComponent("c.jsonl").path
        try FileManager.default.copyItem(atPath: Self.a, toPath: c)
        try FileManager.default.copyItem(atPath: Self.b, toPath: cj) // a capture that happens to be named c.jsonl
        let before = try Data(contentsOf: URL(fileURLWithPath: cj))
        let r = try CLI.run(["dump", c, cj, "--format", "jsonl", "--output-dir", dir.path])
        #expect(r.status == 2)
        #expect(r.stderr == "bluesift: \(cj): is the input; refusing to overwrite it\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cj)) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/c.jsonl.jsonl"))
    }

    @Test(.enabled(if: enabled)) func aCaptureThatFailsLeavesNoFileTheOthersAreWritten() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.btsnoop").path
        try Data("not a capture".utf8).write(to: URL(fileURLWithPath: bad))
        let out = dir.appendingPathComponent("o").path
        let r = try CLI.run(["dump", Self.a, bad, "--format", "jsonl", "--output-dir", out])
        #expect(r.status == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["band_mtu23.btsnoop.jsonl"])
    }

    /// dump's CSV names the file first on every row, as stats and frames do (it had no column).
    @Test(.enabled(if: enabled)) func dumpCSVHasAFileColumnForSeveralCaptures() throws {
        let one = Self.lines(try CLI.run(["dump", Self.a, "--format", "csv"]).stdout)
        let two = Self.lines(try CLI.run(["dump", Self.b, "--format", "csv"]).stdout)
        #expect(one[0].hasPrefix("frame,ts,"))
        #expect(one.count == 152)
        let both = Self.lines(try CLI.run(["dump", Self.a, Self.b, "--format", "csv", "--jobs", "2"]).stdout)
        #expect(both[0] == "file," + one[0])
        let rowsA: [String] = one.dropFirst().map { Self.a + "," + $0 }
        let rowsB: [String] = two.dropFirst().map { Self.b + "," + $0 }
        let rows: [String] = both.dropFirst().map(String.init)
        #expect(rows == rowsA + rowsB)
        let forced = Self.lines(try CLI.run(["dump", Self.a, "--format", "csv", "--with-file"]).stdout)
        #expect(forced[1] == Self.a + "," + one[1])
    }

    @Test(.enabled(if: enabled)) func statsCSVHasOneHeaderAndAFileOnEveryRow() throws {
        let one = Self.lines(try CLI.run(["stats", Self.a, "--format", "csv"]).stdout)
        let both = Self.lines(try CLI.run(["stats", Self.a, Self.b, "--format", "csv"]).stdout)
        #expect(one[0].hasPrefix("file,connection,"))
        #expect(both.filter { $0.hasPrefix("file,") }.count == 1)
        let rows = both.dropFirst()
        #expect(rows.count == one.count - 1 + Self.lines(try CLI.run(["stats", Self.b, "--format", "csv"]).stdout).count - 1)
        #expect(rows.allSatisfy { $0.hasPrefix(Self.a + ",") || $0.hasPrefix(Self.b + ",") })
        let json = Self.lines(try CLI.run(["stats", Self.a, Self.b, "--format", "json"]).stdout)
        let files = try json.map { (try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["file"] as? String }
        #expect(files == [Self.a, Self.b])
    }
}

/// The DuckDB queries of docs/fleet.md, run by Tests/Fleet/fleet_check.py over the JSON Lines
/// of every capture of the corpus and Captures/, checked against `stats` of the same files.
@Suite struct FleetQueryTests {
    static let python = CLI.root.appendingPathComponent(".venv/bin/python").path

    static var duckdbAvailable: Bool {
        guard FileManager.default.isExecutableFile(atPath: python),
            let r = try? CLI.process(python, ["-c", "import duckdb"])
        else { return false }
        return r.status == 0
    }

    @Test(
        .enabled(if: FleetTests.enabled),
        .enabled(if: Self.duckdbAvailable, "DuckDB missing from .venv (make venv installs Tests/VirtualDevice/requirements.txt)"))
    func docsQueriesAgreeWithStats() throws {
        let work = try FleetTests.tempDir()
        defer { try? FileManager.default.removeItem(at: work) }
        var dirs = [CLI.captures.path]
        if FileManager.default.fileExists(atPath: CLI.corpus.path) { dirs.insert(CLI.corpus.path, at: 0) }
        let r = try CLI.process(
            Self.python,
            [
                CLI.root.appendingPathComponent("Tests/Fleet/fleet_check.py").path, CLI.binary,
                CLI.root.appendingPathComponent("docs/fleet.md").path, work.path
            ] + dirs)
        print(r.stdout)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains(" ok, 0 failing"))
    }
}

extension FleetTests {
    /// Runs a program with stdout and stderr in files (no pipe to fill up).
}
