import CCompression
#if canImport(Glibc)
    import Glibc
#endif

/// Bytes read in order from something that cannot be mapped whole: a compressed file, a file
/// still growing. `read` returns 0 at the end; damage ends the stream and sets `damage`.
protocol ByteStream: AnyObject {
    func read(into out: UnsafeMutableRawBufferPointer) -> Int
    var damage: String? { get }
    /// Bytes of the underlying file consumed so far, and its size (progress).
    var consumed: Int { get }
    var total: Int { get }
}

/// Compression formats recognised by their magic bytes (never by the file's extension).
public struct Compression: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let gzip = Compression(rawValue: "gzip") // RFC 1952: 1f 8b
    public static let xz = Compression(rawValue: "xz") // xz file format 1.0: fd '7zXZ' 00
    public static let zstd = Compression(rawValue: "zstd") // RFC 8878: 28 b5 2f fd
    public static let bzip2 = Compression(rawValue: "bzip2") // 'BZh' + block size '1'...'9'

    static func detect(_ b: UnsafeRawBufferPointer) -> Compression? {
        func starts(_ m: [UInt8]) -> Bool { b.count >= m.count && b.prefix(m.count).elementsEqual(m) }
        if starts([0x1F, 0x8B]) { return .gzip }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        if starts([0x42, 0x5A, 0x68]), b.count >= 4, (0x31...0x39).contains(b[3]) { return .bzip2 }
        return nil
    }
}

/// Compressed input handed to the codec in 1 MB steps; consumed pages of a mapped file are
/// returned to the kernel, so memory stays flat however large the file.
final class ChunkedInput {
    private let bytes: UnsafeRawBufferPointer
    private let file: MappedFile?
    private let owned: UnsafeMutableRawBufferPointer?
    private(set) var position = 0
    static let step = 1 << 20

    init(file: MappedFile) { self.file = file; bytes = file.bytes; owned = nil }

    /// A copy of `data` (zlib sections inside bug reports).
    init(copying data: some Collection<UInt8>) {
        let b = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 8)
        _ = b.initializeMemory(as: UInt8.self, from: data)
        owned = b
        bytes = UnsafeRawBufferPointer(rebasing: b[0..<data.count])
        file = nil
    }

    deinit { owned?.deallocate() }

    var total: Int { bytes.count }
    var atEnd: Bool { position >= bytes.count }

    /// The next chunk (empty at the end).
    func take() -> UnsafeRawBufferPointer {
        file?.release(upTo: position)
        let n = min(Self.step, bytes.count - position)
        defer { position += n }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + n])
    }

    /// Hands back the `n` bytes of the last chunk the codec did not use.
    func giveBack(_ n: Int) { position -= n }
}

/// Streams decompressed bytes through Debian's zlib (gzip, also raw zlib), liblzma (xz),
/// libzstd and libbz2. Concatenated members/frames/streams are read as one, like the tools.
final class Decompressor: ByteStream {
    let codec: Compression
    private let input: ChunkedInput
    private(set) var damage: String?
    private var ended = false
    private var chunk = UnsafeRawBufferPointer(start: nil, count: 0)
    private var z: UnsafeMutablePointer<z_stream>?
    private var x: UnsafeMutablePointer<lzma_stream>?
    private var zs: OpaquePointer?
    private var bz: UnsafeMutablePointer<bz_stream>?
    private var zsIn = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
    /// zstd: true while a frame is open (its end not yet decoded).
    private var midFrame = false
    private let zlibOnly: Bool
    /// zlib/gzip: a member has begun and not ended.
    private var memberOpen = false

    var consumed: Int { input.position - inputLeft }
    var total: Int { input.total }

    /// `zlibOnly`: a bare zlib stream (RFC 1950), as in btsnooz.
    init(_ codec: Compression, input: ChunkedInput, zlibOnly: Bool = false) {
        self.codec = codec
        self.input = input
        self.zlibOnly = zlibOnly
        switch codec {
        case .xz:
            x = .allocate(capacity: 1)
            if bluesift_xz_init(x!) != LZMA_OK { fail("liblzma cannot start a decoder") }
        case .zstd:
            zs = ZSTD_createDStream()
            if zs == nil { fail("libzstd cannot start a decoder") }
        case .bzip2:
            bz = .allocate(capacity: 1)
            if bluesift_bz2_init(bz!) != BZ_OK { fail("libbz2 cannot start a decoder") }
        default:
            z = .allocate(capacity: 1)
            if bluesift_inflate_init(z!, zlibOnly ? 15 : 15 + 16) != Z_OK { fail("zlib cannot start a decoder") }
        }
    }

    deinit {
        if let z { inflateEnd(z); z.deallocate() }
        if let x { lzma_end(x); x.deallocate() }
        if let zs { ZSTD_freeDStream(zs) }
        if let bz { BZ2_bzDecompressEnd(bz); bz.deallocate() }
    }

    private var inputLeft: Int {
        if let z { return Int(z.pointee.avail_in) }
        if let x { return x.pointee.avail_in }
        if let bz { return Int(bz.pointee.avail_in) }
        return zsIn.size - zsIn.pos
    }

    private func fail(_ why: String) {
        if damage == nil { damage = "\(codec.rawValue) data damaged at compressed offset \(consumed): \(why)" }
        ended = true
    }

    /// The next input chunk; false at the end of the input.
    private func refill() -> Bool {
        chunk = input.take()
        return chunk.count > 0
    }

    func read(into out: UnsafeMutableRawBufferPointer) -> Int {
        guard !ended, out.count > 0 else { return 0 }
        switch codec {
        case .xz: return readXZ(out)
        case .zstd: return readZstd(out)
        case .bzip2: return readBZ2(out)
        default: return readZlib(out)
        }
    }

    private func readZlib(_ out: UnsafeMutableRawBufferPointer) -> Int {
        let s = z!
        s.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
        s.pointee.avail_out = UInt32(clamping: out.count)
        while s.pointee.avail_out > 0 {
            if s.pointee.avail_in == 0 {
                guard refill() else {
                    if memberOpen { fail("the compressed stream ends early") }
                    ended = true
                    break
                }
                s.pointee.next_in = UnsafeMutablePointer(mutating: chunk.baseAddress!.assumingMemoryBound(to: Bytef.self))
                s.pointee.avail_in = UInt32(chunk.count)
            }
            memberOpen = true
            let rc = inflate(s, Z_NO_FLUSH)
            if rc == Z_STREAM_END {
                memberOpen = false
                // gzip: another member may follow (as `cat a.gz b.gz` makes).
                if zlibOnly || (s.pointee.avail_in == 0 && input.atEnd) { ended = true; break }
                inflateReset(s)
                continue
            }
            if rc != Z_OK && rc != Z_BUF_ERROR {
                fail(s.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)")
                break
            }
        }
        return out.count - Int(s.pointee.avail_out)
    }

    private func readXZ(_ out: UnsafeMutableRawBufferPointer) -> Int {
        let s = x!
        s.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        s.pointee.avail_out = out.count
        while s.pointee.avail_out > 0 {
            var action = LZMA_RUN
            if s.pointee.avail_in == 0 {
                if refill() {
                    s.pointee.next_in = chunk.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    s.pointee.avail_in = chunk.count
                } else {
                    action = LZMA_FINISH
                }
            }
            let rc = lzma_code(s, action)
            if rc == LZMA_STREAM_END { ended = true; break }
            if rc != LZMA_OK {
                fail(rc == LZMA_BUF_ERROR ? "the compressed stream ends early" : "liblzma error \(rc.rawValue)")
                break
            }
        }
        return out.count - s.pointee.avail_out
    }

    private func readZstd(_ out: UnsafeMutableRawBufferPointer) -> Int {
        var o = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
        while o.pos < o.size {
            if zsIn.pos == zsIn.size {
                guard refill() else {
                    if midFrame { fail("the compressed stream ends early") }
                    ended = true
                    break
                }
                zsIn = ZSTD_inBuffer(src: chunk.baseAddress, size: chunk.count, pos: 0)
            }
            let rc = ZSTD_decompressStream(zs, &o, &zsIn)
            if ZSTD_isError(rc) != 0 { fail(String(cString: ZSTD_getErrorName(rc))); break }
            midFrame = rc != 0
            // Nothing produced and input left unused: the output is full or a frame ended.
            if rc == 0 && zsIn.pos == zsIn.size && input.atEnd { ended = true; break }
        }
        return o.pos
    }

    private func readBZ2(_ out: UnsafeMutableRawBufferPointer) -> Int {
        let s = bz!
        s.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: CChar.self)
        s.pointee.avail_out = UInt32(clamping: out.count)
        while s.pointee.avail_out > 0 {
            if s.pointee.avail_in == 0 {
                guard refill() else { fail("the compressed stream ends early"); break }
                s.pointee.next_in = UnsafeMutablePointer(mutating: chunk.baseAddress!.assumingMemoryBound(to: CChar.self))
                s.pointee.avail_in = UInt32(chunk.count)
            }
            let rc = BZ2_bzDecompress(s)
            if rc == BZ_STREAM_END {
                // pbzip2 and `cat a.bz2 b.bz2` write several streams: start the next one.
                let nextIn = s.pointee.next_in, availIn = s.pointee.avail_in
                let nextOut = s.pointee.next_out, availOut = s.pointee.avail_out
                BZ2_bzDecompressEnd(s)
                if availIn == 0 && input.atEnd { ended = true; s.pointee.avail_out = availOut; break }
                _ = bluesift_bz2_init(s)
                s.pointee.next_in = nextIn; s.pointee.avail_in = availIn
                s.pointee.next_out = nextOut; s.pointee.avail_out = availOut
                continue
            }
            if rc != BZ_OK { fail("libbz2 error \(rc)"); break }
        }
        return out.count - Int(s.pointee.avail_out)
    }
}

extension Decompressor {
    /// Inflates a whole zlib stream held in memory (btsnooz), up to `limit` bytes of output.
    static func inflateZlib(_ data: some Collection<UInt8>, limit: Int) -> (bytes: [UInt8], damage: String?) {
        let d = Decompressor(.gzip, input: ChunkedInput(copying: data), zlibOnly: true)
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while out.count < limit {
            let n = buf.withUnsafeMutableBytes { d.read(into: $0) }
            if n == 0 { break }
            out.append(contentsOf: buf[0..<min(n, limit - out.count)])
        }
        return (out, d.damage)
    }
}
