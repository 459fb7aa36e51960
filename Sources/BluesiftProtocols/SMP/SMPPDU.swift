import BluesiftWire

// STUB — owned by the codecs helper; signatures are the contract (DESIGN.md).

/// One SMP PDU (Core 5.4 Vol 3 Part H §3.5-3.6). Borrows its bytes.
public struct SMPPDU: FieldDescribable {
    public var bytes: UnsafeRawBufferPointer
    public var code: UInt8
    public var error: DecodeError?

    public init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.code = bytes.first ?? 0
    }

    public var name: String { "Unknown" }

    /// Fields of the `smp` JSON object: opcode, name, then decoded parameters.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(code)); sink.string("name", name)
    }

    public var summary: String { "SMP \(name)" }
}
