import Testing
import Foundation
import BluesiftCapture
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire
@testable import BluesiftHost

/// The host against a real peer: Bumble's virtual controller and a GATT peripheral.
@Suite(.serialized, .enabled(if: BumblePeer.available, "\(BumblePeer.skipMessage)"))
struct BumbleCentralTests {
    static let serviceUUID = BluetoothUUID(string: "b1e5f7a0-5e57-4c0d-9a11-000000000001")!
    static let charUUID = BluetoothUUID(string: "b1e5f7a0-5e57-4c0d-9a11-000000000002")!

    func options() -> HostOptions {
        var o = HostOptions()
        o.commandTimeout = .seconds(5); o.attTimeout = .seconds(5); o.connectTimeout = .seconds(5)
        return o
    }

    @Test(arguments: [false, true])
    func scanConnectDiscoverReadWriteSubscribe(legacyReports: Bool) throws {
        let peer = try BumblePeer(legacyReports: legacyReports)
        let transport = try peer.openTransport()
        defer { transport.close(); peer.stop() }
        var tapped: [HCITapEvent] = []
        transport.tap = { tapped.append($0) }
        let host = LECentral(transport: transport, options: options())

        let info = try host.setUp()
        #expect(info.aclDataLength == 27 && info.aclPackets == 64)
        #expect(info.supportsExtendedAdvertising == !legacyReports)

        let adv = try host.scan(for: .name("bluesift-test"), timeout: .seconds(10))
        #expect(adv.isExtended == !legacyReports)
        #expect(adv.localName == "bluesift-test")
        let link = try host.connect(to: adv.address, type: adv.addressType)
        #expect(link.role == 0 && link.peer == adv.address)

        // Discovery at MTU 23 (Bumble adds GAP 0x1800 and GATT 0x1801).
        let services = try host.gatt.discoverAll()
        #expect(services.map(\.uuid).contains(BluetoothUUID(0x1800)))
        let svc = try #require(services.first { $0.uuid == Self.serviceUUID })
        #expect(svc.characteristics.count == 1)
        let ch = try #require(svc.characteristics.first)
        #expect(ch.uuid == Self.charUUID)
        #expect(ch.properties == 0x3E) // read, write w/o response, write, notify, indicate
        #expect(ch.valueHandle == ch.declarationHandle + 1)
        #expect(ch.cccdHandle == ch.valueHandle + 1)

        // 60-byte value at MTU 23: Read then Read Blob at offsets 22 and 44.
        #expect(try host.gatt.read(ch.valueHandle) == [UInt8](0..<60))
        let blobs = tapped.filter { $0.direction == .sent && $0.packet.kind == .acl && $0.packet.bytes.count > 8 && $0.packet.bytes[8] == 0x0C }
        #expect(blobs.map { Int($0.packet.bytes[11]) } == [22, 44])

        // Long write (prepare/execute) at MTU 23, read back.
        let long = [UInt8](100..<150)
        try host.gatt.write(ch.valueHandle, long)
        #expect(try host.gatt.read(ch.valueHandle) == long)

        #expect(try host.gatt.exchangeMTU(247) == 247)
        // At MTU 247 the 55-byte L2CAP frame comes whole from ATT but in 27-byte ACL fragments.
        let blobCount = tapped.count { $0.direction == .sent && $0.packet.kind == .acl && $0.packet.bytes[8] == 0x0C }
        #expect(try host.gatt.read(ch.valueHandle) == long)
        #expect(tapped.count { $0.direction == .sent && $0.packet.kind == .acl && $0.packet.bytes[8] == 0x0C } == blobCount)

        // Subscribe for notifications; each write is echoed as "ack:" + value.
        try host.gatt.subscribe(ch)
        try host.gatt.write(ch.valueHandle, [0x01, 0x02, 0x03])
        var got = try host.gatt.waitForNotifications(count: 1, timeout: .seconds(5))
        #expect(got.first?.handle == ch.valueHandle)
        #expect(got.first?.value == Array("ack:".utf8) + [1, 2, 3])
        #expect(got.first?.isIndication == false)

        // Write Command, with notifications and indications both on.
        try host.gatt.write(ch.cccdHandle!, [0x03, 0x00])
        try host.gatt.write(ch.valueHandle, [0x09], withResponse: false)
        got = try host.gatt.waitForNotifications(count: 2, timeout: .seconds(5))
        #expect(Set(got.map(\.value)) == [Array("ack:".utf8) + [9], Array("ind:".utf8) + [9]])
        #expect(got.filter(\.isIndication).count == 1)
        try host.pump(for: .milliseconds(100))
        let confirmations = tapped.filter { $0.direction == .sent && $0.packet.kind == .acl && $0.packet.bytes.count == 9 && $0.packet.bytes[8] == 0x1E }
        #expect(confirmations.count == 1)

        // Reassembly was exercised: the controller split incoming ACL to 27 bytes.
        #expect(tapped.contains { $0.direction == .received && $0.packet.kind == .acl && ($0.packet.bytes[1] >> 4) & 0x3 == 0x1 })

        try host.disconnect()
        #expect(host.connection == nil)
        #expect(tapped.first?.direction == .sent && tapped.first?.packet == H4Packet(.command, [0x03, 0x0C, 0x00]))
        #expect(zip(tapped, tapped.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
    }

    @Test func unknownDeviceIsNotFound() throws {
        let peer = try BumblePeer(legacyReports: true)
        let transport = try peer.openTransport()
        defer { transport.close(); peer.stop() }
        let host = LECentral(transport: transport, options: options())
        try host.setUp()
        #expect(throws: HostError.deviceNotFound("no advertiser with address 11:22:33:44:55:66 within 1.0 seconds")) {
            _ = try host.scan(for: .address(BDAddr(string: "11:22:33:44:55:66")!), timeout: .seconds(1))
        }
    }

    @Test func peerDisconnectIsConnectionLost() throws {
        let peer = try BumblePeer(legacyReports: true)
        let transport = try peer.openTransport()
        defer { transport.close(); peer.stop() }
        let host = LECentral(transport: transport, options: options())
        try host.setUp()
        try host.connect(.address(BDAddr(string: "c0:ba:5e:00:00:01")!), scanTimeout: .seconds(10))
        let ch = try #require(host.gatt.discoverAll().flatMap(\.characteristics).first { $0.uuid == Self.charUUID })
        try host.gatt.write(ch.valueHandle, Array("bye".utf8), withResponse: false)
        #expect(throws: HostError.connectionLost(reason: 0x13)) {
            _ = try host.gatt.waitForNotifications(count: 1, timeout: .seconds(5))
        }
        #expect(host.connection == nil && host.lostReason == 0x13)
        #expect(throws: HostError.connectionLost(reason: 0x13)) { _ = try host.gatt.read(ch.valueHandle) }
    }
}
