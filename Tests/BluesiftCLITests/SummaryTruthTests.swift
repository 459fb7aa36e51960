import Testing
import Foundation

/// Issue 27: wrong claims of `stats`/`info`/`report` on field captures, each on the capture
/// that showed it (Captures/, shippable) or on a capture built from bytes by
/// scripts/summary_fixtures.py (docs/summary-defects.md says what each holds and what tshark
/// says of it).
@Suite struct SummaryTruthTests {
    /// The fixtures, written once per test process into the test run's temporary directory.
    static let fixtures: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("summary-fixtures-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        _ = try? CLI.process("/usr/bin/env", ["python3", CLI.root.appendingPathComponent("scripts/summary_fixtures.py").path, dir.path])
        return dir
    }()
    static func fixture(_ name: String) throws -> String {
        let p = fixtures.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: p) else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: p]) }
        return p
    }

    static func statsJSON(_ path: String) throws -> [String: Any] {
        let r = try CLI.run(["stats", "--format", "json", path])
        #expect(r.status == 0, "\(r.stderr)")
        return try #require(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    /// #4: a Synchronous Connection Complete in the file starts its connection (tshark: frame
    /// 254 for handle 0x0002), and the line no longer runs two frame numbers together.
    @Test func scoConnectionStartsAtItsCompleteEvent() throws {
        let r = try CLI.run(["stats", CLI.capture("classic_a2dp_hfp.btsnoop")])
        #expect(r.stdout.contains("  #1 0x0002 BR/EDR peer 00:b1:5f:c1:a5:02 central  frames 254…278  0.184 s"))
        #expect(!r.stdout.contains("started before the capture (frame"))
        let oppo = try CLI.run(["stats", CLI.capture("oppo_BT_HCI_2026_0719_110149.cfa")])
        #expect(oppo.stdout.contains("  #0 0x0004 ? peer unknown  started before the capture, first seen #217, ended #969  1 min 35 s"))
    }

    /// #5: Broadcom's vendor diagnostics on ACL handle 0x0EDC are not a connection: tshark sees
    /// 308 of its 313 frames on L2CAP channels nothing opened. One connection, and the four
    /// failed commands are the only problems.
    @Test func vendorDiagnosticHandleIsNotAConnection() throws {
        let path = CLI.capture("oppo_BT_HCI_2026_0719_110149.cfa")
        let s = try Self.statsJSON(path)
        let conns = try #require(s["connections"] as? [[String: Any]])
        #expect(conns.map { $0["handle"] as? Int } == [4])
        let problems = try #require(s["problems"] as? [[String: Any]])
        #expect(problems.count == 4 && problems.allSatisfy { $0["kind"] as? String == "hci_command_failed" })
        let quality = try #require(s["quality"] as? [[String: Any]])
        #expect(quality.contains { $0["code"] as? String == "vendor_diagnostics" && $0["frame"] as? Int == 3 })
        let info = try CLI.run(["info", path])
        #expect(info.stdout.contains("connections: 1\n"))
        let dump = try CLI.run(["dump", "--frames", "322", path])
        #expect(dump.stdout == "   322 11:03:02.358133 > vendor diagnostics (Broadcom) on ACL handle 0x0edc, not decoded\n")
        let json = try CLI.run(["dump", "--format", "jsonl", "--frames", "322", path])
        #expect(json.stdout.contains("\"note\":\"vendor diagnostics (Broadcom) on ACL handle 0x0edc, not decoded\"") && !json.stdout.contains("\"l2cap\""))
    }

    /// #3: the peripheral's Empty PDU acknowledging LL_TERMINATE_IND belongs to the ended
    /// connection; `stats` said 2 connections (the second "open at end"), `info` 1.
    @Test func noPhantomConnectionAfterTerminate() throws {
        let path = try Self.fixture("sniffed_terminate_ack.pcap")
        let s = try Self.statsJSON(path)
        let conns = try #require(s["connections"] as? [[String: Any]])
        #expect(conns.count == 1)
        #expect(conns.first?["end_frame"] as? Int == 7 && conns.first?["last_frame"] as? Int == 8)
        #expect(conns.first?["disconnect_reason"] as? Int == 0x13)
        #expect(!(try CLI.run(["stats", path])).stdout.contains("open at end"))
    }

    /// #6a/#6b: advice by the capture's origin. btmon's btsnoop interleaves its sources (32 steps
    /// back of at most 584 µs, tshark): jitter, not missing records, and no Android advice; a
    /// PacketLogger capture that starts mid-connection is told about PacketLogger.
    @Test func adviceFitsTheCapture() throws {
        let btmon = try CLI.run(["stats", CLI.capture("btsnooprs_btsnoop_btmon.log")])
        #expect(btmon.stdout.contains("  i 32 timestamp(s) step back by at most 584 µs: the clock has jitter"))
        #expect(!btmon.stdout.contains("Android") && !btmon.stdout.contains("records may be missing"))
        let pklg = try CLI.run(["stats", try Self.fixture("pklg_mid_connection.pklg")])
        #expect(pklg.stdout.contains("→ Start PacketLogger (or install Apple's Bluetooth logging profile on iOS) before the devices connect."))
        #expect(!pklg.stdout.contains("Android"))
    }

    /// #6c: iOS cancels pending creates as routine: hciparse_test00 (tshark: 62 LE Create
    /// Connection Cancel, 3 failed, 1 never completed) no longer reads as 66 failures.
    @Test func cancelledCreatesAreNotFailures() throws {
        let r = try CLI.run(["stats", CLI.capture("hciparse_test00.pklg")])
        #expect(r.stdout.contains("connections: 0; attempts: 3 failed, 62 cancelled by the host, 1 never completed\n"))
    }

    /// #7a/#7b: an Attribute Not Found that ends a discovery is not an error: band_mtu23 has 6
    /// (tshark: all answer discovery requests) and no real failure, so `dump --errors` lists
    /// none and the report's rows mark them as discovery ends (its "errors only" filter and its
    /// header count agree: 0).
    @Test func discoveryEndsAreNotErrors() throws {
        let path = CLI.capture("band_mtu23.btsnoop")
        let errors = try CLI.run(["dump", "--errors", path])
        #expect(errors.stdout.isEmpty)
        #expect(try CLI.run(["dump", "--att-opcode", "error", path]).stdout.split(separator: "\n").count == 6)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("truth-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: out) }
        #expect(try CLI.run(["report", path, "-o", out.path]).status == 0)
        let html = try String(contentsOf: out, encoding: .utf8)
        #expect(html.contains("function isError(r){return (r[4]===1&&!r[13])||r[4]===0x105;}"))
        // Six Error Response rows (op 1), each flagged as a discovery end (last column 1).
        let rows = html.components(separatedBy: "],[").filter { $0.range(of: #"^\[?\d+,\d+,-?\d+,\d,1,"#, options: .regularExpression) != nil }
        #expect(rows.count == 6 && rows.allSatisfy { $0.hasSuffix(",1") || $0.hasSuffix(",1]") })
    }
}
