import Testing
import Foundation
import BluesiftCodecs

/// `bluesift audio` on captures whose media are real codec frames: the project's LE Audio
/// captures (Tests/LEAudio, made with Bumble; their SDUs are filler bytes) with every SDU
/// replaced by an LC3 frame that liblc3 encoded from a sine, and the bundled A2DP capture
/// with its media replaced by frames Debian's `sbcenc` encoded. The WAVs are compared with
/// the source signal (SNR) and, for SBC, sample by sample with Debian's `sbcdec`.
@Suite struct AudioTests {
    static let leAudio = CLI.root.appendingPathComponent("Tests/LEAudio")

    // MARK: helpers

    /// A btsnoop file's records: (offset of the record's data in the file, its length, sent).
    static func records(_ d: [UInt8]) -> [(offset: Int, length: Int, sent: Bool)] {
        var out: [(Int, Int, Bool)] = []
        var o = 16
        func u32(_ i: Int) -> Int { Int(d[i]) << 24 | Int(d[i + 1]) << 16 | Int(d[i + 2]) << 8 | Int(d[i + 3]) }
        while o + 24 <= d.count {
            let incl = u32(o + 4), flags = u32(o + 8)
            out.append((o + 24, incl, flags & 1 == 0))
            o += 24 + incl
        }
        return out
    }

    /// Replaces the bytes of every ISO SDU (H4 0x05 packets, first/continuation/last
    /// fragments) with `sdu(handle, sent, sequence)`, which must be as long as the SDU.
    static func replaceSDUs(_ d: inout [UInt8], _ sdu: (UInt16, Bool, UInt16) -> [UInt8]) -> Int {
        var position: [String: (bytes: [UInt8], at: Int)] = [:]
        var replaced = 0
        for r in records(d) where r.length > 5 && d[r.offset] == 0x05 {
            let p = r.offset + 1
            let h = UInt16(d[p]) | UInt16(d[p + 1]) << 8
            let handle = h & 0x0FFF, pb = (h >> 12) & 3, ts = h & 0x4000 != 0
            let load = Int(UInt16(d[p + 2]) | UInt16(d[p + 3] & 0x3F) << 8)
            var f = p + 4
            let key = "\(handle)/\(r.sent)"
            if pb == 0 || pb == 2 {
                if ts { f += 4 }
                let seq = UInt16(d[f]) | UInt16(d[f + 1]) << 8
                f += 4
                position[key] = (sdu(handle, r.sent, seq), 0)
                replaced += 1
            }
            guard var cur = position[key] else { continue }
            let n = p + 4 + load - f
            for i in 0..<n where cur.at + i < cur.bytes.count { d[f + i] = cur.bytes[cur.at + i] }
            cur.at += n
            position[key] = cur
        }
        return replaced
    }

    /// A sine at `hz` (amplitude 0.5 of full scale), `count` samples at `rate`.
    static func sine(_ hz: Double, rate: Int, count: Int) -> [Int16] {
        (0..<count).map { Int16((sin(2 * Double.pi * hz * Double($0) / Double(rate)) * 16383).rounded()) }
    }

    /// LC3 frames of `signal`, encoded one after another (the encoder keeps state).
    static func lc3Frames(_ signal: [Int16], _ format: LC3Format) throws -> [[UInt8]] {
        let enc = try LC3Encoder(format)
        let n = format.samplesPerFrame
        return signal.withUnsafeBufferPointer { p in (0..<(signal.count / n)).map { enc.encode(p.baseAddress! + $0 * n) } }
    }

    static func wav(_ path: String) throws -> (header: WAVHeader, samples: [Int16]) {
        let d = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let h = try #require(WAVHeader(Array(d.prefix(44))))
        #expect(d.count == 44 + h.dataBytes)
        let s = stride(from: 44, to: d.count - 1, by: 2).map { Int16(bitPattern: UInt16(d[$0]) | UInt16(d[$0 + 1]) << 8) }
        return (h, s)
    }

    /// SNR in dB of `out` (one channel of `channels`, delayed by `delay`) against `ref`, over
    /// the reference samples in `ranges`.
    static func snr(_ ref: [Int16], _ out: [Int16], channel: Int = 0, channels: Int = 1, delay: Int, ranges: [Range<Int>]) -> Double {
        var sig = 0.0, noise = 0.0
        for r in ranges {
            for i in r where (i + delay) * channels + channel < out.count {
                let x = Double(ref[i]), y = Double(out[(i + delay) * channels + channel])
                sig += x * x; noise += (x - y) * (x - y)
            }
        }
        return 10 * log10(sig / max(noise, 1))
    }

    static func tempDir() throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-audio-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    // MARK: LC3

    /// Measured: 16_2 (16 kHz, 10 ms, 40 octets: 32 kb/s) of a 1 kHz sine decodes at 21.7 dB
    /// SNR (22.1 dB outside the concealed frames), best at liblc3's 40-sample delay: a
    /// perceptual codec's noise filling, not misalignment. Threshold: 18 dB.
    static let lc3UnicastSNR = 18.0

    @Test func lc3UnicastSineThroughBothASEs() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let format = LC3Format(sampleRate: 16000, frameMicroseconds: 10000, octetsPerFrame: 40)
        let n = format.samplesPerFrame
        #expect(n == 160)
        let signal = Self.sine(1000, rate: 16000, count: 16 * n)
        let frames = try Self.lc3Frames(signal, format)
        var d = try [UInt8](Data(contentsOf: Self.leAudio.appendingPathComponent("le_audio_unicast.btsnoop")))
        // SDU 5 towards the phone is flagged lost (no data): its length stays 0.
        let replaced = Self.replaceSDUs(&d) { _, _, seq in frames[Int(seq) % frames.count] }
        #expect(replaced == 31)
        let capture = dir + "/unicast-lc3.btsnoop"
        try Data(d).write(to: URL(fileURLWithPath: capture))

        let r = try CLI.run(["audio", capture, "-o", dir])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.contains("conn0001-ase1-sink  LC3 16_2 16000 Hz 10.0 ms 40 octets 1 ch (Front Left)  16 frames, 0 lost, 0.160 s -> \(dir)/conn0001-ase1-sink.wav"))
        #expect(lines.contains("conn0001-ase2-source  LC3 16_2 16000 Hz 10.0 ms 40 octets 1 ch (Front Left)  16 frames, 2 lost, 0.160 s -> \(dir)/conn0001-ase2-source.wav"))

        let delay = format.delaySamples
        #expect(delay == 40)
        // The phone's sink stream: every SDU arrived.
        let sink = try Self.wav(dir + "/conn0001-ase1-sink.wav")
        #expect(sink.header == WAVHeader(sampleRate: 16000, channels: 1, dataBytes: 16 * n * 2))
        let all = Self.snr(signal, sink.samples, delay: delay, ranges: [n..<(15 * n)])
        #expect(all > Self.lc3UnicastSNR, "SNR \(all) dB")
        // Towards the phone SDU 5 was lost and SDU 11 never came: each concealed by exactly
        // one frame (16 × 160 samples in all), the rest as clean as the sink's.
        let source = try Self.wav(dir + "/conn0001-ase2-source.wav")
        #expect(source.header.frames == 16 * n)
        let clean = [n..<(4 * n), (7 * n)..<(10 * n), (13 * n)..<(15 * n)]
        let s = Self.snr(signal, source.samples, delay: delay, ranges: clean)
        #expect(s > Self.lc3UnicastSNR, "SNR \(s) dB")
        print("LC3 16_2 1 kHz sine: SNR \(all) dB (all frames), \(s) dB outside the concealed ones")
    }

    /// Measured: 48_2 (48 kHz, 10 ms, 100 octets: 80 kb/s) decodes the 1 kHz sine at 25.0 dB
    /// SNR and the 500 Hz one at 22.9 dB outside the concealed frames. Threshold: 20 dB.
    static let lc3BroadcastSNR = 20.0

    @Test func lc3BroadcastTwoBISesFromTheBASE() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let format = LC3Format(sampleRate: 48000, frameMicroseconds: 10000, octetsPerFrame: 100)
        let n = format.samplesPerFrame
        let left = Self.sine(1000, rate: 48000, count: 20 * n), right = Self.sine(500, rate: 48000, count: 20 * n)
        let l = try Self.lc3Frames(left, format), r = try Self.lc3Frames(right, format)
        var d = try [UInt8](Data(contentsOf: Self.leAudio.appendingPathComponent("le_audio_broadcast_sink.btsnoop")))
        // BIS handles in BIG Sync Established order: the first is BIS 1 (left), the second BIS 2.
        var handles: [UInt16] = []
        let replaced = Self.replaceSDUs(&d) { h, _, seq in
            if !handles.contains(h) { handles.append(h) }
            return (handles.firstIndex(of: h) == 0 ? l : r)[Int(seq)]
        }
        #expect(replaced == 39)
        let capture = dir + "/broadcast-lc3.btsnoop"
        try Data(d).write(to: URL(fileURLWithPath: capture))

        // Named by the broadcast the sink synced to (Broadcast_ID 0x5A17C3, "Gate 12": the
        // advertiser's report, its periodic sync, the BIG synced on it). Before: `big0-bis1`.
        let bis = "bcast5a17c3-Gate_12-big0-bis"
        let run = try CLI.run(["audio", capture, "-o", dir])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.split(separator: "\n").map(String.init) == [
                "\(bis)1  LC3 48_2 48000 Hz 10.0 ms 100 octets 1 ch (Front Left)  20 frames, 0 lost, 0.200 s -> \(dir)/\(bis)1.wav",
                "\(bis)2  LC3 48_2 48000 Hz 10.0 ms 100 octets 1 ch (Front Right)  20 frames, 1 lost, 0.200 s -> \(dir)/\(bis)2.wav"
            ])
        let delay = format.delaySamples
        let bis1 = try Self.wav(dir + "/\(bis)1.wav"), bis2 = try Self.wav(dir + "/\(bis)2.wav")
        #expect(bis1.header == WAVHeader(sampleRate: 48000, channels: 1, dataBytes: 20 * n * 2))
        #expect(bis2.header == WAVHeader(sampleRate: 48000, channels: 1, dataBytes: 20 * n * 2))
        let s1 = Self.snr(left, bis1.samples, delay: delay, ranges: [n..<(19 * n)])
        // BIS 2 never delivered SDU 7: frames 7 and 8 (the overlap) left out.
        let s2 = Self.snr(right, bis2.samples, delay: delay, ranges: [n..<(7 * n), (9 * n)..<(19 * n)])
        #expect(s1 > Self.lc3BroadcastSNR, "SNR \(s1) dB")
        #expect(s2 > Self.lc3BroadcastSNR, "SNR \(s2) dB")
        print("LC3 48_2: BIS 1 1 kHz SNR \(s1) dB, BIS 2 500 Hz SNR \(s2) dB outside the concealed frame")
    }

    // MARK: SBC

    static var sbcTools: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/sbcenc") && FileManager.default.isExecutableFile(atPath: "/usr/bin/sbcdec") }

    /// A stereo sine (1 kHz left, 500 Hz right) as a Sun AU file, the input sbcenc reads.
    static func au(_ left: [Int16], _ right: [Int16], rate: Int) -> [UInt8] {
        var b: [UInt8] = Array(".snd".utf8)
        for v in [24, 0xFFFF_FFFF, 3, rate, 2] { b += [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        for i in 0..<left.count {
            for v in [left[i], right[i]] { b += [UInt8(UInt16(bitPattern: v) >> 8), UInt8(UInt16(bitPattern: v) & 0xFF)] }
        }
        return b
    }

    @Test(.enabled(if: sbcTools, "sbc-tools (sbcenc, sbcdec) not installed: make deps-test installs them"))
    func sbcMediaEqualsSbcdecSampleBySample() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The bundled capture's media: 12 RTP packets of 5 frames of 119 octets (44.1 kHz,
        // joint stereo, 16 blocks, 8 subbands, bitpool 53), filler until now.
        let count = 12 * 5 * 128
        let left = Self.sine(1000, rate: 44100, count: count), right = Self.sine(500, rate: 44100, count: count)
        try Data(Self.au(left, right, rate: 44100)).write(to: URL(fileURLWithPath: dir + "/sine.au"))
        let enc = try CLI.process("/bin/sh", ["-c", "sbcenc -s 8 -b 53 -j -B 16 sine.au > sine.sbc"], cwd: dir)
        #expect(enc.status == 0, "\(enc.stderr)")
        let sbc = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/sine.sbc")))
        #expect(sbc.count == 60 * 119)
        var d = try [UInt8](Data(contentsOf: URL(fileURLWithPath: CLI.capture("classic_a2dp_hfp.btsnoop"))))
        var packets = 0
        for r in Self.records(d) where r.length == 1 + 4 + 4 + 12 + 596 && d[r.offset] == 0x02 && d[r.offset + 21] == 0x05 && d[r.offset + 22] == 0x9C {
            // H4, ACL header, L2CAP header, RTP header, media payload header: then 5 frames.
            let seq = Int(d[r.offset + 11]) << 8 | Int(d[r.offset + 12])
            for i in 0..<595 { d[r.offset + 22 + i] = sbc[seq * 595 + i] }
            packets += 1
        }
        #expect(packets == 12)
        let capture = dir + "/a2dp-sbc.btsnoop"
        try Data(d).write(to: URL(fileURLWithPath: capture))

        let run = try CLI.run(["audio", capture, "-o", dir])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 1)
        let name = try #require(lines.first?.split(separator: " ").first.map(String.init))
        #expect(lines.first == "\(name)  SBC 44100 Hz joint stereo 16 blocks 8 subbands bitpool 53 loudness  60 frames, 0 lost, 0.174 s -> \(dir)/\(name).wav")
        let ours = try Self.wav("\(dir)/\(name).wav")
        #expect(ours.header == WAVHeader(sampleRate: 44100, channels: 2, dataBytes: count * 4))

        // Debian's sbcdec on the same frames: a Sun AU file, 16-bit big-endian after its header.
        let dec = try CLI.process("/usr/bin/sbcdec", ["-f", "ref.au", "sine.sbc"], cwd: dir)
        #expect(dec.status == 0, "\(dec.stderr)")
        let au = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/ref.au")))
        let offset = Int(au[4]) << 24 | Int(au[5]) << 16 | Int(au[6]) << 8 | Int(au[7])
        let ref = stride(from: offset, to: au.count - 1, by: 2).map { Int16(bitPattern: UInt16(au[$0]) << 8 | UInt16(au[$0 + 1])) }
        #expect(ref.count == ours.samples.count)
        #expect(ref == ours.samples)
        // And against the source: SBC's delay, measured: 73 samples at 8 subbands (the best alignment).
        let s = Self.snr(left, ours.samples, channel: 0, channels: 2, delay: 73, ranges: [256..<(count - 256)])
        print("SBC bitpool 53 joint stereo, 1 kHz left: SNR \(s) dB; equal to sbcdec sample by sample: \(ref == ours.samples)")
        #expect(s > Self.sbcSNR, "SNR \(s) dB")
    }

    /// Measured: 66.8 dB for bitpool 53 joint stereo (the 1 kHz channel, after SBC's 73-sample
    /// delay); the threshold leaves 6 dB.
    static let sbcSNR = 60.0

    // MARK: real captures

    static let motog = CLI.corpus.appendingPathComponent("a2dp_motog_lghbs730_btsnoop_hci.log").path

    @Test(.enabled(if: FileManager.default.fileExists(atPath: motog), "../shared/captures/public is not here"))
    func realA2DPCapture() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLI.run(["audio", Self.motog, "-o", dir])
        #expect(run.status == 0, "\(run.stderr)")
        // 1,585 RTP media packets of 5 SBC frames each (SOURCES.md), none missing.
        #expect(
            run.stdout
                == "a2dp-conn0002-cid05c5  SBC 48000 Hz joint stereo 16 blocks 8 subbands bitpool 51 loudness  7925 frames, 0 lost, 21.133 s -> \(dir)/a2dp-conn0002-cid05c5.wav\n")
        let wav = try Self.wav(dir + "/a2dp-conn0002-cid05c5.wav")
        #expect(wav.header == WAVHeader(sampleRate: 48000, channels: 2, dataBytes: 7925 * 128 * 4))
    }
}
