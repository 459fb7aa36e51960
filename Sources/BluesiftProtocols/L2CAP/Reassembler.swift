import BluesiftWire

/// Rebuilds one L2CAP PDU from ACL (or LL data) fragments (Core 5.4 Vol 3 Part A §7.2,
/// Vol 4 Part E §5.4.2). The buffer grows only as bytes arrive, never by a length field, is
/// bounded at 65535 + 4 bytes, and is reused PDU after PDU. A completed PDU is a view into the
/// buffer, valid until the next `start`/`continuation` call.
final class Reassembler {
    static let maxPDU = 65535 + 4

    enum Result {
        /// Stored; the PDU is not complete yet.
        case pending
        /// A whole PDU (header included). `truncated`: the capture cut a fragment, so `pdu`
        /// holds only the bytes before the cut.
        case complete(pdu: UnsafeRawBufferPointer, fragments: Int, truncated: Bool)
        case failed(DecodeError)
    }

    private var buffer: UnsafeMutableRawPointer?
    private var capacity = 0
    private var count = 0
    /// Bytes the fragments declared so far (more than `count` after a cut).
    private var received = 0
    private var expected: Int?
    private(set) var active = false
    private var fragments = 0
    private var truncated = false

    deinit { buffer?.deallocate() }

    func reset() { active = false; count = 0; received = 0; expected = nil; fragments = 0; truncated = false }

    /// Start fragment. `declared`: the fragment's length before any capture cut.
    /// `warning` reports an incomplete PDU that this start replaces, or bytes after the PDU.
    func start(_ data: UnsafeRawBufferPointer, declared: Int, warning: inout DecodeError?) -> Result {
        if active, !truncated {
            warning = DecodeError(
                layer: "l2cap", code: .reassembly, offset: 0,
                message: "new start fragment before the previous PDU completed (\(received) of \(expected.map(String.init) ?? "?") bytes)")
        }
        reset()
        if data.count >= 4 {
            let total = 4 + (Int(data[0]) | Int(data[1]) << 8)
            // Fast path: a whole PDU in one fragment is not copied.
            if declared >= total {
                if declared > total {
                    warning = DecodeError(
                        layer: "l2cap", code: .invalidLength, offset: total,
                        message: "\(declared - total) bytes after the L2CAP PDU")
                }
                let cut = data.count < total
                return .complete(
                    pdu: UnsafeRawBufferPointer(rebasing: data[0..<min(total, data.count)]),
                    fragments: 1, truncated: cut)
            }
            expected = total
        }
        active = true
        fragments = 1
        return append(data, declared: declared)
    }

    /// First K-frame of a segmented SDU (Vol 3 Part A §3.4.3): the SDU length is known.
    func startSDU(_ data: UnsafeRawBufferPointer, total: Int) -> Result {
        reset()
        expected = min(total, Self.maxPDU)
        active = true
        fragments = 1
        return append(data, declared: data.count)
    }

    func continuation(_ data: UnsafeRawBufferPointer, declared: Int) -> Result {
        guard active else {
            return .failed(
                DecodeError(
                    layer: "l2cap", code: .reassembly, offset: 0,
                    message: "continuation fragment without a start (\(declared) bytes dropped)"))
        }
        fragments += 1
        return append(data, declared: declared)
    }

    private func append(_ data: UnsafeRawBufferPointer, declared: Int) -> Result {
        let declared = max(declared, data.count)
        if received + declared > (expected ?? Self.maxPDU) {
            let e = DecodeError(
                layer: "l2cap", code: .reassembly, offset: 0,
                message: "fragments overflow the PDU length (\(received + declared) > \(expected ?? Self.maxPDU) bytes)")
            reset()
            return .failed(e)
        }
        if !truncated, !data.isEmpty {
            grow(to: count + data.count)
            (buffer! + count).copyMemory(from: data.baseAddress!, byteCount: data.count)
            count += data.count
        }
        if data.count < declared { truncated = true }
        received += declared
        if expected == nil, count >= 4, let b = buffer {
            let total = 4 + (Int(b.load(fromByteOffset: 0, as: UInt8.self)) | Int(b.load(fromByteOffset: 1, as: UInt8.self)) << 8)
            if received > total {
                reset()
                return .failed(
                    DecodeError(
                        layer: "l2cap", code: .reassembly, offset: 0,
                        message: "fragments overflow the PDU length (\(received) > \(total) bytes)"))
            }
            expected = total
        }
        guard let total = expected, received == total else { return .pending }
        let result = Result.complete(
            pdu: UnsafeRawBufferPointer(start: buffer, count: count),
            fragments: fragments, truncated: truncated)
        active = false; received = 0; expected = nil; fragments = 0; truncated = false
        count = 0 // the bytes stay valid until the next append
        return result
    }

    private func grow(to needed: Int) {
        guard needed > capacity else { return }
        let newCapacity = min(Self.maxPDU, max(needed, capacity * 2, 256))
        let b = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        if let old = buffer {
            b.copyMemory(from: old, byteCount: count)
            old.deallocate()
        }
        buffer = b
        capacity = newCapacity
    }
}
