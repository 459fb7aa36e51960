import BluesiftProtocols

extension ATTClient {
    /// Sends `pdu` as given, with no MTU or format check (the device fuzzer's over-long values
    /// and unusual requests). A request (by its opcode, Core 5.4 Vol 3 Part F §3.3) waits for the
    /// response and returns its bytes, an Error Response included; anything else returns nil.
    public func sendRaw(_ pdu: [UInt8]) throws(HostError) -> [UInt8]? {
        guard let raw = pdu.first else { return nil }
        let op = ATTOpcode(rawValue: raw)
        guard op.kind == .request else {
            try send(pdu)
            return nil
        }
        guard !requestPending else { throw .protocolError("ATT request already outstanding") }
        response = nil; requestPending = true
        defer { requestPending = false }
        try send(pdu)
        return try wait("ATT response to \(op.name)", timeout: timeout) { () throws(HostError) -> [UInt8]? in response }
    }
}
