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
            let c = HCIFieldLayout.connectionComplete(b)!
            #expect(c.status == .success && c.handle == 0x0040 && c.peer.littleEndianBytes == [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        }
        // One ADV_IND report: type 00, addr type 01, address, data length 9: AD 08 1b, address 00…05, type 06; RSSI.
        withBytes("3e 15 02 01 00 01 aa bb cc dd ee ff 09 08 1b 00 01 02 03 04 05 06 c5") { b in
            let reps = HCIFieldLayout.advertisingReports(b)
            #expect(reps.count == 1 && reps[0].address == 6 && reps[0].data == 13..<22)
            #expect(HCIFieldLayout.addresses(event: b) == [6, 15]) // AD: length 08, type 1b, address at 15, type byte
        }
        // A vendor event (code 0xff): the vendor's code first.
        withBytes("ff 03 57 01 02") { b in
            #expect(HCIVendorEventView(parameters: UnsafeRawBufferPointer(rebasing: b[2...])).vendorCode == 0x57)
        }
        // §7.8.25 LE Long Term Key Request Reply: handle then the 16-byte LTK.
        withBytes("1a 20 12 40 00" + String(repeating: " 11", count: 16)) { b in
            #expect(HCIFieldLayout.keys(command: b).map(\.0) == [5..<21])
        }
    }

    /// The typed PDUs say where their addresses and keys are: each encoded with distinct bytes,
    /// the layout finds those bytes at the offsets it names (events through their views,
    /// commands and Command Complete's return parameters through the command types).
    @Test func typedPDUsNameTheirOwnFields() {
        let a = BDAddr(0xA6A5_A4A3_A2A1), r1 = BDAddr(0xB6B5_B4B3_B2B1), r2 = BDAddr(0xC6C5_C4C3_C2C1)
        let key = (0..<16).map { UInt8(0xD0 + $0) }
        func addresses(_ packet: [UInt8], event: Bool) -> [BDAddr] {
            packet.withUnsafeBytes { b in
                (event ? HCIFieldLayout.addresses(event: b) : HCIFieldLayout.addresses(command: b)).map {
                    BDAddr(littleEndian: UnsafeRawBufferPointer(rebasing: b[$0..<$0 + 6]))
                }
            }
        }
        func keys(_ packet: [UInt8], event: Bool) -> [[UInt8]] {
            packet.withUnsafeBytes { b in (event ? HCIFieldLayout.keys(event: b) : HCIFieldLayout.keys(command: b)).map { Array(b[$0.0]) } }
        }
        #expect(addresses(HCIConnectionCompleteEvent(status: 0, handle: 1, peer: a).encode(), event: true) == [a])
        #expect(addresses(HCIConnectionRequestEvent(peer: a, classOfDevice: 0x5A020C).encode(), event: true) == [a])
        #expect(addresses(HCIRoleChangeEvent(status: 0, peer: a, role: 1).encode(), event: true) == [a])
        #expect(addresses(HCISynchronousConnectionCompleteEvent(status: 0, handle: 2, peer: a, linkType: 2, airMode: 3).encode(), event: true) == [a])
        let note = HCILinkKeyNotificationEvent(peer: a, linkKey: key, keyType: 4).encode()
        #expect(addresses(note, event: true) == [a] && keys(note, event: true) == [key])
        let enhanced = HCILEEnhancedConnectionCompleteEvent(
            status: 0, handle: 0x40, role: 1, peerAddressType: .random, peer: a, localResolvablePrivateAddress: r1,
            peerResolvablePrivateAddress: r2, interval: 24, latency: 0, supervisionTimeout: 72)
        #expect(addresses(enhanced.encode(), event: true) == [a, r1, r2])
        #expect(addresses(HCILEEnhancedConnectionCompleteV2Event(connection: enhanced).encode(), event: true) == [a, r1, r2])
        let legacy = HCILEAdvertisingReportEvent(reports: [
            .init(eventType: 0, addressType: .public, address: a, data: [0x02, 0x01, 0x06], rssi: -60),
            .init(eventType: 4, addressType: .random, address: r1, data: [0x08, 0x1B] + r2.littleEndianBytes + [0x01], rssi: -61)
        ])
        #expect(addresses(legacy.encode(), event: true) == [a, r1, r2])
        let extended = HCILEExtendedAdvertisingReportEvent(reports: [
            .init(eventType: 0x13, addressType: .public, address: a, rssi: -50, directAddress: r1, data: [0x07, 0x17] + r2.littleEndianBytes)
        ])
        #expect(addresses(extended.encode(), event: true) == [a, r1, r2])
        let directed = HCILEDirectedAdvertisingReportEvent(reports: [.init(addressType: .random, address: a, directAddressType: 1, directAddress: r1, rssi: -40)])
        #expect(addresses(directed.encode(), event: true) == [a, r1])
        let bdaddr = HCICommandCompleteEvent(opcode: .readBDAddr, returnParameters: [0] + a.littleEndianBytes).encode()
        #expect(addresses(bdaddr, event: true) == [a])
        #expect(addresses(HCILESetRandomAddress(address: a).encode(), event: false) == [a])
        #expect(addresses(HCILESetAdvertisingParameters(intervalMin: 32, intervalMax: 48, ownAddressType: 1, peerAddress: a).encode(), event: false) == [a])
        let connect = HCILECreateConnection(
            scanInterval: 16, scanWindow: 16, peerAddressType: 1, peer: a, ownAddressType: 0,
            parameters: ConnectionParameters(intervalMin: 24, intervalMax: 40, latency: 0, supervisionTimeout: 72))
        #expect(addresses(connect.encode(), event: false) == [a])
        #expect(keys(HCILEEnableEncryption(handle: 1, rand: Array(repeating: 7, count: 8), ediv: 9, ltk: key).encode(), event: false) == [key])
        #expect(keys(HCILELongTermKeyRequestReply(handle: 1, ltk: key).encode(), event: false) == [key])
    }
}
