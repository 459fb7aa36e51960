import BluesiftWire

/// Wall-clock time since the Unix epoch. Negative seconds are allowed (btsnoop's epoch is
/// year 0, and some writers leave it unset).
public struct Timestamp: Hashable, Sendable, Comparable {
    public var seconds: Int64
    public var nanoseconds: Int32 // 0..<1_000_000_000

    @inlinable public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// Any seconds/nanoseconds pair, carried into range (files may hold sub-second fields
    /// that overflow or are negative).
    public init(seconds: Int64, overflowingNanoseconds ns: Int64) {
        var s = seconds &+ ns / 1_000_000_000, r = ns % 1_000_000_000
        if r < 0 { r += 1_000_000_000; s &-= 1 }
        self.init(seconds: s, nanoseconds: Int32(r))
    }

    @inlinable public init(microseconds us: Int64) {
        var s = us / 1_000_000, r = us % 1_000_000
        if r < 0 { r += 1_000_000; s -= 1 }
        self.init(seconds: s, nanoseconds: Int32(r * 1000))
    }

    public var microseconds: Int64 { seconds &* 1_000_000 &+ Int64(nanoseconds / 1000) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds) }
}

/// sent = host→controller, received = controller→host. Nil when the file does not say.
public enum Direction: UInt8, Sendable, Hashable {
    case sent = 0
    case received = 1

    public var name: String { self == .sent ? "sent" : "received" }
}

/// What a record carries. Open: readers may report kinds this list does not name.
public struct PacketKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    // The first five equal the H4 packet indicators.
    public static let command = PacketKind(rawValue: 0x01)
    public static let acl = PacketKind(rawValue: 0x02)
    public static let sco = PacketKind(rawValue: 0x03)
    public static let event = PacketKind(rawValue: 0x04)
    public static let iso = PacketKind(rawValue: 0x05)
    /// Free text: PacketLogger notes/syslog, btmon system notes and user logging.
    public static let note = PacketKind(rawValue: 0x80)
    /// Over-the-air link-layer packet from a sniffer (bytes in DLT 251 layout).
    public static let ll = PacketKind(rawValue: 0x81)
    /// Linux monitor index management: New/Delete/Open/Close Index, Index Info.
    public static let index = PacketKind(rawValue: 0x82)
    /// Linux monitor control/mgmt channel traffic.
    public static let control = PacketKind(rawValue: 0x83)
    public static let unknown = PacketKind(rawValue: 0xFF)

    public var name: String {
        switch rawValue {
        case 0x01: "command"
        case 0x02: "acl"
        case 0x03: "sco"
        case 0x04: "event"
        case 0x05: "iso"
        case 0x80: "note"
        case 0x81: "ll"
        case 0x82: "index"
        case 0x83: "control"
        default: "unknown"
        }
    }

    public var description: String { name }
    public var isHCI: Bool { rawValue >= 1 && rawValue <= 5 }
}

/// What a sniffer header said about an over-the-air packet (DLT 251/256/272, PPI-BTLE).
public struct SnifferInfo: Sendable, Hashable {
    public var channel: UInt8?
    public var rssi: Int8?
    /// True when the sniffer verified the CRC; nil when it did not say.
    public var crcOK: Bool?
    /// True for central→peripheral, false for peripheral→central, nil unknown.
    public var fromCentral: Bool?
    /// The sniffer reports the payload as still encrypted (MIC present, not decrypted).
    public var encrypted: Bool?
    /// PHY: 0 = 1M, 1 = 2M, 2 = Coded.
    public var phy: UInt8?
    /// True when the record's bytes end with the 3-byte CRC.
    public var hasCRC: Bool
    /// The sniffer said the PDU is on an isochronous channel (LINKTYPE 256 PDU type 4/5: a
    /// CIS, direction in `fromCentral`; 6: a BIS).
    public var isochronous = false
    /// The nRF Sniffer's auxiliary PDU type of an advertising PDU on a secondary channel
    /// (0 AUX_ADV_IND, 1 AUX_CHAIN_IND, 2 AUX_SYNC_IND, 3 AUX_SCAN_RSP); nil when not said.
    public var auxType: UInt8?

    public init(
        channel: UInt8? = nil, rssi: Int8? = nil, crcOK: Bool? = nil, fromCentral: Bool? = nil,
        encrypted: Bool? = nil, phy: UInt8? = nil, hasCRC: Bool = true
    ) {
        self.channel = channel; self.rssi = rssi; self.crcOK = crcOK; self.fromCentral = fromCentral
        self.encrypted = encrypted; self.phy = phy; self.hasCRC = hasCRC
    }
}

/// A pcapng packet's options (the option list after the packet data of an Enhanced or obsolete
/// Packet Block, pcapng spec draft-ietf-opsawg-pcapng §4.3 / §4.4), borrowed like `bytes`:
/// read for its comments (opt_comment, code 1, §3.5.1: UTF-8 text, several allowed).
public struct PacketOptions {
    public var bytes: UnsafeRawBufferPointer
    public var bigEndian: Bool
    public init(bytes: UnsafeRawBufferPointer, bigEndian: Bool) { self.bytes = bytes; self.bigEndian = bigEndian }

    /// Each opt_comment's value (offset and length in `bytes`), in file order.
    public var commentRanges: [Range<Int>] {
        var out: [Range<Int>] = [], o = 0
        while o + 4 <= bytes.count {
            let code = bigEndian ? UInt16(bytes[o]) << 8 | UInt16(bytes[o + 1]) : UInt16(bytes[o + 1]) << 8 | UInt16(bytes[o])
            let len = Int(bigEndian ? UInt16(bytes[o + 2]) << 8 | UInt16(bytes[o + 3]) : UInt16(bytes[o + 3]) << 8 | UInt16(bytes[o + 2]))
            if code == 0 || o + 4 + len > bytes.count { break } // opt_endofopt, or a damaged list
            if code == 1 { out.append(o + 4..<o + 4 + len) }
            o += 4 + (len + 3) & ~3
        }
        return out
    }

    /// The comments as text (trailing NULs some writers add left out).
    public var comments: [String] {
        commentRanges.map { r in
            var e = r.upperBound
            while e > r.lowerBound && bytes[e - 1] == 0 { e -= 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[r.lowerBound..<e]), as: UTF8.self)
        }
    }

    /// The options of the packet block at `start` (type 6 or 2, total length `total`) whose
    /// packet data holds `caplen` bytes; nil when it has none.
    static func of(block file: MappedFile, start: Int, total: Int, caplen: Int, _ e: Endian) -> PacketOptions? {
        let from = start + 28 + (caplen + 3) & ~3, to = start + total - 4
        guard to - from >= 4 else { return nil }
        return PacketOptions(bytes: file.slice(from, to - from), bigEndian: e == .big)
    }
}

/// One record of any capture format, as soon as it is read.
///
/// `bytes` is borrowed from the reader's buffer: it is valid until the reader's next call
/// to `next()`. Copy what must outlive that (see DESIGN.md, "Lifetimes").
public struct CaptureRecord {
    /// 1-based record number, equal to Wireshark's frame.number.
    public var frame: Int
    public var timestamp: Timestamp
    public var direction: Direction?
    /// Controller index (Linux monitor); 0 elsewhere.
    public var adapter: UInt16
    public var kind: PacketKind
    /// For HCI kinds: the HCI packet without the H4 indicator byte.
    /// For `.note`: UTF-8 text. For `.ll`: access address + PDU header + payload (+ CRC,
    /// see `sniffer.hasCRC`). Otherwise the record's payload as stored.
    public var bytes: UnsafeRawBufferPointer
    /// Length of the packet before the capture cut it; equals bytes.count when whole.
    public var originalLength: Int
    /// The format's own type for this record: H4 indicator, monitor opcode or PacketLogger type
    /// (`noType` when the record has none: empty, or too short for its link type's header).
    public var sourceType: UInt16
    public static let noType: UInt16 = 0xFFFF

    /// The kind's name; an unknown kind with the format's code for it, "unknown (0x0a)".
    public var kindName: String {
        guard kind == .unknown, sourceType != Self.noType else { return kind.name }
        return "unknown (" + Hex.fixed(UInt64(sourceType), width: sourceType > 0xFF ? 4 : 2) + ")"
    }
    public var sniffer: SnifferInfo?
    /// pcapng packet options (comments), when the block has any.
    public var options: PacketOptions?

    @inlinable public init(
        frame: Int, timestamp: Timestamp, direction: Direction?, adapter: UInt16 = 0,
        kind: PacketKind, bytes: UnsafeRawBufferPointer, originalLength: Int? = nil,
        sourceType: UInt16 = 0, sniffer: SnifferInfo? = nil
    ) {
        self.frame = frame; self.timestamp = timestamp; self.direction = direction
        self.adapter = adapter; self.kind = kind; self.bytes = bytes
        self.originalLength = originalLength ?? bytes.count
        self.sourceType = sourceType; self.sniffer = sniffer
    }

    public var isTruncated: Bool { originalLength > bytes.count }

    /// A placeholder (frame 0, no bytes) for storage that records are decoded into.
    public static var empty: CaptureRecord {
        CaptureRecord(
            frame: 0, timestamp: Timestamp(seconds: 0), direction: nil, kind: .unknown,
            bytes: UnsafeRawBufferPointer(start: nil, count: 0))
    }
}
