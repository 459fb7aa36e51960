import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftTransport
import BluesiftHost
import BluesiftSecurity

/// A live device reached through BluesiftHost: the LE central over any HCI transport, or only
/// an ATT client over the kernel's LE L2CAP socket (`l2cap:N`).
public final class HostReplayDevice: ReplayDevice {
    /// nil over `l2cap:N`: the kernel holds the link.
    public let central: LECentral?
    public let gatt: ATTClient
    public private(set) var peerAddress: String?
    /// The bond store (`--keys`), and where to write it; nil path: keys are not kept.
    public var bonds = BondStore()
    public var keysPath: String?
    /// Said once per event worth a line on stderr (bond forgotten, keys written).
    public var onNote: ((String) -> Void)?

    /// Opens the transport, sets the controller up, scans for the device and connects.
    /// `tap` sees every HCI packet (for `--record`). With a bond for the device that records
    /// the address this host paired from, the host uses that address again (the device
    /// keys its bond by it).
    public static func connect(
        transport spec: String, match: DeviceMatch, options: HostOptions = HostOptions(),
        scanTimeout: Duration = .seconds(10), pairing: PairingPolicy = PairingPolicy(),
        bonds: BondStore = BondStore(), keysPath: String? = nil,
        tap: ((HCITapEvent) -> Void)? = nil,
        notice: ((String) -> Void)? = nil,
        system: any SocketSystem = PosixSocketSystem()
    ) throws(ReplayFault) -> HostReplayDevice {
        var options = options
        if case .address(let a) = match, let local = bonds.bond(for: a)?.localAddress { options.randomAddress = local }
        let transport: FDTransport
        do {
            transport = try TransportSpec(parsing: spec).open(system: system, notice: notice)
        } catch {
            if error.code == .permissionDenied { throw ReplayFault(.permissionDenied, error.message) }
            // The transport's message names the spec already.
            let message = error.message.hasPrefix(spec) ? error.message : "\(spec): \(error.message)"
            if error.code == .noSuchAdapter || error.code == .noBluetoothSockets { throw ReplayFault(.noAdapter, message) }
            throw ReplayFault(.transportClosed, message)
        }
        transport.tap = tap
        let central = LECentral(transport: transport, options: options)
        central.pairing = pairing
        let device = HostReplayDevice(central: central)
        device.bonds = bonds; device.keysPath = keysPath
        do {
            _ = try central.setUp()
            let c = try central.connect(match, scanTimeout: scanTimeout)
            device.peerAddress = c.peer.description
        } catch {
            transport.close()
            throw Self.fault(error, doing: "connecting to \(match)")
        }
        return device
    }

    init(central: LECentral) { self.central = central; gatt = central.gatt }

    init(gatt: ATTClient) { central = nil; self.gatt = gatt }

    /// `l2cap:N`: the kernel connects to `peer` over adapter N and holds the link; this host
    /// speaks ATT on it. Security is the kernel's (`secure` asks for it with BT_SECURITY).
    public static func connectL2CAP(
        index: UInt16, peer: BDAddr, random: Bool, options: HostOptions = HostOptions(),
        connectTimeout: Duration = .seconds(10)
    ) throws(ReplayFault) -> HostReplayDevice {
        let bearer: L2CAPBearer
        do { bearer = try L2CAPBearer(index: index, peer: peer, random: random, timeout: connectTimeout) } catch {
            if error.code == .permissionDenied { throw ReplayFault(.permissionDenied, error.message) }
            if error.code == .noSuchAdapter || error.code == .noBluetoothSockets { throw ReplayFault(.noAdapter, error.message) }
            throw ReplayFault(error.code == .openFailed && error.errno != nil ? .deviceNotFound : .transportClosed, error.message)
        }
        let device = HostReplayDevice(gatt: ATTClient(bearer: bearer, timeout: options.attTimeout, preferredMTU: options.preferredMTU))
        device.peerAddress = peer.description
        return device
    }

    static func fault(_ e: HostError, doing what: String) -> ReplayFault {
        switch e {
        case .deviceNotFound: return ReplayFault(.deviceNotFound, "\(what): no such device advertising")
        case .connectionLost(let r):
            return ReplayFault(.connectionLost, "connection lost while \(what): \(HCIStatus(r).name) (\(Hex.fixed(UInt64(r), width: 2)))")
        case .connectionFailed(let s):
            return ReplayFault(.connectionLost, "connection failed while \(what): \(HCIStatus(s).name) (\(Hex.fixed(UInt64(s), width: 2)))")
        case .notConnected: return ReplayFault(.connectionLost, "connection lost while \(what)")
        case .timeout(let w): return ReplayFault(.timeout, "the device did not answer while \(what) (timed out waiting for \(w))")
        case .commandRejected(let op, let s):
            return ReplayFault(
                .commandRejected,
                "the controller rejected \(HCICommandNames.name(op)) (\(Hex.fixed(UInt64(op), width: 4))) while \(what): "
                    + "\(HCIStatus(s).name) (\(Hex.fixed(UInt64(s), width: 2)))")
        case .transportClosed(let m): return ReplayFault(.transportClosed, "the transport closed while \(what): \(m)")
        case .transport(let t): return ReplayFault(.transportClosed, "transport failure while \(what): \(t.message)")
        case .attError(let req, let h, let err):
            return ReplayFault(.init(rawValue: "att_error"), "\(req.name) on \(Hex.fixed(UInt64(h), width: 4)) failed while \(what): \(err.name)")
        case .protocolError(let m): return ReplayFault(.init(rawValue: "protocol_error"), "\(what): \(m)")
        case .pairingFailed(let r, let byPeer):
            return ReplayFault(
                .pairingFailed,
                "Pairing Failed: \(SMPFailureReason(rawValue: r).name)"
                    + (byPeer ? " (sent by the device)" : " (sent by this host)") + " while \(what)")
        case .encryptionFailed(let s):
            return ReplayFault(.pairingFailed, "encryption failed while \(what): \(HCIStatus(s).name) (\(Hex.fixed(UInt64(s), width: 2)))")
        }
    }

    public var kernelDrops: KernelDrops? {
        central?.transport.kernelBuffer.map { KernelDrops(dropped: $0.dropped, receiveBuffer: $0.bytes) }
    }

    public var security: ReplaySecurity? { kernelSecurity ?? central?.security.map { Self.describe($0, paired: false, bonded: false, forgotten: false) } }
    public var securityRequested: Bool { central?.securityRequest != nil }

    static func describe(_ s: LinkSecurity, paired: Bool, bonded: Bool, forgotten: Bool) -> ReplaySecurity {
        ReplaySecurity(
            level: s.level, levelName: s.levelName, method: s.method, keySize: s.keySize,
            secureConnections: s.secureConnections, paired: paired, bonded: bonded, bondForgotten: forgotten)
    }

    /// Re-encrypts with the stored key for this device, else pairs; new keys go to `keysPath`
    /// (written atomically, mode 0600).
    public func secure() throws(ReplayFault) -> ReplaySecurity {
        guard let central else { return try secureByKernel(gatt.bearer) }
        guard let c = central.connection else { throw Self.fault(.notConnected, doing: "pairing") }
        let stored = keysPath == nil ? nil : bonds.bond(for: c.peer)
        let out: SecureOutcome
        do { out = try central.secure(bond: stored) } catch {
            throw Self.fault(error, doing: stored == nil ? "pairing" : "encrypting with the stored key")
        }
        if out.bondForgotten {
            onNote?("the device has no bond for this host any more (PIN or Key Missing): paired again")
            bonds.remove(c.peer)
        }
        var bonded = false
        if let b = out.bond, let path = keysPath {
            bonds.put(b)
            do { try bonds.save(path: path) } catch {
                throw ReplayFault(.init(rawValue: "keys_not_saved"), "\(path): \(error.description)")
            }
            bonded = true
        }
        return Self.describe(out.security, paired: out.paired, bonded: bonded, forgotten: out.bondForgotten)
    }

    /// BT_SECURITY medium: the kernel pairs (Just Works: no agent answers it here) or
    /// re-encrypts with a key BlueZ keeps. The kernel's keys are its own: none go to --keys.
    var kernelSecurity: ReplaySecurity?

    func secureByKernel(_ bearer: any ATTBearer) throws(ReplayFault) -> ReplaySecurity {
        let got: (level: UInt8, keySize: UInt8)
        do { got = try bearer.secure(level: 2, timeout: max(gatt.timeout, .seconds(15))) } catch { // the kernel pairs: ECDH and all
            throw ReplayFault(.pairingFailed, "\(error.message) (pairing methods other than Just Works need hci:N)")
        }
        // BT_SECURITY levels: 2 medium (encrypted), 3 high (authenticated), 4 FIPS (LE SC authenticated).
        let names = [2: "encrypted unauthenticated", 3: "authenticated", 4: "authenticated secure connections"]
        let s = ReplaySecurity(
            level: Int(got.level), levelName: names[Int(got.level)] ?? "level \(got.level)", method: "kernel",
            keySize: Int(got.keySize), secureConnections: got.level == 4, paired: true, bonded: false, bondForgotten: false)
        kernelSecurity = s
        return s
    }

    public func discover() throws(ReplayFault) -> GATTDatabase {
        let services: [DiscoveredService]
        do { services = try gatt.discoverAll() } catch { throw Self.fault(error, doing: "discovering the GATT database") }
        var db = GATTDatabase()
        for s in services {
            var svc = GATTDatabase.Service(start: s.startHandle, end: s.endHandle, uuid: s.uuid, primary: true)
            for c in s.characteristics {
                var ch = GATTDatabase.Characteristic(handle: c.declarationHandle, valueHandle: c.valueHandle, uuid: c.uuid, properties: c.properties)
                ch.descriptors = c.descriptors.map { GATTDatabase.Descriptor(handle: $0.handle, uuid: $0.uuid) }
                svc.characteristics.append(ch)
            }
            db.services.append(svc)
        }
        return db
    }

    public func exchangeMTU(_ mtu: Int) throws(ReplayFault) -> Int {
        do { return Int(try gatt.exchangeMTU(UInt16(clamping: mtu))) } catch { throw Self.fault(error, doing: "exchanging the MTU") }
    }

    public func write(handle: UInt16, value: [UInt8], op: WriteOp) throws(ReplayFault) -> ATTOutcome {
        do {
            switch op {
            case .request: try gatt.write(handle, value, withResponse: true)
            case .prepared: try gatt.writeLong(handle, value)
            // A recorded Write Command longer than the MTU allows (a fuzzer's reproducer) goes out
            // as recorded, in one PDU: a command cannot be split.
            case .command where value.count > Int(gatt.mtu) - 3:
                _ = try gatt.sendRaw([ATTOpcode.writeCommand.rawValue, UInt8(handle & 0xFF), UInt8(handle >> 8)] + value)
            // Signed writes go out as recorded values without a fresh signature: sent as commands.
            case .command, .signed: try gatt.write(handle, value, withResponse: false)
            }
            return .ok
        } catch {
            if case .attError(_, _, let e) = error { return .error(code: e.rawValue) }
            throw Self.fault(error, doing: "writing \(Hex.fixed(UInt64(handle), width: 4))")
        }
    }

    public func read(handle: UInt16) throws(ReplayFault) -> ATTOutcome {
        do { return .value(try gatt.read(handle)) } catch {
            if case .attError(_, _, let e) = error { return .error(code: e.rawValue) }
            throw Self.fault(error, doing: "reading \(Hex.fixed(UInt64(handle), width: 4))")
        }
    }

    public var droppedNotifications: Int { gatt.droppedNotifications }

    public func notifications(until deadline: ContinuousClock.Instant, atLeast: Int) throws(ReplayFault) -> [ReceivedNotification] {
        let left = deadline - .now
        var got: [GATTNotification] = []
        do throws(HostError) {
            if (gatt.notifications.count < atLeast) && (left > .zero) {
                if atLeast == .max {
                    // The central pumps its host with or without a link; the kernel's socket has only ATT.
                    if let central { try central.pump(for: left) } else { try gatt.pump(for: left) }
                } else {
                    do throws(HostError) { got = try gatt.waitForNotifications(count: atLeast, timeout: left) } catch {
                        guard case .timeout = error else { throw error }
                    }
                }
            }
        } catch {
            throw Self.fault(error, doing: "waiting for notifications")
        }
        if let central, central.connection == nil, let r = central.lostReason {
            throw Self.fault(.connectionLost(reason: r), doing: "waiting for notifications")
        }
        let now = ContinuousClock.now
        return (got + gatt.takeNotifications()).map { ReceivedNotification(handle: $0.handle, value: $0.value, indication: $0.isIndication, at: now) }
    }

    public func disconnect() {
        guard let central else { gatt.bearer.close(); return } // the kernel drops the link
        _ = try? central.disconnect()
        central.transport.close()
    }
}
