#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CBluetooth

/// Opens sockets through a `SocketSystem`, turning errnos into messages a user can act on.
struct SocketOpener {
    let system: any SocketSystem

    func tcp(host: String, port: UInt16, timeout: Duration, name: String) throws(TransportError) -> FDTransport {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            throw TransportError(.openFailed, "\(name): cannot resolve '\(host)': \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(res) }
        var lastError = SystemErrno(ECONNREFUSED)
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let address = Array(UnsafeRawBufferPointer(start: a.pointee.ai_addr, count: Int(a.pointee.ai_addrlen)))
            do throws(SystemErrno) {
                let fd = try system.socket(
                    domain: a.pointee.ai_family,
                    type: Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                    protocol: a.pointee.ai_protocol)
                do throws(SystemErrno) {
                    try system.connect(fd, address: address, timeoutMilliseconds: FDTransport.milliseconds(until: .now + timeout))
                } catch { system.close(fd); throw error }
                var one: Int32 = 1 // H4 packets are small and latency matters
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return FDTransport(fd: fd, system: system, name: name)
            } catch { lastError = error }
        }
        throw TransportError(.openFailed, errno: lastError.code, "\(name): " + Self.why(lastError))
    }

    /// What failed, and what to check: a refused connection means nothing listens there.
    static func why(_ e: SystemErrno) -> String {
        switch e.code {
        case ECONNREFUSED:
            return "connection refused: nothing is listening there (start the controller's H4 bridge or virtual device first, e.g. Tests/VirtualDevice/start_rig.sh)"
        case ENOENT:
            return "no such socket (start the controller's H4 bridge or virtual device first)"
        default:
            return "cannot connect: \(e)"
        }
    }

    func unix(path: String, timeout: Duration, name: String) throws(TransportError) -> FDTransport {
        var address = [UInt8](repeating: 0, count: MemoryLayout<sockaddr_un>.size)
        let family = sa_family_t(AF_UNIX)
        withUnsafeBytes(of: family) { for (i, b) in $0.enumerated() { address[i] = b } }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        for (i, b) in path.utf8.enumerated() where pathOffset + i < address.count - 1 { address[pathOffset + i] = b }
        do throws(SystemErrno) {
            let fd = try system.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), protocol: 0)
            do {
                try system.connect(fd, address: address, timeoutMilliseconds: FDTransport.milliseconds(until: .now + timeout))
            } catch { system.close(fd); throw error }
            return FDTransport(fd: fd, system: system, name: name)
        } catch {
            throw TransportError(.openFailed, errno: error.code, "\(name): " + Self.why(error))
        }
    }

    /// Linux HCI user channel: exclusive raw access to a controller the kernel has let go of.
    /// An adapter that is up is powered down first (`notice` says so) and powered up again
    /// when the transport closes (or on SIGINT/SIGTERM, through `AdapterLease`).
    func hciUserChannel(index: UInt16, name: String, notice: ((String) -> Void)?) throws(TransportError) -> FDTransport {
        let dev = "hci\(index)"
        let adapters = HCIAdapters(system: system)
        var takenUp = false
        let found: HCIAdapter?
        do throws(SystemErrno) { found = try adapters.adapter(index) } catch {
            // ENOTTY: a system without the adapter ioctls (a test's fake): just bind.
            guard error.code == ENOTTY else { throw Self.hciError(error, dev: dev, index: index, call: "HCIGETDEVINFO") }
            found = HCIAdapter(index: index, up: false)
        }
        guard let found else {
            throw TransportError(.noSuchAdapter, errno: ENODEV, "no Bluetooth adapter \(dev): \(adapters.describe())")
        }
        if found.up {
            do throws(SystemErrno) { try adapters.setPower(index, up: false) } catch {
                if error.code == EPERM || error.code == EACCES {
                    throw TransportError(
                        .permissionDenied, errno: error.code,
                        "\(dev) is up and taking it over needs CAP_NET_ADMIN: run as root, or grant it once with `sudo setcap cap_net_admin,cap_net_raw+ep $(which bluesift)`")
                }
                throw Self.hciError(error, dev: dev, index: index, call: "HCIDEVDOWN")
            }
            takenUp = true
            notice?("\(dev) is up: powered it down for the run (it is powered up again afterwards)")
        }
        let restore = { [system] () -> Void in
            guard takenUp else { return }
            if AdapterLease.userFD >= 0 { system.close(AdapterLease.userFD) }
            AdapterLease.release()
            // Right after the user channel closes the kernel may still be closing the device: on a
            // slow machine (a guest under TCG) for over a second. Up to 5 s.
            var failure: SystemErrno?
            for _ in 0..<250 {
                do throws(SystemErrno) { try adapters.setPower(index, up: true); failure = nil; break } catch {
                    failure = error
                    guard error.code == EBUSY || error.code == EAGAIN || error.code == EINTR else { break }
                    usleep(20_000)
                }
            }
            if let failure {
                notice?("\(dev) could not be powered up again (\(failure)): bring it up with `sudo hciconfig \(dev) up`")
            }
        }
        let fd: Int32
        do throws(SystemErrno) {
            fd = try system.socket(
                domain: bluesift_af_bluetooth(),
                type: Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                protocol: bluesift_btproto_hci())
        } catch {
            if takenUp { AdapterLease.take(index: index, fd: -1); restore() }
            throw Self.hciError(error, dev: dev, index: index, call: "socket")
        }
        if takenUp { AdapterLease.take(index: index, fd: fd) }
        let address = LinuxBluetooth.hciAddress(device: index, channel: UInt16(bluesift_hci_channel_user()))
        do throws(SystemErrno) {
            try system.bind(fd, address: address)
            try system.setNonBlocking(fd)
        } catch {
            if takenUp { restore() } else { system.close(fd) }
            throw Self.hciError(error, dev: dev, index: index, call: "bind")
        }
        let t = FDTransport(fd: fd, system: system, name: name)
        t.watchKernelBuffer(bytes: enlargeReceiveBuffer(fd, dev: dev, notice: notice))
        if takenUp {
            // The lease closes the descriptor itself (the signal path too): the transport
            // forgets it and restores instead.
            t.onClose = {
                AdapterLease.userFD = -1; restore()
            }
        }
        return t
    }

    /// What a user channel's receive buffer is set to. A notification flood waits there while
    /// bluesift is busy, and past it the kernel drops packets: the default
    /// (net.core.rmem_default, 212,992 bytes) held ~100 ACL packets, ~2 KB each as the kernel
    /// counts them. 8 MB (16 MB once the kernel doubles it) holds ~8,000: 0.8 s of the H4
    /// flood test's 10,000 notifications/s with nothing read.
    static let receiveBuffer: Int32 = 8 << 20

    /// SO_RCVBUFFORCE (CAP_NET_ADMIN, which the user channel needs anyway), else SO_RCVBUF
    /// (capped at net.core.rmem_max); SO_RXQ_OVFL on, so the kernel's drops are counted. The
    /// size obtained (getsockopt), said in one line when it is smaller than asked.
    func enlargeReceiveBuffer(_ fd: Int32, dev: String, notice: ((String) -> Void)?) -> Int? {
        let want = withUnsafeBytes(of: Self.receiveBuffer) { Array($0) }
        var refused: SystemErrno?
        do throws(SystemErrno) { try system.setOption(fd, level: SOL_SOCKET, name: LinuxBluetooth.soRcvBufForce, value: want) } catch {
            refused = error
            try? system.setOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: want)
        }
        try? system.setOption(fd, level: SOL_SOCKET, name: LinuxBluetooth.soRxqOvfl, value: [1, 0, 0, 0])
        var got = [UInt8](repeating: 0, count: 4)
        guard (try? system.getOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: &got)) != nil else { return nil }
        let bytes = Int(got.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) })
        let asked = 2 * Int(Self.receiveBuffer) // as the kernel reports it
        if bytes < asked {
            notice?(
                "\(dev): the kernel gave the user channel a receive buffer of \(Self.size(bytes)), not \(Self.size(asked))"
                    + (refused.map { " (SO_RCVBUFFORCE: \($0); SO_RCVBUF stops at net.core.rmem_max)" } ?? "")
                    + ": a notification flood past it is dropped by the kernel (counted in the report)")
        }
        return bytes
    }

    /// "16 MiB", "416 KiB".
    static func size(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }

    static func hciError(_ e: SystemErrno, dev: String, index: UInt16, call: String) -> TransportError {
        switch e.code {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return TransportError(
                .noBluetoothSockets, errno: e.code,
                "this kernel has no Bluetooth sockets (AF_BLUETOOTH unavailable); use a tcp:, unix: or serial: transport instead")
        case EBUSY, EALREADY:
            return TransportError(
                .adapterBusy, errno: e.code,
                "\(dev) is busy: bring it down first with `sudo hciconfig \(dev) down` or `sudo btmgmt --index \(index) power off`")
        case EPERM, EACCES:
            return TransportError(
                .permissionDenied, errno: e.code,
                "no permission to open the HCI user channel on \(dev): it needs CAP_NET_ADMIN (run as root, or grant it once with `sudo setcap cap_net_admin,cap_net_raw+ep $(which bluesift)`)")
        case ENODEV:
            return TransportError(.noSuchAdapter, errno: e.code, "no Bluetooth adapter \(dev): \(HCIAdapters().describe())")
        default:
            return TransportError(.openFailed, errno: e.code, "cannot open the HCI user channel on \(dev): \(call): \(e)")
        }
    }
}
