import Testing
import BluesiftProtocols
import BluesiftWire
import BluesiftCapture
@testable import BluesiftHost

/// The peripheral's ATT server as pure logic: PDUs in, PDUs out, against a table and a
/// scripted responder.
@Suite struct ATTServerTests {
    final class Responder: GATTServerResponder {
        var values: [UInt16: [UInt8]] = [:]
        var writes: [(UInt16, [UInt8], ATTOpcode)] = []
        var reads: [(UInt16, Bool)] = []
        var mtus: [(UInt16, UInt16)] = []
        var then: [ServerNotification] = []
        func read(handle: UInt16, first: Bool, link: ServerLinkState) -> ServerReadAnswer {
            reads.append((handle, first))
            return values[handle].map { .value($0) } ?? .error(.readNotPermitted)
        }
        func write(handle: UInt16, value: [UInt8], op: ATTOpcode, link: ServerLinkState) -> ServerWriteAnswer {
            writes.append((handle, value, op))
            return ServerWriteAnswer(error: value == [0xFF] ? .writeRequestRejected : nil, then: then)
        }
        func mtuExchanged(client: UInt16, agreed: UInt16) { mtus.append((client, agreed)) }
    }

    /// GAP (0x0001-0x0003: Device Name) and a 128-bit vendor service (0x0010-0x0013: one
    /// characteristic, read/write/notify, with a CCCD).
    static let vendor = BluetoothUUID(string: "b1e5f7a0-5e57-4c0d-9a11-000000000001")!
    static let table: [ServerAttribute] = [
        .init(handle: 0x0001, type: ServerAttribute.primaryService, value: [0x00, 0x18]),
        .init(handle: 0x0002, type: ServerAttribute.characteristic, value: [0x02, 0x03, 0x00, 0x00, 0x2A]),
        .init(handle: 0x0003, type: BluetoothUUID(0x2A00)),
        .init(handle: 0x0010, type: ServerAttribute.primaryService, value: vendor.littleEndianBytes),
        .init(handle: 0x0011, type: ServerAttribute.characteristic, value: [0x1A, 0x12, 0x00, 0xF6, 0x36]),
        .init(handle: 0x0012, type: BluetoothUUID(0x36F6)),
        .init(handle: 0x0013, type: ServerAttribute.cccd)
    ]

    func server() -> (ATTServer, Responder) {
        let r = Responder()
        r.values[0x0003] = Array("bluesift-band".utf8)
        r.values[0x0012] = Array(0..<40)
        return (ATTServer(attributes: Self.table, preferredMTU: 185), r)
    }

    @Test func mtuExchangeAnswersThePreferredMTUAndKeepsTheSmaller() {
        var (s, r) = server()
        #expect(s.handle([0x02, 0xF7, 0x00], responder: r) == [0x03, 0xB9, 0x00]) // client 247, server 185
        #expect(s.mtu == 185)
        #expect(r.mtus.first! == (247, 185))
    }

    @Test func primaryServicesByGroupTypeOneUUIDSizePerResponse() {
        var (s, r) = server()
        // Read By Group Type 0x0001-0xffff, 0x2800: GAP only (the 128-bit one needs its own response).
        #expect(s.handle([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], responder: r) == [0x11, 0x06, 0x01, 0x00, 0x03, 0x00, 0x00, 0x18])
        let next = s.handle([0x10, 0x04, 0x00, 0xFF, 0xFF, 0x00, 0x28], responder: r)!
        #expect(next == [0x11, 0x14, 0x10, 0x00, 0x13, 0x00] + Self.vendor.littleEndianBytes)
        // Past the last group: Attribute Not Found on the start handle.
        #expect(s.handle([0x10, 0x14, 0x00, 0xFF, 0xFF, 0x00, 0x28], responder: r) == [0x01, 0x10, 0x14, 0x00, 0x0A])
        // Find By Type Value: the vendor service by its UUID.
        #expect(s.handle([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28] + Self.vendor.littleEndianBytes, responder: r) == [0x07, 0x10, 0x00, 0x13, 0x00])
    }

    @Test func characteristicsAndDescriptorsAreDiscovered() {
        var (s, r) = server()
        #expect(s.handle([0x08, 0x10, 0x00, 0x13, 0x00, 0x03, 0x28], responder: r) == [0x09, 0x07, 0x11, 0x00, 0x1A, 0x12, 0x00, 0xF6, 0x36])
        #expect(s.handle([0x04, 0x13, 0x00, 0x13, 0x00], responder: r) == [0x05, 0x01, 0x13, 0x00, 0x02, 0x29])
        #expect(s.handle([0x04, 0x14, 0x00, 0xFF, 0xFF], responder: r) == [0x01, 0x04, 0x14, 0x00, 0x0A])
        // Read By Type on a value type reads it (Device Name), through the responder.
        #expect(s.handle([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x2A], responder: r) == [0x09, 0x0F, 0x03, 0x00] + Array("bluesift-band".utf8))
        #expect(r.reads.first! == (0x0003, true))
    }

    @Test func readThenReadBlobAtTheMTU() {
        var (s, r) = server()
        #expect(s.handle([0x0A, 0x12, 0x00], responder: r) == [0x0B] + Array(0..<22))
        #expect(s.handle([0x0C, 0x12, 0x00, 0x16, 0x00], responder: r) == [0x0D] + Array(22..<40))
        #expect(s.handle([0x0C, 0x12, 0x00, 0x29, 0x00], responder: r) == [0x01, 0x0C, 0x12, 0x00, 0x07]) // past the end
        #expect(r.reads.map(\.1) == [true, false, false])
        #expect(s.handle([0x0A, 0x99, 0x00], responder: r) == [0x01, 0x0A, 0x99, 0x00, 0x01]) // Invalid Handle
        #expect(s.handle([0x0A, 0x11, 0x00], responder: r) == [0x0B, 0x1A, 0x12, 0x00, 0xF6, 0x36]) // a declaration
    }

    @Test func cccdIsKeptAndNotificationsScheduledAfterAWrite() {
        var (s, r) = server()
        #expect(!s.enabled(0x0012, indication: false))
        #expect(s.handle([0x12, 0x13, 0x00, 0x01, 0x00], responder: r) == [0x13])
        #expect(s.enabled(0x0012, indication: false) && !s.enabled(0x0012, indication: true))
        #expect(s.handle([0x0A, 0x13, 0x00], responder: r) == [0x0B, 0x01, 0x00])
        r.then = [ServerNotification(handle: 0x0012, value: [0xA5], isIndication: false, delay: .milliseconds(30))]
        #expect(s.handle([0x52, 0x12, 0x00, 0x06], responder: r) == nil) // Write Command: no answer
        #expect(s.scheduled.map(\.value) == [[0xA5]])
        #expect(r.writes.map(\.2) == [.writeRequest, .writeCommand])
        #expect(s.handle([0x12, 0x12, 0x00, 0xFF], responder: r) == [0x01, 0x12, 0x12, 0x00, 0xFC]) // the responder's error
        #expect(s.handle([0x12, 0x11, 0x00, 0x00], responder: r) == [0x01, 0x12, 0x11, 0x00, 0x03]) // declarations are read-only
        s.reset()
        #expect(!s.enabled(0x0012, indication: false) && s.mtu == 23)
    }

    @Test func preparedWritesAreJoinedOnExecute() {
        var (s, r) = server()
        #expect(s.handle([0x16, 0x12, 0x00, 0x00, 0x00, 1, 2, 3], responder: r) == [0x17, 0x12, 0x00, 0x00, 0x00, 1, 2, 3])
        #expect(s.handle([0x16, 0x12, 0x00, 0x03, 0x00, 4, 5], responder: r) == [0x17, 0x12, 0x00, 0x03, 0x00, 4, 5])
        #expect(r.writes.isEmpty)
        #expect(s.handle([0x18, 0x01], responder: r) == [0x19])
        #expect(r.writes.count == 1 && r.writes[0].0 == 0x0012 && r.writes[0].1 == [1, 2, 3, 4, 5] && r.writes[0].2 == .prepareWriteRequest)
        #expect(s.handle([0x18, 0x00], responder: r) == [0x19]) // cancel an empty queue
        #expect(s.handle([0x20, 0x03, 0x00], responder: r) == [0x01, 0x20, 0x00, 0x00, 0x06]) // not served: Request Not Supported
        #expect(s.handle([0x0A], responder: r) == [0x01, 0x0A, 0x00, 0x00, 0x04]) // short: Invalid PDU
    }

    /// The advertising commands this host sends, read back by the HCI decoder (Core 5.4 Vol 4 Part E §7.8.5-§7.8.9).
    @Test func advertisingCommandsDecodeAsSent() {
        let params = HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0, ownAddressType: 1).encode()
        #expect(params == [0x06, 0x20, 0x0F, 0xA0, 0x00, 0xA0, 0x00, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        let data = HCILESetAdvertisingData(data: [0x02, 0x01, 0x06]).encode()
        #expect(data.count == 3 + 32 && Array(data[0..<7]) == [0x08, 0x20, 0x20, 0x03, 0x02, 0x01, 0x06])
        #expect(HCILESetScanResponseData(data: []).encode()[0..<4] == [0x09, 0x20, 0x20, 0x00])
        #expect(HCILESetAdvertisingEnable(enable: true).encode() == [0x0A, 0x20, 0x01, 0x01])
        #expect(HCILELongTermKeyRequestNegativeReply(handle: 0x0040).encode() == [0x1B, 0x20, 0x02, 0x40, 0x00])
        for cmd in [params, data, HCILESetAdvertisingEnable(enable: false).encode(), HCILELongTermKeyRequestReply(handle: 1, ltk: Array(0..<16)).encode()] {
            let (opcode, parameters, error) = cmd.withUnsafeBytes { p in
                let h = HCIPacket(kind: .command, bytes: p)
                return (h.opcode, Array(h.parameters), h.error)
            }
            #expect(opcode == Int(UInt16(cmd[0]) | UInt16(cmd[1]) << 8))
            #expect(parameters == Array(cmd[3...]))
            #expect(error == nil)
        }
    }
}
