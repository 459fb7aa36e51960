import CAudioCodecs

/// An LC3 frame layout (LC3 1.0 §2, BAP 1.0.1 §4.3): sampling rate, frame duration and
/// octets per codec frame, checked against what liblc3 1.0.1 decodes.
public struct LC3Format: Hashable, Sendable {
    public var sampleRate: Int
    public var frameMicroseconds: Int
    public var octetsPerFrame: Int
    public init(sampleRate: Int, frameMicroseconds: Int, octetsPerFrame: Int) {
        self.sampleRate = sampleRate; self.frameMicroseconds = frameMicroseconds; self.octetsPerFrame = octetsPerFrame
    }
    /// PCM samples per frame and channel (160 at 16 kHz, 10 ms).
    public var samplesPerFrame: Int { Int(lc3_frame_samples(Int32(frameMicroseconds), Int32(sampleRate))) }
    /// The decoder's algorithmic delay in samples (LC3 1.0 §2.2: 2.5 ms at 10 ms frames).
    public var delaySamples: Int { Int(lc3_delay_samples(Int32(frameMicroseconds), Int32(sampleRate))) }
    /// Why liblc3 cannot decode this layout; nil when it can. liblc3 1.0.1 takes 8, 16, 24, 32
    /// and 48 kHz (not 44.1), 7.5 and 10 ms, 20-400 octets.
    public var unsupported: String? {
        if ![8000, 16000, 24000, 32000, 48000].contains(sampleRate) { return "liblc3 1.0.1 does not decode \(sampleRate) Hz" }
        if ![7500, 10000].contains(frameMicroseconds) { return "liblc3 1.0.1 does not decode \(frameMicroseconds) us frames" }
        if !(20...400).contains(octetsPerFrame) { return "\(octetsPerFrame) octets per codec frame is outside LC3's 20-400" }
        return nil
    }
}

public struct CodecError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One channel's LC3 decoder (liblc3). `decode(nil)` runs the packet loss concealment.
public final class LC3Decoder {
    public let format: LC3Format
    private let memory: UnsafeMutableRawPointer
    private let decoder: lc3_decoder_t

    public init(_ format: LC3Format) throws(CodecError) {
        if let why = format.unsupported { throw CodecError(why) }
        let size = Int(lc3_decoder_size(Int32(format.frameMicroseconds), Int32(format.sampleRate)))
        memory = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 16)
        guard let d = lc3_setup_decoder(Int32(format.frameMicroseconds), Int32(format.sampleRate), 0, memory) else {
            memory.deallocate()
            throw CodecError("liblc3 refused \(format.sampleRate) Hz, \(format.frameMicroseconds) us")
        }
        decoder = d
        self.format = format
    }
    deinit { memory.deallocate() }

    /// Decodes one frame (nil: a lost frame, concealed) into `pcm` at every `stride`-th
    /// sample from `pcm`'s start. True when the decoder concealed (lost or corrupt frame).
    @discardableResult
    public func decode(_ frame: UnsafeRawBufferPointer?, into pcm: UnsafeMutablePointer<Int16>, stride: Int) -> Bool {
        let r: Int32
        if let frame, frame.count > 0 {
            r = lc3_decode(decoder, frame.baseAddress, Int32(frame.count), LC3_PCM_FORMAT_S16, pcm, Int32(stride))
        } else {
            r = lc3_decode(decoder, nil, 0, LC3_PCM_FORMAT_S16, pcm, Int32(stride))
        }
        return r != 0
    }
}

/// One channel's LC3 encoder (liblc3): the other half of the codec, for round trips and
/// for tests that carry a known signal.
public final class LC3Encoder {
    public let format: LC3Format
    private let memory: UnsafeMutableRawPointer
    private let encoder: lc3_encoder_t

    public init(_ format: LC3Format) throws(CodecError) {
        if let why = format.unsupported { throw CodecError(why) }
        let size = Int(lc3_encoder_size(Int32(format.frameMicroseconds), Int32(format.sampleRate)))
        memory = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 16)
        guard let e = lc3_setup_encoder(Int32(format.frameMicroseconds), Int32(format.sampleRate), 0, memory) else {
            memory.deallocate()
            throw CodecError("liblc3 refused \(format.sampleRate) Hz, \(format.frameMicroseconds) us")
        }
        encoder = e
        self.format = format
    }
    deinit { memory.deallocate() }

    /// One frame of `samplesPerFrame` samples (every `stride`-th from `pcm`) to `octetsPerFrame` bytes.
    public func encode(_ pcm: UnsafePointer<Int16>, stride: Int = 1) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: format.octetsPerFrame)
        out.withUnsafeMutableBytes { o in
            _ = lc3_encode(encoder, LC3_PCM_FORMAT_S16, pcm, Int32(stride), Int32(format.octetsPerFrame), o.baseAddress)
        }
        return out
    }
}
