import BluesiftWire

// The values of Bluetooth Mesh read off the air (Mesh Protocol v1.1, Mesh Model v1.1): open
// RawRepresentable structs, an unknown value printed as unknown and decoding going on.

/// Mesh Beacon type (Mesh Protocol v1.1 §3.10, Table 3.62).
public struct MeshBeaconType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let unprovisionedDevice = MeshBeaconType(rawValue: 0x00)
    public static let secureNetwork = MeshBeaconType(rawValue: 0x01)
    public static let meshPrivate = MeshBeaconType(rawValue: 0x02)
    public var name: String {
        switch rawValue {
        case 0x00: "Unprovisioned Device"
        case 0x01: "Secure Network"
        case 0x02: "Mesh Private"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Provisioning PDU type (Mesh Protocol v1.1 §5.4.1, Table 5.18): the low 6 bits of the
/// first octet.
public struct MeshProvisioningPDUType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let invite = Self(rawValue: 0x00), capabilities = Self(rawValue: 0x01), start = Self(rawValue: 0x02)
    public static let publicKey = Self(rawValue: 0x03), inputComplete = Self(rawValue: 0x04), confirmation = Self(rawValue: 0x05)
    public static let random = Self(rawValue: 0x06), data = Self(rawValue: 0x07), complete = Self(rawValue: 0x08)
    public static let failed = Self(rawValue: 0x09), recordRequest = Self(rawValue: 0x0A), recordResponse = Self(rawValue: 0x0B)
    public static let recordsGet = Self(rawValue: 0x0C), recordsList = Self(rawValue: 0x0D)
    public var name: String {
        switch rawValue {
        case 0x00: "Provisioning Invite"
        case 0x01: "Provisioning Capabilities"
        case 0x02: "Provisioning Start"
        case 0x03: "Provisioning Public Key"
        case 0x04: "Provisioning Input Complete"
        case 0x05: "Provisioning Confirmation"
        case 0x06: "Provisioning Random"
        case 0x07: "Provisioning Data"
        case 0x08: "Provisioning Complete"
        case 0x09: "Provisioning Failed"
        case 0x0A: "Provisioning Record Request"
        case 0x0B: "Provisioning Record Response"
        case 0x0C: "Provisioning Records Get"
        case 0x0D: "Provisioning Records List"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Provisioning Failed error code (Mesh Protocol v1.1 §5.4.1.10, Table 5.38).
public struct MeshProvisioningError: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let invalidPDU = Self(rawValue: 0x01), confirmationFailed = Self(rawValue: 0x04)
    public static let decryptionFailed = Self(rawValue: 0x06)
    public var name: String {
        switch rawValue {
        case 0x00: "Prohibited"
        case 0x01: "Invalid PDU"
        case 0x02: "Invalid Format"
        case 0x03: "Unexpected PDU"
        case 0x04: "Confirmation Failed"
        case 0x05: "Out of Resources"
        case 0x06: "Decryption Failed"
        case 0x07: "Unexpected Error"
        case 0x08: "Cannot Assign Addresses"
        case 0x09: "Invalid Data"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Generic Provisioning Control Format (Mesh Protocol v1.1 §5.3.1, Table 5.2): the low 2
/// bits of a Generic Provisioning PDU.
public struct MeshGPCF: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x03 }
    public static let transactionStart = Self(rawValue: 0), transactionAck = Self(rawValue: 1)
    public static let transactionContinuation = Self(rawValue: 2), bearerControl = Self(rawValue: 3)
    public var name: String {
        switch rawValue {
        case 0: "Transaction Start"
        case 1: "Transaction Acknowledgment"
        case 2: "Transaction Continuation"
        default: "Provisioning Bearer Control"
        }
    }
    public var description: String { name }
}

/// Provisioning Bearer Control opcode (Mesh Protocol v1.1 §5.3.1.4, Table 5.7).
public struct MeshBearerOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let linkOpen = Self(rawValue: 0), linkAck = Self(rawValue: 1), linkClose = Self(rawValue: 2)
    public var name: String {
        switch rawValue {
        case 0: "Link Open"
        case 1: "Link ACK"
        case 2: "Link Close"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Link Close reason (Mesh Protocol v1.1 §5.3.1.4.3, Table 5.10).
public struct MeshLinkCloseReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = Self(rawValue: 0), timeout = Self(rawValue: 1), fail = Self(rawValue: 2)
    public var name: String {
        switch rawValue {
        case 0: "Success"
        case 1: "Timeout"
        case 2: "Fail"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Proxy PDU message type (Mesh Protocol v1.1 §6.3.1, Table 6.3).
public struct MeshProxyMessageType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let networkPDU = Self(rawValue: 0), meshBeacon = Self(rawValue: 1)
    public static let proxyConfiguration = Self(rawValue: 2), provisioningPDU = Self(rawValue: 3)
    public var name: String {
        switch rawValue {
        case 0: "Network PDU"
        case 1: "Mesh Beacon"
        case 2: "Proxy Configuration"
        case 3: "Provisioning PDU"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Proxy PDU SAR (Mesh Protocol v1.1 §6.3.1, Table 6.2).
public struct MeshProxySAR: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x03 }
    public static let complete = Self(rawValue: 0), first = Self(rawValue: 1), continuation = Self(rawValue: 2), last = Self(rawValue: 3)
    public var name: String {
        switch rawValue {
        case 0: "Complete"
        case 1: "First Segment"
        case 2: "Continuation Segment"
        default: "Last Segment"
        }
    }
    public var description: String { name }
}

/// Proxy configuration message opcode (Mesh Protocol v1.1 §6.7, Table 6.11).
public struct MeshProxyConfigOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let setFilterType = Self(rawValue: 0x00), addAddresses = Self(rawValue: 0x01)
    public static let removeAddresses = Self(rawValue: 0x02), filterStatus = Self(rawValue: 0x03)
    public var name: String {
        switch rawValue {
        case 0x00: "Set Filter Type"
        case 0x01: "Add Addresses to Filter"
        case 0x02: "Remove Addresses from Filter"
        case 0x03: "Filter Status"
        case 0x04: "Directed Proxy Capabilities Status"
        case 0x05: "Directed Proxy Control"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Transport control opcode (Mesh Protocol v1.1 §3.6.5.11, Table 3.52).
public struct MeshControlOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }
    public static let segmentAck = Self(rawValue: 0x00), friendPoll = Self(rawValue: 0x01), friendUpdate = Self(rawValue: 0x02)
    public static let friendRequest = Self(rawValue: 0x03), friendOffer = Self(rawValue: 0x04), friendClear = Self(rawValue: 0x05)
    public static let friendClearConfirm = Self(rawValue: 0x06), friendSubscriptionListAdd = Self(rawValue: 0x07)
    public static let friendSubscriptionListRemove = Self(rawValue: 0x08), friendSubscriptionListConfirm = Self(rawValue: 0x09)
    public static let heartbeat = Self(rawValue: 0x0A)
    public var name: String {
        switch rawValue {
        case 0x00: "Segment Acknowledgment"
        case 0x01: "Friend Poll"
        case 0x02: "Friend Update"
        case 0x03: "Friend Request"
        case 0x04: "Friend Offer"
        case 0x05: "Friend Clear"
        case 0x06: "Friend Clear Confirm"
        case 0x07: "Friend Subscription List Add"
        case 0x08: "Friend Subscription List Remove"
        case 0x09: "Friend Subscription List Confirm"
        case 0x0A: "Heartbeat"
        case 0x0B: "Path Request"
        case 0x0C: "Path Reply"
        case 0x0D: "Path Confirmation"
        case 0x0E: "Path Echo Request"
        case 0x0F: "Path Echo Reply"
        case 0x10: "Dependent Node Update"
        case 0x11: "Path Request Solicitation"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Status code of configuration and model status messages (Mesh Protocol v1.1 §4.3.5,
/// Table 4.296; Mesh Model v1.1 Table 7.1 for generic and scene status codes share 0x00-0x02).
public struct MeshStatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0x00: "Success"
        case 0x01: "Invalid Address"
        case 0x02: "Invalid Model"
        case 0x03: "Invalid AppKey Index"
        case 0x04: "Invalid NetKey Index"
        case 0x05: "Insufficient Resources"
        case 0x06: "Key Index Already Stored"
        case 0x07: "Invalid Publish Parameters"
        case 0x08: "Not a Subscribe Model"
        case 0x09: "Storage Failure"
        case 0x0A: "Feature Not Supported"
        case 0x0B: "Cannot Update"
        case 0x0C: "Cannot Remove"
        case 0x0D: "Cannot Bind"
        case 0x0E: "Temporarily Unable to Change State"
        case 0x0F: "Cannot Set"
        case 0x10: "Unspecified Error"
        case 0x11: "Invalid Binding"
        case 0x12: "Invalid Path Entry"
        case 0x13: "Cannot Get"
        case 0x14: "Obsolete Information"
        case 0x15: "Invalid Bearer"
        default: "Unknown"
        }
    }
    public var description: String { name }
}

/// Mesh addresses (Mesh Protocol v1.1 §3.4.2): unassigned, unicast, virtual, group, and the
/// fixed group addresses.
public enum MeshAddress {
    public static func kind(_ a: UInt16) -> String {
        switch a {
        case 0x0000: "unassigned"
        case 0x0001...0x7FFF: "unicast"
        case 0x8000...0xBFFF: "virtual"
        default: "group"
        }
    }

    /// Names of the fixed group addresses (§3.4.2.4, Table 3.7).
    public static func fixedGroupName(_ a: UInt16) -> String? {
        switch a {
        case 0xFFFB: "all-ipt-border-routers"
        case 0xFFFC: "all-proxies"
        case 0xFFFD: "all-friends"
        case 0xFFFE: "all-relays"
        case 0xFFFF: "all-nodes"
        default: nil
        }
    }

    /// "0x1201"
    public static func text(_ a: UInt16) -> String { Hex.fixed(UInt64(a), width: 4) }
}

extension MeshProvisioningPDU: FieldDescribable {}
extension MeshGenericProvisioningPDU: FieldDescribable {}
extension MeshPBADVPDU: FieldDescribable {}
extension MeshUnprovisionedBeacon: FieldDescribable {}
extension MeshBeacon: FieldDescribable {}
extension MeshServiceData: FieldDescribable {}
extension MeshProxyPDU: FieldDescribable {}
extension MeshProxyConfigMessage: FieldDescribable {}
extension MeshLowerTransportPDU: FieldDescribable {}
extension MeshControlMessage: FieldDescribable {}
extension MeshAccessMessage: FieldDescribable {}
