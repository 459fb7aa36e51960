import BluesiftWire
import BluesiftCapture
import BluesiftReplay
import BluesiftHost
import BluesiftTransport

/// Opens the transport, sets up the controller, finds and connects the device. With
/// `record`, every HCI packet goes to a btsnoop written atomically when `finishRecording` runs.
func openLiveDevice(transport: String, address: String?, name: String?, timeout: Double,
                    recorder: Recorder?) throws(ReplayFault) -> ReplayDevice {
    let match: DeviceMatch
    if let name { match = .name(name) }
    else if let a = address, let addr = BDAddr(string: a) { match = .address(addr) }
    else { throw ReplayFault(.deviceNotFound, "no device address recorded: give --device ADDR or --name NAME") }
    var options = HostOptions()
    options.attTimeout = .milliseconds(Int64(timeout * 1000))
    options.commandTimeout = .milliseconds(Int64(max(timeout, 2) * 1000))
    return try HostReplayDevice.connect(transport: transport, match: match, options: options,
                                        scanTimeout: .milliseconds(Int64(max(timeout, 3) * 1000)), tap: recorder?.tap)
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
