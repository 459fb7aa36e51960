import BluesiftCapture

/// Splits an H4 byte stream into packets, tolerating partial reads and garbage: bytes that
/// cannot start a packet are skipped (and counted) until a known indicator appears.
/// Header layouts: Core 5.4 Vol 4 Part E §5.4.1–§5.4.5.
public struct H4Framer: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes dropped while hunting for a packet indicator.
    public private(set) var discardedBytes = 0

    public init() {}

    /// Bytes received but not yet returned as a packet.
    public var pendingByteCount: Int { buffer.count - start }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

    /// Header size and payload length for a packet type, given the header bytes.
    static func headerLength(_ indicator: UInt8) -> Int? {
        switch indicator {
        case 0x01: 3 // opcode(2) + length(1)
        case 0x02: 4 // handle/flags(2) + length(2)
        case 0x03: 3 // handle/flags(2) + length(1)
        case 0x04: 2 // event code(1) + length(1)
        case 0x05: 4 // handle/flags(2) + length(14 bits)
        default: nil
        }
    }

    static func payloadLength(_ indicator: UInt8, header h: ArraySlice<UInt8>) -> Int {
        let i = h.startIndex
        switch indicator {
        case 0x01: return Int(h[i + 2])
        case 0x02: return Int(h[i + 2]) | Int(h[i + 3]) << 8
        case 0x03: return Int(h[i + 2])
        case 0x04: return Int(h[i + 1])
        default: return (Int(h[i + 2]) | Int(h[i + 3]) << 8) & 0x3FFF
        }
    }

    /// The next whole packet, or nil until more bytes arrive.
    public mutating func next() -> H4Packet? {
        while start < buffer.count {
            let indicator = buffer[start]
            guard let hlen = Self.headerLength(indicator) else {
                start += 1; discardedBytes += 1
                continue
            }
            guard buffer.count - start - 1 >= hlen else { break }
            let header = buffer[(start + 1)..<(start + 1 + hlen)]
            let total = 1 + hlen + Self.payloadLength(indicator, header: header)
            guard buffer.count - start >= total else { break }
            let packet = H4Packet(PacketKind(rawValue: indicator), Array(buffer[(start + 1)..<(start + total)]))
            start += total
            compact()
            return packet
        }
        compact()
        return nil
    }

    private mutating func compact() {
        if start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 } else if start > 4096 && start * 2 > buffer.count { buffer.removeFirst(start); start = 0 }
    }
}
