#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CBluetooth
import BluesiftCapture

/// The kernel's HCI monitor channel (HCI_CHANNEL_MONITOR, every adapter): each datagram is
/// `struct hci_mon_hdr` (opcode, index, length; LE16 each) and the packet, as btmon reads it.
/// Binding needs CAP_NET_RAW. The kernel first replays what exists (New Index, Index Info,
/// Open Index per adapter), then sends everything as it happens.
public final class HCIMonitor {
    public struct Packet {
        public var opcode: UInt16
        public var adapter: UInt16
        /// SO_TIMESTAMP's time, else the time it was read.
        public var timestamp: Timestamp
        /// Valid until the next `next` call.
        public var payload: UnsafeRawBufferPointer
    }

    private let system: any SocketSystem
    private var fd: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 6 + 65_536, alignment: 8)

    public init(system: any SocketSystem = PosixSocketSystem()) throws(TransportError) {
        self.system = system
        do throws(SystemErrno) {
            fd = try system.socket(
                domain: LinuxBluetooth.family, type: Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                protocol: bluesift_btproto_hci())
        } catch {
            buffer.deallocate()
            throw Self.error(error)
        }
        do throws(SystemErrno) {
            try system.bind(fd, address: LinuxBluetooth.hciAddress(device: LinuxBluetooth.devNone, channel: LinuxBluetooth.channelMonitor))
            try system.setOption(fd, level: SOL_SOCKET, name: LinuxBluetooth.soTimestamp, value: [1, 0, 0, 0])
            try system.setNonBlocking(fd)
        } catch {
            throw Self.error(error) // every property is set: deinit closes and frees
        }
    }

    deinit {
        close()
        buffer.deallocate()
    }

    public func close() {
        if fd >= 0 { system.close(fd); fd = -1 }
    }

    static func error(_ e: SystemErrno) -> TransportError {
        switch e.code {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return TransportError(.noBluetoothSockets, errno: e.code, "this kernel has no Bluetooth sockets (AF_BLUETOOTH unavailable): nothing to capture")
        case EPERM, EACCES:
            return TransportError(
                .permissionDenied, errno: e.code,
                "capturing from the kernel's monitor channel needs CAP_NET_RAW: run as root, or grant it once with `sudo setcap cap_net_admin,cap_net_raw+ep $(which bluesift)`")
        default:
            return TransportError(.openFailed, errno: e.code, "cannot open the kernel's HCI monitor channel: \(e)")
        }
    }

    /// The next packet, or nil when `timeout` passes first.
    public func next(timeout: Duration) throws(TransportError) -> Packet? {
        guard fd >= 0 else { throw TransportError(.closed, "monitor channel closed") }
        let deadline = ContinuousClock.now + timeout
        while true {
            let got: Datagram
            do throws(SystemErrno) { got = try system.receive(fd, into: buffer) } catch {
                guard error.code == EAGAIN || error.code == EWOULDBLOCK else {
                    throw TransportError(.io, errno: error.code, "monitor channel: read failed: \(error)")
                }
                let left = FDTransport.milliseconds(until: deadline)
                if left == 0 { return nil }
                do { _ = try system.wait(fd, forWriting: false, timeoutMilliseconds: left) } catch {
                    throw TransportError(.io, errno: error.code, "monitor channel: poll failed: \(error)")
                }
                continue
            }
            guard got.count >= 6 else { continue } // shorter than its header: not a packet
            func u16(_ i: Int) -> UInt16 { UInt16(buffer[i]) | UInt16(buffer[i + 1]) << 8 }
            let length = min(Int(u16(4)), got.count - 6)
            return Packet(
                opcode: u16(0), adapter: u16(2), timestamp: got.time ?? currentTimestamp(),
                payload: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[6..<(6 + length)]))
        }
    }
}
