import BluesiftWire

// STUB — owned by the HCI/pipeline helper; signatures are the contract (DESIGN.md).

/// The `l2cap` layer of a record that completes an L2CAP PDU (Core 5.4 Vol 3 Part A §3).
public struct L2CAPLayer: FieldDescribable {
    public var cid: UInt16
    public var length: Int
    /// PSM of a dynamic channel, when its set-up was seen.
    public var psm: UInt16?
    /// Reassembled payload (borrowed until the next decode call).
    public var payload: UnsafeRawBufferPointer
    /// Number of ACL/LL fragments this PDU was reassembled from.
    public var fragments: Int
    public var error: DecodeError?

    public init(cid: UInt16, length: Int, payload: UnsafeRawBufferPointer, fragments: Int = 1) {
        self.cid = cid; self.length = length; self.payload = payload; self.fragments = fragments
    }

    /// opcode = signalling command code on channels 0x0001/0x0005, the CID otherwise; name.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(cid)); sink.string("name", "L2CAP")
    }

    public var summary: String { "L2CAP cid=\(cid)" }
}
