import BluesiftReplay

/// Opens the transport, sets up the controller, finds and connects the device.
func openLiveDevice(transport: String, address: String?, name: String?, addressType: String?,
                    timeout: Double, record: String?) throws(ReplayFault) -> ReplayDevice {
    // Wired to BluesiftHost when the LE central lands.
    throw ReplayFault(.transportClosed, "\(transport): live replay is not available in this build")
}

/// The plugin interpreter for field-aware diffs; nil when no plugin folder is loaded.
func vendorInterpreter(_ dirs: [String]) throws -> VendorInterpreter? { nil }
