import BluesiftWire

/// An HCI event as one type, decoded and encoded (Core 6.0 Vol 4 Part E §5.4.4: event code,
/// parameter length, parameters). The host reads events through these; connection handles
/// keep their 12 bits (§5.4.2), the flags above them are dropped.
public protocol HCIEvent: Sendable, Hashable {
    static var code: HCIEventCode { get }
    func encodeParameters(into w: inout ByteWriter)
    init(parameters r: inout ByteReader) throws(DecodeError)
}

/// An LE Meta event (§7.7.65): the subevent code leads its parameters.
public protocol HCILEMetaEvent: HCIEvent {
    static var subevent: HCILESubeventCode { get }
    func encodeSubeventParameters(into w: inout ByteWriter)
    init(subeventParameters r: inout ByteReader) throws(DecodeError)
}

extension HCILEMetaEvent {
    public static var code: HCIEventCode { .leMeta }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(Self.subevent.rawValue)
        encodeSubeventParameters(into: &w)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let sub = try r.readUInt8("subevent code")
        guard sub == Self.subevent.rawValue else {
            throw DecodeError(code: .unexpected, offset: 0, message: "subevent \(Hex.fixed(UInt64(sub), width: 2)) is not \(Self.subevent.name)")
        }
        try self.init(subeventParameters: &r)
    }
}

extension HCIEvent {
    /// The event packet without the H4 indicator.
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 40)
        w.writeUInt8(Self.code.rawValue)
        w.writeUInt8(0)
        encodeParameters(into: &w)
        w.bytes[1] = UInt8(truncatingIfNeeded: w.count - 2)
        return w.bytes
    }

    /// Decodes an event packet; its parameters are read up to the declared length (bytes
    /// after them, within it, are left unread: later versions of an event append fields).
    public static func decode(_ packet: [UInt8]) throws(DecodeError) -> Self {
        let r = packet.withUnsafeBytes { p in
            Result { () throws(DecodeError) -> Self in
                var r = ByteReader(p)
                let c = try r.readUInt8("event code")
                guard c == code.rawValue else {
                    throw DecodeError(code: .unexpected, offset: 0, message: "event \(Hex.fixed(UInt64(c), width: 2)) is not \(code.name)")
                }
                var p = ByteReader(try r.readBytes(Int(try r.readUInt8("parameter length")), "parameters"))
                return try Self(parameters: &p)
            }
        }
        do { return try r.get() } catch { throw error.inLayer("hci") }
    }
}

/// The events this codec knows, by event code and LE subevent (Bumble: `HCI_Event.event_classes`).
public enum HCIEvents {
    public static let types: [HCIEventCode: any HCIEvent.Type] = {
        let all: [any HCIEvent.Type] = [
            HCIDisconnectionCompleteEvent.self, HCIEncryptionChangeEvent.self, HCICommandCompleteEvent.self,
            HCICommandStatusEvent.self, HCIHardwareErrorEvent.self, HCINumberOfCompletedPacketsEvent.self,
            HCIEncryptionKeyRefreshCompleteEvent.self
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.code, $0) })
    }()

    public static let leTypes: [HCILESubeventCode: any HCILEMetaEvent.Type] = {
        let all: [any HCILEMetaEvent.Type] = [
            HCILEConnectionCompleteEvent.self, HCILEAdvertisingReportEvent.self, HCILEConnectionUpdateCompleteEvent.self,
            HCILELongTermKeyRequestEvent.self, HCILEEnhancedConnectionCompleteEvent.self, HCILEExtendedAdvertisingReportEvent.self
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.subevent, $0) })
    }()

    /// An event packet as its type; nil for a code (or LE subevent) without one.
    public static func decode(_ packet: [UInt8]) throws(DecodeError) -> (any HCIEvent)? {
        guard let first = packet.first else {
            throw DecodeError(layer: "hci", code: .truncated, offset: 0, message: "event code: need 1 bytes, 0 left")
        }
        let code = HCIEventCode(first)
        if code == .leMeta {
            guard packet.count > 2, let type = leTypes[HCILESubeventCode(packet[2])] else { return nil }
            return try type.decode(packet)
        }
        guard let type = types[code] else { return nil }
        return try type.decode(packet)
    }
}

/// Core 6.0 Vol 4 Part E §7.7.5 Disconnection Complete
public struct HCIDisconnectionCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.disconnectionComplete
    public var status: UInt8
    public var handle: UInt16
    public var reason: UInt8
    public init(status: UInt8, handle: UInt16, reason: UInt8) { self.status = status; self.handle = handle; self.reason = reason }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(reason) }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(status: try r.readUInt8("status"), handle: try r.readUInt16(.little, "handle") & 0x0FFF, reason: try r.readUInt8("reason"))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.8 Encryption Change [v1]
public struct HCIEncryptionChangeEvent: HCIEvent {
    public static let code = HCIEventCode.encryptionChange
    public var status: UInt8
    public var handle: UInt16
    /// 0 off; 1 on (AES-CCM on LE).
    public var encryptionEnabled: UInt8
    public init(status: UInt8, handle: UInt16, encryptionEnabled: UInt8) {
        self.status = status; self.handle = handle; self.encryptionEnabled = encryptionEnabled
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(encryptionEnabled) }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            status: try r.readUInt8("status"), handle: try r.readUInt16(.little, "handle") & 0x0FFF,
            encryptionEnabled: try r.readUInt8("encryption enabled"))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.14 Command Complete
public struct HCICommandCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.commandComplete
    public var numPackets: UInt8
    public var opcode: HCICommandOpcode
    /// Status first for nearly every command.
    public var returnParameters: [UInt8]
    public init(numPackets: UInt8 = 1, opcode: HCICommandOpcode, returnParameters: [UInt8]) {
        self.numPackets = numPackets; self.opcode = opcode; self.returnParameters = returnParameters
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(numPackets); w.writeUInt16(opcode.rawValue); w.writeBytes(returnParameters)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            numPackets: try r.readUInt8("num HCI command packets"), opcode: HCICommandOpcode(try r.readUInt16(.little, "command opcode")),
            returnParameters: Array(r.readRemaining()))
    }

    /// The return parameters after the status byte, read as `T` (a command's `Return`).
    public func decodeReturn<T>(_ read: (inout ByteReader) throws(DecodeError) -> T) throws(DecodeError) -> T {
        let r = returnParameters.withUnsafeBytes { p in
            Result { () throws(DecodeError) -> T in
                var r = ByteReader(p)
                try r.skip(1, "status")
                return try read(&r)
            }
        }
        do { return try r.get() } catch { throw error.inLayer("hci") }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.15 Command Status
public struct HCICommandStatusEvent: HCIEvent {
    public static let code = HCIEventCode.commandStatus
    public var status: UInt8
    public var numPackets: UInt8
    public var opcode: HCICommandOpcode
    public init(status: UInt8, numPackets: UInt8 = 1, opcode: HCICommandOpcode) {
        self.status = status; self.numPackets = numPackets; self.opcode = opcode
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt8(numPackets); w.writeUInt16(opcode.rawValue) }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            status: try r.readUInt8("status"), numPackets: try r.readUInt8("num HCI command packets"),
            opcode: HCICommandOpcode(try r.readUInt16(.little, "command opcode")))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.16 Hardware Error
public struct HCIHardwareErrorEvent: HCIEvent {
    public static let code = HCIEventCode.hardwareError
    public var hardwareCode: UInt8
    public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(hardwareCode) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init(hardwareCode: try r.readUInt8("hardware code")) }
}

/// Core 6.0 Vol 4 Part E §7.7.19 Number Of Completed Packets
public struct HCINumberOfCompletedPacketsEvent: HCIEvent {
    public static let code = HCIEventCode.numberOfCompletedPackets
    public struct Entry: Sendable, Hashable {
        public var handle: UInt16
        public var count: UInt16
        public init(handle: UInt16, count: UInt16) { self.handle = handle; self.count = count }
    }
    public var entries: [Entry]
    public init(entries: [Entry]) { self.entries = entries }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(UInt8(truncatingIfNeeded: entries.count))
        for e in entries { w.writeUInt16(e.handle); w.writeUInt16(e.count) }
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let n = Int(try r.readUInt8("num handles"))
        var list: [Entry] = []
        for _ in 0..<n {
            list.append(Entry(handle: try r.readUInt16(.little, "handle") & 0x0FFF, count: try r.readUInt16(.little, "num completed packets")))
        }
        self.init(entries: list)
    }
}

/// Core 6.0 Vol 4 Part E §7.7.39 Encryption Key Refresh Complete
public struct HCIEncryptionKeyRefreshCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.encryptionKeyRefreshComplete
    public var status: UInt8
    public var handle: UInt16
    public init(status: UInt8, handle: UInt16) { self.status = status; self.handle = handle }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle) }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(status: try r.readUInt8("status"), handle: try r.readUInt16(.little, "handle") & 0x0FFF)
    }
}

// MARK: LE Meta (§7.7.65)

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
    public init(subeventParameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            status: try r.readUInt8("status"), handle: try r.readUInt16(.little, "handle") & 0x0FFF, role: try r.readUInt8("role"),
            peerAddressType: AddressType(rawValue: try r.readUInt8("peer address type")), peer: try r.readAddress("peer address"),
            interval: try r.readUInt16(.little, "connection interval"), latency: try r.readUInt16(.little, "peripheral latency"),
            supervisionTimeout: try r.readUInt16(.little, "supervision timeout"),
            centralClockAccuracy: r.isAtEnd ? 0 : try r.readUInt8("central clock accuracy"))
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
    public init(subeventParameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            status: try r.readUInt8("status"), handle: try r.readUInt16(.little, "handle") & 0x0FFF, role: try r.readUInt8("role"),
            peerAddressType: AddressType(rawValue: try r.readUInt8("peer address type")), peer: try r.readAddress("peer address"),
            localResolvablePrivateAddress: try r.readAddress("local resolvable private address"),
            peerResolvablePrivateAddress: try r.readAddress("peer resolvable private address"),
            interval: try r.readUInt16(.little, "connection interval"), latency: try r.readUInt16(.little, "peripheral latency"),
            supervisionTimeout: try r.readUInt16(.little, "supervision timeout"),
            centralClockAccuracy: r.isAtEnd ? 0 : try r.readUInt8("central clock accuracy"))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.2 LE Advertising Report. The reports laid out one after
/// another, as BlueZ and Bumble send them.
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
    public init(subeventParameters r: inout ByteReader) throws(DecodeError) {
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
    public init(subeventParameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            status: try r.readUInt8("status"), handle: try r.readUInt16(.little, "handle") & 0x0FFF,
            interval: try r.readUInt16(.little, "connection interval"), latency: try r.readUInt16(.little, "peripheral latency"),
            supervisionTimeout: try r.readUInt16(.little, "supervision timeout"))
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
    public init(subeventParameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            handle: try r.readUInt16(.little, "handle") & 0x0FFF, rand: Array(try r.readBytes(8, "random number")),
            ediv: try r.readUInt16(.little, "EDIV"))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.65.13 LE Extended Advertising Report
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
    public init(subeventParameters r: inout ByteReader) throws(DecodeError) {
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
}
