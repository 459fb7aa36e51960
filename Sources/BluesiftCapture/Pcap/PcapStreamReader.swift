/// Classic pcap read from a stream (a compressed or growing file), where libpcap, which
/// wants a FILE, cannot follow the window. Same layout and the same link decoding as
/// `PcapReader`, and timestamps scaled to nanoseconds the way libpcap's are.
final class PcapStreamReader: CaptureReader {
    let format: CaptureFormat
    private(set) var warnings: [String] = []
    var bytesRead: Int { offset }
    var fileSize: Int { file.size }

    private let file: MappedFile
    private let endian: Endian
    private let nanoFile: Bool
    private let snaplen: Int
    private let decoder: LinkDecoder
    private var offset = 24
    private var frame = 0
    private var done = false
    /// libpcap refuses records longer than this (MAXIMUM_SNAPLEN).
    static let maximumSnaplen = 262_144

    init(file: MappedFile) throws(CaptureError) {
        self.file = file
        guard file.size >= 24 else {
            throw CaptureError(.notACapture, path: file.path, "not a capture: pcap header cut short (\(file.size) of 24 bytes)")
        }
        let m = file.u32(0, .big)
        endian = (m == 0xA1B2_C3D4 || m == 0xA1B2_3C4D) ? .big : .little
        nanoFile = m == 0xA1B2_3C4D || m == 0x4D3C_B2A1
        let s = Int(file.u32(16, endian))
        snaplen = s <= 0 || s > Self.maximumSnaplen ? Self.maximumSnaplen : s
        // The upper bits carry FCS information; the link type is the low 26 (libpcap's LT_LINKTYPE).
        let dlt = file.u32(20, endian) & 0x03FF_FFFF
        decoder = LinkDecoder(linktype: dlt)
        format = CaptureFormat(
            container: .pcap, datalink: dlt, byteOrder: endian == .little ? .little : .big,
            datalinkName: LinkType.name(dlt))
    }

    func next() -> CaptureRecord? {
        guard !done else { return nil }
        var remaining = file.size - offset
        if remaining < 16 { remaining = file.more(offset, 16) }
        if remaining == 0 { done = true; return nil }
        if remaining < 16 { return stop("file ends mid-record at offset \(offset): \(remaining) of 16 header bytes") }
        let caplen = Int(file.u32(offset + 8, endian))
        if caplen > Self.maximumSnaplen {
            return stop("record at offset \(offset) claims \(caplen) captured bytes, more than pcap's maximum of \(Self.maximumSnaplen)")
        }
        if caplen > remaining - 16 { remaining = file.more(offset, 16 + caplen) }
        if caplen > remaining - 16 { return stop("file ends mid-record at offset \(offset): \(remaining - 16) of \(caplen) bytes") }
        let secs = Int64(Int32(bitPattern: file.u32(offset, endian)))
        let frac = Int64(Int32(bitPattern: file.u32(offset + 4, endian)))
        let len = Int(file.u32(offset + 12, endian))
        file.release(upTo: offset)
        // libpcap keeps `snaplen` bytes of a longer record and skips the rest.
        let data = file.slice(offset + 16, min(caplen, snaplen))
        offset += 16 + caplen
        frame += 1
        let ts = Timestamp(seconds: secs, overflowingNanoseconds: nanoFile ? frac : frac * 1000)
        return decoder.record(frame: frame, timestamp: ts, data: data, originalLength: len)
    }

    private func stop(_ warning: String) -> CaptureRecord? {
        warnings.append(warning)
        done = true
        offset = file.size
        return nil
    }
}
