import Testing
import Foundation

/// Issue 14: the filter options (one group, same meaning on every command that reads captures),
/// on the virtual band's capture (Captures/band_mtu23.btsnoop: 151 records, one connection
/// 0x0001 to c0:ba:0d:00:00:01 advertising as "bluesift-band", frames 39-151).
@Suite struct FilterTests {
    static let band = CLI.capture("band_mtu23.btsnoop")

    /// Frame numbers of `dump --format jsonl` with `args`.
    static func frames(_ args: [String], file: String = band) throws -> [Int] {
        let r = try CLI.run(["dump", "--format", "jsonl"] + args + [file])
        #expect(r.status == 0, "\(args): \(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["frame"] as? Int
        }
    }

    @Test func characteristicByNameOrUUID() throws {
        // Battery Level: the Read By Type Response listing its declaration, the discovery
        // error on its handle, the Find Information Responses listing its CCCD, the Read
        // Request and its response, the write to its Client Characteristic Configuration
        // descriptor and its response (responses carry no handle: they go with their request).
        let battery = [66, 69, 90, 106, 108, 111, 112, 114]
        #expect(try Self.frames(["--characteristic", "Battery Level"]) == battery)
        #expect(try Self.frames(["--characteristic", "battery-level"]) == battery)
        #expect(try Self.frames(["--characteristic", "2a19"]) == battery)
        #expect(try Self.frames(["--characteristic", "2a19", "--service", "Battery Service"]) == battery)
        #expect(try Self.frames(["--characteristic", "2a19", "--service", "180a"]) == [])
        #expect(try Self.frames(["--service", "Device Information", "--att-opcode", "read"]) == [94, 97, 100, 103])
        // Naming is needed for the match: --no-naming does not defeat it.
        #expect(try Self.frames(["--characteristic", "2a19", "--no-naming"]) == battery)
        #expect(try Self.frames(["--handle", "0x0011"]) == [112, 114])
    }

    @Test func peerByAddressOrAdvertisedName() throws {
        let expected = [33, 34, 37] + Array(39...149) + [151]
        #expect(try Self.frames(["--peer", "c0:ba:0d:00:00:01"]) == expected)
        #expect(try Self.frames(["--peer", "bluesift-band"]) == expected)
        #expect(try Self.frames(["--peer", "BLUESIFT-BAND"]) == expected)
        let r = try CLI.run(["dump", "--peer", "no-such-device", Self.band])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("no device advertised the name \"no-such-device\""))
    }

    @Test func sinceAndUntil() throws {
        // First record 01:04:08.599575; +0.7 s = 01:04:09.299575.
        #expect(try Self.frames(["--since", "+0.7s"]) == [149, 150, 151])
        #expect(try Self.frames(["--since", "+700ms"]) == [149, 150, 151])
        #expect(try Self.frames(["--until", "2026-11-23T01:04:08.6012Z"]) == [1, 2, 3])
        #expect(try Self.frames(["--until", "2026-11-23T03:04:08.6012+02:00"]) == [1, 2, 3])
        #expect(try Self.frames(["--since", "2026-11-23T01:04:09.285Z", "--until", "+0.6863s"]) == [146])
    }

    @Test func errorsOnly() throws {
        // The six ATT Error Responses (51…84) end discovery steps: not errors (issue 27).
        #expect(try Self.frames(["--errors"]) == [])
        // airbily: ten Attribute Not Found end discoveries; the one real failure is #243
        // (Write Request to handle 0x0000: Invalid Handle).
        let airbily = CLI.corpus.appendingPathComponent("airbily_bluethoot_logs.pcapng").path
        if FileManager.default.fileExists(atPath: airbily) {
            #expect(try Self.frames(["--errors", "--protocol", "att"], file: airbily) == [243])
        }
        // A disconnection for Connection Timeout (0x08) is an error; Local Host's is not.
        let blefun = CLI.corpus.appendingPathComponent("blefun_btsnoop_hci.log").path
        let errs = try Self.frames(["--errors", "--protocol", "hci"], file: blefun)
        #expect(errs.contains(514) && errs.contains(618))
    }

    @Test func attOpcodeNames() throws {
        let writes = [112, 118, 122, 126, 129, 133, 137, 138, 142, 146]
        #expect(try Self.frames(["--att-opcode", "write"]) == writes)
        #expect(try Self.frames(["--att-opcode", "write-request"]) == [112, 118, 122, 129, 142])
        #expect(try Self.frames(["--att-opcode", "0x52"]) == [126, 133, 137, 138, 146])
    }

    @Test func noMatchIsSaidOnStderr() throws {
        let r = try CLI.run(["dump", "--frames", "99999", Self.band])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "bluesift: \(Self.band): no records match --frames 99999\n")
    }

    @Test(arguments: [
        (["--frames", "abc"], "bluesift: --frames: expected N, N-M, N- or -M, or a comma-separated list of them such as 347,431-435 (got \"abc\")\n"),
        (["--frames", "9-3"], "bluesift: --frames: expected N, N-M, N- or -M, or a comma-separated list of them such as 347,431-435 (got \"9-3\")\n"),
        (["--connection", "zz"], "bluesift: --connection: expected a connection handle such as 0x0040 or 64 (got \"zz\")\n"),
        (["--handle", "0x1ffff"], "bluesift: --handle: expected an attribute handle such as 0x002a or 42 (got \"0x1ffff\")\n"),
        (
            ["--since", "yesterday"],
            "bluesift: --since: expected an RFC 3339 time (2026-07-19T11:01:49.5Z, UTC without a zone), a time of day as dump prints it (11:01:49.5) or an offset from the first record (+12.5s, +250ms, +5min, +1h) (got \"yesterday\")\n"
        ),
        (["--peer", "c0:ba:0d:00:01"], "bluesift: --peer: expected an address such as c0:ba:0d:00:00:01 or an advertised name (got \"c0:ba:0d:00:01\")\n")
    ])
    func badValuesNameTheExpectedForm(_ args: [String], _ message: String) throws {
        let r = try CLI.run(["dump"] + args + [Self.band])
        #expect(r.status == 64)
        #expect(r.stderr == message)
        #expect(r.stdout.isEmpty)
    }

    @Test func badOpcodeListsTheNames() throws {
        let r = try CLI.run(["dump", "--att-opcode", "wrte", Self.band])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("bluesift: --att-opcode: expected an opcode such as 0x12, or a name: write, read,"))
    }

    /// `frames` takes the whole group (it had neither --connection nor --frames).
    @Test func framesCommandFilters() throws {
        let r = try CLI.run(["frames", "--format", "csv", "--frames", "120-126", "--connection", "0x0001", Self.band])
        #expect(r.status == 0)
        let rows = r.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",")[1] }
        #expect(rows == ["121", "122", "125", "126"])
        let none = try CLI.run(["frames", "--connection", "0x0002", Self.band])
        #expect(none.status == 0 && none.stdout.isEmpty)
        #expect(none.stderr.contains("no records match --connection 0x0002"))
    }

    /// Every command that reads captures says on stderr when its filter matched nothing:
    /// exit 0 with empty results (stats, report), exit 2 where nothing can be written (script).
    @Test func noMatchOnEveryCommand() throws {
        let stats = try CLI.run(["stats", "--frames", "99999", Self.band])
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("records:     0"))
        #expect(stats.stderr == "bluesift: \(Self.band): no records match --frames 99999\n")
        let html = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-nomatch-\(UUID().uuidString).html").path
        defer { try? FileManager.default.removeItem(atPath: html) }
        let report = try CLI.run(["report", "--peer", "11:22:33:44:55:66", Self.band, "-o", html])
        #expect(report.status == 0)
        #expect(report.stderr.hasPrefix("bluesift: \(Self.band): no records match --peer 11:22:33:44:55:66\nbluesift: report written to \(html) ("))
        let script = try CLI.run(["script", "--frames", "99999", Self.band])
        #expect(script.status == 2)
        #expect(script.stdout.isEmpty)
        #expect(script.stderr == "bluesift: \(Self.band): no ATT writes match --frames 99999\n")
        let diff = try CLI.run(["diff", "--connection", "0x0002", Self.band, CLI.capture("band_mtu185.btsnoop")])
        #expect(diff.status == 2)
        #expect(
            diff.stderr == "bluesift: \(Self.band): no records match --connection 0x0002\n"
                + "bluesift: \(CLI.capture("band_mtu185.btsnoop")): no records match --connection 0x0002\n"
                + "bluesift: nothing to compare: neither \(Self.band) nor \(CLI.capture("band_mtu185.btsnoop")) holds an ATT read, write, notification or indication that the filters pass\n")
    }

    /// `info` summarises the records the filter passes and lists only their connections.
    @Test func infoFilters() throws {
        let r = try CLI.run(["info", "--peer", "bluesift-band", Self.band])
        #expect(r.status == 0)
        #expect(r.stdout.contains("filter:      --peer bluesift-band\nrecords:     115 of 151\n"))
        let pongbot = CLI.capture("pongbot_btsnoop_hci.log")
        let p = try CLI.run(["info", "--peer", "74:b8:39:df:ce:4a", pongbot])
        #expect(p.stdout.contains("records:     82 of 1741\n"))
        #expect(p.stdout.contains("connections: 1\n  0x0042  LE  peer 74:b8:39:df:ce:4a (public)  central"))
        #expect(!p.stdout.contains("0x0041"))
        let none = try CLI.run(["info", "--since", "+1h", Self.band])
        #expect(none.status == 0)
        #expect(none.stdout.contains("records:     0 of 151\n"))
        #expect(none.stderr == "bluesift: \(Self.band): no records match --since +1h\n")
        // Without a filter the output keeps its form (no "filter:" line, no "of").
        let plain = try CLI.run(["info", Self.band])
        #expect(plain.stdout.contains("records:     151\n") && !plain.stdout.contains("filter:"))
    }

    /// `convert` keeps the records the filter passes: a session cut out for Wireshark.
    @Test func convertFilters() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-convert-filter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("battery.pcapng").path
        let r = try CLI.run(["convert", "--characteristic", "Battery Level", Self.band, out])
        #expect(r.status == 0)
        #expect(r.stderr == "bluesift: wrote 8 records to \(out) (143 left out by the filters)\n")
        // The same records, renumbered 1-8, with the same bytes as frames 66, 69, 90, 106, 108, 111, 112, 114.
        let kept = try Self.frames([], file: out)
        #expect(kept == [1, 2, 3, 4, 5, 6, 7, 8])
        let original = try CLI.run(["dump", "--format", "csv", "--frames", "66-114", "--characteristic", "2a19", "--no-naming", Self.band])
        let copy = try CLI.run(["dump", "--format", "csv", "--no-naming", out])
        func values(_ s: String) -> [String] { s.split(separator: "\n").dropFirst().map { String($0.split(separator: ",", omittingEmptySubsequences: false)[11]) } }
        #expect(values(copy.stdout) == values(original.stdout))
        #expect(values(copy.stdout).contains("57"))
        // Nothing passes: exit 2, no file.
        let empty = dir.appendingPathComponent("none.pcap").path
        let n = try CLI.run(["convert", "--peer", "11:22:33:44:55:66", Self.band, empty])
        #expect(n.status == 2)
        #expect(n.stderr == "bluesift: \(Self.band): no records match --peer 11:22:33:44:55:66\nbluesift: nothing written\n")
        #expect(!FileManager.default.fileExists(atPath: empty))
    }

    /// `gatt` learns from the whole capture; the filters choose the devices and attributes shown.
    @Test func gattFilters() throws {
        let pongbot = CLI.capture("pongbot_btsnoop_hci.log")
        func devices(_ args: [String]) throws -> [String] {
            try CLI.run(["gatt"] + args + [pongbot]).stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }.map(String.init)
        }
        #expect(try devices([]) == ["5c:b2:60:06:49:73", "74:b8:39:df:ce:4a", "this host (hci0)"])
        #expect(try devices(["--connection", "0x0042"]) == ["74:b8:39:df:ce:4a"])
        #expect(try devices(["--peer", "5c:b2:60:06:49:73"]) == ["5c:b2:60:06:49:73"])
        // The phone-side database: the peer on 0x0043 read this host's attributes.
        #expect(try devices(["--connection", "0x0043"]) == ["this host (hci0)"])
        let battery = try CLI.run(["gatt", "--characteristic", "Battery Level", Self.band])
        #expect(
            battery.stdout == """
                c0:ba:0d:00:00:01
                  service 180f "Battery Service"  [0x000e–0x0011]
                    characteristic 2a19 "Battery Level"  value 0x0010  (read, notify)
                      descriptor 2902 "Client Characteristic Configuration"  0x0011

                """)
        let none = try CLI.run(["gatt", "--characteristic", "2a37", Self.band])
        #expect(none.status == 0 && none.stdout.isEmpty)
        #expect(none.stderr == "bluesift: \(Self.band): no records match --characteristic 2a37\n")
    }

    /// `script` picks the steps by the filter; `diff` compares only what passes it.
    @Test func scriptAndDiffFilter() throws {
        let s = try CLI.run(["script", "--characteristic", "Battery Level", Self.band])
        #expect(s.status == 0)
        let script = try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any]
        let steps = script?["steps"] as? [[String: Any]] ?? []
        // The read of Battery Level, with the value recorded (0x57 = 87%), and the CCCD write.
        #expect(steps.map { $0["frame"] as? Int ?? -1 } == [106, 112])
        #expect((steps.first?["expect"] as? [String: Any])?["value"] as? String == "57")
        let d = try CLI.run(["diff", "--characteristic", "Battery Level", Self.band, CLI.capture("band_mtu185.btsnoop")])
        #expect(d.status == 0)
        #expect(d.stdout == "summary: 2 same, 0 changed, 0 only in A, 0 only in B\n")
        let all = try CLI.run(["diff", Self.band, CLI.capture("band_mtu185.btsnoop")])
        #expect(all.stdout == "summary: 22 same, 0 changed, 0 only in A, 0 only in B\n")
    }
}
