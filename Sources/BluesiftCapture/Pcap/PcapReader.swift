import CPcap
#if canImport(Glibc)
    import Glibc
#endif

/// pcap and pcapng through libpcap (`pcap_next_ex` reuses libpcap's own buffer, so records
/// never allocate). Timestamps are read at nanosecond precision whatever the file holds.
public final class PcapReader: CaptureReader {
    public let format: CaptureFormat
    public var warnings: [String] { fallback?.warnings ?? ownWarnings }
    private var ownWarnings: [String] = []
    /// Native pcapng reader taking over where libpcap gave up (see PcapngReader).
    private var fallback: PcapngReader?
    private let file: MappedFile
    public var bytesRead: Int {
        if let fallback { return fallback.bytesRead }
        if done { return fileSize }
        return format.container == .pcap ? consumed : filePosition
    }
    /// Classic pcap: 24-byte header plus 16 + caplen per record (no syscall per record).
    private var consumed = 24
    private var filePosition: Int {
        guard let p = handle, let f = pcap_file(p) else { return fileSize }
        return max(0, ftell(f))
    }
    public let fileSize: Int

    private var handle: OpaquePointer?
    private let decoder: LinkDecoder
    private var frame = 0
    /// pcapng: the packet options (comments) libpcap does not give, read off the mapped file.
    private var options: PcapngReader.OptionsWalker?
    private var done = false

    /// Opens with libpcap; throws `.unsupported` with libpcap's message when it refuses the file.
    init(file: MappedFile, container: CaptureFormat.Container) throws(CaptureError) {
        let path = file.path
        self.file = file
        var err = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let p = pcap_open_offline_with_tstamp_precision(path, UInt32(PCAP_TSTAMP_PRECISION_NANO), &err) else {
            let msg = String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CaptureError(.unsupported, path: path, "libpcap cannot read this \(container.rawValue) file: \(msg)")
        }
        handle = p
        fileSize = file.size
        let dlt = UInt32(bitPattern: pcap_datalink(p))
        decoder = LinkDecoder(linktype: dlt)
        let swapped = pcap_is_swapped(p) != 0
        let little = swapped ? !Self.hostIsLittle : Self.hostIsLittle
        format = CaptureFormat(
            container: container, datalink: dlt, byteOrder: little ? .little : .big,
            datalinkName: LinkType.name(dlt))
        if container == .pcapng { options = PcapngReader.OptionsWalker() }
    }

    private static var hostIsLittle: Bool { 1.littleEndian == 1 }

    deinit { if let handle { pcap_close(handle) } }

    public func next() -> CaptureRecord? {
        if let fallback { return fallback.next() }
        guard !done, let p = handle else { return nil }
        var hdr: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        let rc = pcap_next_ex(p, &hdr, &data)
        switch rc {
        case 1:
            guard let h = hdr?.pointee else { return nil }
            frame += 1
            consumed += 16 + Int(h.caplen)
            // Opened with nanosecond precision; a damaged sub-second field may exceed 10^9 or be negative.
            let ts = Timestamp(seconds: Int64(h.ts.tv_sec), overflowingNanoseconds: Int64(h.ts.tv_usec))
            let bytes = UnsafeRawBufferPointer(start: data, count: Int(h.caplen))
            var r = decoder.record(frame: frame, timestamp: ts, data: bytes, originalLength: Int(h.len))
            if options != nil {
                r.options = options!.next(file)
                file.release(upTo: options!.offset)
            }
            return r
        case PCAP_ERROR_BREAK:
            done = true
            return nil
        default:
            let msg = String(cString: pcap_geterr(p))
            if format.container == .pcapng, let native = try? PcapngReader(file: file) {
                // libpcap stops at an interface of another link type; the native reader
                // re-reads the blocks, skips what was delivered, and goes on.
                native.skipPackets(frame)
                fallback = native
                pcap_close(p)
                handle = nil
                return native.next()
            }
            let at = format.container == .pcap ? consumed : filePosition
            ownWarnings.append("file ends mid-record at offset \(at): \(msg)")
            done = true
            return nil
        }
    }
}
