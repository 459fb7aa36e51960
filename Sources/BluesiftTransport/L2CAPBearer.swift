#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CBluetooth
import BluesiftWire

/// ATT PDUs over a link someone else holds: no HCI, one PDU per send and receive.
public protocol ATTBearer: AnyObject {
    func send(_ pdu: [UInt8]) throws(TransportError)
    /// The next PDU, or nil when `timeout` passes first; `.closed` once the link is gone.
    func receive(timeout: Duration) throws(TransportError) -> [UInt8]?
    /// Asks for an encrypted link (the kernel's SMP pairs or re-encrypts); returns the level
    /// and key size reached.
    func secure(level: UInt8, timeout: Duration) throws(TransportError) -> (level: UInt8, keySize: UInt8)
    func close()
    var name: String { get }
}

/// The Linux kernel's LE L2CAP socket on the ATT fixed channel (cid 4): the kernel connects
/// (by address and address type) and secures the link (BT_SECURITY, its own SMP); the adapter
/// stays with BlueZ. Needs no capability.
public final class L2CAPBearer: ATTBearer {
    public let name: String
    private let system: any SocketSystem
    private var fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    static let btprotoL2CAP: Int32 = 0
    static let solBluetooth: Int32 = 274
    static let btSecurity: Int32 = 4
    static let attCID: UInt16 = 4
    /// l2_bdaddr_type: BDADDR_LE_PUBLIC 1, BDADDR_LE_RANDOM 2.
    public static func socketAddressType(random: Bool) -> UInt8 { random ? 2 : 1 }

    /// struct sockaddr_l2: family, psm (LE16), bdaddr (little-endian), cid (LE16), bdaddr_type.
    static func address(_ a: BDAddr, cid: UInt16, type: UInt8) -> [UInt8] {
        var b = [UInt8](repeating: 0, count: 14)
        let family = UInt16(LinuxBluetooth.family)
        b[0] = UInt8(family & 0xFF); b[1] = UInt8(family >> 8)
        for (i, x) in a.littleEndianBytes.enumerated() { b[4 + i] = x }
        b[10] = UInt8(cid & 0xFF); b[11] = UInt8(cid >> 8)
        b[12] = type
        return b
    }

    /// Connects from adapter `index` to `peer` on cid 4.
    public init(
        index: UInt16, peer: BDAddr, random: Bool, timeout: Duration,
        system: any SocketSystem = PosixSocketSystem()
    ) throws(TransportError) {
        self.system = system
        name = "l2cap:\(index)"
        let dev = "hci\(index)"
        let adapters = HCIAdapters(system: system)
        let found: HCIAdapter?
        do throws(SystemErrno) { found = try adapters.adapter(index) } catch {
            throw SocketOpener.hciError(error, dev: dev, index: index, call: "HCIGETDEVINFO")
        }
        guard let found else {
            throw TransportError(.noSuchAdapter, errno: ENODEV, "no Bluetooth adapter \(dev): \(adapters.describe())")
        }
        guard found.up, let local = found.address else {
            throw TransportError(.openFailed, "\(dev) is down: l2cap:\(index) uses the adapter as BlueZ runs it (`bluetoothctl power on`, or `sudo hciconfig \(dev) up`)")
        }
        do throws(SystemErrno) {
            fd = try system.socket(
                domain: LinuxBluetooth.family, type: Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                protocol: Self.btprotoL2CAP)
        } catch {
            throw SocketOpener.hciError(error, dev: dev, index: index, call: "socket")
        }
        do throws(SystemErrno) {
            // Bound to the adapter's own address: that picks the adapter.
            try system.bind(fd, address: Self.address(local, cid: Self.attCID, type: 1))
            try system.connect(
                fd, address: Self.address(peer, cid: Self.attCID, type: Self.socketAddressType(random: random)),
                timeoutMilliseconds: FDTransport.milliseconds(until: .now + timeout))
        } catch {
            let why: String
            switch error.code {
            case ETIMEDOUT, EHOSTDOWN, EHOSTUNREACH: why = "\(peer) did not answer (not advertising, or out of range)"
            case ECONNREFUSED: why = "\(peer) refused the connection"
            default: why = "\(error)"
            }
            throw TransportError(.openFailed, errno: error.code, "l2cap:\(index): connecting to \(peer) (\(random ? "random" : "public")): \(why)")
        }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { system.close(fd); fd = -1 }
    }

    public func send(_ pdu: [UInt8]) throws(TransportError) {
        guard fd >= 0 else { throw TransportError(.closed, "\(name): link closed") }
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let r = pdu.withUnsafeBytes { p in Result { () throws(SystemErrno) in try system.write(fd, p) } }
            switch r {
            case .success: return
            case .failure(let e) where e.code == EAGAIN || e.code == EWOULDBLOCK:
                // Also while the kernel is encrypting the link (BT_SK_SUSPEND).
                let left = FDTransport.milliseconds(until: deadline)
                if left == 0 { throw TransportError(.io, "\(name): write timed out") }
                _ = try? system.wait(fd, forWriting: true, timeoutMilliseconds: left)
            case .failure(let e):
                close()
                throw TransportError(.closed, errno: e.code, "\(name): link lost: \(e)")
            }
        }
    }

    public func receive(timeout: Duration) throws(TransportError) -> [UInt8]? {
        guard fd >= 0 else { throw TransportError(.closed, "\(name): link closed") }
        let deadline = ContinuousClock.now + timeout
        while true {
            let fd = self.fd, system = self.system
            let r = buffer.withUnsafeMutableBytes { p in Result { () throws(SystemErrno) in try system.read(fd, into: p) } }
            switch r {
            case .success(let n):
                if n == 0 { close(); throw TransportError(.closed, "\(name): the device disconnected") }
                return Array(buffer[0..<n])
            case .failure(let e) where e.code == EAGAIN || e.code == EWOULDBLOCK:
                let left = FDTransport.milliseconds(until: deadline)
                if left == 0 { return nil }
                do { _ = try system.wait(fd, forWriting: false, timeoutMilliseconds: left) } catch {
                    throw TransportError(.io, errno: error.code, "\(name): poll failed: \(error)")
                }
            case .failure(let e):
                close()
                throw TransportError(.closed, errno: e.code, "\(name): link lost: \(e)")
            }
        }
    }

    public func secure(level: UInt8, timeout: Duration) throws(TransportError) -> (level: UInt8, keySize: UInt8) {
        guard fd >= 0 else { throw TransportError(.closed, "\(name): link closed") }
        // struct bt_security { u8 level; u8 key_size; }: the kernel pairs or re-encrypts now.
        do throws(SystemErrno) { try system.setOption(fd, level: Self.solBluetooth, name: Self.btSecurity, value: [level, 0]) } catch {
            throw TransportError(.io, errno: error.code, "\(name): BT_SECURITY: \(error)")
        }
        // Writes are held until the link is encrypted; the socket is writable again then.
        let deadline = ContinuousClock.now + timeout
        while true {
            var got = [UInt8](repeating: 0, count: 2)
            do throws(SystemErrno) { try system.getOption(fd, level: Self.solBluetooth, name: Self.btSecurity, value: &got) } catch {
                throw TransportError(.io, errno: error.code, "\(name): BT_SECURITY: \(error)")
            }
            if got[0] >= level && got[1] > 0 { return (got[0], got[1]) }
            let left = FDTransport.milliseconds(until: deadline)
            if left == 0 { throw TransportError(.io, "\(name): the link was not encrypted within \(timeout) (the kernel's pairing failed or needs an agent)") }
            usleep(50_000)
        }
    }
}
