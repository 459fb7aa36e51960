#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// H4 over a UART (or pty): raw mode, 8N1, chosen speed, optional RTS/CTS.
enum SerialPort {
    static func speed(for baud: Int) -> speed_t? {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 921_600: speed_t(B921600)
        #if os(Linux)
            case 500_000: speed_t(B500000)
            case 1_000_000: speed_t(B1000000)
            case 1_500_000: speed_t(B1500000)
            case 2_000_000: speed_t(B2000000)
            case 3_000_000: speed_t(B3000000)
            case 4_000_000: speed_t(B4000000)
        #endif
        default: nil
        }
    }

    static func open(path: String, baud: Int, rtscts: Bool, name: String) throws(TransportError) -> FDTransport {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            throw TransportError(
                e == ENOENT ? .noSuchAdapter : (e == EACCES ? .permissionDenied : .openFailed), errno: e,
                "\(name): cannot open \(path): \(SystemErrno(e))" + (e == EACCES ? " (is your user in the dialout group?)" : ""))
        }
        do throws(TransportError) {
            try configure(fd: fd, baud: baud, rtscts: rtscts, name: name)
        } catch {
            _ = Glibc.close(fd); throw error
        }
        return FDTransport(fd: fd, system: PosixSocketSystem(), name: name)
    }

    /// Raw mode so no byte is translated or swallowed (Core 5.4 Vol 4 Part A §2: 8N1).
    static func configure(fd: Int32, baud: Int, rtscts: Bool, name: String) throws(TransportError) {
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else {
            throw TransportError(.openFailed, errno: errno, "\(name): not a serial device: \(SystemErrno(errno))")
        }
        cfmakeraw(&t)
        t.c_cflag |= tcflag_t(CLOCAL | CREAD)
        if rtscts { t.c_cflag |= tcflag_t(CRTSCTS) } else { t.c_cflag &= ~tcflag_t(CRTSCTS) }
        t.c_cflag &= ~tcflag_t(CSTOPB)
        guard let sp = speed(for: baud) else { throw TransportError(.badSpec, "\(name): unsupported baud rate \(baud)") }
        cfsetispeed(&t, sp)
        cfsetospeed(&t, sp)
        guard tcsetattr(fd, TCSANOW, &t) == 0 else {
            throw TransportError(.openFailed, errno: errno, "\(name): cannot configure the serial line: \(SystemErrno(errno))")
        }
        tcflush(fd, TCIOFLUSH)
    }
}
