import Testing
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Every write is checked, standard output included: a failed write is one line and exit 2,
/// temporary files are removed, and nothing partial is reported as success. A reader that
/// went away (`| head -1`) is still a quiet exit 0.
@Suite struct WriteCheckTests {
    static let band = CLI.capture("band_mtu23.btsnoop")
    /// 176 KB of Android log: its JSON Lines (1.9 MB) overflow the small disk mid-record.
    static let oppo = CLI.capture("oppo_BT_HCI_2026_0719_110149.cfa")

    /// Every command that prints what it read, in each of its formats.
    static let printing: [[String]] = [
        ["info", band], ["dump", band], ["dump", "--format", "jsonl", band], ["dump", "--format", "csv", band],
        ["dump", "-v", band], ["stats", band], ["stats", "--format", "json", band], ["stats", "--format", "csv", band],
        ["gatt", band], ["gatt", "--format", "json", band], ["frames", band], ["frames", "--format", "jsonl", band],
        ["script", band], ["diff", band, CLI.capture("band_mtu185.btsnoop")], ["plugins", "list"],
        ["info", "--jobs", "2", band, CLI.capture("band_mtu185.btsnoop")]
    ]

    /// `bluesift ARGS > PATH`, stdout opened as the shell would.
    static func run(_ args: [String], stdout path: String, limitBytes: Int? = nil) throws -> CLI.Result {
        // RLIMIT_FSIZE where no small filesystem can be mounted: the shell sets it and ignores
        // SIGXFSZ, so the write fails with EFBIG as it fails with ENOSPC on a full disk.
        let quoted = ([CLI.binary] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let limit = limitBytes.map { "ulimit -f \(($0 + 1023) / 1024); trap '' XFSZ; " } ?? ""
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-wc-\(UUID().uuidString).err").path
        defer { try? FileManager.default.removeItem(atPath: err) }
        let r = try CLI.process("/bin/bash", ["-c", "\(limit)exec \(quoted) > '\(path)' 2> '\(err)'"])
        let e = FileManager.default.contents(atPath: err) ?? Data()
        return CLI.Result(status: r.status, stdout: "", stderr: String(decoding: e, as: UTF8.self))
    }

    @Test(arguments: printing) func stdoutOnDevFullIsOneLineAndExit2(_ args: [String]) throws {
        let r = try Self.run(args, stdout: "/dev/full")
        #expect(r.status == 2, "\(args): exit \(r.status)")
        #expect(r.stderr == "bluesift: cannot write standard output: No space left on device\n", "\(args): \(r.stderr)")
    }

    /// A closed pipe is not a failure: no message, exit 0 (SIGPIPE ignored, EPIPE ends quietly).
    @Test func closedPipeStaysQuiet() throws {
        let r = try CLI.process(
            "/bin/bash", ["-c", "'\(CLI.binary)' dump --format jsonl '\(Self.oppo)' 2>err | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}; cat err; rm -f err"],
            cwd: FileManager.default.temporaryDirectory.path)
        #expect(r.stdout == "0\n")
    }

    /// A small filesystem: a 200 KB tmpfs where root may mount one, else a folder whose writes
    /// are limited by RLIMIT_FSIZE (`limit` is then given to `run`).
    final class SmallDisk {
        let dir: String
        let mounted: Bool
        let limit: Int?

        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-small-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            mounted = getuid() == 0 && (try? CLI.process("/bin/mount", ["-t", "tmpfs", "-o", "size=200k", "tmpfs", dir]).status) == 0
            limit = mounted ? nil : 200 * 1024
        }

        /// Fills the disk (or, under RLIMIT_FSIZE, lowers the limit) so that no write succeeds.
        func fill() throws -> Int? {
            guard mounted else { return 0 }
            _ = try CLI.process("/bin/dd", ["if=/dev/zero", "of=\(dir)/filler", "bs=4k"])
            return nil
        }

        /// Names in `sub` (temporary files included: `.NAME.tmp-PID`).
        func files(_ sub: String = "") -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/" + sub)) ?? []).filter { $0 != "filler" }.sorted()
        }

        deinit {
            if mounted { _ = try? CLI.process("/bin/umount", [dir]) }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    /// `dump --format jsonl > out.jsonl` on a disk that fills mid-record: exit 2, one line.
    @Test func stdoutFillingTheDiskIsExit2() throws {
        let disk = try SmallDisk()
        let r = try Self.run(["dump", "--format", "jsonl", Self.oppo], stdout: disk.dir + "/out.jsonl", limitBytes: disk.limit)
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("bluesift: cannot write standard output: "))
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }

    /// Commands that write files, each on a full disk: exit 2, one line, no temporary file left,
    /// no output file claimed.
    @Test(arguments: [
        (["dump", "--format", "jsonl", "--output-dir", "@/d", oppo, band], "d"),
        (["stats", "--format", "json", "--output-dir", "@/d", oppo, band], "d"),
        (["frames", "--format", "jsonl", "--output-dir", "@/d", band, CLI.capture("band_mtu185.btsnoop")], "d"),
        (["convert", oppo, "@/c.pcapng"], ""),
        (["report", oppo, "-o", "@/r.html"], ""),
        (["redact", oppo, "@/x.cfa"], ""),
        (["script", band, "-o", "@/s.json"], "")
    ])
    func fileWritesOnAFullDiskAreExit2AndLeaveNothing(_ args: [String], _ sub: String) throws {
        let disk = try SmallDisk()
        let limit = try disk.fill()
        if !sub.isEmpty { try FileManager.default.createDirectory(atPath: disk.dir + "/" + sub, withIntermediateDirectories: true) }
        let before = disk.files(sub)
        let r = try Self.run(args.map { $0.replacingOccurrences(of: "@", with: disk.dir) }, stdout: "/dev/null", limitBytes: limit)
        #expect(r.status == 2, "\(args): exit \(r.status): \(r.stderr)")
        #expect(r.stderr.split(separator: "\n").contains { $0.hasPrefix("bluesift: ") && ($0.contains("No space left") || $0.contains("too large")) }, "\(args): \(r.stderr)")
        #expect(disk.files(sub) == before, "\(args): left \(disk.files(sub))")
    }

    /// A command that reads one capture, given a folder: one line, exit 2, never a trap.
    @Test(arguments: [["report"], ["gatt"], ["convert", "@", "/dev/null", "--to", "pcap"], ["redact", "@", "/dev/null"], ["script"], ["replay"], ["diff", "@", band]])
    func aFolderWhereOneCaptureIsExpected(_ args: [String]) throws {
        let a = args.count == 1 ? args + [CLI.captures.path] : args.map { $0 == "@" ? CLI.captures.path : $0 }
        let r = try CLI.run(a)
        #expect(r.status == 2, "\(a): exit \(r.status)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(a): \(r.stderr)")
        #expect(r.stderr.hasPrefix("bluesift: \(CLI.captures.path) is a folder; this command reads one capture file"), "\(a): \(r.stderr)")
    }
}

/// pcap/pcapng cannot hold times before 1970: a capture from a phone whose clock was never set
/// (btsnoop dated from year 0) is moved whole, first record at the epoch, intervals kept.
@Suite struct EpochShiftTests {
    static func btsnoop(microseconds: [Int64]) -> [UInt8] {
        func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
        func be64(_ v: Int64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: v) >> (56 - 8 * UInt64($0))) } }
        var out = Array("btsnoop\0".utf8) + be32(1) + be32(1002)
        let reset: [UInt8] = [0x01, 0x03, 0x0C, 0x00] // H4 command: HCI_Reset
        for us in microseconds { out += be32(4) + be32(4) + be32(2) + be32(0) + be64(us) + reset }
        return out
    }

    @Test(arguments: ["pcap", "pcapng"]) func aCaptureFromBefore1970KeepsItsIntervals(_ ext: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-epoch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("unset-clock.log").path
        // One hour after 0000-01-01, then 40 minutes and 1.5 s later.
        FileManager.default.createFile(atPath: input, contents: Data(Self.btsnoop(microseconds: [3_600_000_000, 6_000_000_000, 6_001_500_000])))
        let output = dir.appendingPathComponent("out.\(ext)").path
        let r = try CLI.run(["convert", input, output])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("starts before 1970") && r.stderr.contains("intervals are kept"), "\(r.stderr)")
        let ts = try CLI.run(["dump", "--format", "jsonl", output]).stdout.split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["ts"] as? String ?? ""
        }
        #expect(ts == ["1970-01-01T00:00:00.000000Z", "1970-01-01T00:40:00.000000Z", "1970-01-01T00:40:01.500000Z"])
    }

    /// A record dated before the first one (and so still before 1970) is clamped: that loses
    /// time, so exit 1 unless --allow-loss.
    @Test func clampingIsALoss() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-epoch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("backwards.log").path
        FileManager.default.createFile(atPath: input, contents: Data(Self.btsnoop(microseconds: [3_600_000_000, 1_000_000])))
        let r = try CLI.run(["convert", input, dir.appendingPathComponent("o.pcap").path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("1 records dated before 1970"), "\(r.stderr)")
        #expect(try CLI.run(["convert", "--allow-loss", input, dir.appendingPathComponent("p.pcap").path]).status == 0)
    }
}
