import Testing
import Foundation
@testable import BluesiftCapture

extension CaptureTests {
    /// Record values for chosen frames, checked by hand against `tshark -r F -Y frame.number==N -x`.
    @Suite struct RecordValueTests {
        static func frames(_ file: String, _ wanted: Set<Int>) throws -> [Int: Corpus.Rec] {
            let reader = try CaptureFile.open(path: Corpus.path(file))
            var out: [Int: Corpus.Rec] = [:]
            for r in Corpus.records(reader) where wanted.contains(r.frame) { out[r.frame] = r }
            return out
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func btsnoopH4() throws {
            let f = try Self.frames("yeelock_btsnoop_hci.log", [1, 2, 451, 453])
            #expect(f[1]?.kind == .event && f[1]?.dir == .received && f[1]?.bytes == [0x0f, 0x04, 0x00, 0x01, 0x00, 0x00])
            #expect(f[2]?.kind == .command && f[2]?.dir == .sent && f[2]?.bytes == [0x03, 0x0c, 0x00])
            #expect(f[451]?.kind == .acl && f[451]?.dir == .sent)
            #expect(Corpus.hex(f[451]!.bytes, 8) == "3a000b0007000400")
            #expect(f[453]?.kind == .acl && f[453]?.dir == .received && f[453]?.sourceType == 2)
            let reader = try CaptureFile.open(path: Corpus.path("yeelock_btsnoop_hci.log"))
            #expect(reader.format == CaptureFormat(container: .btsnoop, datalink: 1002, byteOrder: .big, datalinkName: "HCI UART H4"))
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func btsnoopMonitor() throws {
            let f = try Self.frames("btsnooprs_btsnoop_btmon.log", [1, 8, 14])
            #expect(f[1]?.kind == .note && f[1]?.sourceType == 12)
            #expect(String(decoding: f[1]!.bytes, as: UTF8.self) == "Linux version 6.1.19-gentoo-x86_64 (x86_64)")
            #expect(f[8]?.kind == .note && f[8]?.sourceType == 13 && f[8]?.adapter == 0xFFFF)
            #expect(String(decoding: f[8]!.bytes, as: UTF8.self) == "bluetoothd: Terminating")
            #expect(f[14]?.kind == .command && f[14]?.dir == .sent && f[14]?.adapter == 0)
            #expect(f[14]?.bytes == [0x39, 0x20, 0x02, 0x00, 0x00])
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func packetLoggerBigAndLittleEndian() throws {
            let be = try Self.frames("btstack_sm_pairing.pklg", [1, 23])
            #expect(be[1]?.kind == .note && be[1]?.sourceType == 0xFC)
            #expect(String(decoding: be[1]!.bytes, as: UTF8.self) == "registering packet handler")
            #expect(be[23]?.kind == .event && be[23]?.dir == .received && be[23]?.bytes == [0x05, 0x04, 0x00, 0x4a, 0x00, 0x13])
            let le = try Self.frames("evenG2_bt2.pklg", [1, 45, 47])
            #expect(String(decoding: le[1]!.bytes, as: UTF8.self) == "Product: iPhone17,2")
            #expect(le[45]?.kind == .acl && le[45]?.dir == .sent && le[45]?.sourceType == 2)
            #expect(Corpus.hex(le[45]!.bytes, 6) == "1d008b008700")
            #expect(le[47]?.kind == .acl && le[47]?.dir == .received)
            #expect(try CaptureFile.open(path: Corpus.path("evenG2_bt2.pklg")).format.byteOrder == .little)
            #expect(try CaptureFile.open(path: Corpus.path("bafang_bluetoothd-hci-latest.pklg")).format.byteOrder == .big)
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func pcapH4WithPseudoHeader() throws {
            let f = try Self.frames("blepcapanalyzer_hci.pcap", [1, 2, 20])
            #expect(f[1]?.kind == .command && f[1]?.dir == .sent && f[1]?.bytes == [0x03, 0x0c, 0x00])
            #expect(f[2]?.kind == .event && f[2]?.dir == .received && f[2]?.bytes == [0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])
            #expect(f[20]?.bytes.count == 16 && f[20]?.original == 16)
            let r = try CaptureFile.open(path: Corpus.path("blepcapanalyzer_hci.pcap"))
            #expect(r.format.container == .pcap && r.format.datalink == 201)
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func nordicSnifferV3() throws {
            let f = try Self.frames("tesible_mouse.pcapng", [1, 954, 956])
            let adv = try #require(f[1])
            #expect(adv.kind == .ll && adv.bytes.count == 33)
            #expect(Corpus.hex(adv.bytes, 8) == "d6be898e4018ee18")
            #expect(adv.sniffer == SnifferInfo(channel: 37, rssi: -46, crcOK: true, phy: 0, hasCRC: true))
            #expect(f[954]?.bytes == [0x17, 0x65, 0x65, 0x50, 0x01, 0x00, 0xe3, 0x52, 0xce])
            #expect(f[954]?.sniffer == SnifferInfo(channel: 13, rssi: -35, crcOK: true, fromCentral: true, encrypted: false, phy: 0))
            #expect(f[956]?.sniffer?.fromCentral == false && f[956]?.sniffer?.channel == 26)
            #expect(try CaptureFile.open(path: Corpus.path("tesible_mouse.pcapng")).format.container == .pcapng)
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func nordicSnifferV2InMisnamedFile() throws {
            let f = try Self.frames("sweyntooth_capture_dialog_DA14680_truncated_l2cap_crash.pcap", [1])
            #expect(Corpus.hex(f[1]!.bytes, 8) == "d6be898e030c220b")
            #expect(f[1]?.sniffer?.channel == 0 && f[1]?.sniffer?.crcOK == true && f[1]?.sniffer?.fromCentral == nil)
            // classic pcap inside a .pcapng name: detected by content.
            let r = try CaptureFile.open(path: Corpus.path("sweyntooth_noncomplicance_telink_respond_version_more_than_once2.pcapng"))
            #expect(r.format.container == .pcap && r.format.datalink == 272)
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func btleRFHeader() throws {
            let f = try Self.frames("crackle_le_secure_connections.pcapng", [1])
            let r = try #require(f[1])
            #expect(r.kind == .ll && r.bytes.count == 42)
            #expect(Corpus.hex(r.bytes, 6) == "d6be898e4021")
            #expect(r.sniffer == SnifferInfo(channel: 37, rssi: 0, phy: 0, hasCRC: true))
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func ppiBTLE() throws {
            let f = try Self.frames("crackle_pairing_and_ltk_exchange.pcap", [1])
            let r = try #require(f[1])
            #expect(r.kind == .ll && r.sourceType == 192)
            #expect(Corpus.hex(r.bytes, r.bytes.count) == "d6be898e0009e8dd6ee5c578020105c63c96")
            #expect(r.sniffer?.channel == 37 && r.sniffer?.rssi == -18)
        }
    }
}
