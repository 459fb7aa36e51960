import Foundation
import TestEvents
#if canImport(Glibc)
    import Glibc
#endif

/// A one-client server on its own thread: accepts, then runs `handler` with the client fd.
final class OneShotServer: Sendable {
    let listenFD: Int32
    let port: UInt16
    let path: String?
    /// Signalled when the accept thread is done: the listening fd is closed only then, so
    /// its number cannot be reused by another test's socket while this thread may still
    /// call accept() on it (that stole other tests' connections).
    let finished = DispatchSemaphore(value: 0)

    /// TCP on 127.0.0.1, port chosen by the kernel.
    init(tcp handler: @escaping @Sendable (Int32) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(4))
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = inet_addr("127.0.0.1")
        sa.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard rc == 0, listen(fd, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        listenFD = fd; port = UInt16(bigEndian: sa.sin_port); path = nil
        start(handler)
    }

    init(unixPath: String, handler: @escaping @Sendable (Int32) -> Void) throws {
        unlink(unixPath)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sa.sun_path) { p in
            for (i, b) in unixPath.utf8.enumerated() { p[i] = b }
        }
        let rc = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0, listen(fd, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
        listenFD = fd; port = 0; path = unixPath
        start(handler)
    }

    private func start(_ handler: @escaping @Sendable (Int32) -> Void) {
        let fd = listenFD
        let done = finished
        Thread.detachNewThread {
            defer { done.signal() }
            let c = accept(fd, nil, nil)
            guard c >= 0 else { return }
            handler(c)
            close(c)
        }
    }

    deinit {
        shutdown(listenFD, Int32(SHUT_RDWR))
        _ = finished.wait(timeout: .now() + 5)
        close(listenFD)
        if let path { unlink(path) }
    }

    /// Echoes everything until the client closes.
    static let echo: @Sendable (Int32) -> Void = { c in
        var buf = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = read(c, &buf, buf.count)
            if n <= 0 { return }
            var off = 0
            while off < n { let w = write(c, Array(buf[off..<n]), n - off); if w <= 0 { return }; off += w }
        }
    }
}

/// Writes all bytes to a blocking fd.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var off = 0
    while off < bytes.count {
        let n = bytes[off...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        off += n
    }
}

/// Reads `count` bytes: fewer when the peer closes first (or at the hang guard).
func readExactly(_ fd: Int32, _ count: Int) -> [UInt8] {
    var out = Data()
    Events.read(fd, into: &out) { $0.count >= count }
    return [UInt8](out.prefix(count))
}
