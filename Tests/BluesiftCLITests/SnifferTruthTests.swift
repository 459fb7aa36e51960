import Testing
import Foundation

/// Issue 36, over-the-air captures: what `info`/`stats`/`dump`/`report` claim about a sniffer
/// capture whose CRCs the sniffer did not check, one whose packets are all CRC-bad, one a
/// sniffer decrypted without saying so, one without directions, one whose connection carried
/// no data PDU. Fixtures: scripts/summary_fixtures.py (shapes of the real files in the issue).
@Suite struct SnifferTruthTests {
    static func fixture(_ name: String) throws -> String { try SummaryTruthTests.fixture(name) }
    static func statsJSON(_ path: String) throws -> [String: Any] { try SummaryTruthTests.statsJSON(path) }
    static func jsonl(_ path: String, frames: String) throws -> [[String: Any]] {
        let r = try CLI.run(["dump", "--format", "jsonl", "--frames", frames, path])
        return r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
    static func report(_ path: String) throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("sniffer-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: out) }
        #expect(try CLI.run(["report", path, "-o", out.path]).status == 0)
        return try String(contentsOf: out, encoding: .utf8)
    }

    /// #1: the RF header never says the CRC was checked. bluesift checks it (tshark: frames 2
    /// and 3 Incorrect CRC): the corrupted name "Suest 3" and the bit-flipped address
    /// 13:22:33:44:55:66 are no devices; the data PDUs on a bit-flipped access address (#10) and
    /// on two random ones (#11, #12) are no connections; the link whose CONNECT_IND was missed
    /// (#14, #15 agree on CRCInit 0x0a0b0c) is one, and the only one without CONNECT_IND.
    @Test func crcUncheckedBySniffer() throws {
        let path = try Self.fixture("sniffed_crc_unchecked.pcap")
        let s = try Self.statsJSON(path)
        let devices = try #require(s["devices"] as? [[String: Any]])
        #expect(devices.map { $0["address"] as? String } == ["11:22:33:44:55:66", "c8:1e:2f:4a:5b:6c"])
        #expect(devices[0]["names"] as? [String] == ["Quest 3"])
        let conns = try #require(s["connections"] as? [[String: Any]])
        #expect(conns.map { $0["access_address"] as? String } == ["0x50656517", "0x6ab1c2d3"])
        #expect(conns[0]["start_frame"] as? Int == 5 && conns[0]["end_frame"] as? Int == 17)
        #expect(conns[1]["start_frame"] == nil && conns[1]["first_frame"] as? Int == 15)
        let quality = try #require(s["quality"] as? [[String: Any]])
        let missed = try #require(quality.first { $0["code"] as? String == "sniffer_missed_connect" })
        #expect((missed["message"] as? String)?.hasPrefix("The sniffer missed the CONNECT_IND of 1 connection(s)") == true)
        let info = try CLI.run(["info", path]).stdout
        #expect(info.contains("connections: 2\n"), "\(info)")
        #expect(
            info.contains(
                "crc:         bluesift checked 12 CRCs the capture did not (3 bad), 3 data PDUs on unconfirmed access addresses (not decoded), 1 with a corrupted access address (not decoded), 1 marked CRC-valid by the sniffer fail the check of 17 packets"
            ), "\(info)")
        let dump = try CLI.run(["dump", "--frames", "2-3,10-13", path]).stdout
        #expect(dump.contains("     2 14:13:20.000100   LL ADV_IND 11:22:33:44:55:66 name=Suest 3 CRC bad\n"), "\(dump)")
        #expect(dump.contains("    13 14:13:20.093000   [0x0001] LL Empty PDU CRC bad\n"))
        #expect(!dump.contains("ATT"), "a bit-flipped copy of the Read Request (#10) is not decoded")
        let frames = try Self.jsonl(path, frames: "2,16")
        let ll2 = try #require(frames.first?["ll"] as? [String: Any]), ll16 = try #require(frames.last?["ll"] as? [String: Any])
        #expect(ll2["crc_ok"] as? Bool == false && ll2["crc_computed"] as? Bool == true)
        // #16: the header says CRC valid; the CRC is wrong. The sniffer's verdict stands (as tshark's).
        #expect(ll16["crc_ok"] as? Bool == true && ll16["crc_fails"] as? Bool == true)
        let html = try Self.report(path)
        #expect(
            html.contains("\"access_address\":\"0x6ab1c2d3\"") && !html.contains("\"access_address\":\"0x12345678\"")
                && !html.contains("\"access_address\":\"0x50656117\""))
    }

    /// #2: the share of bad CRCs is capture quality; a capture whose packets are all CRC-bad
    /// is never "no problems found".
    @Test func badCRCsAreCaptureQuality() throws {
        let all = try Self.fixture("sniffed_all_crc_bad.pcap")
        let text = try CLI.run(["stats", all]).stdout
        #expect(!text.contains("no problems found with the capture itself"), "\(text)")
        #expect(text.contains("  ! All 12 over-the-air packets have a bad CRC: nothing in the capture can be trusted; they are shown, not decoded.\n    → A weak or disturbed signal: move the sniffer closer to the devices"))
        let counts = try #require(try Self.statsJSON(all)["counts"] as? [String: Any])
        #expect(counts["ll_packets"] as? Int == 12 && counts["crc_bad"] as? Int == 12)
        let html = try Self.report(all)
        #expect(html.contains("\"code\":\"crc_bad\""))
        let some = try Self.statsJSON(try Self.fixture("sniffed_crc_unchecked.pcap"))
        let q = try #require((some["quality"] as? [[String: Any]])?.first { $0["code"] as? String == "crc_bad" })
        #expect((q["message"] as? String)?.hasPrefix("3 of 17 over-the-air packets (18%) have a bad CRC (checked by bluesift") == true)
        #expect(q["severity"] as? String == "warning")
        let c = try #require(some["counts"] as? [String: Any])
        #expect(c["crc_bad"] as? Int == 3 && c["crc_checked_by_bluesift"] as? Int == 12 && c["crc_unverified"] as? Int == 4)
    }

    /// #3: WHAD wrote the PDUs it decrypted, without MIC, and no flag says so (tshark decodes
    /// them: #10 Read Request 0x0003). They are decoded; no key is asked for, none "fails".
    @Test func alreadyDecryptedBySniffer() throws {
        let path = try Self.fixture("whad_decrypted.pcap")
        let dump = try CLI.run(["dump", "--frames", "10-13", path]).stdout
        #expect(dump.contains("    10 14:13:20.123000   [0x0001] ATT Read Request handle=0x0003 [Battery Service]\n"), "\(dump)")
        #expect(dump.contains("reply to #12 handle 0x0003") && !dump.contains("Encrypted"))
        let info = try CLI.run(["info", "--ltk", "00112233445566778899aabbccddeeff", path]).stdout
        #expect(!info.contains("verifies the MIC") && !info.contains("give --ltk"), "\(info)")
        #expect(info.contains("encrypted 1×: 8 encrypted PDUs, 8 decrypted (8 by the sniffer)"))
        let s = try Self.statsJSON(path)
        #expect((s["quality"] as? [[String: Any]])?.contains { $0["code"] as? String == "encrypted_no_key" } == false)
        #expect((s["counts"] as? [String: Any])?["att"] as? Int == 7)
    }

    /// #4: the peripheral's PDUs carry "direction unspecified": its Error Response (#4) and
    /// Write Response (#6) answer the central's requests (tshark: request_in_frame 3 and 5),
    /// so nothing is unanswered, and they are from the peripheral.
    @Test func directionlessResponsesPairWithTheirRequests() throws {
        let path = try Self.fixture("sniffed_direction_unspecified.pcap")
        let s = try Self.statsJSON(path)
        let problems = try #require(s["problems"] as? [[String: Any]])
        #expect(!problems.contains { $0["kind"] as? String == "unanswered_request" }, "\(problems)")
        #expect(problems.first { $0["kind"] as? String == "att_error" }?["request_frame"] as? Int == 3)
        let dump = try CLI.run(["dump", "--frames", "4,6,8", path]).stdout
        #expect(dump.contains("     4 14:13:20.003150 P→C [0x0001] ATT Error Response to Read Request handle=0x0003 error=0x02 Read Not Permitted (reply to #3 handle 0x0003, 150 µs)\n"), "\(dump)")
        #expect(dump.contains("     6 14:13:20.033150 P→C [0x0001] ATT Write Response (reply to #5 handle 0x0005, 150 µs)\n"))
        #expect(dump.contains("     8 14:13:20.063150 P→C [0x0001] ATT Handle Value Notification handle=0x0005 value=02\n"))
        let ll = try #require(try Self.jsonl(path, frames: "4").first?["ll"] as? [String: Any])
        #expect(ll["from"] as? String == "peripheral" && ll["from_inferred"] as? Bool == true)
    }

    /// More access addresses heard once than the decoder keeps: the oldest is dropped, whatever
    /// order the Dictionary holding them has in this process (it was its `first`, which differs
    /// from run to run), so the second packet of the next oldest still confirms its link.
    @Test func unconfirmedAccessAddressesDropTheOldest() throws {
        let path = try Self.fixture("sniffed_unconfirmed_bound.pcap")
        let s = try Self.statsJSON(path)
        let conns = try #require(s["connections"] as? [[String: Any]])
        #expect(conns.map { $0["access_address"] as? String } == ["0x3c6ef362"])
        #expect(conns.first?["first_frame"] as? Int == 1026)
        let info = try CLI.run(["info", path]).stdout
        #expect(info.contains("connections: 1\n"), "\(info)")
        #expect(info.contains("1026 data PDUs on unconfirmed access addresses (not decoded)"), "\(info)")
    }

    /// #8: a CONNECT_IND with no data PDU after it is a connection for `stats` as for `info`.
    @Test func connectIndWithoutDataIsOneConnection() throws {
        let path = try Self.fixture("sniffed_connect_ind_only.pcap")
        let conns = try #require(try Self.statsJSON(path)["connections"] as? [[String: Any]])
        #expect(conns.count == 1 && conns.first?["start_frame"] as? Int == 2 && conns.first?["access_address"] as? String == "0x50656517")
        #expect(try CLI.run(["info", path]).stdout.contains("connections: 1\n"))
        #expect(try CLI.run(["stats", path]).stdout.contains("connections: 1\n"))
    }

    /// #14: the CRC as Wireshark prints it (btle.crc): frame 1 0xb11dcc, frame 5 0xd707de.
    @Test func crcInWiresharkBitOrder() throws {
        let frames = try Self.jsonl(try Self.fixture("sniffed_crc_unchecked.pcap"), frames: "1,5")
        #expect(frames.compactMap { ($0["ll"] as? [String: Any])?["crc"] as? String } == ["0xb11dcc", "0xd707de"])
    }
}
