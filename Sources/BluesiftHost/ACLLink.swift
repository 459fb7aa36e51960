import BluesiftWire
import BluesiftProtocols

/// What a central and a peripheral share below ATT and SMP: bringing the controller up, and
/// L2CAP B-frames (Core 5.4 Vol 3 Part A §3.1) cut into and joined from ACL packets of the
/// controller's size (Vol 4 Part E §5.4.2).
extension ControllerInfo {
    /// Reset, version, public address, event masks, LE features and ACL buffers (LE's, else the
    /// BR/EDR ones it shares, §7.8.2). `randomAddress` is set with LE Set Random Address (§7.8.4)
    /// when given. `command` sends one command and returns its return parameters.
    static func bringUp(randomAddress: BDAddr?, _ command: ([UInt8]) throws(HostError) -> [UInt8]) throws(HostError) -> ControllerInfo {
        _ = try command(HCICommand.packet(HCIOpcode.reset))
        let version = try command(HCICommand.packet(HCIOpcode.readLocalVersion))
        let bdaddr = try command(HCICommand.packet(HCIOpcode.readBDAddr))
        _ = try command(HCICommand.setEventMask(HCICommand.eventMask))
        let features = try command(HCICommand.packet(HCIOpcode.leReadLocalFeatures))
        _ = try command(HCICommand.leSetEventMask(HCICommand.leEventMask))
        var (length, count) = (0, 0)
        let le = try command(HCICommand.packet(HCIOpcode.leReadBufferSize))
        if le.count >= 4 { length = Int(le[1]) | Int(le[2]) << 8; count = Int(le[3]) }
        if length == 0 || count == 0 {
            let b = try command(HCICommand.packet(HCIOpcode.readBufferSize))
            guard b.count >= 8 else { throw .protocolError("short Read Buffer Size answer") }
            length = Int(b[1]) | Int(b[2]) << 8; count = Int(b[4]) | Int(b[5]) << 8
        }
        guard length > 0, count > 0 else { throw .protocolError("controller reports no ACL buffers") }
        if let randomAddress { _ = try command(HCICommand.leSetRandomAddress(randomAddress)) }
        func u16(_ b: [UInt8], _ i: Int) -> UInt16 { b.count > i + 1 ? UInt16(b[i]) | UInt16(b[i + 1]) << 8 : 0 }
        return ControllerInfo(
            hciVersion: version.count > 1 ? version[1] : 0, manufacturer: u16(version, 5),
            publicAddress: bdaddr.count >= 7 ? bdaddr.withUnsafeBytes { BDAddr(littleEndian: UnsafeRawBufferPointer(rebasing: $0[1..<7])) } : BDAddr(0),
            randomAddress: randomAddress ?? BDAddr(0),
            leFeatures: features.count >= 9 ? features[1...8].reversed().reduce(0) { $0 << 8 | UInt64($1) } : 0,
            aclDataLength: length, aclPackets: count)
    }
}

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
