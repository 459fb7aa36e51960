#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one loop that writes a whole buffer to a file descriptor: short writes are continued,
/// EINTR retried. Every writer (stdout, atomic files, key stores, extracted bug reports) uses it.
public enum WriteAll {
    /// 0 when every byte was written, else the errno (ENOSPC for a write that wrote nothing).
    public static func write(_ fd: Int32, _ p: UnsafeRawBufferPointer) -> Int32 {
        var off = 0
        while off < p.count {
            #if canImport(Glibc)
                let n = Glibc.write(fd, p.baseAddress! + off, p.count - off)
            #else
                let n = Darwin.write(fd, p.baseAddress! + off, p.count - off)
            #endif
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return n < 0 ? errno : ENOSPC }
            off += n
        }
        return 0
    }

    public static func write(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        bytes.withUnsafeBytes { write(fd, $0) }
    }
}
