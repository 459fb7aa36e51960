import Testing
import Foundation
import BluesiftCodecs

/// Issue 39 through the binary, on captures built here from bytes (the helpers of
/// `LEAudioBroadcastSourceTests`): an Auracast sink's HCI, whose BIS files and stream rows are
/// named by the broadcast it synced to, and advertising data that comes in pieces (a source's
/// fragmented LE Set Extended/Periodic Advertising Data, a sink's periodic advertising reports
/// with Data_Status "more to come" or "truncated").
@Suite struct LEAudioBroadcastSinkTests {
    typealias S = LEAudioBroadcastSourceTests

    static let address: [UInt8] = [0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0] // c0:ff:ee:00:00:01 (random)

    /// LE Extended Advertising Report (Core 6.0 Vol 4 Part E §7.7.65.13) from `address` on
    /// advertising set `sid`, Data_Status `status` (event type bits 5-6).
    static func report(_ data: [UInt8], address: [UInt8] = address, sid: UInt8, status: UInt8 = 0) -> [UInt8] {
        let head: [UInt8] = [1, status << 5, 0x00, 0x01] + address + [0x01, 0x02, sid, 0x7F, 0xC4, 0x48, 0x00, 0x00, 0, 0, 0, 0, 0, 0]
        return S.leMeta(0x0D, head + [UInt8(data.count)] + data)
    }

    /// LE Periodic Advertising Report (§7.7.65.15) on sync 0x0001 with Data_Status `status`.
    static func periodic(_ data: [UInt8], status: UInt8 = 0) -> [UInt8] {
        S.leMeta(0x0F, [0x01, 0x00, 0x7F, 0xC4, 0xFF, status, UInt8(data.count)] + data)
    }

    static func announcement(_ id: [UInt8], _ name: String) -> [UInt8] {
        [0x06, 0x16, 0x52, 0x18] + id + [UInt8(name.utf8.count + 1), 0x30] + Array(name.utf8)
    }

    enum Sync { case created, transferred }

    /// A sink's HCI: three sources announce (this address on SID 3: 0x5A17C3 "Gate 12 Lounge";
    /// on SID 4: 0x0BADF0 "Gate 14"; another address on SID 3: 0x0C0FFE "Cafe"), the sink
    /// syncs to SID 3 of this address (LE Periodic Advertising Create Sync §7.8.67 and Sync
    /// Established §7.7.65.14) or is given the sync of SID 4 by an assistant (Sync Transfer
    /// Received §7.7.65.24), hears the BASE in `base` (pieces of periodic advertising data with
    /// their Data_Status), BIGInfo (§7.7.65.34), syncs BIG 1 to BIS 1 and 2 (§7.8.106, §7.7.65.29:
    /// handles 0x0010, 0x0011), and receives the SDUs.
    /// `announced`: the extended advertising reports before the sync, when not these three.
    static func sinkCapture(
        _ sync: Sync = .created, announced: [[UInt8]]? = nil, base: [(UInt8, [UInt8])] = [(0, S.base)], left: [[UInt8]], right: [[UInt8]]
    ) -> [UInt8] {
        let other: [UInt8] = [0x02, 0x00, 0x00, 0xEE, 0xFF, 0xC0]
        var p: [(Bool, [UInt8])] =
            (announced ?? [
                report(announcement([0xF0, 0xAD, 0x0B], "Gate 14"), sid: 4),
                report(announcement(S.broadcastID, S.name), sid: 3),
                report(announcement([0xFE, 0x0F, 0x0C], "Cafe"), address: other, sid: 3)
            ]).map { (false, $0) }
        switch sync {
        case .created:
            p.append((true, S.command(0x2044, [0x00, 3, 0x01] + address + [0, 0, 0xE8, 0x03, 0])))
            p.append((false, S.leMeta(0x0E, [0x00, 0x01, 0x00, 3, 0x01] + address + [0x02, 0x48, 0x00, 0x00])))
        case .transferred:
            p.append((false, S.leMeta(0x18, [0x00, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 4, 0x01] + address + [0x02, 0x48, 0x00, 0x00])))
        }
        for (status, piece) in base { p.append((false, periodic(piece, status: status))) }
        p += [
            (false, S.leMeta(0x22, [0x01, 0x00, 2, 2, 0x08, 0x00, 1, 0, 2, 100, 0, 0x10, 0x27, 0x00, 100, 0, 0x02, 0, 0])),
            (true, S.command(0x206B, [1, 0x01, 0x00, 0] + [UInt8](repeating: 0, count: 16) + [0, 0xE8, 0x03, 2, 1, 2])),
            (false, S.leMeta(0x1D, [0x00, 1, 0x10, 0x27, 0x00, 2, 1, 0, 2, 100, 0, 0x08, 0x00, 2, 0x10, 0x00, 0x11, 0x00]))
        ]
        for (i, (l, r)) in zip(left, right).enumerated() {
            p.append((false, S.iso(0x0010, UInt16(i), l)))
            p.append((false, S.iso(0x0011, UInt16(i), r)))
        }
        return S.btsnoop(p)
    }

    static func frames() throws -> (left: [[UInt8]], right: [[UInt8]]) {
        let n = S.format.samplesPerFrame
        return (
            try AudioTests.lc3Frames(AudioTests.sine(1000, rate: 48000, count: S.frames * n), S.format),
            try AudioTests.lc3Frames(AudioTests.sine(500, rate: 48000, count: S.frames * n), S.format)
        )
    }

    static func audioLines(_ capture: String, _ dir: String) throws -> [String] {
        let r = try CLI.run(["audio", capture, "-o", dir])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    static func expectedLines(_ prefix: String, _ dir: String) -> [String] {
        [
            "\(prefix)1  LC3 48_2 48000 Hz 10.0 ms 100 octets 1 ch (Front Left)  \(S.frames) frames, 0 lost, 0.200 s -> \(dir)/\(prefix)1.wav",
            "\(prefix)2  LC3 48_2 48000 Hz 10.0 ms 100 octets 1 ch (Front Right)  \(S.frames) frames, 0 lost, 0.200 s -> \(dir)/\(prefix)2.wav"
        ]
    }

    // MARK: 1. a sink's BIS named by its broadcast

    /// Before: a sink's files were `big1-bis1` and its stream rows had no broadcast; only a
    /// source's own HCI named them.
    @Test func sinkFilesAndStreamsCarryTheBroadcastSyncedTo() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let f = try Self.frames()
        let capture = try S.write(Self.sinkCapture(left: f.left, right: f.right), dir, "sink.btsnoop")

        #expect(try Self.audioLines(capture, dir) == Self.expectedLines("bcast5a17c3-Gate_12_Lounge-big1-bis", dir))
        let wav = try AudioTests.wav(dir + "/bcast5a17c3-Gate_12_Lounge-big1-bis1.wav")
        #expect(wav.header == WAVHeader(sampleRate: 48000, channels: 1, dataBytes: S.frames * S.format.samplesPerFrame * 2))

        let stats = try S.json(["stats", "--format", "json", capture])
        let rows = try #require(stats["le_audio_streams"] as? [[String: Any]])
        #expect(rows.map { $0["handle"] as? Int } == [0x10, 0x11])
        #expect(rows.map { $0["broadcast_id"] as? Int } == [0x5A17C3, 0x5A17C3])
        #expect(rows.map { $0["broadcast_name"] as? String } == [S.name, S.name])
        let text = try CLI.run(["stats", capture])
        #expect(
            text.stdout.contains(
                "  ISO 0x0010 received: 20 SDUs, 0 lost by sequence, status valid 20 / possibly invalid 0 / lost 0, 80.0 of 80.0 kbit/s configured (broadcast 0x5a17c3 \"Gate 12 Lounge\")\n"
            ), "\(text.stdout)")
    }

    /// The sync handed over by an assistant (PAST) names the other set of the same advertiser.
    @Test func sinkSyncedByTransferCarriesThatBroadcast() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let f = try Self.frames()
        let capture = try S.write(Self.sinkCapture(.transferred, left: f.left, right: f.right), dir, "past.btsnoop")
        #expect(try Self.audioLines(capture, dir) == Self.expectedLines("bcast0badf0-Gate_14-big1-bis", dir))
        let stats = try S.json(["stats", "--format", "json", capture])
        #expect((stats["le_audio_streams"] as? [[String: Any]])?.map { $0["broadcast_id"] as? Int } == [0x0BADF0, 0x0BADF0])
    }

    // MARK: 2. advertising data in pieces

    /// Before: only complete data (Operation 0x03) was read, so a source whose host set its
    /// announcement and BASE in fragments had no BASE (`skipped: no BASE …`) and no name.
    @Test func sourceFragmentedAdvertisingDataDecodedWhole() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let f = try Self.frames()
        // LE Set Extended Advertising Data (§7.8.54) in 2 fragments, the name cut in the middle;
        // LE Set Periodic Advertising Data (§7.8.62) in 3, the BASE cut twice.
        let ad = S.announcement + S.broadcastName, base = S.base
        func ext(_ op: UInt8, _ d: ArraySlice<UInt8>) -> [UInt8] { S.command(0x2037, [0x01, op, 0x01, UInt8(d.count)] + d) }
        func per(_ op: UInt8, _ d: ArraySlice<UInt8>) -> [UInt8] { S.command(0x203F, [0x01, op, UInt8(d.count)] + d) }
        var p: [(Bool, [UInt8])] = [
            (true, ext(1, ad[0..<12])), (true, ext(2, ad[12...])),
            (true, per(1, base[0..<9])), (true, per(0, base[9..<20])), (true, per(2, base[20...])),
            (true, S.command(0x2068, [0x00, 0x01, 0x02, 0x10, 0x27, 0x00, 100, 0, 10, 0, 2, 0x02, 0, 0, 0] + [UInt8](repeating: 0, count: 16))),
            (false, S.leMeta(0x1B, [0x00, 0x00, 0x10, 0x27, 0, 0x10, 0x27, 0, 0x02, 2, 1, 0, 1, 100, 0, 8, 0, 2, 0x10, 0x00, 0x11, 0x00]))
        ]
        for (i, (l, r)) in zip(f.left, f.right).enumerated() {
            p.append((true, S.iso(0x0010, UInt16(i), l)))
            p.append((true, S.iso(0x0011, UInt16(i), r)))
        }
        let capture = try S.write(S.btsnoop(p), dir, "fragmented-source.btsnoop")
        #expect(try Self.audioLines(capture, dir) == Self.expectedLines(S.bisName, dir))

        let dump = try CLI.run(["dump", capture])
        #expect(dump.status == 0, "\(dump.stderr)")
        let lines = dump.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count > 5)
        #expect(lines[1].contains("(advertising data reassembled from 2 pieces, \(ad.count) octets); Broadcast Audio Announcement broadcast_id 0x5a17c3"), "\(lines.prefix(6))")
        #expect(lines[4].contains("(advertising data reassembled from 3 pieces, \(base.count) octets); BASE delay 40000 us"), "\(lines.prefix(6))")
    }

    /// Before: periodic advertising reports with Data_Status 1 ("more to come") were not put
    /// together, so a sink whose controller split the BASE had no codec configuration.
    @Test func sinkPeriodicReportsInPiecesDecodedWhole() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let f = try Self.frames()
        let b = S.base
        let capture = try S.write(
            Self.sinkCapture(base: [(1, Array(b[0..<10])), (1, Array(b[10..<25])), (0, Array(b[25...]))], left: f.left, right: f.right), dir, "split.btsnoop")
        #expect(try Self.audioLines(capture, dir) == Self.expectedLines("bcast5a17c3-Gate_12_Lounge-big1-bis", dir))
        let stats = try S.json(["stats", "--format", "json", capture])
        let rows = try #require(stats["le_audio_broadcasts"] as? [[String: Any]])
        let base = try #require(rows.first { $0["what"] as? String == "base" })
        #expect(base["frame"] as? Int == 8 && base["summary"] as? String == "BASE delay 40000 us, 1 subgroup; LC3 48_2 48000 Hz 10 ms 100 octets BIS 1,2")
    }

    /// Data_Status 2: the controller cut the data. What is whole is still decoded (the
    /// announcement before the cut), and the cut is noted on the record.
    @Test func truncatedPeriodicDataIsNoted() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let data = Self.announcement(S.broadcastID, S.name) + S.base
        let capture = try S.write(
            Self.sinkCapture(base: [(1, Array(data[0..<30])), (2, Array(data[30..<40]))], left: [], right: []), dir, "truncated.btsnoop")
        let r = try CLI.run(["dump", "--format", "jsonl", capture])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(frames.count == 10)
        let cut = frames[6]
        let le = try #require(cut["le_audio"] as? [String: Any], "\(cut)")
        #expect(le["reassembled_pieces"] as? Int == 2 && le["reassembled_octets"] as? Int == 40)
        let values = try #require(le["advertising"] as? [[String: Any]])
        #expect((values.first?["broadcast_audio_announcement"] as? [String: Any])?["broadcast_id"] as? Int == 0x5A17C3)
        #expect("\(cut)".contains("truncated by the controller (Data_Status 2) after 40 octets"), "\(cut)")
        // The piece before it: the plain report, nothing decoded yet.
        #expect((frames[5]["le_audio"] as? [String: Any])?["advertising"] == nil)
    }

    // MARK: 3. extended advertising reports in pieces

    /// Before: LE Extended Advertising Reports with Data_Status 1 ("more to come", §7.7.65.13)
    /// were read one by one: an announcement cut between two reports was lost, so the sink's
    /// files and stream rows had no broadcast. Two advertising sets of one address send their
    /// pieces interleaved; each is put together on its own (address, SID).
    @Test func sinkExtendedReportsInPiecesDecodedWhole() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let f = try Self.frames()
        let gate12 = S.announcement + S.publicBroadcast + S.broadcastName // 7 + 12 + 16 octets
        let gate14 = Self.announcement([0xF0, 0xAD, 0x0B], "Gate 14")
        let announced = [
            Self.report(Array(gate12[0..<5]), sid: 3, status: 1), // the announcement cut after its UUID
            Self.report(Array(gate14[0..<9]), sid: 4, status: 1),
            Self.report(Array(gate12[5..<20]), sid: 3, status: 1),
            Self.report(Array(gate14[9...]), sid: 4),
            Self.report(Array(gate12[20...]), sid: 3)
        ]
        let capture = try S.write(Self.sinkCapture(announced: announced, left: f.left, right: f.right), dir, "ext-pieces.btsnoop")
        #expect(try Self.audioLines(capture, dir) == Self.expectedLines("bcast5a17c3-Gate_12_Lounge-big1-bis", dir))

        let r = try CLI.run(["dump", "--format", "jsonl", capture])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(frames.count > 5)
        // The pieces before the last: plain reports.
        #expect([0, 1, 2].map { frames[$0]["le_audio"] == nil } == [true, true, true], "\(frames.prefix(3))")
        let sid4 = try #require(frames[3]["le_audio"] as? [String: Any], "\(frames[3])")
        #expect(sid4["reassembled_pieces"] as? Int == 2 && sid4["reassembled_octets"] as? Int == gate14.count)
        #expect((sid4["broadcast_audio_announcement"] as? [String: Any])?["broadcast_id"] as? Int == 0x0BADF0)
        let sid3 = try #require(frames[4]["le_audio"] as? [String: Any], "\(frames[4])")
        #expect(sid3["reassembled_pieces"] as? Int == 3 && sid3["reassembled_octets"] as? Int == gate12.count)
        #expect((sid3["broadcast_audio_announcement"] as? [String: Any])?["broadcast_id"] as? Int == 0x5A17C3)
        let others = try #require(sid3["advertising"] as? [[String: Any]])
        let pba = try #require(others.first?["public_broadcast_announcement"] as? [String: Any], "\(others)")
        #expect(pba["standard_quality"] as? Bool == true && "\(pba["metadata"] ?? "")".contains("News"), "\(pba)")
        #expect((others.last?["broadcast_name"] as? [String: Any])?["broadcast_name"] as? String == S.name, "\(others)")

        let text = try CLI.run(["dump", capture])
        let line = text.stdout.split(separator: "\n").map(String.init)[4]
        #expect(line.hasSuffix("(advertising data reassembled from 3 pieces, \(gate12.count) octets)"), "\(line)")

        let stats = try S.json(["stats", "--format", "json", capture])
        let rows = try #require(stats["le_audio_streams"] as? [[String: Any]])
        #expect(rows.map { $0["broadcast_name"] as? String } == [S.name, S.name])
        let bcasts = try #require(stats["le_audio_broadcasts"] as? [[String: Any]])
        let row = try #require(bcasts.first { $0["broadcast_id"] as? Int == 0x5A17C3 })
        #expect(row["frame"] as? Int == 5 && row["name"] as? String == S.name && row["program_info"] as? String == "News", "\(row)")
    }

    /// Reports Bumble's HCI classes made (Tests/LEAudio/broadcast_pieces.py: two sources, 3
    /// and 2 pieces, interleaved; the first piece is the 229 octets an event can carry), against
    /// Bumble's own parse of each whole data (broadcast_pieces.json), value by value.
    @Test func bumblePiecesAgreeWithBumblesParse() throws {
        let dir = CLI.root.appendingPathComponent("Tests/LEAudio").path
        let expected = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/broadcast_pieces.json"))) as? [[String: Any]])
        let r = try CLI.run(["dump", "--format", "jsonl", dir + "/le_audio_broadcast_pieces.btsnoop"])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(frames.count == 5)
        #expect(frames.indices.filter { frames[$0]["le_audio"] != nil } == [3, 4])
        var agree = 0, values = 0
        for e in expected {
            let frame = try #require(e["frame"] as? Int)
            let le = try #require(frames[frame - 1]["le_audio"] as? [String: Any])
            let others = le["advertising"] as? [[String: Any]] ?? []
            let pba = try #require(others.first { $0["public_broadcast_announcement"] != nil }?["public_broadcast_announcement"] as? [String: Any])
            let metadata = "\(pba["metadata"] ?? "")"
            let got: [String: String] = [
                "pieces": "\(le["reassembled_pieces"] ?? "")", "octets": "\(le["reassembled_octets"] ?? "")",
                "broadcast_id": "\((le["broadcast_audio_announcement"] as? [String: Any])?["broadcast_id"] ?? "")",
                "encrypted": "\(pba["encrypted"] ?? "")", "standard_quality": "\(pba["standard_quality"] ?? "")",
                "high_quality": "\(pba["high_quality"] ?? "")",
                "broadcast_name": "\(others.first { $0["broadcast_name"] != nil }.flatMap { ($0["broadcast_name"] as? [String: Any])?["broadcast_name"] } ?? "")"
            ]
            for (k, v) in got {
                values += 1
                let want = "\(e[k] ?? "missing")"
                #expect(v == want, "frame \(frame) \(k): \(v) != \(want)")
                if v == want { agree += 1 }
            }
            for k in ["program_info", "language"] {
                values += 1
                let want = try #require(e[k] as? String)
                #expect(metadata.contains(want), "frame \(frame) \(k): \(want) not in \(metadata)")
                if metadata.contains(want) { agree += 1 }
            }
        }
        print("extended advertising in pieces: \(values) values, \(agree) agree")
        #expect(values == 18 && agree == values)
    }

    /// Before: the CIS rows did not say which data paths were set up, and no stream was measured
    /// against its QoS. Bumble's unicast session (Tests/LEAudio): CIG 16_2_1 (SDU interval
    /// 10000 µs, Max_SDU 40 each way), both data paths, 16 SDUs sent, 15 received (one flagged
    /// lost, empty: 560 octets) and 1 missing.
    @Test func unicastDataPathsAndThroughputAgainstQoS() throws {
        let capture = CLI.root.appendingPathComponent("Tests/LEAudio/le_audio_unicast.btsnoop").path
        let stats = try S.json(["stats", "--format", "json", capture])
        let cis = try #require((stats["le_audio_cises"] as? [[String: Any]])?.first)
        #expect(cis["data_paths"] as? [String] == ["input", "output"], "\(cis)")
        let rows = try #require(stats["le_audio_streams"] as? [[String: Any]])
        #expect(rows.map { $0["direction"] as? String } == ["sent", "received"])
        #expect(rows.map { $0["sdu_interval_us"] as? Int } == [10000, 10000] && rows.map { $0["max_sdu"] as? Int } == [40, 40])
        #expect(rows.map { $0["configured_bps"] as? Int } == [32000, 32000])
        // 640 octets over 16 intervals; 560 over 16 (one missing by sequence).
        #expect(rows.map { $0["throughput_bps"] as? Int } == [32000, 28000], "\(rows)")
        let text = try CLI.run(["stats", capture])
        #expect(text.stdout.contains(" established ASE 1,2, data path input+output\n"), "\(text.stdout)")
        #expect(text.stdout.contains(", 28.0 of 32.0 kbit/s configured\n"), "\(text.stdout)")
    }

    /// Before: the CSV table `le_audio_streams` stopped at `last_frame`; the JSON's QoS,
    /// throughput and broadcast members are now its last columns (the first ones unchanged).
    @Test func streamsCSVCarriesQoSAndBroadcastColumns() throws {
        let unicast = CLI.root.appendingPathComponent("Tests/LEAudio/le_audio_unicast.btsnoop").path
        let r = try CLI.run(["stats", "--format", "csv", "--table", "le_audio_streams", unicast])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "file,handle,direction,sdus,bytes,lost_by_sequence,status_valid,status_possibly_invalid,status_lost,reassembly_errors,jitter_mean_us,jitter_max_us,first_frame,last_frame,sdu_interval_us,max_sdu,throughput_bps,configured_bps,broadcast_id,broadcast_name"
        )
        try #require(lines.count == 3, "\(lines)")
        #expect(lines[1].hasSuffix(",0x0002,sent,16,640,0,16,0,0,0,,,147,234,10000,40,32000,32000,,"), "\(lines[1])")
        #expect(lines[2].hasSuffix(",0x0002,received,15,560,1,14,0,1,0,0,0,151,238,10000,40,28000,32000,,"), "\(lines[2])")
        let sink = CLI.root.appendingPathComponent("Tests/LEAudio/le_audio_broadcast_sink.btsnoop").path
        let b = try CLI.run(["stats", "--format", "csv", "--table", "le_audio_streams", sink])
        let rows = b.stdout.split(separator: "\n").dropFirst().map(String.init)
        #expect(rows.count == 2, "\(rows)")
        #expect(rows.first?.hasSuffix(",0x0010,received,20,2000,0,19,1,0,0,16,150,16,53,10000,100,80000,80000,0x5a17c3,Gate 12") == true, "\(rows)")
        #expect(rows.last?.hasSuffix(",0x0011,received,19,1900,1,19,0,0,0,0,0,17,54,10000,100,76000,80000,0x5a17c3,Gate 12") == true, "\(rows)")
    }

    /// Issue 39: one row per broadcast source gathering what was spread over
    /// `le_audio_broadcasts` and the stream rows. Every value of the rows of both Bumble
    /// captures against Bumble's parse of the same bytes (oracle_vectors.json: the sink's
    /// announcement, PA sync, BASE, BIGInfo, BIG Create Sync, BIG Sync Established and Lost;
    /// broadcast_pieces.json: the two announcing sources' IDs, names and PBP values).
    @Test func sourceRowsAgreeWithBumblesParse() throws {
        let dir = CLI.root.appendingPathComponent("Tests/LEAudio").path
        let oracle = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/oracle_vectors.json"))) as? [String: Any])
        var bumble: [Int: [String: Any]] = [:]
        for v in oracle["vectors"] as! [[String: Any]] where (v["profile"] as! String).hasPrefix("broadcast_") {
            if let f = v["frame"] as? Int { bumble[f, default: [:]].merge(v["expect"] as! [String: Any]) { a, _ in a } }
        }
        var values = 0, agree = 0
        func check(_ what: String, _ got: Any?, _ want: Any?) {
            values += 1
            let g = got.map { "\($0)" } ?? "nil", w = want.map { "\($0)" } ?? "missing"
            #expect(g == w, "\(what): \(g) != \(w)")
            if g == w { agree += 1 }
        }
        let stats = try S.json(["stats", "--format", "json", dir + "/le_audio_broadcast_sink.btsnoop"])
        let rows = try #require(stats["le_audio_sources"] as? [[String: Any]])
        try #require(rows.count == 1)
        let s = rows[0]
        check("broadcast_id", s["broadcast_id"], bumble[3]?["broadcast_id"])
        check("advertising_sid", s["advertising_sid"], bumble[6]?["advertising_sid"])
        let b = try #require(bumble[7])
        check("presentation_delay_us", s["presentation_delay_us"], b["presentation_delay"])
        let groups = try #require(s["subgroups"] as? [[String: Any]])
        check("subgroups", groups.count, b["num_subgroups"])
        let g = groups[0], bis = try #require(g["bis"] as? [[String: Any]])
        check("bis count", bis.count, b["subgroups.0.num_bis"])
        check("coding_format", g["coding_format"], b["subgroups.0.codec_id.coding_format"])
        check("sampling_frequency_hz", g["sampling_frequency_hz"], b["subgroups.0.codec_specific_configuration.sampling_frequency_hz"])
        check("frame_duration_us", g["frame_duration_us"], b["subgroups.0.codec_specific_configuration.frame_duration_us"])
        check("octets_per_codec_frame", g["octets_per_codec_frame"], b["subgroups.0.codec_specific_configuration.octets_per_codec_frame"])
        check("language", g["language"], b["subgroups.0.metadata.language"])
        check("program_info", g["program_info"], b["subgroups.0.metadata.program_info"])
        for (i, x) in bis.enumerated() {
            check("bis \(i) index", x["bis_index"], b["subgroups.0.bis.\(i).bis_index"])
            check("bis \(i) allocation", x["audio_channel_allocation"], b["subgroups.0.bis.\(i).codec_specific_configuration.audio_channel_allocation"])
        }
        let info = try #require(bumble[8])
        check("encrypted", (s["encrypted"] as? Bool).map { $0 ? 1 : 0 }, info["encryption"])
        check("num_bis", s["num_bis"], info["num_bis"])
        check("sdu_interval_us", s["sdu_interval_us"], info["sdu_interval"])
        check("max_sdu", s["max_sdu"], info["max_sdu"])
        let big = try #require((s["bigs"] as? [[String: Any]])?.first)
        #expect(big["frame"] as? Int == 9 && big["lost_frame"] as? Int == 55 && big["role"] as? String == "sink")
        check("big_handle", big["big_handle"], bumble[9]?["big_handle"])
        check("bis synced", big["bis"], [bumble[9]?["bis.0"], bumble[9]?["bis.1"]].compactMap { $0 })
        check("broadcast_code", (big["broadcast_code"] as? Bool).map { $0 ? 1 : 0 }, bumble[9]?["encryption"])
        check("status", big["status"], bumble[11]?["status"])
        check("bis_handles", big["bis_handles"], [bumble[11]?["connection_handles.0"], bumble[11]?["connection_handles.1"]].compactMap { $0 })
        check("lost_reason", big["lost_reason"], bumble[55]?["reason"])
        // The name is not among the sink capture's Bumble vectors: the capture's bytes say "Gate 12".
        #expect(s["broadcast_name"] as? String == "Gate 12" && s["advertiser"] as? String == "f1:a2:b3:c4:d5:e6", "\(s)")
        #expect(s["first_frame"] as? Int == 3 && s["last_frame"] as? Int == 55)

        // Two sources whose advertising data came in pieces: one row each, in the order seen.
        let pieces = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/broadcast_pieces.json"))) as? [[String: Any]])
        let p = try S.json(["stats", "--format", "json", dir + "/le_audio_broadcast_pieces.btsnoop"])
        let prow = try #require(p["le_audio_sources"] as? [[String: Any]])
        check("sources", prow.count, pieces.count)
        for (row, e) in zip(prow, pieces) {
            check("first_frame", row["first_frame"], e["frame"])
            check("broadcast_id", row["broadcast_id"], e["broadcast_id"])
            check("broadcast_name", row["broadcast_name"], e["broadcast_name"])
            check("program_info", row["program_info"], e["program_info"])
            let f = row["pbp_features"] as? [String] ?? []
            for k in ["encrypted", "standard_quality", "high_quality"] { check(k, f.contains(k), e[k] as? Bool) }
        }
        print("broadcast sources: \(values) values, \(agree) agree")
        #expect(values == 40 && agree == values)

        // Text and CSV carry the same row.
        let text = try CLI.run(["stats", dir + "/le_audio_broadcast_sink.btsnoop"])
        #expect(
            text.stdout.contains(
                "  source 0x5a17c3 \"Gate 12\" f1:a2:b3:c4:d5:e6 SID 3, program \"Boarding calls\": BASE delay 40000 us; LC3 48_2 48000 Hz 10 ms 100 octets BIS 1,2 eng \"Boarding calls\", encrypted, BIG 0 synced to BIS 1,2 (0x0010,0x0011), lost #55 #9, frames 3-55\n"
            ),
            "\(text.stdout)")
        let csv = try CLI.run(["stats", "--format", "csv", "--table", "le_audio_sources", dir + "/le_audio_broadcast_sink.btsnoop"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "file,broadcast_id,broadcast_name,advertiser,advertising_sid,advertising_handle,pbp_features,program_info,presentation_delay_us,codec,language,bis,encrypted,num_bis,sdu_interval_us,max_sdu,synced_bis,bis_handles,first_frame,last_frame"
        )
        #expect(lines.count == 2 && lines[1].hasSuffix(",0x5a17c3,Gate 12,f1:a2:b3:c4:d5:e6,3,,encrypted standard_quality,Boarding calls,40000,LC3 48_2 48000 Hz 10 ms 100 octets,eng,1 2,true,2,10000,100,1 2,0x0010 0x0011,3,55"), "\(lines)")
    }

    /// Before: an advertiser's piece whose next never came stayed pending for the rest of the
    /// capture (and every extended report took the pieces route), and a piece from it much
    /// later was joined to it. Source 0x5A17C3's first piece (Data_Status 1), then 6 s of
    /// capture time later another source's whole report (it carries the note), then 0x5A17C3's
    /// last piece: it stands alone.
    @Test func extendedPiecesExpireAfterFiveSeconds() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gate12 = S.announcement + S.broadcastName
        var bytes = S.btsnoop([
            (false, Self.report(Array(gate12[0..<5]), sid: 3, status: 1)),
            (false, Self.report(Self.announcement([0xF0, 0xAD, 0x0B], "Gate 14"), sid: 4)),
            (false, Self.report(Array(gate12[5...]), sid: 3))
        ])
        // Records 2 and 3 six seconds later (btsnoop: 16-octet header, 24-octet record headers,
        // the time stamp's low word at 20).
        var at = 16
        for i in 0..<3 {
            let len = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            if i > 0 {
                var lo = UInt32(bytes[at + 20]) << 24 | UInt32(bytes[at + 21]) << 16 | UInt32(bytes[at + 22]) << 8 | UInt32(bytes[at + 23])
                lo &+= 6_000_000
                for k in 0..<4 { bytes[at + 20 + k] = UInt8(truncatingIfNeeded: lo >> (24 - 8 * k)) }
            }
            at += 24 + len
        }
        let capture = try S.write(bytes, dir, "ext-expired.btsnoop")
        let r = try CLI.run(["dump", "--format", "jsonl", capture])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(frames.count == 3)
        let note = "extended advertising data from c0:ff:ee:00:00:01 (SID 3) never completed: 5 octets in 1 reports, no piece for 6 s: dropped"
        #expect("\(frames[1])".contains(note), "\(frames[1])")
        #expect((frames[1]["le_audio"] as? [String: Any])?["broadcast_audio_announcement"] != nil, "\(frames[1])")
        #expect(frames[2]["le_audio"].map { "\($0)" }?.contains("reassembled") != true, "\(frames[2])")
        #expect(!"\(frames[0])".contains(note) && !"\(frames[2])".contains(note))
        let stats = try CLI.run(["stats", capture])
        #expect(stats.stdout.contains("#2 malformed: adv: " + note), "\(stats.stdout)")
    }

    /// Data_Status 2 after pieces: what is whole is decoded on the last report, the cut noted.
    @Test func truncatedExtendedReportsAreNoted() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gate12 = S.announcement + S.broadcastName
        let announced = [Self.report(Array(gate12[0..<5]), sid: 3, status: 1), Self.report(Array(gate12[5..<12]), sid: 3, status: 2)]
        let capture = try S.write(Self.sinkCapture(announced: announced, left: [], right: []), dir, "ext-cut.btsnoop")
        let r = try CLI.run(["dump", "--format", "jsonl", capture])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(frames.count > 2)
        let le = try #require(frames[1]["le_audio"] as? [String: Any], "\(frames[1])")
        #expect(le["reassembled_pieces"] as? Int == 2 && le["reassembled_octets"] as? Int == 12)
        #expect((le["broadcast_audio_announcement"] as? [String: Any])?["broadcast_id"] as? Int == 0x5A17C3)
        #expect("\(frames[1])".contains("extended advertising data truncated by the controller (Data_Status 2) after 12 octets in 2 reports"), "\(frames[1])")
    }
}
