import BluesiftWire
import BluesiftCapture

/// Splits fuzz input into capture records. The framing is H4 (indicator, then the HCI packet,
/// whose own length field says where it ends) with two harness extensions so that every
/// record kind the decoder handles is reachable:
///
///     byte 0: bits 0-6 kind, bit 7 direction (0 sent, 1 received)
///       0x01 command  opcode(2) len(1)      0x02 ACL   handle(2) len(2)
///       0x03 SCO      handle(2) len(1)      0x04 event code(1) len(1)
///       0x05 ISO      handle(2) len(2, low 14 bits)
///       0x10 LL (sniffer)   len(2) flags(1) then len bytes (access address, header, payload)
///       0x11 note           len(1) then UTF-8 text
///     any other byte is skipped.
///
/// A length running past the end of the input yields a truncated record
/// (`originalLength` = what the header claims), as a cut capture would.
public enum H4Framing {
    public static let llIndicator: UInt8 = 0x10
    public static let noteIndicator: UInt8 = 0x11

    /// Calls `body` once per record; the record's bytes borrow `input`.
    public static func forEachRecord(in input: UnsafeRawBufferPointer, _ body: (CaptureRecord) -> Void) {
        var i = 0
        var frame = 0
        let n = input.count
        func byte(_ k: Int) -> Int { k < n ? Int(input[k]) : 0 }
        while i < n {
            let t = input[i]
            let received = t & 0x80 != 0
            let type = t & 0x7F
            let start = i + 1
            var headerLength = 0
            var payloadLength = 0
            var kind = PacketKind(rawValue: type)
            var sniffer: SnifferInfo?
            var bodyStart = start
            switch type {
            case 0x01: headerLength = 3; payloadLength = byte(start + 2)
            case 0x02: headerLength = 4; payloadLength = byte(start + 2) | byte(start + 3) << 8
            case 0x03: headerLength = 3; payloadLength = byte(start + 2)
            case 0x04: headerLength = 2; payloadLength = byte(start + 1)
            case 0x05: headerLength = 4; payloadLength = (byte(start + 2) | byte(start + 3) << 8) & 0x3FFF
            case llIndicator:
                kind = .ll
                let flags = UInt8(byte(start + 2))
                payloadLength = byte(start) | byte(start + 1) << 8
                bodyStart = start + 3
                sniffer = SnifferInfo(
                    channel: (flags >> 3) % 40, rssi: -50, crcOK: flags & 4 != 0,
                    fromCentral: flags & 1 != 0, encrypted: flags & 2 == 0 ? nil : false,
                    phy: 0, hasCRC: flags & 2 != 0)
            case noteIndicator:
                kind = .note
                payloadLength = byte(start)
                bodyStart = start + 1
            default:
                i += 1
                continue
            }
            let claimed = bodyStart - start + headerLength + payloadLength
            let end = min(n, start + claimed)
            let bytesStart = min(bodyStart, n)
            frame += 1
            let slice = UnsafeRawBufferPointer(rebasing: input[bytesStart..<end])
            let dir: Direction = received ? .received : .sent
            let record = CaptureRecord(
                frame: frame, timestamp: Timestamp(microseconds: 1_700_000_000_000_000 + Int64(frame) * 1250),
                direction: dir, kind: kind, bytes: slice,
                originalLength: max(slice.count, claimed - (bodyStart - start)),
                sourceType: UInt16(type), sniffer: sniffer)
            body(record)
            i = max(end, i + 1)
        }
    }

    /// Encodes one HCI packet in this framing (used to build seeds and tests).
    public static func frame(kind: PacketKind, received: Bool, _ packet: [UInt8]) -> [UInt8] {
        [kind.rawValue | (received ? 0x80 : 0)] + packet
    }
}
