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

    /// Strict decode by opcode: one reading through ``ATTPDU``, then the type of the opcode
    /// (the table below, one row per opcode; Bumble's `ATT_PDU.pdu_classes`).
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> ATTMessage {
        let v = ATTPDU(bytes: bytes)
        if let e = v.error { throw e }
        switch v.opcode {
        case .errorResponse: return .errorResponse(.init(v))
        case .exchangeMTURequest: return .exchangeMTURequest(.init(v))
        case .exchangeMTUResponse: return .exchangeMTUResponse(.init(v))
        case .findInformationRequest: return .findInformationRequest(.init(v))
        case .findInformationResponse: return .findInformationResponse(.init(v))
        case .findByTypeValueRequest: return .findByTypeValueRequest(.init(v))
        case .findByTypeValueResponse: return .findByTypeValueResponse(.init(v))
        case .readByTypeRequest: return .readByTypeRequest(.init(v))
        case .readByTypeResponse: return .readByTypeResponse(.init(v))
        case .readRequest: return .readRequest(.init(v))
        case .readResponse: return .readResponse(.init(v))
        case .readBlobRequest: return .readBlobRequest(.init(v))
        case .readBlobResponse: return .readBlobResponse(.init(v))
        case .readMultipleRequest: return .readMultipleRequest(.init(v))
        case .readMultipleResponse: return .readMultipleResponse(.init(v))
        case .readByGroupTypeRequest: return .readByGroupTypeRequest(.init(v))
        case .readByGroupTypeResponse: return .readByGroupTypeResponse(.init(v))
        case .writeRequest: return .writeRequest(.init(v))
        case .writeResponse: return .writeResponse(.init(v))
        case .writeCommand: return .writeCommand(.init(v))
        case .signedWriteCommand: return .signedWriteCommand(.init(v))
        case .prepareWriteRequest: return .prepareWriteRequest(.init(v))
        case .prepareWriteResponse: return .prepareWriteResponse(.init(v))
        case .executeWriteRequest: return .executeWriteRequest(.init(v))
        case .executeWriteResponse: return .executeWriteResponse(.init(v))
        case .handleValueNotification: return .handleValueNotification(.init(v))
        case .handleValueIndication: return .handleValueIndication(.init(v))
        case .handleValueConfirmation: return .handleValueConfirmation(.init(v))
        case .readMultipleVariableRequest: return .readMultipleVariableRequest(.init(v))
        case .readMultipleVariableResponse: return .readMultipleVariableResponse(.init(v))
        case .multipleHandleValueNotification: return .multipleHandleValueNotification(.init(v))
        default: return .unknown(v.opcode, parameters: Array(bytes.dropFirst()))
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
