import BluesiftWire

/// Any ATT PDU as a typed message (Core 5.4 Vol 3 Part F §3.4): decode by opcode, encode back.
public enum ATTMessage: Sendable, Hashable {
    case errorResponse(ATTErrorResponse)
    case exchangeMTURequest(ATTExchangeMTURequest)
    case exchangeMTUResponse(ATTExchangeMTUResponse)
    case findInformationRequest(ATTFindInformationRequest)
    case findInformationResponse(ATTFindInformationResponse)
    case findByTypeValueRequest(ATTFindByTypeValueRequest)
    case findByTypeValueResponse(ATTFindByTypeValueResponse)
    case readByTypeRequest(ATTReadByTypeRequest)
    case readByTypeResponse(ATTReadByTypeResponse)
    case readRequest(ATTReadRequest)
    case readResponse(ATTReadResponse)
    case readBlobRequest(ATTReadBlobRequest)
    case readBlobResponse(ATTReadBlobResponse)
    case readMultipleRequest(ATTReadMultipleRequest)
    case readMultipleResponse(ATTReadMultipleResponse)
    case readByGroupTypeRequest(ATTReadByGroupTypeRequest)
    case readByGroupTypeResponse(ATTReadByGroupTypeResponse)
    case writeRequest(ATTWriteRequest)
    case writeResponse(ATTWriteResponse)
    case writeCommand(ATTWriteCommand)
    case signedWriteCommand(ATTSignedWriteCommand)
    case prepareWriteRequest(ATTPrepareWriteRequest)
    case prepareWriteResponse(ATTPrepareWriteResponse)
    case executeWriteRequest(ATTExecuteWriteRequest)
    case executeWriteResponse(ATTExecuteWriteResponse)
    case handleValueNotification(ATTHandleValueNotification)
    case handleValueIndication(ATTHandleValueIndication)
    case handleValueConfirmation(ATTHandleValueConfirmation)
    case readMultipleVariableRequest(ATTReadMultipleVariableRequest)
    case readMultipleVariableResponse(ATTReadMultipleVariableResponse)
    case multipleHandleValueNotification(ATTMultipleHandleValueNotification)
    /// An opcode this codec does not know; parameters kept as they are.
    case unknown(ATTOpcode, parameters: [UInt8])

    /// Strict decode by opcode (see ``ATTMessageType/decode(_:)-…``).
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> ATTMessage {
        guard let op = bytes.first else {
            throw DecodeError(layer: "att", code: .truncated, offset: 0, message: "opcode: need 1 bytes, 0 left")
        }
        switch op {
        case 0x01: return .errorResponse(try .decode(bytes))
        case 0x02: return .exchangeMTURequest(try .decode(bytes))
        case 0x03: return .exchangeMTUResponse(try .decode(bytes))
        case 0x04: return .findInformationRequest(try .decode(bytes))
        case 0x05: return .findInformationResponse(try .decode(bytes))
        case 0x06: return .findByTypeValueRequest(try .decode(bytes))
        case 0x07: return .findByTypeValueResponse(try .decode(bytes))
        case 0x08: return .readByTypeRequest(try .decode(bytes))
        case 0x09: return .readByTypeResponse(try .decode(bytes))
        case 0x0A: return .readRequest(try .decode(bytes))
        case 0x0B: return .readResponse(try .decode(bytes))
        case 0x0C: return .readBlobRequest(try .decode(bytes))
        case 0x0D: return .readBlobResponse(try .decode(bytes))
        case 0x0E: return .readMultipleRequest(try .decode(bytes))
        case 0x0F: return .readMultipleResponse(try .decode(bytes))
        case 0x10: return .readByGroupTypeRequest(try .decode(bytes))
        case 0x11: return .readByGroupTypeResponse(try .decode(bytes))
        case 0x12: return .writeRequest(try .decode(bytes))
        case 0x13: return .writeResponse(try .decode(bytes))
        case 0x52: return .writeCommand(try .decode(bytes))
        case 0xD2: return .signedWriteCommand(try .decode(bytes))
        case 0x16: return .prepareWriteRequest(try .decode(bytes))
        case 0x17: return .prepareWriteResponse(try .decode(bytes))
        case 0x18: return .executeWriteRequest(try .decode(bytes))
        case 0x19: return .executeWriteResponse(try .decode(bytes))
        case 0x1B: return .handleValueNotification(try .decode(bytes))
        case 0x1D: return .handleValueIndication(try .decode(bytes))
        case 0x1E: return .handleValueConfirmation(try .decode(bytes))
        case 0x20: return .readMultipleVariableRequest(try .decode(bytes))
        case 0x21: return .readMultipleVariableResponse(try .decode(bytes))
        case 0x23: return .multipleHandleValueNotification(try .decode(bytes))
        default: return .unknown(ATTOpcode(rawValue: op), parameters: Array(bytes.dropFirst()))
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> ATTMessage {
        let r = bytes.withUnsafeBytes { p in Result { () throws(DecodeError) -> ATTMessage in try decode(p) } }
        return try r.get()
    }

    /// The wrapped message, or nil for `.unknown`.
    public var message: (any ATTMessageType)? {
        switch self {
        case .errorResponse(let m): m
        case .exchangeMTURequest(let m): m
        case .exchangeMTUResponse(let m): m
        case .findInformationRequest(let m): m
        case .findInformationResponse(let m): m
        case .findByTypeValueRequest(let m): m
        case .findByTypeValueResponse(let m): m
        case .readByTypeRequest(let m): m
        case .readByTypeResponse(let m): m
        case .readRequest(let m): m
        case .readResponse(let m): m
        case .readBlobRequest(let m): m
        case .readBlobResponse(let m): m
        case .readMultipleRequest(let m): m
        case .readMultipleResponse(let m): m
        case .readByGroupTypeRequest(let m): m
        case .readByGroupTypeResponse(let m): m
        case .writeRequest(let m): m
        case .writeResponse(let m): m
        case .writeCommand(let m): m
        case .signedWriteCommand(let m): m
        case .prepareWriteRequest(let m): m
        case .prepareWriteResponse(let m): m
        case .executeWriteRequest(let m): m
        case .executeWriteResponse(let m): m
        case .handleValueNotification(let m): m
        case .handleValueIndication(let m): m
        case .handleValueConfirmation(let m): m
        case .readMultipleVariableRequest(let m): m
        case .readMultipleVariableResponse(let m): m
        case .multipleHandleValueNotification(let m): m
        case .unknown: nil
        }
    }

    public var opcode: ATTOpcode {
        if case .unknown(let op, _) = self { return op }
        return type(of: message!).opcode
    }

    public func encode(into w: inout ByteWriter) {
        if case .unknown(let op, let p) = self { w.writeUInt8(op.rawValue); w.writeBytes(p); return }
        message!.encode(into: &w)
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 32)
        encode(into: &w)
        return w.bytes
    }
}
