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

/// A role over the host (`LECentral`, `LEPeripheral`): it is given the events the host does
/// not act on itself and the L2CAP frames of its link.
protocol HCIHostRole: AnyObject {
    /// Any event but command answers, buffer credits and hardware errors.
    func host(received event: any HCIEvent) throws(HostError)
    /// One L2CAP basic frame of the link (Core 5.4 Vol 3 Part A §3.1).
    func host(received payload: [UInt8], cid: UInt16) throws(HostError)
    /// Why there is no link: the disconnection reason, else not connected.
    var noLink: HostError { get }
}

/// The HCI host under both roles (as Bumble's `Host` under `Device`): commands and their
/// completion, the controller's bring-up, ACL buffer credits, and L2CAP frames cut into and
/// joined from ACL packets of the controller's size (Vol 4 Part E §5.4.2). One link at a time.
/// Blocking and single-threaded: every wait pumps the transport until its answer arrives or
/// its timeout passes.
final class HCIHost {
    let transport: any HCITransport
    var commandTimeout: Duration
    weak var role: (any HCIHostRole)?
    var controller: ControllerInfo?
    /// The link's connection handle; nil without one.
    private(set) var handle: UInt16?
    private(set) var aclCredits = 0
    private var link = ACLLink()
    /// ACL packets that arrived during a wait, handled after it (a peripheral: no reply goes
    /// out between the fragments of another). A central handles them at once (its waits are
    /// for the ATT response, SMP, …).
    var defersACLWhileWaiting = false
    private var deferredACL: [[UInt8]] = []
    private var nested = 0
    private var pendingOpcode: HCICommandOpcode?
    private var commandAnswer: (any HCIEvent)?

    init(transport: any HCITransport, commandTimeout: Duration) {
        self.transport = transport
        self.commandTimeout = commandTimeout
    }

    // MARK: link

    /// A link came up: its buffer credits are the controller's, reassembly starts afresh.
    func linkUp(handle: UInt16) {
        self.handle = handle
        aclCredits = controller?.aclPackets ?? 1
        link.reset(); deferredACL.removeAll()
    }

    func linkDown() {
        handle = nil
        link.reset(); deferredACL.removeAll()
    }

    // MARK: pumping

    func receive(timeout: Duration) throws(HostError) -> H4Packet? {
        do { return try transport.receive(timeout: timeout) } catch { throw HostError(error) }
    }

    /// One packet received and handled, or the time passed.
    func pump(timeout: Duration) throws(HostError) {
        if let p = try receive(timeout: timeout) { try dispatch(p) }
    }

    /// Processes incoming packets until `done` returns a value or `timeout` passes.
    @discardableResult
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

    /// Handles the ACL packets deferred during the last waits.
    func handleDeferredACL() throws(HostError) {
        while !deferredACL.isEmpty, handle != nil { try handleACL(deferredACL.removeFirst()) }
    }

    func dispatch(_ p: H4Packet) throws(HostError) {
        switch p.kind {
        case .event: try handleEvent(p.bytes)
        case .acl:
            if defersACLWhileWaiting, nested > 0 { deferredACL.append(p.bytes) } else { try handleACL(p.bytes) }
        default: break
        }
    }

    /// Command answers and credits are the host's; the rest goes to the role. Malformed and
    /// unknown events are dropped.
    func handleEvent(_ bytes: [UInt8]) throws(HostError) {
        guard let event = (try? HCIEvents.decode(bytes)) ?? nil else { return }
        switch event {
        case let e as HCICommandCompleteEvent:
            if e.opcode == pendingOpcode { commandAnswer = e }
        case let e as HCICommandStatusEvent:
            if e.opcode == pendingOpcode { commandAnswer = e }
        case let e as HCINumberOfCompletedPacketsEvent:
            for x in e.entries where x.handle == handle { aclCredits += Int(x.count) }
            if let max = controller?.aclPackets { aclCredits = min(aclCredits, max) }
        case let e as HCIHardwareErrorEvent:
            throw .protocolError("controller hardware error \(Hex.fixed(UInt64(e.hardwareCode), width: 2))")
        default:
            try role?.host(received: event)
        }
    }

    // MARK: commands

    /// Sends a command and waits for its Command Complete (returning the return parameters,
    /// status first) or Command Status. A non-zero status throws `.commandRejected`.
    @discardableResult
    func command<C: HCICommand>(_ command: C, timeout: Duration? = nil) throws(HostError) -> HCICommandCompleteEvent? {
        let opcode = C.opcode
        pendingOpcode = opcode; commandAnswer = nil
        defer { pendingOpcode = nil }
        do { try transport.send(.command, command.encode()) } catch { throw HostError(error) }
        let answer = try wait("command \(Hex.fixed(UInt64(opcode.rawValue), width: 4))", timeout: timeout ?? commandTimeout) {
            () throws(HostError) -> (any HCIEvent)? in commandAnswer
        }
        switch answer {
        case let e as HCICommandCompleteEvent:
            if let status = e.returnParameters.first, status != 0 { throw .commandRejected(opcode: opcode.rawValue, status: status) }
            return e
        case let e as HCICommandStatusEvent:
            if e.status != 0 { throw .commandRejected(opcode: opcode.rawValue, status: e.status) }
            return nil
        default:
            throw .protocolError("unexpected answer to command \(Hex.fixed(UInt64(opcode.rawValue), width: 4))")
        }
    }

    /// A command's return parameters after the status, read as its `Return`.
    func command<C: HCICommand, R>(_ command: C, returning read: (inout ByteReader) throws(DecodeError) -> R) throws(HostError) -> R {
        guard let e = try self.command(command), let r = try? e.decodeReturn(read) else {
            throw .protocolError("short \(C.opcode.name) answer")
        }
        return r
    }

    /// A command sent from inside event handling: its answer is not waited for (it lands
    /// while another wait runs).
    func sendCommandNoWait<C: HCICommand>(_ command: C) throws(HostError) {
        do { try transport.send(.command, command.encode()) } catch { throw HostError(error) }
    }

    /// Disconnection Complete, Encryption Change, Hardware Error, Data Buffer Overflow,
    /// Encryption Key Refresh Complete, LE Meta (Core 5.4 Vol 4 Part E §7.3.1).
    static let eventMask: UInt64 = 1 << 4 | 1 << 7 | 1 << 15 | 1 << 25 | 1 << 47 | 1 << 61

    /// LE Connection Complete, Advertising Report, Connection Update Complete, Read Remote
    /// Features Complete, LTK Request, Data Length Change, Enhanced Connection Complete,
    /// Extended Advertising Report (Core 5.4 Vol 4 Part E §7.8.1: bit n = subevent n+1).
    static let leEventMask: UInt64 = 1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 6 | 1 << 9 | 1 << 12

    /// Reset, version, public address, event masks, LE features and ACL buffers (LE's, else the
    /// BR/EDR ones it shares, §7.8.2). `randomAddress` is set with LE Set Random Address (§7.8.4)
    /// when given.
    @discardableResult
    func setUp(randomAddress: BDAddr?) throws(HostError) -> ControllerInfo {
        handle = nil; link.reset(); deferredACL.removeAll()
        try command(HCIReset())
        let version = try command(HCIReadLocalVersionInformation())
        let bdaddr = try command(HCIReadBDAddr())
        try command(HCISetEventMask(mask: Self.eventMask))
        let features = try command(HCILEReadLocalSupportedFeatures())
        try command(HCILESetEventMask(mask: Self.leEventMask))
        var (length, count) = (0, 0)
        let le = try command(HCILEReadBufferSize())
        if let r = try? le?.decodeReturn(HCILEReadBufferSize.Return.init) { (length, count) = (Int(r.aclDataLength), Int(r.aclPackets)) }
        if length == 0 || count == 0 {
            let b = try command(HCIReadBufferSize(), returning: HCIReadBufferSize.Return.init)
            (length, count) = (Int(b.aclDataLength), Int(b.aclPackets))
        }
        guard length > 0, count > 0 else { throw .protocolError("controller reports no ACL buffers") }
        if let randomAddress { try command(HCILESetRandomAddress(address: randomAddress)) }
        // Answers cut short leave the field zero, as a controller that does not say.
        let v = try? version?.decodeReturn(HCIReadLocalVersionInformation.Return.init)
        let info = ControllerInfo(
            hciVersion: v?.hciVersion ?? version?.returnParameters.dropFirst().first ?? 0,
            manufacturer: v?.companyIdentifier ?? 0,
            publicAddress: (try? bdaddr?.decodeReturn { (r) throws(DecodeError) in try r.readAddress("BD_ADDR") }) ?? BDAddr(0),
            randomAddress: randomAddress ?? BDAddr(0),
            leFeatures: (try? features?.decodeReturn { (r) throws(DecodeError) in try r.readUInt64(.little, "LE features") }) ?? 0,
            aclDataLength: length, aclPackets: count)
        controller = info
        return info
    }

    // MARK: ACL and L2CAP (Core 5.4 Vol 3 Part A)

    /// One L2CAP basic frame, split to the controller's LE ACL buffer size, each fragment
    /// waiting (up to `creditTimeout`) for a buffer credit (Number Of Completed Packets).
    func sendL2CAP(cid: UInt16, _ payload: [UInt8], creditTimeout: Duration) throws(HostError) {
        guard let h = handle, let info = controller else { throw role?.noLink ?? .notConnected }
        for acl in ACLLink.packets(handle: h, cid: cid, payload: payload, maxLength: info.aclDataLength) {
            try wait("ACL buffer credit", timeout: creditTimeout) { () throws(HostError) -> Bool? in
                if handle == nil { throw role?.noLink ?? .notConnected }
                return aclCredits > 0 ? true : nil
            }
            do { try transport.send(.acl, acl) } catch { throw HostError(error) }
            aclCredits -= 1
        }
    }

    /// Reassembles ACL fragments into L2CAP frames and hands them to the role.
    func handleACL(_ bytes: [UInt8]) throws(HostError) {
        guard let h = handle, let (cid, payload) = link.receive(bytes, handle: h) else { return }
        try role?.host(received: payload, cid: cid)
    }
}
