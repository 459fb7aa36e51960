import BluesiftWire
import BluesiftProtocols
import BluesiftTransport
import BluesiftHost

/// Runs an emulation over an HCI transport: sets the controller up as the recorded device
/// (its address where the controller allows, its advertising data and scan response),
/// advertises, serves each connection with an `Emulator`, and advertises again after it,
/// until `sessions` links have been served or `stop` says so.
public final class EmulationRunner {
    public struct Options {
        /// Links to serve before returning; nil: until stopped.
        public var sessions: Int?
        /// The SMP responder (nil: pairing refused with Pairing Not Supported).
        public var pairing: PairingPolicy?
        public var peripheral = PeripheralOptions()
        public init() {}
    }

    public let emulator: Emulator
    public var options: Options
    /// One line per event worth saying (address used, connection, disconnection).
    public var notice: ((String) -> Void)?

    public init(emulator: Emulator, options: Options = Options()) {
        self.emulator = emulator
        self.options = options
    }

    /// Opens `spec`, runs, closes. Faults end the run with the report so far (`fault` set).
    public func run(transport spec: String, tap: ((HCITapEvent) -> Void)? = nil, stop: @escaping () -> Bool) -> ReplayReport {
        let transport: FDTransport
        do { transport = try TransportSpec(parsing: spec).open(notice: notice) } catch {
            var r = emulator.report
            let code: ReplayFault.Code = error.code == .permissionDenied ? .permissionDenied : .transportClosed
            r.fault = .init(code: code.rawValue, message: error.message.hasPrefix(spec) ? error.message : "\(spec): \(error.message)", step: nil)
            r.complete = false
            return r
        }
        transport.tap = tap
        defer { transport.close() }
        var r = run(transport: transport, stop: stop)
        r.transport = spec
        return r
    }

    /// Runs over an open transport (tests hand one in).
    public func run(transport: any HCITransport, stop: @escaping () -> Bool) -> ReplayReport {
        let model = emulator.model
        let peripheral = LEPeripheral(
            transport: transport, attributes: Emulator.attributes(of: model.database), responder: emulator,
            preferredMTU: emulator.preferredMTU, options: options.peripheral)
        if let policy = options.pairing { peripheral.smp = SMPResponder(policy: policy) }
        peripheral.smp?.onEvent = { [weak self] in self?.notice?($0) }
        if let p = options.pairing {
            notice?(
                "pairing as the recording shows: \(p.ioCapability.name), " + (p.secureConnections ? "LE Secure Connections" : "legacy only")
                    + ((p.mitm ?? false) ? ", MITM" : ""))
        }
        peripheral.onNotification = { [emulator] in emulator.notification($0) }
        var doing = "setting the controller up"
        do {
            try peripheral.setUp()
            doing = "choosing the address"
            if let note = try peripheral.useAddress(model.address, type: model.addressType ?? .random) { notice?(note) }
            var served = 0
            while options.sessions.map({ served < $0 }) ?? true, !stop() {
                doing = "advertising"
                try peripheral.startAdvertising(data: model.advertisingData, scanResponse: model.scanResponse)
                if served == 0 {
                    notice?(
                        "advertising as \(peripheral.ownAddress) (\(peripheral.ownAddressType.name))"
                            + (model.name.map { " \"\($0)\"" } ?? "") + ": \(Emulator.attributes(of: model.database).count) attributes, "
                            + "\(model.readCount) reads and \(model.writeCount) writes recorded")
                }
                doing = "waiting for a connection"
                guard let link = try peripheral.waitForConnection(stop: stop) else { try? peripheral.stopAdvertising(); break }
                served += 1
                emulator.sessionStarted()
                notice?("session \(served): \(link.peer) connected")
                doing = "serving session \(served)"
                let reason = try peripheral.serve(stop: stop)
                notice?("session \(served): disconnected" + (reason.map { " (\(HCIStatus($0).name))" } ?? ""))
            }
        } catch {
            var r = emulator.report
            let f = HostReplayDevice.fault(error, doing: doing)
            r.fault = .init(code: f.code.rawValue, message: f.message, step: nil)
            r.complete = false
            return r
        }
        return emulator.report
    }
}
