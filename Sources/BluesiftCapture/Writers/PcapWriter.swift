import BluesiftWire

/// HCI records as LINKTYPE 201 (H4 with a 4-byte big-endian direction pseudo-header), in
/// classic pcap (µs, little-endian) or pcapng (SHB, one IDB, EPBs with µs timestamps).
public final class PcapWriter: CaptureWriter {
    public private(set) var skipped = 0
    public private(set) var written = 0
    private let file: AtomicFile
    private let ng: Bool
    static let snaplen: UInt32 = 262_144

    public init(path: String, pcapng: Bool) throws(CaptureError) {
        file = try AtomicFile(path: path)
        ng = pcapng
        if ng {
            // Section Header Block: byte-order magic, version 1.0, section length unknown.
            file.out.writeUInt32(0x0A0D_0D0A); file.out.writeUInt32(28); file.out.writeUInt32(0x1A2B_3C4D)
            file.out.writeUInt16(1); file.out.writeUInt16(0); file.out.writeUInt64(UInt64.max); file.out.writeUInt32(28)
            // Interface Description Block: LINKTYPE 201, default if_tsresol (µs).
            file.out.writeUInt32(1); file.out.writeUInt32(20); file.out.writeUInt16(UInt16(LinkType.h4WithPHDR))
            file.out.writeUInt16(0); file.out.writeUInt32(Self.snaplen); file.out.writeUInt32(20)
        } else {
            file.out.writeUInt32(0xA1B2_C3D4); file.out.writeUInt16(2); file.out.writeUInt16(4)
            file.out.writeUInt32(0); file.out.writeUInt32(0); file.out.writeUInt32(Self.snaplen)
            file.out.writeUInt32(LinkType.h4WithPHDR)
        }
    }

    public func write(_ r: CaptureRecord) throws(CaptureError) {
        guard r.kind.isHCI else { skipped += 1; return }
        let rx = r.direction == .received || (r.direction == nil && r.kind == .event)
        let included = 5 + r.bytes.count
        let original = 5 + max(r.originalLength, r.bytes.count)
        let us = r.timestamp.microseconds
        if ng {
            let pad = (4 - included % 4) % 4
            let total = 32 + included + pad
            file.out.writeUInt32(6); file.out.writeUInt32(UInt32(total)); file.out.writeUInt32(0)
            file.out.writeUInt32(UInt32(truncatingIfNeeded: UInt64(bitPattern: us) >> 32))
            file.out.writeUInt32(UInt32(truncatingIfNeeded: UInt64(bitPattern: us)))
            file.out.writeUInt32(UInt32(included)); file.out.writeUInt32(UInt32(clamping: original))
            writePacket(rx: rx, r)
            for _ in 0..<pad { file.out.writeUInt8(0) }
            file.out.writeUInt32(UInt32(total))
        } else {
            let secs = us >= 0 ? us / 1_000_000 : (us - 999_999) / 1_000_000
            file.out.writeUInt32(UInt32(truncatingIfNeeded: secs))
            file.out.writeUInt32(UInt32(us - secs * 1_000_000))
            file.out.writeUInt32(UInt32(included)); file.out.writeUInt32(UInt32(clamping: original))
            writePacket(rx: rx, r)
        }
        written += 1
        try file.flushIfNeeded()
    }

    private func writePacket(rx: Bool, _ r: CaptureRecord) {
        file.out.writeUInt32(rx ? 1 : 0, .big)
        file.out.writeUInt8(r.kind.rawValue)
        file.out.writeBytes(r.bytes)
    }

    public func finish() throws(CaptureError) { try file.commit() }
}
