import BluesiftCapture
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire

/// A notification or indication as it arrived.
public struct GATTNotification: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public var isIndication: Bool
    public var timestamp: Timestamp
}

/// The ATT client (Core 5.4 Vol 3 Part F §3.4; the GATT procedures of Part G §4 are in
/// GATTClient.swift) over an `ATTBearer`: the host's ACL link (`HostATTBearer`, under
/// `LECentral`) or the kernel's LE L2CAP socket (`L2CAPBearer`). One request outstanding at a
/// time (§3.3.2); notifications are delivered and buffered, indications confirmed, and the
/// peer's requests answered (this client has no database). Blocking: every wait reads the
/// bearer until its answer arrives or its timeout passes.
public final class ATTClient {
    public let bearer: any ATTBearer
    /// The ATT transaction timeout (§3.3.3 allows 30 s; shorter fails faster).
    public var timeout: Duration
    /// The ATT MTU this client asks for, and grants a peer that asks.
    public var preferredMTU: UInt16
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

    /// A bearer failure in the host's terms (the host's bearer says which `HostError`).
    var failure: (TransportError) -> HostError = { HostError($0) }
    /// Why there is no link once the bearer closed.
    var noLink: () -> HostError = { .notConnected }
    /// The bearer reported the link closed; every later request fails with `noLink`.
    public private(set) var closed = false
    /// Inside a read of the bearer (a PDU that arrives now is this read's to handle).
    private(set) var receiving = false
    var response: [UInt8]?
    var requestPending = false

    public init(bearer: any ATTBearer, timeout: Duration = .seconds(10), preferredMTU: UInt16 = 517) {
        self.bearer = bearer
        self.timeout = timeout
        self.preferredMTU = preferredMTU
    }

    /// A new link on the same bearer: MTU 23, nothing outstanding.
    func reset() {
        mtu = 23; closed = false; response = nil; requestPending = false
    }

    /// Returns and clears the buffered notifications.
    public func takeNotifications() -> [GATTNotification] {
        defer { notifications.removeAll() }
        return notifications
    }

    // MARK: the bearer

    func fail(_ e: TransportError) -> HostError {
        if e.code == .closed { closed = true; requestPending = false }
        return failure(e)
    }

    func send(_ pdu: [UInt8]) throws(HostError) {
        if closed { throw noLink() }
        do { try bearer.send(pdu) } catch { throw fail(error) }
    }

    /// Reads and handles PDUs until `done` returns a value or `timeout` passes. The link is
    /// required throughout.
    @discardableResult
    func wait<T>(_ what: String, timeout: Duration, until done: () throws(HostError) -> T?) throws(HostError) -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let v = try done() { return v }
            if closed { throw noLink() }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw .timeout(what) }
            try receiveOne(timeout: left)
        }
    }

    /// One PDU read from the bearer and handled, or the time passed.
    func receiveOne(timeout: Duration) throws(HostError) {
        receiving = true
        let pdu: [UInt8]?
        do { pdu = try bearer.receive(timeout: timeout) } catch { receiving = false; throw fail(error) }
        receiving = false
        if let pdu { try handle(pdu) }
    }

    /// Handles whatever arrives for `duration` (notifications, the peer's requests).
    public func pump(for duration: Duration) throws(HostError) {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if closed { throw noLink() }
            try receiveOne(timeout: deadline - ContinuousClock.now)
        }
    }

    /// Waits until at least `count` notifications are buffered; returns them all (taken).
    public func waitForNotifications(count: Int = 1, timeout: Duration) throws(HostError) -> [GATTNotification] {
        try wait("\(count) notification(s)", timeout: timeout) { () throws(HostError) -> Bool? in
            notifications.count >= count ? true : nil
        }
        return takeNotifications()
    }

    // MARK: requests

    /// Sends one ATT request and waits for its response. An Error Response throws `.attError`.
    func transact<M: ATTMessageType>(_ request: M) throws(HostError) -> ATTMessage {
        guard !requestPending else { throw .protocolError("ATT request already outstanding") }
        response = nil; requestPending = true
        defer { requestPending = false }
        try send(request.encode())
        let bytes = try wait("ATT response to \(M.opcode.name)", timeout: timeout) { () throws(HostError) -> [UInt8]? in response }
        let message: ATTMessage
        do { message = try ATTMessage.decode(bytes) } catch {
            throw .protocolError("malformed ATT response to \(M.opcode.name): \(error.message)")
        }
        if case .errorResponse(let e) = message {
            throw .attError(request: e.requestOpcode, handle: e.handle, error: e.error)
        }
        return message
    }

    func unexpected(_ m: ATTMessage, to what: String) -> HostError {
        .protocolError("\(m.opcode.name) in answer to \(what)")
    }

    /// One PDU from the peer: a response goes to the waiting request; notifications and
    /// indications are delivered; the peer's requests are answered (this client has no database).
    func handle(_ pdu: [UInt8]) throws(HostError) {
        guard let raw = pdu.first else { return }
        let op = ATTOpcode(rawValue: raw)
        switch op {
        case .handleValueNotification, .handleValueIndication: // §3.4.7
            guard pdu.count >= 3 else { return }
            let indication = op == .handleValueIndication
            deliver(
                GATTNotification(
                    handle: UInt16(pdu[1]) | UInt16(pdu[2]) << 8, value: Array(pdu[3...]),
                    isIndication: indication, timestamp: currentTimestamp()))
            if indication { try send(ATTHandleValueConfirmation().encode()) }
        case .multipleHandleValueNotification: // §3.4.7.4
            if case .multipleHandleValueNotification(let m)? = try? ATTMessage.decode(pdu) {
                let now = currentTimestamp()
                for e in m.entries { deliver(GATTNotification(handle: e.handle, value: e.value, isIndication: false, timestamp: now)) }
            }
        case .exchangeMTURequest: // the peer's
            guard pdu.count >= 3 else { return }
            let client = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
            try send(ATTExchangeMTUResponse(serverRxMTU: preferredMTU).encode())
            mtu = max(23, min(client, preferredMTU))
        case _ where op.kind == .request: // the peer's other requests: this host has no database
            let handle = pdu.count >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : 0
            let execute = op == .executeWriteRequest
            let error: ATTErrorCode = op.isDiscovery ? .attributeNotFound : (execute ? .requestNotSupported : .invalidHandle)
            try send(ATTErrorResponse(requestOpcode: op, handle: execute ? 0 : handle, error: error).encode())
        case _ where op.kind == .response:
            if requestPending { response = pdu }
        default:
            break // commands and confirmations need no answer
        }
    }

    /// Buffered up to `maxBufferedNotifications` (a flooding device cannot grow memory without
    /// bound); beyond that they are counted in `droppedNotifications`.
    func deliver(_ n: GATTNotification) {
        receivedNotifications += 1
        if notifications.count < Self.maxBufferedNotifications { notifications.append(n) } else { droppedNotifications += 1 }
        onNotification?(n)
    }
}

/// ATT on the fixed channel (CID 0x0004, Core 5.4 Vol 3 Part A §2.1) of the central's ACL link
/// through the host. Reading it pumps the host: link events, signalling and SMP are handled on
/// the way; ATT PDUs come back one at a time.
final class HostATTBearer: ATTBearer {
    unowned let central: LECentral
    /// ATT PDUs from the link not yet read.
    var inbox: [[UInt8]] = []
    /// The host's own error behind the last failure (the `TransportError` only carries it).
    var lastError: HostError?

    init(central: LECentral) { self.central = central }

    var name: String { central.transport.name }

    private func carry(_ e: HostError) -> TransportError {
        lastError = e
        return TransportError(.io, e.description)
    }

    func send(_ pdu: [UInt8]) throws(TransportError) {
        do { try central.sendL2CAP(cid: L2CAPCID.att, pdu) } catch { throw carry(error) }
    }

    func receive(timeout: Duration) throws(TransportError) -> [UInt8]? {
        let deadline = ContinuousClock.now + timeout
        do throws(HostError) {
            while true {
                if !inbox.isEmpty { return inbox.removeFirst() }
                if central.connection == nil { throw central.noLink }
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return nil }
                try central.host.pump(timeout: left)
            }
        } catch { throw carry(error) }
    }

    /// The host pairs with its own SMP initiator (`LECentral.secure`), not through the bearer.
    func secure(level: UInt8, timeout: Duration) throws(TransportError) -> (level: UInt8, keySize: UInt8) {
        throw TransportError(.unsupported, "\(name): security is the host's SMP (LECentral.secure)")
    }

    func close() { try? central.disconnect() }

    /// Drops what a previous link left unread.
    func reset() { inbox.removeAll(); lastError = nil }
}
