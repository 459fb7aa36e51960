import BluesiftWire

/// An HCI command as one type: its opcode and its parameters, decoded and encoded
/// (Core 6.0 Vol 4 Part E §5.4.1: opcode, parameter length, parameters). The host sends
/// these; the analyzer can read captured commands with the same types.
public protocol HCICommand: Sendable, Hashable, HCIParameterLayout {
    static var opcode: HCICommandOpcode { get }
    /// Addresses and keys in its Command Complete's return parameters (status first).
    static func returnAddressOffsets(in r: UnsafeRawBufferPointer, into out: inout [Int])
    static func returnKeyRanges(in r: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)])
    /// Writes the parameters that follow the opcode and length.
    func encodeParameters(into w: inout ByteWriter)
    /// Reads the parameters; must consume all it accepts.
    init(parameters r: inout ByteReader) throws(DecodeError)
}

extension HCICommand {
    public static func returnAddressOffsets(in r: UnsafeRawBufferPointer, into out: inout [Int]) {}
    public static func returnKeyRanges(in r: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)]) {}
}

/// Commands without parameters (Reset, Read BD_ADDR, …).
public protocol HCIEmptyCommand: HCICommand { init() }

extension HCIEmptyCommand {
    public func encodeParameters(into w: inout ByteWriter) {}
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init() }
}

extension HCICommand {
    /// The command packet without the H4 indicator.
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 40)
        w.writeUInt16(Self.opcode.rawValue)
        w.writeUInt8(0)
        encodeParameters(into: &w)
        w.bytes[2] = UInt8(truncatingIfNeeded: w.count - 3)
        return w.bytes
    }

    /// Strict decode of a command packet: the opcode must match and the length must be the
    /// parameters' own.
    public static func decode(_ packet: [UInt8]) throws(DecodeError) -> Self {
        let r = packet.withUnsafeBytes { p in
            Result { () throws(DecodeError) -> Self in
                var r = ByteReader(p)
                let op = try r.readUInt16(.little, "opcode")
                guard op == opcode.rawValue else {
                    throw DecodeError(
                        code: .unexpected, offset: 0,
                        message: "opcode \(Hex.fixed(UInt64(op), width: 4)) is not \(opcode.name)")
                }
                let length = Int(try r.readUInt8("parameter length"))
                var p = ByteReader(try r.readBytes(length, "parameters"))
                let c = try Self(parameters: &p)
                guard p.isAtEnd, r.isAtEnd else {
                    throw DecodeError(code: .invalidLength, offset: 3 + p.readerIndex, message: "bytes after the parameters")
                }
                return c
            }
        }
        do { return try r.get() } catch { throw error.inLayer("hci") }
    }
}

/// The commands this codec knows, by opcode (Bumble: `HCI_Command.command_classes`).
public enum HCICommands {
    public static let types: [HCICommandOpcode: any HCICommand.Type] = {
        let all: [any HCICommand.Type] = [
            HCIDisconnect.self, HCISetEventMask.self, HCIReset.self, HCIReadLocalVersionInformation.self,
            HCIReadBufferSize.self, HCIReadBDAddr.self, HCILESetEventMask.self, HCILEReadBufferSize.self,
            HCILEReadLocalSupportedFeatures.self, HCILESetRandomAddress.self, HCILESetAdvertisingParameters.self,
            HCILESetAdvertisingData.self, HCILESetScanResponseData.self, HCILESetAdvertisingEnable.self,
            HCILESetScanParameters.self, HCILESetScanEnable.self, HCILECreateConnection.self,
            HCILECreateConnectionCancel.self, HCILEConnectionUpdate.self, HCILEEnableEncryption.self,
            HCILELongTermKeyRequestReply.self, HCILELongTermKeyRequestNegativeReply.self
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.opcode, $0) })
    }()

    /// A command packet as its type; nil for an opcode without one.
    public static func decode(_ packet: [UInt8]) throws(DecodeError) -> (any HCICommand)? {
        guard packet.count >= 2 else {
            throw DecodeError(layer: "hci", code: .truncated, offset: 0, message: "opcode: need 2 bytes, \(packet.count) left")
        }
        guard let type = types[HCICommandOpcode(UInt16(packet[0]) | UInt16(packet[1]) << 8)] else { return nil }
        return try type.decode(packet)
    }
}

/// Connection parameters in controller units: interval 1.25 ms, latency in connection events,
/// supervision timeout 10 ms (§7.8.12, §7.8.18).
public struct ConnectionParameters: Sendable, Hashable {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(
        intervalMin: UInt16 = 0x0018, intervalMax: UInt16 = 0x0028, latency: UInt16 = 0,
        supervisionTimeout: UInt16 = 0x01F4
    ) {
        self.intervalMin = intervalMin; self.intervalMax = intervalMax
        self.latency = latency; self.supervisionTimeout = supervisionTimeout
    }

    func encode(into w: inout ByteWriter) {
        w.writeUInt16(intervalMin); w.writeUInt16(intervalMax); w.writeUInt16(latency); w.writeUInt16(supervisionTimeout)
    }

    init(_ r: inout ByteReader) throws(DecodeError) {
        self.init(
            intervalMin: try r.readUInt16(.little, "interval min"), intervalMax: try r.readUInt16(.little, "interval max"),
            latency: try r.readUInt16(.little, "latency"), supervisionTimeout: try r.readUInt16(.little, "supervision timeout"))
    }
}

// MARK: Link Control, Controller & Baseband, Informational (§7.1, §7.3, §7.4)

/// Core 6.0 Vol 4 Part E §7.1.6 Disconnect
public struct HCIDisconnect: HCICommand {
    public static let opcode = HCICommandOpcode.disconnect
    public var handle: UInt16
    public var reason: UInt8
    public init(handle: UInt16, reason: UInt8) { self.handle = handle; self.reason = reason }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(handle); w.writeUInt8(reason) }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(handle: try r.readUInt16(.little, "handle"), reason: try r.readUInt8("reason"))
    }
}

/// Core 6.0 Vol 4 Part E §7.3.1 Set Event Mask
public struct HCISetEventMask: HCICommand {
    public static let opcode = HCICommandOpcode.setEventMask
    public var mask: UInt64
    public init(mask: UInt64) { self.mask = mask }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt64(mask) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init(mask: try r.readUInt64(.little, "event mask")) }
}

/// Core 6.0 Vol 4 Part E §7.3.2 Reset
public struct HCIReset: HCIEmptyCommand {
    public static let opcode = HCICommandOpcode.reset
    public init() {}
}

/// Core 6.0 Vol 4 Part E §7.4.1 Read Local Version Information
public struct HCIReadLocalVersionInformation: HCIEmptyCommand {
    public static let opcode = HCICommandOpcode.readLocalVersionInformation
    public init() {}

    /// Its return parameters (after the status).
    public struct Return: Sendable, Hashable {
        public var hciVersion: UInt8
        public var hciSubversion: UInt16
        public var lmpVersion: UInt8
        public var companyIdentifier: UInt16
        public var lmpSubversion: UInt16
        public init(hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, companyIdentifier: UInt16, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion; self.hciSubversion = hciSubversion; self.lmpVersion = lmpVersion
            self.companyIdentifier = companyIdentifier; self.lmpSubversion = lmpSubversion
        }
        public init(_ r: inout ByteReader) throws(DecodeError) {
            self.init(
                hciVersion: try r.readUInt8("HCI version"), hciSubversion: try r.readUInt16(.little, "HCI subversion"),
                lmpVersion: try r.readUInt8("LMP version"), companyIdentifier: try r.readUInt16(.little, "company"),
                lmpSubversion: try r.readUInt16(.little, "LMP subversion"))
        }
        public func encode(into w: inout ByteWriter) {
            w.writeUInt8(hciVersion); w.writeUInt16(hciSubversion); w.writeUInt8(lmpVersion)
            w.writeUInt16(companyIdentifier); w.writeUInt16(lmpSubversion)
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.4.5 Read Buffer Size
public struct HCIReadBufferSize: HCIEmptyCommand {
    public static let opcode = HCICommandOpcode.readBufferSize
    public init() {}

    public struct Return: Sendable, Hashable {
        public var aclDataLength: UInt16
        public var syncDataLength: UInt8
        public var aclPackets: UInt16
        public var syncPackets: UInt16
        public init(aclDataLength: UInt16, syncDataLength: UInt8, aclPackets: UInt16, syncPackets: UInt16) {
            self.aclDataLength = aclDataLength; self.syncDataLength = syncDataLength
            self.aclPackets = aclPackets; self.syncPackets = syncPackets
        }
        public init(_ r: inout ByteReader) throws(DecodeError) {
            self.init(
                aclDataLength: try r.readUInt16(.little, "ACL data length"), syncDataLength: try r.readUInt8("synchronous data length"),
                aclPackets: try r.readUInt16(.little, "ACL packets"), syncPackets: try r.readUInt16(.little, "synchronous packets"))
        }
        public func encode(into w: inout ByteWriter) {
            w.writeUInt16(aclDataLength); w.writeUInt8(syncDataLength); w.writeUInt16(aclPackets); w.writeUInt16(syncPackets)
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.4.6 Read BD_ADDR
public struct HCIReadBDAddr: HCIEmptyCommand {
    public static let opcode = HCICommandOpcode.readBDAddr
    /// Returns status, BD_ADDR.
    public static func returnAddressOffsets(in r: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(1) }
    public init() {}
}

// MARK: LE Controller (§7.8)

/// Core 6.0 Vol 4 Part E §7.8.1 LE Set Event Mask (bit n: subevent n+1)
public struct HCILESetEventMask: HCICommand {
    public static let opcode = HCICommandOpcode.leSetEventMask
    public var mask: UInt64
    public init(mask: UInt64) { self.mask = mask }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt64(mask) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init(mask: try r.readUInt64(.little, "LE event mask")) }
}

/// Core 6.0 Vol 4 Part E §7.8.2 LE Read Buffer Size [v1]
public struct HCILEReadBufferSize: HCIEmptyCommand {
    public static let opcode = HCICommandOpcode.leReadBufferSize
    public init() {}

    /// Zero length or count: the LE links share the BR/EDR buffers (Read Buffer Size).
    public struct Return: Sendable, Hashable {
        public var aclDataLength: UInt16
        public var aclPackets: UInt8
        public init(aclDataLength: UInt16, aclPackets: UInt8) { self.aclDataLength = aclDataLength; self.aclPackets = aclPackets }
        public init(_ r: inout ByteReader) throws(DecodeError) {
            self.init(aclDataLength: try r.readUInt16(.little, "LE ACL data length"), aclPackets: try r.readUInt8("LE ACL packets"))
        }
        public func encode(into w: inout ByteWriter) { w.writeUInt16(aclDataLength); w.writeUInt8(aclPackets) }
    }
}

/// Core 6.0 Vol 4 Part E §7.8.3 LE Read Local Supported Features
public struct HCILEReadLocalSupportedFeatures: HCIEmptyCommand {
    public static let opcode = HCICommandOpcode.leReadLocalSupportedFeatures
    public init() {}
}

/// Core 6.0 Vol 4 Part E §7.8.4 LE Set Random Address
public struct HCILESetRandomAddress: HCICommand {
    public static let opcode = HCICommandOpcode.leSetRandomAddress
    public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(0) }
    public var address: BDAddr
    public init(address: BDAddr) { self.address = address }
    public func encodeParameters(into w: inout ByteWriter) { w.writeAddress(address) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init(address: try r.readAddress("random address")) }
}

/// Core 6.0 Vol 4 Part E §7.8.5 LE Set Advertising Parameters. Intervals in units of 0.625 ms;
/// advertising type 0 is ADV_IND; channel map 0x07 is all three.
public struct HCILESetAdvertisingParameters: HCICommand {
    public static let opcode = HCICommandOpcode.leSetAdvertisingParameters
    /// The peer address after the intervals, the advertising type and the two address types.
    public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(7) }
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var advertisingType: UInt8
    public var ownAddressType: UInt8
    public var peerAddressType: UInt8
    public var peerAddress: BDAddr
    public var channelMap: UInt8
    public var filterPolicy: UInt8

    public init(
        intervalMin: UInt16, intervalMax: UInt16, advertisingType: UInt8 = 0, ownAddressType: UInt8,
        peerAddressType: UInt8 = 0, peerAddress: BDAddr = BDAddr(0), channelMap: UInt8 = 0x07, filterPolicy: UInt8 = 0
    ) {
        self.intervalMin = intervalMin; self.intervalMax = intervalMax; self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType; self.peerAddressType = peerAddressType; self.peerAddress = peerAddress
        self.channelMap = channelMap; self.filterPolicy = filterPolicy
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt16(intervalMin); w.writeUInt16(intervalMax); w.writeUInt8(advertisingType); w.writeUInt8(ownAddressType)
        w.writeUInt8(peerAddressType); w.writeAddress(peerAddress); w.writeUInt8(channelMap); w.writeUInt8(filterPolicy)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            intervalMin: try r.readUInt16(.little, "interval min"), intervalMax: try r.readUInt16(.little, "interval max"),
            advertisingType: try r.readUInt8("advertising type"), ownAddressType: try r.readUInt8("own address type"),
            peerAddressType: try r.readUInt8("peer address type"), peerAddress: try r.readAddress("peer address"),
            channelMap: try r.readUInt8("channel map"), filterPolicy: try r.readUInt8("filter policy"))
    }
}

/// §7.8.7 / §7.8.8: a length, then 31 bytes (zero-padded; longer data is cut to 31).
public protocol HCILEAdvertisingDataCommand: HCICommand {
    var data: [UInt8] { get }
    init(data: [UInt8])
}

extension HCILEAdvertisingDataCommand {
    public func encodeParameters(into w: inout ByteWriter) {
        let d = data.prefix(31)
        w.writeUInt8(UInt8(d.count)); w.writeBytes(d)
        w.writeBytes(repeatElement(0, count: 31 - d.count))
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let n = Int(try r.readUInt8("data length"))
        let all = try r.readBytes(31, "data")
        guard n <= 31 else { throw DecodeError(code: .invalidLength, offset: 0, message: "data length \(n) over 31") }
        self.init(data: Array(all.prefix(n)))
    }
}

/// Core 6.0 Vol 4 Part E §7.8.7 LE Set Advertising Data
public struct HCILESetAdvertisingData: HCILEAdvertisingDataCommand {
    public static let opcode = HCICommandOpcode.leSetAdvertisingData
    public var data: [UInt8]
    public init(data: [UInt8]) { self.data = Array(data.prefix(31)) }
}

/// Core 6.0 Vol 4 Part E §7.8.8 LE Set Scan Response Data
public struct HCILESetScanResponseData: HCILEAdvertisingDataCommand {
    public static let opcode = HCICommandOpcode.leSetScanResponseData
    public var data: [UInt8]
    public init(data: [UInt8]) { self.data = Array(data.prefix(31)) }
}

/// Core 6.0 Vol 4 Part E §7.8.9 LE Set Advertising Enable
public struct HCILESetAdvertisingEnable: HCICommand {
    public static let opcode = HCICommandOpcode.leSetAdvertisingEnable
    public var enable: Bool
    public init(enable: Bool) { self.enable = enable }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(enable ? 1 : 0) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init(enable: try r.readUInt8("enable") != 0) }
}

/// Core 6.0 Vol 4 Part E §7.8.10 LE Set Scan Parameters. Interval and window in 0.625 ms.
public struct HCILESetScanParameters: HCICommand {
    public static let opcode = HCICommandOpcode.leSetScanParameters
    public var active: Bool
    public var interval: UInt16
    public var window: UInt16
    public var ownAddressType: UInt8
    /// 0: accept all advertisers.
    public var filterPolicy: UInt8
    public init(active: Bool, interval: UInt16, window: UInt16, ownAddressType: UInt8, filterPolicy: UInt8 = 0) {
        self.active = active; self.interval = interval; self.window = window
        self.ownAddressType = ownAddressType; self.filterPolicy = filterPolicy
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(active ? 1 : 0); w.writeUInt16(interval); w.writeUInt16(window)
        w.writeUInt8(ownAddressType); w.writeUInt8(filterPolicy)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            active: try r.readUInt8("scan type") != 0, interval: try r.readUInt16(.little, "scan interval"),
            window: try r.readUInt16(.little, "scan window"), ownAddressType: try r.readUInt8("own address type"),
            filterPolicy: try r.readUInt8("filter policy"))
    }
}

/// Core 6.0 Vol 4 Part E §7.8.11 LE Set Scan Enable
public struct HCILESetScanEnable: HCICommand {
    public static let opcode = HCICommandOpcode.leSetScanEnable
    public var enable: Bool
    public var filterDuplicates: Bool
    public init(enable: Bool, filterDuplicates: Bool = false) { self.enable = enable; self.filterDuplicates = filterDuplicates }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(enable ? 1 : 0); w.writeUInt8(filterDuplicates ? 1 : 0) }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(enable: try r.readUInt8("enable") != 0, filterDuplicates: try r.readUInt8("filter duplicates") != 0)
    }
}

/// Core 6.0 Vol 4 Part E §7.8.12 LE Create Connection. Scan interval/window in 0.625 ms.
public struct HCILECreateConnection: HCICommand {
    public static let opcode = HCICommandOpcode.leCreateConnection
    /// The peer address after scan interval and window, filter policy and its type.
    public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(6) }
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    /// 0: connect to `peer`, not the filter accept list.
    public var filterPolicy: UInt8
    public var peerAddressType: UInt8
    public var peer: BDAddr
    public var ownAddressType: UInt8
    public var parameters: ConnectionParameters
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(
        scanInterval: UInt16, scanWindow: UInt16, filterPolicy: UInt8 = 0, peerAddressType: UInt8, peer: BDAddr,
        ownAddressType: UInt8, parameters: ConnectionParameters, minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.scanInterval = scanInterval; self.scanWindow = scanWindow; self.filterPolicy = filterPolicy
        self.peerAddressType = peerAddressType; self.peer = peer; self.ownAddressType = ownAddressType
        self.parameters = parameters; self.minCELength = minCELength; self.maxCELength = maxCELength
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt16(scanInterval); w.writeUInt16(scanWindow); w.writeUInt8(filterPolicy)
        w.writeUInt8(peerAddressType); w.writeAddress(peer); w.writeUInt8(ownAddressType)
        parameters.encode(into: &w)
        w.writeUInt16(minCELength); w.writeUInt16(maxCELength)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            scanInterval: try r.readUInt16(.little, "scan interval"), scanWindow: try r.readUInt16(.little, "scan window"),
            filterPolicy: try r.readUInt8("filter policy"), peerAddressType: try r.readUInt8("peer address type"),
            peer: try r.readAddress("peer address"), ownAddressType: try r.readUInt8("own address type"),
            parameters: try ConnectionParameters(&r), minCELength: try r.readUInt16(.little, "min CE length"),
            maxCELength: try r.readUInt16(.little, "max CE length"))
    }
}

/// Core 6.0 Vol 4 Part E §7.8.13 LE Create Connection Cancel
public struct HCILECreateConnectionCancel: HCIEmptyCommand {
    public static let opcode = HCICommandOpcode.leCreateConnectionCancel
    public init() {}
}

/// Core 6.0 Vol 4 Part E §7.8.18 LE Connection Update
public struct HCILEConnectionUpdate: HCICommand {
    public static let opcode = HCICommandOpcode.leConnectionUpdate
    public var handle: UInt16
    public var parameters: ConnectionParameters
    public var minCELength: UInt16
    public var maxCELength: UInt16
    public init(handle: UInt16, parameters: ConnectionParameters, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.handle = handle; self.parameters = parameters; self.minCELength = minCELength; self.maxCELength = maxCELength
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt16(handle); parameters.encode(into: &w); w.writeUInt16(minCELength); w.writeUInt16(maxCELength)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            handle: try r.readUInt16(.little, "handle"), parameters: try ConnectionParameters(&r),
            minCELength: try r.readUInt16(.little, "min CE length"), maxCELength: try r.readUInt16(.little, "max CE length"))
    }
}

/// Core 6.0 Vol 4 Part E §7.8.24 LE Enable Encryption. Rand (8) and LTK (16) little-endian,
/// as SMP and the bond store carry them.
public struct HCILEEnableEncryption: HCICommand {
    public static let opcode = HCICommandOpcode.leEnableEncryption
    /// The LTK after handle, Rand and EDIV.
    public static func keyRanges(in p: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)]) { out.append((12..<28, "LE Enable Encryption LTK")) }
    public var handle: UInt16
    public var rand: [UInt8]
    public var ediv: UInt16
    public var ltk: [UInt8]
    public init(handle: UInt16, rand: [UInt8], ediv: UInt16, ltk: [UInt8]) {
        self.handle = handle; self.rand = rand; self.ediv = ediv; self.ltk = ltk
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt16(handle); w.writeBytes(rand); w.writeUInt16(ediv); w.writeBytes(ltk)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(
            handle: try r.readUInt16(.little, "handle"), rand: Array(try r.readBytes(8, "random number")),
            ediv: try r.readUInt16(.little, "EDIV"), ltk: Array(try r.readBytes(16, "long term key")))
    }
}

/// Core 6.0 Vol 4 Part E §7.8.25 LE Long Term Key Request Reply: the LTK little-endian.
public struct HCILELongTermKeyRequestReply: HCICommand {
    public static let opcode = HCICommandOpcode.leLongTermKeyRequestReply
    /// The LTK after the handle.
    public static func keyRanges(in p: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)]) {
        out.append((2..<18, "LE Long Term Key Request Reply LTK"))
    }
    public var handle: UInt16
    public var ltk: [UInt8]
    public init(handle: UInt16, ltk: [UInt8]) { self.handle = handle; self.ltk = ltk }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(handle); w.writeBytes(ltk) }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        self.init(handle: try r.readUInt16(.little, "handle"), ltk: Array(try r.readBytes(16, "long term key")))
    }
}

/// Core 6.0 Vol 4 Part E §7.8.26 LE Long Term Key Request Negative Reply
public struct HCILELongTermKeyRequestNegativeReply: HCICommand {
    public static let opcode = HCICommandOpcode.leLongTermKeyRequestNegativeReply
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(handle) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init(handle: try r.readUInt16(.little, "handle")) }
}
