import BluesiftProtocols
import BluesiftWire

/// One advertising or scan-response report, legacy or extended.
public struct Advertisement: Sendable, Hashable {
    public var address: BDAddr
    public var addressType: AddressType
    /// Legacy: ADV_IND 0 … SCAN_RSP 4. Extended: the 16-bit event-type bit field.
    public var eventType: UInt16
    public var rssi: Int8
    /// AD structures (Core 5.4 Vol 3 Part C §11).
    public var data: [UInt8]
    public var isExtended: Bool

    /// Complete (0x09) or shortened (0x08) local name from the AD structures.
    public var localName: String? {
        var i = 0, short: String?
        while i < data.count {
            let len = Int(data[i])
            guard len > 0, i + 1 + len <= data.count else { break }
            let type = data[i + 1], value = data[(i + 2)..<(i + 1 + len)]
            if type == 0x09 { return String(decoding: value, as: UTF8.self) }
            if type == 0x08 { short = String(decoding: value, as: UTF8.self) }
            i += 1 + len
        }
        return short
    }
}

/// The link as the controller reported it (LE [Enhanced] Connection Complete).
public struct LEConnection: Sendable, Hashable {
    public var handle: UInt16
    public var peer: BDAddr
    public var peerType: AddressType
    /// 0 central, 1 peripheral.
    public var role: UInt8
    /// Units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
}

extension LEConnection {
    init(_ e: HCILEConnectionCompleteEvent) {
        self.init(
            handle: e.handle, peer: e.peer, peerType: e.peerAddressType, role: e.role, interval: e.interval,
            latency: e.latency, supervisionTimeout: e.supervisionTimeout)
    }

    init(_ e: HCILEEnhancedConnectionCompleteEvent) {
        self.init(
            handle: e.handle, peer: e.peer, peerType: e.peerAddressType, role: e.role, interval: e.interval,
            latency: e.latency, supervisionTimeout: e.supervisionTimeout)
    }
}

extension Advertisement {
    init(_ r: HCILEAdvertisingReportEvent.Report) {
        self.init(address: r.address, addressType: r.addressType, eventType: UInt16(r.eventType), rssi: r.rssi, data: r.data, isExtended: false)
    }

    init(_ r: HCILEExtendedAdvertisingReportEvent.Report) {
        self.init(address: r.address, addressType: r.addressType, eventType: r.eventType, rssi: r.rssi, data: r.data, isExtended: true)
    }
}
