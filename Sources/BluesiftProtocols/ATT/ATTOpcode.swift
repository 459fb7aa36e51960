import BluesiftWire

/// ATT opcode (Core 5.4 Vol 3 Part F §3.3.1, §3.4.8). Open: unknown values keep decoding.
/// Bit 6 is the Command flag, bit 7 the Authentication Signature flag.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(rawValue: 0x20)
    public static let readMultipleVariableResponse = ATTOpcode(rawValue: 0x21)
    public static let multipleHandleValueNotification = ATTOpcode(rawValue: 0x23)
    public static let writeCommand = ATTOpcode(rawValue: 0x52)
    public static let signedWriteCommand = ATTOpcode(rawValue: 0xD2)

    /// Every fact about an opcode, in one table (Core 5.4 Vol 3 Part F §3.4.8 Table 3.37, the
    /// PDUs of §3.4.1–§3.4.7): name, what it is, who sends it, the opcode it answers (Error
    /// Response names its own), and its exact length where fixed (§3.4, to flag trailing bytes).
    /// Read through the properties below; nothing else lists opcodes.
    @inline(__always)
    var facts: (name: String, kind: ATTPDUKind, sender: ATTRole, answers: UInt8, fixedLength: Int)? {
        switch rawValue {
        case 0x01: ("Error Response", .response, .server, 0, 5)
        case 0x02: ("Exchange MTU Request", .request, .client, 0, 3)
        case 0x03: ("Exchange MTU Response", .response, .server, 0x02, 3)
        case 0x04: ("Find Information Request", .request, .client, 0, 5)
        case 0x05: ("Find Information Response", .response, .server, 0x04, 0)
        case 0x06: ("Find By Type Value Request", .request, .client, 0, 0)
        case 0x07: ("Find By Type Value Response", .response, .server, 0x06, 0)
        case 0x08: ("Read By Type Request", .request, .client, 0, 0)
        case 0x09: ("Read By Type Response", .response, .server, 0x08, 0)
        case 0x0A: ("Read Request", .request, .client, 0, 3)
        case 0x0B: ("Read Response", .response, .server, 0x0A, 0)
        case 0x0C: ("Read Blob Request", .request, .client, 0, 5)
        case 0x0D: ("Read Blob Response", .response, .server, 0x0C, 0)
        case 0x0E: ("Read Multiple Request", .request, .client, 0, 0)
        case 0x0F: ("Read Multiple Response", .response, .server, 0x0E, 0)
        case 0x10: ("Read By Group Type Request", .request, .client, 0, 0)
        case 0x11: ("Read By Group Type Response", .response, .server, 0x10, 0)
        case 0x12: ("Write Request", .request, .client, 0, 0)
        case 0x13: ("Write Response", .response, .server, 0x12, 1)
        case 0x16: ("Prepare Write Request", .request, .client, 0, 0)
        case 0x17: ("Prepare Write Response", .response, .server, 0x16, 0)
        case 0x18: ("Execute Write Request", .request, .client, 0, 2)
        case 0x19: ("Execute Write Response", .response, .server, 0x18, 1)
        case 0x1B: ("Handle Value Notification", .notification, .server, 0, 0)
        case 0x1D: ("Handle Value Indication", .indication, .server, 0, 0)
        case 0x1E: ("Handle Value Confirmation", .confirmation, .client, 0x1D, 1)
        case 0x20: ("Read Multiple Variable Request", .request, .client, 0, 0)
        case 0x21: ("Read Multiple Variable Response", .response, .server, 0x20, 0)
        case 0x23: ("Multiple Handle Value Notification", .notification, .server, 0, 0)
        case 0x52: ("Write Command", .command, .client, 0, 0)
        case 0xD2: ("Signed Write Command", .command, .client, 0, 0)
        default: nil
        }
    }

    /// The table without the names, packed one opcode a word, for the per-record path (the
    /// decoder asks every ATT PDU what it is): bit 31 known, bits 28-30 kind, bit 27 sent by
    /// the server, bits 8-15 the opcode answered, bits 0-7 the fixed length.
    private static let packed: [UInt32] = (0...255).map { raw -> UInt32 in
        guard let f = ATTOpcode(rawValue: UInt8(raw)).facts else { return 0 }
        let kind: UInt32 =
            switch f.kind {
            case .request: 0;
            case .response: 1;
            case .command: 2;
            case .notification: 3;
            case .indication: 4;
            case .confirmation: 5
            }
        return 1 << 31 | kind << 28 | (f.sender == .server ? 1 << 27 : 0) | UInt32(f.answers) << 8 | UInt32(f.fixedLength)
    }
    @inline(__always) private var word: UInt32 { Self.packed[Int(rawValue)] }

    /// "Write Request"; "Unknown" for values the spec does not define.
    public var name: String { facts?.name ?? "Unknown" }
    /// Request, response, command, notification, indication or confirmation; nil when unknown.
    public var kind: ATTPDUKind? {
        let w = word
        guard w >> 31 != 0 else { return nil }
        switch w >> 28 & 7 {
        case 0: return .request
        case 1: return .response
        case 2: return .command
        case 3: return .notification
        case 4: return .indication
        default: return .confirmation
        }
    }
    /// Who sends it: the client (requests, commands, confirmations) or the server.
    public var sender: ATTRole? {
        let w = word
        return w >> 31 == 0 ? nil : w >> 27 & 1 == 1 ? .server : .client
    }
    /// The request (or indication) this PDU answers; nil for Error Response, which names the
    /// request it answers in its parameters, and for PDUs that answer nothing.
    public var answers: ATTOpcode? {
        let a = UInt8(truncatingIfNeeded: word >> 8)
        return a == 0 ? nil : ATTOpcode(rawValue: a)
    }
    /// Exact PDU length (opcode included) where the spec fixes it.
    public var fixedLength: Int? {
        let n = Int(word & 0xFF)
        return n == 0 ? nil : n
    }
    /// Requests and indications: one answer is due (§3.3.2, one outstanding per bearer).
    public var expectsAnswer: Bool {
        let w = word
        return w >> 31 != 0 && (w >> 28 & 7 == 0 || w >> 28 & 7 == 4)
    }
    /// Read and Read Blob Requests and Responses.
    public var isRead: Bool { self == .readRequest || self == .readBlobRequest }
    public var isReadResponse: Bool { self == .readResponse || self == .readBlobResponse }
    /// Discovery requests (§4.4–§4.7): an Attribute Not Found answer ends the discovery.
    public var isDiscovery: Bool {
        self == .findInformationRequest || self == .findByTypeValueRequest || self == .readByTypeRequest || self == .readByGroupTypeRequest
    }

    /// Command flag (§3.3.1): no response expected.
    public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Authentication Signature flag (§3.3.1): 12-byte signature at the end.
    public var isSigned: Bool { rawValue & 0x80 != 0 }

    /// The response opcode a request (or indication) expects, Error Response aside; nil otherwise.
    public var responseOpcode: ATTOpcode? {
        guard expectsAnswer else { return nil }
        return self == .handleValueIndication ? .handleValueConfirmation : ATTOpcode(rawValue: rawValue &+ 1)
    }

    /// A client writing a value: Write Request and Command, Signed Write, Prepare Write Request.
    public var isWrite: Bool { self == .writeRequest || self == .writeCommand || self == .signedWriteCommand || self == .prepareWriteRequest }

    /// Where the one attribute value of a PDU of this opcode lies, in a PDU of `length` bytes
    /// (opcode included): §3.4.4.4/.6 Read and Read Blob Responses, §3.4.5.1/.3/.4 Write
    /// Request, Command and Signed Write (before its 12-byte signature), §3.4.6.1/.2 Prepare
    /// Write Request/Response (after handle and offset), §3.4.7.1/.2 notification and
    /// indication. Nil for PDUs that carry no single value; empty when the PDU is short.
    public func valueRange(length: Int) -> Range<Int>? {
        let start: Int, end: Int
        switch self {
        case .readResponse, .readBlobResponse: start = 1; end = length
        case .writeRequest, .writeCommand, .handleValueNotification, .handleValueIndication: start = 3; end = length
        case .signedWriteCommand: start = 3; end = length - 12
        case .prepareWriteRequest, .prepareWriteResponse: start = 5; end = length
        default: return nil
        }
        return start <= end ? start..<end : start..<start
    }

    public var description: String { name }
}

/// What an ATT PDU is (Core 5.4 Vol 3 Part F §3.3, §3.4.8 Table 3.37).
public enum ATTPDUKind: Sendable { case request, response, command, notification, indication, confirmation }

/// The two ATT roles (§3.1): a client sends requests, commands and confirmations.
public enum ATTRole: Sendable { case client, server }

/// ATT Error Code (Core 5.4 Vol 3 Part F §3.4.1.1 Table 3.4; CSS Part B §1.2 for 0xE0-0xFF). Open.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)
    public static let writeRequestRejected = ATTErrorCode(rawValue: 0xFC)
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)

    public var name: String {
        switch rawValue {
        case 0x01: "Invalid Handle"
        case 0x02: "Read Not Permitted"
        case 0x03: "Write Not Permitted"
        case 0x04: "Invalid PDU"
        case 0x05: "Insufficient Authentication"
        case 0x06: "Request Not Supported"
        case 0x07: "Invalid Offset"
        case 0x08: "Insufficient Authorization"
        case 0x09: "Prepare Queue Full"
        case 0x0A: "Attribute Not Found"
        case 0x0B: "Attribute Not Long"
        case 0x0C: "Encryption Key Size Too Short"
        case 0x0D: "Invalid Attribute Value Length"
        case 0x0E: "Unlikely Error"
        case 0x0F: "Insufficient Encryption"
        case 0x10: "Unsupported Group Type"
        case 0x11: "Insufficient Resources"
        case 0x12: "Database Out Of Sync"
        case 0x13: "Value Not Allowed"
        case 0x80...0x9F: "Application Error"
        case 0xFC: "Write Request Rejected"
        case 0xFD: "Client Characteristic Configuration Descriptor Improperly Configured"
        case 0xFE: "Procedure Already in Progress"
        case 0xFF: "Out of Range"
        default: "Unknown"
        }
    }

    public var description: String { name }

    /// The errors a server answers while the link's security is below what the attribute
    /// needs, which pairing or a longer key can cure (Core 6.0 Vol 3 Part F §3.4.1.1 Table 3.4;
    /// Part C §10.3.2): Insufficient Authentication, Encryption Key Size Too Short,
    /// Insufficient Encryption. Authorization (0x08) is the server's application's, not the
    /// link's. Replay pairs on these (`--pair auto`); emulation answers them until encrypted.
    public static let securityErrors: Set<ATTErrorCode> = [.insufficientAuthentication, .encryptionKeySizeTooShort, .insufficientEncryption]

    public var isSecurityError: Bool { Self.securityErrors.contains(self) }
}
