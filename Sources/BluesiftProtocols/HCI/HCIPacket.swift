import BluesiftWire
import BluesiftCapture

// STUB — owned by the HCI/pipeline helper; signatures are the contract (DESIGN.md).

/// The `hci` layer: a command, event, ACL/SCO/ISO header (Core 5.4 Vol 4 Part E §5.4).
public struct HCIPacket: FieldDescribable {
    public var kind: PacketKind
    /// Command opcode, event code, or the H4 indicator for data packets.
    public var opcode: Int
    public var name: String
    public var bytes: UnsafeRawBufferPointer
    public var error: DecodeError?

    public init(kind: PacketKind, opcode: Int, name: String, bytes: UnsafeRawBufferPointer) {
        self.kind = kind; self.opcode = opcode; self.name = name; self.bytes = bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", opcode); sink.string("name", name)
    }

    public var summary: String { name }
}
