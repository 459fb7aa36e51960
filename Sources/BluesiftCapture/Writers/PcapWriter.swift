import BluesiftWire

/// Records in classic pcap (µs, little-endian, one link type) or pcapng (SHB, IDBs, EPBs
/// with µs timestamps). HCI records are LINKTYPE 201 (H4 with a 4-byte big-endian direction
/// pseudo-header). Given the `source` format, the writer keeps its link type where the target
/// can hold it: Linux monitor (btsnoop 2001, DLT 254) stays DLT 254 with its notes and index
/// records; sniffer records (DLT 251/256/272/PPI) become DLT 251 or 256. pcapng takes one
/// interface per link type met; classic pcap only the source's main one. From an H4 source
/// (btsnoop 1002, DLT 187/201), records of H4 indicators this tool does not name are written
/// with their indicator too, so a copy keeps every record.
/// pcapng keeps each packet's comments (opt_comment); classic pcap has no place for them.
/// Timestamps before 1970 cannot be written (both formats count from 1970, unsigned): they
/// are written as 1970-01-01 and counted in `clamped`.
public final class PcapWriter: CaptureWriter {
    public private(set) var skipped = 0
    public private(set) var written = 0
    public private(set) var clamped = 0
    private let file: AtomicFile
    private let ng: Bool
    private let keepLinkTypes: Bool
    /// The source is H4 (btsnoop 1002, DLT 187/201): an unnamed record's `sourceType` is its
    /// H4 indicator, written back under DLT 201 (which holds any indicator byte).
    private let h4Source: Bool
    /// The source is DLT 201: a record too short for its pseudo-header is copied as it is.
    private let phdrSource: Bool
    /// The link type of the header (pcap) or of the first interface (pcapng).
    public let primary: UInt32
    private var interfaces: [UInt32: UInt32] = [:] // DLT → pcapng interface id
    static let snaplen: UInt32 = 262_144

    public init(path: String, pcapng: Bool, source: CaptureFormat? = nil) throws(CaptureError) {
        file = try AtomicFile(path: path)
        ng = pcapng
        keepLinkTypes = source != nil
        primary = source.map(Self.primaryLinkType) ?? LinkType.h4WithPHDR
        h4Source = source?.isH4 ?? false
        phdrSource = source.map { $0.container != .btsnoop && $0.datalink == LinkType.h4WithPHDR } ?? false
        if ng {
            // Section Header Block: byte-order magic, version 1.0, section length unknown.
            file.out.writeUInt32(0x0A0D_0D0A); file.out.writeUInt32(28); file.out.writeUInt32(0x1A2B_3C4D)
            file.out.writeUInt16(1); file.out.writeUInt16(0); file.out.writeUInt64(UInt64.max); file.out.writeUInt32(28)
            addInterface(primary)
        } else {
            file.out.writeUInt32(0xA1B2_C3D4); file.out.writeUInt16(2); file.out.writeUInt16(4)
            file.out.writeUInt32(0); file.out.writeUInt32(0); file.out.writeUInt32(Self.snaplen)
            file.out.writeUInt32(primary)
        }
    }

    /// The link type that holds most of what a source of this format carries.
    static func primaryLinkType(_ f: CaptureFormat) -> UInt32 {
        switch (f.container, f.datalink) {
        case (.btsnoop, 2001), (.pcap, LinkType.linuxMonitor), (.pcapng, LinkType.linuxMonitor): LinkType.linuxMonitor
        case (.pcap, LinkType.leLL), (.pcapng, LinkType.leLL): LinkType.leLL
        case (.pcap, LinkType.leLLWithPHDR), (.pcapng, LinkType.leLLWithPHDR), (.pcap, LinkType.nordicBLE),
            (.pcapng, LinkType.nordicBLE), (.pcap, LinkType.ppi), (.pcapng, LinkType.ppi):
            LinkType.leLLWithPHDR
        default: LinkType.h4WithPHDR
        }
    }

    /// Interface Description Block: link type, snaplen, default if_tsresol (µs).
    private func addInterface(_ dlt: UInt32) {
        interfaces[dlt] = UInt32(interfaces.count)
        file.out.writeUInt32(1); file.out.writeUInt32(20); file.out.writeUInt16(UInt16(dlt))
        file.out.writeUInt16(0); file.out.writeUInt32(Self.snaplen); file.out.writeUInt32(20)
    }

    /// The link type `r` is written with, or nil when the target cannot hold it.
    private func linkType(_ r: CaptureRecord) -> UInt32? {
        guard keepLinkTypes else { return r.kind.isHCI ? LinkType.h4WithPHDR : nil }
        let dlt: UInt32
        if r.kind == .ll {
            let bare = r.sourceType == UInt16(LinkType.leLL) && (r.sniffer?.hasCRC ?? true)
            dlt = bare ? LinkType.leLL : LinkType.leLLWithPHDR
        } else if primary == LinkType.linuxMonitor {
            guard LinuxMonitorOpcode.forWriting(r) != nil else { return nil }
            dlt = LinkType.linuxMonitor
        } else if r.kind.isHCI || (h4Source && r.kind == .unknown && (r.sourceType <= 0xFF || phdrSource)) {
            dlt = LinkType.h4WithPHDR
        } else {
            return nil
        }
        return ng || dlt == primary ? dlt : nil
    }

    public func write(_ r: CaptureRecord) throws(CaptureError) {
        guard let dlt = linkType(r) else { skipped += 1; return }
        if ng, interfaces[dlt] == nil { addInterface(dlt) }
        let header: Int
        var nul = false
        switch dlt {
        case LinkType.h4WithPHDR: header = Self.isShortPHDR(r) ? 0 : 5
        case LinkType.linuxMonitor:
            nul = LinuxMonitorOpcode.forWriting(r)?.nul ?? false
            header = 4
        case LinkType.leLLWithPHDR: header = 10
        default: header = 0
        }
        let included = header + r.bytes.count + (nul ? 1 : 0)
        let original = header + (nul ? r.bytes.count + 1 : max(r.originalLength, r.bytes.count))
        var us = r.timestamp.microseconds
        if us < 0 { us = 0; clamped += 1 }
        if ng {
            let pad = (4 - included % 4) % 4
            // The packet's comments (opt_comment), then opt_endofopt.
            let comments = r.options?.commentRanges ?? []
            let optionBytes = comments.isEmpty ? 0 : comments.reduce(4) { $0 + 4 + ($1.count + 3) & ~3 }
            let total = 32 + included + pad + optionBytes
            file.out.writeUInt32(6); file.out.writeUInt32(UInt32(total)); file.out.writeUInt32(interfaces[dlt] ?? 0)
            file.out.writeUInt32(UInt32(truncatingIfNeeded: UInt64(us) >> 32))
            file.out.writeUInt32(UInt32(truncatingIfNeeded: UInt64(us)))
            file.out.writeUInt32(UInt32(included)); file.out.writeUInt32(UInt32(clamping: original))
            writePacket(dlt, r, nul: nul)
            for _ in 0..<pad { file.out.writeUInt8(0) }
            if let o = r.options, !comments.isEmpty {
                for c in comments {
                    file.out.writeUInt16(1); file.out.writeUInt16(UInt16(c.count))
                    file.out.writeBytes(UnsafeRawBufferPointer(rebasing: o.bytes[c]))
                    for _ in 0..<(4 - c.count % 4) % 4 { file.out.writeUInt8(0) }
                }
                file.out.writeUInt32(0)
            }
            file.out.writeUInt32(UInt32(total))
        } else {
            let secs = us / 1_000_000
            file.out.writeUInt32(UInt32(truncatingIfNeeded: secs))
            file.out.writeUInt32(UInt32(us - secs * 1_000_000))
            file.out.writeUInt32(UInt32(included)); file.out.writeUInt32(UInt32(clamping: original))
            writePacket(dlt, r, nul: nul)
        }
        written += 1
        try file.flushIfNeeded()
    }

    private func writePacket(_ dlt: UInt32, _ r: CaptureRecord, nul: Bool) {
        switch dlt {
        case LinkType.linuxMonitor:
            // adapter BE16, opcode BE16 (pcap/bluetooth.h pcap_bluetooth_linux_monitor_header).
            file.out.writeUInt16(r.adapter, .big)
            file.out.writeUInt16(LinuxMonitorOpcode.forWriting(r)?.op ?? 0, .big)
            file.out.writeBytes(r.bytes)
            if nul { file.out.writeUInt8(0) }
        case LinkType.leLLWithPHDR:
            writeRFHeader(r)
            file.out.writeBytes(r.bytes)
        case LinkType.leLL:
            file.out.writeBytes(r.bytes)
        default:
            // A DLT 201 record too short for its pseudo-header: its bytes as stored.
            guard !Self.isShortPHDR(r) else { file.out.writeBytes(r.bytes); return }
            let rx = r.direction == .received || (r.direction == nil && r.kind == .event)
            file.out.writeUInt32(rx ? 1 : 0, .big)
            file.out.writeUInt8(r.kind.isHCI ? r.kind.rawValue : UInt8(truncatingIfNeeded: r.sourceType))
            file.out.writeBytes(r.bytes)
        }
    }

    /// A record that was too short for DLT 201's pseudo-header and indicator (kept whole).
    static func isShortPHDR(_ r: CaptureRecord) -> Bool { r.kind == .unknown && r.sourceType == CaptureRecord.noType }

    /// LINKTYPE 256 header from what the sniffer said (the inverse of Sniffers.btleRF):
    /// rf_channel, signal, noise, AA offenses, reference AA (LE32), flags (LE16).
    private func writeRFHeader(_ r: CaptureRecord) {
        let s = r.sniffer ?? SnifferInfo()
        var flags: UInt16 = 0x0001 // dewhitened
        file.out.writeUInt8(s.channel.map(Self.rfChannel) ?? 0)
        if let rssi = s.rssi { flags |= 0x0002; file.out.writeUInt8(UInt8(bitPattern: rssi)) } else { file.out.writeUInt8(0) }
        file.out.writeUInt8(0); file.out.writeUInt8(0)
        if r.bytes.count >= 4 {
            flags |= 0x0010
            file.out.writeBytes(UnsafeRawBufferPointer(rebasing: r.bytes[0..<4]))
        } else {
            file.out.writeUInt32(0)
        }
        if s.encrypted == false { flags |= 0x0008 }
        if s.isochronous {
            flags |= UInt16(s.fromCentral.map { $0 ? 4 : 5 } ?? 6) << 7
        } else if let c = s.fromCentral {
            flags |= (c ? 2 : 3) << 7
        }
        if let ok = s.crcOK { flags |= 0x0400 | (ok ? 0x0800 : 0) }
        flags |= UInt16((s.phy ?? 0) & 3) << 14
        file.out.writeUInt16(flags)
    }

    /// Link-layer channel index to RF channel (Core 5.4 Vol 6 Part B §1.4.1).
    static func rfChannel(_ index: UInt8) -> UInt8 {
        switch index {
        case 37: 0
        case 38: 12
        case 39: 39
        case 0...10: index + 1
        case 11...36: index + 2
        default: 0
        }
    }

    public func finish() throws(CaptureError) { try file.commit() }
}

/// pcap and pcapng count time from 1970, unsigned: a capture that starts earlier (an Android
/// log from a phone whose clock was never set dates from year 0) is moved whole so that its
/// first record is at the epoch, keeping every interval. Decided at the first record; a later
/// record still before 1970 (dated before the first one) is the writer's to clamp and count.
public struct EpochShift {
    /// Seconds added to every timestamp; nil before the first record, 0 when none is needed.
    public private(set) var seconds: Int64?
    /// The first record's own time, when it was moved.
    public private(set) var firstOriginal: Timestamp?

    public init() {}

    public mutating func apply(_ r: inout CaptureRecord) {
        if seconds == nil {
            seconds = r.timestamp.seconds < 0 ? -r.timestamp.seconds : 0
            if seconds! > 0 { firstOriginal = r.timestamp }
        }
        if let s = seconds, s > 0 { r.timestamp.seconds &+= s }
    }
}
