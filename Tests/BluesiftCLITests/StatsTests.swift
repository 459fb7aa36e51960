import Testing
import Foundation

/// Counts recomputed from the JSON Lines dump, the way a user would with jq.
struct JSONLCounts: Equatable, CustomStringConvertible {
    var records = 0, truncated = 0, att = 0, attErrors = 0, smp = 0, smpPairingFailed = 0
    var hciCommandsFailed = 0, reassembly = 0
    var reads = 0, writeRequests = 0, writeCommands = 0, notifications = 0, indications = 0
    /// (conn handle, attribute handle) → [reads, wreq, wcmd, notif, ind, errors, bytes→, bytes←, latencies]
    var perHandle: [String: [Int]] = [:]
    var advertisers: Set<String> = []
    /// Classic totals [sdp, avdtp signals, media, avrcp cmds, avrcp resps, rfcomm, at cmds, at results, sco]
    var classic = [Int](repeating: 0, count: 9)
    /// (conn handle, profile, dlci) → [frames, commands, responses, bytes]
    var perClassic: [String: [Int]] = [:]

    var description: String {
        "records \(records) truncated \(truncated) att \(att) errors \(attErrors) smp \(smp) failed \(smpPairingFailed) hci \(hciCommandsFailed) reasm \(reassembly) r \(reads) wr \(writeRequests) wc \(writeCommands) n \(notifications) i \(indications) handles \(perHandle.count) adv \(advertisers.count) classic \(classic) channels \(perClassic.count)"
    }

    static func fromDump(_ jsonl: String) -> JSONLCounts {
        var c = JSONLCounts()
        for line in jsonl.split(separator: "\n") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            c.records += 1
            if o["truncated"] as? Bool == true { c.truncated += 1 }
            for e in o["errors"] as? [[String: Any]] ?? [] where e["code"] as? String == "reassembly" { c.reassembly += 1 }
            if let h = o["hci"] as? [String: Any], o["kind"] as? String == "event",
                let op = h["opcode"] as? Int, op == 0x0E || op == 0x0F,
                let st = h["status"] as? Int, st != 0, let cmd = h["command_opcode"] as? Int, cmd != 0
            {
                c.hciCommandsFailed += 1
            }
            if let s = o["smp"] as? [String: Any] {
                c.smp += 1
                if s["opcode"] as? Int == 5 { c.smpPairingFailed += 1 }
            }
            if let adv = o["adv"] as? [String: Any] {
                for r in adv["reports"] as? [[String: Any]] ?? [adv] { if let a = r["address"] as? String { c.advertisers.insert(a) } }
            }
            if let conn = o["conn"] as? Int { c.addClassic(o, conn: conn) }
            guard let a = o["att"] as? [String: Any], let conn = o["conn"] as? Int else { continue }
            c.att += 1
            let op = a["opcode"] as? Int ?? -1
            let discoveryEnd = op == 1 && a["error"] as? Int == 0x0A && [4, 6, 8, 16].contains(a["request_opcode"] as? Int ?? 0)
            let handle = a["handle"] as? Int ?? a["request_handle"] as? Int ?? (discoveryEnd ? nil : a["error_handle"] as? Int)
            let valueBytes = (a["value"] as? String).map { $0.count / 2 } ?? 0
            if op == 1 { c.attErrors += 1 }
            guard let handle else { continue }
            let key = "\(conn)/\(handle)"
            var v = c.perHandle[key] ?? [Int](repeating: 0, count: 9)
            switch op {
            case 0x0A, 0x0C: v[0] += 1; c.reads += 1
            case 0x12: v[1] += 1; v[6] += valueBytes; c.writeRequests += 1
            case 0x52, 0xD2: v[2] += 1; v[6] += valueBytes; c.writeCommands += 1
            case 0x16: v[6] += valueBytes
            case 0x1B: v[3] += 1; v[7] += valueBytes; c.notifications += 1
            case 0x1D: v[4] += 1; v[7] += valueBytes; c.indications += 1
            case 0x0B, 0x0D: v[7] += valueBytes
            case 0x01: v[5] += 1
            default: break
            }
            if a["latency_us"] != nil, op != 0x1E { v[8] += 1 }
            c.perHandle[key] = v
        }
        return c
    }

    /// The Classic counts of docs/stats.md, from one JSON Lines record.
    mutating func addClassic(_ o: [String: Any], conn: Int) {
        var profile: String?, dlci = -1, cmds = 0, resps = 0, bytes = (o["l2cap"] as? [String: Any])?["length"] as? Int ?? 0
        if let s = o["sdp"] as? [String: Any] {
            profile = "SDP"; classic[0] += 1
            if [2, 4, 6].contains(s["opcode"] as? Int ?? 0) { cmds = 1 } else { resps = 1 }
        } else if let a = o["avdtp"] as? [String: Any] {
            if a["name"] as? String == "Media" { profile = "A2DP media"; classic[2] += 1 } else { profile = "AVDTP"; classic[1] += 1; if a["message_type"] as? Int == 0 { cmds = 1 } else { resps = 1 } }
        } else if let a = o["avrcp"] as? [String: Any] {
            profile = "AVRCP"
            if a["response"] as? Bool == true { resps = 1; classic[4] += 1 } else { cmds = 1; classic[3] += 1 }
        } else if let f = o["rfcomm"] as? [String: Any] {
            profile = "RFCOMM"; dlci = f["dlci"] as? Int ?? -2; bytes = f["length"] as? Int ?? 0; classic[5] += 1
            for l in o["hfp"] as? [[String: Any]] ?? [] {
                if ["result", "final"].contains(l["type"] as? String ?? "") { resps += 1 } else { cmds += 1 }
            }
            classic[6] += cmds; classic[7] += resps
        } else if o["kind"] as? String == "sco" {
            profile = "SCO"; classic[8] += 1; bytes = (o["hci"] as? [String: Any])?["length"] as? Int ?? 0
        }
        guard let profile else { return }
        let key = "\(conn)/\(profile)/\(dlci)"
        var v = perClassic[key] ?? [0, 0, 0, 0]
        v[0] += 1; v[1] += cmds; v[2] += resps; v[3] += bytes
        perClassic[key] = v
    }

    static func fromStats(_ json: String) -> JSONLCounts {
        var c = JSONLCounts()
        guard let o = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let k = o["counts"] as? [String: Int]
        else { return c }
        c.records = o["records"] as? Int ?? -1
        c.truncated = o["truncated_records"] as? Int ?? -1
        c.att = k["att"]!; c.attErrors = k["att_errors"]!; c.smp = k["smp"]!; c.smpPairingFailed = k["smp_pairing_failed"]!
        c.hciCommandsFailed = k["hci_commands_failed"]!; c.reassembly = k["reassembly_errors"]!
        c.reads = k["reads"]!; c.writeRequests = k["write_requests"]!; c.writeCommands = k["write_commands"]!
        c.notifications = k["notifications"]!; c.indications = k["indications"]!
        let conns = o["connections"] as? [[String: Any]] ?? []
        c.classic = [
            "sdp", "avdtp_signals", "avdtp_media", "avrcp_commands", "avrcp_responses", "rfcomm_frames",
            "hfp_commands", "hfp_results", "sco_packets"
        ].map { k[$0]! }
        for ch in o["classic"] as? [[String: Any]] ?? [] {
            let conn = conns[ch["connection"] as! Int]["handle"] as! Int
            let key = "\(conn)/\(ch["profile"] as! String)/\(ch["dlci"] as? Int ?? -1)"
            var v = c.perClassic[key] ?? [0, 0, 0, 0]
            for (i, name) in ["frames", "commands", "responses", "bytes"].enumerated() { v[i] += ch[name] as? Int ?? 0 }
            c.perClassic[key] = v
        }
        for ch in o["characteristics"] as? [[String: Any]] ?? [] {
            let conn = conns[ch["connection"] as! Int]["handle"] as! Int
            let key = "\(conn)/\(ch["handle"] as! Int)"
            var v = c.perHandle[key] ?? [Int](repeating: 0, count: 9)
            for (i, name) in [
                "reads", "write_requests", "write_commands", "notifications", "indications", "errors",
                "bytes_to_server", "bytes_from_server"
            ].enumerated() { v[i] += ch[name] as? Int ?? 0 }
            v[8] += (ch["latency"] as? [String: Any])?["count"] as? Int ?? 0
            c.perHandle[key] = v
        }
        for d in o["devices"] as? [[String: Any]] ?? [] where (d["advertising_reports"] as? Int ?? 0) > 0 { c.advertisers.insert(d["address"] as! String) }
        return c
    }
}

@Suite struct StatsTests {
    static var corpusFiles: [String] {
        let dirs = [CLI.captures.path, CLI.corpus.path]
        var out: [String] = []
        for d in dirs {
            for n in ((try? FileManager.default.contentsOfDirectory(atPath: d)) ?? []).sorted()
            where !n.hasSuffix(".md") && !n.hasSuffix(".txt") && !n.hasSuffix(".json") { out.append(d + "/" + n) }
        }
        return out
    }

    /// Every count `stats` reports equals the one recomputed from the JSON Lines dump, on every
    /// capture of the repository and of the corpus.
    @Test(arguments: corpusFiles) func statsAgreeWithJSONLines(_ path: String) throws {
        let dump = try CLI.run(["dump", "--format", "jsonl", path])
        let stats = try CLI.run(["stats", "--format", "json", path])
        #expect(dump.status == stats.status)
        guard stats.status == 0 else { return }
        let want = JSONLCounts.fromDump(dump.stdout)
        let got = JSONLCounts.fromStats(stats.stdout)
        #expect(got.records > 0 || path.contains("empty"))
        #expect(got == want, "\(path): stats \(got) vs jsonl \(want)")
        for k in Set(got.perClassic.keys).union(want.perClassic.keys).sorted() where got.perClassic[k] != want.perClassic[k] {
            Issue.record("\(path) classic \(k): stats \(got.perClassic[k] ?? []) jsonl \(want.perClassic[k] ?? [])")
        }
        if got.perHandle != want.perHandle {
            for k in Set(got.perHandle.keys).union(want.perHandle.keys).sorted() where got.perHandle[k] != want.perHandle[k] {
                Issue.record("\(path) \(k): stats \(got.perHandle[k] ?? []) jsonl \(want.perHandle[k] ?? [])")
            }
        }
    }

    @Test func bandCaptureStats() throws {
        let r = try CLI.run(["stats", "--format", "json", CLI.capture("band_mtu23.btsnoop")])
        #expect(r.status == 0)
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let conns = o["connections"] as! [[String: Any]]
        #expect(conns.count == 1)
        #expect(conns[0]["peer"] as? String == "c0:ba:0d:00:00:01")
        #expect(conns[0]["mtu"] as? Int == 23)
        let chars = o["characteristics"] as! [[String: Any]]
        // Battery Level (0x0010): one read, its response 0x57 = 87 %.
        let battery = chars.first { $0["handle"] as? Int == 16 }!
        #expect(battery["characteristic_name"] as? String == "Battery Level")
        #expect(battery["reads"] as? Int == 1)
        #expect(battery["bytes_from_server"] as? Int == 1)
        #expect((battery["latency"] as? [String: Any])?["min_us"] as? Int == 892)
    }

    /// The bundled Classic capture: every profile channel with the counts the script produced.
    @Test func classicChannelsOfTheBundledCapture() throws {
        let r = try CLI.run(["stats", "--format", "csv", "--table", "classic", CLI.capture("classic_a2dp_hfp.btsnoop")])
        #expect(r.status == 0)
        let rows = r.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).dropFirst(4).joined(separator: ",") }
        #expect(
            rows == [
                "SDP,0x0001,,,,8,4,4,300,55,77",
                "AVDTP,0x0019,,,,16,8,8,76,91,281",
                "AVRCP,0x0017,,,,15,7,8,247,124,172",
                "A2DP media,0x0019,,,,12,0,0,7296,140,166",
                "RFCOMM,0x0003,0,,,10,0,0,36,186,287",
                "RFCOMM,0x0003,2,1,Handsfree,36,11,22,467,192,274",
                "SCO,,,,,16,0,0,960,255,270"
            ])
        let text = try CLI.run(["stats", CLI.capture("classic_a2dp_hfp.btsnoop")])
        #expect(text.stdout.contains("classic: 7 channels (SDP 8, AVDTP 16 signals + 12 media, AVRCP 7 commands + 8 responses, RFCOMM 46 frames, AT 11 commands + 22 results, SCO 16)"))
        #expect(text.stdout.contains("RFCOMM DLCI 2 (channel 1, Handsfree)"))
    }

    @Test func csvIsThePerCharacteristicTable() throws {
        let r = try CLI.run(["stats", "--format", "csv", CLI.capture("band_mtu23.btsnoop")])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("file,connection,conn_handle,peer,handle,") == true)
        #expect(lines.contains { $0.contains(",0x0010,180f,Battery Service,2a19,Battery Level,") })
    }

    @Test func textStartsWithCaptureQuality() throws {
        let r = try CLI.run(["stats", CLI.capture("revcar_btsnoop_hci.log")])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let q = try #require(lines.firstIndex(of: "capture quality:"))
        let d = try #require(lines.firstIndex { $0.hasPrefix("devices:") })
        #expect(q < d)
    }

    @Test func missingFileExits2() throws {
        let r = try CLI.run(["stats", "/nonexistent.log"])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("bluesift: "))
    }
}

/// Responses carry the handle and GATT names of the request they answer, and standard values.
@Suite struct ResponseNamingTests {
    func att(_ frame: Int) throws -> [String: Any] {
        let r = try CLI.run(["dump", "--format", "jsonl", "--frames", String(frame), CLI.capture("band_mtu23.btsnoop")])
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        return o["att"] as! [String: Any]
    }

    @Test func readResponseIsNamedByItsRequest() throws {
        let fw = try att(102) // Read Response to #100, Read Request of handle 0x0018
        #expect(fw["request_handle"] as? Int == 0x18)
        #expect(fw["characteristic_name"] as? String == "Firmware Revision String")
        #expect((fw["decoded"] as? [String: Any])?["text"] as? String == "1.4.2")
        let battery = try att(108)
        #expect(battery["request_handle"] as? Int == 0x10)
        #expect(battery["characteristic_name"] as? String == "Battery Level")
        #expect((battery["decoded"] as? [String: Any])?["level"] as? Int == 87)
    }

    @Test func writeResponseIsNamedInText() throws {
        let r = try CLI.run(["dump", "--no-color", "--frames", "72", CLI.capture("revcar_btsnoop_hci.log")])
        #expect(r.stdout.contains("ATT Write Response [ffe0 / ffe4 / Client Characteristic Configuration] (reply to #71 handle 0x0014, 53 ms)"))
    }
}

/// `stats` and `report` take the common filter options: only what passes is counted.
@Suite struct StatsFilterTests {
    @Test func characteristicFilterKeepsOnlyItsRecords() throws {
        let r = try CLI.run(["stats", "--format", "json", "--characteristic", "Battery Level", CLI.capture("band_mtu23.btsnoop")])
        #expect(r.status == 0)
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let chars = o["characteristics"] as! [[String: Any]]
        #expect(!chars.isEmpty && chars.allSatisfy { $0["characteristic"] as? String == "2a19" })
        #expect(chars.contains { $0["handle"] as? Int == 0x10 && $0["reads"] as? Int == 1 })
        #expect((o["records"] as! Int) < 151)
    }
}
