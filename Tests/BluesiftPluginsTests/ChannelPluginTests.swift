import Testing
import Foundation
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftPlugins

/// Plugins on Classic channels: an ELM327 OBD-II dongle speaking text over SPP (RFCOMM
/// channel 1 in happyleaf_btsnoop_hci.log), framed at CR.
@Suite struct ChannelPluginTests {
    static let yaml = """
        id: elm327
        name: ELM327 over SPP
        match:
          - rfcomm_channel: 1
            direction: [write, notify]
        framing:
          terminator: 0d
        frame:
          - { id: text, type: str }
        """

    @Test func compilesAndRejectsMixedTargets() throws {
        let p = try PluginLoader.compile(yaml: Self.yaml, path: "elm327.yaml")
        #expect(p.matches.first?.channel == .rfcomm(1))
        let bad = Self.yaml.replacingOccurrences(of: "  - rfcomm_channel: 1", with: "  - rfcomm_channel: 1\n    characteristic: 2a00")
        #expect(throws: (any Error).self) { try PluginLoader.compile(yaml: bad, path: "bad.yaml") }
        let even = Self.yaml.replacingOccurrences(of: "rfcomm_channel: 1", with: "psm: 0x0002")
        #expect(throws: (any Error).self) { try PluginLoader.compile(yaml: even, path: "even.yaml") }
    }

    @Test(
        .enabled(
            if: FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/captures/public/happyleaf_btsnoop_hci.log").path), "needs ../shared/captures/public"))
    func decodesRFCOMMData() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/captures/public/happyleaf_btsnoop_hci.log").path
        var counts: [Int] = []
        // By server channel, then by the service SDP named on it ("Serial Port", #8286).
        for yaml in [Self.yaml, Self.yaml.replacingOccurrences(of: "rfcomm_channel: 1", with: "rfcomm_service: Serial Port")] {
            let analyzer = Analyzer()
            analyzer.plugins = PluginSet([try PluginLoader.compile(yaml: yaml, path: "elm327.yaml")])
            let reader = try CaptureFile.open(path: path)
            var first: [Int: String] = [:], messages = 0
            while let r = reader.next() {
                let a = analyzer.analyze(r)
                guard let v = a.vendor else { continue }
                for m in v.messages {
                    messages += 1
                    if first.count < 2, case .string(let s)? = m.fields.first?.value { first[r.frame] = s }
                }
            }
            // The host's first command, then the dongle's echo assembled from one-byte frames.
            #expect(first[8317]?.hasPrefix("ATCRA35X") == true)
            #expect(messages > 1000)
            counts.append(messages)
        }
        #expect(counts[0] == counts[1])
    }

    /// Owns record bytes while the analyzer borrows them.
    final class Records {
        var buffers: [UnsafeMutableRawBufferPointer] = []
        deinit { for b in buffers { b.deallocate() } }
        func record(_ frame: Int, _ kind: PacketKind, _ dir: Direction, _ b: [UInt8]) -> CaptureRecord {
            let m = UnsafeMutableRawBufferPointer.allocate(byteCount: b.count, alignment: 1)
            m.copyBytes(from: b)
            buffers.append(m)
            return CaptureRecord(
                frame: frame, timestamp: Timestamp(microseconds: Int64(frame) * 1000), direction: dir, adapter: 0,
                kind: kind, bytes: UnsafeRawBufferPointer(m), originalLength: nil, sniffer: nil)
        }
    }

    /// ACL (handle 0x000B) carrying an L2CAP basic frame.
    static func acl(_ cid: UInt16, _ p: [UInt8]) -> [UInt8] {
        let l2 = [UInt8(p.count & 0xFF), UInt8(p.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + p
        return [0x0B, 0x20, UInt8(l2.count & 0xFF), UInt8(l2.count >> 8)] + l2
    }

    /// Messages a plugin decodes from a session built here: SDP advertises "Serial Port" on
    /// RFCOMM channel 5; the host sends "PING\r" on DLCI 10, the device answers "PONG\r" in
    /// two frames.
    static func messages(_ match: String) throws -> [String] {
        let yaml = Self.yaml.replacingOccurrences(of: "rfcomm_channel: 1", with: match)
        let analyzer = Analyzer()
        analyzer.plugins = PluginSet([try PluginLoader.compile(yaml: yaml, path: "spp.yaml")])
        let rec = Records()
        // Service record (Core 5.4 Vol 3 Part B §5.1): class Serial Port 0x1101, L2CAP + RFCOMM channel 5.
        let record: [UInt8] = [
            0x35, 0x19, 0x09, 0x00, 0x01, 0x35, 0x03, 0x19, 0x11, 0x01,
            0x09, 0x00, 0x04, 0x35, 0x0C, 0x35, 0x03, 0x19, 0x01, 0x00, 0x35, 0x05, 0x19, 0x00, 0x03, 0x08, 0x05
        ]
        let lists = [0x35, UInt8(record.count)] + record
        let sdp = SDPPDU.encode(
            pduID: .serviceSearchAttributeResponse, transactionID: 0,
            parameters: [0x00, UInt8(lists.count)] + lists + [0x00])
        func uih(_ dlci: UInt8, _ text: String, cr: Bool) -> [UInt8] {
            RFCOMMFrame.encode(address: dlci << 2 | (cr ? 2 : 0) | 1, control: 0xEF, information: Array(text.utf8))
        }
        let records: [CaptureRecord] = [
            rec.record(1, .event, .received, [0x03, 0x0B, 0x00, 0x0B, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x01, 0x00]),
            rec.record(2, .acl, .sent, acl(0x0001, [0x02, 0x01, 0x04, 0x00, 0x01, 0x00, 0x40, 0x00])), // SDP
            rec.record(3, .acl, .received, acl(0x0001, [0x03, 0x01, 0x08, 0x00, 0x41, 0x00, 0x40, 0x00, 0, 0, 0, 0])),
            rec.record(4, .acl, .received, acl(0x0040, sdp)),
            rec.record(5, .acl, .sent, acl(0x0001, [0x02, 0x02, 0x04, 0x00, 0x03, 0x00, 0x42, 0x00])), // RFCOMM
            rec.record(6, .acl, .received, acl(0x0001, [0x03, 0x02, 0x08, 0x00, 0x43, 0x00, 0x42, 0x00, 0, 0, 0, 0])),
            rec.record(7, .acl, .sent, acl(0x0043, uih(10, "PING\r", cr: true))),
            rec.record(8, .acl, .received, acl(0x0042, uih(10, "PO", cr: false))),
            rec.record(9, .acl, .received, acl(0x0042, uih(10, "NG\r", cr: false)))
        ]
        var out: [String] = []
        for r in records {
            let a = analyzer.analyze(r)
            if r.frame == 7 {
                guard let f = a.decoded.moduleLayer(RFCOMMFrame.self) else { Issue.record("frame 7 is not RFCOMM"); return [] }
                #expect(f.serviceName == "Serial Port" && f.channel == 5 && f.dlci == 10)
            }
            for m in a.vendor?.messages ?? [] {
                if case .string(let s)? = m.fields.first?.value { out.append("#\(r.frame) \(s)") }
            }
        }
        return out
    }

    /// The same channel named by server channel, DLCI or SDP service: the same messages.
    @Test func rfcommTargetsByChannelDLCIOrService() throws {
        let want = try Self.messages("rfcomm_channel: 5")
        #expect(want.count == 2 && want[0].hasPrefix("#7 PING") && want[1].hasPrefix("#9 PONG"))
        #expect(try Self.messages("rfcomm_dlci: 10") == want)
        #expect(try Self.messages("rfcomm_dlci: 11") == want)
        #expect(try Self.messages("rfcomm_service: Serial Port") == want)
        #expect(try Self.messages("rfcomm_service: Handsfree").isEmpty)
        #expect(try Self.messages("rfcomm_channel: 4").isEmpty)
        let p = try PluginLoader.compile(yaml: Self.yaml.replacingOccurrences(of: "rfcomm_channel: 1", with: "rfcomm_service: Serial Port"), path: "s.yaml")
        #expect(p.matches.first?.channel == .rfcommService("Serial Port"))
        for bad in ["rfcomm_dlci: 1", "rfcomm_dlci: 62", "rfcomm_service: Serial Port\n    rfcomm_dlci: 2", "rfcomm_service: \"\""] {
            #expect(throws: (any Error).self, "\(bad)") {
                try PluginLoader.compile(yaml: Self.yaml.replacingOccurrences(of: "rfcomm_channel: 1", with: bad), path: "bad.yaml")
            }
        }
    }
}
