import BluesiftWire

/// An LL Control PDU the decoder reads (Core 6.0 Vol 6 Part B §2.4.2): one type each, decoded
/// from the CtrData after the opcode, encoded back to opcode + CtrData. The sniffed-link
/// tracker and the statistics read control PDUs through these.
public protocol LLControlPDU: Sendable, Hashable {
    static var opcode: LLControlOpcode { get }
    /// CtrData length (§2.4.2 Table 2.18); a shorter CtrData does not decode.
    static var ctrDataLength: Int { get }
    /// From CtrData of at least `ctrDataLength` octets.
    init(ctrData p: UnsafeRawBufferPointer)
    func encodeCtrData(into w: inout ByteWriter)
}

extension LLControlPDU {
    /// From an opcode and its CtrData; nil for another opcode or too few octets.
    public init?(_ op: LLControlOpcode, _ ctrData: UnsafeRawBufferPointer) {
        guard op == Self.opcode, ctrData.count >= Self.ctrDataLength else { return nil }
        self.init(ctrData: ctrData)
    }

    /// Opcode then CtrData: the LL data PDU's payload (LLID 0b11).
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 1 + Self.ctrDataLength)
        w.writeUInt8(Self.opcode.rawValue)
        encodeCtrData(into: &w)
        return w.bytes
    }
}

/// §2.4.2.1 LL_CONNECTION_UPDATE_IND.
public struct LLConnectionUpdateInd: LLControlPDU {
    public static let opcode = LLControlOpcode.connectionUpdateInd
    public static let ctrDataLength = 11
    /// Units of 1.25 ms.
    public var winSize: UInt8
    public var winOffset: UInt16
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var timeout: UInt16
    public var instant: UInt16
    public init(winSize: UInt8, winOffset: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16, instant: UInt16) {
        self.winSize = winSize; self.winOffset = winOffset; self.interval = interval
        self.latency = latency; self.timeout = timeout; self.instant = instant
    }
    public init(ctrData p: UnsafeRawBufferPointer) {
        self.init(winSize: p[0], winOffset: le16(p, 1), interval: le16(p, 3), latency: le16(p, 5), timeout: le16(p, 7), instant: le16(p, 9))
    }
    public func encodeCtrData(into w: inout ByteWriter) {
        w.writeUInt8(winSize); w.writeUInt16(winOffset); w.writeUInt16(interval)
        w.writeUInt16(latency); w.writeUInt16(timeout); w.writeUInt16(instant)
    }
}

/// §2.4.2.2 LL_CHANNEL_MAP_IND.
public struct LLChannelMapInd: LLControlPDU {
    public static let opcode = LLControlOpcode.channelMapInd
    public static let ctrDataLength = 7
    /// 37-bit channel map, channel 0 in bit 0.
    public var channelMap: UInt64
    public var instant: UInt16
    public init(channelMap: UInt64, instant: UInt16) { self.channelMap = channelMap; self.instant = instant }
    public init(ctrData p: UnsafeRawBufferPointer) {
        var m: UInt64 = 0
        for i in 0..<5 { m |= UInt64(p[i]) << (8 * UInt64(i)) }
        self.init(channelMap: m, instant: le16(p, 5))
    }
    public func encodeCtrData(into w: inout ByteWriter) {
        for i in 0..<5 { w.writeUInt8(UInt8(truncatingIfNeeded: channelMap >> (8 * UInt64(i)))) }
        w.writeUInt16(instant)
    }
}

/// §2.4.2.3 LL_TERMINATE_IND.
public struct LLTerminateInd: LLControlPDU {
    public static let opcode = LLControlOpcode.terminateInd
    public static let ctrDataLength = 1
    public var errorCode: UInt8
    public init(errorCode: UInt8) { self.errorCode = errorCode }
    public init(ctrData p: UnsafeRawBufferPointer) { self.init(errorCode: p[0]) }
    public func encodeCtrData(into w: inout ByteWriter) { w.writeUInt8(errorCode) }
}

/// §2.4.2.4 LL_ENC_REQ: Rand, EDIV, SKDc, IVc (little-endian as sent).
public struct LLEncReq: LLControlPDU {
    public static let opcode = LLControlOpcode.encReq
    public static let ctrDataLength = 22
    public var rand: [UInt8]
    public var ediv: UInt16
    public var skdc: [UInt8]
    public var ivc: [UInt8]
    public init(rand: [UInt8], ediv: UInt16, skdc: [UInt8], ivc: [UInt8]) { self.rand = rand; self.ediv = ediv; self.skdc = skdc; self.ivc = ivc }
    public init(ctrData p: UnsafeRawBufferPointer) {
        self.init(rand: Array(p[0..<8]), ediv: le16(p, 8), skdc: Array(p[10..<18]), ivc: Array(p[18..<22]))
    }
    public func encodeCtrData(into w: inout ByteWriter) {
        precondition(rand.count == 8 && skdc.count == 8 && ivc.count == 4, "LL_ENC_REQ: Rand 8, SKDc 8, IVc 4 octets")
        w.writeBytes(rand); w.writeUInt16(ediv); w.writeBytes(skdc); w.writeBytes(ivc)
    }
}

/// §2.4.2.5 LL_ENC_RSP: SKDp, IVp.
public struct LLEncRsp: LLControlPDU {
    public static let opcode = LLControlOpcode.encRsp
    public static let ctrDataLength = 12
    public var skdp: [UInt8]
    public var ivp: [UInt8]
    public init(skdp: [UInt8], ivp: [UInt8]) { self.skdp = skdp; self.ivp = ivp }
    public init(ctrData p: UnsafeRawBufferPointer) { self.init(skdp: Array(p[0..<8]), ivp: Array(p[8..<12])) }
    public func encodeCtrData(into w: inout ByteWriter) {
        precondition(skdp.count == 8 && ivp.count == 4, "LL_ENC_RSP: SKDp 8, IVp 4 octets")
        w.writeBytes(skdp); w.writeBytes(ivp)
    }
}

/// §2.4.2.6 LL_START_ENC_REQ: no CtrData; ciphertext follows.
public struct LLStartEncReq: LLControlPDU {
    public static let opcode = LLControlOpcode.startEncReq
    public static let ctrDataLength = 0
    public init() {}
    public init(ctrData p: UnsafeRawBufferPointer) {}
    public func encodeCtrData(into w: inout ByteWriter) {}
}

/// §2.4.2.12 LL_PAUSE_ENC_RSP: no CtrData; plaintext until the next start.
public struct LLPauseEncRsp: LLControlPDU {
    public static let opcode = LLControlOpcode.pauseEncRsp
    public static let ctrDataLength = 0
    public init() {}
    public init(ctrData p: UnsafeRawBufferPointer) {}
    public func encodeCtrData(into w: inout ByteWriter) {}
}

/// §2.4.2.14 LL_REJECT_IND.
public struct LLRejectInd: LLControlPDU {
    public static let opcode = LLControlOpcode.rejectInd
    public static let ctrDataLength = 1
    public var errorCode: UInt8
    public init(errorCode: UInt8) { self.errorCode = errorCode }
    public init(ctrData p: UnsafeRawBufferPointer) { self.init(errorCode: p[0]) }
    public func encodeCtrData(into w: inout ByteWriter) { w.writeUInt8(errorCode) }
}

/// The control PDU types above, registered by opcode (one row each).
public enum LLControlPDUs {
    public static let types: [LLControlOpcode: any LLControlPDU.Type] = {
        let all: [any LLControlPDU.Type] = [
            LLConnectionUpdateInd.self, LLChannelMapInd.self, LLTerminateInd.self, LLEncReq.self,
            LLEncRsp.self, LLStartEncReq.self, LLPauseEncRsp.self, LLRejectInd.self
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.opcode, $0) })
    }()

    /// The typed PDU of an opcode and its CtrData; nil when unregistered or too short.
    public static func decode(_ op: LLControlOpcode, _ ctrData: UnsafeRawBufferPointer) -> (any LLControlPDU)? {
        guard let t = types[op], ctrData.count >= t.ctrDataLength else { return nil }
        return t.init(ctrData: ctrData)
    }
}
