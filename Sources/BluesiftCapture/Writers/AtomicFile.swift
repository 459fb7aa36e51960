import BluesiftWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered output to `.NAME.tmp-PID` next to the destination; `commit()` flushes, fsyncs
/// and renames it into place. Dropped without `commit()`, the temporary file is deleted.
final class AtomicFile {
    let path: String
    let tempPath: String
    private var fd: Int32
    private var committed = false
    var out = ByteWriter(capacity: 1 << 16)
    private static let flushAt = 1 << 20

    init(path: String) throws(CaptureError) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        tempPath = "\(dir).\(name).tmp-\(getpid())"
        fd = open(tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw CaptureError(.writeFailed, path: path, "cannot create \(tempPath): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
        if !committed { unlink(tempPath) }
    }

    /// Call after appending to `out`; writes once the buffer is large.
    func flushIfNeeded() throws(CaptureError) {
        if out.count >= Self.flushAt { try flush() }
    }

    func flush() throws(CaptureError) {
        var done = 0
        let total = out.bytes.count
        while done < total {
            let n = out.bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, total - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.writeFailed, path: path, "write failed: \(String(cString: strerror(errno)))")
            }
            done += n
        }
        out.bytes.removeAll(keepingCapacity: true)
    }

    func commit() throws(CaptureError) {
        guard !committed else { return }
        try flush()
        if fsync(fd) != 0 { throw CaptureError(.writeFailed, path: path, "fsync failed: \(String(cString: strerror(errno)))") }
        close(fd)
        fd = -1
        if rename(tempPath, path) != 0 {
            throw CaptureError(.writeFailed, path: path, "cannot rename into place: \(String(cString: strerror(errno)))")
        }
        committed = true
    }
}
