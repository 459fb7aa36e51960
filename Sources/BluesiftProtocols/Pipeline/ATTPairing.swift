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
    /// Sides (bit 0: side 0, bit 1: side 1) seen sending requests and commands: with one
    /// client, the other side is the server.
    private var clientSides: UInt8 = 0
    /// Set by `observe` for a PDU sent by side 2 (the capture does not say): the side that
    /// must have sent it, a server-only PDU (Vol 3 Part F §3.3) answering a request of a known
    /// side, or sent while only one side acts as client.
    var inferredSide: UInt8?

    /// Requests whose answer carries no handle of its own: Read (§3.4.4.3), Read Blob
    /// (§3.4.4.5), Write (§3.4.5.1); the handle is their first parameter.
    static func addressesHandle(_ op: ATTOpcode) -> Bool {
        op == .readRequest || op == .readBlobRequest || op == .writeRequest
    }

    /// The request opcode a response answers (ATTOpcode's table); Error Response answers the
    /// opcode it names. Nil for PDUs that answer nothing.
    static func answered(_ op: ATTOpcode, pdu: UnsafeRawBufferPointer) -> UInt8? {
        op == .errorResponse ? (pdu.count >= 2 ? pdu[1] : nil) : op.answers?.rawValue
    }

    /// Records a request, or pairs a response; returns the transaction for a response.
    mutating func observe(
        _ pdu: UnsafeRawBufferPointer, cid: UInt16, side: UInt8, frame: Int,
        timestamp: Timestamp
    ) -> ATTTransaction? {
        inferredSide = nil
        guard let raw = pdu.first else { return nil }
        let op = ATTOpcode(rawValue: raw)
        if side < 2, let by = op.sender { clientSides |= 1 << (by == .server ? 1 - side : side) }
        if side == 2, op.sender == .server, clientSides == 1 || clientSides == 2 { inferredSide = clientSides == 1 ? 1 : 0 }
        if op.expectsAnswer {
            // A new request replaces an unanswered one of the same kind on the bearer.
            let isIndication = op == .handleValueIndication
            if let i = pending.firstIndex(where: { $0.cid == cid && $0.side == side && ($0.opcode == ATTOpcode.handleValueIndication.rawValue) == isIndication }) {
                pending.remove(at: i)
            }
            if pending.count >= Self.capacity { pending.removeFirst() }
            if pending.capacity == 0 { pending.reserveCapacity(Self.capacity) }
            pending.append(
                Pending(
                    cid: cid, side: side, opcode: raw, frame: frame, timestamp: timestamp,
                    handle: Self.addressesHandle(op) && pdu.count >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : nil))
            return nil
        }
        guard let req = Self.answered(op, pdu: pdu) else { return nil }
        let from = L2CAPChannels.other(side)
        // A side the capture does not say (2) on either end pairs with any side.
        guard
            let i = pending.firstIndex(where: { $0.cid == cid && $0.side == from && $0.opcode == req })
                ?? pending.firstIndex(where: { $0.cid == cid && $0.opcode == req && (side == 2 || $0.side == 2) })
        else { return nil }
        let p = pending.remove(at: i)
        if side == 2, p.side < 2 { inferredSide = 1 - p.side }
        return ATTTransaction(
            requestFrame: p.frame, latencyMicroseconds: timestamp.microseconds &- p.timestamp.microseconds,
            requestHandle: p.handle)
    }
}
