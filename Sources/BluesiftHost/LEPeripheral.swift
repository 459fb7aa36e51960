import BluesiftCapture
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire

/// Choices for an `LEPeripheral`.
public struct PeripheralOptions: Sendable {
    public var commandTimeout: Duration = .seconds(5)
    /// Advertising interval in units of 0.625 ms (Core 5.4 Vol 4 Part E §7.8.5): 100 ms.
    public var advertisingInterval: UInt16 = 0x00A0
    public init() {}
}

/// A notification or indication the peripheral sent, or did not send and why.
public struct PeripheralNotificationEvent: Sendable {
    public var notification: ServerNotification
    /// nil: sent. Otherwise why not ("not enabled in the CCCD", "no link").
    public var skipped: String?
    /// Bytes cut to fit the MTU in force.
    public var truncated: Bool
}

/// The peripheral role over the HCI host (`HCIHost`; Core 5.4 Vol 6 Part B §4.4.2 advertising,
/// Vol 3 Part F/G server): advertises, accepts one connection at a time, answers ATT through
/// `ATTServer`, pairs as SMP responder and sends the notifications it schedules. Blocking and
/// single-threaded, like `LECentral`: every call pumps the transport until its answer arrives
/// or its timeout passes.
public final class LEPeripheral: HCIHostRole {
    let host: HCIHost
    public var transport: any HCITransport { host.transport }
    public var options: PeripheralOptions
    public var controller: ControllerInfo? { host.controller }
    /// The link; set to nil, the host forgets it too.
    public internal(set) var connection: LEConnection? {
        didSet { if connection == nil { host.linkDown() } }
    }
    public var server: ATTServer
    public let responder: GATTServerResponder
    /// The address advertised and its type.
    public internal(set) var ownAddress = BDAddr(0)
    public internal(set) var ownAddressType = AddressType.random
    /// Each notification sent or skipped.
    public var onNotification: ((PeripheralNotificationEvent) -> Void)?
    /// Security Manager as responder; nil: pairing is refused (Pairing Not Supported).
    public var smp: SMPResponder?
    /// Set once the link is encrypted; cleared with the link.
    public internal(set) var encrypted = false
    public internal(set) var authenticated = false
    /// Disconnection reason of the last link.
    public internal(set) var lostReason: UInt8?

    var queue: [(due: ContinuousClock.Instant, n: ServerNotification)] = []
    var awaitingConfirmation = false

    public init(
        transport: any HCITransport, attributes: [ServerAttribute], responder: GATTServerResponder,
        preferredMTU: UInt16 = 517, options: PeripheralOptions = PeripheralOptions()
    ) {
        host = HCIHost(transport: transport, commandTimeout: options.commandTimeout)
        // ACL that arrives during a wait (a command, a buffer credit) is handled after it, so
        // that no reply goes out between the fragments of another.
        host.defersACLWhileWaiting = true
        self.options = options
        self.server = ATTServer(attributes: attributes, preferredMTU: preferredMTU)
        self.responder = responder
        host.role = self
    }

    // MARK: events (HCIHostRole)

    var noLink: HostError { lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }

    func host(received event: any HCIEvent) throws(HostError) {
        switch event {
        case let e as HCIDisconnectionCompleteEvent:
            if e.status == 0, e.handle == connection?.handle { linkDown(e.reason) }
        case let e as HCILEConnectionCompleteEvent:
            linkUp(e.status, LEConnection(e))
        case let e as HCILEEnhancedConnectionCompleteEvent:
            linkUp(e.status, LEConnection(e))
        case let e as HCILEEnhancedConnectionCompleteV2Event:
            linkUp(e.connection.status, LEConnection(e.connection))
        case let e as HCIEncryptionChangeEvent:
            encryptionChanged(status: e.status, handle: e.handle, enabled: e.encryptionEnabled != 0)
        case let e as HCIEncryptionChangeV2Event:
            encryptionChanged(status: e.status, handle: e.handle, enabled: e.encryptionEnabled != 0)
        case let e as HCIEncryptionKeyRefreshCompleteEvent:
            encryptionChanged(status: e.status, handle: e.handle, enabled: e.status == 0)
        case let e as HCILELongTermKeyRequestEvent:
            guard e.handle == connection?.handle else { return }
            if let ltk = smp?.longTermKey(rand: e.rand, ediv: e.ediv) {
                try host.sendCommandNoWait(HCILELongTermKeyRequestReply(handle: e.handle, ltk: ltk))
            } else {
                try host.sendCommandNoWait(HCILELongTermKeyRequestNegativeReply(handle: e.handle))
            }
        default:
            break
        }
    }

    /// Only links where this host is the peripheral (role 1, §7.7.65.1).
    func linkUp(_ status: UInt8, _ c: LEConnection) {
        guard status == 0, c.role == 1, connection == nil else { return }
        connection = c
        host.linkUp(handle: c.handle)
        queue.removeAll(); awaitingConfirmation = false
        encrypted = false; authenticated = false; lostReason = nil
        server.reset()
        smp?.reset()
    }

    func encryptionChanged(status: UInt8, handle: UInt16, enabled: Bool) {
        guard handle == connection?.handle else { return }
        encrypted = status == 0 && enabled
        authenticated = encrypted && (smp?.authenticated ?? false)
        smp?.encryptionChanged(status: status, enabled: enabled)
    }

    /// Incoming L2CAP frames by fixed channel (Vol 3 Part A §2.1).
    func host(received payload: [UInt8], cid: UInt16) throws(HostError) {
        switch cid {
        case L2CAPCID.att: try handleATT(payload)
        case L2CAPCID.leSignalling: try handleSignalling(payload)
        case L2CAPCID.smp: try handleSMP(payload)
        default: break
        }
    }

    func linkDown(_ reason: UInt8) {
        connection = nil; lostReason = reason
        for q in queue { onNotification?(.init(notification: q.n, skipped: "the link dropped first", truncated: false)) }
        queue.removeAll()
        encrypted = false; authenticated = false
    }

    // MARK: commands

    /// Sends a command and waits for its answer (`HCIHost.command`).
    @discardableResult
    func command<C: HCICommand>(_ c: C) throws(HostError) -> HCICommandCompleteEvent? {
        try host.command(c, timeout: options.commandTimeout)
    }

    /// Reset and configure the controller (as `LECentral.setUp`, without choosing an address).
    @discardableResult
    public func setUp() throws(HostError) -> ControllerInfo {
        connection = nil; encrypted = false; authenticated = false
        host.commandTimeout = options.commandTimeout
        return try host.setUp(randomAddress: nil)
    }

    /// Takes `wanted` as this host's address where the controller allows: a random address is
    /// set with LE Set Random Address (§7.8.4); the controller's own public address is used as
    /// is. Otherwise (another public address, or the controller refused) a fresh random static
    /// address, and the reason in the returned note.
    @discardableResult
    public func useAddress(_ wanted: BDAddr?, type: AddressType) throws(HostError) -> String? {
        guard let info = controller else { throw .protocolError("useAddress before setUp()") }
        if let wanted, type == .public || type == .publicIdentity {
            if wanted == info.publicAddress { ownAddress = wanted; ownAddressType = .public; return nil }
            let fresh = LECentral.makeRandomStaticAddress()
            try command(HCILESetRandomAddress(address: fresh))
            ownAddress = fresh; ownAddressType = .random
            return "the recorded address \(wanted) is public and the controller's is \(info.publicAddress): advertising as random static \(fresh)"
        }
        if let wanted {
            do {
                try command(HCILESetRandomAddress(address: wanted))
                ownAddress = wanted; ownAddressType = .random
                return nil
            } catch {
                guard case .commandRejected = error else { throw error }
                let fresh = LECentral.makeRandomStaticAddress()
                try command(HCILESetRandomAddress(address: fresh))
                ownAddress = fresh; ownAddressType = .random
                return "the controller refused the recorded address \(wanted): advertising as random static \(fresh)"
            }
        }
        let fresh = LECentral.makeRandomStaticAddress()
        try command(HCILESetRandomAddress(address: fresh))
        ownAddress = fresh; ownAddressType = .random
        return "no address recorded: advertising as random static \(fresh)"
    }

    /// Legacy connectable advertising with these AD structures (each cut to 31 bytes).
    public func startAdvertising(data: [UInt8], scanResponse: [UInt8]) throws(HostError) {
        // ADV_IND on all three channels, any scanner and initiator.
        try command(
            HCILESetAdvertisingParameters(
                intervalMin: options.advertisingInterval, intervalMax: options.advertisingInterval,
                ownAddressType: ownAddressType == .public ? 0 : 1))
        try command(HCILESetAdvertisingData(data: data))
        try command(HCILESetScanResponseData(data: scanResponse))
        try command(HCILESetAdvertisingEnable(enable: true))
    }

    public func stopAdvertising() throws(HostError) {
        try command(HCILESetAdvertisingEnable(enable: false))
    }

    /// Waits for a central to connect, checking `stop` every 100 ms; nil when stopped.
    public func waitForConnection(stop: () -> Bool) throws(HostError) -> LEConnection? {
        while connection == nil {
            if stop() { return nil }
            if let p = try host.receive(timeout: .milliseconds(100)) { try host.dispatch(p) }
        }
        return connection
    }

    /// Serves the link until it drops or `stop` is true (then disconnects). Returns the
    /// disconnection reason.
    @discardableResult
    public func serve(stop: () -> Bool) throws(HostError) -> UInt8? {
        while connection != nil {
            if stop() { try? disconnect(); return lostReason }
            try host.handleDeferredACL()
            try sendDue()
            let now = ContinuousClock.now
            var until = now + .milliseconds(100)
            if let due = queue.first(where: { !$0.n.isIndication || !awaitingConfirmation })?.due, due < until { until = due }
            if let p = try host.receive(timeout: max(.zero, until - now)) { try host.dispatch(p) }
        }
        return lostReason
    }

    /// HCI Disconnect (reason 0x13) and wait for the link to drop.
    public func disconnect(reason: UInt8 = 0x13) throws(HostError) {
        guard let c = connection else { return }
        try command(HCIDisconnect(handle: c.handle, reason: reason))
        do {
            try host.wait("disconnection", timeout: .seconds(5)) { () throws(HostError) -> Bool? in connection == nil ? true : nil }
        } catch { linkDown(0x16) }
    }

    // MARK: notifications

    /// Schedules what the server asked for, `delay` after now.
    func schedule(_ list: [ServerNotification]) {
        let now = ContinuousClock.now
        for n in list { queue.append((now + n.delay, n)) }
        queue.sort { $0.due < $1.due }
    }

    /// Sends every notification that is due (an indication waits for the last one's confirmation).
    func sendDue() throws(HostError) {
        let now = ContinuousClock.now
        while let i = queue.firstIndex(where: { $0.due <= now && (!$0.n.isIndication || !awaitingConfirmation) }), connection != nil {
            let n = queue.remove(at: i).n
            guard server.enabled(n.handle, indication: n.isIndication) else {
                onNotification?(.init(notification: n, skipped: "not enabled in the CCCD", truncated: false))
                continue
            }
            let room = Int(server.mtu) - 3
            let value = Array(n.value.prefix(room))
            let pdu =
                n.isIndication
                ? ATTHandleValueIndication(handle: n.handle, value: value).encode()
                : ATTHandleValueNotification(handle: n.handle, value: value).encode()
            if n.isIndication { awaitingConfirmation = true }
            try sendL2CAP(cid: L2CAPCID.att, pdu)
            onNotification?(.init(notification: n, skipped: nil, truncated: value.count < n.value.count))
        }
    }

    // MARK: ACL and L2CAP (Core 5.4 Vol 3 Part A)

    /// One L2CAP basic frame through the host, each fragment waiting up to 10 s for a credit.
    func sendL2CAP(cid: UInt16, _ payload: [UInt8]) throws(HostError) {
        try host.sendL2CAP(cid: cid, payload, creditTimeout: .seconds(10))
    }

    func handleATT(_ pdu: [UInt8]) throws(HostError) {
        if pdu.first == ATTOpcode.handleValueConfirmation.rawValue { awaitingConfirmation = false }
        let answer = server.handle(pdu, responder: responder, encrypted: encrypted, authenticated: authenticated)
        let later = server.scheduled
        server.scheduled = []
        if let answer { try sendL2CAP(cid: L2CAPCID.att, answer) }
        schedule(later)
    }

    /// LE signalling (Vol 3 Part A §4): responses and rejects need nothing; requests a
    /// peripheral does not serve get Command Reject "not understood" (§4.1).
    func handleSignalling(_ p: [UInt8]) throws(HostError) {
        guard let s = L2CAPSignalling.decode(p), !s.code.needsNoAnswer else { return }
        try sendL2CAP(cid: L2CAPCID.leSignalling, L2CAPCommandReject(identifier: s.identifier).encode())
    }

    func handleSMP(_ p: [UInt8]) throws(HostError) {
        guard let code = p.first else { return }
        if let smp {
            for reply in try smp.handle(p, peripheral: self) { try sendL2CAP(cid: L2CAPCID.smp, reply) }
            return
        }
        // No responder: a Pairing Request is answered Pairing Failed, Pairing Not Supported
        // (Vol 3 Part H §3.5.5); anything else is ignored.
        if code == SMPCode.pairingRequest.rawValue {
            try sendL2CAP(cid: L2CAPCID.smp, SMPPairingFailed(.pairingNotSupported).encode())
        }
    }
}

extension SMPResponder {
    /// One SMP PDU from the central on `peripheral`'s link.
    func handle(_ pdu: [UInt8], peripheral: LEPeripheral) throws(HostError) -> [[UInt8]] {
        let addresses = peripheral.connection.map {
            Addresses(initiator: $0.peer, initiatorType: $0.peerType, responder: peripheral.ownAddress, responderType: peripheral.ownAddressType)
        }
        return try handle(pdu, addresses: addresses)
    }
}
