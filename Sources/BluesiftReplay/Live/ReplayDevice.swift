import BluesiftWire
import BluesiftGATT

/// What the replayer needs from a live device. The LE central in BluesiftHost implements it
/// over a real HCI transport; tests may implement it over anything. Every call has a timeout
/// inside the implementation and throws `ReplayFault` instead of hanging.
public protocol ReplayDevice: AnyObject {
    /// The connected peer's address, as "c0:ba:0d:00:00:01".
    var peerAddress: String? { get }
    func discover() throws(ReplayFault) -> GATTDatabase
    /// Returns the MTU the server answered.
    func exchangeMTU(_ mtu: Int) throws(ReplayFault) -> Int
    func write(handle: UInt16, value: [UInt8], op: WriteOp) throws(ReplayFault) -> ATTOutcome
    func read(handle: UInt16) throws(ReplayFault) -> ATTOutcome
    /// Notifications and indications received so far or until `deadline`, oldest first;
    /// returns early once at least `atLeast` are available.
    func notifications(until deadline: ContinuousClock.Instant, atLeast: Int) throws(ReplayFault) -> [ReceivedNotification]
    func disconnect()
    /// Notifications the device sent that could not be buffered (a flood); 0 when unknown.
    var droppedNotifications: Int { get }
    /// Packets the kernel dropped before the host read them (hci:N: the user channel's receive
    /// buffer was full); nil where the transport cannot tell.
    var kernelDrops: KernelDrops? { get }
    /// Encrypts the link: re-encrypts with a stored key, else pairs (and stores the keys).
    func secure() throws(ReplayFault) -> ReplaySecurity
    /// The security in force; nil while unencrypted.
    var security: ReplaySecurity? { get }
    /// The device sent a Security Request not yet acted on.
    var securityRequested: Bool { get }
}

/// What the kernel dropped under an HCI user channel, and the receive buffer it had.
public struct KernelDrops: Sendable, Equatable {
    public var dropped: Int
    /// Bytes, as the kernel reports SO_RCVBUF; nil when unknown.
    public var receiveBuffer: Int?
    public init(dropped: Int, receiveBuffer: Int?) { self.dropped = dropped; self.receiveBuffer = receiveBuffer }
}

extension ReplayDevice {
    public var droppedNotifications: Int { 0 }
    public var kernelDrops: KernelDrops? { nil }
    public func secure() throws(ReplayFault) -> ReplaySecurity {
        throw ReplayFault(.pairingFailed, "this device cannot pair")
    }
    public var security: ReplaySecurity? { nil }
    public var securityRequested: Bool { false }
}

/// What securing a link reached (Core 5.4 Vol 3 Part C §10.2.1 levels 2-4).
public struct ReplaySecurity: Codable, Sendable, Equatable {
    public var level: Int
    public var levelName: String
    /// just_works, numeric_comparison, passkey_entry, stored_key.
    public var method: String
    public var keySize: Int
    public var secureConnections: Bool
    /// SMP ran (false: re-encrypted with a key from --keys).
    public var paired: Bool
    /// Keys were written to --keys.
    public var bonded: Bool
    /// The stored key was refused (PIN or Key Missing): paired again.
    public var bondForgotten: Bool
    /// Why: "recording", "--pair always", "security request", or the ATT error that asked.
    public var reason: String?
    /// The step before which it happened (0: before the first).
    public var beforeStep: Int?

    public init(
        level: Int, levelName: String, method: String, keySize: Int, secureConnections: Bool,
        paired: Bool, bonded: Bool, bondForgotten: Bool
    ) {
        self.level = level; self.levelName = levelName; self.method = method; self.keySize = keySize
        self.secureConnections = secureConnections; self.paired = paired; self.bonded = bonded; self.bondForgotten = bondForgotten
    }
}

/// When to pair (`--pair`).
public enum PairMode: String, Sendable, CaseIterable {
    /// Never: protected characteristics answer with their ATT errors.
    case never
    /// Before the first step when the recording shows SMP or encryption, on an Insufficient
    /// Authentication / Encryption / Encryption Key Size error (then the request is retried
    /// once), and on the device's Security Request.
    case auto
    /// Before the first step.
    case always
}

public enum WriteOp: String, Sendable {
    case request, command, signed, prepared
}

/// The answer to one request.
public enum ATTOutcome: Sendable, Equatable {
    /// Write Response, Execute Write Response, or nothing due (Write Command).
    case ok
    case value([UInt8])
    case error(code: UInt8)
}

public struct ReceivedNotification: Sendable, Equatable {
    public var handle: UInt16
    public var value: [UInt8]
    public var indication: Bool
    public var at: ContinuousClock.Instant
    public init(handle: UInt16, value: [UInt8], indication: Bool, at: ContinuousClock.Instant) {
        self.handle = handle; self.value = value; self.indication = indication; self.at = at
    }
}

/// A transport or device failure: the run ends with exit code 3 and a partial report.
public struct ReplayFault: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let deviceNotFound = Code(rawValue: "device_not_found")
        public static let connectionLost = Code(rawValue: "connection_lost")
        public static let timeout = Code(rawValue: "timeout")
        public static let commandRejected = Code(rawValue: "command_rejected")
        public static let transportClosed = Code(rawValue: "transport_closed")
        public static let wrongDevice = Code(rawValue: "wrong_device")
        /// Pairing Failed (either side), a passkey not given, a refused or failed encryption.
        public static let pairingFailed = Code(rawValue: "pairing_failed")
        /// The transport needs a capability this process lacks (hci:N without CAP_NET_ADMIN).
        public static let permissionDenied = Code(rawValue: "permission_denied")
        /// The transport's adapter is not there: no hciN (or no Bluetooth in this kernel), no
        /// serial device at that path.
        public static let noAdapter = Code(rawValue: "no_adapter")
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    public var description: String { message }
}
