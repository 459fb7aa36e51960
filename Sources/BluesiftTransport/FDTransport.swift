#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BluesiftCapture

/// H4 over any file descriptor: a TCP or UNIX stream, a serial line, or an HCI user-channel
/// socket (which delivers one H4 packet per read; the framer copes with both).
public final class FDTransport: HCITransport {
    public let name: String
    public var tap: ((HCITapEvent) -> Void)?
    /// How long a write may wait for the peer to drain before failing.
    public var writeTimeout: Duration = .seconds(5)
    private var fd: Int32
    private let system: any SocketSystem
    private var framer = H4Framer()
    private var readBuffer = [UInt8](repeating: 0, count: 4096)
    /// Set for an HCI user channel (`watchKernelBuffer`): its datagrams are read with recvmsg,
    /// for the kernel's drop count (SO_RXQ_OVFL) where the kernel attaches it.
    private var kernel: KernelBuffer?

    /// Takes ownership of `fd`, which should be non-blocking.
    public init(fd: Int32, system: any SocketSystem, name: String) {
        self.fd = fd; self.system = system; self.name = name
    }

    /// Runs once, after the descriptor is closed (an adapter taken for the user channel is
    /// powered up again).
    public var onClose: (() -> Void)?

    deinit { close() }

    public var isOpen: Bool { fd >= 0 }

    /// The user channel's receive buffer and the packets the kernel dropped when it was full,
    /// counted until the descriptor closed; nil for a byte stream.
    public var kernelBuffer: KernelBuffer? {
        refreshKernelDrops()
        return kernel
    }

    /// Counts the kernel's drops on this socket from now on (SO_RXQ_OVFL is on, `bytes` the
    /// receive buffer obtained).
    func watchKernelBuffer(bytes: Int?) { kernel = KernelBuffer(bytes: bytes, dropped: 0) }

    /// SO_MEMINFO's drop count (the socket's sk_drops, as SO_RXQ_OVFL's): Linux 6.1's user
    /// channel attaches no SO_RXQ_OVFL (hci_sock_recvmsg adds the timestamp alone), and no
    /// kernel can when no packet follows the drops.
    private func refreshKernelDrops() {
        guard fd >= 0, kernel != nil else { return }
        var info = [UInt8](repeating: 0, count: 36)
        do throws(SystemErrno) {
            try system.getOption(fd, level: SOL_SOCKET, name: LinuxBluetooth.soMemInfo, value: &info)
            let drops = info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 32, as: UInt32.self) }
            noteKernelDrops(Int(drops))
        } catch {} // before Linux 4.12: SO_RXQ_OVFL's count alone
    }

    /// Both counts are the socket's one cumulative sk_drops, read at different times.
    private func noteKernelDrops(_ count: Int) {
        if var k = kernel, count > k.dropped { k.dropped = count; kernel = k }
    }

    /// Bytes skipped on the input because they could not start an H4 packet.
    public var discardedBytes: Int { framer.discardedBytes }

    public func send(_ kind: PacketKind, _ bytes: [UInt8]) throws(TransportError) {
        guard fd >= 0 else { throw TransportError(.closed, "\(name): transport closed") }
        let packet = H4Packet(kind, bytes)
        let wire = packet.h4Bytes
        let deadline = ContinuousClock.now + writeTimeout
        var off = 0
        while off < wire.count {
            let result = wire.withUnsafeBytes { p in
                Result { () throws(SystemErrno) in try system.write(fd, UnsafeRawBufferPointer(rebasing: p[off...])) }
            }
            switch result {
            case .success(let n): off += n
            case .failure(let error) where error.code == EAGAIN || error.code == EWOULDBLOCK:
                let left = Self.milliseconds(until: deadline)
                let ready = (try? system.wait(fd, forWriting: true, timeoutMilliseconds: left)) ?? false
                if !ready && left == 0 { throw TransportError(.io, "\(name): write timed out") }
            case .failure(let error):
                if error.code == EPIPE || error.code == ECONNRESET { close(); throw TransportError(.closed, errno: error.code, "\(name): peer closed the connection") }
                throw TransportError(.io, errno: error.code, "\(name): write failed: \(error)")
            }
        }
        tap?(HCITapEvent(direction: .sent, packet: packet, timestamp: currentTimestamp()))
    }

    public func receive(timeout: Duration) throws(TransportError) -> H4Packet? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let p = framer.next() {
                tap?(HCITapEvent(direction: .received, packet: p, timestamp: currentTimestamp()))
                return p
            }
            guard fd >= 0 else { throw TransportError(.closed, "\(name): transport closed") }
            let left = Self.milliseconds(until: deadline)
            let ready: Bool
            do { ready = try system.wait(fd, forWriting: false, timeoutMilliseconds: left) } catch {
                throw TransportError(.io, errno: error.code, "\(name): poll failed: \(error)")
            }
            if !ready {
                if left == 0 { return nil }
                continue
            }
            let fd = self.fd, system = self.system, datagrams = kernel != nil
            let result = readBuffer.withUnsafeMutableBytes { p in
                Result { () throws(SystemErrno) in
                    if datagrams { return try system.receive(fd, into: p) }
                    return Datagram(count: try system.read(fd, into: p))
                }
            }
            let n: Int
            switch result {
            case .success(let got):
                n = got.count
                if let drops = got.drops { noteKernelDrops(Int(drops)) }
            case .failure(let error) where error.code == EAGAIN || error.code == EWOULDBLOCK:
                continue
            case .failure(let error):
                if error.code == ECONNRESET || error.code == EIO || error.code == ENODEV || error.code == ENETDOWN {
                    close(); throw TransportError(.closed, errno: error.code, "\(name): connection lost: \(error)")
                }
                throw TransportError(.io, errno: error.code, "\(name): read failed: \(error)")
            }
            if n == 0 { close(); throw TransportError(.closed, "\(name): peer closed the connection") }
            framer.append(readBuffer[0..<n])
        }
    }

    public func close() {
        refreshKernelDrops() // the count goes with the socket
        if fd >= 0 { system.close(fd); fd = -1 }
        if let done = onClose { onClose = nil; done() }
    }

    /// Hands the descriptor over (the tap forwards raw bytes on it); this transport is closed after.
    func takeDescriptor() -> Int32 {
        let d = fd
        fd = -1
        return d
    }

    static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let d = deadline - ContinuousClock.now
        if d <= .zero { return 0 }
        let (s, atto) = d.components
        // Round up so a short positive remainder still waits instead of spinning.
        let ms = s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }
}
