import Testing
import BluesiftWire
import BluesiftCapture
import BluesiftSecurity
@testable import BluesiftDissect
import BluesiftGATT

/// What `redact` must find, built from bytes: values of masked characteristics in sniffed
/// packets (split over two packets), addresses in PacketLogger notes, names that end in their
/// device's address, and SMP Identity Address Information whatever its type byte says.
@Suite struct RedactorTests {
    static let salt: [UInt8] = Array("redactor-tests".utf8)

    struct Rec { var kind: PacketKind; var bytes: [UInt8]; var dir: Direction? = nil; var sniffer: SnifferInfo? = nil }

    /// Both passes over `recs`; the redacted bytes of each (the original when unchanged).
    static func redact(_ recs: [Rec], mask: Set<BluetoothUUID> = []) -> (out: [[UInt8]], redactor: Redactor) {
        var o = Redactor.Options(salt: salt)
        o.maskCharacteristics = mask
        let r = Redactor(options: o)
        func each(_ body: (CaptureRecord) -> Void) {
            for (i, x) in recs.enumerated() {
                x.bytes.withUnsafeBytes { b in
                    body(
                        CaptureRecord(
                            frame: i + 1, timestamp: Timestamp(seconds: 1_700_000_000 + Int64(i)), direction: x.dir,
                            kind: x.kind, bytes: b, sourceType: x.kind == .ll ? 256 : 0, sniffer: x.sniffer))
                }
            }
        }
        each { r.learn($0) }
        var out: [[UInt8]] = []
        each { rec in out.append(r.redact(rec).bytes ?? Array(rec.bytes)) }
        return (out, r)
    }

    static func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= hay.count else { return false }
        return (0...(hay.count - needle.count)).contains { hay[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    // MARK: sniffed link layer

    static let aa: [UInt8] = [0x11, 0x22, 0x33, 0x44]

    /// A data PDU without CRC (the sniffer header says none): LLID, SN per side, payload.
    static func data(_ llid: UInt8, _ payload: [UInt8], central: Bool, sn: UInt8) -> Rec {
        Rec(
            kind: .ll, bytes: aa + [llid | sn << 3, UInt8(payload.count)] + payload,
            sniffer: SnifferInfo(channel: 5, crcOK: true, fromCentral: central, hasCRC: false))
    }

    /// Core 5.4 Vol 6 Part B §2.3.3.1 CONNECT_IND: InitA, AdvA, then LLData (AA, CRCInit, …).
    static let connectInd = Rec(
        kind: .ll,
        bytes: [0xD6, 0xBE, 0x89, 0x8E, 0x05, 34]
            + [0x01, 0x02, 0x03, 0x04, 0x05, 0xC6] + [0x21, 0x32, 0x43, 0x54, 0x65, 0xD6]
            + aa + [0x55, 0x55, 0x55, 0x03, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0xC8, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x05],
        sniffer: SnifferInfo(channel: 37, crcOK: true, hasCRC: false))

    /// A heart-rate strap sniffed in clear: discovery names 0x0010 Heart Rate Measurement
    /// (0x2a37), then a 10-byte notification split over a start and a continuation PDU.
    @Test func maskingWorksOnSniffedPacketsAndTheirFragments() throws {
        let value: [UInt8] = [0x10, 0x52, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
        let recs = [
            Self.connectInd,
            // Read By Group Type: the Heart Rate service (0x180d) holds 0x0001-0xffff.
            Self.data(2, [0x07, 0x00, 0x04, 0x00, 0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], central: true, sn: 1),
            Self.data(2, [0x08, 0x00, 0x04, 0x00, 0x11, 0x06, 0x01, 0x00, 0xFF, 0xFF, 0x0D, 0x18], central: false, sn: 1),
            Self.data(2, [0x07, 0x00, 0x04, 0x00, 0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28], central: true, sn: 0),
            Self.data(2, [0x09, 0x00, 0x04, 0x00, 0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x37, 0x2A], central: false, sn: 0),
            Self.data(2, [0x0D, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00] + value[0..<4], central: false, sn: 1),
            Self.data(1, Array(value[4...]), central: false, sn: 0)
        ]
        let (out, redactor) = Self.redact(recs, mask: [BluetoothUUID(string: "2a37")!])
        // Start fragment: header, L2CAP, opcode and handle kept, the value's first 4 bytes zeroed.
        #expect(out[5] == Self.aa + [0x0A, 11, 0x0D, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0, 0, 0, 0])
        #expect(out[6] == Self.aa + [0x01, 6, 0, 0, 0, 0, 0, 0])
        #expect(out[1..<5].elementsEqual(recs[1..<5].map(\.bytes)))
        #expect(redactor.report.contains { $0.0 == "masked values of \(BluetoothUUID(string: "2a37")!)" && $0.1 == 1 })
    }

    // MARK: addresses where they hide

    /// Apple PacketLogger's "BLE Scan Filter" note: `P(0):` before the address.
    @Test func addressesInPacketLoggerNotes() throws {
        let note = Array("BLE Scan Filter: P(0):44:09:DA:5C:4F:AF R(1):12:34:56:78:9A:BC".utf8)
        let (out, _) = Self.redact([Rec(kind: .note, bytes: note)])
        let text = String(decoding: out[0], as: UTF8.self)
        #expect(!text.contains("44:09:DA:5C:4F:AF") && !text.contains("12:34:56:78:9A:BC"), "\(text)")
        let p = AddressPseudonyms(salt: Self.salt).pseudonym([0xAF, 0x4F, 0x5C, 0xDA, 0x09, 0x44])
        let printed = p.reversed().map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(text == "BLE Scan Filter: P(0):\(printed) R(1):" + text.suffix(17))
        // A longer run of colon-separated hex is no address.
        let (kept, _) = Self.redact([Rec(kind: .note, bytes: Array("key 01:02:03:04:05:06:07:08".utf8))])
        #expect(kept[0] == Array("key 01:02:03:04:05:06:07:08".utf8))
    }

    /// A thermometer named after the end of its own address (…:6f:ab → "MODEL_6FAB"): the
    /// suffix is replaced by the pseudonym's, consistently wherever the name appears.
    @Test func namesThatEndInTheirAddress() throws {
        let addr: [UInt8] = [0xAB, 0x6F, 0x12, 0x34, 0x56, 0x78] // 78:56:34:12:6f:ab
        let name = Array("MODEL_6FAB".utf8)
        // §7.7.65.2 LE Advertising Report: one report, ADV_IND, public address, AD: flags, name.
        let ad: [UInt8] = [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name
        let report: [UInt8] = [0x3E, UInt8(2 + 1 + 1 + 6 + 1 + ad.count + 1), 0x02, 0x01, 0x00, 0x00] + addr + [UInt8(ad.count)] + ad + [0xC4]
        // The same name read from the Device Name characteristic (ATT Read Response on ACL).
        let read: [UInt8] = [0x40, 0x20, UInt8(5 + name.count), 0x00, UInt8(1 + name.count), 0x00, 0x04, 0x00, 0x0B] + name
        let (out, redactor) = Self.redact([Rec(kind: .event, bytes: report), Rec(kind: .acl, bytes: read, dir: .received)])
        let p = AddressPseudonyms(salt: Self.salt).pseudonym(addr)
        let renamed = Array(("MODEL_" + String(format: "%02X%02X", p[1], p[0])).utf8)
        #expect(!Self.contains(out[0], name) && !Self.contains(out[1], name))
        #expect(Self.contains(out[0], renamed) && Self.contains(out[1], renamed))
        #expect(redactor.report.contains { $0.0 == "addresses in device names" && $0.1 == 2 })
        // A name that does not end in its address is left alone.
        let other = Array("MODEL_1234".utf8)
        let ad2: [UInt8] = [UInt8(other.count + 1), 0x09] + other
        let report2: [UInt8] = [0x3E, UInt8(2 + 1 + 1 + 6 + 1 + ad2.count + 1), 0x02, 0x01, 0x00, 0x00] + addr + [UInt8(ad2.count)] + ad2 + [0xC4]
        #expect(Self.contains(Self.redact([Rec(kind: .event, bytes: report2)]).out[0], other))
    }

    /// Vol 3 Part H §3.6.4 Identity Address Information with an address type that is neither
    /// public nor random (a fuzzed device sent 0x51): the address is replaced all the same, on
    /// HCI ACL and in a sniffed data PDU.
    @Test func identityAddressWhateverItsType() throws {
        let addr: [UInt8] = [0x91, 0x82, 0x73, 0x64, 0x55, 0x46]
        let smp: [UInt8] = [0x08, 0x00, 0x06, 0x00, 0x09, 0x51] + addr
        let acl: [UInt8] = [0x40, 0x20, UInt8(smp.count), 0x00] + smp
        let (out, _) = Self.redact([Rec(kind: .acl, bytes: acl, dir: .received)])
        #expect(!Self.contains(out[0], addr) && !Self.contains(out[0], addr.reversed()))
        #expect(out[0][10...].elementsEqual(AddressPseudonyms(salt: Self.salt).pseudonym(addr)))
        let (air, _) = Self.redact([Self.connectInd, Self.data(2, smp, central: false, sn: 0)])
        #expect(!Self.contains(air[1], addr) && !Self.contains(air[1], addr.reversed()))
    }
}

/// The last service of a device usually ends at 0xffff: its last characteristic's value and
/// descriptors are named too (the end + 1 wrapped to 0 and named none of them).
@Test func lastCharacteristicOfAServiceEndingAt0xffffIsNamed() throws {
    var db = GATTDatabase()
    db.addService(.init(start: 0x000C, end: 0xFFFF, uuid: BluetoothUUID(string: "180d")!, primary: true))
    db.addCharacteristic(.init(handle: 0x000F, valueHandle: 0x0010, uuid: BluetoothUUID(string: "2a37")!, properties: 0x10))
    #expect(db.locate(0x0010)?.characteristic == BluetoothUUID(string: "2a37"))
    #expect(db.locate(0xFFFF)?.characteristic == BluetoothUUID(string: "2a37"))
    #expect(db.locate(0x000D)?.characteristic == nil && db.locate(0x000D)?.service == BluetoothUUID(string: "180d"))
}
