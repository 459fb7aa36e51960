/// The link-layer CRC (Core 5.4 Vol 6 Part B §3.1.1): 24 bits, polynomial
/// x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1, over the PDU header and payload, bits in air
/// order (least significant first), register preset with CRCInit (0x555555 on advertising
/// channels, CONNECT_IND's CRCInit on a connection). Checks sniffed packets and re-seals
/// decrypted ones.
public enum LLCRC {
    public static let advertisingInit: UInt32 = 0x55_5555

    public static func reverse24(_ v: UInt32) -> UInt32 {
        var r: UInt32 = 0
        for i in 0..<24 where v & (1 << UInt32(i)) != 0 { r |= 1 << UInt32(23 - i) }
        return r
    }

    /// The register shifted right one bit per air bit (LFSR of Figure 3.2 read with position 0
    /// in bit 0): a set bit shifted out is fed back as 0xDA6000.
    static let feedback: UInt32 = 0xDA_6000

    /// One octet in one table step (8 bits, least significant first).
    static let table: [UInt32] = (0..<256).map { (i: Int) -> UInt32 in
        var s = UInt32(i)
        for _ in 0..<8 { s = s & 1 != 0 ? (s >> 1) ^ feedback : s >> 1 }
        return s
    }

    /// The three CRC octets in the order they are sent, as `LLPacket.crc` holds them (read
    /// little-endian). `crcInit` as CONNECT_IND carries it.
    public static func compute(_ pdu: UnsafeRawBufferPointer, crcInit: UInt32) -> UInt32 {
        var state = reverse24(crcInit & 0xFF_FFFF)
        table.withUnsafeBufferPointer { t in
            for byte in pdu { state = (state >> 8) ^ t[Int((state ^ UInt32(byte)) & 0xFF)] }
        }
        // The register's bit 0 is sent first: read little-endian, as the capture holds it.
        return state
    }

    /// The CRCInit under which `crc` (as `compute` returns it) is the CRC of `pdu`: the
    /// register run backwards from the CRC. Every packet has one; a connection's packets
    /// share theirs, noise does not.
    public static func crcInit(of pdu: UnsafeRawBufferPointer, crc: UInt32) -> UInt32 {
        var state = crc & 0xFF_FFFF
        for i in stride(from: pdu.count - 1, through: 0, by: -1) {
            let byte = UInt32(pdu[i])
            for b in stride(from: 7, through: 0, by: -1) {
                // Forward: out = (s ^ bit) & 1; s = s >> 1 ^ (out ? feedback : 0). Bit 23 of the
                // new register is `out` (feedback has it set, s >> 1 has it clear).
                let out = state >> 23 & 1
                let shifted = out != 0 ? state ^ feedback : state
                state = (shifted << 1 & 0xFF_FFFF) | (out ^ (byte >> UInt32(b) & 1))
            }
        }
        return reverse24(state)
    }

    /// The CRC as Wireshark shows it (btle.crc): the register with the first bit sent as its
    /// most significant bit, the value `compute` gives bit-reversed.
    public static func wiresharkOrder(_ crc: UInt32) -> UInt32 { reverse24(crc & 0xFF_FFFF) }
}
