/// btsnoop version 1 (RFC 1761 layout, big-endian): 16-byte file header ("btsnoop\0",
/// version, datalink), then records of original length, included length, flags, drops and
/// a 64-bit timestamp in microseconds since 0000-01-01.
public final class BTSnoopReader: CaptureReader {
    /// Microseconds from 0000-01-01 to 1970-01-01 (btsnoop's epoch offset).
    public static let epochOffsetMicroseconds: Int64 = 0x00dc_ddb3_0f2f_8000
    static let headerSize = 16
    @usableFromInline static let recordHeaderSize = 24

    public let format: CaptureFormat
    public private(set) var warnings: [String] = []
    public var bytesRead: Int { offset }
    public var fileSize: Int { file.size }

    @usableFromInline let file: MappedFile
    private let datalink: UInt32
    /// HCI UART H4 (1002), the common case: `next()`'s inlined path reads its whole records.
    @usableFromInline let isH4: Bool
    // Read and written once or twice per record by `next()` alone: the runtime exclusivity
    // checks on them cost ~75 instructions a record.
    @exclusivity(unchecked) @usableFromInline var offset = BTSnoopReader.headerSize
    @exclusivity(unchecked) @usableFromInline var frame = 0
    @exclusivity(unchecked) @usableFromInline var done = false
    private let monitor = MonitorRecordBuilder()

    init(file: MappedFile) throws(CaptureError) {
        self.file = file
        guard file.size >= Self.headerSize else {
            throw CaptureError(
                .notACapture, path: file.path,
                "not a capture: btsnoop header cut short (\(file.size) of 16 bytes)")
        }
        let version = file.u32(8, .big)
        datalink = file.u32(12, .big)
        guard version == 1 else {
            throw CaptureError(.unsupported, path: file.path, "btsnoop version \(version) is not supported (only version 1)")
        }
        let name: String
        switch datalink {
        case 1001: name = "HCI UART H1"
        case 1002: name = "HCI UART H4"
        case 2001: name = "Linux monitor"
        case 1003, 1004:
            throw CaptureError(
                .unsupported, path: file.path,
                "btsnoop datalink \(datalink) (\(datalink == 1003 ? "BCSP" : "H5 3-wire")) is not supported: only 1001, 1002 and 2001 are")
        default:
            throw CaptureError(.unsupported, path: file.path, "btsnoop datalink \(datalink) is not supported: only 1001, 1002 and 2001 are")
        }
        format = CaptureFormat(container: .btsnoop, datalink: datalink, byteOrder: .big, datalinkName: name)
        isH4 = datalink == 1002
    }

    /// A whole, non-empty H4 record in the bytes at hand is built here, inlined into the
    /// caller's loop (the record stays in registers: ~155 → ~60 instructions a record for
    /// `info`); anything else (a cut, a stream to read on, the end, other datalinks) goes
    /// to `nextRecord`, which gives the same record for the same bytes.
    @inlinable @inline(__always)
    public func next() -> CaptureRecord? {
        let o = offset
        let remaining = file.size &- o
        if isH4, !done, remaining >= Self.recordHeaderSize {
            let included = Int(file.u32(o &+ 4, .big))
            if included > 0, included <= remaining &- Self.recordHeaderSize {
                let original = Int(file.u32(o, .big))
                let flags = file.u32(o &+ 8, .big)
                let raw = Int64(bitPattern: file.be64(o &+ 16))
                file.release(upTo: o)
                let indicator = file.u8(o &+ Self.recordHeaderSize)
                let body = file.slice(o &+ Self.recordHeaderSize &+ 1, included &- 1)
                offset = o &+ Self.recordHeaderSize &+ included
                frame &+= 1
                // H4 packet indicators 1-5 are the kinds of the same numbers (H4.kind).
                let kind = indicator &- 1 < 5 ? PacketKind(rawValue: indicator) : .unknown
                return CaptureRecord(
                    frame: frame, timestamp: Timestamp(microseconds: raw &- Self.epochOffsetMicroseconds),
                    direction: flags & 1 == 1 ? .received : .sent, kind: kind, bytes: body,
                    originalLength: max(original &- 1, included &- 1), sourceType: UInt16(indicator))
            }
        }
        return nextRecord()
    }

    @usableFromInline func nextRecord() -> CaptureRecord? {
        guard !done else { return nil }
        // Offsets and lengths are bounded by the file size: wrapping arithmetic is exact.
        var remaining = file.size &- offset
        // A stream (compressed, growing) reads on here; a mapped file has all its bytes.
        if remaining < Self.recordHeaderSize { remaining = file.more(offset, Self.recordHeaderSize) }
        if remaining == 0 { done = true; return nil }
        if remaining < Self.recordHeaderSize { return stopCut(remaining, of: Self.recordHeaderSize, header: true) }
        let included = Int(file.u32(offset &+ 4, .big))
        var available = remaining &- Self.recordHeaderSize
        if included > available {
            available = file.more(offset, Self.recordHeaderSize &+ included) &- Self.recordHeaderSize
            if included > available { return stopCut(available, of: included, header: false) }
        }
        let original = Int(file.u32(offset, .big))
        let flags = file.u32(offset &+ 8, .big)
        let raw = Int64(bitPattern: file.be64(offset &+ 16))
        file.release(upTo: offset) // earlier records are no longer borrowed
        let data = file.slice(offset &+ Self.recordHeaderSize, included)
        offset &+= Self.recordHeaderSize &+ included
        frame &+= 1
        let ts = Timestamp(microseconds: raw &- Self.epochOffsetMicroseconds)
        let received: Direction = flags & 1 == 1 ? .received : .sent

        switch datalink {
        case 1002:
            guard included > 0 else {
                return CaptureRecord(
                    frame: frame, timestamp: ts, direction: received, kind: .unknown,
                    bytes: data, originalLength: original, sourceType: CaptureRecord.noType)
            }
            let indicator = data[0]
            let body = data.dropping(1)
            return CaptureRecord(
                frame: frame, timestamp: ts, direction: received, kind: H4.kind(indicator),
                bytes: body, originalLength: max(original - 1, body.count), sourceType: UInt16(indicator))
        case 1001:
            let kind: PacketKind = flags & 2 != 0 ? (received == .received ? .event : .command) : .acl
            return CaptureRecord(
                frame: frame, timestamp: ts, direction: received, kind: kind,
                bytes: data, originalLength: max(original, included), sourceType: UInt16(flags & 3))
        default: // 2001: adapter index in the high 16 bits, opcode in the low 16 (BlueZ btsnoop.c)
            return monitor.record(
                frame: frame, timestamp: ts, adapter: UInt16(truncatingIfNeeded: flags >> 16),
                opcode: UInt16(truncatingIfNeeded: flags), data: data, originalLength: original)
        }
    }

    /// Out of line: the messages would otherwise weigh on every record's path.
    @inline(never) private func stopCut(_ have: Int, of need: Int, header: Bool) -> CaptureRecord? {
        stop("file ends mid-record at offset \(offset): \(have) of \(need)" + (header ? " header bytes" : " bytes"))
    }

    private func stop(_ warning: String) -> CaptureRecord? {
        warnings.append(warning)
        done = true
        offset = file.size
        return nil
    }
}
