import BluesiftWire
import BluesiftCapture

/// Pending ATT requests and indications of one connection, per bearer (CID) and direction
/// (Core 5.4 Vol 3 Part F §3.3.2: one outstanding request and one indication per bearer).
/// A small array, searched linearly and capped.
struct ATTPairing {
    struct Pending {
        var cid: UInt16; var side: UInt8; var opcode: UInt8; var frame: Int; var timestamp: Timestamp
        /// The attribute a Read, Read Blob or Write Request addresses, so that its answer
        /// can be named; nil for the others.
        var handle: UInt16?
    }
    static let capacity = 8
    private var pending: [Pending] = []

    /// Opcodes that expect an answer: requests, and Handle Value Indication.
    static func expectsAnswer(_ op: UInt8) -> Bool {
        switch op {
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x1D, 0x20: true
        default: false
        }
    }

    /// Requests whose answer carries no handle of its own: Read (§3.4.4.3), Read Blob
    /// (§3.4.4.5), Write (§3.4.5.1); the handle is their first parameter.
    static func addressesHandle(_ op: UInt8) -> Bool {
        op == 0x0A || op == 0x0C || op == 0x12
    }

    /// The request opcode a response answers; nil for PDUs that answer nothing.
    /// Error Response (0x01) answers the opcode it names.
    static func answered(_ op: UInt8, pdu: UnsafeRawBufferPointer) -> UInt8? {
        switch op {
        case 0x01: pdu.count >= 2 ? pdu[1] : nil
        case 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: op - 1
        case 0x1E: 0x1D
        default: nil
        }
    }

    /// Records a request, or pairs a response; returns the transaction for a response.
    mutating func observe(_ pdu: UnsafeRawBufferPointer, cid: UInt16, side: UInt8, frame: Int,
                          timestamp: Timestamp) -> ATTTransaction? {
        guard let op = pdu.first else { return nil }
        if Self.expectsAnswer(op) {
            // A new request replaces an unanswered one of the same kind on the bearer.
            let isIndication = op == 0x1D
            if let i = pending.firstIndex(where: { $0.cid == cid && $0.side == side && ($0.opcode == 0x1D) == isIndication }) {
                pending.remove(at: i)
            }
            if pending.count >= Self.capacity { pending.removeFirst() }
            if pending.capacity == 0 { pending.reserveCapacity(Self.capacity) }
            pending.append(Pending(cid: cid, side: side, opcode: op, frame: frame, timestamp: timestamp,
                                   handle: Self.addressesHandle(op) && pdu.count >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : nil))
            return nil
        }
        guard let req = Self.answered(op, pdu: pdu) else { return nil }
        let from = L2CAPChannels.other(side)
        guard let i = pending.firstIndex(where: { $0.cid == cid && $0.side == from && $0.opcode == req }) else { return nil }
        let p = pending.remove(at: i)
        return ATTTransaction(requestFrame: p.frame, latencyMicroseconds: timestamp.microseconds &- p.timestamp.microseconds,
                              requestHandle: p.handle)
    }
}
