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

/// The central role over the HCI host (`HCIHost`): scans, connects, pairs as SMP initiator,
/// and runs the ATT client (`gatt`) over its link. Blocking and single-threaded: every call
/// pumps the transport until its answer arrives or its timeout passes.
public final class LECentral: HCIHostRole {
    let host: HCIHost
    public var transport: any HCITransport { host.transport }
    public var options: HostOptions {
        didSet { gatt.timeout = options.attTimeout; gatt.preferredMTU = options.preferredMTU }
    }
    public var controller: ControllerInfo? { host.controller }
    /// The link; set to nil, the host forgets it too.
    public internal(set) var connection: LEConnection? {
        didSet { if connection == nil { host.linkDown() } }
    }
    /// ATT on the link's fixed channel, read through the host.
    lazy var attBearer = HostATTBearer(central: self)
    /// The ATT client over this central's link (GATT procedures, notifications).
    public private(set) lazy var gatt: ATTClient = {
        let c = ATTClient(bearer: attBearer, timeout: options.attTimeout, preferredMTU: options.preferredMTU)
        c.failure = { [unowned self] e in attBearer.lastError ?? HostError(e) }
        c.noLink = { [unowned self] in noLink }
        return c
    }()
    /// Set once a link has dropped; cleared by the next connection.
    public internal(set) var lostReason: UInt8?

    // Link state.
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

    // MARK: pumping

    /// Processes incoming packets until `done` returns a value or `timeout` passes.
    /// With `linkRequired`, a disconnection ends the wait with `.connectionLost`.
    @discardableResult
    func wait<T>(
        _ what: String, timeout: Duration, linkRequired: Bool = false,
        until done: () throws(HostError) -> T?
    ) throws(HostError) -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let v = try done() { return v }
            if linkRequired, connection == nil { throw noLink }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw .timeout(what) }
            return try host.wait(what, timeout: left) { () throws(HostError) -> T? in
                if let v = try done() { return v }
                if linkRequired, connection == nil { throw noLink }
                return nil
            }
        }
    }

    /// Processes whatever arrives for `duration` (notifications, link events), with or
    /// without a link.
    public func pump(for duration: Duration) throws(HostError) {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline { try host.pump(timeout: deadline - ContinuousClock.now) }
    }

    // MARK: events (HCIHostRole)

    var noLink: HostError { lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }

    func host(received event: any HCIEvent) throws(HostError) {
        switch event {
        case let e as HCIDisconnectionCompleteEvent:
            if e.status == 0, e.handle == connection?.handle {
                connection = nil; lostReason = e.reason; gatt.requestPending = false
                security = nil; securityRequest = nil
            }
        case let e as HCIEncryptionChangeEvent:
            if e.handle == connection?.handle { encryptionResult = (e.status, e.encryptionEnabled != 0) }
        case let e as HCIEncryptionChangeV2Event:
            if e.handle == connection?.handle { encryptionResult = (e.status, e.encryptionEnabled != 0) }
        case let e as HCIEncryptionKeyRefreshCompleteEvent:
            if e.handle == connection?.handle { encryptionResult = (e.status, e.status == 0) }
        case let e as HCILEConnectionCompleteEvent:
            connectResult = (e.status, LEConnection(e))
        case let e as HCILEEnhancedConnectionCompleteEvent:
            connectResult = (e.status, LEConnection(e))
        case let e as HCILEEnhancedConnectionCompleteV2Event:
            connectResult = (e.connection.status, LEConnection(e.connection))
        case let e as HCILEAdvertisingReportEvent:
            if scanning { advertisements += e.reports.map(Advertisement.init) }
        case let e as HCILEExtendedAdvertisingReportEvent:
            if scanning { advertisements += e.reports.map(Advertisement.init) }
        case let e as HCILEConnectionUpdateCompleteEvent:
            if e.status == 0, e.handle == connection?.handle {
                connection?.interval = e.interval; connection?.latency = e.latency; connection?.supervisionTimeout = e.supervisionTimeout
            }
        default: break // a central is never asked for a key
        }
    }

    /// Incoming L2CAP frames by fixed channel (Vol 3 Part A §2.1).
    func host(received payload: [UInt8], cid: UInt16) throws(HostError) {
        switch cid {
        // ATT: the client's own read takes it, else it is handled now.
        case L2CAPCID.att: if gatt.receiving { attBearer.inbox.append(payload) } else { try gatt.handle(payload) }
        case L2CAPCID.leSignalling: try handleSignalling(payload)
        case L2CAPCID.smp: try handleSMP(payload)
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
