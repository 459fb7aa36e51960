import BluesiftWire

/// One advertiser's report, from an HCI LE (Extended) Advertising Report or an LL adv PDU.
/// Plain data (no references), so frames holding it copy and reset without reference counting.
public struct AdvertisingReport {
    /// Which table names `eventType`.
    public enum EventTypeTable: UInt8, Sendable {
        case legacy, extended, linkLayer, linkLayerSecondary
    }
    public var eventType: UInt16
    public var eventTypeTable: EventTypeTable
    public var address: BDAddr?
    public var addressType: AddressType?
    public var rssi: Int8?
    public var txPower: Int8?
    public var primaryPHY: UInt8?
    public var secondaryPHY: UInt8?
    public var sid: UInt8?
    public var directAddress: BDAddr?
    /// AD structures (Core 5.4 Vol 3 Part C §11; CSS Part A).
    public var data: UnsafeRawBufferPointer
    public var directAddressType: AddressType?
    /// Extended reports: Periodic_Advertising_Interval (1.25 ms units), nil when 0 (none).
    public var periodicInterval: UInt16?

    public init(eventType: UInt16, table: EventTypeTable, data: UnsafeRawBufferPointer) {
        self.eventType = eventType
        self.eventTypeTable = table
        self.data = data
    }

    /// A scan response in an HCI report: legacy event type 0x04 SCAN_RSP (Core 6.0 Vol 4 Part E
    /// §7.7.65.2), or the extended report's Scan response bit 3 (§7.7.65.13).
    public var isScanResponse: Bool {
        eventTypeTable == .legacy ? eventType == 0x04 : (eventTypeTable == .extended && eventType & 0x0008 != 0)
    }

    public var eventTypeName: String {
        switch eventTypeTable {
        case .legacy: AdvertisingLayer.legacyEventTypeName(UInt8(truncatingIfNeeded: eventType))
        case .extended: AdvertisingLayer.extendedEventTypeName(eventType)
        case .linkLayer: LLNames.advPDUTypeName(UInt8(truncatingIfNeeded: eventType), secondary: false)
        case .linkLayerSecondary: LLNames.advPDUTypeName(UInt8(truncatingIfNeeded: eventType), secondary: true)
        }
    }
}

/// The `adv` layer of a record. HCI reports stay in the event's bytes and are parsed as they
/// are read (``forEachReport(_:)``): validated once here, no array per record.
public struct AdvertisingLayer: FieldDescribable {
    /// LE Meta subevent code for HCI reports, LL PDU type for over-the-air PDUs.
    public var opcode: Int
    /// HCI: the subevent's parameters after the subevent code (borrowed).
    var parameters: UnsafeRawBufferPointer
    /// Over the air: the one report of the PDU.
    var single: AdvertisingReport?
    /// Damage found when decoded; the error is found again when asked (rare), so the layer
    /// holds no references and frames copy and reset it as plain data.
    var damaged = false
    public var error: DecodeError? {
        guard damaged else { return nil }
        if let single { return ADStructures.validate(single.data) }
        return damage()
    }

    /// "LE Extended Advertising Report"; over the air, the PDU type ("ADV_IND").
    public var name: String { single?.eventTypeName ?? Self.subeventName(UInt8(truncatingIfNeeded: opcode)) }

    /// The layer of one over-the-air advertising PDU.
    public init(opcode: Int, report: AdvertisingReport) {
        self.opcode = opcode
        self.parameters = UnsafeRawBufferPointer(start: nil, count: 0)
        self.single = report
        self.damaged = ADStructures.validate(report.data) != nil
    }

    /// Reports carried by an HCI LE Meta event: subevents 0x02 (Advertising Report),
    /// 0x0B (Directed Advertising Report), 0x0D (Extended Advertising Report).
    /// `parameters` start after the subevent code. Never traps; damage sets `error`.
    public init(leMetaSubevent: UInt8, parameters: UnsafeRawBufferPointer) {
        self.opcode = Int(leMetaSubevent)
        self.parameters = parameters
        // Nearly every event is whole: a walk over the lengths proves it without building
        // reports. Damage goes the long way, which names the field.
        if Self.isWellFormed(leMetaSubevent, parameters) { return }
        damaged = damage() != nil
    }

    /// The layer over `parameters`, not validated (tests hold the length walk against `damage`).
    init(opcode: Int, parameters: UnsafeRawBufferPointer) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// What is wrong with the reports: the parse error, else the first AD structure damage.
    func damage() -> DecodeError? {
        var adError: DecodeError?
        if let e = parse({ rep in
            if adError == nil, let e = ADStructures.validate(rep.data) { adError = e }
        }) {
            return e.inLayer("adv")
        }
        return adError
    }

    /// True when `parse` would find no damage and every report's AD structures are whole.
    /// Only lengths are read (§7.7.65.2: 10 bytes + data per report; §7.7.65.11: 16;
    /// §7.7.65.13: 24 + data). False sends the event to `parse`, which finds the damage.
    @usableFromInline
    static func isWellFormed(_ subevent: UInt8, _ p: UnsafeRawBufferPointer) -> Bool {
        guard let base = p.baseAddress, p.count > 0 else { return false }
        let end = p.count
        let n = Int(base.load(as: UInt8.self))
        var i = 1
        switch subevent {
        case 0x02, 0x0D:
            let fixed = subevent == 0x02 ? 10 : 24
            let lengthAt = subevent == 0x02 ? 8 : 23 // Data_Length within the report
            for _ in 0..<n {
                guard end - i >= fixed else { return false }
                let len = Int(base.load(fromByteOffset: i + lengthAt, as: UInt8.self))
                guard end - i - fixed >= len,
                    ADStructures.isWellFormed(base + i + lengthAt + 1, count: len)
                else { return false }
                i += fixed + len
            }
        case 0x0B:
            i += 16 * n
        default:
            return false
        }
        return i == end
    }

    /// Calls `body` with each report in order; for a damaged event, with the reports before
    /// the damage.
    public func forEachReport(_ body: (AdvertisingReport) -> Void) {
        if let single { body(single); return }
        _ = parse(body)
    }

    /// The reports (an array: for tests and summaries, not the per-record path).
    public var reports: [AdvertisingReport] {
        var all: [AdvertisingReport] = []
        forEachReport { all.append($0) }
        return all
    }

    public var firstReport: AdvertisingReport? {
        var first: AdvertisingReport?
        forEachReport { if first == nil { first = $0 } }
        return first
    }

    /// Parses the HCI reports, returning the damage (nil when whole).
    private func parse(_ body: (AdvertisingReport) -> Void) -> DecodeError? {
        var r = ByteReader(parameters)
        do throws(DecodeError) {
            switch opcode {
            case 0x02: try Self.parseLegacy(&r, body)
            case 0x0B: try Self.parseDirected(&r, body)
            case 0x0D: try Self.parseExtended(&r, body)
            default:
                throw DecodeError(code: .unsupported, offset: 0, message: "LE Meta subevent \(opcode) carries no advertising reports")
            }
            if !r.isAtEnd {
                throw DecodeError(code: .invalidLength, offset: r.readerIndex, message: "\(r.readableBytes) bytes after the reports")
            }
        } catch {
            return error
        }
        return nil
    }

    static func subeventName(_ s: UInt8) -> String {
        switch s {
        case 0x02: "LE Advertising Report"
        case 0x0B: "LE Directed Advertising Report"
        case 0x0D: "LE Extended Advertising Report"
        default: "Unknown"
        }
    }

    /// Core 5.4 Vol 4 Part E §7.7.65.2 (arrayed parameters interleaved per report, §5.2).
    private static func parseLegacy(_ r: inout ByteReader, _ body: (AdvertisingReport) -> Void) throws(DecodeError) {
        let n = try r.readUInt8("num reports")
        for _ in 0..<n {
            var rep = try readLegacyStart(&r)
            let len = try r.readUInt8("data length")
            rep.data = try r.readBytes(Int(len), "data")
            rep.rssi = Self.rssi(try r.readInt8("rssi"))
            body(rep)
        }
    }

    /// Core 5.4 Vol 4 Part E §7.7.65.11
    private static func parseDirected(_ r: inout ByteReader, _ body: (AdvertisingReport) -> Void) throws(DecodeError) {
        let n = try r.readUInt8("num reports")
        for _ in 0..<n {
            var rep = try readLegacyStart(&r)
            rep.directAddressType = AddressType(rawValue: try r.readUInt8("direct address type"))
            rep.directAddress = try r.readAddress("direct address")
            rep.rssi = Self.rssi(try r.readInt8("rssi"))
            body(rep)
        }
    }

    /// Event_Type, Address_Type and Address, the start of a legacy or directed report.
    private static func readLegacyStart(_ r: inout ByteReader) throws(DecodeError) -> AdvertisingReport {
        let et = try r.readUInt8("event type")
        var rep = AdvertisingReport(eventType: UInt16(et), table: .legacy, data: UnsafeRawBufferPointer(start: nil, count: 0))
        rep.addressType = AddressType(rawValue: try r.readUInt8("address type"))
        rep.address = try r.readAddress()
        return rep
    }

    /// Core 5.4 Vol 4 Part E §7.7.65.13
    private static func parseExtended(_ r: inout ByteReader, _ body: (AdvertisingReport) -> Void) throws(DecodeError) {
        let n = try r.readUInt8("num reports")
        for _ in 0..<n {
            let et = try r.readUInt16(.little, "event type")
            var rep = AdvertisingReport(eventType: et, table: .extended, data: UnsafeRawBufferPointer(start: nil, count: 0))
            rep.addressType = AddressType(rawValue: try r.readUInt8("address type"))
            rep.address = try r.readAddress()
            rep.primaryPHY = try r.readUInt8("primary phy")
            rep.secondaryPHY = try r.readUInt8("secondary phy")
            let sid = try r.readUInt8("advertising sid")
            rep.sid = sid == 0xFF ? nil : sid
            let tx = try r.readInt8("tx power")
            rep.txPower = tx == 127 ? nil : tx
            rep.rssi = Self.rssi(try r.readInt8("rssi"))
            let pi = try r.readUInt16(.little, "periodic advertising interval")
            rep.periodicInterval = pi == 0 ? nil : pi
            let dat = try r.readUInt8("direct address type")
            let da = try r.readAddress("direct address")
            if et & 0x04 != 0 { rep.directAddressType = AddressType(rawValue: dat); rep.directAddress = da }
            let len = try r.readUInt8("data length")
            rep.data = try r.readBytes(Int(len), "data")
            body(rep)
        }
    }

    /// 127 means "not available" (§7.7.65.2).
    static func rssi(_ v: Int8) -> Int8? { v == 127 ? nil : v }

    /// Legacy Event_Type (§7.7.65.2).
    public static func legacyEventTypeName(_ t: UInt8) -> String {
        switch t {
        case 0: "ADV_IND"
        case 1: "ADV_DIRECT_IND"
        case 2: "ADV_SCAN_IND"
        case 3: "ADV_NONCONN_IND"
        case 4: "SCAN_RSP"
        default: "Unknown"
        }
    }

    /// Extended Event_Type bits (§7.7.65.13): legacy PDUs by name (Table 7.1), others by
    /// their connectable/scannable/directed/scan-response bits.
    public static func extendedEventTypeName(_ t: UInt16) -> String {
        if t & 0x10 != 0 {
            switch t & 0x1F {
            case 0x13: return "ADV_IND"
            case 0x15: return "ADV_DIRECT_IND"
            case 0x12: return "ADV_SCAN_IND"
            case 0x10: return "ADV_NONCONN_IND"
            case 0x1B: return "SCAN_RSP to ADV_IND"
            case 0x1A: return "SCAN_RSP to ADV_SCAN_IND"
            default: return "Unknown"
            }
        }
        switch t & 0x0F {
        case 0x00: return "Non-connectable Non-scannable Undirected"
        case 0x01: return "Connectable Undirected"
        case 0x02: return "Scannable Undirected"
        case 0x04: return "Non-connectable Non-scannable Directed"
        case 0x05: return "Connectable Directed"
        case 0x06: return "Scannable Directed"
        case 0x08...0x0F: return "Scan Response"
        default: return "Unknown"
        }
    }

    /// Data status, Event_Type bits 5-6 (§7.7.65.13).
    public static func dataStatusName(_ s: UInt16) -> String {
        switch s {
        case 0: "Complete"
        case 1: "Incomplete, more data to come"
        case 2: "Incomplete, data truncated"
        default: "Reserved"
        }
    }

    public static func phyName(_ p: UInt8) -> String {
        switch p {
        case 0: "None"
        case 1: "LE 1M"
        case 2: "LE 2M"
        case 3: "LE Coded"
        default: "Unknown"
        }
    }
}
