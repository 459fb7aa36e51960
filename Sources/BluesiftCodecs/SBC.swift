import CAudioCodecs

/// A2DP 1.3 §12.6 SBC frame header, as read from the first frame of a stream: sampling
/// frequency, blocks, channel mode, allocation method, subbands, bitpool.
public struct SBCFrameHeader: Hashable, Sendable {
    public var sampleRate: Int
    public var blocks: Int
    /// 0 mono, 1 dual channel, 2 stereo, 3 joint stereo (§12.6.3).
    public var channelMode: UInt8
    /// 0 loudness, 1 SNR.
    public var allocation: UInt8
    public var subbands: Int
    public var bitpool: Int

    static let syncword: UInt8 = 0x9C

    /// The header at the start of `b`; nil when it is not an SBC frame (no syncword, short).
    public init?(_ b: UnsafeRawBufferPointer) {
        guard b.count >= 4, b[0] == Self.syncword else { return nil }
        sampleRate = [16000, 32000, 44100, 48000][Int(b[1] >> 6)]
        blocks = [4, 8, 12, 16][Int(b[1] >> 4 & 3)]
        channelMode = b[1] >> 2 & 3
        allocation = b[1] >> 1 & 1
        subbands = b[1] & 1 == 0 ? 4 : 8
        bitpool = Int(b[2])
    }

    public var channels: Int { channelMode == 0 ? 1 : 2 }
    public var channelModeName: String { ["mono", "dual channel", "stereo", "joint stereo"][Int(channelMode)] }
    /// §12.9 frame_length.
    public var frameLength: Int {
        let head = 4 + (4 * subbands * channels) / 8
        switch channelMode {
        case 0, 1: return head + (blocks * channels * bitpool + 7) / 8
        case 2: return head + (blocks * bitpool + 7) / 8
        default: return head + (subbands + blocks * bitpool + 7) / 8
        }
    }
    public var samplesPerFrame: Int { blocks * subbands }
}

/// libsbc's decoder over a stream of SBC frames (the parameters are those of its first frame).
public final class SBCDecoder {
    private var sbc = sbc_t()
    public private(set) var header: SBCFrameHeader?

    public init() throws(CodecError) {
        if sbc_init(&sbc, 0) != 0 { throw CodecError("libsbc could not be initialised") }
        sbc.endian = UInt8(SBC_LE)
    }
    deinit { sbc_finish(&sbc) }

    /// Decodes the frames in `frames` one after another, handing each frame's interleaved
    /// 16-bit samples to `body`. Returns the frames decoded and the bytes left undecoded
    /// (a damaged or cut frame stops the packet).
    public func decode(_ frames: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<Int16>) throws -> Void) rethrows -> (frames: Int, leftover: Int) {
        var offset = 0, count = 0
        var pcm = [Int16](repeating: 0, count: 16 * 8 * 2)
        while offset < frames.count {
            let rest = UnsafeRawBufferPointer(rebasing: frames[offset...])
            guard let h = SBCFrameHeader(rest) else { break }
            if header == nil { header = h }
            var written = 0
            let used = pcm.withUnsafeMutableBytes { p in
                sbc_decode(&sbc, rest.baseAddress, rest.count, p.baseAddress, p.count, &written)
            }
            guard used > 0 else { break }
            offset += used; count += 1
            try pcm.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[0..<(written / 2)])) }
        }
        return (count, frames.count - offset)
    }
}

/// libsbc's encoder (tests and round trips): 16-bit interleaved PCM to SBC frames.
public final class SBCEncoder {
    private var sbc = sbc_t()
    /// `mode` 0 mono … 3 joint stereo; `blocks` 4/8/12/16; `subbands` 4/8.
    public init(sampleRate: Int, mode: UInt8, blocks: Int, subbands: Int, bitpool: Int, snr: Bool = false) throws(CodecError) {
        if sbc_init(&sbc, 0) != 0 { throw CodecError("libsbc could not be initialised") }
        sbc.frequency = UInt8([16000: SBC_FREQ_16000, 32000: SBC_FREQ_32000, 44100: SBC_FREQ_44100, 48000: SBC_FREQ_48000][sampleRate] ?? SBC_FREQ_44100)
        sbc.mode = mode
        sbc.blocks = UInt8([4: SBC_BLK_4, 8: SBC_BLK_8, 12: SBC_BLK_12, 16: SBC_BLK_16][blocks] ?? SBC_BLK_16)
        sbc.subbands = UInt8(subbands == 4 ? SBC_SB_4 : SBC_SB_8)
        sbc.bitpool = UInt8(bitpool)
        sbc.allocation = UInt8(snr ? SBC_AM_SNR : SBC_AM_LOUDNESS)
        sbc.endian = UInt8(SBC_LE)
    }
    deinit { sbc_finish(&sbc) }

    /// PCM bytes one frame takes.
    public var codesize: Int { sbc_get_codesize(&sbc) }

    /// One frame from `codesize` bytes of PCM.
    public func encode(_ pcm: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 512)
        var written = 0
        _ = out.withUnsafeMutableBytes { o in sbc_encode(&sbc, pcm.baseAddress, pcm.count, o.baseAddress, o.count, &written) }
        return Array(out.prefix(max(0, written)))
    }
}
