import BluesiftProtocols
import BluesiftTransport
import BluesiftWire

/// Why a host operation failed. Every wait has a timeout, so every failure ends up here.
public enum HostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Scanning ended without a matching advertiser.
    case deviceNotFound(String)
    /// The link dropped (Disconnection Complete); `reason` is the HCI error code.
    case connectionLost(reason: UInt8)
    /// LE Connection Complete came back with a non-zero status.
    case connectionFailed(status: UInt8)
    /// Nothing came in time; `what` names the step.
    case timeout(String)
    /// The controller answered a command with a non-zero status.
    case commandRejected(opcode: UInt16, status: UInt8)
    /// The peer answered an ATT request with an Error Response.
    case attError(request: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    case notConnected
    /// The transport went away (peer closed, device unplugged).
    case transportClosed(String)
    /// Any other transport failure.
    case transport(TransportError)
    /// The peer or controller sent something this host cannot make sense of.
    case protocolError(String)
    /// SMP ended with Pairing Failed (Vol 3 Part H §3.5.5): sent by the peer (`byPeer`) or by
    /// this host (a check that failed here, a passkey not given).
    case pairingFailed(reason: UInt8, byPeer: Bool)
    /// Encryption Change with a non-zero status (e.g. 0x06 PIN or Key Missing: the device
    /// has no bond for this host).
    case encryptionFailed(status: UInt8)

    public var description: String {
        switch self {
        case .deviceNotFound(let what): "device not found: \(what)"
        case .connectionLost(let r): "connection lost (reason \(Hex.fixed(UInt64(r), width: 2)))"
        case .connectionFailed(let s): "connection failed (status \(Hex.fixed(UInt64(s), width: 2)))"
        case .timeout(let what): "timed out waiting for \(what)"
        case .commandRejected(let op, let s):
            "HCI command \(Hex.fixed(UInt64(op), width: 4)) rejected with status \(Hex.fixed(UInt64(s), width: 2))"
        case .attError(let req, let h, let e):
            "ATT \(req.name) on handle \(Hex.fixed(UInt64(h), width: 4)) failed: \(e.name) (\(Hex.fixed(UInt64(e.rawValue), width: 2)))"
        case .notConnected: "not connected"
        case .transportClosed(let m): "transport closed: \(m)"
        case .transport(let e): e.message
        case .protocolError(let m): "protocol error: \(m)"
        case .pairingFailed(let r, let peer):
            "Pairing Failed: \(SMPFailureReason(rawValue: r).name)" + (peer ? "" : " (sent by this host)")
        case .encryptionFailed(let s): "encryption failed (status \(Hex.fixed(UInt64(s), width: 2)))"
        }
    }

    init(_ e: TransportError) {
        self = e.code == .closed ? .transportClosed(e.message) : .transport(e)
    }
}
