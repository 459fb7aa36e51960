import CCompression

/// A capture split into what its format is made of, so mutations can follow the structure
/// (StructuredCaptureFuzz): the file header and a list of units (records, or pcapng blocks),
/// each serialised on its own. Parsing is strict: a unit is whole or the parse fails.
///
/// Layouts (all lengths checked against the bytes):
///   btsnoop      16-byte header ("btsnoop\0", version, datalink; big-endian), records: original
///                length, included length, flags, drops (u32 each), time (i64), data[included]
///   pcap         24-byte header (magic in either byte order, µs or ns), records: ts_sec, ts_frac,
///                caplen, origlen (u32 each), data[caplen]
///   pcapng       blocks: type, total length (u32), body, total length again; the Section Header
///                Block's byte-order magic sets the order of its section (pcapng spec §4)
///   PacketLogger records: length (u32, big- or little-endian) of what follows, time (8 bytes),
///                type (u8), data
///   btsnooz      (BTSnoozReader) header: version, last time (u64 LE); records v1: length u16,
///                delta u32, type u8, data; v2: included u16, original u16, delta u32, type, data;
///                written as an Android bug report text: base64 of header + zlib of the records
public struct CaptureImage: Sendable {
    public enum Format: String, Sendable, CaseIterable { case btsnoop, pcap, pcapng, packetLogger, btsnooz }

    public struct Unit: Sendable {
        public var bytes: [UInt8]
        /// Index of the unit in the image it was parsed from; nil for units a mutation made up.
        public var id: Int?
        /// pcapng: the section it belongs to; its byte order.
        public var section = 0
        public var little = false
        /// A record (btsnoop/pcap/PacketLogger/btsnooz record, pcapng packet block).
        public var isRecord = true
        /// pcapng block type.
        public var type: UInt32 = 0
    }

    public var format: Format
    public var header: [UInt8]
    public var units: [Unit]
    /// pcap: the header's byte order; PacketLogger: the length fields'.
    public var little = false

    /// The bytes a reader sees.
    public func serialized() -> [UInt8] {
        switch format {
        case .btsnooz:
            let body = units.flatMap(\.bytes)
            return Array(Self.bugReportText(header + Wrap.zlib(body)).utf8)
        default:
            return header + units.flatMap(\.bytes)
        }
    }

    public var recordCount: Int { units.filter(\.isRecord).count }

    // MARK: parsing

    public static func parse(_ b: [UInt8]) -> CaptureImage? {
        if b.count >= 16, b.prefix(8).elementsEqual(Array("btsnoop".utf8) + [0]) { return btsnoop(b) }
        if b.count >= 24, let little = pcapOrder(b) { return pcap(b, little: little) }
        if b.count >= 28, b.prefix(4).elementsEqual([0x0A, 0x0D, 0x0D, 0x0A]) { return pcapng(b) }
        return packetLogger(b, little: false) ?? packetLogger(b, little: true)
    }

    static func u32(_ b: [UInt8], _ o: Int, little: Bool) -> Int {
        little
            ? Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24
            : Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3])
    }

    static func put32(_ v: Int, little: Bool) -> [UInt8] {
        let x = UInt32(truncatingIfNeeded: v)
        let be = [UInt8(x >> 24), UInt8(x >> 16 & 0xFF), UInt8(x >> 8 & 0xFF), UInt8(x & 0xFF)]
        return little ? be.reversed() : be
    }

    /// Records after a `header`-byte file header, each a `recordHeader`-byte header whose
    /// 32-bit field at `lengthAt` is the length of the data that follows (btsnoop, pcap).
    static func records(_ b: [UInt8], header: Int, recordHeader: Int, lengthAt: Int, little: Bool) -> [Unit]? {
        var units: [Unit] = [], o = header
        while o < b.count {
            guard o + recordHeader <= b.count else { return nil }
            let n = u32(b, o + lengthAt, little: little)
            guard o + recordHeader + n <= b.count else { return nil }
            units.append(Unit(bytes: Array(b[o..<o + recordHeader + n]), id: units.count))
            o += recordHeader + n
        }
        return units
    }

    static func btsnoop(_ b: [UInt8]) -> CaptureImage? {
        guard let units = records(b, header: 16, recordHeader: 24, lengthAt: 4, little: false) else { return nil }
        return CaptureImage(format: .btsnoop, header: Array(b[0..<16]), units: units)
    }

    static func pcapOrder(_ b: [UInt8]) -> Bool? {
        switch Array(b[0..<4]) {
        case [0xD4, 0xC3, 0xB2, 0xA1], [0x4D, 0x3C, 0xB2, 0xA1]: return true
        case [0xA1, 0xB2, 0xC3, 0xD4], [0xA1, 0xB2, 0x3C, 0x4D]: return false
        default: return nil
        }
    }

    static func pcap(_ b: [UInt8], little: Bool) -> CaptureImage? {
        guard let units = records(b, header: 24, recordHeader: 16, lengthAt: 8, little: little) else { return nil }
        return CaptureImage(format: .pcap, header: Array(b[0..<24]), units: units, little: little)
    }

    static let packetBlocks: Set<UInt32> = [2, 3, 6]

    static func pcapng(_ b: [UInt8]) -> CaptureImage? {
        var units: [Unit] = [], o = 0, little = true, section = -1
        while o < b.count {
            guard o + 12 <= b.count else { return nil }
            if b[o..<o + 4].elementsEqual([0x0A, 0x0D, 0x0D, 0x0A]) {
                guard o + 12 <= b.count else { return nil }
                switch Array(b[o + 8..<o + 12]) {
                case [0x4D, 0x3C, 0x2B, 0x1A]: little = true
                case [0x1A, 0x2B, 0x3C, 0x4D]: little = false
                default: return nil
                }
                section += 1
            }
            guard section >= 0 else { return nil }
            let type = UInt32(u32(b, o, little: little)), n = u32(b, o + 4, little: little)
            guard n >= 12, n % 4 == 0, o + n <= b.count, u32(b, o + n - 4, little: little) == n else { return nil }
            units.append(
                Unit(
                    bytes: Array(b[o..<o + n]), id: units.count, section: section, little: little,
                    isRecord: packetBlocks.contains(type), type: type))
            o += n
        }
        return CaptureImage(format: .pcapng, header: [], units: units)
    }

    static func packetLogger(_ b: [UInt8], little: Bool) -> CaptureImage? {
        var units: [Unit] = [], o = 0
        while o < b.count {
            guard o + 4 <= b.count else { return nil }
            let n = u32(b, o, little: little)
            // time (8) + type (1) at least; AOSP/Apple never write records near 64 KiB.
            guard n >= 9, n <= 65_536, o + 4 + n <= b.count else { return nil }
            units.append(Unit(bytes: Array(b[o..<o + 4 + n]), id: units.count))
            o += 4 + n
        }
        guard !units.isEmpty else { return nil }
        return CaptureImage(format: .packetLogger, header: [], units: units, little: little)
    }

    // MARK: btsnooz, made from a btsnoop of H4 (datalink 1002)

    /// The btsnooz image of a btsnoop 1002 image: every HCI record, whole (v2 keeps the
    /// original length too), deltas from the btsnoop times.
    public static func btsnooz(from image: CaptureImage, version: UInt8) -> CaptureImage? {
        guard image.format == .btsnoop, u32(image.header, 12, little: false) == 1002 else { return nil }
        var units: [Unit] = [], last: Int64?
        for u in image.units {
            let b = u.bytes
            guard b.count > 24 else { continue }
            let flags = u32(b, 8, little: false)
            var t: Int64 = 0
            for i in 16..<24 { t = t << 8 | Int64(b[i]) }
            let us = t &- 0x00DC_DDB3_0F2F_8000
            let delta = max(0, min(Int64(UInt32.max), us - (last ?? us)))
            last = (last ?? us) + delta
            let received = flags & 1 != 0
            let type: UInt8
            switch b[24] {
            case 0x01: type = 0x20
            case 0x04: type = 0x10
            case 0x02: type = received ? 0x11 : 0x21
            case 0x03: type = received ? 0x12 : 0x22
            default: continue
            }
            let data = Array(b[25...])
            guard data.count < 0xFFFF else { continue }
            var rec = le(UInt64(data.count + 1), 2)
            if version == 2 { rec += le(UInt64(data.count + 1), 2) }
            rec += le(UInt64(delta), 4) + [type] + data
            units.append(Unit(bytes: rec, id: units.count))
        }
        return CaptureImage(format: .btsnooz, header: [version] + le(UInt64(bitPattern: last ?? 0), 8), units: units)
    }

    static func le(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// What `dumpsys bluetooth_manager` prints around the section (BugReport finds it).
    static func bugReportText(_ snooz: [UInt8]) -> String {
        let b64 = Base64.encode(snooz)
        var lines: [String] = [], i = b64.startIndex
        while i < b64.endIndex {
            let j = b64.index(i, offsetBy: 76, limitedBy: b64.endIndex) ?? b64.endIndex
            lines.append(String(b64[i..<j])); i = j
        }
        return "== dumpstate: 2026-07-19 11:01:49\nDUMP OF SERVICE bluetooth_manager:\n"
            + "--- BEGIN:BTSNOOP_LOG_SUMMARY (\(snooz.count) bytes in) ---\n" + lines.joined(separator: "\n")
            + "\n--- END:BTSNOOP_LOG_SUMMARY (\(b64.count) bytes out) ---\n"
    }
}

enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static func encode(_ b: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((b.count + 2) / 3 * 4)
        var i = 0
        while i < b.count {
            let n = min(3, b.count - i)
            let v = Int(b[i]) << 16 | (n > 1 ? Int(b[i + 1]) << 8 : 0) | (n > 2 ? Int(b[i + 2]) : 0)
            out.append(alphabet[v >> 18 & 63]); out.append(alphabet[v >> 12 & 63])
            out.append(n > 1 ? alphabet[v >> 6 & 63] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[v & 63] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The compressed wrappers the capture sources accept (Decompress.swift), written with the
/// same Debian libraries.
public enum Wrap {
    public static func zlib(_ b: [UInt8]) -> [UInt8] {
        var n = compressBound(uLong(b.count))
        var z = [UInt8](repeating: 0, count: Int(n))
        guard compress2(&z, &n, b, uLong(b.count), 6) == Z_OK else { return [] }
        return Array(z.prefix(Int(n)))
    }

    /// RFC 1952: header, the raw deflate of zlib's stream (without its 2-byte header and
    /// Adler-32), CRC-32, size mod 2^32.
    public static func gzip(_ b: [UInt8]) -> [UInt8] {
        let z = zlib(b)
        guard z.count >= 6 else { return [] }
        let crc = b.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        return [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3] + z[2..<z.count - 4]
            + CaptureImage.le(UInt64(crc), 4) + CaptureImage.le(UInt64(UInt32(truncatingIfNeeded: b.count)), 4)
    }

    public static func xz(_ b: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: b.count + b.count / 2 + 1024)
        var pos = 0
        let r = out.withUnsafeMutableBufferPointer { o in
            lzma_easy_buffer_encode(1, LZMA_CHECK_CRC32, nil, b, b.count, o.baseAddress, &pos, o.count)
        }
        return r == LZMA_OK ? Array(out.prefix(pos)) : []
    }

    public static func zstd(_ b: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: ZSTD_compressBound(b.count))
        let n = out.withUnsafeMutableBytes { o in b.withUnsafeBytes { ZSTD_compress(o.baseAddress, o.count, $0.baseAddress, $0.count, 3) } }
        return ZSTD_isError(n) != 0 ? [] : Array(out.prefix(n))
    }

    public static func bzip2(_ b: [UInt8]) -> [UInt8] {
        guard !b.isEmpty else { return [] }
        var src = b
        var out = [UInt8](repeating: 0, count: b.count + b.count / 100 + 1024)
        var n = UInt32(out.count)
        let r = out.withUnsafeMutableBufferPointer { o in
            src.withUnsafeMutableBufferPointer { s in
                o.baseAddress!.withMemoryRebound(to: CChar.self, capacity: o.count) { op in
                    s.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(s.count, 1)) { sp in
                        BZ2_bzBuffToBuffCompress(op, &n, sp, UInt32(s.count), 1, 0, 0)
                    }
                }
            }
        }
        return r == BZ_OK ? Array(out.prefix(Int(n))) : []
    }
}
