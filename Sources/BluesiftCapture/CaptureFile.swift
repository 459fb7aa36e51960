import BluesiftWire

/// Entry points: open any supported capture, detected by content, never by extension.
///
/// Readers do not allocate per record (btsnoop and PacketLogger are memory-mapped, pcap
/// uses libpcap's buffer). Measured release build, one core: lightctl_btsnoop_hci.log
/// 45 M records/s, bafang .pklg 50 M/s, tesible_Lv4_passkey.pcapng (libpcap, nRF) 11.6 M/s.
public enum CaptureFile {
    /// Opens `path`, sniffs the magic and returns the matching streaming reader.
    /// Throws `.notFound`, `.isDirectory`, `.unreadable`, `.notACapture` or `.unsupported`.
    ///
    /// A bug report (zip, or text with a btsnooz section) opens as all its Bluetooth logs in
    /// time order; `report.zip:NAME` opens one of them (see ``BugReport``).
    public static func open(path: String) throws(CaptureError) -> any CaptureReader {
        let file: MappedFile
        do { file = try MappedFile(path: path) } catch {
            if error.code == .notFound, let (report, name) = bugReportMember(path) {
                guard let log = report.log(named: name) else {
                    throw CaptureError(.notFound, path: path, "no log named \(name) in the bug report; `bluesift info \(report.path)` lists them")
                }
                return try report.reader(for: log)
            }
            throw error
        }
        if let codec = Compression.detect(file.bytes) {
            let stream = Decompressor(codec, input: ChunkedInput(file: file))
            let inner = try reader(MappedFile(path: path, stream: stream), path: path, streamed: true)
            return StreamedReader(inner, stream: stream, compression: codec)
        }
        return try reader(file, path: path, streamed: false)
    }

    /// The reader for the content of `file` (mapped, or a window over a stream).
    static func reader(_ file: MappedFile, path: String, streamed: Bool) throws(CaptureError) -> any CaptureReader {
        let sniffed = sniff(file.bytes)
        if streamed, let d = (file.stream as? Decompressor)?.damage, file.size == 0 {
            throw CaptureError(.notACapture, path: path, "not a capture: \(d)")
        }
        switch sniffed {
        case .btsnoop:
            return try BTSnoopReader(file: file)
        case .packetlogger(let endian):
            return PacketLoggerReader(file: file, endian: endian)
        case .pcap where streamed:
            return try PcapStreamReader(file: file)
        case .pcapng where streamed:
            return try PcapngReader(file: file)
        case .pcap, .pcapng:
            let container: CaptureFormat.Container = sniffed == .pcap ? .pcap : .pcapng
            let reader: any CaptureReader
            do { reader = try PcapReader(file: file, container: container) } catch {
                if container != .pcapng { throw error }
                reader = try PcapngReader(file: file)
            }
            // A file none of whose interfaces this tool decodes is refused; a mixed file is
            // read, and its other records counted in a warning.
            let dlt = reader.format.datalink
            if !LinkType.isSupported(dlt) {
                let all = container == .pcapng ? PcapngReader.linkTypes(file) : [dlt]
                if container == .pcapng, all.isEmpty {
                    throw CaptureError(.notACapture, path: path, "not a capture: pcapng cut short before its first Interface Description Block (\(file.size) bytes)")
                }
                if !all.contains(where: LinkType.isSupported) {
                    let names = (all.isEmpty ? [dlt] : all).reduce(into: [UInt32]()) { if !$0.contains($1) { $0.append($1) } }
                        .map(LinkType.name).joined(separator: "; ")
                    throw CaptureError(.unsupported, path: path, "unsupported link type (\(names)): not a Bluetooth capture this tool decodes")
                }
            }
            return reader
        case .truncatedMagic(let what, let need):
            throw CaptureError(.notACapture, path: path, "not a capture: \(what) header cut short (\(file.size) of \(need) bytes)")
        case .empty:
            throw CaptureError(.notACapture, path: path, "not a capture: the file is empty")
        case .unknown where streamed && Compression.detect(file.bytes) != nil:
            throw CaptureError(.unsupported, path: path, "compressed twice: decompress it once first")
        case .unknown where !streamed && BugReport.isBugReport(file):
            return try open(bugReport: BugReport(path: path))
        case .unknown:
            let head = file.bytes.prefix(8).map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined(separator: " ")
            throw CaptureError(
                .notACapture, path: path,
                "not a capture: no btsnoop, pcap, pcapng or PacketLogger signature (starts with \(head))")
        }
    }

    /// All the logs of a bug report in one time-ordered stream.
    public static func open(bugReport report: BugReport) throws(CaptureError) -> any CaptureReader {
        var sources: [(name: String, reader: any CaptureReader)] = []
        for log in report.logs { sources.append((log.name, try report.reader(for: log))) }
        return sources.count == 1 ? sources[0].reader : MergedReader(sources)
    }

    /// Several files of one session (rotated logs) as one capture, in time order.
    public static func open(merging paths: [String]) throws(CaptureError) -> any CaptureReader {
        var sources: [(name: String, reader: any CaptureReader)] = []
        for p in paths { sources.append((p, try open(path: p))) }
        return sources.count == 1 ? sources[0].reader : MergedReader(sources)
    }

    /// The bug report when `path` is `REPORT:NAME` and REPORT is one.
    public static func bugReport(_ path: String) -> BugReport? {
        guard let file = try? MappedFile(path: path), sniff(file.bytes) == .unknown, Compression.detect(file.bytes) == nil,
            BugReport.isBugReport(file)
        else { return nil }
        return try? BugReport(path: path)
    }

    static func bugReportMember(_ path: String) -> (BugReport, String)? {
        var i = path.endIndex
        while let c = path[..<i].lastIndex(of: ":") {
            if let r = bugReport(String(path[..<c])) { return (r, String(path[path.index(after: c)...])) }
            i = c
        }
        return nil
    }

    enum Sniffed: Equatable {
        case btsnoop
        case packetlogger(Endian)
        case pcap, pcapng
        case truncatedMagic(String, Int)
        case empty
        case unknown
    }

    static let btsnoopMagic: [UInt8] = Array("btsnoop\0".utf8)

    /// Content sniffing (after any compression is undone); the extension is never consulted (the corpus has pcap files named
    /// .pcapng and btsnoop files named .cfa).
    static func sniff(_ b: UnsafeRawBufferPointer) -> Sniffed {
        if b.isEmpty { return .empty }
        if b.count >= 8, b.prefix(8).elementsEqual(btsnoopMagic) { return .btsnoop }
        if b.count < 8, btsnoopMagic.starts(with: b) { return .truncatedMagic("btsnoop", 16) }
        if b.count >= 4 {
            let m = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
            switch m {
            case 0xA1B2_C3D4, 0xD4C3_B2A1, 0xA1B2_3C4D, 0x4D3C_B2A1:
                return b.count >= 24 ? .pcap : .truncatedMagic("pcap", 24)
            case 0x0A0D_0D0A:
                guard b.count >= 28 else { return .truncatedMagic("pcapng", 28) }
                // The Section Header Block's total length (bytes 4-7, in the byte order its
                // magic at 8 gives): a file shorter than it is cut inside the header.
                let le = b[8] == 0x4D
                let n =
                    le
                    ? Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
                    : Int(b[7]) | Int(b[6]) << 8 | Int(b[5]) << 16 | Int(b[4]) << 24
                return b.count >= n || n > 1 << 20 ? .pcapng : .truncatedMagic("pcapng", n)
            default: break
            }
        } else if [[0xA1, 0xB2], [0xD4, 0xC3], [0x4D, 0x3C], [0x0A, 0x0D]].contains(where: { $0.starts(with: b.prefix(2)) && b.count >= 2 }) {
            return .truncatedMagic("pcap", 24)
        }
        if let e = PacketLoggerReader.detect(b) { return .packetlogger(e) }
        return .unknown
    }
}

/// Output formats for `convert`.
public enum CaptureOutputFormat: String, Sendable, CaseIterable {
    case btsnoop // datalink 1002 (H4)
    case btsnoopMonitor // datalink 2001 (Linux monitor)
    case pcap // DLT 201
    case pcapng // DLT 201
}

/// Writes records to a temporary file and renames it into place on `finish()`, so an
/// interrupted run never leaves a half-written file under the final name.
public protocol CaptureWriter: AnyObject {
    /// Records whose kind the format cannot hold are skipped and counted.
    func write(_ record: CaptureRecord) throws(CaptureError)
    func finish() throws(CaptureError)
    var skipped: Int { get }
    /// Records written.
    var written: Int { get }
    /// Records whose timestamp the format cannot hold (before 1970 for pcap/pcapng), written
    /// with the earliest it can.
    var clamped: Int { get }
}

extension CaptureFile {
    /// A writer for `format`. Given the `source` format, link types are kept where the
    /// target can hold them (see PcapWriter); without it only HCI records are written.
    public static func writer(path: String, format: CaptureOutputFormat, source: CaptureFormat? = nil) throws(CaptureError) -> any CaptureWriter {
        switch format {
        case .btsnoop: return try BTSnoopWriter(path: path, monitor: false, keepUnknownH4: source?.isH4 ?? false)
        case .btsnoopMonitor: return try BTSnoopWriter(path: path, monitor: true)
        case .pcap: return try PcapWriter(path: path, pcapng: false, source: source)
        case .pcapng: return try PcapWriter(path: path, pcapng: true, source: source)
        }
    }
}

/// A reader over decompressed bytes: progress counts compressed bytes, and damage in the
/// compressed data is a warning like a file cut short (the records before it are kept).
final class StreamedReader: CaptureReader {
    let inner: any CaptureReader
    let stream: any ByteStream
    let format: CaptureFormat

    init(_ inner: any CaptureReader, stream: any ByteStream, compression: Compression?) {
        self.inner = inner
        self.stream = stream
        var f = inner.format
        f.compression = compression
        format = f
    }

    func next() -> CaptureRecord? { inner.next() }
    var warnings: [String] { inner.warnings + (stream.damage.map { [$0] } ?? []) }
    var bytesRead: Int { stream.consumed }
    var fileSize: Int { stream.total }
}
