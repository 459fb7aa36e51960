import BluesiftWire

// The LL Control PDUs of the Connected Isochronous Stream procedures (Core 6.0 Vol 6 Part B
// §2.4.2.29-2.4.2.32, §5.1.15-5.1.16), reached through the `.llControl` carrier: one type each,
// decoded from the CtrData after the opcode and encoded back (`LLControlPDU`).

extension LLControlOpcode {
    public static let cisReq = LLControlOpcode(rawValue: 0x1F)
    public static let cisRsp = LLControlOpcode(rawValue: 0x20)
    public static let cisInd = LLControlOpcode(rawValue: 0x21)
    public static let cisTerminateInd = LLControlOpcode(rawValue: 0x22)
}

/// Little-endian unsigned of `n` octets at `i`.
@inline(__always)
func isoLE(_ p: UnsafeRawBufferPointer, _ i: Int, _ n: Int) -> UInt32 {
    var v: UInt32 = 0
    for k in 0..<n { v |= UInt32(p[i + k]) << (8 * UInt32(k)) }
    return v
}

extension ByteWriter {
    /// The low `n` octets of `v`, little-endian.
    mutating func writeLE(_ v: UInt32, _ n: Int) { writeUInt(UInt64(v), size: n, endianness: .little) }
}

/// §2.4.2.29 LL_CIS_REQ: the central asks the peripheral to create a CIS. SDU intervals,
/// sub-interval and CIS offsets in µs; ISO_Interval in 1.25 ms; PHYs one bit each (bit 0 LE 1M,
/// bit 1 LE 2M, bit 2 LE Coded).
public struct LLCISReq: LLControlPDU {
    public static let opcode = LLControlOpcode.cisReq
    public static let ctrDataLength = 35
    public var cigID: UInt8
    public var cisID: UInt8
    public var phyCToP: UInt8
    public var phyPToC: UInt8
    /// 12 bits each; Framed is the top bit of Max_SDU_C_To_P's two octets.
    public var maxSDUCToP: UInt16
    public var framed: Bool
    public var maxSDUPToC: UInt16
    /// 20 bits each.
    public var sduIntervalCToP: UInt32
    public var sduIntervalPToC: UInt32
    public var maxPDUCToP: UInt16
    public var maxPDUPToC: UInt16
    public var nse: UInt8
    /// 3 octets.
    public var subInterval: UInt32
    /// 4 bits each.
    public var bnCToP: UInt8
    public var bnPToC: UInt8
    public var ftCToP: UInt8
    public var ftPToC: UInt8
    public var isoInterval: UInt16
    /// 3 octets each.
    public var cisOffsetMin: UInt32
    public var cisOffsetMax: UInt32
    public var connEventCount: UInt16

    public init(
        cigID: UInt8, cisID: UInt8, phyCToP: UInt8, phyPToC: UInt8, maxSDUCToP: UInt16, framed: Bool, maxSDUPToC: UInt16,
        sduIntervalCToP: UInt32, sduIntervalPToC: UInt32, maxPDUCToP: UInt16, maxPDUPToC: UInt16, nse: UInt8,
        subInterval: UInt32, bnCToP: UInt8, bnPToC: UInt8, ftCToP: UInt8, ftPToC: UInt8, isoInterval: UInt16,
        cisOffsetMin: UInt32, cisOffsetMax: UInt32, connEventCount: UInt16
    ) {
        self.cigID = cigID; self.cisID = cisID; self.phyCToP = phyCToP; self.phyPToC = phyPToC
        self.maxSDUCToP = maxSDUCToP; self.framed = framed; self.maxSDUPToC = maxSDUPToC
        self.sduIntervalCToP = sduIntervalCToP; self.sduIntervalPToC = sduIntervalPToC
        self.maxPDUCToP = maxPDUCToP; self.maxPDUPToC = maxPDUPToC; self.nse = nse; self.subInterval = subInterval
        self.bnCToP = bnCToP; self.bnPToC = bnPToC; self.ftCToP = ftCToP; self.ftPToC = ftPToC
        self.isoInterval = isoInterval; self.cisOffsetMin = cisOffsetMin; self.cisOffsetMax = cisOffsetMax
        self.connEventCount = connEventCount
    }

    public init(ctrData p: UnsafeRawBufferPointer) {
        let sduC = UInt16(isoLE(p, 4, 2))
        self.init(
            cigID: p[0], cisID: p[1], phyCToP: p[2], phyPToC: p[3], maxSDUCToP: sduC & 0x0FFF, framed: sduC & 0x8000 != 0,
            maxSDUPToC: UInt16(isoLE(p, 6, 2)) & 0x0FFF, sduIntervalCToP: isoLE(p, 8, 3) & 0xF_FFFF,
            sduIntervalPToC: isoLE(p, 11, 3) & 0xF_FFFF, maxPDUCToP: UInt16(isoLE(p, 14, 2)), maxPDUPToC: UInt16(isoLE(p, 16, 2)),
            nse: p[18], subInterval: isoLE(p, 19, 3), bnCToP: p[22] & 0x0F, bnPToC: p[22] >> 4, ftCToP: p[23], ftPToC: p[24],
            isoInterval: UInt16(isoLE(p, 25, 2)), cisOffsetMin: isoLE(p, 27, 3), cisOffsetMax: isoLE(p, 30, 3),
            connEventCount: UInt16(isoLE(p, 33, 2)))
    }

    public func encodeCtrData(into w: inout ByteWriter) {
        w.writeUInt8(cigID); w.writeUInt8(cisID); w.writeUInt8(phyCToP); w.writeUInt8(phyPToC)
        w.writeUInt16(maxSDUCToP & 0x0FFF | (framed ? 0x8000 : 0)); w.writeUInt16(maxSDUPToC & 0x0FFF)
        w.writeLE(sduIntervalCToP & 0xF_FFFF, 3); w.writeLE(sduIntervalPToC & 0xF_FFFF, 3)
        w.writeUInt16(maxPDUCToP); w.writeUInt16(maxPDUPToC); w.writeUInt8(nse); w.writeLE(subInterval, 3)
        w.writeUInt8(bnCToP & 0x0F | bnPToC << 4); w.writeUInt8(ftCToP); w.writeUInt8(ftPToC)
        w.writeUInt16(isoInterval); w.writeLE(cisOffsetMin, 3); w.writeLE(cisOffsetMax, 3); w.writeUInt16(connEventCount)
    }

    func describe<S: FieldSink>(into w: inout S) {
        w.int("cig_id", Int(cigID)); w.int("cis_id", Int(cisID))
        w.int("phy_c_to_p", Int(phyCToP)); w.int("phy_p_to_c", Int(phyPToC))
        w.int("max_sdu_c_to_p", Int(maxSDUCToP)); w.bool("framed", framed); w.int("max_sdu_p_to_c", Int(maxSDUPToC))
        w.int("sdu_interval_c_to_p_us", Int(sduIntervalCToP)); w.int("sdu_interval_p_to_c_us", Int(sduIntervalPToC))
        w.int("max_pdu_c_to_p", Int(maxPDUCToP)); w.int("max_pdu_p_to_c", Int(maxPDUPToC))
        w.int("nse", Int(nse)); w.int("sub_interval_us", Int(subInterval))
        w.int("bn_c_to_p", Int(bnCToP)); w.int("bn_p_to_c", Int(bnPToC)); w.int("ft_c_to_p", Int(ftCToP)); w.int("ft_p_to_c", Int(ftPToC))
        w.int("iso_interval", Int(isoInterval)); w.int("cis_offset_min_us", Int(cisOffsetMin)); w.int("cis_offset_max_us", Int(cisOffsetMax))
        w.int("conn_event_count", Int(connEventCount))
    }
}

/// §2.4.2.30 LL_CIS_RSP: the peripheral's CIS offset range (µs) and connection event.
public struct LLCISRsp: LLControlPDU {
    public static let opcode = LLControlOpcode.cisRsp
    public static let ctrDataLength = 8
    public var cisOffsetMin: UInt32
    public var cisOffsetMax: UInt32
    public var connEventCount: UInt16
    public init(cisOffsetMin: UInt32, cisOffsetMax: UInt32, connEventCount: UInt16) {
        self.cisOffsetMin = cisOffsetMin; self.cisOffsetMax = cisOffsetMax; self.connEventCount = connEventCount
    }
    public init(ctrData p: UnsafeRawBufferPointer) {
        self.init(cisOffsetMin: isoLE(p, 0, 3), cisOffsetMax: isoLE(p, 3, 3), connEventCount: UInt16(isoLE(p, 6, 2)))
    }
    public func encodeCtrData(into w: inout ByteWriter) { w.writeLE(cisOffsetMin, 3); w.writeLE(cisOffsetMax, 3); w.writeUInt16(connEventCount) }
    func describe<S: FieldSink>(into w: inout S) {
        w.int("cis_offset_min_us", Int(cisOffsetMin)); w.int("cis_offset_max_us", Int(cisOffsetMax)); w.int("conn_event_count", Int(connEventCount))
    }
}

/// §2.4.2.31 LL_CIS_IND: the central's final word: the CIS's access address (what the sniffed
/// CIS PDUs are found by), its offset and the CIG/CIS sync delays (µs).
public struct LLCISInd: LLControlPDU {
    public static let opcode = LLControlOpcode.cisInd
    public static let ctrDataLength = 15
    public var accessAddress: UInt32
    public var cisOffset: UInt32
    public var cigSyncDelay: UInt32
    public var cisSyncDelay: UInt32
    public var connEventCount: UInt16
    public init(accessAddress: UInt32, cisOffset: UInt32, cigSyncDelay: UInt32, cisSyncDelay: UInt32, connEventCount: UInt16) {
        self.accessAddress = accessAddress; self.cisOffset = cisOffset; self.cigSyncDelay = cigSyncDelay
        self.cisSyncDelay = cisSyncDelay; self.connEventCount = connEventCount
    }
    public init(ctrData p: UnsafeRawBufferPointer) {
        self.init(
            accessAddress: isoLE(p, 0, 4), cisOffset: isoLE(p, 4, 3), cigSyncDelay: isoLE(p, 7, 3), cisSyncDelay: isoLE(p, 10, 3),
            connEventCount: UInt16(isoLE(p, 13, 2)))
    }
    public func encodeCtrData(into w: inout ByteWriter) {
        w.writeUInt32(accessAddress); w.writeLE(cisOffset, 3); w.writeLE(cigSyncDelay, 3); w.writeLE(cisSyncDelay, 3)
        w.writeUInt16(connEventCount)
    }
    func describe<S: FieldSink>(into w: inout S) {
        w.string("access_address", Hex.fixed(UInt64(accessAddress), width: 8)); w.int("cis_offset_us", Int(cisOffset))
        w.int("cig_sync_delay_us", Int(cigSyncDelay)); w.int("cis_sync_delay_us", Int(cisSyncDelay)); w.int("conn_event_count", Int(connEventCount))
    }
}

/// §2.4.2.32 LL_CIS_TERMINATE_IND: CIG_ID, CIS_ID and the reason (an HCI error code, Vol 1 Part F).
public struct LLCISTerminateInd: LLControlPDU {
    public static let opcode = LLControlOpcode.cisTerminateInd
    public static let ctrDataLength = 3
    public var cigID: UInt8
    public var cisID: UInt8
    public var errorCode: UInt8
    public init(cigID: UInt8, cisID: UInt8, errorCode: UInt8) { self.cigID = cigID; self.cisID = cisID; self.errorCode = errorCode }
    public init(ctrData p: UnsafeRawBufferPointer) { self.init(cigID: p[0], cisID: p[1], errorCode: p[2]) }
    public func encodeCtrData(into w: inout ByteWriter) { w.writeUInt8(cigID); w.writeUInt8(cisID); w.writeUInt8(errorCode) }
    func describe<S: FieldSink>(into w: inout S) {
        w.int("cig_id", Int(cigID)); w.int("cis_id", Int(cisID)); w.int("error_code", Int(errorCode))
    }
}

/// One of the four, as the `.llControl` carrier hands it over.
public enum LLCISControl: Hashable, Sendable {
    case request(LLCISReq)
    case response(LLCISRsp)
    case indication(LLCISInd)
    case terminate(LLCISTerminateInd)

    /// The CIS opcodes this module takes.
    public static let opcodes: [LLControlOpcode] = [.cisReq, .cisRsp, .cisInd, .cisTerminateInd]

    /// From the opcode and CtrData; nil when too short for its opcode (or not a CIS opcode).
    public init?(_ op: LLControlOpcode, _ p: UnsafeRawBufferPointer) {
        if let v = LLCISReq(op, p) {
            self = .request(v)
        } else if let v = LLCISRsp(op, p) {
            self = .response(v)
        } else if let v = LLCISInd(op, p) {
            self = .indication(v)
        } else if let v = LLCISTerminateInd(op, p) {
            self = .terminate(v)
        } else {
            return nil
        }
    }

    public var opcode: LLControlOpcode {
        switch self {
        case .request: .cisReq
        case .response: .cisRsp
        case .indication: .cisInd
        case .terminate: .cisTerminateInd
        }
    }

    /// Opcode and CtrData.
    public func encode() -> [UInt8] {
        switch self {
        case .request(let v): v.encode()
        case .response(let v): v.encode()
        case .indication(let v): v.encode()
        case .terminate(let v): v.encode()
        }
    }

    func describe<S: FieldSink>(into w: inout S) {
        switch self {
        case .request(let v): v.describe(into: &w)
        case .response(let v): v.describe(into: &w)
        case .indication(let v): v.describe(into: &w)
        case .terminate(let v): v.describe(into: &w)
        }
    }

    var summary: String {
        switch self {
        case .request(let v):
            "CIG \(v.cigID) CIS \(v.cisID) " + (v.framed ? "framed" : "unframed")
                + " SDU \(v.maxSDUCToP)/\(v.maxSDUPToC) B every \(v.sduIntervalCToP) µs, NSE \(v.nse), ISO interval \(v.isoInterval)"
        case .response(let v): "CIS offset \(v.cisOffsetMin)-\(v.cisOffsetMax) µs, event \(v.connEventCount)"
        case .indication(let v):
            "access address " + Hex.fixed(UInt64(v.accessAddress), width: 8) + ", CIS offset \(v.cisOffset) µs, event \(v.connEventCount)"
        case .terminate(let v): "CIG \(v.cigID) CIS \(v.cisID), reason " + Hex.fixed(UInt64(v.errorCode), width: 2)
        }
    }
}
