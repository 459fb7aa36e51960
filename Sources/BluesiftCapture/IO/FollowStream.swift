#if canImport(Glibc)
    import Glibc
#endif

/// A file still being written (`dump --follow`, as `tail -f`): at its current end, reading
/// waits for more until `shouldStop` says so (Ctrl-C), so a record half-written is waited for.
final class FollowStream: ByteStream {
    private let fd: Int32
    private let shouldStop: () -> Bool
    private(set) var consumed = 0
    var total: Int { consumed }
    var damage: String? { nil }
    /// How long to sleep at the end of the file before looking again.
    static let pollMicroseconds: UInt32 = 50_000

    init(path: String, shouldStop: @escaping () -> Bool) throws(CaptureError) {
        // Non-blocking, so opening a FIFO nobody writes to returns at once.
        fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let e = errno
            throw CaptureError(e == ENOENT ? .notFound : .unreadable, path: path, e == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(e)))")
        }
        // A FIFO or a device blocks in read() (Ctrl-C never seen) or never ends (/dev/zero):
        // refused as `open(path:)` refuses them (issue 13). A regular file ignores O_NONBLOCK.
        var st = stat()
        if fstat(fd, &st) != 0 || st.st_mode & S_IFMT != S_IFREG {
            Glibc.close(fd)
            throw CaptureError(.unreadable, path: path, st.st_mode & S_IFMT == S_IFDIR ? "is a directory" : "not a regular file")
        }
        self.shouldStop = shouldStop
    }

    deinit { close(fd) }

    func read(into out: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let n = Glibc.read(fd, out.baseAddress, out.count)
            if n > 0 { consumed += n; return n }
            if n < 0 && errno != EINTR { return 0 }
            if shouldStop() { return 0 }
            usleep(Self.pollMicroseconds)
        }
    }
}

extension CaptureFile {
    /// Reads `path` as it grows (btsnoop, pcap, pcapng, PacketLogger), decoding each record as
    /// it arrives; the stream ends when `shouldStop` returns true at the file's current end.
    public static func open(following path: String, shouldStop: @escaping () -> Bool) throws(CaptureError) -> any CaptureReader {
        let stream = try FollowStream(path: path, shouldStop: shouldStop)
        // The header is enough to know the format; waiting for 64 KB would hold the first lines back.
        let file = MappedFile(path: path, stream: stream, initial: 32)
        return try reader(file, path: path, streamed: true)
    }
}
