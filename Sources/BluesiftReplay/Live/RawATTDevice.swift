import BluesiftWire
import BluesiftProtocols

/// A live device that also takes ATT PDUs as given (no MTU or format check): what the device
/// fuzzer sends beside the replayer's well-formed requests.
public protocol RawATTDevice: ReplayDevice {
    /// Sends `pdu`; for a request, waits for and returns the response (an Error Response too).
    func sendRaw(_ pdu: [UInt8]) throws(ReplayFault) -> [UInt8]?
    /// The HCI reason the link ended with (Disconnection Complete), when it ended; nil while
    /// up, or where the transport does not say (l2cap:N).
    var linkLossReason: UInt8? { get }
    /// The ATT MTU in force.
    var attMTU: Int { get }
}

extension HostReplayDevice: RawATTDevice {
    public func sendRaw(_ pdu: [UInt8]) throws(ReplayFault) -> [UInt8]? {
        do { return try gatt.sendRaw(pdu) } catch {
            throw Self.fault(error, doing: "sending \(ATTOpcode(rawValue: pdu.first ?? 0).name)")
        }
    }

    public var linkLossReason: UInt8? { central?.connection == nil ? central?.lostReason : nil }

    public var attMTU: Int { Int(gatt.mtu) }
}

extension ReplayScript.Target {
    /// A target built outside this module (the fuzzer's reads and writes of handles the
    /// recording never used): the handle, identity to be filled in.
    public static func handle(_ h: Int) -> ReplayScript.Target { ReplayScript.Target(handle: h) }
}
