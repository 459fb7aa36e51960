import BluesiftCapture
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire

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

/// The central role over the HCI host (`HCIHost`): scans, connects, runs GATT procedures and
/// pairs as SMP initiator. Blocking and single-threaded: every call pumps the transport until
/// its answer arrives or its timeout passes.
public final class LECentral: HCIHostRole {
    let host: HCIHost
    public var transport: any HCITransport { host.transport }
    public var options: HostOptions
    public var controller: ControllerInfo? { host.controller }
    /// The link; set to nil, the host forgets it too.
    public internal(set) var connection: LEConnection? {
        didSet { if connection == nil { host.linkDown() } }
    }
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

    // Link state.
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
        host = HCIHost(transport: transport, commandTimeout: options.commandTimeout)
        self.options = options
        host.role = self
    }

    /// ATT over a link the kernel made and holds (`L2CAPBearer`): no HCI at all. The GATT
    /// procedures run unchanged; SMP and link control are the kernel's.
    public private(set) var bearer: (any ATTBearer)?

    public init(bearer: any ATTBearer, peer: BDAddr, peerType: AddressType, options: HostOptions = HostOptions()) {
        host = HCIHost(transport: NoHCITransport(name: bearer.name), commandTimeout: options.commandTimeout)
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
            return try host.wait(what, timeout: left) { () throws(HostError) -> T? in
                if let v = try done() { return v }
                if linkRequired, connection == nil { throw noLink }
                return nil
            }
        }
    }

    /// Processes whatever arrives for `duration` (notifications, link events).
    public func pump(for duration: Duration) throws(HostError) {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if let bearer { try pumpBearer(bearer, timeout: deadline - ContinuousClock.now); continue }
            if let packet = try host.receive(timeout: deadline - ContinuousClock.now) { try host.dispatch(packet) }
        }
    }

    /// Waits until at least `count` notifications are buffered; returns them all (taken).
    public func waitForNotifications(count: Int = 1, timeout: Duration) throws(HostError) -> [GATTNotification] {
        try wait("\(count) notification(s)", timeout: timeout, linkRequired: true) { () throws(HostError) -> Bool? in
            notifications.count >= count ? true : nil
        }
        return takeNotifications()
    }

    // MARK: events (HCIHostRole)

    var noLink: HostError { lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }

    func host(received event: any HCIEvent) throws(HostError) {
        switch event {
        case let e as HCIDisconnectionCompleteEvent:
            if e.status == 0, e.handle == connection?.handle {
                connection = nil; lostReason = e.reason; attRequestPending = false
                security = nil; securityRequest = nil
            }
        case let e as HCIEncryptionChangeEvent:
            if e.handle == connection?.handle { encryptionResult = (e.status, e.encryptionEnabled != 0) }
        case let e as HCIEncryptionKeyRefreshCompleteEvent:
            if e.handle == connection?.handle { encryptionResult = (e.status, e.status == 0) }
        case let e as HCILEConnectionCompleteEvent:
            connectResult = (e.status, LEConnection(e))
        case let e as HCILEEnhancedConnectionCompleteEvent:
            connectResult = (e.status, LEConnection(e))
        case let e as HCILEAdvertisingReportEvent:
            if scanning { advertisements += e.reports.map(Advertisement.init) }
        case let e as HCILEExtendedAdvertisingReportEvent:
            if scanning { advertisements += e.reports.map(Advertisement.init) }
        case let e as HCILEConnectionUpdateCompleteEvent:
            if e.status == 0, e.handle == connection?.handle {
                connection?.interval = e.interval; connection?.latency = e.latency; connection?.supervisionTimeout = e.supervisionTimeout
            }
        default: break  // a central is never asked for a key
        }
    }

    /// Incoming L2CAP frames by fixed channel (Vol 3 Part A §2.1).
    func host(received payload: [UInt8], cid: UInt16) throws(HostError) {
        switch cid {
        case 0x0004: try handleATT(payload)
        case 0x0005: try handleSignalling(payload)
        case 0x0006: try handleSMP(payload)
        default: break
        }
    }

    // MARK: commands

    /// Sends a command and waits for its answer (`HCIHost.command`); the Command Complete, or
    /// nil for a Command Status.
    @discardableResult
    func command<C: HCICommand>(_ c: C, timeout: Duration? = nil) throws(HostError) -> HCICommandCompleteEvent? {
        try host.command(c, timeout: timeout ?? options.commandTimeout)
    }

    /// Reset and configure the controller for an LE central with a random static address.
    @discardableResult
    public func setUp() throws(HostError) -> ControllerInfo {
        connection = nil; lostReason = nil; scanning = false; security = nil; securityRequest = nil
        let random = options.randomAddress ?? Self.makeRandomStaticAddress()
        host.commandTimeout = options.commandTimeout
        return try host.setUp(randomAddress: random)
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
