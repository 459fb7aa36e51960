/// Apple PacketLogger (.pklg): records of length(4) seconds(4) microseconds(4) type(1)
/// payload, where length counts everything after itself. No file header; BTstack and iOS
/// write big-endian, current macOS PacketLogger little-endian (Wireshark wiretap/packetlogger.c).
public final class PacketLoggerReader: CaptureReader {
    public let format: CaptureFormat
    public private(set) var warnings: [String] = []
    public var bytesRead: Int { offset }
    public var fileSize: Int { file.size }

    private let file: MappedFile
    private let endian: Endian
    private var offset = 0
    private var frame = 0
    private var done = false
    private let scratch = Scratch()

    init(file: MappedFile, endian: Endian) {
        self.file = file
        self.endian = endian
        format = CaptureFormat(
            container: .packetlogger, datalink: 0, byteOrder: endian == .big ? .big : .little,
            datalinkName: "Apple PacketLogger")
    }

    /// Byte order whose first records (up to five) look like PacketLogger records, or nil:
    /// lengths 8…65535 chaining through the file, microseconds below a million, and a known
    /// type on the first record (later ones may be types nobody documented).
    static func detect(_ b: UnsafeRawBufferPointer) -> Endian? {
        for e in [Endian.big, .little] where plausible(b, e) { return e }
        return nil
    }

    private static func plausible(_ b: UnsafeRawBufferPointer, _ e: Endian) -> Bool {
        var o = 0, checked = 0
        while checked < 5 && o + 12 <= b.count {
            let len = Int(read32(b, o, e)), usec = read32(b, o + 8, e)
            guard len >= 8, len < 65536, usec < 1_000_000 else { return false }
            if len > 8 {
                guard o + 12 < b.count else { return checked > 0 }
                guard checked > 0 || knownType(b[o + 12]) else { return false }
            }
            o += 4 + len
            checked += 1
        }
        return checked > 0
    }

    private static func read32(_ b: UnsafeRawBufferPointer, _ o: Int, _ e: Endian) -> UInt32 {
        let v = b.loadUnaligned(fromByteOffset: o, as: UInt32.self)
        return e == .big ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
    }

    static func knownType(_ t: UInt8) -> Bool {
        switch t {
        case 0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0A, 0x0B, 0x12, 0x13, 0xF7...0xFE: true
        default: false
        }
    }

    /// Kind and direction of a PacketLogger type. 0x12/0x13 are ISO (BTstack's hci_dump).
    static func classify(_ t: UInt8) -> (PacketKind, Direction?) {
        switch t {
        case 0x00: (.command, .sent)
        case 0x01: (.event, .received)
        case 0x02: (.acl, .sent)
        case 0x03: (.acl, .received)
        case 0x08: (.sco, .sent)
        case 0x09: (.sco, .received)
        case 0x12: (.iso, .sent)
        case 0x13: (.iso, .received)
        case 0xF7...0xFC: (.note, nil) // syslog, kernel, kernel debug, error, power, note
        case 0xFE: (.index, nil) // new controller
        default: (.unknown, nil)
        }
    }

    /// The PacketLogger type for an HCI kind and direction, for writers.
    static func type(for kind: PacketKind, _ d: Direction?) -> UInt8? {
        let rx = d == .received
        switch kind {
        case .command: return 0x00
        case .event: return 0x01
        case .acl: return rx ? 0x03 : 0x02
        case .sco: return rx ? 0x09 : 0x08
        case .iso: return rx ? 0x13 : 0x12
        default: return nil
        }
    }

    public func next() -> CaptureRecord? {
        guard !done else { return nil }
        var remaining = file.size - offset
        if remaining < 12 { remaining = file.more(offset, 12) } // streams read on; see MappedFile
        if remaining == 0 { done = true; return nil }
        if remaining < 12 { return stop("file ends mid-record at offset \(offset): \(remaining) of 12 header bytes") }
        let len = Int(file.u32(offset, endian))
        let secs = file.u32(offset + 4, endian), usecs = file.u32(offset + 8, endian)
        if len < 8 { return stop("record at offset \(offset) has length \(len), less than its 8-byte timestamp") }
        if len > remaining - 4 { remaining = file.more(offset, 4 + len) }
        if len > remaining - 4 { return stop("file ends mid-record at offset \(offset): \(remaining - 4) of \(len) bytes") }
        file.release(upTo: offset) // earlier records are no longer borrowed
        let body = file.slice(offset + 12, len - 8)
        offset += 4 + len
        frame += 1
        // usecs beyond a second are kept as-is (added), never trapped on.
        let ts = Timestamp(microseconds: Int64(secs) * 1_000_000 + Int64(usecs))
        guard body.count > 0 else {
            return CaptureRecord(frame: frame, timestamp: ts, direction: nil, kind: .unknown, bytes: body, sourceType: CaptureRecord.noType)
        }
        let type = body[0]
        let (kind, dir) = Self.classify(type)
        var bytes = body.dropping(1)
        if kind == .note { bytes = noteText(bytes) }
        return CaptureRecord(frame: frame, timestamp: ts, direction: dir, kind: kind, bytes: bytes, sourceType: UInt16(type))
    }

    /// Note text without trailing NULs; inner NULs (syslog field separators) become spaces.
    private func noteText(_ b: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var n = b.count
        while n > 0 && b[n - 1] == 0 { n -= 1 }
        let t = UnsafeRawBufferPointer(rebasing: b[0..<n])
        guard t.contains(0) else { return t }
        scratch.reset()
        scratch.append(t)
        let m = scratch.buffer
        for i in 0..<scratch.count where m[i] == 0 { m[i] = 0x20 }
        return scratch.bytes
    }

    private func stop(_ warning: String) -> CaptureRecord? {
        warnings.append(warning)
        done = true
        offset = file.size
        return nil
    }
}
