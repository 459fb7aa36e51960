/// HCI status / error code (Core 5.4 Vol 1 Part F §1.3). Open: unknown codes keep decoding.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(0x00)
    public static let unknownConnectionIdentifier = HCIStatus(0x02)
    public static let authenticationFailure = HCIStatus(0x05)
    public static let pinOrKeyMissing = HCIStatus(0x06)
    public static let connectionTimeout = HCIStatus(0x08)
    public static let commandDisallowed = HCIStatus(0x0C)
    public static let remoteUserTerminatedConnection = HCIStatus(0x13)
    public static let connectionTerminatedByLocalHost = HCIStatus(0x16)
    public static let lmpResponseTimeout = HCIStatus(0x22)
    public static let instantPassed = HCIStatus(0x28)
    public static let unacceptableConnectionParameters = HCIStatus(0x3B)
    public static let connectionTerminatedDueToMICFailure = HCIStatus(0x3D)
    public static let connectionFailedToBeEstablished = HCIStatus(0x3E)

    /// "Remote User Terminated Connection"; "Unknown" for undefined codes.
    public var name: String { HCIStatusNames.name(rawValue) }
    public var isSuccess: Bool { rawValue == 0 }
    public var description: String { name }
}
