import Testing
import BluesiftCapture
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire
@testable import BluesiftHost

@Suite struct LECentralTests {
    static let peer = BDAddr(string: "c0:ba:5e:00:00:01")!

    func host(_ c: ScriptedController) -> LECentral {
        var o = HostOptions()
        o.commandTimeout = .milliseconds(200)
        o.connectTimeout = .milliseconds(200)
        o.attTimeout = .milliseconds(200)
        o.disconnectTimeout = .milliseconds(200)
        o.randomAddress = BDAddr(string: "c1:22:33:44:55:66")!
        return LECentral(transport: c, options: o)
    }

    /// Set up and connect over a scripted controller.
    func connected(_ c: ScriptedController) throws -> LECentral {
        let h = host(c)
        try h.setUp()
        c.respond = { p in
            if p.kind == .command, p.bytes[0] == 0x0D, p.bytes[1] == 0x20 {
                return [ScriptedController.status(HCICommandOpcode.leCreateConnection.rawValue, 0), ScriptedController.connectionComplete(peer: Self.peer)]
            }
            return nil
        }
        try h.connect(to: Self.peer, type: .random)
        c.respond = nil
        return h
    }

    @Test func setUpSequenceAndControllerInfo() throws {
        let c = ScriptedController()
        let info = try host(c).setUp()
        #expect(c.sentOpcodes == [0x0C03, 0x1001, 0x1009, 0x0C01, 0x2003, 0x2001, 0x2002, 0x2005])
        #expect(info.publicAddress == BDAddr(string: "01:02:03:04:05:06"))
        #expect(info.randomAddress == BDAddr(string: "c1:22:33:44:55:66"))
        #expect(info.hciVersion == 0x0D && info.manufacturer == 0x05F1)
        #expect(info.supportsExtendedAdvertising)
        #expect(info.aclDataLength == 27 && info.aclPackets == 4)
        // LE Set Random Address carries the address little-endian.
        #expect(c.sent.last?.bytes == [0x05, 0x20, 6, 0x66, 0x55, 0x44, 0x33, 0x22, 0xC1])
        // Set Event Mask: Disconnection Complete (bit 4) and LE Meta (bit 61) among them.
        let mask = c.sent[3].bytes[3...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(mask & (1 << 4) != 0 && mask & (1 << 61) != 0)
    }

    @Test func fallsBackToReadBufferSize() throws {
        let c = ScriptedController()
        c.leBufferLength = 0; c.leBufferCount = 0
        let info = try host(c).setUp()
        #expect(c.sentOpcodes.contains(0x1005))
        #expect(info.aclDataLength == 251 && info.aclPackets == 8)
    }

    @Test func randomStaticAddressHasTopBitsSet() {
        for _ in 0..<100 {
            let a = LECentral.makeRandomStaticAddress()
            #expect(a.value >> 46 == 0b11)
        }
    }

    @Test func silentControllerTimesOut() {
        let c = ScriptedController()
        c.respond = { _ in [] } // swallow everything
        #expect(throws: HostError.timeout("command 0x0c03")) { try host(c).setUp() }
    }

    @Test func rejectedCommandCarriesOpcodeAndStatus() {
        let c = ScriptedController()
        c.respond = { p in p.bytes.starts(with: [0x05, 0x20]) ? [ScriptedController.complete(0x2005, [0x12])] : nil }
        #expect(throws: HostError.commandRejected(opcode: 0x2005, status: 0x12)) { try host(c).setUp() }
    }

    @Test func connectTimeoutCancels() throws {
        let c = ScriptedController()
        let h = host(c)
        try h.setUp()
        #expect(throws: HostError.timeout("connection to c0:ba:5e:00:00:01")) { try h.connect(to: Self.peer, type: .public) }
        #expect(c.sentOpcodes.suffix(2) == [0x200D, 0x200E])
        // LE Create Connection: peer type public, peer address, own address type random.
        let create = c.sent.first { $0.bytes.starts(with: [0x0D, 0x20]) }!.bytes
        #expect(create[2] == 25 && create[8] == 0 && Array(create[9..<15]) == Self.peer.littleEndianBytes && create[15] == 1)
        #expect(h.connection == nil)
    }

    @Test func failedConnectionReportsStatus() throws {
        let c = ScriptedController()
        let h = host(c)
        try h.setUp()
        c.respond = { p in
            p.bytes.starts(with: [0x0D, 0x20]) ? [ScriptedController.status(0x200D, 0), ScriptedController.connectionComplete(status: 0x3E, peer: Self.peer)] : nil
        }
        #expect(throws: HostError.connectionFailed(status: 0x3E)) { try h.connect(to: Self.peer, type: .random) }
    }

    @Test func connectionLostDuringRequest() throws {
        let c = ScriptedController()
        let h = try connected(c)
        c.respond = { p in p.kind == .acl ? [ScriptedController.disconnectionComplete(reason: 0x08)] : nil }
        #expect(throws: HostError.connectionLost(reason: 0x08)) { _ = try h.gatt.read(0x0003) }
        #expect(h.connection == nil && h.lostReason == 0x08)
        #expect(throws: HostError.connectionLost(reason: 0x08)) { _ = try h.gatt.read(0x0003) }
    }

    @Test func unansweredATTRequestTimesOut() throws {
        let c = ScriptedController()
        let h = try connected(c)
        #expect(throws: HostError.timeout("ATT response to Read Request")) { _ = try h.gatt.read(0x0003) }
        #expect(c.sentACL.last == [0x40, 0x00, 7, 0, 3, 0, 4, 0, 0x0A, 0x03, 0x00])
    }

    @Test func transportClosedIsTyped() throws {
        let c = ScriptedController()
        let h = try connected(c)
        c.close()
        #expect(throws: HostError.transportClosed("scripted: closed")) { _ = try h.gatt.read(0x0003) }
    }

    @Test func fragmentsToBufferSizeAndWaitsForCredits() throws {
        let c = ScriptedController()
        c.leBufferCount = 1
        let h = try connected(c)
        h.gatt.mtu = 64
        var fragments = 0
        c.respond = { p in
            guard p.kind == .acl else { return nil }
            fragments += 1
            // Credit back each fragment; answer the Write Request after the last one.
            return fragments < 3
                ? [ScriptedController.completedPackets(1)]
                : [ScriptedController.completedPackets(1)] + ScriptedController.acl(cid: 4, [0x13])
        }
        let value = [UInt8](repeating: 0xAB, count: 50) // 4 + 3 + 50 = 57 bytes of L2CAP: 27 + 27 + 3
        try h.gatt.write(0x0010, value)
        #expect(c.sentACL.map(\.count) == [31, 31, 7])
        #expect(c.sentACL.map { $0[1] >> 4 } == [0x0, 0x1, 0x1]) // PB: first non-flushable, then continuations
        #expect(Array(c.sentACL[0][4..<11]) == [53, 0, 4, 0, 0x12, 0x10, 0x00])
    }

    @Test func noCreditMeansTimeout() throws {
        let c = ScriptedController()
        c.leBufferCount = 1
        let h = try connected(c)
        h.gatt.mtu = 64
        #expect(throws: HostError.timeout("ACL buffer credit")) { try h.gatt.write(0x0010, [UInt8](repeating: 1, count: 40)) }
        #expect(c.sentACL.count == 1)
    }

    @Test func reassemblesNotificationsAndConfirmsIndications() throws {
        let c = ScriptedController()
        let h = try connected(c)
        var seen: [UInt16] = []
        h.gatt.onNotification = { seen.append($0.handle) }
        let long = [UInt8](0..<40)
        c.queue =
            ScriptedController.acl(cid: 4, [0x1B, 0x12, 0x00] + long, fragment: 10)
            + ScriptedController.acl(cid: 4, [0x1D, 0x15, 0x00, 0x01])
        let before = currentTimestamp()
        let got = try h.gatt.waitForNotifications(count: 2, timeout: .seconds(1))
        #expect(got.map(\.handle) == [0x0012, 0x0015] && seen == [0x0012, 0x0015])
        #expect(got[0].value == long && !got[0].isIndication)
        #expect(got[1].value == [0x01] && got[1].isIndication)
        #expect(got[0].timestamp >= before)
        #expect(c.sentACL.last == [0x40, 0x00, 5, 0, 1, 0, 4, 0, 0x1E]) // Handle Value Confirmation
        #expect(h.gatt.notifications.isEmpty)
    }

    @Test func signallingUpdateAcceptedOthersRejected() throws {
        let c = ScriptedController()
        let h = try connected(c)
        // Connection Parameter Update Request id 7: interval 0x0010...0x0020, latency 0, timeout 0x0190.
        c.queue =
            ScriptedController.acl(cid: 5, [0x12, 0x07, 0x08, 0x00, 0x10, 0x00, 0x20, 0x00, 0x00, 0x00, 0x90, 0x01], fragment: 5)
            + ScriptedController.acl(cid: 5, [0x14, 0x09, 0x0A, 0x00, 0x80, 0, 0x40, 0, 0x17, 0, 0x10, 0, 0x01, 0])
        try h.pump(for: .milliseconds(120))
        #expect(c.sentACL.first == [0x40, 0x00, 10, 0, 6, 0, 5, 0, 0x13, 0x07, 0x02, 0x00, 0x00, 0x00])
        #expect(c.sentACL.last == [0x40, 0x00, 10, 0, 6, 0, 5, 0, 0x01, 0x09, 0x02, 0x00, 0x00, 0x00])
        let update = c.sent.last { $0.kind == .command }!.bytes
        #expect(Array(update.prefix(13)) == [0x13, 0x20, 14, 0x40, 0x00, 0x10, 0x00, 0x20, 0x00, 0x00, 0x00, 0x90, 0x01])
    }

    @Test func peerRequestsGetErrorResponses() throws {
        let c = ScriptedController()
        let h = try connected(c)
        c.queue =
            ScriptedController.acl(cid: 4, [0x02, 0x00, 0x01]) // Exchange MTU 256
            + ScriptedController.acl(cid: 4, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]) // Read By Group Type
        try h.pump(for: .milliseconds(120))
        #expect(c.sentACL[0] == [0x40, 0x00, 7, 0, 3, 0, 4, 0, 0x03, 0x05, 0x02]) // MTU Response 517
        #expect(c.sentACL[1] == [0x40, 0x00, 9, 0, 5, 0, 4, 0, 0x01, 0x10, 0x01, 0x00, 0x0A])
        #expect(h.gatt.mtu == 256)
    }

    @Test func longReadUsesReadBlob() throws {
        let c = ScriptedController()
        let h = try connected(c)
        let value = [UInt8](0..<30)
        c.respond = { p in
            guard p.kind == .acl else { return nil }
            let att = Array(p.bytes[8...])
            if att[0] == 0x0A { return ScriptedController.acl(cid: 4, [0x0B] + value[0..<22]) }
            if att[0] == 0x0C {
                let off = Int(att[3]) | Int(att[4]) << 8
                return ScriptedController.acl(cid: 4, [0x0D] + value[off..<min(off + 22, value.count)])
            }
            return nil
        }
        #expect(try h.gatt.read(0x0003) == value)
        #expect(c.sentACL.last.map { Array($0[8...]) } == [0x0C, 0x03, 0x00, 22, 0x00])
    }

    @Test func errorResponseIsATTError() throws {
        let c = ScriptedController()
        let h = try connected(c)
        c.respond = { p in p.kind == .acl ? ScriptedController.acl(cid: 4, [0x01, 0x12, 0x09, 0x00, 0x03]) : nil }
        #expect(throws: HostError.attError(request: .writeRequest, handle: 0x0009, error: .writeNotPermitted)) {
            try h.gatt.write(0x0009, [1])
        }
    }

    @Test func scanMatchesExtendedAndLegacyReports() throws {
        let c = ScriptedController()
        let h = host(c)
        try h.setUp()
        let name: [UInt8] = [6, 0x09] + Array("probe".utf8)
        c.respond = { p in
            guard p.bytes.starts(with: [0x0C, 0x20]), p.bytes[3] == 1 else { return nil }
            // Legacy report from someone else, then an extended scan response from the target.
            let legacy: [UInt8] = [0x3E, 12 + 0, 0x02, 1, 0x00, 0x00] + BDAddr(0x112233445566).littleEndianBytes + [0, 0xC4]
            let ext: [UInt8] =
                [0x3E, UInt8(26 + name.count), 0x0D, 1, 0x1B, 0x00, 0x01] + Self.peer.littleEndianBytes
                + [1, 0, 0xFF, 0x7F, 0xCE, 0, 0, 0] + [UInt8](repeating: 0, count: 6) + [UInt8(name.count)] + name
            return [ScriptedController.complete(0x200C, [0]), H4Packet(.event, legacy), H4Packet(.event, ext)]
        }
        let adv = try h.scan(for: .name("probe"), timeout: .seconds(1))
        #expect(adv.address == Self.peer && adv.addressType == .random && adv.isExtended && adv.rssi == -50)
        #expect(c.sentOpcodes.suffix(3) == [0x200B, 0x200C, 0x200C]) // parameters, enable, disable
        #expect(c.sent.last?.bytes == [0x0C, 0x20, 2, 0, 0])
        #expect(throws: HostError.deviceNotFound("no advertiser with name 'nobody' within 0.1 seconds")) {
            _ = try h.scan(for: .name("nobody"), timeout: .milliseconds(100))
        }
    }
}
