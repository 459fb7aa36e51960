import BluesiftWire

/// A typed ATT PDU with encode next to decode, for the host, the emulator and the replayer.
/// Messages own their bytes; they are read through ``ATTPDU``, the borrowed view the analyzer
/// decodes every record with, so each PDU's layout is read in one place (ATTPDU.parse).
public protocol ATTMessageType: Sendable, Hashable {
    static var opcode: ATTOpcode { get }
    /// Writes the parameters that follow the opcode.
    func encodeParameters(into w: inout ByteWriter)
    /// From a view of this opcode that decoded without error (`decode` checks both).
    init(_ pdu: ATTPDU)
}

/// PDUs carrying one attribute handle and its whole value (Write Request/Command,
/// Notification, Indication): one codec for all of them.
public protocol ATTHandleValueMessage: ATTMessageType {
    var handle: UInt16 { get }
    var value: [UInt8] { get }
    init(handle: UInt16, value: [UInt8])
}

extension ATTHandleValueMessage {
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(handle); w.writeBytes(value) }
    public init(_ v: ATTPDU) { self.init(handle: v.handle ?? 0, value: v.value.map(Array.init) ?? []) }
}

/// PDUs with no parameters (Write Response, Execute Write Response, Confirmation).
public protocol ATTEmptyMessage: ATTMessageType { init() }

extension ATTEmptyMessage {
    public func encodeParameters(into w: inout ByteWriter) {}
    public init(_ v: ATTPDU) { self.init() }
}

extension ATTMessageType {
    public func encode(into w: inout ByteWriter) {
        w.writeUInt8(Self.opcode.rawValue)
        encodeParameters(into: &w)
    }

    /// The complete PDU: opcode then parameters.
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 32)
        encode(into: &w)
        return w.bytes
    }

    /// Strict decode: the opcode must match and the PDU decode whole (no bytes after it).
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Self {
        if let op = bytes.first, op != opcode.rawValue {
            throw DecodeError(
                layer: "att", code: .unexpected, offset: 0,
                message: "opcode \(Hex.fixed(UInt64(op), width: 2)) is not \(opcode.name)")
        }
        let v = ATTPDU(bytes: bytes)
        if let e = v.error { throw e }
        return Self(v)
    }

    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Self {
        let r = bytes.withUnsafeBytes { p in Result { () throws(DecodeError) -> Self in try decode(p) } }
        return try r.get()
    }
}

/// A handle and a UUID (Find Information Response entry).
public struct ATTHandleUUID: Sendable, Hashable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
    public init(handle: UInt16, uuid: BluetoothUUID) { self.handle = handle; self.uuid = uuid }
}

/// A handle range (Find By Type Value Response entry).
public struct ATTHandleRange: Sendable, Hashable {
    public var start: UInt16
    public var end: UInt16
    public init(start: UInt16, end: UInt16) { self.start = start; self.end = end }
}

/// A handle and a value (Read By Type Response / Multiple Handle Value Notification entry).
public struct ATTHandleValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) { self.handle = handle; self.value = value }
}

/// A group: start, end, value (Read By Group Type Response entry).
public struct ATTGroupValue: Sendable, Hashable {
    public var start: UInt16
    public var end: UInt16
    public var value: [UInt8]
    public init(start: UInt16, end: UInt16, value: [UInt8]) { self.start = start; self.end = end; self.value = value }
}

extension ByteWriter {
    /// 2 bytes for a 16-bit UUID on the Base UUID, else 16 (ATT carries no 32-bit form).
    mutating func writeATTUUID(_ u: BluetoothUUID) {
        if let s = u.shortValue, s <= 0xFFFF { writeUInt16(UInt16(s)) } else { writeBytes(u.littleEndianBytes) }
    }
}

/// Core 5.4 Vol 3 Part F §3.4.1.1
public struct ATTErrorResponse: ATTMessageType {
    public static let opcode = ATTOpcode.errorResponse
    public var requestOpcode: ATTOpcode
    public var handle: UInt16
    public var error: ATTErrorCode
    public init(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode) {
        self.requestOpcode = requestOpcode; self.handle = handle; self.error = error
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(requestOpcode.rawValue); w.writeUInt16(handle); w.writeUInt8(error.rawValue)
    }
    public init(_ v: ATTPDU) {
        requestOpcode = v.requestOpcode ?? ATTOpcode(rawValue: 0); handle = v.errorHandle ?? 0; error = ATTErrorCode(rawValue: v.errorCode ?? 0)
    }
}

/// Core 5.4 Vol 3 Part F §3.4.2.1
public struct ATTExchangeMTURequest: ATTMessageType {
    public static let opcode = ATTOpcode.exchangeMTURequest
    public var clientRxMTU: UInt16
    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(clientRxMTU) }
    public init(_ v: ATTPDU) { clientRxMTU = v.mtu ?? 0 }
}

/// Core 5.4 Vol 3 Part F §3.4.2.2
public struct ATTExchangeMTUResponse: ATTMessageType {
    public static let opcode = ATTOpcode.exchangeMTUResponse
    public var serverRxMTU: UInt16
    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(serverRxMTU) }
    public init(_ v: ATTPDU) { serverRxMTU = v.mtu ?? 0 }
}

/// Core 5.4 Vol 3 Part F §3.4.3.1
public struct ATTFindInformationRequest: ATTMessageType {
    public static let opcode = ATTOpcode.findInformationRequest
    public var startHandle: UInt16
    public var endHandle: UInt16
    public init(startHandle: UInt16 = 0x0001, endHandle: UInt16 = 0xFFFF) { self.startHandle = startHandle; self.endHandle = endHandle }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(startHandle); w.writeUInt16(endHandle) }
    public init(_ v: ATTPDU) { startHandle = v.startHandle ?? 0; endHandle = v.endHandle ?? 0 }
}

/// Core 5.4 Vol 3 Part F §3.4.3.2. Encodes format 1 when every UUID is 16-bit, else format 2.
public struct ATTFindInformationResponse: ATTMessageType {
    public static let opcode = ATTOpcode.findInformationResponse
    public var entries: [ATTHandleUUID]
    /// 16-bit UUIDs written in full (format 2): a server may send them so, and a decoded PDU
    /// encodes back to its own bytes.
    public var long: Bool
    public init(entries: [ATTHandleUUID], long: Bool = false) { self.entries = entries; self.long = long }
    public func encodeParameters(into w: inout ByteWriter) {
        let short = !long && entries.allSatisfy { ($0.uuid.shortValue ?? .max) <= 0xFFFF }
        w.writeUInt8(short ? 1 : 2)
        for e in entries {
            w.writeUInt16(e.handle)
            if short { w.writeUInt16(UInt16(e.uuid.shortValue!)) } else { w.writeBytes(e.uuid.littleEndianBytes) }
        }
    }
    public init(_ v: ATTPDU) {
        entries = v.findInformation.map { $0.map { ATTHandleUUID(handle: $0.handle, uuid: $0.uuid) } } ?? []
        long = v.format == 2 && entries.allSatisfy { ($0.uuid.shortValue ?? .max) <= 0xFFFF }
    }
}

/// Core 5.4 Vol 3 Part F §3.4.3.3
public struct ATTFindByTypeValueRequest: ATTMessageType {
    public static let opcode = ATTOpcode.findByTypeValueRequest
    public var startHandle: UInt16
    public var endHandle: UInt16
    /// 16-bit attribute type, e.g. 0x2800 Primary Service.
    public var type: UInt16
    public var value: [UInt8]
    public init(startHandle: UInt16 = 0x0001, endHandle: UInt16 = 0xFFFF, type: UInt16, value: [UInt8]) {
        self.startHandle = startHandle; self.endHandle = endHandle; self.type = type; self.value = value
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt16(startHandle); w.writeUInt16(endHandle); w.writeUInt16(type); w.writeBytes(value)
    }
    public init(_ v: ATTPDU) {
        startHandle = v.startHandle ?? 0; endHandle = v.endHandle ?? 0
        type = UInt16(truncatingIfNeeded: v.attributeType?.shortValue ?? 0)
        value = v.value.map(Array.init) ?? []
    }
}

/// Core 5.4 Vol 3 Part F §3.4.3.4
public struct ATTFindByTypeValueResponse: ATTMessageType {
    public static let opcode = ATTOpcode.findByTypeValueResponse
    public var ranges: [ATTHandleRange]
    public init(ranges: [ATTHandleRange]) { self.ranges = ranges }
    public func encodeParameters(into w: inout ByteWriter) {
        for e in ranges { w.writeUInt16(e.start); w.writeUInt16(e.end) }
    }
    public init(_ v: ATTPDU) { ranges = v.handleRanges.map { $0.map { ATTHandleRange(start: $0.start, end: $0.end) } } ?? [] }
}

/// Requests for a handle range and an attribute type (Read By Type, Read By Group Type):
/// one codec for both.
public protocol ATTRangeTypeRequest: ATTMessageType {
    var startHandle: UInt16 { get }
    var endHandle: UInt16 { get }
    var type: BluetoothUUID { get }
    init(startHandle: UInt16, endHandle: UInt16, type: BluetoothUUID)
    /// Names the type field in decode errors.
    static var typeField: StaticString { get }
}

extension ATTRangeTypeRequest {
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt16(startHandle); w.writeUInt16(endHandle); w.writeATTUUID(type)
    }
    public init(_ v: ATTPDU) {
        self.init(startHandle: v.startHandle ?? 0, endHandle: v.endHandle ?? 0, type: v.attributeType ?? BluetoothUUID(0))
    }
}

/// Core 5.4 Vol 3 Part F §3.4.4.1
public struct ATTReadByTypeRequest: ATTRangeTypeRequest {
    public static let opcode = ATTOpcode.readByTypeRequest
    public static let typeField: StaticString = "attribute type"
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var type: BluetoothUUID
    public init(startHandle: UInt16 = 0x0001, endHandle: UInt16 = 0xFFFF, type: BluetoothUUID) {
        self.startHandle = startHandle; self.endHandle = endHandle; self.type = type
    }
}

/// Core 5.4 Vol 3 Part F §3.4.4.2. All values must have the same length (the PDU has one
/// length field); `encode` takes it from the first entry.
public struct ATTReadByTypeResponse: ATTMessageType {
    public static let opcode = ATTOpcode.readByTypeResponse
    public var entries: [ATTHandleValue]
    public init(entries: [ATTHandleValue]) { self.entries = entries }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))
        for e in entries { w.writeUInt16(e.handle); w.writeBytes(e.value) }
    }
    public init(_ v: ATTPDU) { entries = v.attributeData.map { $0.map { ATTHandleValue(handle: $0.handle, value: Array($0.value)) } } ?? [] }
}

/// Core 5.4 Vol 3 Part F §3.4.4.9
public struct ATTReadByGroupTypeRequest: ATTRangeTypeRequest {
    public static let opcode = ATTOpcode.readByGroupTypeRequest
    public static let typeField: StaticString = "attribute group type"
    public var startHandle: UInt16
    public var endHandle: UInt16
    /// 0x2800 Primary Service or 0x2801 Secondary Service for GATT.
    public var type: BluetoothUUID
    public init(startHandle: UInt16 = 0x0001, endHandle: UInt16 = 0xFFFF, type: BluetoothUUID) {
        self.startHandle = startHandle; self.endHandle = endHandle; self.type = type
    }
}

/// Core 5.4 Vol 3 Part F §3.4.4.10. All values must have the same length.
public struct ATTReadByGroupTypeResponse: ATTMessageType {
    public static let opcode = ATTOpcode.readByGroupTypeResponse
    public var entries: [ATTGroupValue]
    public init(entries: [ATTGroupValue]) { self.entries = entries }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))
        for e in entries { w.writeUInt16(e.start); w.writeUInt16(e.end); w.writeBytes(e.value) }
    }
    public init(_ v: ATTPDU) {
        entries = v.groupData.map { $0.map { ATTGroupValue(start: $0.start, end: $0.end, value: Array($0.value)) } } ?? []
    }
}
