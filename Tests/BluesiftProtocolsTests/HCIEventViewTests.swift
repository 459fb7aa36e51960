import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// The typed HCI events and their borrowed views (HCIEventViews.swift): every registered event
/// encodes and decodes back to itself, the analyzer's `HCIPacket` reads events only through the
/// views, and a damaged event keeps the fields read before the damage.
@Suite struct HCIEventViewTests {
    static let peer = BDAddr(0xC0_11_22_33_44_55)
    static let enhanced = HCILEEnhancedConnectionCompleteEvent(
        status: 0, handle: 0x0042, role: 1, peerAddressType: .random, peer: peer,
        localResolvablePrivateAddress: BDAddr(0x4A_00_00_00_00_01), peerResolvablePrivateAddress: BDAddr(0x7B_00_00_00_00_02),
        interval: 0x0018, latency: 1, supervisionTimeout: 0x0100, centralClockAccuracy: 5)

    /// One value of every type in `HCIEvents.all`.
    static let events: [any HCIEvent] = [
        HCIConnectionCompleteEvent(status: 0, handle: 0x0006, peer: peer, linkType: 1, encryptionEnabled: 0),
        HCIConnectionRequestEvent(peer: peer, classOfDevice: 0x24_04_14, linkType: 1),
        HCIDisconnectionCompleteEvent(status: 0, handle: 0x0040, reason: 0x13),
        HCIAuthenticationCompleteEvent(status: 0x05, handle: 0x0006),
        HCIRemoteNameRequestCompleteEvent(status: 0, peer: peer, name: Array("Speaker".utf8) + [0]),
        HCIEncryptionChangeEvent(status: 0, handle: 0x0040, encryptionEnabled: 1),
        HCIReadRemoteSupportedFeaturesCompleteEvent(status: 0, handle: 0x0006, features: 0x8779_FF9B_FE8F_FFBF),
        HCIReadRemoteVersionInformationCompleteEvent(status: 0, handle: 0x0006, version: 0x0B, companyID: 0x000F, subversion: 0x6119),
        HCICommandCompleteEvent(opcode: .readBDAddr, returnParameters: [0, 6, 5, 4, 3, 2, 1]),
        HCICommandStatusEvent(status: 0x0C, opcode: .leCreateConnection),
        HCIHardwareErrorEvent(hardwareCode: 0x2A),
        HCIRoleChangeEvent(status: 0, peer: peer, role: 1),
        HCINumberOfCompletedPacketsEvent(entries: [.init(handle: 0x0040, count: 2), .init(handle: 0x0041, count: 1)]),
        HCILinkKeyRequestEvent(peer: peer),
        HCILinkKeyNotificationEvent(peer: peer, linkKey: Array(0..<16), keyType: 0x07),
        HCISynchronousConnectionCompleteEvent(
            status: 0, handle: 0x0010, peer: peer, linkType: 2, transmissionInterval: 12, retransmissionWindow: 2,
            rxPacketLength: 60, txPacketLength: 60, airMode: 0x03),
        HCIEncryptionKeyRefreshCompleteEvent(status: 0, handle: 0x0040),
        HCIEncryptionChangeV2Event(status: 0, handle: 0x0040, encryptionEnabled: 1, keySize: 16),
        HCILEConnectionCompleteEvent(
            status: 0, handle: 0x0040, role: 1, peerAddressType: .random, peer: peer,
            interval: 0x0028, latency: 0, supervisionTimeout: 0x01F4, centralClockAccuracy: 1),
        HCILEAdvertisingReportEvent(reports: [.init(eventType: 0, addressType: .random, address: peer, data: [2, 1, 6], rssi: -60)]),
        HCILEConnectionUpdateCompleteEvent(status: 0, handle: 0x0040, interval: 0x0006, latency: 0, supervisionTimeout: 0x0048),
        HCILEReadRemoteFeaturesCompleteEvent(status: 0, handle: 0x0040, features: 0x0000_0000_0001_01FF),
        HCILELongTermKeyRequestEvent(handle: 0x0040, rand: Array(1...8), ediv: 0x1234),
        HCILERemoteConnectionParameterRequestEvent(handle: 0x0040, intervalMin: 6, intervalMax: 12, latency: 0, supervisionTimeout: 500),
        HCILEDataLengthChangeEvent(handle: 0x0040, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120),
        enhanced,
        HCILEDirectedAdvertisingReportEvent(reports: [
            .init(addressType: .random, address: peer, directAddressType: 1, directAddress: BDAddr(0x7B_00_00_00_00_02), rssi: -70)
        ]),
        HCILEPHYUpdateCompleteEvent(status: 0, handle: 0x0040, txPHY: 2, rxPHY: 2),
        HCILEExtendedAdvertisingReportEvent(reports: [.init(eventType: 0x13, addressType: .public, address: peer, rssi: -50, data: [2, 1, 6])]),
        HCILEChannelSelectionAlgorithmEvent(handle: 0x0040, algorithm: 1),
        HCILESubrateChangeEvent(status: 0, handle: 0x0040, subrateFactor: 2, peripheralLatency: 0, continuationNumber: 1, supervisionTimeout: 600),
        HCILEEnhancedConnectionCompleteV2Event(connection: enhanced, advertisingHandle: 3, syncHandle: 0xFFFF)
    ]

    @Test func everyEventRoundTrips() throws {
        for e in Self.events {
            let bytes = e.encode()
            #expect(Int(bytes[1]) == bytes.count - 2, "\(type(of: e)): length byte")
            let back = try #require(try HCIEvents.decode(bytes), "\(type(of: e)) not registered")
            #expect(AnyHashable(back) == AnyHashable(e), "\(type(of: e))")
            #expect(back.encode() == bytes, "\(type(of: e))")
        }
        let listed = Set(HCIEvents.all.map { ObjectIdentifier($0) }), tested = Set(Self.events.map { ObjectIdentifier(type(of: $0)) })
        #expect(listed == tested)
        #expect(HCIEvents.types.count + HCIEvents.leTypes.count == HCIEvents.all.count)
    }

    /// The analyzer's packet over an event's bytes: the fields its view reads.
    static func packet<T>(_ bytes: [UInt8], truncated: Bool = false, _ read: (HCIPacket) -> T) -> T {
        bytes.withUnsafeBytes { read(HCIPacket(kind: .event, bytes: $0, truncated: truncated)) }
    }

    @Test func analyzerReadsTheNewEventsThroughTheirViews() {
        let sync = HCISynchronousConnectionCompleteEvent(status: 0, handle: 0x0010, peer: Self.peer, linkType: 2, airMode: 0x03).encode()
        Self.packet(sync) { h in
            #expect(h.error == nil && h.status == .success && h.handle == 0x0010 && h.peer == Self.peer && h.linkType == 2)
            #expect(HCISynchronousConnectionCompleteEvent.View(parameters: h.parameters).airMode == 0x03)
            #expect(h.parametersDecoded)
        }
        Self.packet(HCIRoleChangeEvent(status: 0, peer: Self.peer, role: 1).encode()) { h in
            #expect(h.summary == "Role Change peer=c0:11:22:33:44:55 role=peripheral status=Success")
        }
        Self.packet(HCILEDataLengthChangeEvent(handle: 0x0040, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 27, maxRxTime: 328).encode()) { h in
            #expect(h.subevent == 0x07 && h.handle == 0x0040 && h.maxTxOctets == 251 && h.maxTxTime == 2120 && h.maxRxOctets == 27 && h.maxRxTime == 328)
        }
        Self.packet(HCILEPHYUpdateCompleteEvent(status: 0, handle: 0x0041, txPHY: 2, rxPHY: 3).encode()) { h in
            #expect(h.handle == 0x0041 && h.txPHY == 2 && h.rxPHY == 3 && h.status == .success)
        }
        Self.packet(HCILEEnhancedConnectionCompleteV2Event(connection: Self.enhanced, advertisingHandle: 3).encode()) { h in
            #expect(h.subevent == 0x29 && h.handle == 0x0042 && h.role == 1 && h.peer == Self.peer && h.peerAddressType == .random)
            #expect(h.interval == 0x0018 && h.latency == 1 && h.supervisionTimeout == 0x0100 && h.error == nil)
            #expect(h.summary == "LE Meta: LE Enhanced Connection Complete v2 handle=0x0042 peer=c0:11:22:33:44:55 role=peripheral status=Success")
        }
        // The view's leading fields only: the rest of the parameters are shown raw too.
        Self.packet(HCILELongTermKeyRequestEvent(handle: 0x0040, rand: Array(1...8), ediv: 0x1234).encode()) { h in
            #expect(h.handle == 0x0040 && !h.parametersDecoded)
        }
        Self.packet(HCINumberOfCompletedPacketsEvent(entries: [.init(handle: 0x0040, count: 2), .init(handle: 0x0041, count: 1)]).encode()) { h in
            let v = HCINumberOfCompletedPacketsEvent.View(parameters: h.parameters)
            #expect(v.count == 2 && v.entry(1) == .init(handle: 0x0041, count: 1) && h.handle == nil)
        }
    }

    /// An LE Connection Complete whose parameter length stops after the peer address: the
    /// fields before the damage are shown, the error names the interval at its offset.
    @Test func damagedEventKeepsTheFieldsBeforeTheDamage() throws {
        let full = HCILEConnectionCompleteEvent(
            status: 0, handle: 0x0040, role: 1, peerAddressType: .random, peer: Self.peer,
            interval: 0x0028, latency: 0, supervisionTimeout: 0x01F4
        ).encode()
        var cut = Array(full[0..<14])
        cut[1] = 12 // subevent, status, handle, role, peer address type, peer address
        Self.packet(cut) { h in
            #expect(h.subevent == 0x01 && h.status == .success && h.handle == 0x0040 && h.role == 1)
            #expect(h.peerAddressType == .random && h.peer == Self.peer)
            #expect(h.interval == nil && h.latency == nil && h.supervisionTimeout == nil)
            #expect(h.error?.layer == "hci" && h.error?.code == .truncated && h.error?.offset == 14)
            #expect(h.error?.message == "connection interval: need 2 bytes, 0 left")
            #expect(h.summary == "LE Meta: LE Connection Complete handle=0x0040 peer=c0:11:22:33:44:55 role=peripheral status=Success")
            #expect(
                json(h)
                    == #"{"opcode":62,"name":"LE Meta","subevent":1,"subevent_name":"LE Connection Complete","status":0,"status_name":"Success","handle":64,"role":"peripheral","peer":"c0:11:22:33:44:55","peer_type":"random"}"#
            )
        }
        // The view alone: the same fields, the offset within the parameters.
        var f = HCIFields(), sub: UInt8?
        let e = cut.withUnsafeBytes { p in
            Result { () throws(DecodeError) in
                _ = try HCIEvents.read(code: 0x3E, parameters: UnsafeRawBufferPointer(rebasing: p[2...]), subevent: &sub, into: &f, cut: false)
            }
        }
        #expect(throws: DecodeError.self) { try e.get() }
        if case .failure(let err) = e { #expect(err.offset == 12) }
        #expect(sub == 0x01 && f.handle == 0x0040 && f.peer == Self.peer && f.interval == nil)
        // A Disconnection Complete cut after its handle: status and handle kept, no reason.
        Self.packet([0x05, 0x03, 0x00, 0x41, 0x00]) { h in
            #expect(h.status == .success && h.handle == 0x0041 && h.reason == nil)
            #expect(h.error?.offset == 5 && h.error?.message == "reason: need 1 bytes, 0 left")
        }
        // The capture cut it (not damage): same fields, no error.
        Self.packet(Array(full[0..<14]), truncated: true) { h in
            #expect(h.handle == 0x0040 && h.interval == nil && h.error == nil && h.truncated)
        }
    }

    /// The host takes [v2] connection and encryption events as it takes [v1] (the types decode them).
    @Test func hostTypesDecodeTheV2Events() throws {
        let v2 = HCILEEnhancedConnectionCompleteV2Event(connection: Self.enhanced, advertisingHandle: 3, syncHandle: 0x0007)
        let back = try #require(try HCIEvents.decode(v2.encode()) as? HCILEEnhancedConnectionCompleteV2Event)
        #expect(back.connection.peerResolvablePrivateAddress == BDAddr(0x7B_00_00_00_00_02) && back.syncHandle == 7)
        #expect(back.connection.centralClockAccuracy == 5)
    }
}
