/// LL Control PDU opcode (Core 5.4 Vol 6 Part B §2.4.2 Table 2.18). Open.
public struct LLControlOpcode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let connectionUpdateInd = LLControlOpcode(rawValue: 0x00)
    public static let channelMapInd = LLControlOpcode(rawValue: 0x01)
    public static let terminateInd = LLControlOpcode(rawValue: 0x02)
    public static let encReq = LLControlOpcode(rawValue: 0x03)
    public static let encRsp = LLControlOpcode(rawValue: 0x04)
    public static let startEncReq = LLControlOpcode(rawValue: 0x05)
    public static let startEncRsp = LLControlOpcode(rawValue: 0x06)
    public static let pauseEncReq = LLControlOpcode(rawValue: 0x0A)
    public static let pauseEncRsp = LLControlOpcode(rawValue: 0x0B)
    public static let rejectInd = LLControlOpcode(rawValue: 0x0D)
    public static let rejectExtInd = LLControlOpcode(rawValue: 0x11)
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
    static func errorName(_ e: UInt8) -> String { HCIStatus(e).name }
}

extension LLPacket {
    /// An Empty PDU (LLID 1, no payload; `LLNames.dataName`): the link's keep-alive, half of
    /// a quiet sniffed connection.
    public var isEmptyPDU: Bool { !isAdvertising && llid == 1 && length == 0 }
}
