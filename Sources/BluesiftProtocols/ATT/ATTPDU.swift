import BluesiftWire

// STUB — owned by the codecs helper; signatures are the contract (DESIGN.md).

/// ATT opcode (Core 5.4 Vol 3 Part F §3.4.8). Open: unknown values keep decoding.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// "Write Request"; "Unknown" for values the spec does not define.
    public var name: String { "Unknown" }
}

/// One ATT PDU (Core 5.4 Vol 3 Part F §3.4). Borrows its bytes.
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
    /// Set when the PDU is shorter or longer than its opcode allows; fields decoded so far stay.
    public var error: DecodeError?

    public init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.opcode = ATTOpcode(rawValue: bytes.first ?? 0)
    }

    /// Fields of the `att` JSON object: opcode, name, then the PDU's own fields.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(opcode.rawValue)); sink.string("name", opcode.name)
    }

    /// One-line summary, e.g. "ATT Write Request handle=0x0019 value=a50603"
    public var summary: String { "ATT \(opcode.name)" }
}
