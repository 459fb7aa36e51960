import Testing
import Foundation

/// Issue 27: wrong claims of `stats`/`info`/`report` on field captures, each on the capture
/// that showed it (Captures/, shippable) or on a capture built from bytes by
/// scripts/summary_fixtures.py (docs/summary-defects.md says what each holds and what tshark
/// says of it).
@Suite struct SummaryTruthTests {
    /// The fixtures, written once per test process into the build directory (a directory in
    /// /tmp per process was never removed).
    static let fixtures: URL = {
        let dir = CLI.root.appendingPathComponent(".build/summary-fixtures")
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

    /// #6a/#6b: advice by the capture's origin. btmon's btsnoop interleaves its notes with the
    /// traffic (tshark: 32 steps back, all at notes, the largest 584 µs): not records missing,
    /// no Android advice; a PacketLogger capture that starts mid-connection is told about
    /// PacketLogger.
    @Test func adviceFitsTheCapture() throws {
        let btmon = try CLI.run(["stats", CLI.capture("btsnooprs_btsnoop_btmon.log")])
        #expect(btmon.stdout.contains("capture quality:\n  no problems found with the capture itself\n"), "\(btmon.stdout)")
        let pklg = try CLI.run(["stats", try Self.fixture("pklg_mid_connection.pklg")])
        #expect(pklg.stdout.contains("→ Start PacketLogger (or install Apple's Bluetooth logging profile on iOS) before the devices connect."))
        #expect(!pklg.stdout.contains("Android"))
    }

    /// #6b on PacketLogger's millisecond clock: bafang (tshark: 24 steps back, 20 of 1–3 ms, the
    /// largest 10 ms; one of them at a note) is jitter, not missing records.
    @Test(
        .enabled(
            if: FileManager.default.fileExists(atPath: CLI.corpus.appendingPathComponent("bafang_bluetoothd-hci-latest.pklg").path),
            "needs ../shared/captures/public"))
    func packetLoggerJitter() throws {
        let r = try CLI.run(["stats", CLI.corpus.appendingPathComponent("bafang_bluetoothd-hci-latest.pklg").path])
        #expect(r.stdout.contains("  i 23 timestamp(s) step back by at most 10 ms: the clock has jitter; records are in the file's order. (from frame 1055)"))
        #expect(!r.stdout.contains("records may be missing") && !r.stdout.contains("Android"))
        #expect(r.stdout.contains("  i 8 note(s) are dated more than a minute outside the records' span"))
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

    /// #1: the phone opens RFCOMM to the car's server channel 2 (DLCI 4, direction bit 0: the
    /// side that did not open the multiplexer); the car's record names it Handsfree, the
    /// phone's own record for its channel 2 says Headset AG. tshark: HFP.
    @Test func rfcommServiceFromTheServingSide() throws {
        let path = try Self.fixture("hfp_sdp_both_sides.btsnoop")
        let info = try CLI.run(["info", path])
        #expect(info.stdout.contains("HFP (AG)") && !info.stdout.contains("HSP"), "\(info.stdout)")
        let dump = try CLI.run(["dump", "--protocol", "rfcomm", path])
        #expect(dump.stdout.contains("RFCOMM SABM ch=2 (Handsfree)") && !dump.stdout.contains("Headset"))
    }

    /// #2a: a Read By Type Request answered after an indication the server sent meanwhile is
    /// answered (tshark: request_in_frame 2); both sides as GATT clients, sniffed without
    /// direction (crackle LE SC #60 → #68, #99 → #102), are paired too.
    @Test func requestsBesideIndicationsAndOtherClientsAreAnswered() throws {
        let fixture = try Self.statsJSON(try Self.fixture("indication_beside_request.btsnoop"))
        #expect((fixture["problems"] as? [[String: Any]])?.contains { $0["kind"] as? String == "unanswered_request" } == false)
        let crackle = try Self.statsJSON(CLI.capture("crackle_le_secure_connections.pcapng"))
        let unanswered = (crackle["problems"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "unanswered_request" }
        #expect(unanswered.isEmpty, "\(unanswered)")
    }

    /// #8a: a sniffed link whose packets stopped for longer than its supervision timeout ended
    /// there (#12), not "open at end of capture".
    @Test func supervisionTimeoutEndsTheConnection() throws {
        let info = try CLI.run(["info", try Self.fixture("sniffed_supervision_timeout.pcap")])
        #expect(!info.stdout.contains("open at end of capture"), "\(info.stdout)")
        #expect(info.stdout.contains("frames 2…12"))
        #expect(info.stdout.contains("supervision timeout"))
    }

    /// #8b: with the right --ltk, no "give --ltk" advice beside "decrypting … with --ltk".
    @Test func noLTKAdviceWhileDecrypting() throws {
        let info = try CLI.run(["info", try Self.fixture("sc_with_ltk.pcap"), "--ltk", "00112233445566778899aabbccddeeff"])
        #expect(info.stdout.contains("decrypting from frame 13 with --ltk"), "\(info.stdout)")
        #expect(!info.stdout.contains("give --ltk"))
        #expect(info.stdout.contains("4 encrypted PDUs, 4 decrypted"))
    }

    /// #8e: a pcapng cut inside its Section Header Block is cut short, not "link type 0".
    @Test func pcapngCutInItsHeader() throws {
        let src = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("crackle_le_secure_connections.pcapng")))
        let cut = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID().uuidString).pcapng")
        defer { try? FileManager.default.removeItem(at: cut) }
        try src.prefix(40).write(to: cut)
        let r = try CLI.run(["info", cut.path])
        #expect(r.status == 2)
        #expect(r.stderr == "bluesift: \(cut.path): not a capture: pcapng header cut short (40 of 44 bytes)\n")
    }

    /// #9a/#9b/#9c: a member UUID names a company, so the UUID stays; CONNECT_IND in ms as
    /// tshark says them; an SMP key size of 253 is a problem.
    @Test func namesUnitsAndKeySizes() throws {
        let band = try CLI.run(["dump", "--frames", "129", CLI.capture("band_mtu23.btsnoop")])
        #expect(band.stdout.contains("[fee7 (Tencent Holdings Limited.) / 36f5]"), "\(band.stdout)")
        let fira = try CLI.run(["dump", try Self.fixture("fira_member_uuids.btsnoop")])
        #expect(fira.stdout.contains("fff3 (FiRa Consortium)") && fira.stdout.contains("fff4 (FiRa Consortium)"))
        let crackle = try CLI.run(["dump", "--frames", "44", CLI.capture("crackle_le_secure_connections.pcapng")])
        #expect(crackle.stdout.contains("interval=67.5 ms timeout=420 ms"), "\(crackle.stdout)")
        let k = try Self.statsJSON(try Self.fixture("smp_keysize_253.btsnoop"))
        let problems = k["problems"] as? [[String: Any]] ?? []
        #expect(problems.contains { $0["kind"] as? String == "smp_invalid_key_size" && ($0["message"] as? String)?.contains("Maximum Encryption Key Size 253") == true })
    }

    /// #10: PacketLogger notes dated 6 days before the session do not stretch its span.
    @Test func notesDoNotStretchTheSpan() throws {
        let path = try Self.fixture("pklg_old_notes.pklg")
        let s = try Self.statsJSON(path)
        #expect(s["duration_us"] as? Int == 9_000_000)
        #expect((s["quality"] as? [[String: Any]])?.contains { $0["code"] as? String == "notes_outside_span" } == true)
        #expect(try CLI.run(["info", path]).stdout.contains("(9.000 s)"))
    }

    /// #11: crackle's missing-confirms case (its test 03): the TK is found by the MIC of the
    /// first encrypted packet, and the three encrypted packets decrypt.
    @Test func legacyTKWithoutConfirms() throws {
        let info = try CLI.run(["info", try Self.fixture("missing_confirms.pcap")])
        #expect(info.stdout.contains("TK found by the first encrypted packet's MIC: 000000 (Just Works)"), "\(info.stdout)")
        #expect(info.stdout.contains("3 encrypted PDUs, 3 decrypted"))
    }

    /// #8f: a connected peer that never advertised is a device (tshark: Connection Complete
    /// peer 00:b1:5f:c1:a5:02), not "devices: 0".
    @Test func connectedPeersAreDevices() throws {
        let path = CLI.capture("classic_a2dp_hfp.btsnoop")
        let s = try Self.statsJSON(path)
        let devices = try #require(s["devices"] as? [[String: Any]])
        #expect(devices.count == 1 && devices[0]["address"] as? String == "00:b1:5f:c1:a5:02")
        #expect(devices[0]["advertising_reports"] as? Int == 0 && devices[0]["connections"] as? [Int] == [0, 1])
        #expect(try CLI.run(["stats", path]).stdout.contains("devices: 1 (1 connected without advertising)\n"))
    }

    /// #10, the other side: btmon's notes within a minute of the traffic belong to the session,
    /// so the span is tshark's (00:32:01.350268 → 00:32:11.322030).
    @Test func nearbyNotesStayInTheSpan() throws {
        let info = try CLI.run(["info", CLI.capture("btsnooprs_btsnoop_btmon.log")])
        #expect(info.stdout.contains("time span:   2023-10-02T00:32:01.350268Z → 2023-10-02T00:32:11.322030Z (9.972 s)"))
    }

    /// #2b: the peripheral's Read Response (#6) was seen only with a bad CRC, and the central's
    /// next PDU (#7) flips its NESN: the link carried it (tshark: request_in_frame 5,
    /// btle.crc.incorrect). Answered, so not "unanswered"; said as a capture-quality note by
    /// stats and the report, and by info on the link.
    @Test func responseSeenOnlyWithABadCRC() throws {
        let path = try Self.fixture("sniffed_crc_bad_response.pcap")
        let s = try Self.statsJSON(path)
        #expect((s["problems"] as? [[String: Any]])?.isEmpty == true, "\(s["problems"] ?? "")")
        let counts = try #require(s["counts"] as? [String: Any])
        #expect(counts["unanswered_requests"] as? Int == 0 && counts["crc_bad_responses"] as? Int == 1)
        let note = try #require((s["quality"] as? [[String: Any]])?.first { $0["code"] as? String == "response_crc_bad" })
        #expect(note["frame"] as? Int == 5 && note["severity"] as? String == "info")
        let text = try CLI.run(["stats", path]).stdout
        #expect(
            text.contains("  i 1 ATT request was answered by a PDU the sniffer saw only with a bad CRC (Read Request #5 → #6): the central acknowledged it, so the link carried the answer; what it said is not in the capture. (from frame 5)"),
            "\(text)")
        #expect(text.contains("problems: 0\n") || text.hasSuffix("problems: 0"))
        let info = try CLI.run(["info", path]).stdout
        #expect(info.contains(", 1 CRC-bad (1 received by the link, acknowledged: first #6)"), "\(info)")
        // The peripheral's next PDU (#8, SN back to 0) is new, not a retransmission of #4.
        #expect(info.contains("0 retransmissions"))
        #expect(try CLI.run(["dump", "--frames", "8", path]).stdout.contains("P→C [0x0001] LL Empty PDU"))
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("truth-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: out) }
        #expect(try CLI.run(["report", path, "-o", out.path]).status == 0)
        let html = try String(contentsOf: out, encoding: .utf8)
        #expect(html.contains("\"code\":\"response_crc_bad\"") && html.contains("\"problems\":[]") && html.contains("\"unanswered_requests\":0"))
    }

    /// #8c: characteristic declarations read without primary service discovery, and the
    /// descriptor Find Information found (tshark: #3 0x0010 → value 0x0011 Heart Rate
    /// Measurement, #7 0x0012 CCCD), are shown under "(service not discovered)", and the JSON
    /// carries them (additive `undiscovered`) and reads back with --gatt.
    @Test func characteristicsWithoutServiceDiscovery() throws {
        let path = try Self.fixture("gatt_no_primary_discovery.btsnoop")
        let tree = try CLI.run(["gatt", path])
        #expect(
            tree.stdout == """
                11:22:33:44:55:66
                  (service not discovered)
                    characteristic 2a37 "Heart Rate Measurement"  value 0x0011  (notify)
                      descriptor 2902 "Client Characteristic Configuration"  0x0012

                """, "\(tree.stdout)")
        let json = try CLI.run(["gatt", "--format", "json", path])
        let top = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let dev = try #require((top["devices"] as? [[String: Any]])?.first)
        #expect((dev["services"] as? [Any])?.isEmpty == true)
        let u = try #require((dev["undiscovered"] as? [[String: Any]])?.first)
        #expect(u["uuid"] as? String == "2a37" && u["value_handle"] as? Int == 17 && u["handle"] as? Int == 16)
        #expect((u["descriptors"] as? [[String: Any]])?.first?["name"] as? String == "Client Characteristic Configuration")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("truth-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try json.stdout.write(to: file, atomically: true, encoding: .utf8)
        let back = try CLI.run(["gatt", "--gatt", file.path, path])
        #expect(back.status == 0 && back.stdout == tree.stdout)
        #expect(try CLI.run(["gatt", "--characteristic", "2a37", path]).stdout == tree.stdout)
        #expect(try CLI.run(["gatt", "--service", "180d", path]).stderr.contains("no records match --service 180d"))
    }

    // MARK: issue 36 — time, handles, databases

    /// 36 #5: an Android log (.cfa) whose last records (#33–#39, 20 s … 80 s) go back in time:
    /// tshark's records run from 0 s to 300 s. The span is earliest → latest in both commands,
    /// both warn of the step back, and the appended records belong (in time order) to the
    /// connection open then, not to one the capture "starts during".
    @Test func timestampsThatGoBack() throws {
        let path = try Self.fixture("android_appended_back.cfa")
        let info = try CLI.run(["info", path])
        #expect(info.stdout.contains("time span:   2026-09-21T14:13:20.000000Z → 2026-09-21T14:18:20.000000Z (5 min 00 s)\n"), "\(info.stdout)")
        #expect(info.stdout.contains("warnings:    1 timestamp(s) going backwards by 50 ms or more: records may be missing (a rotated or wrapped capture buffer, or merged files). (from frame 33)\n"))
        #expect(info.stdout.contains("connections: 1\n  0x0040  LE  peer 11:22:33:44:55:66 (public)  central  4 min 50 s  frames 3…32"))
        let s = try Self.statsJSON(path)
        #expect(s["first_us"] as? Int == 1_790_000_000_000_000 && s["last_us"] as? Int == 1_790_000_300_000_000)
        #expect(s["duration_us"] as? Int == 300_000_000)
        let quality = try #require(s["quality"] as? [[String: Any]])
        #expect(quality.contains { $0["code"] as? String == "gaps" && $0["frame"] as? Int == 33 })
        #expect(!quality.contains { $0["code"] as? String == "starts_mid_connection" })
        let conns = try #require(s["connections"] as? [[String: Any]])
        #expect(conns.count == 1 && conns.first?["start_frame"] as? Int == 3 && conns.first?["att_operations"] as? Int == 35)
    }

    /// 36 #6: a diagnostic stream on ACL handle 0x0ff1 — reserved, as every handle from 0x0F00
    /// (Core 5.4 Vol 4 Part E §5.4.2) — is vendor diagnostics like 0x0EDC: no connection, no
    /// malformed L2CAP, one note.
    @Test func reservedHandleIsVendorDiagnostics() throws {
        let path = try Self.fixture("reserved_handle_diagnostics.btsnoop")
        let s = try Self.statsJSON(path)
        let conns = try #require(s["connections"] as? [[String: Any]])
        #expect(conns.map { $0["handle"] as? Int } == [0x40])
        #expect((s["problems"] as? [Any])?.isEmpty == true)
        let quality = try #require(s["quality"] as? [[String: Any]])
        #expect(
            quality.contains {
                $0["code"] as? String == "vendor_diagnostics" && $0["frame"] as? Int == 2
                    && $0["message"] as? String == "12 records are the controller's vendor diagnostics on ACL handle 0x0ff1 (reserved): not a connection, not decoded."
            })
        #expect(!quality.contains { $0["code"] as? String == "starts_mid_connection" })
        let info = try CLI.run(["info", path])
        #expect(info.stdout.contains("connections: 1\n  0x0040 ") && info.stdout.contains("warnings:    none\n"), "\(info.stdout)")
        let dump = try CLI.run(["dump", "--frames", "2", path])
        #expect(dump.stdout == "     2 14:13:20.001000 > vendor diagnostics on reserved ACL handle 0x0ff1, not decoded\n", "\(dump.stdout)")
    }

    /// 36 #7: a mesh node's Provisioning service (first connection) and Proxy service (second,
    /// after its database changed: tshark names frame 30 "Mesh Proxy Data In") are two
    /// generations, never one database with overlapping ranges; each PDU is named by the
    /// generation in force; the JSON keeps the last where older readers look, and --gatt and
    /// emulate pick one with --generation.
    @Test func oneDatabasePerGeneration() throws {
        let path = try Self.fixture("mesh_two_databases.btsnoop")
        let tree = try CLI.run(["gatt", path])
        #expect(
            tree.stdout == """
                d0:c1:b2:a3:94:85
                  generation 1 of 2, from frame 3 (first discovery)
                    service 1800 "Generic Access"  [0x0001–0x0005]
                    service 1801 "Generic Attribute"  [0x0006–0x0009]
                    service 1827 "Mesh Provisioning Service"  [0x000a–0x000f]
                      characteristic 2adb "Mesh Provisioning Data In"  value 0x000c  (write_without_response)
                      characteristic 2adc "Mesh Provisioning Data Out"  value 0x000e  (notify)
                        descriptor 2902 "Client Characteristic Configuration"  0x000f
                  generation 2 of 2, from frame 19 (a connection's discovery contradicts the previous database)
                    service 1800 "Generic Access"  [0x0001–0x0005]
                    service 1801 "Generic Attribute"  [0x0006–0x000c]
                    service 1828 "Mesh Proxy Service"  [0x000d–0x0012]
                      characteristic 2add "Mesh Proxy Data In"  value 0x000f  (write_without_response)
                      characteristic 2ade "Mesh Proxy Data Out"  value 0x0011  (notify)
                        descriptor 2902 "Client Characteristic Configuration"  0x0012

                """, "\(tree.stdout)")
        let dump = try CLI.run(["dump", "--format", "jsonl", "--frames", "14,30", path])
        #expect(dump.stdout.contains("\"handle\":12,\"value\":\"030005\",\"service\":\"1827\",\"service_name\":\"Mesh Provisioning Service\",\"characteristic\":\"2adb\",\"characteristic_name\":\"Mesh Provisioning Data In\""), "\(dump.stdout)")
        #expect(
            dump.stdout.contains("\"handle\":15,\"value\":\"0101000102030405060708000000001112131415161718\",\"service\":\"1828\",\"service_name\":\"Mesh Proxy Service\",\"characteristic\":\"2add\",\"characteristic_name\":\"Mesh Proxy Data In\""))

        let json = try CLI.run(["gatt", "--format", "json", path])
        let top = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let devices = try #require(top["devices"] as? [[String: Any]])
        #expect(devices.count == 1)
        let dev = try #require(devices.first)
        func uuids(_ o: [String: Any]) -> [String] { ((o["services"] as? [[String: Any]]) ?? []).compactMap { $0["uuid"] as? String } }
        // An older reader reads "services": the last generation alone.
        #expect(uuids(dev) == ["1800", "1801", "1828"])
        #expect(dev["generation"] as? Int == 2 && dev["first_frame"] as? Int == 19)
        let earlier = try #require(dev["earlier_generations"] as? [[String: Any]])
        #expect(earlier.count == 1 && earlier.first?["generation"] as? Int == 1 && uuids(earlier[0]) == ["1800", "1801", "1827"])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("truth-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try json.stdout.write(to: file, atomically: true, encoding: .utf8)
        let bare = try Self.fixture("mesh_no_discovery.btsnoop")
        let last = try CLI.run(["dump", "--format", "jsonl", "--gatt", file.path, "--frames", "2", bare])
        #expect(last.stdout.contains("\"service_name\":\"Mesh Proxy Service\",\"characteristic\":\"2add\",\"characteristic_name\":\"Mesh Proxy Data In\""), "\(last.stdout) \(last.stderr)")
        let first = try CLI.run(["dump", "--gatt", file.path, "--generation", "1", "--frames", "2", bare])
        #expect(first.stdout.contains("[Mesh Provisioning Service / Mesh Provisioning Data Out / Client Characteristic Configuration]"), "\(first.stdout)")
        let none = try CLI.run(["dump", "--gatt", file.path, "--generation", "3", bare])
        #expect(none.status == 2 && none.stderr == "bluesift: \(file.path): no generation 3 of d0:c1:b2:a3:94:85's database in the GATT file (it has 1–2)\n")
        let alone = try CLI.run(["dump", "--generation", "1", bare])
        #expect(alone.status == 64 && alone.stderr.hasPrefix("bluesift: --generation: expected --gatt FILE with it"))
        let one = try CLI.run(["gatt", "--generation", "1", "--format", "json", path])
        let oneTop = try #require(JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])
        #expect(uuids(try #require((oneTop["devices"] as? [[String: Any]])?.first)) == ["1800", "1801", "1827"])

        // emulate serves the last generation by default, with what was answered while it held.
        let emulateLast = try CLI.run(["emulate", path, "--transport", "tcp:127.0.0.1:1"])
        #expect(emulateLast.stderr.contains("bluesift: emulate: d0:c1:b2:a3:94:85 from mesh_two_databases.btsnoop: database generation 2 of 2, 3 services, 0 reads, 2 writes, 1 notifications recorded"), "\(emulateLast.stderr)")
        let emulateFirst = try CLI.run(["emulate", path, "--generation", "1", "--transport", "tcp:127.0.0.1:1"])
        #expect(emulateFirst.stderr.contains("database generation 1 of 2, 3 services, 0 reads, 2 writes, 1 notifications recorded"), "\(emulateFirst.stderr)")
        let emulateNone = try CLI.run(["emulate", path, "--generation", "3", "--transport", "tcp:127.0.0.1:1"])
        #expect(emulateNone.status == 2 && emulateNone.stderr == "bluesift: emulate: d0:c1:b2:a3:94:85's database has generations 1–2 in mesh_two_databases.btsnoop: no generation 3\n")
    }

    static let meshCapture = CLI.corpus.deletingLastPathComponent().appendingPathComponent("mesh/meshparser_provisioning.cap").path

    /// 36 #7 on the real capture (no licence: read, never copied): nimble-mesh-node
    /// 27:fc:9c:88:38:a2 is provisioned on 0x081e (Provisioning service at 0x0010–0xffff) and
    /// reached through its proxy on 0x09c0 (Proxy service at 0x000a–0xffff, discovered at
    /// #995): `gatt` merged both, overlapping. Two generations now, neither overlapping.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: meshCapture), "needs ../shared/captures/mesh"))
    func meshNodeDatabasesOnTheRealCapture() throws {
        let json = try CLI.run(["gatt", "--format", "json", Self.meshCapture])
        let top = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let dev = try #require((top["devices"] as? [[String: Any]])?.first { $0["address"] as? String == "27:fc:9c:88:38:a2" })
        func services(_ o: [String: Any]) -> [(String, Int, Int)] {
            ((o["services"] as? [[String: Any]]) ?? []).map { ($0["uuid"] as? String ?? "", $0["start"] as? Int ?? -1, $0["end"] as? Int ?? -1) }
        }
        let last = services(dev), first = services(try #require((dev["earlier_generations"] as? [[String: Any]])?.first))
        #expect(dev["generation"] as? Int == 2 && dev["first_frame"] as? Int == 995)
        #expect(last.map(\.0) == ["1800", "1801", "1828"] && last.last?.1 == 0x000a)
        #expect(first.map(\.0) == ["1800", "1801", "1827"] && first.last?.1 == 0x0010)
        for gen in [first, last] {
            #expect(zip(gen, gen.dropFirst()).allSatisfy { $0.2 < $1.1 }, "overlapping services: \(gen)")
        }
        let dump = try CLI.run(["dump", "--format", "jsonl", "--frames", "492,1047", Self.meshCapture])
        #expect(dump.stdout.contains("\"handle\":18,\"value\":\"030005\",\"service\":\"1827\",\"service_name\":\"Mesh Provisioning Service\",\"characteristic\":\"2adb\",\"characteristic_name\":\"Mesh Provisioning Data In\""))
        #expect(dump.stdout.contains("\"handle\":12,\"value\":\"006996e5d7bd765544e420d66db4d7213a27dd187a28\",\"service\":\"1828\",\"service_name\":\"Mesh Proxy Service\",\"characteristic\":\"2add\",\"characteristic_name\":\"Mesh Proxy Data In\""))
    }
}
