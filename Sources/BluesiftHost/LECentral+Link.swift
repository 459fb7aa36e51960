import BluesiftProtocols
import BluesiftTransport
import BluesiftWire

/// What to look for while scanning.
public enum DeviceMatch: Sendable, Hashable, CustomStringConvertible {
    case address(BDAddr)
    /// Complete or shortened local name, exact.
    case name(String)

    func matches(_ a: Advertisement) -> Bool {
        switch self {
        case .address(let x): a.address == x
        case .name(let n): a.localName == n
        }
    }

    public var description: String {
        switch self {
        case .address(let a): "address \(a)"
        case .name(let n): "name '\(n)'"
        }
    }
}

extension LECentral {
    static let ownAddressRandom: UInt8 = 1

    /// Active scan until an advertiser matches, then stops scanning.
    /// Legacy commands; both legacy and extended reports are accepted.
    public func scan(for match: DeviceMatch, timeout: Duration = .seconds(10)) throws(HostError) -> Advertisement {
        guard controller != nil else { throw .protocolError("scan before setUp()") }
        try command(HCILESetScanParameters(active: true, interval: 0x0030, window: 0x0030, ownAddressType: Self.ownAddressRandom))
        advertisements.removeAll()
        try command(HCILESetScanEnable(enable: true))
        scanning = true
        let found: Advertisement
        do {
            found = try wait("advertisement from \(match)", timeout: timeout) { () throws(HostError) -> Advertisement? in
                defer { advertisements.removeAll() }
                return advertisements.first(where: match.matches)
            }
        } catch {
            try? stopScan()
            if case .timeout = error { throw .deviceNotFound("no advertiser with \(match) within \(timeout)") }
            throw error
        }
        try stopScan()
        return found
    }

    /// Everything heard during `duration` (a plain active scan).
    public func scanAll(duration: Duration) throws(HostError) -> [Advertisement] {
        try command(HCILESetScanParameters(active: true, interval: 0x0030, window: 0x0030, ownAddressType: Self.ownAddressRandom))
        advertisements.removeAll()
        try command(HCILESetScanEnable(enable: true))
        scanning = true
        defer { advertisements.removeAll() }
        do { try pump(for: duration) } catch { try? stopScan(); throw error }
        let heard = advertisements
        try stopScan()
        return heard
    }

    func stopScan() throws(HostError) {
        scanning = false
        try command(HCILESetScanEnable(enable: false))
    }

    /// LE Create Connection; on timeout the attempt is cancelled and `.timeout` thrown.
    @discardableResult
    public func connect(to peer: BDAddr, type: AddressType, timeout: Duration? = nil) throws(HostError) -> LEConnection {
        guard controller != nil else { throw .protocolError("connect before setUp()") }
        guard connection == nil else { throw .protocolError("already connected") }
        connectResult = nil
        // Scan interval/window 60 ms / 30 ms; the peer's address, not the filter accept list.
        try command(
            HCILECreateConnection(
                scanInterval: 0x0060, scanWindow: 0x0030, peerAddressType: type.rawValue, peer: peer,
                ownAddressType: Self.ownAddressRandom, parameters: options.connectionParameters))
        let result: (status: UInt8, LEConnection)
        do {
            result = try wait("connection to \(peer)", timeout: timeout ?? options.connectTimeout) {
                () throws(HostError) -> (status: UInt8, LEConnection)? in connectResult
            }
        } catch {
            guard case .timeout = error else { throw error }
            // Cancel; the controller then reports the attempt with status 0x02 (§7.8.13).
            _ = try? command(HCILECreateConnectionCancel())
            let late = try? wait("cancelled connection", timeout: options.commandTimeout) {
                () throws(HostError) -> (status: UInt8, LEConnection)? in connectResult
            }
            if let late, late.status == 0 {
                connection = late.1
                try? disconnect()
            }
            throw error
        }
        guard result.status == 0 else { throw .connectionFailed(status: result.status) }
        connection = result.1
        host.linkUp(handle: result.1.handle)
        lostReason = nil
        gatt.reset(); attBearer.reset()
        return result.1
    }

    /// Scans for `match` and connects to it.
    @discardableResult
    public func connect(_ match: DeviceMatch, scanTimeout: Duration = .seconds(10)) throws(HostError) -> LEConnection {
        let adv = try scan(for: match, timeout: scanTimeout)
        return try connect(to: adv.address, type: adv.addressType)
    }

    /// HCI Disconnect (reason 0x13, remote user terminated) and wait for the link to drop.
    public func disconnect(reason: UInt8 = 0x13) throws(HostError) {
        guard let c = connection else { return }
        try command(HCIDisconnect(handle: c.handle, reason: reason))
        do {
            try wait("disconnection", timeout: options.disconnectTimeout) { () throws(HostError) -> Bool? in
                connection == nil ? true : nil
            }
        } catch {
            connection = nil // forget the link either way
            throw error
        }
    }

    // MARK: ACL and L2CAP (Core 5.4 Vol 3 Part A)

    /// Sends one L2CAP basic frame through the host, the credit wait bounded by the ATT timeout.
    func sendL2CAP(cid: UInt16, _ payload: [UInt8]) throws(HostError) {
        try host.sendL2CAP(cid: cid, payload, creditTimeout: options.attTimeout)
    }

    /// LE signalling (Vol 3 Part A §4): accept Connection Parameter Update, reject other requests.
    func handleSignalling(_ p: [UInt8]) throws(HostError) {
        guard let s = L2CAPSignalling.decode(p), let c = connection else { return }
        switch s.command {
        case let u as L2CAPConnectionParameterUpdateRequest:
            let params = ConnectionParameters(
                intervalMin: u.intervalMin, intervalMax: u.intervalMax, latency: u.latency,
                supervisionTimeout: u.timeout)
            try sendL2CAP(
                cid: L2CAPCID.leSignalling,
                L2CAPConnectionParameterUpdateResponse(identifier: u.identifier, result: L2CAPConnectionParameterUpdateResponse.accepted).encode())
            // Not waited for: the Command Status lands while another wait is running.
            try host.sendCommandNoWait(HCILEConnectionUpdate(handle: c.handle, parameters: params))
        default: // rejects, responses, credits: nothing to answer; other requests: Command Reject §4.1
            if !s.code.needsNoAnswer { try sendL2CAP(cid: L2CAPCID.leSignalling, L2CAPCommandReject(identifier: s.identifier).encode()) }
        }
    }
}
