import Testing
import Foundation

/// LE Audio end to end through the binary: the report's LE Audio view in headless Chromium
/// (ASE lanes, stream charts, broadcasts, against `stats --format json`), and `redact` on
/// the Bumble captures of Tests/LEAudio (Broadcast_Code in HCI and BASS, the CSIS SIRK).
@Suite(.serialized) struct LEAudioCLITests {
    static let dir = CLI.root.appendingPathComponent("Tests/LEAudio")
    static let unicast = dir.appendingPathComponent("le_audio_unicast.btsnoop").path
    static let broadcast = dir.appendingPathComponent("le_audio_broadcast_sink.btsnoop").path
    static let control = dir.appendingPathComponent("le_audio_control.btsnoop").path

    static func temp(_ ext: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-le-audio-\(UUID().uuidString).\(ext)").path
    }

    static func stats(_ capture: String) throws -> [String: Any] {
        let s = try CLI.run(["stats", "--format", "json", capture])
        #expect(s.status == 0, "\(s.stderr)")
        return try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as! [String: Any]
    }

    /// The page of `capture` as Chromium rendered it, with every view built.
    static func page(_ capture: String) throws -> String {
        let html = temp("html")
        defer { try? FileManager.default.removeItem(atPath: html) }
        let r = try CLI.run(["report", capture, "-o", html])
        #expect(r.status == 0, "\(r.stderr)")
        let (dom, log) = try Chromium.run("file://" + html + "#view=all")
        #expect(dom.contains("data-ready=\"1\""), "script did not finish: \(log.suffix(800))")
        #expect(dom.contains("<pre id=\"script-errors\" hidden=\"\"></pre>"), "script errors: \(log.suffix(800))")
        #expect(!log.contains("Uncaught"), "\(log)")
        return dom
    }

    /// Each ASE is a lane whose segments are its steps (frame, state, cause) in stats' order;
    /// the steps table lists them and the control point errors; each stream's card carries
    /// stats' counts and its chart's buckets add up to them.
    @Test(.enabled(if: Chromium.path != nil, "Debian's chromium is not installed"))
    func unicastViewShowsTheASEsAndStreamsOfStats() throws {
        let s = try Self.stats(Self.unicast)
        let dom = try Self.page(Self.unicast)
        let ases = s["le_audio_ases"] as! [[String: Any]]
        #expect(ases.count == 2)
        let lanes = ReportBrowserTests.matches(dom, #"<g class="ase-lane" data-ase="(\d+)"[^>]*>(.*?)</g>"#)
        #expect(lanes.map { $0[1] } == ["1", "2"])
        for (lane, a) in zip(lanes, ases) {
            let steps = a["steps"] as! [[String: Any]]
            let segs = ReportBrowserTests.matches(lane[2], #"class="ase-step" data-frame="(\d+)" data-state="([^"]+)" data-cause="([^"]*)""#)
            #expect(segs.map { [$0[1], $0[2], $0[3]] } == steps.map { ["\($0["frame"] as! Int)", $0["state"] as! String, ($0["cause"] as? String) ?? ""] })
        }
        // The real values: ASE 2 reached Streaming at frame 145 by Receiver Start Ready, after
        // the refused one at frame 122.
        #expect(dom.contains(#"data-frame="145" data-state="Streaming" data-cause="Receiver Start Ready""#))
        #expect(dom.contains(#"class="ase-error" data-frame="122""#))
        let errorRow = try #require(ReportBrowserTests.matches(dom, #"<tr data-ase="2" data-frame="122" class="err">(.*?)</tr>"#).first)
        #expect(errorRow[1].contains("✕ Invalid ASE State Machine Transition") && errorRow[1].contains("Receiver Start Ready"))
        #expect(ReportBrowserTests.matches(dom, #"<tr data-ase="\d+" data-frame="\d+""#).count == ases.reduce(0) { $0 + ($1["steps"] as! [Any]).count + ($1["errors"] as! [Any]).count })
        #expect(dom.contains(#"<tr data-handle="2"><td class="mono">0x0002</td><td class="n">1</td><td class="n">1</td><td class="mono">0x0001</td><td class="">established</td>"#))

        let streams = s["le_audio_streams"] as! [[String: Any]]
        #expect(streams.count == 2)
        for st in streams {
            let dir = st["direction"] as! String
            let card = try #require(
                ReportBrowserTests.matches(dom, #"<div class="sensor-card la-stream" data-handle="2" data-direction="\#(dir)" data-sdus="(\d+)" data-lost="(\d+)" data-status-lost="(\d+)" data-possibly-invalid="(\d+)">(.*?)</svg>"#).first)
            #expect(card[1] == "\(st["sdus"] as! Int)" && card[2] == "\(st["lost_by_sequence"] as! Int)" && card[3] == "\(st["status_lost"] as! Int)")
            let buckets = ReportBrowserTests.matches(card[5], #"class="la-bucket" data-i="\d+" data-sdus="(\d+)" data-lost="(\d+)""#)
            #expect(buckets.reduce(0) { $0 + Int($1[1])! } == st["sdus"] as! Int)
            #expect(buckets.reduce(0) { $0 + Int($1[2])! } == st["lost_by_sequence"] as! Int)
        }
        // Received: 15 SDUs, SDU 11 missing by sequence, SDU 5 flagged lost.
        #expect(dom.contains(#"data-direction="received" data-sdus="15" data-lost="1" data-status-lost="1""#))
        #expect(dom.contains("1 missing by sequence · valid 14 / possibly invalid 0 / lost 1"))
        #expect(dom.contains("2 of 16 SDUs lost (12.5 %)"))
    }

    @Test(.enabled(if: Chromium.path != nil, "Debian's chromium is not installed"))
    func broadcastViewListsTheBroadcasts() throws {
        let s = try Self.stats(Self.broadcast)
        let dom = try Self.page(Self.broadcast)
        let rows = ReportBrowserTests.matches(dom, #"<tr data-what="([a-z_]+)" data-frame="(\d+)">(.*?)</tr>"#)
        let bc = s["le_audio_broadcasts"] as! [[String: Any]]
        #expect(rows.map { [$0[1], $0[2]] } == bc.map { [$0["what"] as! String, "\($0["frame"] as! Int)"] })
        #expect(rows.contains { $0[1] == "broadcast_audio_announcement" && $0[3].contains("0x5A17C3") })
        #expect(rows.contains { $0[1] == "big_info" && $0[3].contains("encrypted") && !$0[3].contains("not encrypted") })
        // Two BISes, 20 SDUs sent each, BIS 2 misses one.
        let cards = ReportBrowserTests.matches(dom, #"data-direction="received" data-sdus="(\d+)" data-lost="(\d+)""#)
        #expect(cards.map { [$0[1], $0[2]] } == [["20", "0"], ["19", "1"]])
        // One row per broadcast source, from stats' le_audio_sources.
        let sources = ReportBrowserTests.matches(dom, #"<tr class="la-source" data-broadcast-id="(\d*)">(.*?)</tr>"#)
        #expect(sources.map { $0[1] } == (s["le_audio_sources"] as! [[String: Any]]).map { "\($0["broadcast_id"] as! Int)" })
        let row = try #require(sources.first)[2]
        for text in [
            "0x5A17C3", "Gate 12", "f1:a2:b3:c4:d5:e6 SID 3", "Boarding calls (encrypted, standard quality)", "40000 µs",
            "LC3 48_2 48000 Hz 10 ms 100 octets · BIS 1 Front Left, 2 Front Right · eng · Boarding calls", ">encrypted<",
            "synced BIG 0 to BIS 1,2 (0x0010, 0x0011) with a Broadcast_Code · lost at "
        ] {
            #expect(row.contains(text), "\(text) not in \(row)")
        }
    }

    /// `--ase`, `--cis`, `--broadcast-id` (the registry's module filters): the records of one ASE,
    /// one CIS, one broadcast.
    @Test func filtersInTheUsersWords() throws {
        func frames(_ capture: String, _ args: [String]) throws -> [Int] {
            let r = try CLI.run(["dump", capture] + args)
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") }
        }
        let ase1 = try frames(Self.unicast, ["--ase", "1"])
        #expect(ase1.contains(109) && ase1.contains(103) && !ase1.contains(110) && !ase1.contains(86))
        let ase2 = try frames(Self.unicast, ["--ase", "2"])
        #expect(ase2.contains(110) && ase2.contains(122) && ase2.contains(145) && !ase2.contains(109))
        let cis = try frames(Self.unicast, ["--cis", "0x0002"])
        let s = try Self.stats(Self.unicast)
        #expect(cis.filter { $0 >= 146 && $0 <= 238 }.count >= (s["counts"] as! [String: Any])["iso_packets"] as! Int)
        #expect(cis.contains(134)) // CIS Established names it
        #expect(try frames(Self.broadcast, ["--broadcast-id", "0x5A17C3"]) == [3])
        let bad = try CLI.run(["dump", Self.unicast, "--ase", "x"])
        #expect(bad.status == 64 && bad.stderr.contains("--ase"))
    }

    /// Both captures: the Broadcast_Code (HCI LE BIG Create Sync; BASS Set Broadcast_Code)
    /// and the plain-text SIRK are zeroed, every other byte of those records stays.
    @Test func redactRemovesBroadcastCodesAndTheSIRK() throws {
        let code = Array(0xA0...0xAF).map { UInt8($0) }
        let sirk: [UInt8] = [0x45, 0x7D, 0x7D, 0x09, 0x21, 0x3E, 0x7C, 0x0C, 0x5E, 0x8F, 0xD5, 0xA4, 0xB8, 0xEC, 0x6E, 0x91]
        let bassCode = Array("bluesift-code!42".utf8)
        for (capture, secrets, label) in [
            (Self.broadcast, [code], "LE Audio Broadcast_Code (HCI)"), (Self.control, [sirk, bassCode], "LE Audio SIRK (CSIS)")
        ] {
            let input = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capture)))
            let offsets = secrets.map { RedactorSearch.offset(input, $0) }
            #expect(!offsets.contains(nil), "\(capture) holds the keys before")
            let out = Self.temp("btsnoop"), report = Self.temp("json")
            defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: report) }
            let r = try CLI.run(["redact", capture, out, "--salt", "le-audio", "--report", report])
            #expect(r.status == 0, "\(r.stderr)")
            let redacted = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
            #expect(redacted.count == input.count)
            for (x, o) in zip(secrets, offsets) {
                #expect(RedactorSearch.offset(redacted, x) == nil, "\(capture) still holds \(x)")
                if let o { #expect(redacted[o..<o + 16].allSatisfy { $0 == 0 }, "\(capture) at \(o)") }
            }
            let rep = try String(contentsOfFile: report, encoding: .utf8)
            #expect(rep.contains("\"\(label)\""), "\(rep)")
            if capture == Self.control { #expect(rep.contains("\"LE Audio Broadcast_Code (BASS)\"")) }
            // The redacted capture still decodes: the same LE Audio records, no new damage.
            let before = try CLI.run(["dump", capture, "--protocol", "le-audio"]), after = try CLI.run(["dump", out, "--protocol", "le-audio"])
            #expect(after.status == 0 && after.stdout.split(separator: "\n").count == before.stdout.split(separator: "\n").count)
        }
    }
}

enum RedactorSearch {
    static func offset(_ hay: [UInt8], _ needle: [UInt8]) -> Int? {
        guard needle.count <= hay.count else { return nil }
        return (0...(hay.count - needle.count)).first { hay[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
