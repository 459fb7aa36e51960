import BluesiftWire

/// One ATT PDU (Core 5.4 Vol 3 Part F §3.4). Borrows its bytes; `init` never allocates:
/// list parameters are exposed as lazy views (`findInformation`, `attributeData`, …).
public struct ATTPDU: FieldDescribable {
    public var bytes: UnsafeRawBufferPointer
    public var opcode: ATTOpcode
    /// The addressed attribute, only for Read, Read Blob, Write Request, Write Command,
    /// Signed Write, Prepare Write Request/Response, Notification and Indication.
    public var handle: UInt16?
    /// Error Response fields.
    public var errorHandle: UInt16?
    public var requestOpcode: ATTOpcode?
    public var errorCode: UInt8?
    /// The attribute value, where the PDU carries one.
    public var value: UnsafeRawBufferPointer?
    /// An Error Response that ends a discovery rather than reports a failure: Attribute Not
    /// Found answering Find Information, Find By Type Value or Read By (Group) Type (Core 5.4
    /// Vol 3 Part G §4.4-§4.7: the server says there is nothing past the range).
    public var endsDiscovery: Bool {
        opcode == .errorResponse && errorCode == ATTErrorCode.attributeNotFound.rawValue && requestOpcode?.isDiscovery == true
    }
    /// Set when the PDU is shorter or longer than its opcode allows; fields decoded so far stay.
    public var error: DecodeError?

    /// Exchange MTU Request/Response: Client/Server Rx MTU.
    public var mtu: UInt16?
    /// Handle range of discovery requests.
    public var startHandle: UInt16?
    public var endHandle: UInt16?
    /// Attribute type of Read By (Group) Type / Find By Type Value Requests.
    public var attributeType: BluetoothUUID?
    /// Read Blob / Prepare Write value offset.
    public var offset: UInt16?
    /// Execute Write Request flags (0 cancel, 1 write).
    public var flags: UInt8?
    /// Find Information Response format (1: 16-bit UUIDs, 2: 128-bit).
    public var format: UInt8?
    /// Read By Type / Read By Group Type Response entry length.
    public var entryLength: UInt8?
    /// Signed Write Command authentication signature (12 bytes).
    public var signature: UnsafeRawBufferPointer?
    /// The raw list parameter of list PDUs (see the typed views below).
    public var list: UnsafeRawBufferPointer?

    /// A placeholder over no bytes, not parsed (frame storage before any ATT PDU).
    init() {
        bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        opcode = ATTOpcode(rawValue: 0)
    }

    public init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.opcode = ATTOpcode(rawValue: bytes.first ?? 0)
        do throws(DecodeError) { try parse() } catch { self.error = error.inLayer("att") }
    }

    // MARK: lazy list views

    /// Find Information Response entries.
    public var findInformation: ATTHandleUUIDList? {
        guard opcode == .findInformationResponse, let list, let format else { return nil }
        return ATTHandleUUIDList(data: list, uuidSize: format == 1 ? 2 : format == 2 ? 16 : 0)
    }
    /// Find By Type Value Response handle ranges.
    public var handleRanges: ATTHandleRangeList? {
        guard opcode == .findByTypeValueResponse, let list else { return nil }
        return ATTHandleRangeList(data: list)
    }
    /// Read By Type Response handle/value pairs.
    public var attributeData: ATTHandleValueList? {
        guard opcode == .readByTypeResponse, let list, let entryLength else { return nil }
        return ATTHandleValueList(data: list, length: Int(entryLength))
    }
    /// Read By Group Type Response start/end/value entries.
    public var groupData: ATTGroupValueList? {
        guard opcode == .readByGroupTypeResponse, let list, let entryLength else { return nil }
        return ATTGroupValueList(data: list, length: Int(entryLength))
    }
    /// Read Multiple / Read Multiple Variable Request handles.
    public var handles: ATTHandleList? {
        guard opcode == .readMultipleRequest || opcode == .readMultipleVariableRequest, let list else { return nil }
        return ATTHandleList(data: list)
    }
    /// Read Multiple Variable Response length/value tuples.
    public var lengthValues: ATTLengthValueList? {
        guard opcode == .readMultipleVariableResponse, let list else { return nil }
        return ATTLengthValueList(data: list)
    }
    /// Multiple Handle Value Notification handle/value tuples.
    public var handleValues: ATTHandleLengthValueList? {
        guard opcode == .multipleHandleValueNotification, let list else { return nil }
        return ATTHandleLengthValueList(data: list)
    }

    // MARK: decoding

    private mutating func parse() throws(DecodeError) {
        var r = ByteReader(bytes)
        _ = try r.readUInt8("opcode")
        switch opcode.rawValue {
        case 0x01: // §3.4.1.1
            requestOpcode = ATTOpcode(rawValue: try r.readUInt8("request opcode in error"))
            errorHandle = try r.readUInt16(.little, "attribute handle in error")
            errorCode = try r.readUInt8("error code")
        case 0x02, 0x03: // §3.4.2.1-2
            mtu = try r.readUInt16(.little, "rx mtu")
        case 0x04: // §3.4.3.1
            try readRange(&r)
        case 0x05: // §3.4.3.2
            let f = try r.readUInt8("format")
            format = f
            list = r.remaining
            guard f == 1 || f == 2 else {
                throw DecodeError(code: .invalidValue, offset: 1, message: "find information: format \(f) is reserved")
            }
            try checkMultiple(r, of: f == 1 ? 4 : 18, "find information data")
        case 0x06: // §3.4.3.3
            try readRange(&r)
            attributeType = BluetoothUUID(littleEndian: try r.readBytes(2, "attribute type"))
            value = r.readRemaining()
        case 0x07: // §3.4.3.4
            list = r.remaining
            try checkMultiple(r, of: 4, "handles information list")
        case 0x08, 0x10: // §3.4.4.1, §3.4.4.9
            try readRange(&r)
            let n = r.readableBytes
            guard n == 2 || n == 16 else {
                throw DecodeError(code: .invalidLength, offset: r.readerIndex, message: "attribute type: \(n) bytes, need 2 or 16")
            }
            attributeType = BluetoothUUID(littleEndian: r.readRemaining())
        case 0x09, 0x11: // §3.4.4.2, §3.4.4.10
            let n = try r.readUInt8("length")
            entryLength = n
            list = r.remaining
            let minimum: UInt8 = opcode.rawValue == 0x09 ? 2 : 4
            guard n >= minimum else {
                throw DecodeError(code: .invalidValue, offset: 1, message: "entry length \(n) below \(minimum)")
            }
            try checkMultiple(r, of: Int(n), "attribute data list")
        case 0x0A: // §3.4.4.3
            handle = try r.readUInt16(.little, "attribute handle")
        case 0x0B, 0x0D, 0x0F: // §3.4.4.4, §3.4.4.6, §3.4.4.8
            value = r.readRemaining()
        case 0x0C: // §3.4.4.5
            handle = try r.readUInt16(.little, "attribute handle")
            offset = try r.readUInt16(.little, "value offset")
        case 0x0E, 0x20: // §3.4.4.7, §3.4.4.11
            list = r.remaining
            try checkMultiple(r, of: 2, "set of handles")
        case 0x12, 0x52, 0x1B, 0x1D: // §3.4.5.1, §3.4.5.3, §3.4.7.1, §3.4.7.2
            handle = try r.readUInt16(.little, "attribute handle")
            value = r.readRemaining()
        case 0xD2: // §3.4.5.4
            handle = try r.readUInt16(.little, "attribute handle")
            guard r.readableBytes >= 12 else {
                throw DecodeError(code: .truncated, offset: r.readerIndex, message: "authentication signature: need 12 bytes, \(r.readableBytes) left")
            }
            value = try r.readBytes(r.readableBytes - 12, "attribute value")
            signature = r.readRemaining()
        case 0x16, 0x17: // §3.4.6.1-2
            handle = try r.readUInt16(.little, "attribute handle")
            offset = try r.readUInt16(.little, "value offset")
            value = r.readRemaining()
        case 0x18: // §3.4.6.3
            flags = try r.readUInt8("flags")
        case 0x21: // §3.4.4.12
            list = r.remaining
        case 0x23: // §3.4.7.4
            list = r.remaining
            var i = r.readerIndex
            while i < bytes.count {
                guard i + 4 <= bytes.count, i + 4 + Int(le16(bytes, i + 2)) <= bytes.count else {
                    throw DecodeError(code: .truncated, offset: i, message: "handle length value tuple truncated")
                }
                i += 4 + Int(le16(bytes, i + 2))
            }
        default:
            break
        }
        if let n = opcode.fixedLength, bytes.count > n {
            throw DecodeError(code: .invalidLength, offset: n, message: "\(bytes.count - n) bytes after the PDU")
        }
    }

    private mutating func readRange(_ r: inout ByteReader) throws(DecodeError) {
        startHandle = try r.readUInt16(.little, "starting handle")
        endHandle = try r.readUInt16(.little, "ending handle")
    }

    private func checkMultiple(_ r: ByteReader, of size: Int, _ what: StaticString) throws(DecodeError) {
        let n = r.readableBytes
        if n % size != 0 {
            throw DecodeError(
                code: .invalidLength, offset: r.readerIndex + n - n % size,
                message: "\(what): \(n) bytes is not a multiple of \(size)")
        }
    }
}
