/// The link-layer CRC (Core 5.4 Vol 6 Part B §3.1.1): 24 bits, polynomial
/// x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1, over the PDU header and payload, bits in air
/// order (least significant first), register preset with CRCInit (0x555555 on advertising
/// channels, CONNECT_IND's CRCInit on a connection). Used to re-seal decrypted packets.
public enum LLCRC {
    public static func reverse24(_ v: UInt32) -> UInt32 {
        var r: UInt32 = 0
        for i in 0..<24 where v & (1 << UInt32(i)) != 0 { r |= 1 << UInt32(23 - i) }
        return r
    }

    /// The three CRC octets in the order they are sent, as `LLPacket.crc` holds them (read
    /// little-endian). `crcInit` as CONNECT_IND carries it.
    public static func compute(_ pdu: UnsafeRawBufferPointer, crcInit: UInt32) -> UInt32 {
        var state = reverse24(crcInit & 0xFF_FFFF)
        for byte in pdu {
            var cur = byte
            for _ in 0..<8 {
                let bit = (state ^ UInt32(cur)) & 1
                cur >>= 1; state >>= 1
                if bit != 0 { state |= 1 << 23; state ^= 0x5A_6000 }
            }
        }
        // The register's bit 0 is sent first: read little-endian, as the capture holds it.
        return state
    }
}
