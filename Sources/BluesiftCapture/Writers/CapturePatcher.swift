import BluesiftWire

/// Copies a capture file record by record, replacing a record's payload with bytes of the same
/// length or leaving the record out, and keeping everything else byte for byte: the container,
/// its link type, headers, timestamps, flags, pcapng options and non-packet blocks. Used by
/// `redact`, whose changes never alter a length, so any format bluesift reads is written back
/// in that same format (sniffer link types and PacketLogger included).
///
/// Walks the container next to a `CaptureReader` of the same file: the n-th packet record here
/// is the reader's frame n, and the reader's `bytes` must be the end of that record's data
/// (checked; a format stored otherwise is refused, never patched at a guessed place).
public final class CapturePatcher {
    let file: MappedFile
    let out: AtomicFile
    let container: CaptureFormat.Container
    var offset = 0
    var endian: Endian = .little
    /// Packet records copied or dropped so far.
    public private(set) var records = 0
    public private(set) var dropped = 0

    public init(input: String, output: String) throws(CaptureError) {
        file = try MappedFile(path: input)
        switch CaptureFile.sniff(file.bytes) {
        case .btsnoop: container = .btsnoop
        case .pcap: container = .pcap
        case .pcapng: container = .pcapng
        case .packetlogger(let e): container = .packetlogger; endian = e
        default: throw CaptureError(.notACapture, path: input, "not a capture bluesift can rewrite in place (btsnoop, pcap, pcapng, PacketLogger: decompress or extract it first)")
        }
        out = try AtomicFile(path: output)
        switch container {
        case .btsnoop: try copy(16)
        case .pcap:
            endian = file.u32(0, .little) == 0xA1B2_C3D4 || file.u32(0, .little) == 0xA1B2_3C4D ? .little : .big
            try copy(24)
        case .pcapng, .packetlogger, .btsnooz: break
        }
    }

    func fail(_ m: String) -> CaptureError { CaptureError(.unsupported, path: file.path, m) }

    func copy(_ n: Int) throws(CaptureError) {
        let k = max(0, min(n, file.size - offset))
        out.out.writeBytes(file.slice(offset, k))
        offset += k
        file.release(upTo: offset) // copied pages go back to the kernel: memory stays flat
        try out.flushIfNeeded()
    }

    /// The next packet record: (start of the whole record, start and length of its packet data).
    func nextPacket() throws(CaptureError) -> (start: Int, data: Int, count: Int, end: Int)? {
        while offset < file.size {
            let left = file.size - offset
            switch container {
            case .btsnoop:
                guard left >= 24 else { return (offset, offset + left, 0, file.size) }
                let n = Int(file.u32(offset + 4, .big))
                return (offset, offset + 24, min(n, left - 24), min(file.size, offset + 24 + n))
            case .pcap:
                guard left >= 16 else { return (offset, offset + left, 0, file.size) }
                let n = Int(file.u32(offset + 8, endian))
                return (offset, offset + 16, min(n, left - 16), min(file.size, offset + 16 + n))
            case .packetlogger:
                guard left >= 4 else { return (offset, offset + left, 0, file.size) }
                let n = Int(file.u32(offset, endian))
                let end = min(file.size, offset + 4 + n)
                return (offset, offset + 13, max(0, end - offset - 13), end)
            case .pcapng:
                guard left >= 12 else { try copy(left); return nil }
                var type = file.u32(offset, endian)
                if type == 0x0A0D_0D0A { // Section Header Block: its byte-order magic sets the endianness
                    endian = file.u32(offset + 8, .little) == 0x1A2B_3C4D ? .little : .big
                    type = 0x0A0D_0D0A
                }
                let total = Int(file.u32(offset + 4, endian))
                guard total >= 12, total <= left else { try copy(left); return nil }
                switch type {
                case 6: // Enhanced Packet Block
                    let n = Int(file.u32(offset + 20, endian))
                    guard 28 + n <= total else { throw fail("pcapng block at offset \(offset) is inconsistent") }
                    return (offset, offset + 28, n, offset + total)
                case 3: // Simple Packet Block
                    return (offset, offset + 12, min(Int(file.u32(offset + 8, endian)), total - 16), offset + total)
                case 2: // Packet Block (obsolete)
                    let n = Int(file.u32(offset + 20, endian))
                    guard 28 + n <= total else { throw fail("pcapng block at offset \(offset) is inconsistent") }
                    return (offset, offset + 28, n, offset + total)
                default:
                    try copy(total) // section, interface, statistics, name resolution, …: kept
                }
            case .btsnooz: // never set: sniff() does not return it (bug reports are not rewritten)
                return nil
            }
        }
        return nil
    }

    /// Copies the next record with `replacement` (same length as `expected`, the reader's bytes)
    /// in place of its payload, or leaves it out when `drop`. A record the reader shows
    /// otherwise than stored (log text with its NULs trimmed or replaced, user-logging
    /// records) is found at the start of its data, or else given to `raw` whole, which returns
    /// same-length bytes to write instead or nil to keep it.
    /// `comment` gets each pcapng packet comment (opt_comment) of the record and returns
    /// same-length bytes to write instead, or nil to keep it.
    public func copyNext(
        expected: UnsafeRawBufferPointer, replacement: [UInt8]?, drop: Bool,
        raw: (UnsafeRawBufferPointer) -> [UInt8]? = { _ in nil },
        comment: (UnsafeRawBufferPointer) -> [UInt8]? = { _ in nil }
    ) throws(CaptureError) {
        guard let p = try nextPacket() else { throw fail("record \(records + 1): the file holds fewer packet records than the reader returned") }
        records += 1
        if drop { offset = p.end; dropped += 1; return }
        let fits = expected.count <= p.count
        let tail = p.data + p.count - expected.count
        let at: Int?
        if fits, file.slice(tail, expected.count).elementsEqual(expected) { at = tail } else if fits, file.slice(p.data, expected.count).elementsEqual(expected) { at = p.data } else { at = nil }
        guard let at else {
            guard let r = raw(file.slice(p.data, p.count)) else { try copyRest(p, comment); return }
            precondition(r.count == p.count, "a patch keeps the record's length")
            try copy(p.data - offset)
            out.out.writeBytes(r)
            offset += r.count
            try copyRest(p, comment)
            return
        }
        guard let r = replacement else { try copyRest(p, comment); return }
        precondition(r.count == expected.count, "a patch keeps the record's length")
        try copy(at - offset)
        out.out.writeBytes(r)
        offset += r.count
        try copyRest(p, comment)
    }

    /// Copies the rest of the record, its pcapng comments given to `comment` (patched in place
    /// when it returns bytes of the same length).
    func copyRest(_ p: (start: Int, data: Int, count: Int, end: Int), _ comment: (UnsafeRawBufferPointer) -> [UInt8]?) throws(CaptureError) {
        if container == .pcapng, [6, 2].contains(file.u32(p.start, endian)) {
            var o = p.data + (p.count + 3) & ~3
            let end = p.end - 4
            while o + 4 <= end {
                let code = endian == .little ? file.le16(o) : file.be16(o)
                let len = Int(endian == .little ? file.le16(o + 2) : file.be16(o + 2))
                if code == 0 || o + 4 + len > end { break }
                if code == 1, o + 4 >= offset, let r = comment(file.slice(o + 4, len)) {
                    precondition(r.count == len, "a patch keeps the comment's length")
                    try copy(o + 4 - offset)
                    out.out.writeBytes(r)
                    offset += len
                }
                o += 4 + (len + 3) & ~3
            }
        }
        try copy(p.end - offset)
    }

    /// Copies what follows the last record (trailing blocks) and renames the file into place.
    public func finish() throws(CaptureError) {
        try copy(file.size - offset)
        try out.commit()
    }
}
