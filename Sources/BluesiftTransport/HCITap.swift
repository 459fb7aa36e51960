#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BluesiftCapture
import CBluetooth // SOCK_* come from the socket header CBluetooth includes (one owner per header)

/// One side of a tap as written on the command line: a transport spec that is opened as
/// `replay --transport` opens it (connect to `tcp:`/`unix:`, open `serial:`), or the same
/// prefixed with `listen:` (`listen:tcp:HOST:PORT`, `listen:unix:PATH`) to wait for that side
/// to connect: a host stack usually connects to its controller, so its side of the tap listens.
public struct TapEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var spec: TransportSpec
    public var listens: Bool

    public static let usage = "expected tcp:HOST:PORT, unix:PATH or serial:PATH[@BAUD][,rtscts] (opened), or listen:tcp:HOST:PORT, listen:unix:PATH (waits for that side to connect)"

    public init(parsing text: String) throws(TransportError) {
        var body = Substring(text)
        listens = text.lowercased().hasPrefix("listen:")
        if listens { body = body.dropFirst(7) }
        spec = try TransportSpec(parsing: String(body))
        switch spec {
        case .hci:
            // A user channel carries one packet per read/write, not a byte stream to relay.
            throw TransportError(.badSpec, "bad tap side '\(text)': hci:N is not an H4 byte stream; \(Self.usage)")
        case .serial where listens:
            throw TransportError(.badSpec, "bad tap side '\(text)': a serial line is opened, not listened on (serial:PATH[@BAUD])")
        default: break
        }
    }

    public var description: String { (listens ? "listen:" : "") + spec.description }

    /// The file this side names (UNIX socket, serial device), which must never be an output.
    public var path: String? {
        switch spec {
        case .unix(let p): p
        case .serial(let p, _, _): p
        default: nil
        }
    }
}

/// Sits between a host stack and a controller speaking H4 (Core 5.4 Vol 4 Part A §2):
/// every byte read from one side is written to the other at once, unchanged, whatever
/// packet boundaries the reads fall on. A copy of each direction goes through its own
/// `H4Framer`, and every whole packet is reported (host→controller `.sent`,
/// controller→host `.received`) after its bytes have been forwarded.
public final class HCITap {
    public struct Counts: Sendable, Equatable {
        public var sentPackets = 0, receivedPackets = 0
        public var sentBytes = 0, receivedBytes = 0
        /// Bytes that could not start an H4 packet (forwarded all the same).
        public var discardedBytes = 0
        /// Bytes of a packet still incomplete when the tap stopped.
        public var pendingBytes = 0
    }

    /// Why `run` returned.
    public enum Stop: Sendable, Equatable {
        case hostClosed(String), controllerClosed(String), interrupted
        /// The tap itself failed (poll); both sides were closed.
        case failed(String)

        public var description: String {
            switch self {
            case .hostClosed(let why): "host side closed (\(why))"
            case .controllerClosed(let why): "controller side closed (\(why))"
            case .interrupted: "interrupted"
            case .failed(let why): "failed: \(why)"
            }
        }
    }

    public let host: TapEndpoint
    public let controller: TapEndpoint
    public private(set) var counts = Counts()
    private var fds: [Int32] = [-1, -1] // 0 host, 1 controller
    private var listeners: [Listener?] = [nil, nil]
    private let system = PosixSocketSystem()
    /// Bytes per direction read but not yet written; reading pauses above this.
    private let maxPending = 1 << 20

    public init(host: TapEndpoint, controller: TapEndpoint) {
        self.host = host; self.controller = controller
    }

    deinit { close() }

    /// Binds the listening sides and opens the others. `announce` is told, per listening
    /// side, where it waits ("tcp:127.0.0.1:9480").
    public func prepare(announce: (String) -> Void) throws(TransportError) {
        for (i, side) in [host, controller].enumerated() where side.listens {
            let l = try Listener(spec: side.spec)
            listeners[i] = l
            announce(l.name)
        }
        for (i, side) in [host, controller].enumerated() where !side.listens {
            let t = try side.spec.open(system: system)
            fds[i] = t.takeDescriptor()
        }
    }

    /// Waits for each listening side to connect. False when `shouldStop` said so first.
    public func accept(shouldStop: () -> Bool) throws(TransportError) -> Bool {
        for i in 0..<2 {
            guard let l = listeners[i] else { continue }
            guard let fd = try l.accept(shouldStop: shouldStop) else { return false }
            fds[i] = fd
            l.close()
            listeners[i] = nil
        }
        return true
    }

    private enum Closed: Error { case side(Int, String), failed(String) }

    /// Forwards until a side closes or `shouldStop` returns true (checked at least every
    /// 100 ms), calling `onPacket` for every whole H4 packet in the order read.
    public func run(shouldStop: () -> Bool, onPacket: (HCITapEvent) -> Void) -> Stop {
        var out: [[UInt8]] = [[], []] // bytes waiting to be written to side i
        var framers = [H4Framer(), H4Framer()]
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        defer {
            counts.discardedBytes = framers[0].discardedBytes + framers[1].discardedBytes
            counts.pendingBytes = framers[0].pendingByteCount + framers[1].pendingByteCount
        }
        func stop(_ side: Int, _ why: String) -> Stop { side == 0 ? .hostClosed(why) : .controllerClosed(why) }
        do throws(Closed) {
            while true {
                if shouldStop() {
                    drain(&out, seconds: 0.5)
                    return .interrupted
                }
                var p = (0..<2).map { i in
                    var ev = Int16(0)
                    if out[1 - i].count < maxPending { ev |= Int16(POLLIN) }
                    if !out[i].isEmpty { ev |= Int16(POLLOUT) }
                    return pollfd(fd: fds[i], events: ev, revents: 0)
                }
                let rc = poll(&p, 2, 100)
                if rc < 0 {
                    if errno == EINTR { continue }
                    throw Closed.failed("poll: \(SystemErrno(errno))")
                }
                if rc == 0 { continue }
                for i in 0..<2 {
                    let re = Int32(p[i].revents)
                    if re & Int32(POLLOUT) != 0 { try flush(&out[i], to: i) }
                    guard re & Int32(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
                    let fd = fds[i], system = self.system
                    let result = buffer.withUnsafeMutableBytes { b in Result { () throws(SystemErrno) in try system.read(fd, into: b) } }
                    let n: Int
                    switch result {
                    case .success(let count): n = count
                    case .failure(let e) where e.code == EAGAIN || e.code == EWOULDBLOCK: continue
                    case .failure(let e): throw Closed.side(i, "\(e)")
                    }
                    if n == 0 { throw Closed.side(i, "end of stream") }
                    // Forward first, then look at the copy.
                    let other = 1 - i
                    out[other].append(contentsOf: buffer[0..<n])
                    try flush(&out[other], to: other)
                    if i == 0 { counts.sentBytes += n } else { counts.receivedBytes += n }
                    framers[i].append(buffer[0..<n])
                    let now = currentTimestamp()
                    while let packet = framers[i].next() {
                        if i == 0 { counts.sentPackets += 1 } else { counts.receivedPackets += 1 }
                        onPacket(HCITapEvent(direction: i == 0 ? .sent : .received, packet: packet, timestamp: now))
                    }
                }
            }
        } catch {
            switch error {
            case .failed(let why): return .failed(why)
            case .side(let side, let why):
                // What one side said before it went is still owed to the other.
                out[side] = []
                drain(&out, seconds: 1)
                return stop(side, why)
            }
        }
    }

    /// Writes what `bytes` holds to side `i` until it would block.
    private func flush(_ bytes: inout [UInt8], to i: Int) throws(Closed) {
        var done = 0
        defer { if done > 0 { bytes.removeFirst(done) } }
        while done < bytes.count {
            let fd = fds[i], system = self.system, start = done
            let result = bytes.withUnsafeBytes { b in
                Result { () throws(SystemErrno) in try system.write(fd, UnsafeRawBufferPointer(rebasing: b[start...])) }
            }
            switch result {
            case .success(let n): done += n
            case .failure(let e) where e.code == EAGAIN || e.code == EWOULDBLOCK: return
            case .failure(let e): throw Closed.side(i, "\(e)")
            }
        }
    }

    /// Best effort, bounded: hands over what is still queued before the tap closes.
    private func drain(_ out: inout [[UInt8]], seconds: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        for i in 0..<2 where fds[i] >= 0 {
            while !out[i].isEmpty, ContinuousClock.now < deadline {
                do throws(Closed) { try flush(&out[i], to: i) } catch { break }
                if !out[i].isEmpty { _ = try? system.wait(fds[i], forWriting: true, timeoutMilliseconds: 50) }
            }
        }
    }

    public func close() {
        for i in 0..<2 {
            if fds[i] >= 0 { system.close(fds[i]); fds[i] = -1 }
            listeners[i]?.close()
            listeners[i] = nil
        }
    }
}

/// A listening TCP or UNIX socket that takes one connection.
final class Listener {
    let name: String
    private var fd: Int32 = -1
    private var unixPath: String?

    init(spec: TransportSpec) throws(TransportError) {
        name = spec.description
        switch spec {
        case .tcp(let host, let port): try listenTCP(host: host, port: port)
        case .unix(let path): try listenUNIX(path: path)
        default: throw TransportError(.badSpec, "\(name): only tcp: and unix: can listen")
        }
    }

    deinit { close() }

    private func fail(_ what: String, _ e: Int32) -> TransportError {
        let hint = e == EADDRINUSE ? " (address in use: another process listens there)" : ""
        return TransportError(.openFailed, errno: e, "listen:\(name): \(what): \(SystemErrno(e))\(hint)")
    }

    private func listenTCP(host: String, port: UInt16) throws(TransportError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            throw TransportError(.openFailed, "listen:\(name): cannot resolve '\(host)': \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(res) }
        var last: Int32 = EADDRNOTAVAIL
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let s = socket(a.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), a.pointee.ai_protocol)
            if s < 0 { last = errno; continue }
            var one: Int32 = 1 // restart at once on the same port (TIME_WAIT of the last run)
            _ = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            if bind(s, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0, listen(s, 1) == 0 {
                fd = s
                return
            }
            last = errno
            _ = Glibc.close(s)
        }
        throw fail("cannot listen", last)
    }

    private func listenUNIX(path: String) throws(TransportError) {
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else {
                throw TransportError(.openFailed, "listen:\(name): \(path) exists and is not a socket; refusing to replace it")
            }
            // A socket left by a process that is gone is replaced; a live one is not.
            if let probe = try? SocketOpener(system: PosixSocketSystem()).unix(path: path, timeout: .milliseconds(200), name: name) {
                probe.close()
                throw TransportError(.openFailed, "listen:\(name): another process listens on \(path)")
            }
            unlink(path)
        }
        let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw fail("socket", errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { p in
            for (i, b) in path.utf8.enumerated() where i < p.count - 1 { p[i] = b }
        }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        guard ok, listen(s, 1) == 0 else {
            let e = errno
            _ = Glibc.close(s)
            throw fail("cannot listen", e)
        }
        fd = s
        unixPath = path
    }

    /// The first connection, non-blocking; nil when `shouldStop` said so first.
    func accept(shouldStop: () -> Bool) throws(TransportError) -> Int32? {
        while true {
            if shouldStop() { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let rc = poll(&p, 1, 100)
            if rc < 0 && errno != EINTR { throw fail("poll", errno) }
            guard rc > 0 else { continue }
            let c = Glibc.accept(fd, nil, nil)
            if c < 0 {
                if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                throw fail("accept", errno)
            }
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            _ = fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK)
            if unixPath == nil {
                var one: Int32 = 1 // H4 packets are small and latency matters
                _ = setsockopt(c, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            return c
        }
    }

    func close() {
        if fd >= 0 { _ = Glibc.close(fd); fd = -1 }
        if let p = unixPath { unlink(p); unixPath = nil }
    }
}
