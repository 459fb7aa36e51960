import BluesiftWire

/// L2CAP B-frames (Core 5.4 Vol 3 Part A §3.1) cut into and joined from ACL packets of the
/// controller's size (Vol 4 Part E §5.4.2).
struct ACLLink {
    private var reassembly: [UInt8] = []

    /// The ACL packets of one L2CAP frame on `handle`, each at most `maxLength` data bytes:
    /// PB 0b00 (first, non-flushable) then 0b01 (continuation).
    static func packets(handle: UInt16, cid: UInt16, payload: [UInt8], maxLength: Int) -> [[UInt8]] {
        var frame = ByteWriter(capacity: payload.count + 4)
        frame.writeUInt16(UInt16(payload.count)); frame.writeUInt16(cid); frame.writeBytes(payload)
        var out: [[UInt8]] = []
        var offset = 0
        while offset < frame.count {
            let n = min(maxLength, frame.count - offset)
            var acl = ByteWriter(capacity: n + 4)
            acl.writeUInt16(handle | (offset == 0 ? 0x0000 : 0x1000))
            acl.writeUInt16(UInt16(n))
            acl.writeBytes(frame.bytes[offset..<(offset + n)])
            out.append(acl.bytes)
            offset += n
        }
        return out
    }

    /// Feeds one ACL packet; packets of other handles are ignored, a continuation without a
    /// start is dropped. A completed L2CAP frame comes back as its channel and payload.
    mutating func receive(_ bytes: [UInt8], handle: UInt16) -> (cid: UInt16, payload: [UInt8])? {
        guard bytes.count >= 4 else { return nil }
        let hf = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        guard hf & 0x0FFF == handle else { return nil }
        let length = Int(bytes[2]) | Int(bytes[3]) << 8
        let data = bytes[4..<min(bytes.count, 4 + length)]
        if (hf >> 12) & 0x3 == 0x1 {
            guard !reassembly.isEmpty else { return nil }
            reassembly.append(contentsOf: data)
        } else {
            reassembly = Array(data)
        }
        guard reassembly.count >= 4 else { return nil }
        let l2len = Int(reassembly[0]) | Int(reassembly[1]) << 8
        guard reassembly.count >= l2len + 4 else { return nil }
        let cid = UInt16(reassembly[2]) | UInt16(reassembly[3]) << 8
        let payload = Array(reassembly[4..<(4 + l2len)])
        reassembly.removeAll(keepingCapacity: true)
        return (cid, payload)
    }

    mutating func reset() { reassembly.removeAll() }
}
