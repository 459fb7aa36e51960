import BluesiftWire
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Buffered output to `.NAME.tmp-PID` next to the destination; `commit()` flushes, fsyncs
/// and renames it into place. Dropped without `commit()`, the temporary file is deleted, and
/// a SIGINT/SIGTERM handler (the CLI's OutputGuard) deletes it through `removeTemporaryFiles()`.
/// A destination that exists and is not a regular file (/dev/stdout, a FIFO, /dev/full) is
/// written in place: renaming over a device node would replace it.
public final class AtomicFile {
    public let path: String
    public let tempPath: String
    private var fd: Int32
    private var committed = false
    private let direct: Bool
    private var slot = -1
    public var out = ByteWriter(capacity: 1 << 16)
    /// The temporary file, for a writer of its own (`--output-dir` jobs); flush `out` first
    /// if both are used.
    public var fileDescriptor: Int32 { fd }
    private static let flushAt = 1 << 20

    public init(path: String) throws(CaptureError) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var st = stat()
        direct = stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG
        if direct {
            tempPath = path
            fd = open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 { throw CaptureError(.writeFailed, path: path, "cannot open: \(String(cString: strerror(errno)))") }
            return
        }
        tempPath = "\(dir).\(name).tmp-\(getpid())"
        // Registered before it exists: a signal between open(2) and registration would leave it.
        slot = TemporaryFiles.add(tempPath)
        fd = open(tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            let e = errno
            TemporaryFiles.remove(slot)
            slot = -1
            throw CaptureError(.writeFailed, path: path, "cannot create \(tempPath): \(String(cString: strerror(e)))")
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
        if !committed && !direct { unlink(tempPath) }
        TemporaryFiles.remove(slot)
    }

    /// Call after appending to `out`; writes once the buffer is large.
    public func flushIfNeeded() throws(CaptureError) {
        if out.count >= Self.flushAt { try flush() }
    }

    public func flush() throws(CaptureError) {
        let err = WriteAll.write(fd, out.bytes)
        if err != 0 { throw CaptureError(.writeFailed, path: path, "write failed: \(String(cString: strerror(err)))") }
        out.bytes.removeAll(keepingCapacity: true)
    }

    public func commit() throws(CaptureError) {
        guard !committed else { return }
        try flush()
        if !direct, fsync(fd) != 0 { throw CaptureError(.writeFailed, path: path, "fsync failed: \(String(cString: strerror(errno)))") }
        if close(fd) != 0, !direct {
            fd = -1
            throw CaptureError(.writeFailed, path: path, "close failed: \(String(cString: strerror(errno)))")
        }
        fd = -1
        if !direct, rename(tempPath, path) != 0 {
            throw CaptureError(.writeFailed, path: path, "cannot rename into place: \(String(cString: strerror(errno)))")
        }
        committed = true
        TemporaryFiles.remove(slot)
        slot = -1
    }

    /// Abandons the output: the temporary file is deleted, the destination left as it was.
    public func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        if !committed && !direct { unlink(tempPath) }
        committed = true
        TemporaryFiles.remove(slot)
        slot = -1
    }

    /// Deletes every temporary file still open. Async-signal-safe (only unlink(2) on
    /// preallocated C strings): called from a SIGINT/SIGTERM handler.
    public static func removeTemporaryFiles() { TemporaryFiles.unlinkAll() }

    /// Allocates the slots now, so the signal handler never does.
    public static func prepareForSignals() { _ = TemporaryFiles.slots }
}

/// Fixed slots of C strings, so a signal handler can unlink them without allocating.
enum TemporaryFiles {
    static let capacity = 64
    nonisolated(unsafe) static let slots: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let p = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
        p.initialize(repeating: nil, count: capacity)
        return p
    }()
    nonisolated(unsafe) static var lock = pthread_mutex_t()

    static func add(_ path: String) -> Int {
        let s = slots
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        for i in 0..<capacity where s[i] == nil {
            s[i] = strdup(path)
            return i
        }
        return -1
    }

    static func remove(_ i: Int) {
        guard i >= 0 else { return }
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        let p = slots[i]
        slots[i] = nil
        free(p)
    }

    static func unlinkAll() {
        for i in 0..<capacity { if let p = slots[i] { unlink(p) } }
    }
}
