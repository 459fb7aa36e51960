import Testing
import Foundation
@testable import BluesiftCapture

extension CaptureTests {
    /// Link types and datalinks the corpus lacks, built by hand.
    @Suite struct LinkTypeTests {
        func pcap(_ dlt: UInt32, _ packets: [[UInt8]]) throws -> [Corpus.Rec] {
            let bytes = packets.reduce(Build.pcapHeader(linktype: dlt)) { $0 + Build.pcapRecord($1) }
            return Corpus.records(try CaptureFile.open(path: Temp.file(bytes)))
        }

        @Test func btsnoopH1() throws {
            let b =
                Build.btsnoopHeader(datalink: 1001) + Build.btsnoopRecord([0x03, 0x0c, 0x00], flags: 2)
                + Build.btsnoopRecord([0x0e, 0x01], flags: 3) + Build.btsnoopRecord([0x40, 0x00], flags: 1)
            let recs = Corpus.records(try CaptureFile.open(path: Temp.file(b)))
            #expect(recs.map(\.kind) == [.command, .event, .acl] && recs.map(\.dir) == [.sent, .received, .received])
            #expect(recs[0].bytes == [0x03, 0x0c, 0x00])
        }

        @Test func btsnoopMonitorOpcodes() throws {
            // flags = adapter << 16 | opcode (BlueZ btsnoop.c)
            let log: [UInt8] = [6, 4] + Array("app\0".utf8) + Array("hello\n\0".utf8)
            let b =
                Build.btsnoopHeader(datalink: 2001)
                + Build.btsnoopRecord([0x0e, 0x01], flags: 1 << 16 | 3) + Build.btsnoopRecord([0x40, 0x00], flags: 2 << 16 | 4)
                + Build.btsnoopRecord([0x01, 0x00], flags: 19) + Build.btsnoopRecord([0, 1, 2, 3, 4, 5, 6, 7], flags: 0)
                + Build.btsnoopRecord(log, flags: 0xFFFF << 16 | 13) + Build.btsnoopRecord([1, 2], flags: 16)
                + Build.btsnoopRecord([9], flags: 11) + Build.btsnoopRecord([9], flags: 99)
            let recs = Corpus.records(try CaptureFile.open(path: Temp.file(b)))
            #expect(recs.map(\.kind) == [.event, .acl, .iso, .index, .note, .control, .unknown, .unknown])
            #expect(recs.map(\.adapter) == [1, 2, 0, 0, 0xFFFF, 0, 0, 0])
            #expect(recs[0].dir == .received && recs[1].dir == .sent && recs[2].dir == .received && recs[3].dir == nil)
            #expect(String(decoding: recs[4].bytes, as: UTF8.self) == "app: hello")
            #expect(recs.map(\.sourceType) == [3, 4, 19, 0, 13, 16, 11, 99])
        }

        @Test func h4WithoutDirection() throws {
            let recs = try pcap(187, [[0x01, 0x03, 0x0c, 0x00], [0x04, 0x0e, 0x01], [0x02, 0x40, 0x00], [0x07, 0xAA], []])
            #expect(recs.map(\.kind) == [.command, .event, .acl, .unknown, .unknown])
            #expect(recs.map(\.dir) == [.sent, .received, nil, nil, nil])
            #expect(recs[3].bytes == [0xAA] && recs[3].sourceType == 7)
        }

        @Test func linuxMonitorDLT() throws {
            let recs = try pcap(254, [[0x00, 0x01, 0x00, 0x02, 0x03, 0x0c, 0x00], [0x00, 0x00, 0x00, 0x0c] + Array("note\0".utf8), [0, 0]])
            #expect(recs.map(\.kind) == [.command, .note, .unknown])
            #expect(recs[0].adapter == 1 && recs[0].dir == .sent && recs[0].bytes == [0x03, 0x0c, 0x00])
            #expect(String(decoding: recs[1].bytes, as: UTF8.self) == "note")
        }

        @Test func btleRFDirectionsAndCRC() throws {
            let aa: [UInt8] = [0x12, 0x34, 0x56, 0x78, 0x01, 0x00, 0xaa, 0xbb, 0xcc]
            // rf channel 5 (index 4), signal -60 valid, PDU type 2 (central→peripheral), CRC checked+valid, 2M PHY.
            let f1: UInt16 = 0x0002 | 2 << 7 | 0x0400 | 0x0800 | 1 << 14
            let f2: UInt16 = 3 << 7 | 0x0400
            let recs = try pcap(
                256,
                [
                    [5, 0xC4, 0, 0, 0x12, 0x34, 0x56, 0x78, UInt8(f1 & 0xff), UInt8(f1 >> 8)] + aa,
                    [39, 0, 0, 0, 0, 0, 0, 0, UInt8(f2 & 0xff), UInt8(f2 >> 8)] + aa, [1, 2, 3]
                ])
            #expect(recs[0].kind == .ll && recs[0].bytes == aa)
            #expect(recs[0].sniffer == SnifferInfo(channel: 4, rssi: -60, crcOK: true, fromCentral: true, phy: 1))
            #expect(recs[1].sniffer == SnifferInfo(channel: 39, crcOK: false, fromCentral: false, phy: 0))
            #expect(recs[2].kind == .unknown)
        }

        @Test func rawLinkLayerAndPPIWrappingIt() throws {
            let ll: [UInt8] = [0xd6, 0xbe, 0x89, 0x8e, 0x00, 0x00, 1, 2, 3]
            #expect(try pcap(251, [ll]).first?.bytes == ll)
            var ppi: [UInt8] = [0, 0]; ppi.le16(8); ppi.le32(251)
            let recs = try pcap(192, [ppi + ll, [0, 0, 8, 0, 1, 0, 0, 0, 9]])
            #expect(recs[0].kind == .ll && recs[0].bytes == ll)
            #expect(recs[1].kind == .unknown && recs[1].sourceType == CaptureRecord.noType) // too short for its header: no type
        }

        @Test func nordicLegacyAndShortPackets() throws {
            // 0xBEEF legacy: marker, id, counter(2), 2 unused, length, flags, channel, rssi, event counter(2), delta(4).
            let legacy: [UInt8] = [0xBE, 0xEF, 0x06, 1, 0, 0, 0, 19, 0x03, 7, 50, 0, 0, 0, 0, 0, 0]
            let ll: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x01, 0x00, 0xaa, 0xbb, 0xcc]
            let recs = try pcap(272, [legacy + ll, [0x01, 0x05]])
            #expect(recs[0].kind == .ll && recs[0].bytes == ll)
            #expect(recs[0].sniffer == SnifferInfo(channel: 7, rssi: -50, crcOK: true, fromCentral: true, encrypted: false, phy: 0))
            #expect(recs[1].kind == .unknown && recs[1].bytes == [0x01, 0x05])
        }

        /// Kinds over whole corpus files: nothing that tshark decodes is left `.unknown`.
        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func corpusKinds() throws {
            func histogram(_ f: String) throws -> [PacketKind: Int] {
                Corpus.records(try CaptureFile.open(path: Corpus.path(f))).reduce(into: [:]) { $0[$1.kind, default: 0] += 1 }
            }
            let bafang = try histogram("bafang_bluetoothd-hci-latest.pklg")
            #expect(bafang[.unknown] == 598 + 7 + 835 && bafang[.note] == 55 + 103 && bafang[.event] == 24486)
            let hfp = try histogram("btstack_hfp_test3.pklg")
            #expect(hfp[.sco] == 4359 + 4353)
            let mon = try histogram("btsnooprs_btsnoop_btmon.log")
            #expect(mon[.note] == 350 + 2 && mon[.command] == 55 && mon[.event] == 56 && mon[.control] == 3 + 1 + 36 + 45 && mon[.index] == 1 + 2 + 2 + 1, "\(mon)")
            for f in [
                "tesible_Lv4_passkey.pcapng", "crackle_pairing_and_ltk_exchange.pcap", "crackle_le_secure_connections.pcapng",
                "sweyntooth_noncompliance_nxp_invalid_hop_interval_sniffer.pcapng"
            ] {
                let h = try histogram(f)
                #expect(h.keys.map(\.self) == [.ll], "\(f): \(h)")
            }
            let esp = try histogram("esp32sniffer_ESP32.pcapng")
            #expect(esp[.unknown, default: 0] > 0)
        }
    }
}
