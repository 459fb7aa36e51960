import BluesiftWire

// STUB — owned by the codecs helper; signatures are the contract (DESIGN.md).

/// One advertiser's report, from an HCI LE (Extended) Advertising Report or an LL adv PDU.
public struct AdvertisingReport {
    public var eventType: UInt16
    public var eventTypeName: String?
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

    public init(eventType: UInt16, data: UnsafeRawBufferPointer) {
        self.eventType = eventType
        self.data = data
    }
}

/// The `adv` layer of a record.
public struct AdvertisingLayer: FieldDescribable {
    /// LE Meta subevent code for HCI reports, LL PDU type for over-the-air PDUs.
    public var opcode: Int
    public var name: String
    public var reports: [AdvertisingReport]
    public var error: DecodeError?

    public init(opcode: Int, name: String, reports: [AdvertisingReport]) {
        self.opcode = opcode; self.name = name; self.reports = reports
    }

    /// Reports carried by an HCI LE Meta event: subevents 0x02 (Advertising Report),
    /// 0x0B (Directed Advertising Report), 0x0D (Extended Advertising Report).
    /// `parameters` start after the subevent code. Never traps; damage sets `error`.
    public init(leMetaSubevent: UInt8, parameters: UnsafeRawBufferPointer) {
        self.init(opcode: Int(leMetaSubevent), name: "Unknown", reports: [])  // STUB: codecs helper
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", opcode); sink.string("name", name)
    }

    public var summary: String { name }
}
