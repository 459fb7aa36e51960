import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Issue 26: `redact` finds addresses and keys through `HCIFieldLayout`; the decoder reads the
/// same fields through `HCIParameters`. Over the corpus and Captures/, every peer address the
/// decoder reads from a command or event sits at an offset the layout names.
@Suite struct HCIFieldLayoutTests {
    @Test func peerAddressesAreWhereTheLayoutSays() throws {
        var peers = 0, problems: [String] = []
        for path in ATTDecodersAgreeTests.captures {
            guard let reader = try? CaptureFile.open(path: path) else { continue }
            let decoder = ProtocolDecoder()
            var f = DecodedFrame(record: .empty)
            while let r = reader.next() {
                guard r.kind == .command || r.kind == .event else { continue }
                decoder.decode(r, into: &f)
                guard f.layers.contains(.hci), let peer = f.hciStorage.peer else { continue }
                peers += 1
                let offsets = r.kind == .command ? HCIFieldLayout.addresses(command: r.bytes) : HCIFieldLayout.addresses(event: r.bytes)
                let wire = peer.littleEndianBytes
                if !offsets.contains(where: { $0 + 6 <= r.bytes.count && Array(r.bytes[$0..<$0 + 6]) == wire }), problems.count < 10 {
                    problems.append("\((path as NSString).lastPathComponent) #\(r.frame) \(f.hciStorage.name)")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems)")
        #expect(Corpus.has("lightctl_btsnoop_hci.log") ? peers == 726 : peers > 0, "\(peers) peer addresses")
    }

    /// Literal events: LE Enhanced Connection Complete (§7.7.65.10) and a legacy advertising
    /// report with an LE Bluetooth Device Address AD structure (Supplement Part A §1.16).
    @Test func offsetsOfLiteralEvents() {
        // 3e 1f 0a | status 00, handle 0040, role 01, peer type 00, peer 6 bytes, local RPA, peer RPA, …
        withBytes("3e 1f 0a 00 40 00 01 00 11 22 33 44 55 66 00 00 00 00 00 00 00 00 00 00 00 00 28 00 00 00 c8 00 00") { b in
            #expect(HCIFieldLayout.addresses(event: b) == [8, 14, 20])
            #expect(HCIFieldLayout.connectionComplete(b)! == (status: 3, handle: 4, address: 8))
        }
        // One ADV_IND report: type 00, addr type 01, address, data length 9: AD 08 1b, address 00…05, type 06; RSSI.
        withBytes("3e 15 02 01 00 01 aa bb cc dd ee ff 09 08 1b 00 01 02 03 04 05 06 c5") { b in
            let reps = HCIFieldLayout.advertisingReports(b)
            #expect(reps.count == 1 && reps[0].address == 6 && reps[0].data == 13..<22)
            #expect(HCIFieldLayout.addresses(event: b) == [6, 15]) // AD: length 08, type 1b, address at 15, type byte
        }
        // §7.8.25 LE Long Term Key Request Reply: handle then the 16-byte LTK.
        withBytes("1a 20 12 40 00" + String(repeating: " 11", count: 16)) { b in
            #expect(HCIFieldLayout.keys(command: b).map(\.0) == [5..<21])
        }
    }
}
