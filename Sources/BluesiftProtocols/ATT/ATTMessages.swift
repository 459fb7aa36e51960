import BluesiftWire

/// A typed ATT PDU with encode next to decode, for the host and the replayer.
/// Unlike ``ATTPDU`` (a borrowed view for the analyzer), messages own their bytes.
public protocol ATTMessageType: Sendable, Hashable {
    static var opcode: ATTOpcode { get }
    /// Writes the parameters that follow the opcode.
    func encodeParameters(into w: inout ByteWriter)
    /// Reads the parameters that follow the opcode; must consume all it accepts.
    init(parameters r: inout ByteReader) throws(DecodeError)
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let h = try r.readUInt16(.little, "attribute handle")
        self.init(handle: h, value: Array(r.readRemaining()))
    }
}

/// PDUs with no parameters (Write Response, Execute Write Response, Confirmation).
public protocol ATTEmptyMessage: ATTMessageType { init() }

extension ATTEmptyMessage {
    public func encodeParameters(into w: inout ByteWriter) {}
    public init(parameters r: inout ByteReader) throws(DecodeError) { self.init() }
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

    /// Strict decode: the opcode must match and no bytes may follow the PDU.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Self {
        do throws(DecodeError) {
            var r = ByteReader(bytes)
            let op = try r.readUInt8("opcode")
            guard op == opcode.rawValue else {
                throw DecodeError(code: .unexpected, offset: 0,
                                  message: "opcode \(Hex.fixed(UInt64(op), width: 2)) is not \(opcode.name)")
            }
            let m = try Self(parameters: &r)
            guard r.isAtEnd else {
                throw DecodeError(code: .invalidLength, offset: r.readerIndex, message: "\(r.readableBytes) bytes after the PDU")
            }
            return m
        } catch {
            throw error.inLayer("att")
        }
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

extension ByteReader {
    mutating func readATTUUID(_ what: StaticString) throws(DecodeError) -> BluetoothUUID {
        let n = readableBytes
        guard n == 2 || n == 16 else {
            throw DecodeError(code: .invalidLength, offset: readerIndex, message: "\(what): \(n) bytes, need 2 or 16")
        }
        return BluetoothUUID(littleEndian: readRemaining())!
    }

    mutating func readRange() throws(DecodeError) -> (UInt16, UInt16) {
        (try readUInt16(.little, "starting handle"), try readUInt16(.little, "ending handle"))
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        requestOpcode = ATTOpcode(rawValue: try r.readUInt8("request opcode in error"))
        handle = try r.readUInt16(.little, "attribute handle in error")
        error = ATTErrorCode(rawValue: try r.readUInt8("error code"))
    }
}

/// Core 5.4 Vol 3 Part F §3.4.2.1
public struct ATTExchangeMTURequest: ATTMessageType {
    public static let opcode = ATTOpcode.exchangeMTURequest
    public var clientRxMTU: UInt16
    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(clientRxMTU) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { clientRxMTU = try r.readUInt16(.little, "client rx mtu") }
}

/// Core 5.4 Vol 3 Part F §3.4.2.2
public struct ATTExchangeMTUResponse: ATTMessageType {
    public static let opcode = ATTOpcode.exchangeMTUResponse
    public var serverRxMTU: UInt16
    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(serverRxMTU) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { serverRxMTU = try r.readUInt16(.little, "server rx mtu") }
}

/// Core 5.4 Vol 3 Part F §3.4.3.1
public struct ATTFindInformationRequest: ATTMessageType {
    public static let opcode = ATTOpcode.findInformationRequest
    public var startHandle: UInt16
    public var endHandle: UInt16
    public init(startHandle: UInt16 = 0x0001, endHandle: UInt16 = 0xFFFF) { self.startHandle = startHandle; self.endHandle = endHandle }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(startHandle); w.writeUInt16(endHandle) }
    public init(parameters r: inout ByteReader) throws(DecodeError) { (startHandle, endHandle) = try r.readRange() }
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let f = try r.readUInt8("format")
        guard f == 1 || f == 2 else { throw DecodeError(code: .invalidValue, offset: 1, message: "find information: format \(f) is reserved") }
        let size = f == 1 ? 2 : 16
        entries = []
        while !r.isAtEnd {
            let h = try r.readUInt16(.little, "handle")
            entries.append(ATTHandleUUID(handle: h, uuid: BluetoothUUID(littleEndian: try r.readBytes(size, "uuid"))!))
        }
        long = f == 2 && entries.allSatisfy { ($0.uuid.shortValue ?? .max) <= 0xFFFF }
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        (startHandle, endHandle) = try r.readRange()
        type = try r.readUInt16(.little, "attribute type")
        value = Array(r.readRemaining())
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        ranges = []
        while !r.isAtEnd {
            let s = try r.readUInt16(.little, "found attribute handle")
            ranges.append(ATTHandleRange(start: s, end: try r.readUInt16(.little, "group end handle")))
        }
    }
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let (start, end) = try r.readRange()
        self.init(startHandle: start, endHandle: end, type: try r.readATTUUID(Self.typeField))
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let n = Int(try r.readUInt8("length"))
        guard n >= 2 else { throw DecodeError(code: .invalidValue, offset: 1, message: "entry length \(n) below 2") }
        entries = []
        while !r.isAtEnd {
            let h = try r.readUInt16(.little, "attribute handle")
            entries.append(ATTHandleValue(handle: h, value: Array(try r.readBytes(n - 2, "attribute value"))))
        }
    }
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
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let n = Int(try r.readUInt8("length"))
        guard n >= 4 else { throw DecodeError(code: .invalidValue, offset: 1, message: "entry length \(n) below 4") }
        entries = []
        while !r.isAtEnd {
            let s = try r.readUInt16(.little, "attribute handle")
            let e = try r.readUInt16(.little, "end group handle")
            entries.append(ATTGroupValue(start: s, end: e, value: Array(try r.readBytes(n - 4, "attribute value"))))
        }
    }
}
