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

/// A minimal LE peripheral over any HCI transport (Core 5.4 Vol 6 Part B §4.4.2 advertising,
/// Vol 3 Part F/G server): advertises, accepts one connection at a time, answers ATT through
/// `ATTServer` and sends the notifications it schedules. Blocking and single-threaded, like
/// `LECentral`: every call pumps the transport until its answer arrives or its timeout passes.
public final class LEPeripheral {
    public let transport: any HCITransport
    public var options: PeripheralOptions
    public internal(set) var controller: ControllerInfo?
    public internal(set) var connection: LEConnection?
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

    var pendingOpcode: UInt16?
    var commandResult: HostEvent?
    var aclCredits = 0
    var link = ACLLink()
    /// ACL packets that arrived during a nested wait (a command, a buffer credit): handled
    /// after it, so that no reply goes out between the fragments of another.
    var deferredACL: [[UInt8]] = []
    var nested = 0
    var queue: [(due: ContinuousClock.Instant, n: ServerNotification)] = []
    var awaitingConfirmation = false

    public init(transport: any HCITransport, attributes: [ServerAttribute], responder: GATTServerResponder,
                preferredMTU: UInt16 = 517, options: PeripheralOptions = PeripheralOptions()) {
        self.transport = transport
        self.options = options
        self.server = ATTServer(attributes: attributes, preferredMTU: preferredMTU)
        self.responder = responder
    }

    // MARK: pumping

    func receive(timeout: Duration) throws(HostError) -> H4Packet? {
        do { return try transport.receive(timeout: timeout) } catch { throw HostError(error) }
    }

    /// Pumps until `done` answers; ACL is deferred while nested.
    func wait<T>(_ what: String, timeout: Duration, until done: () throws(HostError) -> T?) throws(HostError) -> T {
        nested += 1
        defer { nested -= 1 }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let v = try done() { return v }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw .timeout(what) }
            if let p = try receive(timeout: left) { try dispatch(p) }
        }
    }

    func dispatch(_ p: H4Packet) throws(HostError) {
        switch p.kind {
        case .event: try handleEvent(p.bytes)
        case .acl:
            if nested > 0 { deferredACL.append(p.bytes) } else { try handleACL(p.bytes) }
        default: break
        }
    }

    func handleEvent(_ bytes: [UInt8]) throws(HostError) {
        guard let event = HostEvent.parse(bytes) else { return }
        switch event {
        case .commandComplete(let op, _), .commandStatus(let op, _):
            if op == pendingOpcode { commandResult = event }
        case .disconnectionComplete(let status, let handle, let reason):
            if status == 0, handle == connection?.handle { linkDown(reason) }
        case .numberOfCompletedPackets(let list):
            for e in list where e.handle == connection?.handle { aclCredits += Int(e.count) }
            if let max = controller?.aclPackets { aclCredits = min(aclCredits, max) }
        case .hardwareError(let code):
            throw .protocolError("controller hardware error \(Hex.fixed(UInt64(code), width: 2))")
        case .leConnectionComplete(let status, let c):
            // Only links where this host is the peripheral (role 1, §7.7.65.1).
            guard status == 0, c.role == 1, connection == nil else { return }
            connection = c
            aclCredits = controller?.aclPackets ?? 1
            link.reset(); deferredACL.removeAll(); queue.removeAll(); awaitingConfirmation = false
            encrypted = false; authenticated = false; lostReason = nil
            server.reset()
            smp?.reset()
        case .encryptionChange(let status, let handle, let enabled):
            guard handle == connection?.handle else { return }
            encrypted = status == 0 && enabled
            authenticated = encrypted && (smp?.authenticated ?? false)
            smp?.encryptionChanged(status: status, enabled: enabled, peripheral: self)
        case .leLongTermKeyRequest(let handle, let rand, let ediv):
            guard handle == connection?.handle else { return }
            if let ltk = smp?.longTermKey(rand: rand, ediv: ediv) {
                try sendCommandNoWait(HCICommand.leLongTermKeyRequestReply(handle: handle, ltk: ltk))
            } else {
                try sendCommandNoWait(HCICommand.leLongTermKeyRequestNegativeReply(handle: handle))
            }
        case .advertisingReports, .leConnectionUpdateComplete, .other:
            break
        }
    }

    func linkDown(_ reason: UInt8) {
        connection = nil; lostReason = reason
        link.reset(); deferredACL.removeAll()
        for q in queue { onNotification?(.init(notification: q.n, skipped: "the link dropped first", truncated: false)) }
        queue.removeAll()
        encrypted = false; authenticated = false
    }

    // MARK: commands

    /// Sends a command and waits for its Command Complete or Status; non-zero status throws.
    @discardableResult
    func command(_ packet: [UInt8]) throws(HostError) -> [UInt8] {
        let opcode = UInt16(packet[0]) | UInt16(packet[1]) << 8
        pendingOpcode = opcode; commandResult = nil
        defer { pendingOpcode = nil }
        do { try transport.send(.command, packet) } catch { throw HostError(error) }
        let result = try wait("command \(Hex.fixed(UInt64(opcode), width: 4))", timeout: options.commandTimeout) {
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

    /// A command sent from inside event handling: its answer is not waited for.
    func sendCommandNoWait(_ packet: [UInt8]) throws(HostError) {
        do { try transport.send(.command, packet) } catch { throw HostError(error) }
    }

    /// Reset and configure the controller (as `LECentral.setUp`, without choosing an address).
    @discardableResult
    public func setUp() throws(HostError) -> ControllerInfo {
        connection = nil; encrypted = false; authenticated = false
        let info = try ControllerInfo.bringUp(randomAddress: nil) { (p) throws(HostError) -> [UInt8] in try command(p) }
        controller = info
        return info
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
            try command(HCICommand.leSetRandomAddress(fresh))
            ownAddress = fresh; ownAddressType = .random
            return "the recorded address \(wanted) is public and the controller's is \(info.publicAddress): advertising as random static \(fresh)"
        }
        if let wanted {
            do {
                try command(HCICommand.leSetRandomAddress(wanted))
                ownAddress = wanted; ownAddressType = .random
                return nil
            } catch {
                guard case .commandRejected = error else { throw error }
                let fresh = LECentral.makeRandomStaticAddress()
                try command(HCICommand.leSetRandomAddress(fresh))
                ownAddress = fresh; ownAddressType = .random
                return "the controller refused the recorded address \(wanted): advertising as random static \(fresh)"
            }
        }
        let fresh = LECentral.makeRandomStaticAddress()
        try command(HCICommand.leSetRandomAddress(fresh))
        ownAddress = fresh; ownAddressType = .random
        return "no address recorded: advertising as random static \(fresh)"
    }

    /// Legacy connectable advertising with these AD structures (each cut to 31 bytes).
    public func startAdvertising(data: [UInt8], scanResponse: [UInt8]) throws(HostError) {
        try command(HCICommand.leSetAdvertisingParameters(interval: options.advertisingInterval,
                                                          ownAddressType: ownAddressType == .public ? 0 : 1))
        try command(HCICommand.leSetAdvertisingData(data))
        try command(HCICommand.leSetAdvertisingData(scanResponse, scanResponse: true))
        try command(HCICommand.leSetAdvertisingEnable(true))
    }

    public func stopAdvertising() throws(HostError) {
        try command(HCICommand.leSetAdvertisingEnable(false))
    }

    /// Waits for a central to connect, checking `stop` every 100 ms; nil when stopped.
    public func waitForConnection(stop: () -> Bool) throws(HostError) -> LEConnection? {
        while connection == nil {
            if stop() { return nil }
            if let p = try receive(timeout: .milliseconds(100)) { try dispatch(p) }
        }
        return connection
    }

    /// Serves the link until it drops or `stop` is true (then disconnects). Returns the
    /// disconnection reason.
    @discardableResult
    public func serve(stop: () -> Bool) throws(HostError) -> UInt8? {
        while connection != nil {
            if stop() { try? disconnect(); return lostReason }
            while !deferredACL.isEmpty, connection != nil { try handleACL(deferredACL.removeFirst()) }
            try sendDue()
            let now = ContinuousClock.now
            var until = now + .milliseconds(100)
            if let due = queue.first(where: { !$0.n.isIndication || !awaitingConfirmation })?.due, due < until { until = due }
            if let p = try receive(timeout: max(.zero, until - now)) { try dispatch(p) }
        }
        return lostReason
    }

    /// HCI Disconnect (reason 0x13) and wait for the link to drop.
    public func disconnect(reason: UInt8 = 0x13) throws(HostError) {
        guard let c = connection else { return }
        try command(HCICommand.disconnect(handle: c.handle, reason: reason))
        do {
            try wait("disconnection", timeout: .seconds(5)) { () throws(HostError) -> Bool? in connection == nil ? true : nil }
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
            let pdu = n.isIndication ? ATTHandleValueIndication(handle: n.handle, value: value).encode()
                                     : ATTHandleValueNotification(handle: n.handle, value: value).encode()
            if n.isIndication { awaitingConfirmation = true }
            try sendL2CAP(cid: 0x0004, pdu)
            onNotification?(.init(notification: n, skipped: nil, truncated: value.count < n.value.count))
        }
    }

    // MARK: ACL and L2CAP (Core 5.4 Vol 3 Part A)

    /// One L2CAP basic frame, split to the controller's LE ACL buffer size, each fragment
    /// waiting for a buffer credit.
    func sendL2CAP(cid: UInt16, _ payload: [UInt8]) throws(HostError) {
        guard let c = connection, let info = controller else { throw lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }
        for acl in ACLLink.packets(handle: c.handle, cid: cid, payload: payload, maxLength: info.aclDataLength) {
            try wait("ACL buffer credit", timeout: .seconds(10)) { () throws(HostError) -> Bool? in
                if connection == nil { throw lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }
                return aclCredits > 0 ? true : nil
            }
            do { try transport.send(.acl, acl) } catch { throw HostError(error) }
            aclCredits -= 1
        }
    }

    func handleACL(_ bytes: [UInt8]) throws(HostError) {
        guard let c = connection, let (cid, payload) = link.receive(bytes, handle: c.handle) else { return }
        switch cid {
        case 0x0004: try handleATT(payload)
        case 0x0005: try handleSignalling(payload)
        case 0x0006: try handleSMP(payload)
        default: break
        }
    }

    func handleATT(_ pdu: [UInt8]) throws(HostError) {
        if pdu.first == ATTOpcode.handleValueConfirmation.rawValue { awaitingConfirmation = false }
        let answer = server.handle(pdu, responder: responder, encrypted: encrypted, authenticated: authenticated)
        let later = server.scheduled
        server.scheduled = []
        if let answer { try sendL2CAP(cid: 0x0004, answer) }
        schedule(later)
    }

    /// LE signalling (Vol 3 Part A §4): responses and rejects need nothing; requests a
    /// peripheral does not serve get Command Reject "not understood" (§4.1).
    func handleSignalling(_ p: [UInt8]) throws(HostError) {
        guard p.count >= 4 else { return }
        switch p[0] {
        case 0x01, 0x07, 0x13, 0x15, 0x16, 0x18, 0x1A: break
        default: try sendL2CAP(cid: 0x0005, [0x01, p[1], 0x02, 0x00, 0x00, 0x00])
        }
    }

    func handleSMP(_ p: [UInt8]) throws(HostError) {
        guard let code = p.first else { return }
        if let smp {
            for reply in try smp.handle(p, peripheral: self) { try sendL2CAP(cid: 0x0006, reply) }
            return
        }
        // No responder: a Pairing Request is answered Pairing Failed, Pairing Not Supported
        // (Vol 3 Part H §3.5.5); anything else is ignored.
        if code == SMPCode.pairingRequest.rawValue {
            try sendL2CAP(cid: 0x0006, SMPPDU.encodePairingFailed(.pairingNotSupported))
        }
    }
}
