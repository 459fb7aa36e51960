import Testing
import Foundation
import TestEvents
#if canImport(Glibc)
    import Glibc
#endif

/// Issue 13: nothing lost, nothing written where it should not be. Each test runs the built
/// binary; each failed on the code before the issue.
@Suite struct OutputSafetyTests {
    static let repo = CLI.root
    static func capture(_ name: String) -> String { repo.appendingPathComponent("Captures/\(name)").path }

    /// A private copy of a repository capture, and its bytes.
    static func copy(_ name: String, as new: String? = nil) throws -> (path: String, bytes: Data) {
        let dir = Temp.dir.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let dst = dir.appendingPathComponent(new ?? name).path
        try FileManager.default.copyItem(atPath: capture(name), toPath: dst)
        return (dst, try Data(contentsOf: URL(fileURLWithPath: dst)))
    }

    static func oneLine(_ r: CLI.Result) -> Bool { r.stderr.split(separator: "\n").count == 1 && r.stderr.hasPrefix("bluesift: ") }

    // MARK: an output that is an input

    /// `convert x.pklg x.pklg --to pcap` replaced the PacketLogger file with a pcap lacking
    /// 187 of its records. Every spelling of the same file is refused: exit 2, one line, the
    /// input byte for byte as it was.
    @Test func convertRefusesToOverwriteItsInput() throws {
        let (path, before) = try Self.copy("hciparse_test00.pklg", as: "x.pklg")
        let dir = (path as NSString).deletingLastPathComponent
        let link = dir + "/link.pcap", hard = dir + "/hard.pcap"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(Glibc.link(path, hard) == 0)
        for out in [path, dir + "/./x.pklg", dir + "/../" + (dir as NSString).lastPathComponent + "/x.pklg", link, hard] {
            let r = try CLI.run(["convert", path, out, "--to", "pcap"])
            #expect(r.status == 2, "\(out)")
            #expect(Self.oneLine(r) && r.stderr.contains("refusing to overwrite"), "\(out): \(r.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(out)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(names == ["hard.pcap", "link.pcap", "x.pklg"])
    }

    @Test func scriptAndReplayRefuseToOverwriteTheirInput() throws {
        let (path, before) = try Self.copy("band_mtu23.btsnoop")
        let s = try CLI.run(["script", path, "-o", path])
        #expect(s.status == 2 && Self.oneLine(s))
        for opt in ["--report", "--record"] {
            let r = try CLI.run(["replay", path, "--dry-run", opt, path])
            #expect(r.status == 2 && Self.oneLine(r), "\(opt): \(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    // MARK: lossy conversion

    /// PacketLogger notes cannot go into pcap: written, counted, exit 1; --allow-loss → 0.
    @Test func lossyConvertExits1UnlessAllowed() throws {
        let dir = Temp.dir.appendingPathComponent(UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = try CLI.run(["convert", Self.capture("hciparse_test00.pklg"), dir + "/a.pcap"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("bluesift: wrote ") && r.stderr.contains("records this format cannot hold were dropped"))
        #expect(FileManager.default.fileExists(atPath: dir + "/a.pcap"))
        let ok = try CLI.run(["convert", "--allow-loss", Self.capture("hciparse_test00.pklg"), dir + "/b.pcap"])
        #expect(ok.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/a.pcap")) == Data(contentsOf: URL(fileURLWithPath: dir + "/b.pcap")))
        // Lossless: exit 0, no drop mentioned.
        let same = try CLI.run(["convert", Self.capture("band_mtu23.btsnoop"), dir + "/c.pcapng"])
        #expect(same.status == 0 && !same.stderr.contains("dropped"))
    }

    /// A sniffer capture into btsnoop keeps nothing: exit 2, and no file appears.
    @Test func conversionKeepingNothingWritesNothing() throws {
        let dir = Temp.dir.appendingPathComponent(UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = try CLI.run(["convert", Self.capture("crackle_le_secure_connections.pcapng"), dir + "/x.btsnoop"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("nothing written"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    // MARK: link types kept

    static func info(_ path: String) throws -> (records: Int, format: String) {
        let r = try CLI.run(["info", path])
        let line = { (p: String) in r.stdout.split(separator: "\n").first { $0.hasPrefix(p) }.map(String.init) ?? "" }
        let n = Int(line("records:").split(separator: " ").dropFirst().first ?? "") ?? -1
        return (n, line("format:"))
    }

    /// pcapng → pcapng of a sniffer capture wrote 0 records; btmon (2001) → pcapng too.
    @Test(arguments: [
        ("crackle_le_secure_connections.pcapng", "link type 256"),
        ("btsnooprs_btsnoop_btmon.log", "link type 254"),
        ("crackle_pairing_and_ltk_exchange.pcap", "")
    ])
    func convertKeepsTheLinkType(_ name: String, _ type: String) throws {
        let out = Temp.dir.appendingPathComponent(UUID().uuidString + ".pcapng").path
        let r = try CLI.run(["convert", Self.capture(name), out])
        #expect(r.status == 0, "\(r.stderr)")
        let a = try Self.info(Self.capture(name)), b = try Self.info(out)
        #expect(a.records > 0 && b.records == a.records, "\(name): \(a.records) → \(b.records)")
        if !type.isEmpty { #expect(b.format.contains(type), "\(b.format)") }
        // The decoded frames are the same (frame, kind, summary; timestamps kept to the µs).
        let da = try CLI.run(["dump", Self.capture(name)]), db = try CLI.run(["dump", out])
        #expect(da.stdout == db.stdout)
    }

    /// H4 indicators this tool does not name (0x06, 0x0E) wrote 0 records into btsnoop 1002,
    /// which holds any indicator: now kept, byte for byte.
    @Test func unusualH4IndicatorsSurviveIntoBtsnoop() throws {
        let src = Temp.file(
            Bytes.pcapHeader(linktype: 187) + Bytes.pcapRecord([0x06, 0xAA, 0xBB]) + Bytes.pcapRecord([0x0E, 0x01])
                + Bytes.pcapRecord(Bytes.reset))
        let out = Temp.dir.appendingPathComponent(UUID().uuidString + ".btsnoop").path
        let r = try CLI.run(["convert", src, out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("wrote 3 records"))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        // Records after the 16-byte header: 24-byte record header, then H4 indicator + packet.
        #expect(Array(bytes[40..<43]) == [0x06, 0xAA, 0xBB])
        #expect(Array(bytes[67..<69]) == [0x0E, 0x01])
    }

    /// A btsnoop record dated before 1970 (real Android logs have them) wrapped to the year
    /// 6524 in pcap/pcapng: now written as 1970-01-01 with a warning.
    /// A capture that starts before 1970 is moved whole for pcap/pcapng (EpochShiftTests: its
    /// intervals are kept), said on stderr.
    @Test func pre1970CaptureIsMovedToTheEpoch() throws {
        // 1969-12-31T23:59:59Z in btsnoop's year-0 µs epoch.
        let ts: UInt64 = 0x00dc_ddb3_0f2f_8000 - 1_000_000
        let rec = Bytes.be32(4) + Bytes.be32(4) + Bytes.be32(2) + Bytes.be32(0) + Bytes.be64(ts) + Bytes.reset
        let src = Temp.file(Bytes.btsnoopHeader() + rec)
        for to in ["pcap", "pcapng"] {
            let out = Temp.dir.appendingPathComponent(UUID().uuidString + "." + to).path
            let r = try CLI.run(["convert", src, out])
            #expect(r.status == 0)
            #expect(r.stderr.contains("starts before 1970 (1969-12-31T23:59:59.000000Z)") && r.stderr.contains("moved 1 s later"), "\(r.stderr)")
            let d = try CLI.run(["dump", "--format", "jsonl", out])
            #expect(d.stdout.contains("\"ts\":\"1970-01-01T00:00:00.000000Z\""), "\(to): \(d.stdout)")
        }
    }

    // MARK: unsupported link types

    @Test func ethernetPcapngIsRefused() throws {
        let ng = Bytes.Pcapng()
        let eth = [UInt8](repeating: 0xAB, count: 60)
        let file = Temp.file(ng.shb() + ng.idb(1) + ng.epb(0, eth) + ng.epb(0, eth))
        let r = try CLI.run(["info", file])
        #expect(r.status == 2)
        #expect(Self.oneLine(r) && r.stderr.contains("unsupported link type") && r.stderr.contains("LINKTYPE 1, Ethernet"), "\(r.stderr)")
        let pcap = Temp.file(Bytes.pcapHeader(linktype: 1) + Bytes.pcapRecord(eth))
        let p = try CLI.run(["dump", pcap])
        #expect(p.status == 2 && p.stderr.contains("LINKTYPE 1, Ethernet"))
        // Mixed: read, and the foreign records counted in a warning.
        let mixed = Temp.file(ng.shb() + ng.idb(1) + ng.idb(201) + ng.epb(0, eth) + ng.epb(1, Bytes.phdr(Bytes.reset)) + ng.epb(0, eth))
        let m = try CLI.run(["info", mixed])
        #expect(m.status == 0)
        #expect(m.stdout.contains("2 records on interfaces of a link type this tool does not decode (LINKTYPE 1, Ethernet)"), "\(m.stdout)")
    }

    // MARK: writing where it cannot

    @Test func fullDeviceAndUnwritableDirectoryExit2WithOneLine() throws {
        let full = try CLI.run(["convert", Self.capture("band_mtu23.btsnoop"), "/dev/full", "--to", "pcap"])
        #expect(full.status == 2 && Self.oneLine(full) && full.stderr.contains("No space left on device"), "\(full.stderr)")
        #expect(FileManager.default.fileExists(atPath: "/dev/full"))
        // /proc is read-only even for root.
        let ro = try CLI.run(["convert", Self.capture("band_mtu23.btsnoop"), "/proc/bluesift-test.pcap"])
        #expect(ro.status == 2 && Self.oneLine(ro), "\(ro.stderr)")
        let s = try CLI.run(["script", Self.capture("band_mtu23.btsnoop"), "-o", "/proc/bluesift-test.json"])
        #expect(s.status == 2 && Self.oneLine(s), "\(s.stderr)")
        let sf = try CLI.run(["script", Self.capture("band_mtu23.btsnoop"), "-o", "/dev/full"])
        #expect(sf.status == 2 && Self.oneLine(sf), "\(sf.stderr)")
    }

    /// SIGINT/SIGTERM mid-write: the process dies of the signal, its temporary file is gone and
    /// the destination keeps its old content.
    @Test(arguments: [SIGTERM, SIGINT])
    func signalMidWriteLeavesNoTemporaryFile(_ sig: Int32) throws {
        let dir = Temp.dir.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // ~600,000 records: long enough to be caught mid-write by a debug build.
        var big = Bytes.btsnoopHeader()
        let rec = Bytes.btsnoopRecord(Bytes.resetComplete, received: true)
        big.reserveCapacity(16 + rec.count * 600_000)
        for _ in 0..<600_000 { big += rec }
        let src = dir.appendingPathComponent("big.btsnoop").path
        FileManager.default.createFile(atPath: src, contents: Data(big))
        let out = dir.appendingPathComponent("out.pcapng").path
        FileManager.default.createFile(atPath: out, contents: Data("old".utf8))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = ["convert", src, out]
        p.standardError = FileHandle.nullDevice
        let created = FileWatch(dir.path) // before it starts: its temporary file's creation is seen
        try p.run()
        let temp = dir.appendingPathComponent(".out.pcapng.tmp-\(p.processIdentifier)").path
        // Woken as it creates the file (or, on a fast machine, ends): not caught is no failure.
        _ = created.wait(process: p) { FileManager.default.fileExists(atPath: temp) }
        let caught = p.isRunning
        kill(p.processIdentifier, sig)
        p.waitUntilExit()
        if caught {
            #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == sig)
            #expect(try String(contentsOfFile: out, encoding: .utf8) == "old")
        }
        #expect(!FileManager.default.fileExists(atPath: temp))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["big.btsnoop", "out.pcapng"])
    }

    /// `bluesift dump … | head -1`: exit 0 and nothing on stderr, for text, JSON and script.
    @Test(arguments: [
        ["dump", "band_mtu23.btsnoop"], ["dump", "--format", "jsonl", "band_mtu23.btsnoop"],
        ["script", "band_mtu23.btsnoop"], ["gatt", "band_mtu23.btsnoop"]
    ])
    func closedStdoutPipeIsAQuietExit(_ args: [String]) throws {
        let argv = args.map { $0.hasSuffix(".btsnoop") ? Self.capture($0) : $0 }.map { "'\($0)'" }.joined(separator: " ")
        let err = Temp.dir.appendingPathComponent(UUID().uuidString + ".err").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        // head exits after one line; the pipe closes under bluesift.
        p.arguments = ["-c", "'\(CLI.binary)' \(argv) 2>'\(err)' | head -1 >/dev/null; exit ${PIPESTATUS[0]}"]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(args)")
        #expect(((try? String(contentsOfFile: err, encoding: .utf8)) ?? "x").isEmpty, "\(args)")
    }

    // MARK: terminal safety

    /// A device name holding a terminal title sequence, a screen clear, a carriage return and
    /// a right-to-left override: text output shows them escaped, JSON keeps the value intact.
    @Test func controlCharactersFromTheAirAreEscapedInText() throws {
        let name: [UInt8] =
            Array("evil".utf8) + [0x1B] + Array("]0;pwned".utf8) + [0x07, 0x1B] + Array("[2J".utf8)
            + [0x0D] + Array("ok".utf8) + [0xE2, 0x80, 0xAE] + Array("gnp".utf8) + [0xC2, 0x9B]
        let ad: [UInt8] = [UInt8(name.count + 1), 0x09] + name
        // HCI LE Advertising Report (Core 5.4 Vol 4 Part E §7.7.65.2): one report.
        let report: [UInt8] = [0x02, 0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0xC0, UInt8(ad.count)] + ad + [0xC4]
        let event: [UInt8] = [0x04, 0x3E, UInt8(report.count)] + report
        let file = Temp.file(Bytes.btsnoopHeader() + Bytes.btsnoopRecord(event, received: true))
        for args in [["dump"], ["dump", "-v"], ["info"]] {
            let r = try CLI.run(args + [file])
            #expect(r.status == 0)
            let raw = Array(r.stdout.utf8)
            #expect(!raw.contains(0x1B) && !raw.contains(0x07) && !raw.contains(0x0D), "\(args)")
            #expect(!r.stdout.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x9B }, "\(args)")
            if args != ["info"] {
                #expect(r.stdout.contains("evil\\u001b]0;pwned\\u0007\\u001b[2J\\rok\\u202egnp\\u009b"), "\(args): \(r.stdout)")
            }
        }
        let j = try CLI.run(["dump", "--format", "jsonl", file])
        let obj = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        let adv = obj?["adv"] as? [String: Any]
        let text = String(describing: adv ?? [:])
        #expect(adv != nil)
        #expect(j.stdout.contains("\\u001b]0;pwned\\u0007"), "\(j.stdout)")
        _ = text
    }
}
