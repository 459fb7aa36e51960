import Testing
import BluesiftCapture
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire
@testable import BluesiftHost

/// The peripheral over a scripted controller: what it sends to advertise, and how it answers
/// and indicates on a link (an indication waits for the last one's confirmation, and goes
/// only once the CCCD enables it).
@Suite struct LEPeripheralTests {
    final class Responder: GATTServerResponder {
        func read(handle: UInt16, first: Bool, link: ServerLinkState) -> ServerReadAnswer { .value([0x57]) }
        func write(handle: UInt16, value: [UInt8], op: ATTOpcode, link: ServerLinkState) -> ServerWriteAnswer {
            guard handle == 0x0012 else { return .init() }
            return .init(then: [
                ServerNotification(handle: 0x0012, value: [0x01], isIndication: true, delay: .zero),
                ServerNotification(handle: 0x0012, value: [0x02], isIndication: true, delay: .milliseconds(1)),
                ServerNotification(handle: 0x0012, value: [0x03], isIndication: false, delay: .milliseconds(2))
            ])
        }
        func mtuExchanged(client: UInt16, agreed: UInt16) {}
    }

    static let table: [ServerAttribute] = [
        .init(handle: 0x0010, type: ServerAttribute.primaryService, value: [0x0F, 0x18]),
        .init(handle: 0x0011, type: ServerAttribute.characteristic, value: [0x2A, 0x12, 0x00, 0x19, 0x2A]),
        .init(handle: 0x0012, type: BluetoothUUID(0x2A19)),
        .init(handle: 0x0013, type: ServerAttribute.cccd)
    ]
    static let phone = BDAddr(string: "d0:5e:55:10:00:02")!

    /// LE Connection Complete with this host as peripheral (role 1, Core 5.4 Vol 4 Part E §7.7.65.1).
    static func peripheralLink(handle: UInt16 = 0x0040) -> H4Packet {
        H4Packet(
            .event,
            [0x3E, 19, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x01, 0x01]
                + phone.littleEndianBytes + [0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00])
    }

    @Test func advertisesWithTheRecordedAddressAndData() throws {
        let c = ScriptedController()
        let p = LEPeripheral(transport: c, attributes: Self.table, responder: Responder())
        try p.setUp()
        #expect(try p.useAddress(BDAddr(string: "c0:ba:0d:00:00:01"), type: .random) == nil)
        try p.startAdvertising(data: [0x02, 0x01, 0x06], scanResponse: [0x05, 0xFF, 0xFF, 0xFF, 0x62, 0x61])
        #expect(
            Array(c.sentOpcodes.suffix(5)) == [
                HCICommandOpcode.leSetRandomAddress.rawValue, HCICommandOpcode.leSetAdvertisingParameters.rawValue,
                HCICommandOpcode.leSetAdvertisingData.rawValue, HCICommandOpcode.leSetScanResponseData.rawValue,
                HCICommandOpcode.leSetAdvertisingEnable.rawValue
            ])
        let random = c.sent.first { $0.kind == .command && $0.bytes[0] == 0x05 && $0.bytes[1] == 0x20 }
        #expect(random?.bytes == [0x05, 0x20, 0x06, 0x01, 0x00, 0x00, 0x0D, 0xBA, 0xC0])
        // A public address other than the controller's (01:02:03:04:05:06) cannot be taken: said.
        let note = try p.useAddress(BDAddr(string: "7c:bb:8a:cb:0c:8d"), type: .public)
        #expect(note?.hasPrefix("the recorded address 7c:bb:8a:cb:0c:8d is public and the controller's is 01:02:03:04:05:06: advertising as random static ") == true)
        #expect(p.ownAddressType == .random && p.ownAddress.value >> 46 == 0b11)
        // The controller's own public address is used as is.
        #expect(try p.useAddress(BDAddr(string: "01:02:03:04:05:06"), type: .public) == nil && p.ownAddressType == .public)
    }

    @Test func indicationsWaitForTheirConfirmationAndTheCCCD() throws {
        let c = ScriptedController()
        var events: [PeripheralNotificationEvent] = []
        let p = LEPeripheral(transport: c, attributes: Self.table, responder: Responder())
        p.onNotification = { events.append($0) }
        c.respond = { packet in
            guard packet.kind == .command, packet.bytes[0] == 0x06, packet.bytes[1] == 0x04 else { return nil } // Disconnect
            return [ScriptedController.status(HCICommandOpcode.disconnect.rawValue, 0), ScriptedController.disconnectionComplete(reason: 0x16)]
        }
        try p.setUp()
        c.queue.append(Self.peripheralLink())
        #expect(try p.waitForConnection(stop: { false })?.peer == Self.phone)
        // Indications enabled (0x0002), then a write that the responder follows with two
        // indications and a notification (not enabled: skipped).
        c.queue += ScriptedController.acl(cid: 0x0004, [0x12, 0x13, 0x00, 0x02, 0x00])
        c.queue += ScriptedController.acl(cid: 0x0004, [0x12, 0x12, 0x00, 0x05])
        var confirmed = false, rounds = 0
        try p.serve(stop: {
            rounds += 1
            let indications = c.sentACL.filter { $0.count > 8 && $0[8] == 0x1D }
            if indications.count == 1 && !confirmed && rounds > 5 {
                confirmed = true // the second waited this long: confirm the first
                c.queue += ScriptedController.acl(cid: 0x0004, [0x1E])
                c.queue.append(ScriptedController.completedPackets(4))
            }
            return indications.count == 2 || rounds > 50
        })
        let att = c.sentACL.filter { $0.count > 8 }.map { Array($0[8...]) }
        #expect(att == [[0x13], [0x13], [0x1D, 0x12, 0x00, 0x01], [0x1D, 0x12, 0x00, 0x02]])
        #expect(confirmed)
        #expect(events.map(\.notification.value) == [[0x01], [0x03], [0x02]])
        #expect(events.map(\.skipped) == [nil, "not enabled in the CCCD", nil])
        #expect(p.connection == nil && p.lostReason == 0x16)
    }

    /// LE signalling through the L2CAP command types: a request the peripheral does not serve
    /// gets Command Reject "not understood" with its identifier (Vol 3 Part A §4.1); a
    /// response gets nothing.
    @Test func signallingRequestsAreRejectedAndResponsesIgnored() throws {
        let c = ScriptedController()
        let p = LEPeripheral(transport: c, attributes: Self.table, responder: Responder())
        try p.setUp()
        c.queue.append(Self.peripheralLink())
        #expect(try p.waitForConnection(stop: { false })?.peer == Self.phone)
        c.queue += ScriptedController.acl(cid: 0x0005, [0x0A, 0x03, 0x02, 0x00, 0x02, 0x00]) // Information Request
        c.queue += ScriptedController.acl(cid: 0x0005, [0x13, 0x04, 0x02, 0x00, 0x00, 0x00]) // Conn. Param. Update Response
        c.queue += ScriptedController.acl(cid: 0x0005, [0x14, 0x05]) // cut before its length
        var rounds = 0
        try p.serve(stop: {
            rounds += 1; return rounds > 20
        })
        let signalling = c.sentACL.filter { $0.count > 8 && $0[6] == 0x05 && $0[7] == 0x00 }.map { Array($0[8...]) }
        #expect(signalling == [[0x01, 0x03, 0x02, 0x00, 0x00, 0x00]])
    }
}
