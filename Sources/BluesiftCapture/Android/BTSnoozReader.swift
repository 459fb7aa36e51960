import BluesiftWire

/// btsnooz, the compact snoop log Android puts in a bug report's `dumpsys bluetooth_manager`
/// (section BTSNOOP_LOG_SUMMARY), laid out as AOSP's system/bt/tools/scripts/btsnooz.py
/// reads it: base64 of a 9-byte header (version: int8 1 or 2, last timestamp: uint64 LE, in
/// btsnoop's microseconds since 1970) and a zlib stream of records, little-endian:
///   v1: length u16 (with the type byte), delta time u32, type u8, data[length - 1]
///   v2: included length u16, original length u16 (both with the type byte), delta u32,
///       type u8, data[included - 1]
/// Each delta is the time since the previous record; the last record is at the header's
/// timestamp, so the first is at last − Σ deltas + its own delta (btsnooz.py's two passes).
/// Types: 0x10 event, 0x11 ACL in, 0x12 SCO in, 0x20 command, 0x21 ACL out, 0x22 SCO out.
/// ACL payloads are truncated by the phone (see ``BTSnooz``); the original length says so.
public final class BTSnoozReader: CaptureReader {
    public let format = CaptureFormat(container: .btsnooz, datalink: 1002, byteOrder: .little, datalinkName: "btsnooz (HCI H4)")
    public private(set) var warnings: [String] = []
    public var bytesRead: Int { offset }
    public var fileSize: Int { data.count }

    let version: Int
    /// The inflated records, owned (records borrow from it).
    private let data: UnsafeRawBufferPointer
    private var offset = 0
    private var frame = 0
    private var timestamp: Int64
    private let headerSize: Int

    /// `snooz`: the base64-decoded section (header + zlib). Throws when the header is unusable.
    public init(snooz: [UInt8], path: String) throws(CaptureError) {
        guard snooz.count >= 9 else {
            throw CaptureError(.notACapture, path: path, "btsnooz section cut short (\(snooz.count) of 9 header bytes)")
        }
        version = Int(snooz[0])
        guard version == 1 || version == 2 else {
            throw CaptureError(.unsupported, path: path, "btsnooz version \(version) is not supported (only 1 and 2)")
        }
        var last: UInt64 = 0
        for i in (1...8).reversed() { last = last << 8 | UInt64(snooz[i]) }
        // AOSP keeps a few thousand records (a few MB at most); more is damage, not data.
        let (body, damage) = Decompressor.inflateZlib(snooz[9...], limit: 256 << 20)
        let owned = UnsafeMutableRawBufferPointer.allocate(byteCount: max(body.count, 1), alignment: 8)
        owned.copyBytes(from: body)
        data = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(owned)[0..<body.count])
        if let damage { warnings.append(damage) }
        headerSize = version == 1 ? 7 : 9
        // First pass: the first record's time is the last one's less every delta.
        var o = 0, total: Int64 = 0
        while o + headerSize <= body.count {
            let length = Int(body[o]) | Int(body[o + 1]) << 8
            let dOff = version == 1 ? 2 : 4
            total &+= Int64(UInt32(body[o + dOff]) | UInt32(body[o + dOff + 1]) << 8 | UInt32(body[o + dOff + 2]) << 16 | UInt32(body[o + dOff + 3]) << 24)
            if length < 1 { break }
            o += headerSize + length - 1
        }
        timestamp = Int64(bitPattern: last) &- total
    }

    deinit { UnsafeMutableRawPointer(mutating: data.baseAddress)?.deallocate() }

    static func le32(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt32 {
        UInt32(b[o]) | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 3]) << 24
    }

    public func next() -> CaptureRecord? {
        let n = data.count
        guard offset < n else { return nil }
        guard offset + headerSize <= n else { return stop("section ends mid-record at offset \(offset): \(n - offset) of \(headerSize) header bytes") }
        let included = Int(data[offset]) | Int(data[offset + 1]) << 8
        let original = version == 1 ? included : Int(data[offset + 2]) | Int(data[offset + 3]) << 8
        let delta = Self.le32(data, offset + (version == 1 ? 2 : 4))
        let type = data[offset + headerSize - 1]
        guard included >= 1 else { return stop("record at offset \(offset) has length 0 (no type byte)") }
        let start = offset + headerSize
        guard start + included - 1 <= n else {
            return stop("section ends mid-record at offset \(offset): \(n - start) of \(included - 1) bytes")
        }
        offset = start + included - 1
        timestamp &+= Int64(delta)
        frame += 1
        let (kind, dir, indicator) = Self.classify(type)
        let bytes = UnsafeRawBufferPointer(rebasing: data[start..<offset])
        return CaptureRecord(
            frame: frame, timestamp: Timestamp(microseconds: timestamp), direction: dir, kind: kind,
            bytes: bytes, originalLength: max(original - 1, bytes.count), sourceType: indicator)
    }

    /// The btsnooz type as an H4 kind, a direction and the H4 indicator btsnooz.py writes.
    static func classify(_ t: UInt8) -> (PacketKind, Direction?, UInt16) {
        switch t {
        case 0x10: (.event, .received, 4)
        case 0x11: (.acl, .received, 2)
        case 0x12: (.sco, .received, 3)
        case 0x20: (.command, .sent, 1)
        case 0x21: (.acl, .sent, 2)
        case 0x22: (.sco, .sent, 3)
        default: (.unknown, nil, UInt16(t))
        }
    }

    private func stop(_ warning: String) -> CaptureRecord? {
        warnings.append(warning)
        offset = data.count
        return nil
    }
}

/// What AOSP keeps of each packet in btsnooz (system/gd/hal/snoop_logger.cc,
/// get_btsnooz_packet_length_to_write): commands and events whole; ACL whole on the L2CAP
/// signalling channel (CID 1), else the first 14 bytes (ACL + L2CAP headers and 6 more);
/// SCO and ISO not at all. `packet` is the HCI packet without its H4 indicator.
public enum BTSnooz {
    public static func keptLength(kind: PacketKind, packet: UnsafeRawBufferPointer) -> Int? {
        switch kind {
        case .command, .event: return packet.count
        case .acl:
            guard packet.count > 8 else { return packet.count }
            let cid = UInt16(packet[6]) | UInt16(packet[7]) << 8
            return cid == 1 ? packet.count : min(14, packet.count)
        default: return nil
        }
    }

    /// The btsnooz type byte for an HCI record, or nil for what btsnooz does not log.
    public static func type(kind: PacketKind, direction: Direction?) -> UInt8? {
        let received = direction == .received
        switch kind {
        case .command: return 0x20
        case .event: return 0x10
        case .acl: return received ? 0x11 : 0x21
        default: return nil
        }
    }
}
