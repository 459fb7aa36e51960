import BluesiftWire

// LE Meta subevents (Core 6.0 Vol 4 Part E §7.7.65): each view reads the parameters after
// the subevent code.

/// Core 6.0 Vol 4 Part E §7.7.65.1 LE Connection Complete. Interval in 1.25 ms, supervision
/// timeout in 10 ms; role 0 central, 1 peripheral.
public struct HCILEConnectionCompleteEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.connectionComplete
    public var status: UInt8
    public var handle: UInt16
    public var role: UInt8
    public var peerAddressType: AddressType
    public var peer: BDAddr
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8

    public init(
        status: UInt8, handle: UInt16, role: UInt8, peerAddressType: AddressType, peer: BDAddr,
        interval: UInt16, latency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8 = 0
    ) {
        self.status = status; self.handle = handle; self.role = role; self.peerAddressType = peerAddressType; self.peer = peer
        self.interval = interval; self.latency = latency; self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(role); w.writeUInt8(peerAddressType.rawValue); w.writeAddress(peer)
        w.writeUInt16(interval); w.writeUInt16(latency); w.writeUInt16(supervisionTimeout); w.writeUInt8(centralClockAccuracy)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(
            status: f.status!.rawValue, handle: f.handle!, role: f.role!, peerAddressType: f.peerAddressType!, peer: f.peer!,
            interval: f.interval!, latency: f.latency!, supervisionTimeout: f.supervisionTimeout!,
            centralClockAccuracy: v.centralClockAccuracy ?? 0)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// The peer address after status, handle, role and its type.
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(5) }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            try HCILEConnectionCompleteEvent.readConnection(parameters, addresses: false, into: &f)
        }
        /// nil when the controller left it out.
        public var centralClockAccuracy: UInt8? { parameters.count > 17 ? parameters[17] : nil }
    }

    /// §7.7.65.1 and §7.7.65.10 (both versions): the connection's fields; the enhanced events
    /// carry the two resolvable private addresses before the interval.
    static func readConnection(_ parameters: UnsafeRawBufferPointer, addresses: Bool, into f: inout HCIFields) throws(DecodeError) {
        var p = ByteReader(parameters)
        f.status = HCIStatus(try p.readUInt8("status"))
        f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
        f.role = try p.readUInt8("role")
        f.peerAddressType = AddressType(rawValue: try p.readUInt8("peer address type"))
        f.peer = try p.readAddress("peer address")
        if addresses { try p.skip(12, "local/peer resolvable private address") }
        f.interval = try p.readUInt16(.little, "connection interval")
        f.latency = try p.readUInt16(.little, "peripheral latency")
        f.supervisionTimeout = try p.readUInt16(.little, "supervision timeout")
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.10 LE Enhanced Connection Complete [v1]: LE Connection
/// Complete with the local and peer resolvable private addresses.
public struct HCILEEnhancedConnectionCompleteEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.enhancedConnectionComplete
    public var status: UInt8
    public var handle: UInt16
    public var role: UInt8
    public var peerAddressType: AddressType
    public var peer: BDAddr
    public var localResolvablePrivateAddress: BDAddr
    public var peerResolvablePrivateAddress: BDAddr
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8

    public init(
        status: UInt8, handle: UInt16, role: UInt8, peerAddressType: AddressType, peer: BDAddr,
        localResolvablePrivateAddress: BDAddr = BDAddr(0), peerResolvablePrivateAddress: BDAddr = BDAddr(0),
        interval: UInt16, latency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8 = 0
    ) {
        self.status = status; self.handle = handle; self.role = role; self.peerAddressType = peerAddressType; self.peer = peer
        self.localResolvablePrivateAddress = localResolvablePrivateAddress; self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.interval = interval; self.latency = latency; self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(role); w.writeUInt8(peerAddressType.rawValue); w.writeAddress(peer)
        w.writeAddress(localResolvablePrivateAddress); w.writeAddress(peerResolvablePrivateAddress)
        w.writeUInt16(interval); w.writeUInt16(latency); w.writeUInt16(supervisionTimeout); w.writeUInt8(centralClockAccuracy)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(
            status: f.status!.rawValue, handle: f.handle!, role: f.role!, peerAddressType: f.peerAddressType!, peer: f.peer!,
            localResolvablePrivateAddress: v.localResolvablePrivateAddress, peerResolvablePrivateAddress: v.peerResolvablePrivateAddress,
            interval: f.interval!, latency: f.latency!, supervisionTimeout: f.supervisionTimeout!,
            centralClockAccuracy: v.centralClockAccuracy ?? 0)
    }
    /// Both versions' view ([v2] appends the advertising and sync handles).
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// The peer address, then the local and peer resolvable private addresses.
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out += [5, 11, 17] }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            try HCILEConnectionCompleteEvent.readConnection(parameters, addresses: true, into: &f)
        }
        /// Valid once `read` found the interval (the addresses lie before it).
        public var localResolvablePrivateAddress: BDAddr { BDAddr(littleEndian: UnsafeRawBufferPointer(rebasing: parameters[11..<17])) }
        public var peerResolvablePrivateAddress: BDAddr { BDAddr(littleEndian: UnsafeRawBufferPointer(rebasing: parameters[17..<23])) }
        public var centralClockAccuracy: UInt8? { parameters.count > 29 ? parameters[29] : nil }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.10 LE Enhanced Connection Complete [v2] (subevent 0x29):
/// [v1] and the advertising set and periodic sync the connection came from (PAwR).
public struct HCILEEnhancedConnectionCompleteV2Event: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.enhancedConnectionCompleteV2
    public typealias View = HCILEEnhancedConnectionCompleteEvent.View
    public var connection: HCILEEnhancedConnectionCompleteEvent
    /// 0xFF: not from an advertising set.
    public var advertisingHandle: UInt8
    /// 0xFFFF: not from a periodic sync.
    public var syncHandle: UInt16
    public init(connection: HCILEEnhancedConnectionCompleteEvent, advertisingHandle: UInt8 = 0xFF, syncHandle: UInt16 = 0xFFFF) {
        self.connection = connection; self.advertisingHandle = advertisingHandle; self.syncHandle = syncHandle
    }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        connection.encodeSubeventParameters(into: &w); w.writeUInt8(advertisingHandle); w.writeUInt16(syncHandle)
    }
    public init(view v: View) throws(DecodeError) {
        let c = try HCILEEnhancedConnectionCompleteEvent(view: v)
        self.init(
            connection: c, advertisingHandle: try v.uint8(at: 30, "advertising handle"), syncHandle: try v.uint16(at: 31, "sync handle"))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.2 LE Advertising Report. The reports laid out one after
/// another, as BlueZ and Bumble send them. Analysis leaves them to the `adv` layer.
public struct HCILEAdvertisingReportEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.advertisingReport
    public struct Report: Sendable, Hashable {
        /// ADV_IND 0 … SCAN_RSP 4.
        public var eventType: UInt8
        public var addressType: AddressType
        public var address: BDAddr
        public var data: [UInt8]
        /// 127: not available.
        public var rssi: Int8
        public init(eventType: UInt8, addressType: AddressType, address: BDAddr, data: [UInt8], rssi: Int8) {
            self.eventType = eventType; self.addressType = addressType; self.address = address; self.data = data; self.rssi = rssi
        }
    }
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt8(UInt8(truncatingIfNeeded: reports.count))
        for x in reports {
            w.writeUInt8(x.eventType); w.writeUInt8(x.addressType.rawValue); w.writeAddress(x.address)
            w.writeUInt8(UInt8(truncatingIfNeeded: x.data.count)); w.writeBytes(x.data); w.writeUInt8(UInt8(bitPattern: x.rssi))
        }
    }
    public init(view v: View) throws(DecodeError) {
        var r = ByteReader(v.parameters)
        var out: [Report] = []
        for _ in 0..<Int(try r.readUInt8("num reports")) {
            let type = try r.readUInt8("event type")
            let at = AddressType(rawValue: try r.readUInt8("address type"))
            let a = try r.readAddress("address")
            let data = Array(try r.readBytes(Int(try r.readUInt8("data length")), "advertising data"))
            out.append(Report(eventType: type, addressType: at, address: a, data: data, rssi: try r.readInt8("RSSI")))
        }
        self.init(reports: out)
    }
    public struct View: HCIUnreadEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// Each report's address offset and data range in the parameters: event type, address type,
        /// address, data length, data, RSSI, reports one after another (as controllers send them and
        /// Wireshark reads them); stops at the first report cut short.
        public static func forEachReport(in p: UnsafeRawBufferPointer, _ body: (_ address: Int, _ data: Range<Int>) -> Void) {
            walk(p, fixed: 9, addressAt: 2, trailer: 1, body)
        }
        /// Reports of `fixed` bytes up to and with their data length, then the data and `trailer` bytes.
        static func walk(
            _ p: UnsafeRawBufferPointer, fixed: Int, addressAt: Int, trailer: Int, _ body: (_ address: Int, _ data: Range<Int>) -> Void
        ) {
            guard let n = p.first else { return }
            var o = 1
            for _ in 0..<Int(n) {
                guard o + fixed <= p.count else { break }
                let len = Int(p[o + fixed - 1])
                body(o + addressAt, o + fixed..<o + fixed + len)
                o += fixed + len + trailer
            }
        }
        /// Each advertiser's address and the LE addresses in its AD structures.
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) {
            forEachReport(in: p) { a, d in
                out.append(a); out += HCIFieldLayout.adAddresses(p, from: d.lowerBound, to: d.upperBound)
            }
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.3 LE Connection Update Complete
public struct HCILEConnectionUpdateCompleteEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.connectionUpdateComplete
    public var status: UInt8
    public var handle: UInt16
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public init(status: UInt8, handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.status = status; self.handle = handle; self.interval = interval; self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt16(interval); w.writeUInt16(latency); w.writeUInt16(supervisionTimeout)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!, interval: f.interval!, latency: f.latency!, supervisionTimeout: f.supervisionTimeout!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.interval = try p.readUInt16(.little, "connection interval")
            f.latency = try p.readUInt16(.little, "peripheral latency")
            f.supervisionTimeout = try p.readUInt16(.little, "supervision timeout")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.4 LE Read Remote Features Complete
public struct HCILEReadRemoteFeaturesCompleteEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.readRemoteFeaturesComplete
    public var status: UInt8
    public var handle: UInt16
    /// LE feature bits, little-endian.
    public var features: UInt64
    public init(status: UInt8, handle: UInt16, features: UInt64) { self.status = status; self.handle = handle; self.features = features }
    public func encodeSubeventParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt64(features) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!, features: f.features!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.features = try p.readUInt64(.little, "LE features")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.5 LE Long Term Key Request. The random number (8 bytes)
/// little-endian, as the event carries it.
public struct HCILELongTermKeyRequestEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.longTermKeyRequest
    public var handle: UInt16
    public var rand: [UInt8]
    public var ediv: UInt16
    public init(handle: UInt16, rand: [UInt8], ediv: UInt16) { self.handle = handle; self.rand = rand; self.ediv = ediv }
    public func encodeSubeventParameters(into w: inout ByteWriter) { w.writeUInt16(handle); w.writeBytes(rand); w.writeUInt16(ediv) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(handle: f.handle!, rand: Array(try v.bytes(at: 2, 8, "random number")), ediv: try v.uint16(at: 10, "EDIV"))
    }
    /// Analysis keeps the handle and shows the rest raw.
    public typealias View = HCILEHandleView<HCIReadsLeading>
}

/// A view of an LE event led by a connection handle; `All`: nothing follows it.
public struct HCILEHandleView<All: HCIEventViewCoverage>: HCIEventView {
    public let parameters: UnsafeRawBufferPointer
    public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
    public static var readsAllParameters: Bool { All.readsAll }
    public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
        var p = ByteReader(parameters)
        f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.6 LE Remote Connection Parameter Request
public struct HCILERemoteConnectionParameterRequestEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.remoteConnectionParameterRequest
    public var handle: UInt16
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public init(handle: UInt16, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.handle = handle; self.intervalMin = intervalMin; self.intervalMax = intervalMax; self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt16(handle); w.writeUInt16(intervalMin); w.writeUInt16(intervalMax); w.writeUInt16(latency); w.writeUInt16(supervisionTimeout)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(
            handle: f.handle!, intervalMin: f.intervalMin!, intervalMax: f.intervalMax!, latency: f.latency!,
            supervisionTimeout: f.supervisionTimeout!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.intervalMin = try p.readUInt16(.little, "interval min")
            f.intervalMax = try p.readUInt16(.little, "interval max")
            f.latency = try p.readUInt16(.little, "latency")
            f.supervisionTimeout = try p.readUInt16(.little, "timeout")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.7 LE Data Length Change
public struct HCILEDataLengthChangeEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.dataLengthChange
    public var handle: UInt16
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16
    public init(handle: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.handle = handle; self.maxTxOctets = maxTxOctets; self.maxTxTime = maxTxTime; self.maxRxOctets = maxRxOctets; self.maxRxTime = maxRxTime
    }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt16(handle); w.writeUInt16(maxTxOctets); w.writeUInt16(maxTxTime); w.writeUInt16(maxRxOctets); w.writeUInt16(maxRxTime)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(handle: f.handle!, maxTxOctets: f.maxTxOctets!, maxTxTime: f.maxTxTime!, maxRxOctets: f.maxRxOctets!, maxRxTime: f.maxRxTime!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.maxTxOctets = try p.readUInt16(.little, "max TX octets")
            f.maxTxTime = try p.readUInt16(.little, "max TX time")
            f.maxRxOctets = try p.readUInt16(.little, "max RX octets")
            f.maxRxTime = try p.readUInt16(.little, "max RX time")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.11 LE Directed Advertising Report. Analysis leaves it to the `adv` layer.
public struct HCILEDirectedAdvertisingReportEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.directedAdvertisingReport
    public struct Report: Sendable, Hashable {
        /// Always ADV_DIRECT_IND (1).
        public var eventType: UInt8
        public var addressType: AddressType
        public var address: BDAddr
        public var directAddressType: UInt8
        public var directAddress: BDAddr
        public var rssi: Int8
        public init(eventType: UInt8 = 1, addressType: AddressType, address: BDAddr, directAddressType: UInt8, directAddress: BDAddr, rssi: Int8) {
            self.eventType = eventType; self.addressType = addressType; self.address = address
            self.directAddressType = directAddressType; self.directAddress = directAddress; self.rssi = rssi
        }
    }
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt8(UInt8(truncatingIfNeeded: reports.count))
        for x in reports {
            w.writeUInt8(x.eventType); w.writeUInt8(x.addressType.rawValue); w.writeAddress(x.address)
            w.writeUInt8(x.directAddressType); w.writeAddress(x.directAddress); w.writeUInt8(UInt8(bitPattern: x.rssi))
        }
    }
    public init(view v: View) throws(DecodeError) {
        var r = ByteReader(v.parameters)
        var out: [Report] = []
        for _ in 0..<Int(try r.readUInt8("num reports")) {
            let type = try r.readUInt8("event type")
            let at = AddressType(rawValue: try r.readUInt8("address type"))
            let a = try r.readAddress("address")
            let dat = try r.readUInt8("direct address type"), da = try r.readAddress("direct address")
            out.append(Report(eventType: type, addressType: at, address: a, directAddressType: dat, directAddress: da, rssi: try r.readInt8("RSSI")))
        }
        self.init(reports: out)
    }
    public struct View: HCIUnreadEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// Reports of 16 bytes: event type, address type, address, direct address type, direct address, RSSI.
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) {
            guard let n = p.first else { return }
            for i in 0..<Int(n) { out += [1 + 16 * i + 2, 1 + 16 * i + 9] }
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.12 LE PHY Update Complete. PHYs: 1 LE 1M, 2 LE 2M, 3 LE Coded.
public struct HCILEPHYUpdateCompleteEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.phyUpdateComplete
    public var status: UInt8
    public var handle: UInt16
    public var txPHY: UInt8
    public var rxPHY: UInt8
    public init(status: UInt8, handle: UInt16, txPHY: UInt8, rxPHY: UInt8) { self.status = status; self.handle = handle; self.txPHY = txPHY; self.rxPHY = rxPHY }
    public func encodeSubeventParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(txPHY); w.writeUInt8(rxPHY) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!, txPHY: f.txPHY!, rxPHY: f.rxPHY!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.txPHY = try p.readUInt8("TX PHY")
            f.rxPHY = try p.readUInt8("RX PHY")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.13 LE Extended Advertising Report. Analysis leaves it to the `adv` layer.
public struct HCILEExtendedAdvertisingReportEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.extendedAdvertisingReport
    public struct Report: Sendable, Hashable {
        /// The 16-bit event type bit field.
        public var eventType: UInt16
        public var addressType: AddressType
        public var address: BDAddr
        public var primaryPHY: UInt8
        public var secondaryPHY: UInt8
        public var sid: UInt8
        public var txPower: Int8
        public var rssi: Int8
        public var periodicInterval: UInt16
        public var directAddressType: UInt8
        public var directAddress: BDAddr
        public var data: [UInt8]
        public init(
            eventType: UInt16, addressType: AddressType, address: BDAddr, primaryPHY: UInt8 = 1, secondaryPHY: UInt8 = 0,
            sid: UInt8 = 0xFF, txPower: Int8 = 127, rssi: Int8, periodicInterval: UInt16 = 0, directAddressType: UInt8 = 0,
            directAddress: BDAddr = BDAddr(0), data: [UInt8]
        ) {
            self.eventType = eventType; self.addressType = addressType; self.address = address
            self.primaryPHY = primaryPHY; self.secondaryPHY = secondaryPHY; self.sid = sid; self.txPower = txPower; self.rssi = rssi
            self.periodicInterval = periodicInterval; self.directAddressType = directAddressType; self.directAddress = directAddress
            self.data = data
        }
    }
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt8(UInt8(truncatingIfNeeded: reports.count))
        for x in reports {
            w.writeUInt16(x.eventType); w.writeUInt8(x.addressType.rawValue); w.writeAddress(x.address)
            w.writeUInt8(x.primaryPHY); w.writeUInt8(x.secondaryPHY); w.writeUInt8(x.sid)
            w.writeUInt8(UInt8(bitPattern: x.txPower)); w.writeUInt8(UInt8(bitPattern: x.rssi))
            w.writeUInt16(x.periodicInterval); w.writeUInt8(x.directAddressType); w.writeAddress(x.directAddress)
            w.writeUInt8(UInt8(truncatingIfNeeded: x.data.count)); w.writeBytes(x.data)
        }
    }
    public init(view v: View) throws(DecodeError) {
        var r = ByteReader(v.parameters)
        var out: [Report] = []
        for _ in 0..<Int(try r.readUInt8("num reports")) {
            let type = try r.readUInt16(.little, "event type")
            let at = AddressType(rawValue: try r.readUInt8("address type"))
            let a = try r.readAddress("address")
            let p1 = try r.readUInt8("primary PHY"), p2 = try r.readUInt8("secondary PHY"), sid = try r.readUInt8("SID")
            let tx = try r.readInt8("TX power"), rssi = try r.readInt8("RSSI")
            let pi = try r.readUInt16(.little, "periodic advertising interval")
            let dat = try r.readUInt8("direct address type"), da = try r.readAddress("direct address")
            let data = Array(try r.readBytes(Int(try r.readUInt8("data length")), "advertising data"))
            out.append(
                Report(
                    eventType: type, addressType: at, address: a, primaryPHY: p1, secondaryPHY: p2, sid: sid, txPower: tx,
                    rssi: rssi, periodicInterval: pi, directAddressType: dat, directAddress: da, data: data))
        }
        self.init(reports: out)
    }
    public struct View: HCIUnreadEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// Each report's address offset and data range: 24 fixed bytes (address at 3, direct address
        /// at 17, data length last), then the data.
        public static func forEachReport(in p: UnsafeRawBufferPointer, _ body: (_ address: Int, _ data: Range<Int>) -> Void) {
            HCILEAdvertisingReportEvent.View.walk(p, fixed: 24, addressAt: 3, trailer: 0, body)
        }
        /// Each advertiser's and direct address, and the LE addresses in its AD structures.
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) {
            forEachReport(in: p) { a, d in
                out += [a, a + 14]; out += HCIFieldLayout.adAddresses(p, from: d.lowerBound, to: d.upperBound)
            }
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.20 LE Channel Selection Algorithm
public struct HCILEChannelSelectionAlgorithmEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.channelSelectionAlgorithm
    public var handle: UInt16
    /// 0 #1, 1 #2.
    public var algorithm: UInt8
    public init(handle: UInt16, algorithm: UInt8) { self.handle = handle; self.algorithm = algorithm }
    public func encodeSubeventParameters(into w: inout ByteWriter) { w.writeUInt16(handle); w.writeUInt8(algorithm) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(handle: f.handle!, algorithm: try v.uint8(at: 2, "channel selection algorithm"))
    }
    public typealias View = HCILEHandleView<HCIReadsLeading>
}

/// Core 6.0 Vol 4 Part E §7.7.65.35 LE Subrate Change
public struct HCILESubrateChangeEvent: HCILEMetaEvent {
    public static let subevent = HCILESubeventCode.subrateChange
    public var status: UInt8
    public var handle: UInt16
    public var subrateFactor: UInt16
    public var peripheralLatency: UInt16
    public var continuationNumber: UInt16
    public var supervisionTimeout: UInt16
    public init(status: UInt8, handle: UInt16, subrateFactor: UInt16, peripheralLatency: UInt16, continuationNumber: UInt16, supervisionTimeout: UInt16) {
        self.status = status; self.handle = handle; self.subrateFactor = subrateFactor; self.peripheralLatency = peripheralLatency
        self.continuationNumber = continuationNumber; self.supervisionTimeout = supervisionTimeout
    }
    public func encodeSubeventParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt16(subrateFactor); w.writeUInt16(peripheralLatency)
        w.writeUInt16(continuationNumber); w.writeUInt16(supervisionTimeout)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        var r = ByteReader(v.parameters, at: 3)
        self.init(
            status: f.status!.rawValue, handle: f.handle!, subrateFactor: try r.readUInt16(.little, "subrate factor"),
            peripheralLatency: try r.readUInt16(.little, "peripheral latency"), continuationNumber: try r.readUInt16(.little, "continuation number"),
            supervisionTimeout: try r.readUInt16(.little, "supervision timeout"))
    }
    /// Analysis keeps the status and handle and shows the rest raw.
    public typealias View = HCIStatusHandleView<HCIReadsLeading>
}
