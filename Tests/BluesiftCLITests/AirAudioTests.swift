import Testing
import Foundation
import BluesiftCodecs

/// Sniffed LE Audio (issue 39) through the CLI: `bluesift audio` on the encrypted CIS and BIS
/// of scripts/le_audio_air_audio_fixtures.py (LC3 frames lc3py encoded from a sine sweep,
/// encrypted with Python's `cryptography`, PDUs left out on purpose), `convert --decrypt` of
/// CIS/BIS PDUs read back by tshark, and `redact` of a Broadcast_Code written over an
/// encrypted sniffed ACL.
@Suite struct AirAudioTests {
    static let fixtures = CLI.root.appendingPathComponent("Tests/Fixtures/le-audio-air")
    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }
    static let ltk = "4c68384139f574d836bcf34e9dfb01bf"
    static let code = Array("Auracast1234".utf8) + [0, 0, 0, 0]

    /// The fixture's `sweep(rate, n, f0, f1)`: a logarithmic sine sweep, amplitude 16383.
    static func sweep(rate: Int, count n: Int, from f0: Double, to f1: Double) -> [Int16] {
        let end = Double(n) / Double(rate), k = log(f1 / f0)
        return (0..<n).map { i in
            let t = Double(i) / Double(rate)
            return Int16((sin(2 * Double.pi * f0 * end / k * (exp(t / end * k) - 1)) * 16383).rounded())
        }
    }

    /// The sample ranges of codec frames 1 … frames-1 away from the concealed ones (a
    /// concealed frame and the next, which its overlap reaches, are left out).
    static func clean(frames: Int, concealed: [Int], n: Int) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 1
        for c in concealed.sorted() + [frames] {
            if c - 1 > start { out.append((start * n)..<((c - 1) * n)) }
            start = max(start, c + 2)
        }
        return out
    }

    /// Measured (16 kHz, 10 ms, 80 octets): 61 dB over the whole sweep without loss (lc3py's
    /// encoder, liblc3's decoder, its 40-sample delay). Threshold of the issue: 30 dB.
    static let minimumSNR = 30.0

    @Test func encryptedSniffedCISToWAV() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try CLI.run(["audio", Self.fixture("audio_cis.pcap"), "--ltk", Self.ltk, "-o", dir])
        #expect(r.status == 0, "\(r.stderr)")
        // The C->P stream of CIG 1 CIS 2, bound to sink ASE 1 (its Config Codec over the
        // decrypted ACL); SDUs 10 and 11 never came, 25 lost its start fragment, 40 its end.
        let name = "aa6b7d2c19-cig1-cis2-c2p"
        #expect(r.stdout == "\(name)  LC3 16000 Hz 10.0 ms 80 octets 1 ch (Front Left)  50 frames, 4 lost, 0.500 s -> \(dir)/\(name).wav\n")
        let n = 160
        let wav = try AudioTests.wav(dir + "/\(name).wav")
        #expect(wav.header == WAVHeader(sampleRate: 16000, channels: 1, dataBytes: 50 * n * 2))
        let signal = Self.sweep(rate: 16000, count: 50 * n, from: 200, to: 4000)
        let ranges = Self.clean(frames: 50, concealed: [10, 11, 25, 40], n: n)
        let snr = AudioTests.snr(signal, wav.samples, delay: 40, ranges: ranges)
        #expect(snr >= Self.minimumSNR, "SNR \(snr) dB")
        print("sniffed CIS, LC3 16 kHz 80 octets sweep: SNR \(snr) dB outside the 4 concealed SDUs")
    }

    @Test func encryptedSniffedBISesToWAV() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try CLI.run(["audio", Self.fixture("audio_bis.pcap"), "--broadcast-code", "Auracast1234", "-o", dir])
        #expect(r.status == 0, "\(r.stderr)")
        let cfg = "LC3 48_6 48000 Hz 10.0 ms 155 octets 1 ch"
        #expect(
            r.stdout.split(separator: "\n").map(String.init) == [
                "big4d2a1c3b-bis1  \(cfg) (Front Left)  40 frames, 2 lost, 0.400 s -> \(dir)/big4d2a1c3b-bis1.wav",
                "big4d2a1c3b-bis2  \(cfg) (Front Right)  40 frames, 1 lost, 0.400 s -> \(dir)/big4d2a1c3b-bis2.wav"
            ])
        let n = 480
        for (bis, f0, f1, concealed) in [(1, 200.0, 4000.0, [7, 20]), (2, 300.0, 3000.0, [30])] {
            let wav = try AudioTests.wav(dir + "/big4d2a1c3b-bis\(bis).wav")
            #expect(wav.header == WAVHeader(sampleRate: 48000, channels: 1, dataBytes: 40 * n * 2))
            let signal = Self.sweep(rate: 48000, count: 40 * n, from: f0, to: f1)
            let snr = AudioTests.snr(signal, wav.samples, delay: 120, ranges: Self.clean(frames: 40, concealed: concealed, n: n))
            #expect(snr >= Self.minimumSNR, "BIS \(bis): SNR \(snr) dB")
            print("sniffed BIS \(bis), LC3 48_6 sweep: SNR \(snr) dB outside the concealed SDUs")
        }
    }

    /// A stream that cannot be decoded says why: a BIS without its Broadcast_Code, a CIS whose
    /// ASE configuration was not captured, a BIS whose BASE was not.
    @Test func sniffedStreamsSayWhyTheyWereNotDecoded() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let noCode = try CLI.run(["audio", Self.fixture("audio_bis.pcap"), "-o", dir])
        #expect(
            noCode.stdout.split(separator: "\n").map(String.init) == [
                "big4d2a1c3b-bis1  LC3  skipped: encrypted, not decrypted: no key: give the Broadcast_Code (--broadcast-code)",
                "big4d2a1c3b-bis2  LC3  skipped: encrypted, not decrypted: no key: give the Broadcast_Code (--broadcast-code)"
            ])
        let noASE = try CLI.run(["audio", Self.fixture("encrypted_cis.pcap"), "--ltk", Self.ltk, "-o", dir])
        let why = "skipped: codec configuration unknown: no ASE of CIG 1 CIS 2 with its Config Codec was seen (over the ACL, decrypted)"
        #expect(noASE.stdout.split(separator: "\n").map(String.init) == ["aa6b7d2c19-cig1-cis2-c2p  LC3  " + why, "aa6b7d2c19-cig1-cis2-p2c  LC3  " + why])
        let noBASE = try CLI.run(["audio", Self.fixture("encrypted_bis.pcap"), "--broadcast-code", "Auracast1234", "-o", dir])
        let base = "skipped: codec configuration unknown: no BASE was seen on the BIG's periodic advertising train"
        #expect(noBASE.stdout.split(separator: "\n").map(String.init) == ["big4d2a1c3b-bis1  LC3  " + base, "big4d2a1c3b-bis2  LC3  " + base])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    // MARK: convert --decrypt

    /// pcap records (LINKTYPE 256): the packet bytes after the 10-octet RF header.
    static func pcapPackets(_ path: String) throws -> [[UInt8]] {
        let d = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var out: [[UInt8]] = []
        var o = 24
        while o + 16 <= d.count {
            let n = Int(d[o + 8]) | Int(d[o + 9]) << 8 | Int(d[o + 10]) << 16 | Int(d[o + 11]) << 24
            out.append(Array(d[(o + 16 + 10)..<(o + 16 + n)]))
            o += 16 + n
        }
        return out
    }

    /// The CIS and BIS PDUs written decrypted: the MIC gone, Length the plaintext's, the other
    /// header bits as sent, the CRC valid; tshark reads the headers, the payloads equal the
    /// fixtures' plaintext (`payload(seed, n)` of le_audio_air_crypto_fixtures.py).
    @Test(.enabled(if: LEAudioAirTshark.available, "needs tshark (Debian's tshark package)"))
    func convertDecryptWritesCISAndBISPlaintext() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func payload(_ seed: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((seed * 7 + $0) & 0xFF) } }
        let cisAA: UInt32 = 0x6B7D_2C19
        for (input, args, expected) in [
            // C->P payloads 2e, 2e+1 (40 octets each), P->C payload e (20 octets); event 7's
            // start fragment missed, event 8's P->C MIC damaged (left as it was).
            (
                "encrypted_cis.pcap", ["--ltk", Self.ltk],
                [0, 1, 2, 7, 8].flatMap { e -> [[UInt8]] in
                    let sdu = payload(e, 80)
                    return (e == 7 ? [] : [Array(sdu[..<40])]) + (e == 8 ? [] : [payload(100 + e, 20)]) + [Array(sdu[40...])]
                }
            ),
            // BIS 1 events 0 (twice: IRC), 1, 2, 6; BIS 2 events 0 and 6.
            (
                "encrypted_bis.pcap", ["--broadcast-code", "Auracast1234"],
                [payload(200, 40), payload(300, 40), payload(200, 40), payload(201, 40), payload(202, 40), payload(206, 40), payload(306, 40)]
            )
        ] {
            let out = dir + "/" + input
            let r = try CLI.run(["convert", Self.fixture(input), out, "--decrypt"] + args)
            #expect(r.status == 0, "\(r.stderr)")
            // 13 CIS PDUs with data (the damaged one left), 7 BIS PDUs.
            #expect(r.stderr.contains("bluesift: \(expected.count) CIS/BIS PDUs written decrypted (LE Audio)"), "\(r.stderr)")
            let before = try Self.pcapPackets(Self.fixture(input)), after = try Self.pcapPackets(out)
            #expect(before.count == after.count)
            // Isochronous PDUs with data: access address not the ACL's, the advertising or the train's.
            let iso = { (p: [UInt8]) -> Bool in
                let aa = UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24
                return (aa == cisAA || input.hasPrefix("encrypted_bis") && ![0x8E89_BED6, 0x2F8E_3D4C].contains(aa)) && p[5] > 0
            }
            var plain: [[UInt8]] = []
            for (b, a) in zip(before, after) where iso(b) {
                // The damaged PDU stays as it was (its MIC never verified).
                if b == a { continue }
                #expect(a[0] == b[0] && a[4] == b[4], "header bits as sent")
                #expect(Int(a[5]) == Int(b[5]) - 4 && a.count == b.count - 4)
                plain.append(Array(a[6..<(a.count - 3)]))
            }
            #expect(plain == expected, "\(input)")
            // tshark: the same Length, CRC checked and valid, no malformed packet.
            let t = try LEAudioAirTshark.fields(out, ["btle.access_address", "btle.data_header.length", "btle.crc.incorrect", "_ws.malformed"])
            let lengths = after.filter(iso).map { String($0[5]) }
            let theirs = t.filter { row in after.contains { iso($0) && row[0] == String(format: "0x%08x", UInt32($0[0]) | UInt32($0[1]) << 8 | UInt32($0[2]) << 16 | UInt32($0[3]) << 24) } }
                .filter { $0[1] != "0" }
            #expect(theirs.map { $0[1] } == lengths, "\(input): tshark's lengths")
            #expect(t.allSatisfy { $0[2].isEmpty && $0[3].isEmpty }, "\(input): tshark finds a bad CRC or a malformed packet")
        }
    }

    // MARK: redact

    /// A BASS Set Broadcast_Code written over an encrypted sniffed ACL: `redact` zeroes the
    /// code in the decrypted PDU and seals it again (a new MIC, same length), so the redacted
    /// capture decrypts with the same key and shows zeros where the code was.
    @Test func redactZeroesABroadcastCodeInsideAnEncryptedACL() throws {
        let dir = try AudioTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = Self.fixture("audio_cis.pcap"), out = dir + "/redacted.pcap", report = dir + "/report.json"
        // Before: the code is in the plaintext (convert --decrypt), never in the file's bytes.
        let plainBefore = dir + "/plain-before.pcap"
        #expect(try CLI.run(["convert", input, plainBefore, "--decrypt", "--ltk", Self.ltk]).status == 0)
        #expect(RedactorSearch.offset(try [UInt8](Data(contentsOf: URL(fileURLWithPath: plainBefore))), Self.code) != nil)
        let r = try CLI.run(["redact", input, out, "--salt", "le-audio", "--ltk", Self.ltk, "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        let rep = try String(contentsOfFile: report, encoding: .utf8)
        #expect(rep.contains("\"LE Audio Broadcast_Code (BASS)\" : 1") || rep.contains("\"LE Audio Broadcast_Code (BASS)\":1"), "\(rep)")
        #expect(rep.contains("encrypted PDUs sealed again with their secrets zeroed"), "\(rep)")
        // After: decrypted with the same key, the write is there, its code zeros.
        let plainAfter = dir + "/plain-after.pcap"
        #expect(try CLI.run(["convert", out, plainAfter, "--decrypt", "--ltk", Self.ltk]).status == 0)
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: plainAfter)))
        #expect(RedactorSearch.offset(after, Self.code) == nil)
        // ATT Write Request to 0x0008: Set Broadcast_Code, Source_ID 0, 16 zeros.
        #expect(RedactorSearch.offset(after, [0x12, 0x08, 0x00, 0x04, 0x00] + [UInt8](repeating: 0, count: 16)) != nil)
        // Every PDU still decrypts: the CIS audio is still all there.
        let a = try CLI.run(["audio", out, "--ltk", Self.ltk, "-o", dir])
        #expect(a.stdout.contains("50 frames, 4 lost"), "\(a.stdout)")
        let info = try CLI.run(["dump", out, "--ltk", Self.ltk, "--format", "jsonl"])
        #expect(!info.stdout.contains("MIC check failed"))
    }
}

/// tshark for these tests (the LE Audio air suite's helper lives in another test target).
enum LEAudioAirTshark {
    static var path: String? { ["/usr/bin/tshark", "/usr/local/bin/tshark"].first { FileManager.default.isExecutableFile(atPath: $0) } }
    static var available: Bool { path != nil }
    /// One row per frame, the fields in order ("" when absent).
    static func fields(_ file: String, _ fields: [String]) throws -> [[String]] {
        let r = try CLI.process(path!, ["-r", file, "-T", "fields", "-E", "separator=|"] + fields.flatMap { ["-e", $0] })
        #expect(r.status == 0, "tshark: \(r.stderr)")
        return r.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }
}
