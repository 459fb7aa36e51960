import BluesiftWire
import BluesiftCapture
import BluesiftReplay
import BluesiftHost
import BluesiftTransport
import BluesiftSecurity
import Foundation

/// Opens the transport, sets up the controller, finds and connects the device. With
/// `record`, every HCI packet goes to a btsnoop written atomically when `finishRecording` runs.
func openLiveDevice(
    transport: String, address: String?, name: String?, timeout: Double,
    recorder: Recorder?, pairing: PairingPolicy = PairingPolicy(),
    bonds: BondStore = BondStore(), keysPath: String? = nil, addressType: String? = nil, quiet: Bool = false
) throws(ReplayFault) -> ReplayDevice {
    if case .l2cap(let index)? = try? TransportSpec(parsing: transport) {
        // The kernel connects by address: there is no scan to match a name with.
        guard name == nil, let a = address, let peer = BDAddr(string: a) else {
            throw ReplayFault(.deviceNotFound, "\(transport) connects by address: give --device ADDR (--name needs hci:N or another HCI transport)")
        }
        if recorder != nil { stderrLine("bluesift: replay: --record records HCI packets, which \(transport) does not see (use `bluesift capture` beside it)") }
        var options = HostOptions()
        options.attTimeout = .milliseconds(Int64(timeout * 1000))
        // Random unless recorded public: a static random address has its two top bits set.
        let random = addressType.map { $0.lowercased().hasPrefix("random") } ?? (peer.value >> 46 == 0b11)
        return try HostReplayDevice.connectL2CAP(
            index: index, peer: peer, random: random, options: options,
            connectTimeout: .milliseconds(Int64(max(timeout, 5) * 1000)))
    }
    let match: DeviceMatch
    if let name { match = .name(name) } else if let a = address, let addr = BDAddr(string: a) { match = .address(addr) } else { throw ReplayFault(.deviceNotFound, "no device address recorded: give --device ADDR or --name NAME") }
    var options = HostOptions()
    options.attTimeout = .milliseconds(Int64(timeout * 1000))
    options.commandTimeout = .milliseconds(Int64(max(timeout, 2) * 1000))
    let device = try HostReplayDevice.connect(
        transport: transport, match: match, options: options,
        scanTimeout: .milliseconds(Int64(max(timeout, 3) * 1000)), pairing: pairing,
        bonds: bonds, keysPath: keysPath, tap: recorder?.tap,
        notice: quiet ? nil : { stderrLine("bluesift: replay: " + $0) })
    device.onNote = { stderrLine("bluesift: replay: " + $0) }
    return device
}

/// The pairing choices of `replay`: IO capability from what the person can do here.
/// `--passkey` (or a terminal to type on) gives a keyboard, `--confirm` (or a terminal) a
/// yes/no; without either the host is NoInputNoOutput and pairs Just Works.
func pairingPolicy(passkey: UInt32?, confirm: Bool) -> PairingPolicy {
    var p = PairingPolicy()
    let terminal = isatty(0) == 1 && isatty(2) == 1
    p.passkey = passkey
    p.ioCapability = passkey != nil || terminal ? .keyboardDisplay : (confirm ? .displayYesNo : .noInputNoOutput)
    p.display = { stderrLine("bluesift: replay: " + $0) }
    p.confirmNumber = { _ in
        if confirm { return true }
        guard terminal else { return false }
        stderrRaw("bluesift: replay: do the six digits match? [y/N] ")
        return (readLine() ?? "").lowercased().hasPrefix("y")
    }
    if terminal && passkey == nil {
        p.askPasskey = {
            stderrRaw("bluesift: replay: passkey shown on the device: ")
            return readLine().flatMap { UInt32($0.trimmingCharacters(in: .whitespaces)) }
        }
    }
    return p
}

/// Writes the replay session as a capture; the file appears only when complete.
final class Recorder {
    let writer: any CaptureWriter
    var frame = 0
    var failed: String?

    init(path: String) throws(CaptureError) { writer = try CaptureFile.writer(path: path, format: .btsnoop) }

    var tap: (HCITapEvent) -> Void {
        { [self] e in
            frame += 1
            e.withCaptureRecord(frame: frame) { r in
                do throws(CaptureError) { try writer.write(r) } catch { failed = error.description }
            }
        }
    }

    func finish() throws(CaptureError) { try writer.finish() }
}

/// The plugin interpreter for field-aware diffs; nil when no plugin is loaded.
func vendorInterpreter(_ options: PluginOptions) -> VendorInterpreter? {
    options.loadPlugins().map { PluginInterpreter(plugins: $0) }
}
