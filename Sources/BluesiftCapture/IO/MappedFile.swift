#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only memory map of a whole capture file. Records are views into it, so reading
/// never copies; pages already consumed are handed back to the kernel (`release(upTo:)`)
/// so resident memory stays bounded however large the file is.
public final class MappedFile {
    let path: String
    let size: Int
    let base: UnsafeRawPointer?
    @exclusivity(unchecked) private var released = 0   // checked per record: no runtime check
    private static let releaseStep = 8 << 20

    /// Opens and maps `path`; throws `.notFound`, `.isDirectory` or `.unreadable`.
    init(path: String) throws(CaptureError) {
        self.path = path
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
        if let base { munmap(UnsafeMutableRawPointer(mutating: base), size) }
    }

    /// The whole file.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }

    /// Bytes `[offset, offset+count)`; the caller has checked the bounds.
    @inline(__always) func slice(_ offset: Int, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base.map { $0 + offset }, count: count)
    }

    @inline(__always) func u8(_ o: Int) -> UInt8 { base!.load(fromByteOffset: o, as: UInt8.self) }
    @inline(__always) func be16(_ o: Int) -> UInt16 { UInt16(u8(o)) << 8 | UInt16(u8(o + 1)) }
    @inline(__always) func le16(_ o: Int) -> UInt16 { UInt16(u8(o + 1)) << 8 | UInt16(u8(o)) }
    @inline(__always) func u32(_ o: Int, _ e: Endian) -> UInt32 {
        let v = base!.loadUnaligned(fromByteOffset: o, as: UInt32.self)
        return e == .big ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
    }
    @inline(__always) func be64(_ o: Int) -> UInt64 {
        UInt64(bigEndian: base!.loadUnaligned(fromByteOffset: o, as: UInt64.self))
    }

    /// Drops pages before `offset` from memory (file-backed and clean, so a later touch
    /// would only re-read them); called with the start of the record being returned.
    @inline(__always) func release(upTo offset: Int) {
        if offset &- released >= Self.releaseStep { releaseNow(upTo: offset) }
    }

    @inline(never) private func releaseNow(upTo offset: Int) {
        guard let base else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = offset / page * page
        if end > released {
            _ = madvise(UnsafeMutableRawPointer(mutating: base + released), end - released, MADV_DONTNEED)
            released = end
        }
    }
}

enum Endian { case little, big }
