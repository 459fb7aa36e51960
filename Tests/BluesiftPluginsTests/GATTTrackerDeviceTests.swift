import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols
@testable import BluesiftGATT

/// The tracker remembers the last record's connection and device; connections that
/// alternate, and a peer that becomes known, still reach their own databases.
@Suite struct GATTTrackerDeviceTests {
    /// Feeds ATT PDU `att` on `conn` to the tracker as if decoded from a capture.
    static func feed(_ t: GATTTracker, _ att: [UInt8], conn: UInt16, peer: BDAddr?, _ dir: Direction) {
        att.withUnsafeBytes { p in
            var d = DecodedFrame(
                record: CaptureRecord(
                    frame: 1, timestamp: Timestamp(seconds: 0), direction: dir,
                    kind: .acl, bytes: p))
            d.connection = conn
            d.set(ATTPDU(bytes: p))
            t.observe(d, peer: peer)
        }
    }

    /// A primary service discovery exchange: `uuid` at handles 1-5.
    static func discover(_ t: GATTTracker, conn: UInt16, peer: BDAddr?, service uuid: UInt16) {
        feed(t, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], conn: conn, peer: peer, .sent)
        feed(t, [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, UInt8(uuid & 0xFF), UInt8(uuid >> 8)], conn: conn, peer: peer, .received)
    }

    static func service(_ t: GATTTracker, conn: UInt16) -> String? {
        t.locate(adapter: 0, connection: conn, handle: 3)?.0.service.description
    }

    @Test func alternatingConnectionsKeepTheirDevices() {
        let t = GATTTracker()
        let x = BDAddr(0xA1A2_A3A4_A5A6), y = BDAddr(0xB1B2_B3B4_B5B6)
        Self.discover(t, conn: 0x0041, peer: y, service: 0x180A)
        Self.discover(t, conn: 0x0040, peer: nil, service: 0x180F) // peer not known yet
        #expect(Self.service(t, conn: 0x0040) == "180f" && Self.service(t, conn: 0x0041) == "180a")
        // The peer of 0x0040 becomes known, on the very next record: a database of its own.
        Self.discover(t, conn: 0x0040, peer: x, service: 0x1812)
        #expect(Self.service(t, conn: 0x0041) == "180a")
        #expect(Self.service(t, conn: 0x0040) == "1812")
        // Records without the peer stay with the device the connection now belongs to.
        Self.feed(t, [0x0A, 0x03, 0x00], conn: 0x0040, peer: nil, .sent)
        #expect(Self.service(t, conn: 0x0040) == "1812")
        #expect(t.devices.map(\.address) == [y.description, "connection 0x0040", x.description])
    }

    /// Issue 36 #7: a Service Changed indication (Core 5.4 Vol 3 Part G §7.1) starts a new
    /// generation without the range it names; finding the same services again is still one
    /// generation, a contradicting one is another, and names follow the one in force.
    @Test func serviceChangedAndContradictionsMakeGenerations() {
        let t = GATTTracker()
        let x = BDAddr(0xA1A2_A3A4_A5A6)
        Self.discover(t, conn: 0x0040, peer: x, service: 0x180F)
        // Generic Attribute at 0x0010-0x0013 with Service Changed (value 0x0012).
        Self.feed(t, [0x10, 0x10, 0x00, 0xFF, 0xFF, 0x00, 0x28], conn: 0x0040, peer: x, .sent)
        Self.feed(t, [0x11, 0x06, 0x10, 0x00, 0x13, 0x00, 0x01, 0x18], conn: 0x0040, peer: x, .received)
        Self.feed(t, [0x08, 0x10, 0x00, 0x13, 0x00, 0x03, 0x28], conn: 0x0040, peer: x, .sent)
        Self.feed(t, [0x09, 0x07, 0x11, 0x00, 0x20, 0x12, 0x00, 0x05, 0x2A], conn: 0x0040, peer: x, .received)
        #expect(Self.service(t, conn: 0x0040) == "180f")
        Self.feed(t, [0x1D, 0x12, 0x00, 0x01, 0x00, 0x05, 0x00], conn: 0x0040, peer: x, .received)
        #expect(Self.service(t, conn: 0x0040) == nil)
        Self.discover(t, conn: 0x0040, peer: x, service: 0x180F)
        #expect(Self.service(t, conn: 0x0040) == "180f")
        #expect(t.devices.first?.generations.isEmpty == true)
        Self.discover(t, conn: 0x0040, peer: x, service: 0x180A)
        #expect(Self.service(t, conn: 0x0040) == "180a")
        let d = t.devices.first
        #expect(d?.generations.count == 2)
        #expect(d?.generations.first?.database.services.map(\.uuid.description) == ["180f", "1801"])
        #expect(d?.database.services.map(\.uuid.description) == ["180a"])
    }
}
