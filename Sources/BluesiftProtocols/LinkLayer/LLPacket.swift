import BluesiftWire
import BluesiftCapture

// STUB — owned by the codecs helper; signatures are the contract (DESIGN.md).

/// An over-the-air LE link-layer packet (Core 5.4 Vol 6 Part B §2), DLT 251 layout.
public struct LLPacket: FieldDescribable {
    public var accessAddress: UInt32
    public var isAdvertising: Bool
    /// Data channel: LLID (1 = L2CAP continuation/empty, 2 = L2CAP start, 3 = LL control).
    public var llid: UInt8?
    /// Data channel payload (without MIC/CRC), for L2CAP reassembly when llid is 1 or 2.
    public var payload: UnsafeRawBufferPointer
    /// Payload is encrypted (sniffer said so, or the connection is encrypted): not decoded.
    public var encrypted: Bool
    /// Advertising PDUs become the record's `adv` layer.
    public var advertising: AdvertisingLayer?
    public var error: DecodeError?

    public init(bytes: UnsafeRawBufferPointer, sniffer: SnifferInfo?) {
        accessAddress = 0; isAdvertising = false; llid = nil; payload = bytes; encrypted = false
    }

    /// Fields of the `ll` JSON object: opcode (PDU type or control opcode), name, fields.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", 0); sink.string("name", "Unknown")
    }

    public var summary: String { "LL" }
}
