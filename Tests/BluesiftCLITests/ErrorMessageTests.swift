import Testing
import Foundation

/// Issue 14: errors a user can act on. Every message is one line starting `bluesift: ` once.
@Suite struct ErrorMessageTests {
    static let band = CLI.capture("band_mtu23.btsnoop")

    static func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-err-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    static func expectPrefixedOnce(_ stderr: String) {
        for line in stderr.split(separator: "\n") {
            #expect(line.hasPrefix("bluesift: "), "\(line)")
            #expect(!line.dropFirst(10).contains("bluesift: "), "\(line)")
        }
    }

    @Test func badGATTJSONSaysFileLineColumn() throws {
        let d = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: d) }
        let syntax = d.appendingPathComponent("syntax.json")
        try "{\"devices\": [\n  {\"address\": \"c0:ba:0d:00:00:01\",\n   \"services\": [}\n]}\n".write(to: syntax, atomically: true, encoding: .utf8)
        let r = try CLI.run(["dump", "--gatt", syntax.path, Self.band])
        #expect(r.status == 2)
        #expect(r.stderr == "bluesift: \(syntax.path):3:17: expected a value (object, array, string, number, true, false or null)\n")
        let semantic = d.appendingPathComponent("semantic.json")
        try "{\"devices\": [{\"services\": [\n  {\"uuid\": \"180f\", \"start\": 1, \"end\": 4},\n  {\"uuid\": \"battery\", \"start\": 5, \"end\": 9}\n]}]}\n"
            .write(to: semantic, atomically: true, encoding: .utf8)
        let s = try CLI.run(["dump", "--gatt", semantic.path, Self.band])
        #expect(s.status == 2)
        #expect(s.stderr == "bluesift: \(semantic.path):3:12: devices[0].services[1].uuid: expected a UUID string such as \"180f\"\n")
    }

    @Test func badScriptJSONSaysFileLineColumn() throws {
        let d = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: d) }
        let good = try CLI.run(["script", Self.band])
        #expect(good.status == 0)
        // A step's value turned into a number: the decoder's complaint, placed in the file.
        var lines = good.stdout.components(separatedBy: "\n")
        let i = try #require(lines.firstIndex { $0.contains("\"value\" : \"") })
        lines[i] = lines[i].replacingOccurrences(of: #"("value" : )"[0-9a-f]*""#, with: "$142", options: .regularExpression)
        let f = d.appendingPathComponent("s.json")
        try lines.joined(separator: "\n").write(to: f, atomically: true, encoding: .utf8)
        let r = try CLI.run(["replay", "--dry-run", f.path])
        #expect(r.status == 2)
        let col = lines[i].range(of: "42")!.lowerBound.utf16Offset(in: lines[i]) + 1
        #expect(r.stderr.hasPrefix("bluesift: \(f.path):\(i + 1):\(col): steps["))
        #expect(r.stderr.hasSuffix(".value: expected a string\n"))
        #expect(!r.stderr.contains("DecodingError") && !r.stderr.contains("CodingKeys"))
        Self.expectPrefixedOnce(r.stderr)
    }

    @Test func pluginsOption() throws {
        let d = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: d) }
        let missing = try CLI.run(["dump", "--plugins", d.path + "/nope", Self.band])
        #expect(missing.status == 2)
        #expect(missing.stderr == "bluesift: --plugins \(d.path)/nope: no such file or folder\n")
        let empty = try CLI.run(["dump", "--plugins", d.path, Self.band])
        #expect(empty.status == 2)
        #expect(empty.stderr == "bluesift: --plugins \(d.path): no plugin (*.yaml, *.yml) in this folder\n")
        // One plugin file, loaded as it is (with BLUESIFT_PLUGINS pointing nowhere useful).
        let one = try CLI.run(["plugins", "list", "--plugins", CLI.root.appendingPathComponent("Plugins/band.yaml").path])
        #expect(one.status == 0)
        #expect(one.stdout.hasPrefix("band  Smart band"))
    }

    @Test func framesWithoutVendorMessagesSaysSoAndExits0() throws {
        let crackle = CLI.capture("crackle_pairing_and_ltk_exchange.pcap")
        let r = try CLI.run(["frames", crackle])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "bluesift: \(crackle): no vendor messages\n")
        // No plugin installed at all: a copy of the binary far from any Plugins folder.
        let d = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: d) }
        let bin = d.appendingPathComponent("bluesift")
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: bin.path)
        let bare = try CLI.process(bin.path, ["frames", Self.band], env: ProcessInfo.processInfo.environment.filter { $0.key != "BLUESIFT_PLUGINS" })
        let text = bare.stderr
        #expect(bare.status == 0)
        #expect(text.hasPrefix("bluesift: no vendor plugins found (looked in: "))
        #expect(text.contains("share/bluesift/Plugins)"))
        #expect(text.contains("point --plugins DIR or $BLUESIFT_PLUGINS at a folder of *.yaml plugins"))
        #expect(text.hasSuffix("bluesift: \(Self.band): no vendor messages (no plugins loaded)\n"))
    }

    @Test func folderModeReportsSkippedFilesAndEmptyFolders() throws {
        let d = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: d) }
        try FileManager.default.copyItem(atPath: Self.band, toPath: d.appendingPathComponent("a.btsnoop").path)
        try "hello\n".write(to: d.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["info", d.path])
        #expect(r.status == 0)
        #expect(r.stdout.contains("records:     151"))
        #expect(r.stderr == "bluesift: skipped \(d.path)/notes.txt: not a capture: no btsnoop, pcap, pcapng or PacketLogger signature (starts with 68 65 6c 6c 6f 0a)\n")
        let e = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: e) }
        let none = try CLI.run(["info", e.path])
        #expect(none.status == 2)
        #expect(none.stderr == "bluesift: no captures in \(e.path)\n")
    }

    @Test func replayUsageErrors() throws {
        let dev = try CLI.run(["replay", "--dry-run", "--device", "c0:ba:0d", Self.band])
        #expect(dev.status == 64)
        #expect(dev.stderr == "bluesift: --device: expected an address such as c0:ba:0d:00:00:01 (got \"c0:ba:0d\")\n")
        let t = try CLI.run(["replay", "--transport", "tpc:127.0.0.1:9420", Self.band])
        #expect(t.status == 64)
        #expect(t.stderr.hasPrefix("bluesift: --transport: bad transport 'tpc:127.0.0.1:9420': unknown scheme 'tpc': expected tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD][,rtscts], hci:N or l2cap:N"))
        // Nothing listens on 9421: the address once, and what to check.
        let refused = try CLI.run(["replay", "--transport", "tcp:127.0.0.1:9421", "--timeout", "1", Self.band])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("tcp:127.0.0.1:9421: connection refused: nothing is listening there"))
        #expect(refused.stderr.components(separatedBy: "9421").count == 2)
        Self.expectPrefixedOnce(refused.stderr)
    }

    /// An adapter that is not there is the user's to name, as a missing capability is: one
    /// line listing what is there, exit 2 (not 3, a device failure), no report.
    @Test func aMissingAdapterIsExit2InOneLine() throws {
        let hci = try CLI.run(["replay", "--transport", "hci:9", "--timeout", "1", Self.band])
        #expect(hci.status == 2)
        // With Bluetooth in the kernel the line lists the adapters; without (these build machines) it says so.
        let probe = Glibc.socket(31, Int32(SOCK_RAW.rawValue), 1)
        let kernelHasBluetooth = probe >= 0 || errno != EAFNOSUPPORT
        if probe >= 0 { Glibc.close(probe) }
        if kernelHasBluetooth {
            #expect(hci.stderr.hasPrefix("bluesift: replay: hci:9: no Bluetooth adapter hci9: "), "\(hci.stderr)")
        } else {
            #expect(hci.stderr == "bluesift: replay: hci:9: this kernel has no Bluetooth sockets (AF_BLUETOOTH unavailable); use a tcp:, unix: or serial: transport instead\n")
        }
        #expect(hci.stderr.split(separator: "\n").count == 1)
        let serial = try CLI.run(["replay", "--transport", "serial:/dev/ttyNOPE9", "--timeout", "1", Self.band])
        #expect(serial.status == 2)
        #expect(serial.stderr == "bluesift: replay: serial:/dev/ttyNOPE9@115200: cannot open /dev/ttyNOPE9: No such file or directory (errno 2)\n")
    }

    /// `plugins check` and `plugins test` name the file and line after the prefix, like every message.
    @Test func pluginCheckLinesArePrefixed() throws {
        let d = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: d) }
        let bad = d.appendingPathComponent("bad.yaml")
        try "id: x\n".write(to: bad, atomically: true, encoding: .utf8)
        let band = CLI.root.appendingPathComponent("Plugins/band.yaml").path
        let check = try CLI.run(["plugins", "check", bad.path, band])
        #expect(check.status == 2)
        #expect(check.stdout == "\(band): ok (band: 14 messages, 16 examples)\n")
        #expect(check.stderr == "bluesift: \(bad.path):1: missing 'match'\n")
        let test = try CLI.run(["plugins", "test", bad.path])
        #expect(test.status == 1)
        #expect(test.stderr == "bluesift: \(bad.path):1: missing 'match'\n")
    }

    /// The argument parser's own messages and every bad option value: one line, the prefix
    /// once, where to read the usage; exit 64 (a missing --keys file: 2, unusable input).
    @Test func usageErrorsAreOneLine() throws {
        let cases: [([String], Int32, String)] = [
            (
                ["dump", "--format", "xml", Self.band], 64,
                "bluesift: the value 'xml' is invalid for '--format <format>'. Please provide one of 'text', 'jsonl' or 'csv'. (see 'bluesift dump --help')\n"
            ),
            (["dump", "--bogus", Self.band], 64, "bluesift: unknown option '--bogus'. Did you mean '--jobs'? (see 'bluesift dump --help')\n"),
            (["plugins", "check"], 64, "bluesift: missing expected argument '<files> ...' (see 'bluesift plugins check --help')\n"),
            (["dump", "--follow", Self.band, Self.band], 64, "bluesift: --follow reads one file (see 'bluesift dump --help')\n"),
            (["dump", "--ltk", "zz", Self.band], 64, "bluesift: --ltk: expected 32 hex digits, most significant first (got \"zz\")\n"),
            (["dump", "--keys", "/nonexistent/bonds.json", Self.band], 2, "bluesift: --keys /nonexistent/bonds.json: no such file\n"),
            (["replay", "--timing", "fast", "--dry-run", Self.band], 64, "bluesift: --timing: expected recorded, asap or fixed:MS (got \"fast\")\n"),
            (["replay", "--ignore", "foo", "--dry-run", Self.band], 64, "bluesift: --ignore: expected handle=H, bytes=H:A-B or field=NAME (got \"foo\")\n"),
            (["plugins", "decode", "--plugin", "band", "--direction", "up", "a5"], 64, "bluesift: --direction: expected write, notify, indicate or read (got \"up\")\n")
        ]
        for (args, status, message) in cases {
            let r = try CLI.run(args)
            #expect(r.status == status, "\(args)")
            #expect(r.stderr == message, "\(args)")
            #expect(r.stdout.isEmpty, "\(args)")
        }
        // Help and --version still go to stdout, exit 0.
        let help = try CLI.run(["dump", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: bluesift dump") && help.stderr.isEmpty)
    }

    @Test func unknownCodesShowTheCode() throws {
        let hfp = CLI.corpus.appendingPathComponent("btstack_hfp_test3.pklg").path
        let e = try CLI.run(["dump", "--no-color", "--frames", "32", hfp])
        #expect(e.stdout == "    32 12:49:51.162580 > Unknown event 0x60\n")
        let isap = CLI.corpus.appendingPathComponent("isap_hci_dump.pklg").path
        let c = try CLI.run(["dump", "--no-color", "--frames", "1", isap])
        #expect(c.stdout == "     1 12:52:06.465269 < Unknown command 0xf422\n")
        // A vendor command's completion names which one (it said only "Vendor").
        let v = try CLI.run(["dump", "--no-color", "--frames", "97-98", CLI.capture("pongbot_btsnoop_hci.log")])
        #expect(v.stdout.hasSuffix("    98 21:44:29.172531 > Command Complete: Vendor ocf=0x0017 status=Unknown HCI Command\n"))
        // A vendor-specific event (0xFF) shows the vendor's own code and its size (it said "Vendor").
        let bafang = CLI.corpus.appendingPathComponent("bafang_bluetoothd-hci-latest.pklg").path
        let ve = try CLI.run(["dump", "--no-color", "--frames", "9", bafang])
        #expect(ve.stdout == "     9 09:52:04.962000 > Vendor event code=0x0e len=67\n")
    }

    @Test func decodeErrorPrintedOnce() throws {
        let f = CLI.corpus.appendingPathComponent("sweyntooth_capture_microchip_ATSAMB11_invalid_fragment.pcap").path
        let r = try CLI.run(["dump", "--no-color", "--frames", "352", f])
        #expect(r.stdout == "   352 05:29:14.711998   ADV_IND 72:f4:2c:36:a3:4d rssi=0 [AD structure length 10 runs past the data (4 left)] [ll: payload: length 23, 17 bytes there]\n")
    }
}
