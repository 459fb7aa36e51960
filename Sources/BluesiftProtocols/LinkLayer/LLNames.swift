/// LL Control PDU opcode (Core 5.4 Vol 6 Part B §2.4.2 Table 2.18). Open.
public struct LLControlOpcode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0x00: "LL_CONNECTION_UPDATE_IND"
        case 0x01: "LL_CHANNEL_MAP_IND"
        case 0x02: "LL_TERMINATE_IND"
        case 0x03: "LL_ENC_REQ"
        case 0x04: "LL_ENC_RSP"
        case 0x05: "LL_START_ENC_REQ"
        case 0x06: "LL_START_ENC_RSP"
        case 0x07: "LL_UNKNOWN_RSP"
        case 0x08: "LL_FEATURE_REQ"
        case 0x09: "LL_FEATURE_RSP"
        case 0x0A: "LL_PAUSE_ENC_REQ"
        case 0x0B: "LL_PAUSE_ENC_RSP"
        case 0x0C: "LL_VERSION_IND"
        case 0x0D: "LL_REJECT_IND"
        case 0x0E: "LL_PERIPHERAL_FEATURE_REQ"
        case 0x0F: "LL_CONNECTION_PARAM_REQ"
        case 0x10: "LL_CONNECTION_PARAM_RSP"
        case 0x11: "LL_REJECT_EXT_IND"
        case 0x12: "LL_PING_REQ"
        case 0x13: "LL_PING_RSP"
        case 0x14: "LL_LENGTH_REQ"
        case 0x15: "LL_LENGTH_RSP"
        case 0x16: "LL_PHY_REQ"
        case 0x17: "LL_PHY_RSP"
        case 0x18: "LL_PHY_UPDATE_IND"
        case 0x19: "LL_MIN_USED_CHANNELS_IND"
        case 0x1A: "LL_CTE_REQ"
        case 0x1B: "LL_CTE_RSP"
        case 0x1C: "LL_PERIODIC_SYNC_IND"
        case 0x1D: "LL_CLOCK_ACCURACY_REQ"
        case 0x1E: "LL_CLOCK_ACCURACY_RSP"
        case 0x1F: "LL_CIS_REQ"
        case 0x20: "LL_CIS_RSP"
        case 0x21: "LL_CIS_IND"
        case 0x22: "LL_CIS_TERMINATE_IND"
        case 0x23: "LL_POWER_CONTROL_REQ"
        case 0x24: "LL_POWER_CONTROL_RSP"
        case 0x25: "LL_POWER_CHANGE_IND"
        case 0x26: "LL_SUBRATE_REQ"
        case 0x27: "LL_SUBRATE_IND"
        case 0x28: "LL_CHANNEL_REPORTING_IND"
        case 0x29: "LL_CHANNEL_STATUS_IND"
        case 0x2A: "LL_PERIODIC_SYNC_WR_IND"
        default: "Unknown"
        }
    }
}

enum LLNames {
    /// Advertising physical channel PDU Type (Core 5.4 Vol 6 Part B §2.3 Table 2.3).
    /// `secondary`: the packet was on a secondary channel (0-36), where 3, 5 and 7 are AUX_*.
    static func advPDUTypeName(_ t: UInt8, secondary: Bool) -> String {
        switch t {
        case 0x0: "ADV_IND"
        case 0x1: "ADV_DIRECT_IND"
        case 0x2: "ADV_NONCONN_IND"
        case 0x3: secondary ? "AUX_SCAN_REQ" : "SCAN_REQ"
        case 0x4: "SCAN_RSP"
        case 0x5: secondary ? "AUX_CONNECT_REQ" : "CONNECT_IND"
        case 0x6: "ADV_SCAN_IND"
        case 0x7: secondary ? "AUX_ADV_IND" : "ADV_EXT_IND"
        case 0x8: "AUX_CONNECT_RSP"
        default: "Unknown"
        }
    }

    static func dataName(llid: UInt8, length: Int) -> String {
        switch llid {
        case 1: length == 0 ? "Empty PDU" : "L2CAP Continuation"
        case 2: "L2CAP Start"
        case 3: "LL Control"
        default: "Reserved"
        }
    }

    /// LL_VERSION_IND VersNr (Assigned Numbers §2.1 Link Layer versions).
    static func versionName(_ v: UInt8) -> String {
        switch v {
        case 6: "4.0"
        case 7: "4.1"
        case 8: "4.2"
        case 9: "5.0"
        case 10: "5.1"
        case 11: "5.2"
        case 12: "5.3"
        case 13: "5.4"
        case 14: "6.0"
        default: "Unknown"
        }
    }

    /// Controller error codes (Core 5.4 Vol 1 Part F §1.3), as carried by LL_TERMINATE_IND etc.
    static func errorName(_ e: UInt8) -> String {
        switch e {
        case 0x00: "Success"
        case 0x01: "Unknown HCI Command"
        case 0x02: "Unknown Connection Identifier"
        case 0x03: "Hardware Failure"
        case 0x04: "Page Timeout"
        case 0x05: "Authentication Failure"
        case 0x06: "PIN or Key Missing"
        case 0x07: "Memory Capacity Exceeded"
        case 0x08: "Connection Timeout"
        case 0x09: "Connection Limit Exceeded"
        case 0x0A: "Synchronous Connection Limit To A Device Exceeded"
        case 0x0B: "Connection Already Exists"
        case 0x0C: "Command Disallowed"
        case 0x0D: "Connection Rejected due to Limited Resources"
        case 0x0E: "Connection Rejected Due To Security Reasons"
        case 0x0F: "Connection Rejected due to Unacceptable BD_ADDR"
        case 0x10: "Connection Accept Timeout Exceeded"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x13: "Remote User Terminated Connection"
        case 0x14: "Remote Device Terminated Connection due to Low Resources"
        case 0x15: "Remote Device Terminated Connection due to Power Off"
        case 0x16: "Connection Terminated By Local Host"
        case 0x17: "Repeated Attempts"
        case 0x18: "Pairing Not Allowed"
        case 0x19: "Unknown LMP PDU"
        case 0x1A: "Unsupported Remote Feature"
        case 0x1B: "SCO Offset Rejected"
        case 0x1C: "SCO Interval Rejected"
        case 0x1D: "SCO Air Mode Rejected"
        case 0x1E: "Invalid LMP Parameters / Invalid LL Parameters"
        case 0x1F: "Unspecified Error"
        case 0x20: "Unsupported LMP Parameter Value / Unsupported LL Parameter Value"
        case 0x21: "Role Change Not Allowed"
        case 0x22: "LMP Response Timeout / LL Response Timeout"
        case 0x23: "LMP Error Transaction Collision / LL Procedure Collision"
        case 0x24: "LMP PDU Not Allowed"
        case 0x25: "Encryption Mode Not Acceptable"
        case 0x26: "Link Key cannot be Changed"
        case 0x27: "Requested QoS Not Supported"
        case 0x28: "Instant Passed"
        case 0x29: "Pairing With Unit Key Not Supported"
        case 0x2A: "Different Transaction Collision"
        case 0x2C: "QoS Unacceptable Parameter"
        case 0x2D: "QoS Rejected"
        case 0x2E: "Channel Classification Not Supported"
        case 0x2F: "Insufficient Security"
        case 0x30: "Parameter Out Of Mandatory Range"
        case 0x32: "Role Switch Pending"
        case 0x34: "Reserved Slot Violation"
        case 0x35: "Role Switch Failed"
        case 0x36: "Extended Inquiry Response Too Large"
        case 0x37: "Secure Simple Pairing Not Supported By Host"
        case 0x38: "Host Busy - Pairing"
        case 0x39: "Connection Rejected due to No Suitable Channel Found"
        case 0x3A: "Controller Busy"
        case 0x3B: "Unacceptable Connection Parameters"
        case 0x3C: "Advertising Timeout"
        case 0x3D: "Connection Terminated due to MIC Failure"
        case 0x3E: "Connection Failed to be Established / Synchronization Timeout"
        case 0x40: "Coarse Clock Adjustment Rejected but Will Try to Adjust Using Clock Dragging"
        case 0x41: "Type0 Submap Not Defined"
        case 0x42: "Unknown Advertising Identifier"
        case 0x43: "Limit Reached"
        case 0x44: "Operation Cancelled by Host"
        case 0x45: "Packet Too Long"
        case 0x46: "Too Late"
        case 0x47: "Too Early"
        default: "Unknown"
        }
    }
}
