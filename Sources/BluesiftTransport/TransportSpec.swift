/// Where the controller is, as written on the command line:
/// `tcp:HOST:PORT`, `unix:PATH`, `serial:PATH[@BAUD][,rtscts]`, `hci:N`, `l2cap:N` (ATT over
/// the kernel's LE L2CAP socket: no HCI, see `L2CAPBearer`).
public enum TransportSpec: Hashable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: UInt16)
    case unix(path: String)
    case serial(path: String, baud: Int, rtscts: Bool)
    case hci(index: UInt16)
    case l2cap(index: UInt16)

    public static let defaultBaud = 115_200
    static let usage = "expected tcp:HOST:PORT, unix:PATH, serial:PATH[@BAUD][,rtscts], hci:N or l2cap:N"

    public init(parsing text: String) throws(TransportError) {
        guard let colon = text.firstIndex(of: ":") else {
            throw TransportError(.badSpec, "bad transport '\(text)': \(Self.usage)")
        }
        let scheme = text[..<colon].lowercased()
        let rest = String(text[text.index(after: colon)...])
        func bad(_ why: String) -> TransportError { TransportError(.badSpec, "bad transport '\(text)': \(why)") }
        switch scheme {
        case "tcp":
            var host: Substring, port: Substring
            if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") { // tcp:[::1]:9001
                host = rest[rest.index(after: rest.startIndex)..<close]
                let after = rest[rest.index(after: close)...]
                guard after.hasPrefix(":") else { throw bad("missing port after ']'") }
                port = after.dropFirst()
            } else {
                guard let c = rest.lastIndex(of: ":") else { throw bad("missing port (tcp:HOST:PORT)") }
                host = rest[..<c]; port = rest[rest.index(after: c)...]
            }
            guard !host.isEmpty else { throw bad("missing host (tcp:HOST:PORT)") }
            guard let p = UInt16(port), p != 0 else { throw bad("port '\(port)' is not a number in 1...65535") }
            self = .tcp(host: String(host), port: p)
        case "unix":
            guard !rest.isEmpty else { throw bad("missing socket path (unix:PATH)") }
            guard rest.utf8.count < 108 else { throw bad("socket path longer than 107 bytes") }
            self = .unix(path: rest)
        case "serial":
            var body = Substring(rest), rtscts = false
            if body.hasSuffix(",rtscts") { rtscts = true; body = body.dropLast(7) }
            var path = body, baud = Self.defaultBaud
            if let at = body.lastIndex(of: "@") {
                path = body[..<at]
                guard let b = Int(body[body.index(after: at)...]), SerialPort.speed(for: b) != nil else {
                    throw bad("unsupported baud rate '\(body[body.index(after: at)...])' (e.g. 115200, 1000000, 3000000)")
                }
                baud = b
            }
            guard !path.isEmpty else { throw bad("missing device path (serial:PATH[@BAUD])") }
            self = .serial(path: String(path), baud: baud, rtscts: rtscts)
        case "hci":
            let digits = rest.hasPrefix("hci") ? String(rest.dropFirst(3)) : rest // hci:hci0 too
            guard let n = UInt16(digits) else { throw bad("adapter index '\(rest)' is not a number (hci:0)") }
            self = .hci(index: n)
        case "l2cap":
            let digits = rest.hasPrefix("hci") ? String(rest.dropFirst(3)) : rest
            guard let n = UInt16(digits) else { throw bad("adapter index '\(rest)' is not a number (l2cap:0)") }
            self = .l2cap(index: n)
        default:
            throw bad("unknown scheme '\(scheme)': \(Self.usage)")
        }
    }

    public var description: String {
        switch self {
        case .tcp(let h, let p): h.contains(":") ? "tcp:[\(h)]:\(p)" : "tcp:\(h):\(p)"
        case .unix(let p): "unix:\(p)"
        case .serial(let p, let b, let f): "serial:\(p)@\(b)" + (f ? ",rtscts" : "")
        case .hci(let n): "hci:\(n)"
        case .l2cap(let n): "l2cap:\(n)"
        }
    }

    /// Opens the transport. `system` is the syscall seam (tests pass a fake). `notice` hears
    /// what the user should know (an adapter taken over for the run).
    public func open(
        system: any SocketSystem = PosixSocketSystem(), connectTimeout: Duration = .seconds(5),
        notice: ((String) -> Void)? = nil
    ) throws(TransportError) -> FDTransport {
        switch self {
        case .tcp(let host, let port):
            return try SocketOpener(system: system).tcp(host: host, port: port, timeout: connectTimeout, name: description)
        case .unix(let path):
            return try SocketOpener(system: system).unix(path: path, timeout: connectTimeout, name: description)
        case .serial(let path, let baud, let rtscts):
            return try SerialPort.open(path: path, baud: baud, rtscts: rtscts, name: description)
        case .hci(let index):
            return try SocketOpener(system: system).hciUserChannel(index: index, name: description, notice: notice)
        case .l2cap:
            throw TransportError(.unsupported, "\(description) carries ATT, not HCI packets: only replay uses it")
        }
    }
}
