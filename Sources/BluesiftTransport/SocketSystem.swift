#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BluesiftCapture

/// A failed system call's errno.
public struct SystemErrno: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int32
    public init(_ code: Int32) { self.code = code }
    public var description: String { String(cString: strerror(code)) + " (errno \(code))" }
}

/// The system calls transports make: the seam that lets tests inject errnos and packets.
/// Addresses are raw `sockaddr` bytes.
public protocol SocketSystem: AnyObject {
    func socket(domain: Int32, type: Int32, protocol: Int32) throws(SystemErrno) -> Int32
    func bind(_ fd: Int32, address: [UInt8]) throws(SystemErrno)
    /// Connects, giving up after `timeoutMilliseconds`.
    func connect(_ fd: Int32, address: [UInt8], timeoutMilliseconds: Int32) throws(SystemErrno)
    func setNonBlocking(_ fd: Int32) throws(SystemErrno)
    /// Bytes read; 0 means end of stream.
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int
    /// True when `fd` became readable (or writable), false on timeout.
    func wait(_ fd: Int32, forWriting: Bool, timeoutMilliseconds: Int32) throws(SystemErrno) -> Bool
    func close(_ fd: Int32)
    /// ioctl with an integer argument (HCIDEVUP/HCIDEVDOWN take the adapter index).
    func ioctl(_ fd: Int32, request: UInt, value: Int32) throws(SystemErrno)
    /// ioctl with a buffer the kernel reads and fills (HCIGETDEVLIST, HCIGETDEVINFO).
    func ioctl(_ fd: Int32, request: UInt, buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno)
    func setOption(_ fd: Int32, level: Int32, name: Int32, value: [UInt8]) throws(SystemErrno)
    func getOption(_ fd: Int32, level: Int32, name: Int32, value: inout [UInt8]) throws(SystemErrno)
    /// One datagram (recvmsg) with what its control messages said.
    func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Datagram
}

/// What `receive` read: the datagram's length and its control messages.
public struct Datagram: Sendable, Equatable {
    public var count: Int
    /// SO_TIMESTAMP's time, where the socket gave one.
    public var time: Timestamp?
    /// SO_RXQ_OVFL: datagrams the kernel has dropped on this socket so far (cumulative, as
    /// of this one's queueing), where the socket gave it (the kernel omits it while 0).
    public var drops: UInt32?
    public init(count: Int, time: Timestamp? = nil, drops: UInt32? = nil) { self.count = count; self.time = time; self.drops = drops }
}

/// Seams a fake need not script: an ioctl is "not a tty", options are accepted, a datagram
/// is a read without a time.
extension SocketSystem {
    public func ioctl(_ fd: Int32, request: UInt, value: Int32) throws(SystemErrno) { throw SystemErrno(ENOTTY) }
    public func ioctl(_ fd: Int32, request: UInt, buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) { throw SystemErrno(ENOTTY) }
    public func setOption(_ fd: Int32, level: Int32, name: Int32, value: [UInt8]) throws(SystemErrno) {}
    public func getOption(_ fd: Int32, level: Int32, name: Int32, value: inout [UInt8]) throws(SystemErrno) { throw SystemErrno(ENOPROTOOPT) }
    public func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Datagram {
        Datagram(count: try read(fd, into: buffer))
    }
}

/// The real POSIX calls.
public final class PosixSocketSystem: SocketSystem, Sendable {
    public init() {}

    public func socket(domain: Int32, type: Int32, protocol proto: Int32) throws(SystemErrno) -> Int32 {
        let fd = sysSocket(domain, type, proto)
        if fd < 0 { throw SystemErrno(errno) }
        return fd
    }

    public func bind(_ fd: Int32, address: [UInt8]) throws(SystemErrno) {
        let rc = address.withUnsafeBytes { p in
            sysBind(fd, p.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(p.count))
        }
        if rc < 0 { throw SystemErrno(errno) }
    }

    public func connect(_ fd: Int32, address: [UInt8], timeoutMilliseconds: Int32) throws(SystemErrno) {
        try setNonBlocking(fd)
        let rc = address.withUnsafeBytes { p in
            sysConnect(fd, p.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(p.count))
        }
        if rc == 0 { return }
        let e = errno
        guard e == EINPROGRESS || e == EINTR else { throw SystemErrno(e) }
        guard try wait(fd, forWriting: true, timeoutMilliseconds: timeoutMilliseconds) else {
            throw SystemErrno(ETIMEDOUT)
        }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 { throw SystemErrno(errno) }
        if err != 0 { throw SystemErrno(err) }
    }

    public func setNonBlocking(_ fd: Int32) throws(SystemErrno) {
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 { throw SystemErrno(errno) }
    }

    public func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int {
        while true {
            let n = sysRead(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw SystemErrno(errno) }
        }
    }

    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int {
        while true {
            // send() with MSG_NOSIGNAL so a vanished peer is an EPIPE, not a SIGPIPE.
            var n = sysSend(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if n < 0 && errno == ENOTSOCK { n = sysWrite(fd, bytes.baseAddress, bytes.count) }
            if n >= 0 { return n }
            if errno != EINTR { throw SystemErrno(errno) }
        }
    }

    public func wait(_ fd: Int32, forWriting: Bool, timeoutMilliseconds: Int32) throws(SystemErrno) -> Bool {
        var p = pollfd(fd: fd, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
        while true {
            let rc = poll(&p, 1, max(timeoutMilliseconds, 0))
            if rc > 0 { return true } // POLLHUP/POLLERR also wake us: the read/write reports it
            if rc == 0 { return false }
            if errno != EINTR { throw SystemErrno(errno) }
        }
    }

    public func close(_ fd: Int32) { _ = sysClose(fd) }

    public func ioctl(_ fd: Int32, request: UInt, value: Int32) throws(SystemErrno) {
        while Glibc.ioctl(fd, request, value) < 0 { if errno != EINTR { throw SystemErrno(errno) } }
    }

    public func ioctl(_ fd: Int32, request: UInt, buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) {
        while Glibc.ioctl(fd, request, buffer.baseAddress!) < 0 { if errno != EINTR { throw SystemErrno(errno) } }
    }

    public func setOption(_ fd: Int32, level: Int32, name: Int32, value: [UInt8]) throws(SystemErrno) {
        let rc = value.withUnsafeBytes { setsockopt(fd, level, name, $0.baseAddress, socklen_t($0.count)) }
        if rc < 0 { throw SystemErrno(errno) }
    }

    public func getOption(_ fd: Int32, level: Int32, name: Int32, value: inout [UInt8]) throws(SystemErrno) {
        var len = socklen_t(value.count)
        let rc = value.withUnsafeMutableBytes { getsockopt(fd, level, name, $0.baseAddress, &len) }
        if rc < 0 { throw SystemErrno(errno) }
    }

    public func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Datagram {
        // Room for an SCM_TIMESTAMP (struct timeval) and an SO_RXQ_OVFL (u32), aligned as cmsghdr wants.
        var control = [UInt64](repeating: 0, count: 12)
        var iov = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        let (n, failed, time, drops) = control.withUnsafeMutableBytes { c -> (Int, Int32, Timestamp?, UInt32?) in
            var msg = msghdr()
            msg.msg_control = c.baseAddress; msg.msg_controllen = c.count
            let n: Int = withUnsafeMutablePointer(to: &iov) { iovp in
                msg.msg_iov = iovp; msg.msg_iovlen = 1
                while true {
                    let n = recvmsg(fd, &msg, 0)
                    if n >= 0 || errno != EINTR { return n }
                }
            }
            if n < 0 { return (n, errno, nil, nil) }
            var time: Timestamp?
            var drops: UInt32?
            // cmsghdr: len (size_t), level, type (int32), then the data, 8-byte aligned.
            var off = 0
            let header = MemoryLayout<Int>.size + 8
            while off + header <= Int(msg.msg_controllen) {
                let len = c.load(fromByteOffset: off, as: Int.self)
                let level = c.load(fromByteOffset: off + MemoryLayout<Int>.size, as: Int32.self)
                let type = c.load(fromByteOffset: off + MemoryLayout<Int>.size + 4, as: Int32.self)
                if level == SOL_SOCKET && type == LinuxBluetooth.soTimestamp && len >= header + MemoryLayout<timeval>.size {
                    let tv = c.loadUnaligned(fromByteOffset: off + header, as: timeval.self)
                    time = Timestamp(seconds: Int64(tv.tv_sec), nanoseconds: Int32(tv.tv_usec) * 1000)
                }
                if level == SOL_SOCKET && type == LinuxBluetooth.soRxqOvfl && len >= header + 4 {
                    drops = c.loadUnaligned(fromByteOffset: off + header, as: UInt32.self)
                }
                guard len > 0 else { break }
                off += (len + 7) & ~7
            }
            return (n, 0, time, drops)
        }
        if n < 0 { throw SystemErrno(failed) }
        return Datagram(count: n, time: time, drops: drops)
    }
}

// Free functions under other names, so the methods above can share the POSIX names.
private func sysSocket(_ d: Int32, _ t: Int32, _ p: Int32) -> Int32 { socket(d, t, p) }
private func sysBind(_ fd: Int32, _ a: UnsafePointer<sockaddr>, _ l: socklen_t) -> Int32 { bind(fd, a, l) }
private func sysConnect(_ fd: Int32, _ a: UnsafePointer<sockaddr>, _ l: socklen_t) -> Int32 { connect(fd, a, l) }
private func sysRead(_ fd: Int32, _ b: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, b, n) }
private func sysWrite(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, b, n) }
private func sysSend(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int, _ f: Int32) -> Int { send(fd, b, n, f) }
private func sysClose(_ fd: Int32) -> Int32 { close(fd) }

/// Wall clock now, for tap timestamps.
public func currentTimestamp() -> Timestamp {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Timestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec))
}
