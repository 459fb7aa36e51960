import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// The typed HCI commands and events (HCICommands.swift, HCIEvents.swift): bytes as the spec
/// lays them out, decoded back to the same value, found by their code in the registries.
@Suite struct HCITypedTests {
    static let peer = BDAddr(0xC0_11_22_33_44_55)

    static let commands: [any HCICommand] = [
        HCIDisconnect(handle: 0x0040, reason: 0x13),
        HCISetEventMask(mask: 0x2000_8000_0200_8090),
        HCIReset(),
        HCIReadLocalVersionInformation(),
        HCIReadBufferSize(),
        HCIReadBDAddr(),
        HCILESetEventMask(mask: 0x125F),
        HCILEReadBufferSize(),
        HCILEReadLocalSupportedFeatures(),
        HCILESetRandomAddress(address: peer),
        HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00B0, ownAddressType: 1),
        HCILESetAdvertisingData(data: [0x02, 0x01, 0x06]),
        HCILESetScanResponseData(data: Array(repeating: 0x41, count: 31)),
        HCILESetAdvertisingEnable(enable: true),
        HCILESetScanParameters(active: true, interval: 0x0030, window: 0x0030, ownAddressType: 1),
        HCILESetScanEnable(enable: true, filterDuplicates: true),
        HCILECreateConnection(
            scanInterval: 0x0060, scanWindow: 0x0030, peerAddressType: 1, peer: peer, ownAddressType: 1,
            parameters: ConnectionParameters()),
        HCILECreateConnectionCancel(),
        HCILEConnectionUpdate(handle: 0x0040, parameters: ConnectionParameters(intervalMin: 6, intervalMax: 12, latency: 2, supervisionTimeout: 100)),
        HCILEEnableEncryption(handle: 0x0040, rand: Array(1...8), ediv: 0xBEEF, ltk: Array(16..<32)),
        HCILELongTermKeyRequestReply(handle: 0x0041, ltk: Array(0..<16)),
        HCILELongTermKeyRequestNegativeReply(handle: 0x0041)
    ]

    static let events: [any HCIEvent] = [
        HCIDisconnectionCompleteEvent(status: 0, handle: 0x0040, reason: 0x13),
        HCIEncryptionChangeEvent(status: 0, handle: 0x0040, encryptionEnabled: 1),
        HCICommandCompleteEvent(opcode: .readBDAddr, returnParameters: [0, 6, 5, 4, 3, 2, 1]),
        HCICommandStatusEvent(status: 0x0C, opcode: .leCreateConnection),
        HCIHardwareErrorEvent(hardwareCode: 0x2A),
        HCINumberOfCompletedPacketsEvent(entries: [.init(handle: 0x0040, count: 2), .init(handle: 0x0041, count: 1)]),
        HCIEncryptionKeyRefreshCompleteEvent(status: 0, handle: 0x0040),
        HCILEConnectionCompleteEvent(
            status: 0, handle: 0x0040, role: 1, peerAddressType: .random, peer: peer,
            interval: 0x0028, latency: 0, supervisionTimeout: 0x01F4, centralClockAccuracy: 1),
        HCILEEnhancedConnectionCompleteEvent(
            status: 0, handle: 0x0041, role: 0, peerAddressType: .public, peer: peer,
            localResolvablePrivateAddress: BDAddr(0x4A_00_00_00_00_01),
            interval: 0x0018, latency: 1, supervisionTimeout: 0x0100),
        HCILEAdvertisingReportEvent(reports: [
            .init(eventType: 0, addressType: .random, address: peer, data: [2, 1, 6], rssi: -60),
            .init(eventType: 4, addressType: .public, address: BDAddr(1), data: [], rssi: 127)
        ]),
        HCILEConnectionUpdateCompleteEvent(status: 0, handle: 0x0040, interval: 0x0006, latency: 0, supervisionTimeout: 0x0048),
        HCILELongTermKeyRequestEvent(handle: 0x0040, rand: Array(1...8), ediv: 0x1234),
        HCILEExtendedAdvertisingReportEvent(reports: [
            .init(
                eventType: 0x1B, addressType: .random, address: peer, rssi: -50,
                data: [6, 0x09] + Array("probe".utf8))
        ])
    ]

    @Test func commandsRoundTrip() throws {
        for c in Self.commands {
            let bytes = c.encode()
            #expect(Int(bytes[2]) == bytes.count - 3, "\(type(of: c)): length byte")
            let back = try #require(try HCICommands.decode(bytes), "\(type(of: c)) not registered")
            #expect(back.encode() == bytes, "\(type(of: c))")
            #expect(HCICommandOpcode(UInt16(bytes[0]) | UInt16(bytes[1]) << 8) == type(of: c).opcode)
        }
        #expect(HCICommands.types.count == Self.commands.count)
    }

    @Test func eventsRoundTrip() throws {
        for e in Self.events {
            let bytes = e.encode()
            #expect(Int(bytes[1]) == bytes.count - 2, "\(type(of: e)): length byte")
            let back = try #require(try HCIEvents.decode(bytes), "\(type(of: e)) not registered")
            #expect(back.encode() == bytes, "\(type(of: e))")
        }
        // Every registered type: HCIEventViewTests.everyEventRoundTrips.
    }

    /// §7.8.12: the bytes this host sends to connect, field by field.
    @Test func leCreateConnectionBytes() throws {
        let c = HCILECreateConnection(
            scanInterval: 0x0060, scanWindow: 0x0030, peerAddressType: 1, peer: Self.peer, ownAddressType: 1,
            parameters: ConnectionParameters())
        #expect(
            c.encode() == [
                0x0D, 0x20, 25, 0x60, 0x00, 0x30, 0x00, 0x00, 0x01, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x01,
                0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x00
            ])
        #expect(try HCILECreateConnection.decode(c.encode()) == c)
        #expect(HCILECreateConnection.opcode.name == "LE Create Connection")
    }

    /// The analyzer's view of a command the host sends reads the same fields.
    @Test func hciPacketAgreesWithTypedCommand() {
        let c = HCILEConnectionUpdate(handle: 0x0042, parameters: ConnectionParameters(intervalMin: 6, intervalMax: 12, latency: 2, supervisionTimeout: 100))
        let bytes = c.encode()
        let (handle, min, max, latency, timeout) = bytes.withUnsafeBytes { p in
            let h = HCIPacket(kind: .command, bytes: p)
            return (h.handle, h.intervalMin, h.intervalMax, h.latency, h.supervisionTimeout)
        }
        #expect(handle == 0x0042 && min == 6 && max == 12 && latency == 2 && timeout == 100)
    }

    @Test func strictDecodeRejectsDamage() {
        // Wrong opcode, a length past the end, bytes after the parameters.
        #expect(throws: DecodeError.self) { try HCIDisconnect.decode([0x03, 0x0C, 0x00]) }
        #expect(throws: DecodeError.self) { try HCIDisconnect.decode([0x06, 0x04, 0x03, 0x40, 0x00]) }
        #expect(throws: DecodeError.self) { try HCIDisconnect.decode([0x06, 0x04, 0x04, 0x40, 0x00, 0x13, 0xFF]) }
        #expect(throws: DecodeError.self) { try HCIDisconnectionCompleteEvent.decode([0x05, 0x04, 0x00, 0x40]) }
        // Another subevent under LE Meta; an unknown code is no type, not an error.
        #expect(throws: DecodeError.self) { try HCILEConnectionCompleteEvent.decode([0x3E, 0x01, 0x03]) }
        #expect((try? HCIEvents.decode([0x3E, 0x01, 0x7F])) ?? nil == nil)
        #expect((try? HCICommands.decode([0x01, 0xFC, 0x00])) ?? nil == nil)
    }

    /// Handles keep 12 bits; the packet-boundary flags above them are not part of the handle.
    @Test func handlesDropTheFlags() throws {
        let e = try HCINumberOfCompletedPacketsEvent.decode([0x13, 0x05, 0x01, 0x40, 0x20, 0x03, 0x00])
        #expect(e.entries == [.init(handle: 0x0040, count: 3)])
    }

    @Test func returnParametersDecode() throws {
        let v = HCICommandCompleteEvent(opcode: .readLocalVersionInformation, returnParameters: [0, 0x0D, 0, 0, 0x0D, 0xF1, 0x05, 0, 0])
        let r = try v.decodeReturn(HCIReadLocalVersionInformation.Return.init)
        #expect(r.hciVersion == 0x0D && r.companyIdentifier == 0x05F1)
        var w = ByteWriter(); w.writeUInt8(0); r.encode(into: &w)
        #expect(w.bytes == v.returnParameters)
        let b = HCICommandCompleteEvent(opcode: .readBufferSize, returnParameters: [0, 0xFB, 0x00, 0x40, 0x08, 0x00, 0x00, 0x00])
        #expect(try b.decodeReturn(HCIReadBufferSize.Return.init) == .init(aclDataLength: 251, syncDataLength: 0x40, aclPackets: 8, syncPackets: 0))
        let le = HCICommandCompleteEvent(opcode: .leReadBufferSize, returnParameters: [0, 0x1B, 0x00])
        #expect(throws: DecodeError.self) { try le.decodeReturn(HCILEReadBufferSize.Return.init) }
    }
}
