#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read-only memory map of a whole capture file. Records are views into it, so reading
/// never copies; pages already consumed are handed back to the kernel (`release(upTo:)`)
/// so resident memory stays bounded however large the file is.
///
/// Or a window over a stream (a decompressed or a growing file): the same offsets address
/// the bytes read so far, `size` is where they end, and a reader that finds too few bytes
/// for a record asks `more(offset, need)`, which drops what lies before `offset` and reads
/// on. For a mapped file `more` returns at once, so the readers' per-record path is the same.
public final class MappedFile {
    let path: String
    @exclusivity(unchecked) @usableFromInline private(set) var size: Int
    /// Byte `offset` is at `base + offset` (for a stream, the window start minus its offset).
    @exclusivity(unchecked) @usableFromInline private(set) var base: UnsafeRawPointer?
    @exclusivity(unchecked) @usableFromInline var released = 0 // checked per record: no runtime check
    @usableFromInline static let releaseStep = 8 << 20
    let stream: (any ByteStream)?
    private var window = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var windowStart = 0
    private(set) var streamEnded = true
    /// A record longer than this in a stream is taken as damage, not read into memory.
    static let streamRecordLimit = 64 << 20

    /// A window over `stream`, holding at least its first `initial` bytes (for sniffing) when it has them.
    init(path: String, stream: any ByteStream, initial: Int = 1 << 16) {
        self.path = path
        self.stream = stream
        size = 0
        streamEnded = false
        window = .allocate(byteCount: 1 << 20, alignment: 8)
        base = UnsafeRawPointer(window.baseAddress!)
        _ = more(0, initial)
    }

    /// Opens and maps `path`; throws `.notFound`, `.isDirectory` or `.unreadable`.
    init(path: String) throws(CaptureError) {
        self.path = path
        stream = nil
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            switch e {
            case ENOENT, ENOTDIR: throw CaptureError(.notFound, path: path, "no such file")
            case EISDIR: throw CaptureError(.isDirectory, path: path, "is a directory, not a capture file")
            default: throw CaptureError(.unreadable, path: path, "cannot open: \(String(cString: strerror(e)))")
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw CaptureError(.unreadable, path: path, "cannot stat: \(String(cString: strerror(errno)))")
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw CaptureError(.isDirectory, path: path, "is a directory, not a capture file")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw CaptureError(.unreadable, path: path, "not a regular file")
        }
        size = Int(st.st_size)
        if size == 0 { base = nil; return }
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
            throw CaptureError(.unreadable, path: path, "cannot map: \(String(cString: strerror(errno)))")
        }
        _ = madvise(p, size, MADV_SEQUENTIAL)
        base = UnsafeRawPointer(p)
        Self.noteMapped(path)
    }

    // A file cut short while mapped turns the next read of a vanished page into SIGBUS. The
    // CLI's handler reports it in one line naming the file mapped last (`shrunkMessage`).
    nonisolated(unsafe) private static var message: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var messageLength = 0

    private static func noteMapped(_ path: String) {
        let text = "bluesift: \(path): the file shrank while it was being read\n"
        // Never freed: the handler may be reading the previous one (a few bytes per file).
        messageLength = min(messageLength, text.utf8.count)
        message = strdup(text)
        messageLength = text.utf8.count
    }

    /// Writes the one-line report for SIGBUS on a mapped capture. Async-signal-safe.
    public static func reportShrunk() {
        if let m = message { _ = write(2, m, messageLength) }
    }

    deinit {
        if stream != nil { window.deallocate() } else if let base { munmap(UnsafeMutableRawPointer(mutating: base), size) }
    }

    /// Bytes available from `offset`, after reading on until there are `need` of them (or
    /// the stream ends). Bytes before `offset` are dropped: no record borrows them any more.
    @inline(never) func more(_ offset: Int, _ need: Int) -> Int {
        guard let stream, !streamEnded else { return size &- offset }
        let held = size - offset
        if offset > windowStart {
            let w = window.baseAddress!
            if held > 0 { memmove(w, w + (offset - windowStart), held) }
            windowStart = offset
        }
        let goal = min(need, Self.streamRecordLimit)
        while size - offset < goal {
            let used = size - windowStart
            if used == window.count {
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: window.count * 2, alignment: 8)
                bigger.baseAddress!.copyMemory(from: window.baseAddress!, byteCount: used)
                window.deallocate()
                window = bigger
            }
            let n = stream.read(into: UnsafeMutableRawBufferPointer(rebasing: window[used...]))
            if n <= 0 { streamEnded = true; break }
            size += n
        }
        base = UnsafeRawPointer(window.baseAddress!) - windowStart
        return size - offset
    }

    /// The whole file.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }

    /// Bytes `[offset, offset+count)`; the caller has checked the bounds.
    @inlinable @inline(__always) func slice(_ offset: Int, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base.map { $0 + offset }, count: count)
    }

    @inlinable @inline(__always) func u8(_ o: Int) -> UInt8 { base!.load(fromByteOffset: o, as: UInt8.self) }
    @inline(__always) func be16(_ o: Int) -> UInt16 { UInt16(u8(o)) << 8 | UInt16(u8(o + 1)) }
    @inline(__always) func le16(_ o: Int) -> UInt16 { UInt16(u8(o + 1)) << 8 | UInt16(u8(o)) }
    @inlinable @inline(__always) func u32(_ o: Int, _ e: Endian) -> UInt32 {
        let v = base!.loadUnaligned(fromByteOffset: o, as: UInt32.self)
        return e == .big ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
    }
    @inlinable @inline(__always) func be64(_ o: Int) -> UInt64 {
        UInt64(bigEndian: base!.loadUnaligned(fromByteOffset: o, as: UInt64.self))
    }

    /// Drops pages before `offset` from memory (file-backed and clean, so a later touch
    /// would only re-read them); called with the start of the record being returned.
    @inlinable @inline(__always) func release(upTo offset: Int) {
        if offset &- released >= Self.releaseStep { releaseNow(upTo: offset) }
    }

    @inline(never) @usableFromInline func releaseNow(upTo offset: Int) {
        guard stream == nil else { released = offset; return } // a window is trimmed by `more`
        guard let base else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = offset / page * page
        if end > released {
            _ = madvise(UnsafeMutableRawPointer(mutating: base + released), end - released, MADV_DONTNEED)
            released = end
        }
    }
}

@usableFromInline enum Endian { case little, big }
