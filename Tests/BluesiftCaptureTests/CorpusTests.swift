import Testing
import Foundation
@testable import BluesiftCapture

extension CaptureTests {
    /// Every public corpus file opens and yields exactly tshark's number of records.
    @Suite struct CorpusTests {
        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func summaryParsesExactCounts() throws {
            #expect(Corpus.summaries["bafang_bluetoothd-hci-latest.pklg"]?.packets == 50027)
            #expect(Corpus.summaries["lightctl_btsnoop_hci.log"]?.packets == 61318)
            #expect(Corpus.summaries["oppo_empty_BT_HCI_2026_0719_110549.cfa"]?.packets == 0)
            #expect(Corpus.summaries.count == 36)
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public"), arguments: Corpus.available ? Corpus.files : [])
        func recordCountMatchesTshark(file: String) throws {
            let expected = try #require(Corpus.summaries[file]).packets
            let reader = try CaptureFile.open(path: Corpus.path(file))
            var n = 0, last = 0
            while let r = reader.next() { n += 1; #expect(r.frame == last + 1); last = r.frame }
            #expect(n == expected, "\(file)")
            #expect(reader.warnings.isEmpty, "\(file): \(reader.warnings)")
            #expect(reader.bytesRead <= reader.fileSize)
        }

        /// First and last timestamps as tshark prints them (UTC).
        @Test(
            .enabled(if: Corpus.available, "needs ../shared/captures/public"),
            arguments: [
                ("a2dp_motog_lghbs730_btsnoop_hci.log", 6), ("lightctl_btsnoop_hci.log", 6), ("btsnooprs_btsnoop_btmon.log", 6),
                ("pogoplus_bt_log_plus_pair.log", 6), ("bafang_bluetoothd-hci-latest.pklg", 6), ("evenG2_bt2.pklg", 6), ("isap_hci_dump.pklg", 6), ("cheoljun_bluetooth-infocar.pcap", 9), ("crackle_le_secure_connections.pcapng", 9),
                ("blepcapanalyzer_hci.pcap", 6), ("tesible_mouse.pcapng", 6), ("crackle_pairing_and_ltk_exchange.pcap", 6)
            ])
        func firstAndLastTimestamps(file: String, digits: Int) throws {
            let s = try #require(Corpus.summaries[file])
            let reader = try CaptureFile.open(path: Corpus.path(file))
            var first: Timestamp?, last: Timestamp?
            while let r = reader.next() { if first == nil { first = r.timestamp }; last = r.timestamp }
            #expect(Corpus.format(try #require(first), digits: digits) == s.first)
            #expect(Corpus.format(try #require(last), digits: digits) == s.last)
        }

        /// Containers come from content: .pcapng files holding classic pcap, .cfa holding btsnoop.
        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func everyCorpusFileIsRecognisedByContent() throws {
            #expect(Corpus.files.count == 36)
            for f in Corpus.files { #expect(Corpus.recognised(f), "\(f)") }
            let cfa = try CaptureFile.open(path: Corpus.path("oppo_BT_HCI_2026_0719_110149.cfa"))
            #expect(cfa.format.container == .btsnoop)
            let esp = try CaptureFile.open(path: Corpus.path("esp32sniffer_ESP32.pcapng"))
            #expect(esp.format.container == .pcap && esp.format.datalink == 201)
        }

        @Test func inRepoCapturesOpen() throws {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: Corpus.inRepo.path)) ?? [])
                .filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".json") }
            #expect(names.count >= 7)
            for name in names {
                let reader = try CaptureFile.open(path: Corpus.inRepo.appendingPathComponent(name).path)
                var n = 0
                while reader.next() != nil { n += 1 }
                #expect(reader.warnings.isEmpty, "\(name)")
                if !name.contains("empty") { #expect(n > 0, "\(name)") }
            }
        }
    }
}
