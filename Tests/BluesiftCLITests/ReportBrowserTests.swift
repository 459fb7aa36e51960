import Testing
import Foundation

/// `bluesift report` pages opened in a real browser (Debian's chromium, headless, from the
/// Makefile's test packages): the script ran without errors, and what the page shows equals
/// `stats --format json` and the JSON Lines dump.
struct Chromium {
    static let path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The DOM after the page's script ran (`--dump-dom`), or a screenshot when `png` is given.
    static func run(_ url: String, png: String? = nil, width: Int = 1400, height: Int = 900) throws -> (dom: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path!)
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-chromium-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        var args = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=5000", "--window-size=\(width),\(height)"
        ]
        if let png { args += ["--screenshot=" + png, "--hide-scrollbars"] } else { args.append("--dump-dom") }
        p.arguments = args + [url]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }
}

@Suite(.serialized) struct ReportBrowserTests {
    /// The bundled capture, an Android btsnoop, a sniffer pcapng, a PacketLogger file.
    static let captures: [String] = [
        CLI.capture("band_mtu23.btsnoop"),
        CLI.corpus.appendingPathComponent("blefun_btsnoop_hci.log").path,
        CLI.corpus.appendingPathComponent("tesible_mouse.pcapng").path,
        CLI.corpus.appendingPathComponent("bafang_bluetoothd-hci-latest.pklg").path,
        CLI.capture("crackle_le_secure_connections.pcapng"),
        CLI.capture("hciparse_test00.pklg")
    ]

    static func attr(_ dom: String, id: String, _ name: String) -> String? {
        guard let r = dom.range(of: "id=\"\(id)\"") else { return nil }
        // The element's start tag around the id.
        let start = dom[..<r.lowerBound].lastIndex(of: "<") ?? r.lowerBound
        let end = dom[r.upperBound...].firstIndex(of: ">") ?? dom.endIndex
        let tag = dom[start..<end]
        guard let a = tag.range(of: name + "=\"") else { return nil }
        return String(tag[a.upperBound...].prefix { $0 != "\"" })
    }

    static func matches(_ s: String, _ pattern: String) -> [[String]] {
        let re = try! NSRegularExpression(pattern: pattern)
        return re.matches(in: s, range: NSRange(s.startIndex..., in: s)).map { m in
            (0..<m.numberOfRanges).map { Range(m.range(at: $0), in: s).map { String(s[$0]) } ?? "" }
        }
    }

    func report(_ capture: String) throws -> (html: String, stats: [String: Any]) {
        let html = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-report-\(UUID().uuidString).html").path
        let r = try CLI.run(["report", capture, "-o", html])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try CLI.run(["stats", "--format", "json", capture])
        let stats = try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as! [String: Any]
        return (html, stats)
    }

    @Test(.enabled(if: Chromium.path != nil), arguments: captures)
    func pageShowsTheNumbersOfStats(_ capture: String) throws {
        let (html, stats) = try report(capture)
        defer { try? FileManager.default.removeItem(atPath: html) }
        let (dom, log) = try Chromium.run("file://" + html + "#view=all")
        #expect(Self.attr(dom, id: "title", "id") != nil, "page did not render: \(log.suffix(500))")
        #expect(dom.contains("data-ready=\"1\""), "script did not finish: \(log.suffix(800))")
        #expect(dom.contains("<pre id=\"script-errors\" hidden=\"\"></pre>"), "script errors in \(capture)")
        #expect(!log.contains("Uncaught"), "\(log)")
        // Nothing from the network: no src/href to another origin.
        #expect(Self.matches(try String(contentsOfFile: html, encoding: .utf8), #"(src|href)="(https?:)?//"#).isEmpty)

        let counts = stats["counts"] as! [String: Any]
        let devices = (stats["devices"] as! [Any]).count + (stats["devices_not_listed"] as! Int)
        #expect(Self.attr(dom, id: "n-devices", "data-value") == String(devices))
        #expect(Self.attr(dom, id: "n-connections", "data-value") == String((stats["connections"] as! [Any]).count))
        #expect(Self.attr(dom, id: "n-errors", "data-value") == String((counts["att_errors"] as! Int) - (counts["discovery_ends"] as! Int)))
        #expect(Self.attr(dom, id: "n-att", "data-value") == String(counts["att"] as! Int))

        // The per-characteristic table: each row's counts equal stats'.
        let chars = stats["characteristics"] as! [[String: Any]]
        let rows = Self.matches(dom, #"<tr data-char="(\d+)"[^>]*>(.*?)</tr>"#)
        #expect(rows.count == chars.count)
        for row in rows {
            let c = chars[Int(row[1])!]
            for (cls, key) in [
                ("reads", "reads"), ("wreq", "write_requests"), ("wcmd", "write_commands"),
                ("notif", "notifications"), ("ind", "indications"), ("errs", "errors")
            ] {
                let cell = Self.matches(row[2], #"<td class="n \#(cls)[^"]*">(\d+)</td>"#).first?[1]
                #expect(cell == String(c[key] as! Int), "\(capture) char \(row[1]) \(key)")
            }
            // Latencies in the units dump and stats use: µs below 10 ms, whole ms above; on a
            // millisecond clock (bafang's PacketLogger file) "<1 ms" and whole ms.
            if let l = c["latency"] as? [String: Any] {
                let msClock = stats["millisecond_clock"] as? Bool == true
                func text(_ us: Int) -> String {
                    if msClock { let ms = (us + 500) / 1000; return ms == 0 ? "<1 ms" : "\(ms) ms" }
                    return us < 10_000 ? "\(us) µs" : "\(us / 1000) ms"
                }
                let shown = ["min_us", "median_us", "p95_us", "max_us"].map { text(l[$0] as! Int) }.joined(separator: " / ")
                    .replacingOccurrences(of: "<", with: "&lt;") // as the DOM holds it
                #expect(row[2].contains(">\(shown) (\(l["count"] as! Int))</td>"), "\(capture) char \(row[1]) latency")
            }
        }

        // Problems: one list item per listed problem, each linking to its own frame.
        let problems = stats["problems"] as! [[String: Any]]
        let items = Self.matches(dom, ##"<li data-kind="([a-z0-9_]+)" data-frame="(\d+)"><a href="#frame=(\d+)""##)
        #expect(items.count == problems.count)
        for (item, p) in zip(items, problems) {
            #expect(item[2] == String(p["frame"] as! Int) && item[3] == item[2] && item[1] == p["kind"] as! String)
        }
    }

    /// Issue 27: a Classic capture's report showed one connection bar and nothing else. Its
    /// channels (stats' classic table) have a view and a count, and its SDP, AVDTP, AVRCP and
    /// HFP PDUs are sequence rows (A2DP media packets are not); a frame link lands on them.
    @Test(.enabled(if: Chromium.path != nil))
    func classicReportShowsProfiles() throws {
        let (html, stats) = try report(CLI.capture("classic_a2dp_hfp.btsnoop"))
        defer { try? FileManager.default.removeItem(atPath: html) }
        let (dom, log) = try Chromium.run("file://" + html + "#view=all")
        #expect(dom.contains("data-ready=\"1\"") && !log.contains("Uncaught"), "\(log.suffix(800))")
        #expect(Self.attr(dom, id: "n-classic", "data-value") == "7")
        let rows = Self.matches(dom, #"<tr data-profile="([^"]+)">(.*?)</tr>"#)
        #expect(rows.map { $0[1] } == ["SDP", "AVDTP", "AVRCP", "A2DP media", "RFCOMM", "RFCOMM", "SCO"])
        #expect(rows[5][2].contains("<td class=\"\">RFCOMM DLCI 2 (channel 1, Handsfree)</td><td class=\"n\">36</td><td class=\"n\">11</td><td class=\"n\">22</td>"), "\(rows[5][2])")
        #expect((stats["classic"] as? [Any])?.count == 7)
        // 8 SDP + 16 AVDTP signals + 15 AVRCP + 46 RFCOMM frames (AT lines among them): 85 rows.
        #expect(dom.contains("showing 85 of 85 operations"))
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("[136,307170,0,0,512,-1,-1,-1,0,0,\"\",\"AVDTP Start Command tid=5 ACP SEID 2\",0,0]"))
        let (landed, _) = try Chromium.run("file://" + html + "#frame=136")
        #expect(landed.contains("data-target=\"136\""))
        #expect(Self.matches(landed, #"id="row-136"[^>]*>"#).count == 1)
    }

    /// Lane labels take the room the longest needs (they were cut at 34 characters: "[LG]
    /// webOS TV UN85006LA 4f:35:ed:6"); past 400 units a name gives way to its address.
    @Test(.enabled(if: Chromium.path != nil && FileManager.default.fileExists(atPath: CLI.corpus.appendingPathComponent("novax_btsnoop_hci.log").path)))
    func laneLabelsAreWhole() throws {
        let (html, _) = try report(CLI.corpus.appendingPathComponent("novax_btsnoop_hci.log").path)
        defer { try? FileManager.default.removeItem(atPath: html) }
        let (dom, _) = try Chromium.run("file://" + html)
        let labels = Self.matches(dom, #"class="lane-label">([^<]*)<title>([^<]*)</title>"#)
        #expect(labels.contains { $0[1] == "[LG] webOS TV UN85006LA 4f:35:ed:61:3e:ba" && $0[2] == $0[1] }, "\(labels.map { $0[1] })")
        #expect(labels.contains { $0[1] == "Venus_2C4CC63D9E4F 2c:4c:c6:3d:9e:4f" })
        #expect(labels.allSatisfy { $0[1] == $0[2] })
    }

    /// An error link lands on its frame in the sequence view (the row is rendered and marked).
    @Test(
        .enabled(if: Chromium.path != nil),
        arguments: [
            CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path,
            CLI.corpus.appendingPathComponent("tesible_mouse.pcapng").path,
            CLI.corpus.appendingPathComponent("pogoplus_bt_log_plus_pair.log").path
        ])
    func errorLinksLandOnTheirFrame(_ capture: String) throws {
        let (html, stats) = try report(capture)
        defer { try? FileManager.default.removeItem(atPath: html) }
        let errors = (stats["problems"] as! [[String: Any]]).filter { $0["kind"] as? String == "att_error" }
        try #require(!errors.isEmpty, "\(capture) has no ATT error to follow")
        for e in [errors.first!, errors.last!] {
            let f = e["frame"] as! Int
            let (dom, _) = try Chromium.run("file://" + html + "#frame=\(f)")
            #expect(dom.contains("data-target=\"\(f)\""), "\(capture): link to frame \(f) landed elsewhere")
            // The row is in the DOM, marked, and is the error.
            #expect(Self.matches(dom, #"<div class="row err[^"]* target" data-frame="\#(f)""#).count == 1)
            #expect(dom.contains("id=\"view-sequence\" class=\"view on\""))
        }
    }

    /// A million-row page stays a few dozen DOM rows: the sequence view renders a window.
    @Test(.enabled(if: Chromium.path != nil)) func sequenceViewIsWindowed() throws {
        let capture = CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path
        let (html, stats) = try report(capture)
        defer { try? FileManager.default.removeItem(atPath: html) }
        let att = (stats["counts"] as! [String: Any])["att"] as! Int
        #expect(att > 1000)
        let (dom, _) = try Chromium.run("file://" + html + "#view=sequence")
        let rows = Self.matches(dom, #"<div class="row[^"]*" data-frame="#).count
        #expect(rows > 10 && rows < 100, "\(rows) rows in the DOM for \(att) operations")
        let shown = Self.matches(dom, #"showing ([0-9,]+) of ([0-9,]+) operations"#).first
        #expect(shown?[1] == shown?[2] && Int(shown?[1].replacingOccurrences(of: ",", with: "") ?? "") ?? 0 >= att)
    }

    @Test(.enabled(if: Chromium.path != nil)) func replayReportShowsStepsAndDifferences() throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-replay-\(UUID().uuidString).json").path
        let html = json + ".html"
        defer { try? FileManager.default.removeItem(atPath: json); try? FileManager.default.removeItem(atPath: html) }
        let replay = """
            {"complete": true, "device": "c0:ba:0d:00:00:01",
             "remapped": [{"from": 16, "to": 19, "service": "180f", "characteristic": "2a19"}],
             "steps": [
              {"index": 0, "frame": 118, "kind": "write", "op": "Write Request", "handle": 34, "live_handle": 34, "sent": "0106", "status": "match", "differences": [], "answers": ["Write Response"]},
              {"index": 1, "frame": 124, "kind": "read", "op": "Read Request", "handle": 16, "live_handle": 19, "characteristic": "Battery Level", "status": "mismatch",
               "differences": [{"status": "mismatch", "what": "value", "handle": 16, "expected": "battery 87%", "got": "battery 12%"}], "answers": []}],
             "summary": {"steps": 2, "matched": 1, "mismatched": 1, "missing": 0, "unexpected": 0}}
            """
        try replay.write(toFile: json, atomically: true, encoding: .utf8)
        let r = try CLI.run(["report", json, "-o", html])
        #expect(r.status == 0, "\(r.stderr)")
        let (dom, _) = try Chromium.run("file://" + html + "#view=all")
        #expect(dom.contains("data-ready=\"1\""))
        #expect(Self.attr(dom, id: "n-mismatched", "data-value") == "1")
        #expect(dom.contains("<tr data-step=\"1\" data-status=\"mismatch\">"))
        // Field-level difference: only the differing characters are highlighted.
        #expect(dom.contains("battery <span class=\"diff-del\">87</span>%"))
        #expect(dom.contains("battery <span class=\"diff-add\">12</span>%"))
        #expect(dom.contains("0x0010</td><td class=\"mono\">0x0013"))
    }
}

@Suite struct ReportCLITests {
    @Test func refusesToOverwriteItsInput() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-same-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let copy = dir.appendingPathComponent("c.btsnoop").path
        try FileManager.default.copyItem(atPath: CLI.capture("band_mtu23.btsnoop"), toPath: copy)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        let r = try CLI.run(["report", copy, "-o", copy])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("bluesift: "))
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
    }

    @Test func reportIsSelfContainedAndAtomic() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-rep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("r.html").path
        let r = try CLI.run(["report", CLI.capture("band_mtu23.btsnoop"), "-o", out])
        #expect(r.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["r.html"])
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        // The only URL is the SVG namespace name, never fetched.
        #expect(html.components(separatedBy: "http://").count == 2 && html.contains("'http://www.w3.org/2000/svg'"))
        #expect(!html.contains("https://"))
        #expect(html.contains("\"characteristic_name\":\"Battery Level\""))
    }
}
