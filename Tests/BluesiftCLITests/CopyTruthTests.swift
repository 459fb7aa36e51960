import Testing
import Foundation

/// Issue 36, items 9-15: what users copy (redacted files, conversions, frames asked for by
/// number, filtered dumps) and the smaller claims, each on a capture built from bytes by
/// scripts/copy_fixtures.py in the shape of the field capture that showed it.
@Suite struct CopyTruthTests {
    /// Written once per test process into the build directory.
    static let fixtures: URL = {
        let dir = CLI.root.appendingPathComponent(".build/copy-fixtures")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        _ = try? CLI.process("/usr/bin/env", ["python3", CLI.root.appendingPathComponent("scripts/copy_fixtures.py").path, dir.path])
        return dir
    }()
    static func fixture(_ name: String) throws -> String {
        let p = fixtures.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: p) else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: p]) }
        return p
    }
    static func output(_ ext: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("copy-\(UUID().uuidString).\(ext)").path
    }
    static func jsonLines(_ path: String) throws -> [[String: Any]] {
        let r = try CLI.run(["dump", "--format", "jsonl", path])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
    static func firstReportAddress(_ records: [[String: Any]]) -> String? {
        for r in records {
            if let adv = r["adv"] as? [String: Any], let reps = adv["reports"] as? [[String: Any]], let a = reps.first?["address"] as? String { return a }
        }
        return nil
    }

    /// #9: "ROBAM_DB62030AE7BE596F1_0" carries 30:ae:7b:e5:96:f1 as 12 hex digits inside a
    /// longer run; manufacturer data carries it LSB first ("F196E57BAE30") and dash-separated.
    /// After redact none of them is left, and each is the pseudonym in the same order and case.
    @Test func redactFindsAddressesWrittenIntoNamesAndText() throws {
        let src = try Self.fixture("name_with_address.btsnoop")
        let out = Self.output("btsnoop")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["redact", "--salt", "issue 36", src, out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("bluesift: replaced addresses as hex text: 4"), "\(r.stderr)")
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: out)), as: UTF8.self).lowercased()
        for leak in ["30ae7be596f1", "f196e57bae30", "30-ae-7b-e5-96-f1", "30:ae:7b:e5:96:f1"] {
            #expect(!text.contains(leak), "\(leak) left in the copy")
        }
        let records = try Self.jsonLines(out)
        let pseudonym = try #require(Self.firstReportAddress(records))
        #expect(pseudonym != "30:ae:7b:e5:96:f1")
        let digits = pseudonym.replacingOccurrences(of: ":", with: "")
        let names = try CLI.run(["dump", "--no-color", out]).stdout
        #expect(names.contains("name=ROBAM_DB620" + digits.uppercased() + "_0"), "\(names)")
        let bytes = digits.split(by: 2)
        #expect(text.contains("id=" + bytes.reversed().joined()), "LSB-first text becomes the pseudonym LSB first")
        #expect(text.contains("mac " + bytes.joined(separator: "-")))
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: src)), as: UTF8.self).contains("ROBAM_DB62030AE7BE596F1_0"))
    }

    /// #10: per-packet comments (opt_comment) are shown in text, -v and JSON Lines, kept by
    /// convert to pcapng, said on stderr for pcap, and scrubbed by redact.
    @Test func packetCommentsShownKeptAndScrubbed() throws {
        let src = try Self.fixture("packet_comments.pcapng")
        let text = try CLI.run(["dump", "--no-color", src])
        #expect(text.stdout.hasPrefix("     1 14:13:20.000000 < Reset [comment: reset before pairing]\n"), "\(text.stdout)")
        #expect(text.stdout.contains("name=ROBAM_DB62030AE7BE596F1_0 [comment: hood 30:AE:7B:E5:96:F1 seen] [comment: name ROBAM_DB62030AE7BE596F1_0]\n"))
        let verbose = try CLI.run(["dump", "-v", "--no-color", "--frames", "2", src])
        #expect(verbose.stdout.contains("\n  comment: hood 30:AE:7B:E5:96:F1 seen\n  comment: name ROBAM_DB62030AE7BE596F1_0\n  hci\n"), "\(verbose.stdout)")
        let lines = try Self.jsonLines(src)
        #expect(lines.map { $0["comments"] as? [String] } == [["reset before pairing"], ["hood 30:AE:7B:E5:96:F1 seen", "name ROBAM_DB62030AE7BE596F1_0"], nil])

        let ng = Self.output("pcapng"), pcap = Self.output("pcap"), red = Self.output("pcapng")
        defer { for p in [ng, pcap, red] { try? FileManager.default.removeItem(atPath: p) } }
        let c = try CLI.run(["convert", src, ng])
        #expect(c.status == 0 && c.stderr == "bluesift: wrote 3 records to \(ng)\n", "\(c.stderr)")
        #expect(try Self.jsonLines(ng).map { $0["comments"] as? [String] } == lines.map { $0["comments"] as? [String] })
        let p = try CLI.run(["convert", src, pcap])
        #expect(p.stderr.contains("bluesift: warning: the packet comments of 2 records are not in \(pcap): pcap cannot hold them (pcapng can)"), "\(p.stderr)")

        let r = try CLI.run(["redact", "--salt", "issue 36", src, red])
        #expect(r.status == 0 && r.stderr.contains("bluesift: replaced addresses in packet comments: 2"), "\(r.stderr)")
        let redacted = try Self.jsonLines(red)
        let pseudonym = try #require(Self.firstReportAddress(redacted)).uppercased()
        let digits = pseudonym.replacingOccurrences(of: ":", with: "")
        #expect(redacted.map { $0["comments"] as? [String] } == [["reset before pairing"], ["hood \(pseudonym) seen", "name ROBAM_DB620\(digits)_0"], nil])
        let bytes = String(decoding: try Data(contentsOf: URL(fileURLWithPath: red)), as: UTF8.self).uppercased()
        #expect(!bytes.contains("30:AE:7B:E5:96:F1") && !bytes.contains("30AE7BE596F1"))
    }

    /// #11: a DLT 201 pcap whose records carry H4 indicators no spec names (0x07, 0x0e) copies
    /// to pcap and pcapng, and its btsnoop copy back to pcapng: every record, same bytes.
    @Test func h4RecordsOfUnnamedIndicatorsAreCopied() throws {
        let src = try Self.fixture("h4_unknown_indicators.pcap")
        let want = try CLI.run(["dump", "--no-color", src]).stdout
        #expect(want == "     1 14:13:20.000000 < unknown (0x07)\n     2 14:13:20.001000 > unknown (0x0e)\n")
        let outs = ["pcap", "pcapng", "btsnoop"].map(Self.output)
        let back = Self.output("pcapng")
        defer { for p in outs + [back] { try? FileManager.default.removeItem(atPath: p) } }
        for o in outs {
            let r = try CLI.run(["convert", src, o])
            #expect(r.status == 0 && r.stderr == "bluesift: wrote 2 records to \(o)\n", "\(r.stderr)")
            #expect(try CLI.run(["dump", "--no-color", o]).stdout == want)
        }
        // The pcap copy's records are the original's byte for byte (only the header's snaplen differs).
        let a = try Data(contentsOf: URL(fileURLWithPath: src)), b = try Data(contentsOf: URL(fileURLWithPath: outs[0]))
        #expect(a.dropFirst(24) == b.dropFirst(24))
        let r = try CLI.run(["convert", outs[2], back])
        #expect(r.status == 0 && r.stderr == "bluesift: wrote 2 records to \(back)\n", "\(r.stderr)")
        #expect(try CLI.run(["dump", "-v", "--no-color", back]).stdout == (try CLI.run(["dump", "-v", "--no-color", src]).stdout))
    }

    /// #12: frame 4 resends frame 3 (same SN and CRC): hidden in the plain view, shown and
    /// marked when asked for by number.
    @Test func retransmissionAskedForByNumberIsShown() throws {
        let src = try Self.fixture("sniffed_retransmission.pcap")
        let r = try CLI.run(["dump", "--no-color", "--frames", "4", src])
        #expect(r.status == 0)
        #expect(r.stdout == "     4 14:13:20.033000 C→P [0x0001] LL L2CAP Start len=7 (retransmission)\n", "\(r.stdout)")
        let all = try CLI.run(["dump", "--no-color", src]).stdout
        #expect(all.split(separator: "\n").map { $0.prefix(6).trimmingCharacters(in: .whitespaces) } == ["1", "2", "3", "5", "6"])
    }

    /// #13: the README's promise: --characteristic keeps the Read By Type Response that lists
    /// the declaration (band frame 66: 0x000f) and the Find Information Responses that list its
    /// CCCD (frames 90, 111: 0x0011).
    @Test func characteristicKeepsItsDiscoveryResponses() throws {
        let r = try CLI.run(["dump", "--no-color", "--characteristic", "Battery Level", CLI.capture("band_mtu23.btsnoop")])
        let frames = r.stdout.split(separator: "\n").map { Int($0.prefix(6).trimmingCharacters(in: .whitespaces)) }
        #expect(frames == [66, 69, 90, 106, 108, 111, 112, 114], "\(r.stdout)")
        let acl = try CLI.run(["dump", "--no-color", "--characteristic", "2a19", try Self.fixture("acl_only.btsnoop")])
        #expect(acl.stdout.hasPrefix("     4 14:13:20.003000 > [0x0040] ATT Read By Type Response entries=1"), "\(acl.stdout)")
        // Another characteristic does not take them.
        let other = try CLI.run(["dump", "--no-color", "--characteristic", "Model Number String", CLI.capture("band_mtu23.btsnoop")])
        #expect(!other.stdout.contains("    66 ") && !other.stdout.contains("   111 "))
    }

    /// #14: the first record's time with its fraction.
    @Test func convertSaysWhereTheFirstRecordLands() throws {
        let out = Self.output("pcap")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["convert", try Self.fixture("before_1970_fraction.btsnoop"), out])
        #expect(r.stderr.contains("every time moved 1 s later, so the first record is at 1970-01-01T00:00:00.846582Z and intervals are kept"), "\(r.stderr)")
        #expect(try Self.jsonLines(out).first?["ts"] as? String == "1970-01-01T00:00:00.846582Z")
    }

    /// #14: nothing comparable is not "0 same, 0 changed": one line, exit 2.
    @Test func diffWithNothingToCompare() throws {
        let a = try Self.fixture("no_att_a.btsnoop"), b = try Self.fixture("no_att_b.btsnoop")
        let r = try CLI.run(["diff", a, b])
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "bluesift: nothing to compare: neither \(a) nor \(b) holds an ATT read, write, notification or indication\n", "\(r.stderr)")
        let band = try CLI.run(["diff", CLI.capture("band_mtu23.btsnoop"), CLI.capture("band_mtu23.btsnoop")])
        #expect(band.status == 0 && band.stdout.contains("summary: ") && band.stdout.contains(" 0 changed"))
    }

    /// #14: a log of ACL data only is not told to start earlier.
    @Test func aclOnlyLogHoldsNoHCICommandsOrEvents() throws {
        let r = try CLI.run(["stats", "--format", "json", try Self.fixture("acl_only.btsnoop")])
        let s = try #require(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let codes = (s["quality"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(codes == ["no_hci_control"], "\(codes)")
        let text = try CLI.run(["stats", try Self.fixture("acl_only.btsnoop")]).stdout
        #expect(text.contains("The log holds no HCI commands or events (ACL data only)"))
        #expect(!text.contains("Start the capture before connecting"))
    }

    /// #14: an iBeacon's calibrated power and the report's RSSI are no sensor readings: the
    /// plugins say so (`reading: false`), the engine keeps no list of names.
    @Test func beaconPowerAndRSSIAreNoSensorReadings() throws {
        let src = try Self.fixture("ibeacon.btsnoop")
        let frames = try CLI.run(["dump", "--no-color", "--plugins", CLI.root.appendingPathComponent("Plugins").path, "--frames", "2", src])
        #expect(frames.stdout.contains("ibeacon") && frames.stdout.contains("power=-59 dBm") && frames.stdout.contains("rssi=-60 dBm"), "\(frames.stdout)")
        let r = try CLI.run(["stats", "--format", "json", "--plugins", CLI.root.appendingPathComponent("Plugins").path, src])
        let s = try #require(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(s["sensors"] == nil, "\(String(describing: s["sensors"]))")
        let report = Self.output("html")
        defer { try? FileManager.default.removeItem(atPath: report) }
        #expect(try CLI.run(["report", "--plugins", CLI.root.appendingPathComponent("Plugins").path, src, "-o", report]).status == 0)
        let html = String(decoding: try Data(contentsOf: URL(fileURLWithPath: report)), as: UTF8.self)
        #expect(!html.contains("\"field\":\"power\"") && !html.contains("\"field\":\"rssi\""))
    }

    /// #15: the kernel harness runs bluesift as nobody only on copies it made readable, so
    /// `make test` passes from a clone in a private (0700) folder.
    @Test func kernelHarnessGivesNobodyReadableInputs() throws {
        let test = try String(contentsOf: CLI.root.appendingPathComponent("Tests/Kernel/tests/hci_nonroot.sh"), encoding: .utf8)
        let asNobody = test.split(separator: "\n").filter { $0.hasPrefix("asnobody ") }
        #expect(asNobody.count == 2)
        for line in asNobody {
            #expect(line.hasPrefix("asnobody \"$PUBLIC/bluesift\" "), "\(line)")
            #expect(!line.contains("$CAPTURE") && !line.contains("$REPO") && !line.contains("$BLUESIFT"), "\(line)")
        }
        let run = try String(contentsOf: CLI.root.appendingPathComponent("Tests/Kernel/run.sh"), encoding: .utf8)
        #expect(run.contains("chmod 755 \"$PUBLIC\"") && run.contains("rm -rf \"$PUBLIC\"") && run.contains("echo \"PUBLIC=$PUBLIC\""))
    }
}

private extension String {
    /// "0b796e" → ["0b", "79", "6e"].
    func split(by n: Int) -> [String] {
        stride(from: 0, to: count, by: n).map { i in
            let a = index(startIndex, offsetBy: i)
            return String(self[a..<index(a, offsetBy: min(n, count - i))])
        }
    }
}
