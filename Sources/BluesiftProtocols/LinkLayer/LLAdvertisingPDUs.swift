import BluesiftWire

/// Advertising physical channel PDU Type (Core 6.0 Vol 6 Part B §2.3 Table 2.3), the low four
/// bits of the header's first octet. Names: `LLNames.advPDUTypeName`.
public enum LLAdvPDUType {
    public static let advInd: UInt8 = 0x0
    public static let advDirectInd: UInt8 = 0x1
    public static let advNonconnInd: UInt8 = 0x2
    /// SCAN_REQ, AUX_SCAN_REQ on a secondary channel.
    public static let scanReq: UInt8 = 0x3
    public static let scanRsp: UInt8 = 0x4
    /// CONNECT_IND, AUX_CONNECT_REQ on a secondary channel.
    public static let connectInd: UInt8 = 0x5
    public static let advScanInd: UInt8 = 0x6
    /// ADV_EXT_IND, AUX_ADV_IND and the other AUX_* on a secondary channel.
    public static let advExtInd: UInt8 = 0x7
    public static let auxConnectRsp: UInt8 = 0x8
    /// AdvA then AdvData (§2.3.1.1, .3, .4, §2.3.2.2): ADV_IND, ADV_NONCONN_IND, SCAN_RSP, ADV_SCAN_IND.
    public static func carriesAdvData(_ t: UInt8) -> Bool { t == advInd || t == advNonconnInd || t == scanRsp || t == advScanInd }
    /// Two addresses and nothing else to redact: ADV_DIRECT_IND (AdvA, TargetA), SCAN_REQ (ScanA, AdvA).
    public static func hasTwoAddresses(_ t: UInt8) -> Bool { t == advDirectInd || t == scanReq }
    /// The Common Extended Advertising Payload Format (§2.3.4).
    public static func isExtended(_ t: UInt8) -> Bool { t == advExtInd || t == auxConnectRsp }
}

/// CONNECT_IND / AUX_CONNECT_REQ payload (Core 5.4 Vol 6 Part B §2.3.3.1).
public struct LLConnectInd: Hashable, Sendable {
    public var initA: BDAddr
    public var advA: BDAddr
    public var accessAddress: UInt32
    public var crcInit: UInt32
    /// Units of 1.25 ms.
    public var winSize: UInt8
    public var winOffset: UInt16
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var timeout: UInt16
    /// 37-bit channel map, channel 0 in bit 0.
    public var channelMap: UInt64
    public var hop: UInt8
    public var sca: UInt8

    /// InitA and AdvA: the first 12 octets of the payload (§2.3.3.1).
    public static let addressOffsets = [0, 6]

    public init?(_ p: UnsafeRawBufferPointer) {
        guard p.count >= 34 else { return nil }
        var r = ByteReader(p)
        guard let i = try? r.readAddress(), let a = try? r.readAddress(), let aa = try? r.readUInt32(),
            let crc = try? r.readUInt24(), let ws = try? r.readUInt8(), let wo = try? r.readUInt16(),
            let iv = try? r.readUInt16(), let lat = try? r.readUInt16(), let to = try? r.readUInt16(),
            let chm = try? r.readUInt(size: 5, endianness: .little), let hs = try? r.readUInt8()
        else { return nil }
        initA = i; advA = a; accessAddress = aa; crcInit = crc; winSize = ws; winOffset = wo
        interval = iv; latency = lat; timeout = to; channelMap = chm; hop = hs & 0x1F; sca = hs >> 5
    }
}

/// Common Extended Advertising Payload Format (§2.3.4): ADV_EXT_IND, AUX_* PDUs.
public struct LLExtendedHeader {
    public var advMode: UInt8
    public var flags: UInt8
    public var advA: BDAddr?
    public var targetA: BDAddr?
    public var cteInfo: UInt8?
    /// AdvDataInfo: DID (bits 0-11), SID (bits 12-15).
    public var adi: UInt16?
    /// AuxPtr: channel index, CA, offset units, offset, PHY (3 bytes, §2.3.4.5).
    public var auxPtr: UInt32?
    public var syncInfo: UnsafeRawBufferPointer?
    public var txPower: Int8?
    public var acad: UnsafeRawBufferPointer
    public var advData: UnsafeRawBufferPointer

    init?(_ p: UnsafeRawBufferPointer) {
        guard let first = p.first else { return nil }
        let hlen = Int(first & 0x3F)
        advMode = first >> 6
        guard 1 + hlen <= p.count else { return nil }
        let end = 1 + hlen
        flags = hlen > 0 ? p[1] : 0
        var i = hlen > 0 ? 2 : 1
        func take(_ n: Int) -> UnsafeRawBufferPointer? {
            guard i + n <= end else { return nil }
            defer { i += n }
            return UnsafeRawBufferPointer(rebasing: p[i..<i + n])
        }
        if flags & 0x01 != 0 { advA = take(6).map { BDAddr(littleEndian: $0) } }
        if flags & 0x02 != 0 { targetA = take(6).map { BDAddr(littleEndian: $0) } }
        if flags & 0x04 != 0 { cteInfo = take(1).map { $0[0] } }
        if flags & 0x08 != 0 { adi = take(2).map { UInt16($0[0]) | UInt16($0[1]) << 8 } }
        if flags & 0x10 != 0 { auxPtr = take(3).map { UInt32($0[0]) | UInt32($0[1]) << 8 | UInt32($0[2]) << 16 } }
        if flags & 0x20 != 0 { syncInfo = take(18) }
        if flags & 0x40 != 0 { txPower = take(1).map { Int8(bitPattern: $0[0]) } }
        acad = UnsafeRawBufferPointer(rebasing: p[min(i, end)..<end])
        advData = UnsafeRawBufferPointer(rebasing: p[end...])
    }

    static func advModeName(_ m: UInt8) -> String {
        switch m {
        case 0: "Non-connectable Non-scannable"
        case 1: "Connectable"
        case 2: "Scannable"
        default: "Reserved"
        }
    }
}

extension LLPacket {
    /// CONNECT_IND / AUX_CONNECT_REQ fields.
    public var connectInd: LLConnectInd? { pduType == LLAdvPDUType.connectInd ? LLConnectInd(payload) : nil }

    /// Extended header of ADV_EXT_IND / AUX_* PDUs (types 7 and 8).
    public var extendedHeader: LLExtendedHeader? {
        guard let pduType, LLAdvPDUType.isExtended(pduType) else { return nil }
        return LLExtendedHeader(payload)
    }
}
