import Testing
import Foundation
import BluesiftCodecs

/// Issue 39 through the binary, on captures built here from bytes: an Auracast source's
/// advertising report with several LE Audio structures, ISO handles kept out of the
/// connections, a broadcast source's own HCI (its BASE in LE Set Periodic Advertising Data)
/// decoded to audio, and LC3 from lc3py (an encoder that is not bluesift's) decoded back.
@Suite struct LEAudioBroadcastSourceTests {
    // MARK: capture bytes

    /// btsnoop (datalink 1002, H4): each packet `us` microseconds after 2026-12-07 00:00 UTC,
    /// sent by the host or received, flagged command/event as the format wants.
    static func btsnoop(_ packets: [(sent: Bool, bytes: [UInt8])]) -> [UInt8] {
        var out = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        for (i, p) in packets.enumerated() {
            let ts = 0x00DC_DDB3_0F2F_8000 + 1_796_601_600_000_000 + UInt64(i) * 1000
            let flags: UInt32 = (p.sent ? 0 : 1) | (p.bytes.first == 0x01 || p.bytes.first == 0x04 ? 2 : 0)
            out += be32(UInt32(p.bytes.count)) + be32(UInt32(p.bytes.count)) + be32(flags) + be32(0)
            out += be32(UInt32(ts >> 32)) + be32(UInt32(ts & 0xFFFF_FFFF)) + p.bytes
        }
        return out
    }

    static func command(_ opcode: UInt16, _ p: [UInt8]) -> [UInt8] { [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(p.count)] + p }
    static func leMeta(_ sub: UInt8, _ p: [UInt8]) -> [UInt8] { [0x04, 0x3E, UInt8(p.count + 1), sub] + p }
    /// An ISO Data packet carrying one whole SDU (PB 0b10, no time stamp, status valid).
    static func iso(_ handle: UInt16, _ sequence: UInt16, _ sdu: [UInt8]) -> [UInt8] {
        let h = handle | 0x2000, load = 4 + sdu.count
        return [0x05, UInt8(h & 0xFF), UInt8(h >> 8), UInt8(load & 0xFF), UInt8(load >> 8)]
            + [UInt8(sequence & 0xFF), UInt8(sequence >> 8), UInt8(sdu.count & 0xFF), UInt8(sdu.count >> 8)] + sdu
    }

    static let broadcastID: [UInt8] = [0xC3, 0x17, 0x5A] // 0x5a17c3
    static let name = "Gate 12 Lounge"
    /// AD structures: Broadcast Audio Announcement (0x1852, BAP §3.7.2.1), Public Broadcast
    /// Announcement (0x1856, PBP §4.2: Standard Quality, Program_Info "News"), Broadcast_Name (0x30).
    static let announcement: [UInt8] = [0x06, 0x16, 0x52, 0x18] + broadcastID
    static let publicBroadcast: [UInt8] = [0x0B, 0x16, 0x56, 0x18, 0x02, 0x06, 0x05, 0x03] + Array("News".utf8)
    static let broadcastName: [UInt8] = [UInt8(name.utf8.count + 1), 0x30] + Array(name.utf8)

    /// BASE (service data 0x1851, BAP §3.7.2.2): delay 40 ms, one LC3 subgroup 48 kHz 10 ms
    /// 100 octets, BIS 1 Front Left and BIS 2 Front Right.
    static let base: [UInt8] = {
        let config: [UInt8] = [0x02, 0x01, 0x08, 0x02, 0x02, 0x01, 0x03, 0x04, 100, 0]
        let body: [UInt8] =
            [0x40, 0x9C, 0x00, 1, 2, 0x06, 0, 0, 0, 0, UInt8(config.count)] + config + [0]
            + [1, 6, 0x05, 0x03, 0x01, 0, 0, 0] + [2, 6, 0x05, 0x03, 0x02, 0, 0, 0]
        return [UInt8(body.count + 3), 0x16, 0x51, 0x18] + body
    }()

    /// LE Extended Advertising Report (Core 6.0 Vol 4 Part E §7.7.65.13): one report, SID 3,
    /// from c0:ff:ee:00:00:01 (random), with `data`.
    static func extendedReport(_ data: [UInt8]) -> [UInt8] {
        let head: [UInt8] = [1, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0, 0x01, 0x02, 0x03, 0x7F, 0xC4, 0x48, 0x00, 0x00, 0, 0, 0, 0, 0, 0]
        return leMeta(0x0D, head + [UInt8(data.count)] + data)
    }

    /// A broadcast source's own HCI (Core 6.0 Vol 4 Part E): LE Set Extended Advertising Data
    /// (§7.8.54) with its announcement and name, LE Set Periodic Advertising Data (§7.8.62)
    /// with the BASE, LE Create BIG (§7.8.103) on that advertising set, LE Create BIG Complete
    /// (§7.7.65.27) with BIS handles 0x0010 and 0x0011, then `frames` SDUs on each BIS.
    static func sourceCapture(left: [[UInt8]], right: [[UInt8]]) -> [UInt8] {
        let ad = announcement + broadcastName
        var p: [(Bool, [UInt8])] = [
            (true, command(0x2037, [0x01, 0x03, 0x01, UInt8(ad.count)] + ad)),
            (true, command(0x203F, [0x01, 0x03, UInt8(base.count)] + base)),
            (true, command(0x2068, [0x00, 0x01, 0x02, 0x10, 0x27, 0x00, 100, 0, 10, 0, 2, 0x02, 0, 0, 0] + [UInt8](repeating: 0, count: 16))),
            (false, leMeta(0x1B, [0x00, 0x00, 0x10, 0x27, 0, 0x10, 0x27, 0, 0x02, 2, 1, 0, 1, 100, 0, 8, 0, 2, 0x10, 0x00, 0x11, 0x00]))
        ]
        for (i, (l, r)) in zip(left, right).enumerated() {
            p.append((true, iso(0x0010, UInt16(i), l)))
            p.append((true, iso(0x0011, UInt16(i), r)))
        }
        return btsnoop(p)
    }

    static func write(_ bytes: [UInt8], _ dir: String, _ name: String) throws -> String {
        let path = dir + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func json(_ args: [String]) throws -> [String: Any] {
        let r = try CLI.run(args)
        #expect(r.status == 0, "\(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    // MARK: 1. every LE Audio structure of an advertising report

    /// Before: the pipeline handed the module only the first structure it registered, so the
    /// name and PBP features beside the announcement were lost in `dump` and `stats`.
    @Test func auracastReportDecodesAnnouncementNameAndPublicBroadcast() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let flags: [UInt8] = [0x02, 0x01, 0x06]
        let capture = try Self.write(
            Self.btsnoop([(false, Self.extendedReport(flags + Self.announcement + Self.publicBroadcast + Self.broadcastName))]), dir, "auracast.btsnoop")

        let text = try CLI.run(["dump", capture])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stdout.contains(
                #"Broadcast Audio Announcement broadcast_id 0x5a17c3; Public Broadcast Announcement SQ News; Broadcast Name "Gate 12 Lounge""#), "\(text.stdout)")

        let line = try CLI.run(["dump", "--format", "jsonl", capture])
        let frame = try #require(try JSONSerialization.jsonObject(with: Data(line.stdout.utf8)) as? [String: Any])
        let le = try #require(frame["le_audio"] as? [String: Any], "\(line.stdout)")
        #expect((le["broadcast_audio_announcement"] as? [String: Any])?["broadcast_id"] as? Int == 0x5A17C3)
        let more = try #require(le["advertising"] as? [[String: Any]])
        #expect(more.count == 2)
        let pba = try #require(more.first?["public_broadcast_announcement"] as? [String: Any], "\(more)")
        #expect(pba["features"] as? Int == 2 && pba["standard_quality"] as? Bool == true && pba["high_quality"] as? Bool == false)
        #expect((more.last?["broadcast_name"] as? [String: Any])?["broadcast_name"] as? String == Self.name)

        let stats = try Self.json(["stats", "--format", "json", capture])
        let rows = try #require(stats["le_audio_broadcasts"] as? [[String: Any]])
        let source = try #require(rows.first { $0["what"] as? String == "broadcast_audio_announcement" })
        #expect(source["broadcast_id"] as? Int == 0x5A17C3 && source["frame"] as? Int == 1)
        #expect(source["name"] as? String == Self.name)
        #expect(source["pbp_features"] as? [String] == ["standard_quality"])
        #expect(source["program_info"] as? String == "News")
        #expect(rows.map { $0["what"] as! String } == ["broadcast_audio_announcement", "public_broadcast_announcement", "broadcast_name"])
    }

    /// A source's own HCI gives one `le_audio_sources` row for its advertising set: the
    /// announcement and name of LE Set Extended Advertising Data, the BASE of LE Set Periodic
    /// Advertising Data, LE Create BIG (not encrypted, 2 BIS) and its BIS handles.
    @Test func sourceOwnSetIsOneSourceRow() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let capture = try Self.write(Self.sourceCapture(left: [[1, 2]], right: [[3, 4]]), dir, "source-row.btsnoop")
        let stats = try Self.json(["stats", "--format", "json", capture])
        let rows = try #require(stats["le_audio_sources"] as? [[String: Any]])
        try #require(rows.count == 1)
        let s = rows[0]
        #expect(s["advertising_handle"] as? Int == 1 && s["advertiser"] == nil)
        #expect(s["broadcast_id"] as? Int == 0x5A17C3 && s["broadcast_name"] as? String == Self.name)
        #expect(s["presentation_delay_us"] as? Int == 40000)
        let g = try #require((s["subgroups"] as? [[String: Any]])?.first)
        #expect(g["sampling_frequency_hz"] as? Int == 48000 && g["frame_duration_us"] as? Int == 10000 && g["octets_per_codec_frame"] as? Int == 100)
        #expect((g["bis"] as? [[String: Any]])?.map { [$0["bis_index"] as? Int, $0["audio_channel_allocation"] as? Int] } == [[1, 1], [2, 2]])
        #expect((g["bis"] as? [[String: Any]])?.map { $0["preset"] as? String } == ["48_2", "48_2"])
        #expect(s["encrypted"] as? Bool == false && s["num_bis"] as? Int == 2 && s["sdu_interval_us"] as? Int == 10000 && s["max_sdu"] as? Int == 100)
        let big = try #require((s["bigs"] as? [[String: Any]])?.first)
        #expect(big["role"] as? String == "source" && big["frame"] as? Int == 3 && big["big_handle"] as? Int == 0)
        #expect(big["bis"] as? [Int] == [1, 2] && big["bis_handles"] as? [Int] == [0x10, 0x11] && big["status"] as? Int == 0 && big["broadcast_code"] as? Bool == false)
        #expect(s["first_frame"] as? Int == 1 && s["last_frame"] as? Int == 4)
        // No source in a unicast capture: no member (its JSON as it was).
        let unicast = try Self.json(["stats", "--format", "json", CLI.root.appendingPathComponent("Tests/LEAudio/le_audio_unicast.btsnoop").path])
        #expect(unicast["le_audio_sources"] == nil && unicast["le_audio_streams"] != nil)
    }

    // MARK: 2. ISO handles are not connections

    /// Before: each CIS/BIS handle with ISO data became a connection in `stats` (and the
    /// capture "started during" it), and a CIS's Disconnection Complete one in `info`.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: LEAudioCLITests.unicast), "Tests/LEAudio/le_audio_unicast.btsnoop is generated by make_oracle.sh"))
    func cisHandleIsNoConnection() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The Bumble unicast capture (CIS 0x0002 on ACL 0x0001), then the CIS's Disconnection
        // Complete (§7.7.5, reason 0x13), as a host sees it after Disconnect on a CIS.
        var d = try [UInt8](Data(contentsOf: URL(fileURLWithPath: LEAudioCLITests.unicast)))
        let last = AudioTests.records(d).last!
        let ts = Array(d[(last.offset - 8)..<last.offset])
        let event: [UInt8] = [0x04, 0x05, 0x04, 0x00, 0x02, 0x00, 0x13]
        d += [0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 3, 0, 0, 0, 0] + ts + event
        let capture = try Self.write(d, dir, "unicast-cis-disconnect.btsnoop")

        let stats = try Self.json(["stats", "--format", "json", capture])
        let connections = try #require(stats["connections"] as? [[String: Any]])
        #expect(connections.map { $0["handle"] as? Int } == [1])
        let cises = try #require(stats["le_audio_cises"] as? [[String: Any]])
        #expect(cises.map { $0["handle"] as? Int } == [2])
        #expect((stats["le_audio_streams"] as? [[String: Any]])?.map { $0["sdus"] as? Int } == [16, 15])
        let text = try CLI.run(["stats", capture])
        #expect(text.stdout.contains("connections: 1\n") && !text.stdout.contains("starts during"), "\(text.stdout)")

        let info = try CLI.run(["info", capture])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("connections: 1\n  0x0001  LE"), "\(info.stdout)")
        #expect(!info.stdout.contains("0x0002"), "\(info.stdout)")
    }

    // MARK: 3. a broadcast source's own capture

    static let format = LC3Format(sampleRate: 48000, frameMicroseconds: 10000, octetsPerFrame: 100)
    static let frames = 20
    static let bisName = "bcast5a17c3-Gate_12_Lounge-big0-bis"

    /// Runs `bluesift audio` on the source capture of `left`/`right` frames: the two WAVs.
    static func sourceAudio(left: [[UInt8]], right: [[UInt8]], _ dir: String) throws -> (lines: [String], left: [Int16], right: [Int16]) {
        let capture = try write(sourceCapture(left: left, right: right), dir, "source.btsnoop")
        let r = try CLI.run(["audio", capture, "-o", dir])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let n = format.samplesPerFrame
        #expect(
            lines == [
                "\(bisName)1  LC3 48_2 48000 Hz 10.0 ms 100 octets 1 ch (Front Left)  \(frames) frames, 0 lost, 0.200 s -> \(dir)/\(bisName)1.wav",
                "\(bisName)2  LC3 48_2 48000 Hz 10.0 ms 100 octets 1 ch (Front Right)  \(frames) frames, 0 lost, 0.200 s -> \(dir)/\(bisName)2.wav"
            ], "\(r.stdout)")
        let l = try AudioTests.wav(dir + "/\(bisName)1.wav"), rr = try AudioTests.wav(dir + "/\(bisName)2.wav")
        #expect(l.header == WAVHeader(sampleRate: 48000, channels: 1, dataBytes: frames * n * 2))
        #expect(rr.header == WAVHeader(sampleRate: 48000, channels: 1, dataBytes: frames * n * 2))
        return (lines, l.samples, rr.samples)
    }

    /// Before: the BASE in LE Set Periodic Advertising Data was not decoded, so `stats` had
    /// no BASE and `bluesift audio` found no codec configuration for the source's BISes.
    @Test func broadcastSourceBASEFromItsOwnHCI() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let n = Self.format.samplesPerFrame
        let left = AudioTests.sine(1000, rate: 48000, count: Self.frames * n), right = AudioTests.sine(500, rate: 48000, count: Self.frames * n)
        let capture = try Self.write(
            Self.sourceCapture(left: try AudioTests.lc3Frames(left, Self.format), right: try AudioTests.lc3Frames(right, Self.format)), dir, "source.btsnoop")

        let stats = try Self.json(["stats", "--format", "json", capture])
        let rows = try #require(stats["le_audio_broadcasts"] as? [[String: Any]])
        let base = try #require(rows.first { $0["what"] as? String == "base" })
        #expect(base["frame"] as? Int == 2 && base["summary"] as? String == "BASE delay 40000 us, 1 subgroup; LC3 48_2 48000 Hz 10 ms 100 octets BIS 1,2")
        let source = try #require(rows.first { $0["what"] as? String == "broadcast_audio_announcement" })
        #expect(source["frame"] as? Int == 1 && source["broadcast_id"] as? Int == 0x5A17C3 && source["name"] as? String == Self.name)

        let out = try Self.sourceAudio(left: try AudioTests.lc3Frames(left, Self.format), right: try AudioTests.lc3Frames(right, Self.format), dir)
        let delay = Self.format.delaySamples
        let sl = AudioTests.snr(left, out.left, delay: delay, ranges: [n..<((Self.frames - 1) * n)])
        let sr = AudioTests.snr(right, out.right, delay: delay, ranges: [n..<((Self.frames - 1) * n)])
        #expect(sl > AudioTests.lc3BroadcastSNR && sr > AudioTests.lc3BroadcastSNR, "SNR \(sl) dB, \(sr) dB")
    }

    // MARK: 4. an independent LC3 encoder

    static let venvPython = CLI.root.appendingPathComponent(".venv/bin/python").path
    static let lc3pyAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: venvPython) else { return false }
        return (try? CLI.process(venvPython, ["-c", "import lc3"]))?.status == 0
    }()

    /// lc3py (PyPI; its own build of Google's liblc3) encodes the sines, bluesift (Debian's
    /// liblc3) decodes them from the source capture's ISO SDUs. Measured: 1 kHz at 25.0 dB,
    /// 500 Hz at 23.8 dB; threshold as for bluesift's own encoder.
    @Test(.enabled(if: Self.lc3pyAvailable, "lc3py missing from .venv (make venv installs Tests/VirtualDevice/requirements.txt)"))
    func lc3pyEncodedSinesDecode() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let n = Self.format.samplesPerFrame
        let left = AudioTests.sine(1000, rate: 48000, count: Self.frames * n), right = AudioTests.sine(500, rate: 48000, count: Self.frames * n)
        func encode(_ pcm: [Int16], _ name: String) throws -> [[UInt8]] {
            let input = dir + "/" + name + ".pcm", output = dir + "/" + name + ".lc3"
            try Data(pcm.flatMap { [UInt8(UInt16(bitPattern: $0) & 0xFF), UInt8(UInt16(bitPattern: $0) >> 8)] }).write(to: URL(fileURLWithPath: input))
            let r = try CLI.process(Self.venvPython, [CLI.root.appendingPathComponent("Tests/LEAudio/lc3py_encode.py").path, input, output, "48000", "10000", "100"])
            #expect(r.status == 0, "\(r.stderr)")
            let b = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
            #expect(b.count == Self.frames * 100)
            return stride(from: 0, to: b.count, by: 100).map { Array(b[$0..<($0 + 100)]) }
        }
        let l = try encode(left, "left"), r = try encode(right, "right")
        let out = try Self.sourceAudio(left: l, right: r, dir)
        let delay = Self.format.delaySamples
        let sl = AudioTests.snr(left, out.left, delay: delay, ranges: [n..<((Self.frames - 1) * n)])
        let sr = AudioTests.snr(right, out.right, delay: delay, ranges: [n..<((Self.frames - 1) * n)])
        #expect(sl > AudioTests.lc3BroadcastSNR && sr > AudioTests.lc3BroadcastSNR, "SNR \(sl) dB, \(sr) dB")
        print("lc3py-encoded 48_2: SNR \(sl) dB (1 kHz), \(sr) dB (500 Hz)")
    }
}
