/// The 44-byte header of a RIFF/WAVE file with 16-bit little-endian PCM (format tag 1,
/// Multimedia Programming Interface and Data Specifications 1.0, "WAVE Form").
public struct WAVHeader: Hashable, Sendable {
    public var sampleRate: Int
    public var channels: Int
    /// Bytes of PCM after the header.
    public var dataBytes: Int
    public static let size = 44
    public init(sampleRate: Int, channels: Int, dataBytes: Int) { self.sampleRate = sampleRate; self.channels = channels; self.dataBytes = dataBytes }

    public var frames: Int { channels == 0 ? 0 : dataBytes / (2 * channels) }

    public func encode() -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(Self.size)
        func u32(_ v: Int) { for i in 0..<4 { b.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        func u16(_ v: Int) { for i in 0..<2 { b.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        b += Array("RIFF".utf8); u32(36 + dataBytes); b += Array("WAVE".utf8)
        b += Array("fmt ".utf8); u32(16); u16(1); u16(channels); u32(sampleRate); u32(sampleRate * channels * 2); u16(channels * 2); u16(16)
        b += Array("data".utf8); u32(dataBytes)
        return b
    }

    /// A header as `encode` writes it (16-bit PCM, fmt then data); nil for anything else.
    public init?(_ b: [UInt8]) {
        guard b.count >= Self.size, Array(b[0..<4]) == Array("RIFF".utf8), Array(b[8..<16]) == Array("WAVEfmt ".utf8),
            Array(b[36..<40]) == Array("data".utf8)
        else { return nil }
        func u32(_ o: Int) -> Int { (0..<4).reduce(0) { $0 | Int(b[o + $1]) << (8 * $1) } }
        func u16(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
        guard u16(20) == 1, u16(34) == 16 else { return nil }
        channels = u16(22); sampleRate = u32(24); dataBytes = u32(40)
    }
}
