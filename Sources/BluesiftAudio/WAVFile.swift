import BluesiftCapture
import BluesiftCodecs
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A WAV file written as samples come (memory flat): a temporary file beside the
/// destination (AtomicFile), the header's sizes written once the samples are all in, then
/// renamed into place. Every write is checked.
final class WAVFile {
    let file: AtomicFile
    let sampleRate: Int
    let channels: Int
    private(set) var samples = 0

    init(path: String, sampleRate: Int, channels: Int) throws(CaptureError) {
        file = try AtomicFile(path: path)
        self.sampleRate = sampleRate; self.channels = channels
        file.out.writeBytes(WAVHeader(sampleRate: sampleRate, channels: channels, dataBytes: 0).encode())
    }

    /// Interleaved 16-bit samples (host order; little-endian on the machines Swift runs on here).
    func write(_ pcm: UnsafeBufferPointer<Int16>) throws(CaptureError) {
        for s in pcm { file.out.writeUInt16(UInt16(bitPattern: s)) }
        samples += pcm.count
        try file.flushIfNeeded()
    }

    /// Sample frames (one sample per channel) written.
    var frames: Int { channels == 0 ? 0 : samples / channels }

    func commit() throws(CaptureError) {
        try file.flush()
        let header = WAVHeader(sampleRate: sampleRate, channels: channels, dataBytes: samples * 2).encode()
        let n = header.withUnsafeBytes { pwrite(file.fileDescriptor, $0.baseAddress, $0.count, 0) }
        if n != header.count { throw CaptureError(.writeFailed, path: file.path, "cannot write the WAV header: \(String(cString: strerror(errno)))") }
        try file.commit()
    }

    func discard() { file.discard() }
}
