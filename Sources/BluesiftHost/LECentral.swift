import BluesiftCapture
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire

/// What set-up learned about the controller.
public struct ControllerInfo: Sendable, Hashable {
    public var hciVersion: UInt8
    public var manufacturer: UInt16
    public var publicAddress: BDAddr
    /// The random static address this host uses on air.
    public var randomAddress: BDAddr
    public var leFeatures: UInt64
    /// LE ACL buffer: payload bytes per packet and number of packets.
    public var aclDataLength: Int
    public var aclPackets: Int

    /// LE Extended Advertising (Core 5.4 Vol 6 Part B §4.6, bit 12).
    public var supportsExtendedAdvertising: Bool { leFeatures & (1 << 12) != 0 }
}

/// Timeouts and choices for a `LECentral`.
public struct HostOptions: Sendable {
    public var commandTimeout: Duration = .seconds(5)
    public var connectTimeout: Duration = .seconds(10)
    /// Core 5.4 Vol 3 Part F §3.3.3 allows 30 s; shorter fails faster.
    public var attTimeout: Duration = .seconds(10)
    public var disconnectTimeout: Duration = .seconds(5)
    /// nil: a fresh random static address per set-up.
    public var randomAddress: BDAddr?
    public var connectionParameters = ConnectionParameters()
    /// The ATT MTU this host asks for.
    public var preferredMTU: UInt16 = 517
    public init() {}
}

/// A notification or indication as it arrived.
public struct GATTNotification: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public var isIndication: Bool
    public var timestamp: Timestamp
}

/// A minimal LE central over any HCI transport. Blocking and single-threaded: every call
/// pumps the transport until its answer arrives or its timeout passes.
public final class LECentral {
    public let transport: any HCITransport
    public var options: HostOptions
    public internal(set) var controller: ControllerInfo?
    public internal(set) var connection: LEConnection?
    /// The ATT MTU in force (23 until exchanged).
    public internal(set) var mtu: UInt16 = 23
    /// Called for each notification/indication, also buffered in `notifications`.
    public var onNotification: ((GATTNotification) -> Void)?
    /// Notifications received and not yet taken with `takeNotifications()`.
    public internal(set) var notifications: [GATTNotification] = []
    /// Notifications and indications received in all, and those not buffered (buffer full).
    public internal(set) var receivedNotifications = 0
    public internal(set) var droppedNotifications = 0
    public static let maxBufferedNotifications = 65_536
    /// Set once a link has dropped; cleared by the next connection.
    public internal(set) var lostReason: UInt8?

    // Command in flight and its answer.
    var pendingOpcode: UInt16?
    var commandResult: HostEvent?
    // Link state.
    var aclCredits = 0
    var link = ACLLink()
    var attResponse: [UInt8]?
    var attRequestPending = false
    var scanning = false
    var advertisements: [Advertisement] = []
    var connectResult: (status: UInt8, LEConnection)?
    // Security (LECentral+Security.swift).
    /// How to pair: IO capability, passkey, confirmation; set before `secure`/`pair`.
    public var pairing = PairingPolicy()
    /// The link's security once encrypted; nil while unencrypted.
    public internal(set) var security: LinkSecurity?
    /// A Security Request from the peripheral not yet acted on (Vol 3 Part H §3.6.7).
    public internal(set) var securityRequest: SMPAuthReq?
    var smpInbox: [[UInt8]] = []
    var pairingActive = false
    var encryptionResult: (status: UInt8, enabled: Bool)?

    public init(transport: any HCITransport, options: HostOptions = HostOptions()) {
        self.transport = transport
        self.options = options
    }

    /// ATT over a link the kernel made and holds (`L2CAPBearer`): no HCI at all. The GATT
    /// procedures run unchanged; SMP and link control are the kernel's.
    public private(set) var bearer: (any ATTBearer)?

    public init(bearer: any ATTBearer, peer: BDAddr, peerType: AddressType, options: HostOptions = HostOptions()) {
        self.transport = NoHCITransport(name: bearer.name)
        self.options = options
        self.bearer = bearer
        connection = LEConnection(handle: 0, peer: peer, peerType: peerType, role: 0, interval: 0, latency: 0, supervisionTimeout: 0)
    }

    /// One ATT PDU from the bearer handled, or the time passed; a closed link is forgotten.
    func pumpBearer(_ bearer: any ATTBearer, timeout: Duration) throws(HostError) {
        let pdu: [UInt8]?
        do { pdu = try bearer.receive(timeout: timeout) } catch {
            if error.code == .closed { connection = nil; attRequestPending = false }
            throw HostError(error)
        }
        if let pdu { try handleATT(pdu) }
    }

    /// Returns and clears the buffered notifications.
    public func takeNotifications() -> [GATTNotification] {
        defer { notifications.removeAll() }
        return notifications
    }

    // MARK: pumping

    /// Processes incoming packets until `done` returns a value or `timeout` passes.
    /// With `linkRequired`, a disconnection ends the wait with `.connectionLost`.
    @discardableResult
    func wait<T>(_ what: String, timeout: Duration, linkRequired: Bool = false,
                 until done: () throws(HostError) -> T?) throws(HostError) -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let v = try done() { return v }
            if linkRequired, connection == nil { throw lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw .timeout(what) }
            if let bearer { try pumpBearer(bearer, timeout: left); continue }
            let packet: H4Packet?
            do { packet = try transport.receive(timeout: left) } catch { throw HostError(error) }
            if let packet { try dispatch(packet) }
        }
    }

    /// Processes whatever arrives for `duration` (notifications, link events).
    public func pump(for duration: Duration) throws(HostError) {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if let bearer { try pumpBearer(bearer, timeout: deadline - ContinuousClock.now); continue }
            let packet: H4Packet?
            do { packet = try transport.receive(timeout: deadline - ContinuousClock.now) } catch { throw HostError(error) }
            if let packet { try dispatch(packet) }
        }
    }

    /// Waits until at least `count` notifications are buffered; returns them all (taken).
    public func waitForNotifications(count: Int = 1, timeout: Duration) throws(HostError) -> [GATTNotification] {
        try wait("\(count) notification(s)", timeout: timeout, linkRequired: true) { () throws(HostError) -> Bool? in
            notifications.count >= count ? true : nil
        }
        return takeNotifications()
    }

    func dispatch(_ packet: H4Packet) throws(HostError) {
        switch packet.kind {
        case .event: try handleEvent(packet.bytes)
        case .acl: try handleACL(packet.bytes)
        default: break
        }
    }

    func handleEvent(_ bytes: [UInt8]) throws(HostError) {
        guard let event = HostEvent.parse(bytes) else { return }
        switch event {
        case .commandComplete(let op, _), .commandStatus(let op, _):
            if op == pendingOpcode { commandResult = event }
        case .disconnectionComplete(let status, let handle, let reason):
            if status == 0, handle == connection?.handle {
                connection = nil; lostReason = reason; attRequestPending = false; link.reset()
                security = nil; securityRequest = nil
            }
        case .encryptionChange(let status, let handle, let enabled):
            if handle == connection?.handle { encryptionResult = (status, enabled) }
        case .numberOfCompletedPackets(let list):
            for e in list where e.handle == connection?.handle { aclCredits += Int(e.count) }
            if let max = controller?.aclPackets { aclCredits = min(aclCredits, max) }
        case .hardwareError(let code):
            throw .protocolError("controller hardware error \(Hex.fixed(UInt64(code), width: 2))")
        case .leConnectionComplete(let status, let c):
            connectResult = (status, c)
        case .advertisingReports(let reports):
            if scanning { advertisements.append(contentsOf: reports) }
        case .leConnectionUpdateComplete(let status, let handle, let interval, let latency, let timeout):
            if status == 0, handle == connection?.handle {
                connection?.interval = interval; connection?.latency = latency; connection?.supervisionTimeout = timeout
            }
        case .other, .leLongTermKeyRequest: break  // a central is never asked for a key
        }
    }

    // MARK: commands

    /// Sends a command and waits for its Command Complete (returning the return parameters,
    /// status first) or Command Status. A non-zero status throws `.commandRejected`.
    @discardableResult
    func command(_ packet: [UInt8], timeout: Duration? = nil) throws(HostError) -> [UInt8] {
        let opcode = UInt16(packet[0]) | UInt16(packet[1]) << 8
        pendingOpcode = opcode; commandResult = nil
        defer { pendingOpcode = nil }
        do { try transport.send(.command, packet) } catch { throw HostError(error) }
        let result = try wait("command \(Hex.fixed(UInt64(opcode), width: 4))", timeout: timeout ?? options.commandTimeout) {
            () throws(HostError) -> HostEvent? in commandResult
        }
        switch result {
        case .commandComplete(_, let params):
            if let status = params.first, status != 0 { throw .commandRejected(opcode: opcode, status: status) }
            return params
        case .commandStatus(_, let status):
            if status != 0 { throw .commandRejected(opcode: opcode, status: status) }
            return [status]
        default:
            throw .protocolError("unexpected answer to command \(Hex.fixed(UInt64(opcode), width: 4))")
        }
    }

    /// Reset and configure the controller for an LE central with a random static address.
    @discardableResult
    public func setUp() throws(HostError) -> ControllerInfo {
        connection = nil; lostReason = nil; scanning = false; security = nil; securityRequest = nil
        let random = options.randomAddress ?? Self.makeRandomStaticAddress()
        let info = try ControllerInfo.bringUp(randomAddress: random) { (p) throws(HostError) -> [UInt8] in try command(p) }
        controller = info
        return info
    }

    /// Core 5.4 Vol 6 Part B §1.3.2.1: the two top bits set, the rest neither all 0 nor all 1.
    public static func makeRandomStaticAddress() -> BDAddr {
        while true {
            let v = UInt64.random(in: 0...0x3FFF_FFFF_FFFF)
            if v != 0 && v != 0x3FFF_FFFF_FFFF { return BDAddr(v | 0xC000_0000_0000) }
        }
    }
}

/// The HCI side of a bearer-mode central: there is none; any HCI use is a programming error
/// reported as unsupported.
final class NoHCITransport: HCITransport {
    let name: String
    var tap: ((HCITapEvent) -> Void)?
    init(name: String) { self.name = name }
    func send(_ kind: PacketKind, _ bytes: [UInt8]) throws(TransportError) {
        throw TransportError(.unsupported, "\(name) carries ATT only: no HCI commands")
    }
    func receive(timeout: Duration) throws(TransportError) -> H4Packet? { nil }
    func close() {}
}
