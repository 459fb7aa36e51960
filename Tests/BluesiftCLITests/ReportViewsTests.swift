import Foundation
import Testing

/// The report's protocol views: embedded only when the capture has their data; the Mesh view
/// against `stats --format json` in headless Chromium; the Fuzz view of `bluesift fuzz`'s
/// findings (issue 42).
@Suite(.serialized) struct ReportViewsTests {
    static let whad = CLI.capture("whad_btmesh_provisionning.pcap")
    static let android = CLI.root.deletingLastPathComponent().appendingPathComponent("shared/captures/mesh/meshparser_provisioning.cap").path
    static let leAudio = CLI.root.appendingPathComponent("Tests/LEAudio/le_audio_unicast.btsnoop").path
    /// Written by `bluesift fuzz` against Tests/VirtualDevice/fault_band.py (README there).
    static let findings = CLI.root.appendingPathComponent("Tests/Fixtures/fuzz-findings").path

    static func temp(_ ext: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-views-\(UUID().uuidString).\(ext)").path
    }

    /// The HTML of `bluesift report ARGS`.
    static func html(_ args: [String]) throws -> String {
        let out = temp("html")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["report"] + args + ["-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        return try String(contentsOfFile: out, encoding: .utf8)
    }

    /// The page as Chromium rendered it, every view built.
    static func dom(_ args: [String]) throws -> String {
        let out = temp("html")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["report"] + args + ["-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        let (dom, log) = try Chromium.run("file://" + out + "#view=all")
        #expect(dom.contains("data-ready=\"1\""), "script did not finish: \(log.suffix(800))")
        #expect(dom.contains("<pre id=\"script-errors\" hidden=\"\"></pre>"), "script errors: \(log.suffix(800))")
        #expect(!log.contains("Uncaught"), "\(log)")
        return dom
    }

    static func keyFile() throws -> String {
        let path = temp("json")
        try #"{"iv_index": "00000000", "net_keys": ["99d89627bc96d8e49c62cf0ad76624ca"], "app_keys": ["12121212121212121212121212121212"]}"#.write(
            toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func mesh(_ args: [String]) throws -> [String: Any] {
        let s = try CLI.run(["stats", "--format", "json"] + args)
        #expect(s.status == 0, "\(s.stderr)")
        return try #require((try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any])?["mesh"] as? [String: Any])
    }

    // The views' first lines, as each module writes them.
    static let markers = ["le_audio": "// ---------- LE Audio ----------", "mesh": "// ---------- Mesh ----------", "classic": "// ---------- Classic ----------"]

    @Test func onlyTheViewsOfModulesWithDataAreEmbedded() throws {
        let plain = try Self.html([CLI.capture("band_mtu23.btsnoop")])
        #expect(Self.markers.values.allSatisfy { !plain.contains($0) })
        #expect(!plain.contains("id=\"fuzz\""))
        let audio = try Self.html([Self.leAudio])
        #expect(audio.contains(Self.markers["le_audio"]!) && !audio.contains(Self.markers["mesh"]!) && !audio.contains(Self.markers["classic"]!))
        let mesh = try Self.html([Self.whad])
        #expect(mesh.contains(Self.markers["mesh"]!) && !mesh.contains(Self.markers["le_audio"]!))
    }
}

extension ReportViewsTests {
    /// The Mesh view of the WHAD capture with its keys: every node, source → destination pair,
    /// provisioning step and beacon run the page shows is stats' `mesh` member's.
    @Test(.enabled(if: Chromium.path != nil, "Debian's chromium is not installed"))
    func meshViewShowsTheNetworkOfStats() throws {
        let keys = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let m = try Self.mesh(["--mesh-keys", keys, Self.whad])
        let dom = try Self.dom(["--mesh-keys", keys, Self.whad])
        #expect(dom.contains("id=\"tab-mesh\""))
        #expect(ReportBrowserTests.attr(dom, id: "n-mesh-nodes", "data-value") == "\((m["nodes"] as! [Any]).count)")

        // Nodes: address, elements (unknown here: no Composition Data Status), messages, bearer.
        let nodes = ReportBrowserTests.matches(dom, #"<tr data-address="(\d+)"><td class="mono">(0x[0-9a-f]{4})</td><td class="n">([^<]*)</td><td class="n">(\d+)</td><td class="">([^<]*)</td>"#)
        let statsNodes = m["nodes"] as! [[String: Any]]
        #expect(nodes.map { [$0[1], $0[4]] } == statsNodes.map { ["\($0["address"] as! Int)", "\($0["messages"] as! Int)"] })
        #expect(nodes.map { [$0[2], $0[3], $0[5]] } == [["0x0001", "—", "advertising"], ["0x0005", "—", "advertising"]])

        // Traffic: each pair with its count and the message names with theirs.
        let flows = ReportBrowserTests.matches(dom, #"<tr data-src="(\d+)" data-dst="(\d+)" data-messages="(\d+)">(.*?)</tr>"#)
        let traffic = m["traffic"] as! [[String: Any]]
        #expect(flows.map { [$0[1], $0[2], $0[3]] } == traffic.map { ["\($0["src"] as! Int)", "\($0["dst"] as! Int)", "\($0["messages"] as! Int)"] })
        for (row, f) in zip(flows, traffic) {
            let ops = ReportBrowserTests.matches(row[4], #"class="mesh-op" data-name="([^"]+)" data-messages="(\d+)""#)
            #expect(ops.map { [$0[1], $0[2]] } == (f["by_opcode"] as! [[String: Any]]).map { [$0["name"] as! String, "\($0["messages"] as! Int)"] })
        }
        #expect(flows.map { [$0[1], $0[2], $0[3]] } == [["1", "5", "30"], ["5", "1", "35"]])
        #expect(dom.contains(#"data-name="Generic OnOff Set" data-messages="3">, 3 × Generic OnOff Set"#))

        // Provisioning: the PB-ADV session, its steps in order with their frames, the outcome.
        let sessions = ReportBrowserTests.matches(dom, #"data-link="([^"]+)" data-outcome="([^"]+)" data-pdus="(\d+)""#)
        let prov = m["provisioning"] as! [[String: Any]]
        #expect(sessions.map { [$0[1], $0[2], $0[3]] } == prov.map { [$0["link"] as! String, $0["outcome"] as! String, "\($0["pdus"] as! Int)"] })
        let steps = ReportBrowserTests.matches(dom, #"class="mesh-step[^"]*" data-frame="(\d+)" data-name="([^"]+)""#)
        #expect(steps.map { [$0[1], $0[2]] } == (prov[0]["steps"] as! [[String: Any]]).map { ["\($0["frame"] as! Int)", $0["name"] as! String] })
        #expect(steps.first.map { [$0[1], $0[2]] } == ["5", "Link Open"])
        #expect(steps.contains { $0[1] == "162" && $0[2] == "Provisioning Complete" })
        #expect(steps.last.map { [$0[1], $0[2]] } == ["175", "Link Close (Success)"])

        // Secure beacons: one run per state, its IV index and count.
        let runs = ReportBrowserTests.matches(dom, #"<tr data-network="([0-9a-f]+)" data-iv-index="(\d+)" data-beacons="(\d+)">"#)
        let beacons = m["secure_beacons"] as! [[String: Any]]
        #expect(runs.map { [$0[1], $0[2], $0[3]] } == beacons.map { [$0["network_id"] as! String, "\($0["iv_index"] as! Int)", "\($0["beacons"] as! Int)"] })
        #expect(runs.map { [$0[1], $0[2], $0[3]] } == [["2373d79ef0cce44c", "0", "3"]])
        #expect(ReportBrowserTests.matches(dom, #"class="mesh-beacon-run" data-iv-index="0" data-beacons="3""#).count == 1)
        #expect(dom.contains("id=\"mesh-problems\">No mesh problems"))
    }

    /// Without keys (the Android PB-GATT capture): three sessions, the first incomplete, and the
    /// network PDUs that stayed encrypted said as a problem to act on.
    @Test(.enabled(if: Chromium.path != nil && FileManager.default.fileExists(atPath: android), "needs chromium and ../shared/captures/mesh"))
    func meshViewOfAProxySessionWithoutKeys() throws {
        let m = try Self.mesh([Self.android])
        let dom = try Self.dom([Self.android])
        let sessions = ReportBrowserTests.matches(dom, #"data-link="([^"]+)" data-outcome="([^"]+)" data-pdus="(\d+)""#)
        #expect(sessions.map { [$0[1], $0[2], $0[3]] } == (m["provisioning"] as! [[String: Any]]).map { [$0["link"] as! String, $0["outcome"] as! String, "\($0["pdus"] as! Int)"] })
        #expect(sessions.map { [$0[1], $0[2], $0[3]] } == [["pb-gatt", "incomplete", "5"], ["pb-gatt", "complete", "11"], ["pb-gatt", "complete", "11"]])
        #expect(dom.contains("<li data-kind=\"not_decrypted\" class=\"mut\">not decrypted: \(m["not_decrypted"] as! Int) network PDUs stayed encrypted"))
        #expect(m["not_decrypted"] as? Int == 30)
        #expect(dom.contains("No node heard"))
    }
}

extension ReportViewsTests {
    /// `report CAPTURE --fuzz DIR`: a Fuzz view with a card per finding of the fuzzer's
    /// findings.json (its reaction, reproduction rate, mutated fields by name, minimised steps);
    /// from the finding-N.json files alone when findings.json is missing.
    @Test(.enabled(if: Chromium.path != nil, "Debian's chromium is not installed"))
    func fuzzFindingsBecomeAFuzzView() throws {
        let summary = try #require(
            FileManager.default.contents(atPath: Self.findings + "/findings.json").flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        let findings = summary["findings"] as! [[String: Any]]
        #expect(findings.count == 4)
        let dom = try Self.dom([CLI.capture("band_mtu23.btsnoop"), "--fuzz", Self.findings])
        #expect(ReportBrowserTests.matches(dom, #"id="tab-fuzz"[^>]*>Fuzz \(4\)</a>"#).count == 1)
        #expect(ReportBrowserTests.attr(dom, id: "n-fuzz-findings", "data-value") == "4")
        #expect(dom.contains("band_mtu23.btsnoop · seed 1 · 160 variants (first round 100) · 209 connections · 4 findings in " + Self.findings))
        let cards = ReportBrowserTests.matches(
            dom, #"id="fuzz-finding-(\d+)" data-kind="([a-z_]+)" data-code="(\d*)" data-reproduced="(\d+)" data-runs="(\d+)" data-steps="(\d+)"[^>]*>(.*?)<div class="mono fuzz-files""#)
        #expect(
            cards.map { Array($0[1...6]) }
                == findings.map { f in
                    let r = f["reaction"] as! [String: Any]
                    return ["\(f["id"] as! Int)", r["kind"] as! String, (r["code"] as? Int).map { "\($0)" } ?? "", "\(f["reproduced"] as! Int)", "\(f["runs"] as! Int)", "\((f["steps"] as! [Any]).count)"]
                })
        #expect(cards.map { $0[2] } == ["timeout", "error", "reset", "disconnect"])
        // The reactions in words, the rate, the mutated field by name, each step as sent.
        let disconnect = try #require(cards.first { $0[1] == "4" })[7]
        #expect(disconnect.contains("<span class=\"err fuzz-reaction\">disconnect: Remote User Terminated Connection (0x13)</span>"))
        #expect(disconnect.contains("reproduced in 3 of 3 runs (100 %)"))
        #expect(disconnect.contains(#"<span class="fuzz-field" data-field="day" data-value="40">sport_data.day = 40</span>"#))
        #expect(disconnect.contains("found by variant 88 (seed 1); the reaction came at its step 9 of 13; minimised to 1 step after the recorded set-up"))
        #expect(disconnect.contains(#"<tr data-step="1" class="fuzz-mutated"><td class="n">1</td><td class="mono" style="word-break:break-all">write (command) 36f5 a508040628000087</td><td class="n">11</td>"#))
        let error = try #require(cards.first { $0[1] == "2" })[7]
        #expect(error.contains("error: Invalid Attribute Value Length (0x0d), on Prepare Write queue of 36f5"))
        #expect(error.contains("prepare_queue 36f5 ×64 414141414141414141414141414141414141"))
        let reset = try #require(cards.first { $0[1] == "3" })[7]
        #expect(ReportBrowserTests.matches(reset, #"<tr data-step="(\d)""#).map { $0[1] } == ["1", "2"])
        #expect(reset.contains("<td class=\"mut\" style=\"word-break:break-all\">as recorded</td>"))
        #expect(dom.contains("bluesift replay \(Self.findings)/finding-4.btsnoop --transport …"))

        // Without findings.json: the same cards from finding-1…4.json.
        let dir = Self.temp("d")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for n in 1...4 { try FileManager.default.copyItem(atPath: Self.findings + "/finding-\(n).json", toPath: dir + "/finding-\(n).json") }
        let partial = try Self.dom([CLI.capture("band_mtu23.btsnoop"), "--fuzz", dir])
        let again = ReportBrowserTests.matches(partial, #"id="fuzz-finding-(\d+)" data-kind="([a-z_]+)" data-code="(\d*)" data-reproduced="(\d+)" data-runs="(\d+)" data-steps="(\d+)""#)
        #expect(again.map { Array($0[1...6]) } == cards.map { Array($0[1...6]) })
    }

    @Test func fuzzWithoutFindingsIsRefused() throws {
        let empty = Self.temp("d")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let out = Self.temp("html")
        let r = try CLI.run(["report", CLI.capture("band_mtu23.btsnoop"), "--fuzz", empty, "-o", out])
        #expect(r.status == 2)
        #expect(r.stderr == "bluesift: --fuzz \(empty): no findings.json or finding-N.json of bluesift fuzz\n")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
