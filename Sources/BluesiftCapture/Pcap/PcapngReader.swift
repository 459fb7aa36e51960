/// A native pcapng block reader, used when libpcap refuses a file that is valid pcapng:
/// libpcap 1.10 stops at the first interface whose link type differs from the first one's.
/// Handles sections of either byte order, per-interface link type, if_tsresol and
/// if_tsoffset, Enhanced/Simple/obsolete Packet Blocks; every other block is skipped.
final class PcapngReader: CaptureReader {
    let format: CaptureFormat
    private var ownWarnings: [String] = []
    var warnings: [String] {
        foreign == 0 ? ownWarnings : ownWarnings + ["\(foreign) records on interfaces of a link type this tool does not decode (\(foreignTypes.map(LinkType.name).joined(separator: "; "))); kept as unknown records"]
    }
    private var undescribed = 0
    /// Records of unsupported link types, and those types.
    private(set) var foreign = 0
    private var foreignTypes: [UInt32] = []
    var bytesRead: Int { offset }
    var fileSize: Int { file.size }

    private struct Interface {
        var decoder: LinkDecoder
        var snaplen: Int
        var unitsPerSecond: UInt64 = 1_000_000
        var offsetSeconds: Int64 = 0
        var supported = true
    }

    private let file: MappedFile
    private var offset = 0
    private var endian = Endian.little
    private var interfaces: [Interface] = []
    private var frame = 0
    private var done = false

    init(file: MappedFile) throws(CaptureError) {
        self.file = file
        guard file.size >= 28, file.u32(0, .little) == 0x0A0D_0D0A else {
            throw CaptureError(.notACapture, path: file.path, "not a capture: pcapng section header missing or cut short")
        }
        let bom = file.u32(8, .little)
        guard bom == 0x1A2B_3C4D || bom == 0x4D3C_2B1A else {
            throw CaptureError(.notACapture, path: file.path, "not a capture: pcapng byte-order magic is wrong")
        }
        let e: Endian = bom == 0x1A2B_3C4D ? .little : .big
        // The first interface names the file's link type; find it without consuming.
        var o = 0, dlt: UInt32 = 0
        while o + 12 <= file.size {
            let type = file.u32(o, e), len = Int(file.u32(o + 4, e))
            guard len >= 12, o + len <= file.size else { break }
            if type == 1, len >= 20 { dlt = UInt32(e == .little ? file.le16(o + 8) : file.be16(o + 8)); break }
            o += len
        }
        format = CaptureFormat(
            container: .pcapng, datalink: dlt, byteOrder: e == .little ? .little : .big,
            datalinkName: LinkType.name(dlt))
    }

    /// Every interface's link type, in file order, across sections of either byte order.
    /// Walks block headers only; used when the first interface is one this tool cannot decode.
    static func linkTypes(_ file: MappedFile) -> [UInt32] {
        var o = 0, e = Endian.little, out: [UInt32] = []
        while o + 12 <= file.size {
            if file.u32(o, .little) == 0x0A0D_0D0A {
                let bom = file.u32(o + 8, .little)
                guard bom == 0x1A2B_3C4D || bom == 0x4D3C_2B1A else { break }
                e = bom == 0x1A2B_3C4D ? .little : .big
            }
            let type = file.u32(o, e), len = Int(file.u32(o + 4, e))
            guard len >= 12, len <= file.size - o else { break }
            if type == 1, len >= 20 { out.append(UInt32(e == .little ? file.le16(o + 8) : file.be16(o + 8))) }
            o += len
        }
        return out
    }

    /// Skips the first `count` packets (after libpcap delivered them and then gave up).
    func skipPackets(_ count: Int) {
        while frame < count, next() != nil {}
    }

    func next() -> CaptureRecord? {
        while !done {
            var remaining = file.size - offset
            if remaining < 12 { remaining = file.more(offset, 12) } // streams read on; see MappedFile
            if remaining == 0 { done = true; return nil }
            if remaining < 12 { return stop("file ends mid-record at offset \(offset): \(remaining) of 12 block header bytes") }
            let type = file.u32(offset, .little) == 0x0A0D_0D0A ? 0x0A0D_0D0A : file.u32(offset, endian)
            if type == 0x0A0D_0D0A {
                let bom = file.u32(offset + 8, .little)
                guard bom == 0x1A2B_3C4D || bom == 0x4D3C_2B1A else {
                    return stop("section header at offset \(offset) has a bad byte-order magic")
                }
                endian = bom == 0x1A2B_3C4D ? .little : .big
                interfaces.removeAll(keepingCapacity: true)
            }
            let len = Int(file.u32(offset + 4, endian))
            if len < 12 { return stop("block at offset \(offset) has length \(len), less than 12") }
            if len > remaining { remaining = file.more(offset, len) }
            if len > remaining { return stop("file ends mid-record at offset \(offset): \(remaining) of \(len) bytes") }
            let start = offset
            file.release(upTo: start) // earlier records are no longer borrowed
            offset += len
            switch type {
            case 1 where len >= 20:
                addInterface(start, len)
            case 6 where len >= 32, 2 where len >= 32:
                let iface = type == 6 ? Int(file.u32(start + 8, endian)) : Int(endian == .little ? file.le16(start + 8) : file.be16(start + 8))
                let ts = UInt64(file.u32(start + 12, endian)) << 32 | UInt64(file.u32(start + 16, endian))
                let caplen = Int(file.u32(start + 20, endian)), original = Int(file.u32(start + 24, endian))
                guard caplen <= len - 32 else {
                    return stop("packet block at offset \(start) claims \(caplen) captured bytes, its block holds \(len - 32)")
                }
                var r = packet(iface, ts, file.slice(start + 28, caplen), original, at: start)
                r?.options = PacketOptions.of(block: file, start: start, total: len, caplen: caplen, endian)
                return r
            case 3 where len >= 16:
                let original = Int(file.u32(start + 8, endian))
                let snap = interfaces.first?.snaplen ?? Int.max
                let caplen = min(original, len - 16, snap > 0 ? snap : Int.max)
                return packet(0, 0, file.slice(start + 12, caplen), original, at: start)
            default:
                continue
            }
        }
        return nil
    }

    private func packet(_ iface: Int, _ ts: UInt64, _ data: UnsafeRawBufferPointer, _ original: Int, at start: Int) -> CaptureRecord? {
        guard iface < interfaces.count else {
            // Kept as an unknown record (nothing lost), and the file goes on.
            if undescribed == 0 {
                ownWarnings.append("packet at offset \(start) refers to interface \(iface), but only \(interfaces.count) are described; kept as unknown records")
            }
            undescribed += 1
            frame += 1
            return CaptureRecord(
                frame: frame, timestamp: Timestamp(seconds: 0), direction: nil, kind: .unknown,
                bytes: data, originalLength: max(original, data.count))
        }
        let i = interfaces[iface]
        if !i.supported {
            foreign += 1
            if !foreignTypes.contains(i.decoder.linktype) { foreignTypes.append(i.decoder.linktype) }
        }
        let secs = ts / i.unitsPerSecond, frac = ts % i.unitsPerSecond
        let ns = frac.multipliedFullWidth(by: 1_000_000_000)
        let nanos = i.unitsPerSecond.dividingFullWidth((ns.high, ns.low)).quotient
        frame += 1
        let t = Timestamp(seconds: Int64(truncatingIfNeeded: secs) &+ i.offsetSeconds, nanoseconds: Int32(nanos))
        return i.decoder.record(frame: frame, timestamp: t, data: data, originalLength: max(original, data.count))
    }

    private func addInterface(_ start: Int, _ len: Int) {
        let dlt = UInt32(endian == .little ? file.le16(start + 8) : file.be16(start + 8))
        var i = Interface(decoder: LinkDecoder(linktype: dlt), snaplen: Int(file.u32(start + 12, endian)))
        i.supported = LinkType.isSupported(dlt)
        var o = start + 16
        let end = start + len - 4
        while o + 4 <= end {
            let code = endian == .little ? file.le16(o) : file.be16(o)
            let olen = Int(endian == .little ? file.le16(o + 2) : file.be16(o + 2))
            if code == 0 || o + 4 + olen > end { break }
            if code == 9, olen >= 1 {
                // if_tsresol: high bit set = power of two, else power of ten.
                let v = file.u8(o + 4), exp = UInt64(v & 0x7F)
                if v & 0x80 != 0 {
                    if exp < 64 { i.unitsPerSecond = 1 << exp }
                } else if exp <= 19 {
                    var u: UInt64 = 1
                    for _ in 0..<exp { u *= 10 }
                    i.unitsPerSecond = u
                }
            } else if code == 14, olen >= 8 {
                let first = UInt64(file.u32(o + 4, endian)), second = UInt64(file.u32(o + 8, endian))
                i.offsetSeconds = Int64(bitPattern: endian == .little ? second << 32 | first : first << 32 | second)
            }
            o += 4 + (olen + 3) & ~3
        }
        interfaces.append(i)
    }

    /// Walks the packet blocks of a pcapng file beside libpcap (which does not give options):
    /// the n-th call returns the n-th packet's options.
    struct OptionsWalker {
        var offset = 0
        var endian = Endian.little

        mutating func next(_ file: MappedFile) -> PacketOptions? {
            while offset + 12 <= file.size {
                let start = offset
                if file.u32(start, .little) == 0x0A0D_0D0A {
                    endian = file.u32(start + 8, .little) == 0x1A2B_3C4D ? .little : .big
                }
                let type = file.u32(start, endian), total = Int(file.u32(start + 4, endian))
                guard total >= 12, total <= file.size - start else { offset = file.size; return nil }
                offset += total
                switch type {
                case 6, 2:
                    let caplen = Int(file.u32(start + 20, endian))
                    return total > 32 + caplen ? PacketOptions.of(block: file, start: start, total: total, caplen: caplen, endian) : nil
                case 3:
                    return nil
                default:
                    continue
                }
            }
            return nil
        }
    }

    private func stop(_ warning: String) -> CaptureRecord? {
        ownWarnings.append(warning)
        done = true
        offset = file.size
        return nil
    }
}
