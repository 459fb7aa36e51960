#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CBluetooth
import BluesiftWire

/// Linux Bluetooth ABI numbers the headers give only as macros Swift cannot import
/// (include/net/bluetooth/hci_sock.h, bluetooth.h, l2cap.h; generic ioctl encoding, as on
/// x86 and ARM).
public enum LinuxBluetooth {
    static let hciDevUp: UInt = 0x4004_48C9 // _IOW('H', 201, int)
    static let hciDevDown: UInt = 0x4004_48CA // _IOW('H', 202, int)
    static let hciGetDevList: UInt = 0x8004_48D2 // _IOR('H', 210, int)
    static let hciGetDevInfo: UInt = 0x8004_48D3 // _IOR('H', 211, int)
    static let channelMonitor: UInt16 = 2
    static let devNone: UInt16 = 0xFFFF
    static let maxAdapters = 16
    /// SO_TIMESTAMP_OLD: a struct timeval per datagram (what btmon asks for).
    static let soTimestamp: Int32 = 29
    /// Generic socket options Swift's Glibc does not export (asm-generic/socket.h).
    static let soRcvBufForce: Int32 = 33
    static let soRxqOvfl: Int32 = 40
    /// SO_MEMINFO (Linux 4.12): u32 sk_meminfo[9]; index 8 is SK_MEMINFO_DROPS.
    static let soMemInfo: Int32 = 55
    static var family: Int32 { bluesift_af_bluetooth() }

    /// sockaddr_hci: family, adapter, channel (host order u16 each).
    static func hciAddress(device: UInt16, channel: UInt16) -> [UInt8] {
        var sa = sockaddr_hci()
        sa.hci_family = sa_family_t(family)
        sa.hci_dev = device
        sa.hci_channel = channel
        return withUnsafeBytes(of: &sa) { Array($0) }
    }
}

/// An adapter as the kernel lists it.
public struct HCIAdapter: Sendable, Hashable, CustomStringConvertible {
    public var index: UInt16
    public var up: Bool
    /// The adapter's own address (from HCIGETDEVINFO; nil from the list).
    public var address: BDAddr?
    public var name: String { "hci\(index)" }
    public var description: String { "\(name) (\(up ? "up" : "down"))" }
}

/// The kernel's adapter list and power switch (HCI ioctls on a raw HCI socket): what
/// `hciconfig hciN down/up` does.
public struct HCIAdapters {
    let system: any SocketSystem

    public init(system: any SocketSystem = PosixSocketSystem()) { self.system = system }

    func withControlSocket<T>(_ body: (Int32) throws(SystemErrno) -> T) throws(SystemErrno) -> T {
        let fd = try system.socket(
            domain: LinuxBluetooth.family, type: Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            protocol: bluesift_btproto_hci())
        defer { system.close(fd) }
        return try body(fd)
    }

    func ioctl(_ fd: Int32, _ request: UInt, _ buf: inout [UInt8]) throws(SystemErrno) {
        let failure: SystemErrno? = buf.withUnsafeMutableBytes { b in
            do throws(SystemErrno) { try system.ioctl(fd, request: request, buffer: b); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Every adapter (HCIGETDEVLIST: u16 count, then {u16 index, u32 flags} per adapter).
    public func list() throws(SystemErrno) -> [HCIAdapter] {
        try withControlSocket { fd throws(SystemErrno) in
            var buf = [UInt8](repeating: 0, count: 4 + 8 * LinuxBluetooth.maxAdapters)
            buf[0] = UInt8(LinuxBluetooth.maxAdapters)
            try ioctl(fd, LinuxBluetooth.hciGetDevList, &buf)
            let n = min(Int(buf[0]) | Int(buf[1]) << 8, LinuxBluetooth.maxAdapters)
            return (0..<n).map { i in
                let o = 4 + 8 * i
                return HCIAdapter(index: UInt16(buf[o]) | UInt16(buf[o + 1]) << 8, up: buf[o + 4] & 1 != 0, address: nil) // HCI_UP is bit 0
            }.sorted { $0.index < $1.index } // the kernel lists the newest first
        }
    }

    /// The adapter, or nil when there is none at that index (HCIGETDEVINFO: ENODEV).
    public func adapter(_ index: UInt16) throws(SystemErrno) -> HCIAdapter? {
        try withControlSocket { fd throws(SystemErrno) in
            // struct hci_dev_info: dev_id u16, name[8], bdaddr[6], flags u32 at 16, … (92 bytes).
            var buf = [UInt8](repeating: 0, count: 128)
            buf[0] = UInt8(index & 0xFF); buf[1] = UInt8(index >> 8)
            do throws(SystemErrno) { try ioctl(fd, LinuxBluetooth.hciGetDevInfo, &buf) } catch {
                if error.code == ENODEV { return nil }
                throw error
            }
            let address = buf.withUnsafeBytes { BDAddr(littleEndian: UnsafeRawBufferPointer(rebasing: $0[10..<16])) }
            return HCIAdapter(index: index, up: buf[16] & 1 != 0, address: address)
        }
    }

    /// HCIDEVUP / HCIDEVDOWN (CAP_NET_ADMIN). Already in that state is not an error.
    public func setPower(_ index: UInt16, up: Bool) throws(SystemErrno) {
        try withControlSocket { fd throws(SystemErrno) in
            do throws(SystemErrno) {
                try system.ioctl(fd, request: up ? LinuxBluetooth.hciDevUp : LinuxBluetooth.hciDevDown, value: Int32(index))
            } catch {
                if up && error.code == EALREADY { return }
                throw error
            }
        }
    }

    /// "adapters here: hci0 (up), hci1 (down)" or "there is no Bluetooth adapter here".
    public func describe() -> String {
        guard let all = try? list() else { return "the adapters cannot be listed" }
        return all.isEmpty ? "there is no Bluetooth adapter here" : "adapters here: " + all.map(\.description).joined(separator: ", ")
    }
}

/// An adapter bluesift powered down to use its user channel: powered up again when the user
/// channel closes, at exit, or on SIGINT/SIGTERM (`restoreFromSignal`, async-signal-safe).
public enum AdapterLease {
    // Plain globals a signal handler can read: the user channel's fd and the adapter taken.
    nonisolated(unsafe) static var userFD: Int32 = -1
    nonisolated(unsafe) static var index: Int32 = -1

    static func take(index: UInt16, fd: Int32) { userFD = fd; Self.index = Int32(index) }

    /// Closes the user channel, then powers the adapter up. Only system calls: safe in a
    /// signal handler. False when the kernel refused.
    @discardableResult
    public static func restoreFromSignal() -> Bool {
        let i = index
        guard i >= 0 else { return true }
        index = -1
        if userFD >= 0 { _ = Glibc.close(userFD); userFD = -1 }
        let s = Glibc.socket(bluesift_af_bluetooth(), Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), bluesift_btproto_hci())
        guard s >= 0 else { return false }
        defer { _ = Glibc.close(s) }
        // Right after the user channel closes the kernel may still be closing the device: on a
        // slow machine (a guest under TCG) for over a second. Up to 5 s.
        for _ in 0..<250 {
            if Glibc.ioctl(s, LinuxBluetooth.hciDevUp, i) == 0 || errno == EALREADY { return true }
            if errno != EBUSY && errno != EAGAIN && errno != EINTR { return false }
            usleep(20_000)
        }
        return false
    }

    /// Forgets the adapter (restored by the caller, through the seam).
    static func release() { index = -1; userFD = -1 }

    /// Whether an adapter is held.
    public static var held: Bool { index >= 0 }
}
