import BluesiftWire

/// Records in classic pcap (µs, little-endian, one link type) or pcapng (SHB, IDBs, EPBs
/// with µs timestamps). HCI records are LINKTYPE 201 (H4 with a 4-byte big-endian direction
/// pseudo-header). Given the `source` format, the writer keeps its link type where the target
/// can hold it: Linux monitor (btsnoop 2001, DLT 254) stays DLT 254 with its notes and index
/// records; sniffer records (DLT 251/256/272/PPI) become DLT 251 or 256. pcapng takes one
/// interface per link type met; classic pcap only the source's main one.
/// Timestamps before 1970 cannot be written (both formats count from 1970, unsigned): they
/// are written as 1970-01-01 and counted in `clamped`.
public final class PcapWriter: CaptureWriter {
    public private(set) var skipped = 0
    public private(set) var written = 0
    public private(set) var clamped = 0
    private let file: AtomicFile
    private let ng: Bool
    private let keepLinkTypes: Bool
    /// The link type of the header (pcap) or of the first interface (pcapng).
    public let primary: UInt32
    private var interfaces: [UInt32: UInt32] = [:] // DLT → pcapng interface id
    static let snaplen: UInt32 = 262_144

    public init(path: String, pcapng: Bool, source: CaptureFormat? = nil) throws(CaptureError) {
        file = try AtomicFile(path: path)
        ng = pcapng
        keepLinkTypes = source != nil
        primary = source.map(Self.primaryLinkType) ?? LinkType.h4WithPHDR
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
             (.pcapng, LinkType.nordicBLE), (.pcap, LinkType.ppi), (.pcapng, LinkType.ppi): LinkType.leLLWithPHDR
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
        } else if r.kind.isHCI {
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
        case LinkType.h4WithPHDR: header = 5
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
            let total = 32 + included + pad
            file.out.writeUInt32(6); file.out.writeUInt32(UInt32(total)); file.out.writeUInt32(interfaces[dlt] ?? 0)
            file.out.writeUInt32(UInt32(truncatingIfNeeded: UInt64(us) >> 32))
            file.out.writeUInt32(UInt32(truncatingIfNeeded: UInt64(us)))
            file.out.writeUInt32(UInt32(included)); file.out.writeUInt32(UInt32(clamping: original))
            writePacket(dlt, r, nul: nul)
            for _ in 0..<pad { file.out.writeUInt8(0) }
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
            let rx = r.direction == .received || (r.direction == nil && r.kind == .event)
            file.out.writeUInt32(rx ? 1 : 0, .big)
            file.out.writeUInt8(r.kind.rawValue)
            file.out.writeBytes(r.bytes)
        }
    }

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
        } else { file.out.writeUInt32(0) }
        if s.encrypted == false { flags |= 0x0008 }
        if let c = s.fromCentral { flags |= (c ? 2 : 3) << 7 }
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
