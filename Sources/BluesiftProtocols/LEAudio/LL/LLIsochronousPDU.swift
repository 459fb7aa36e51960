import BluesiftWire

/// A sniffed isochronous physical channel PDU (Core 6.0 Vol 6 Part B §2.6): the 16-bit header
/// and the payload. A CIS PDU (§2.6.1) has LLID, NESN, SN, CIE (close isochronous event) and
/// NPI (null PDU indicator); a BIS PDU (§2.6.2) has LLID, CSSN (control subevent sequence
/// number) and CSTF (control subevent transmission flag). LLID 0b00: unframed, the end (or
/// the whole) of an SDU; 0b01: unframed, its start or a continuation; 0b10: framed (ISOAL
/// segments, Vol 6 Part G §6); 0b11: a BIG Control PDU on a BIS (§2.6.3), reserved on a CIS.
/// An encrypted stream's payload ends in a 4-octet MIC and is not read further.
public struct LLIsochronousPDU: Hashable, Sendable {
    public enum Stream: Hashable, Sendable { case cis, bis }
    public var stream: Stream
    public var llid: UInt8
    public var nesn = false
    public var sn = false
    public var cie = false
    public var npi = false
    public var cssn: UInt8 = 0
    public var cstf = false
    /// Bits the spec reserves (CIS: 5 and 7; BIS: 6 and 7), kept so encoding gives the PDU back.
    public var reservedBits: UInt8 = 0
    public var payload: [UInt8]
    /// The header's Length (the payload's when whole).
    public var length: Int
    public var error: DecodeError?

    public init(cis llid: UInt8, nesn: Bool, sn: Bool, cie: Bool, npi: Bool, payload: [UInt8]) {
        stream = .cis; self.llid = llid & 3; self.nesn = nesn; self.sn = sn; self.cie = cie; self.npi = npi
        self.payload = payload; length = payload.count
    }

    public init(bis llid: UInt8, cssn: UInt8, cstf: Bool, payload: [UInt8]) {
        stream = .bis; self.llid = llid & 3; self.cssn = cssn & 7; self.cstf = cstf
        self.payload = payload; length = payload.count
    }

    /// From the PDU as sent (header, payload); a short PDU keeps what is there and says so.
    public init(_ stream: Stream, bytes p: UnsafeRawBufferPointer) {
        self.stream = stream
        let h = p.count > 0 ? p[0] : 0
        llid = h & 3
        switch stream {
        case .cis:
            nesn = h & 0x04 != 0; sn = h & 0x08 != 0; cie = h & 0x10 != 0; npi = h & 0x40 != 0
            reservedBits = h & 0xA0
        case .bis:
            cssn = (h >> 2) & 7; cstf = h & 0x20 != 0
            reservedBits = h & 0xC0
        }
        length = p.count > 1 ? Int(p[1]) : 0
        let there = max(0, p.count - 2)
        payload = there > 0 ? Array(p[2..<(2 + min(length, there))]) : []
        if p.count < 2 {
            error = DecodeError(code: .truncated, offset: p.count, message: "isochronous PDU header: \(p.count) of 2 octets")
        } else if length > there {
            error = DecodeError(code: .truncated, offset: 2, message: "payload: length \(length), \(there) bytes there")
        }
    }

    public var header: UInt8 {
        switch stream {
        case .cis: llid | (nesn ? 0x04 : 0) | (sn ? 0x08 : 0) | (cie ? 0x10 : 0) | (npi ? 0x40 : 0) | reservedBits & 0xA0
        case .bis: llid | (cssn & 7) << 2 | (cstf ? 0x20 : 0) | reservedBits & 0xC0
        }
    }

    /// Header and payload, as sent.
    public func encode() -> [UInt8] { [header, UInt8(truncatingIfNeeded: payload.count)] + payload }

    public var isFramed: Bool { llid == 2 }
    public var isBIGControl: Bool { stream == .bis && llid == 3 }

    public var llidName: String {
        switch llid {
        case 0: "unframed, SDU end or complete"
        case 1: "unframed, SDU start or continuation"
        case 2: "framed"
        default: stream == .bis ? "BIG Control" : "reserved"
        }
    }
}

/// One ISOAL segment of a framed PDU (Core 6.0 Vol 6 Part G §6.2-6.3): SC (a continuation of
/// an SDU), CMPLT (it ends the SDU), and in an SDU's first segment its Time_Offset (µs, 3 octets)
/// before the data. The segmentation header's Length counts Time_Offset and data.
public struct ISOALSegment: Hashable, Sendable {
    public var continuation: Bool
    public var complete: Bool
    public var timeOffset: UInt32?
    public var data: [UInt8]
    public var reservedBits: UInt8 = 0
    public init(continuation: Bool, complete: Bool, timeOffset: UInt32?, data: [UInt8]) {
        self.continuation = continuation; self.complete = complete; self.timeOffset = timeOffset; self.data = data
    }

    /// The segments of a framed PDU's payload; damage stops the walk and is returned.
    public static func segments(_ p: [UInt8]) -> (segments: [ISOALSegment], error: DecodeError?) {
        var out: [ISOALSegment] = []
        var o = 0
        while o < p.count {
            guard o + 2 <= p.count else {
                return (out, DecodeError(code: .truncated, offset: o, message: "segmentation header: \(p.count - o) of 2 octets"))
            }
            let sc = p[o] & 1 != 0, cmplt = p[o] & 2 != 0, n = Int(p[o + 1])
            guard o + 2 + n <= p.count else {
                return (out, DecodeError(code: .truncated, offset: o + 2, message: "segment: length \(n), \(p.count - o - 2) bytes there"))
            }
            var body = Array(p[(o + 2)..<(o + 2 + n)])
            var offset: UInt32?
            if !sc {
                guard body.count >= 3 else {
                    return (out, DecodeError(code: .invalidLength, offset: o + 2, message: "first segment of an SDU without its 3-octet Time_Offset"))
                }
                offset = UInt32(body[0]) | UInt32(body[1]) << 8 | UInt32(body[2]) << 16
                body.removeFirst(3)
            }
            var s = ISOALSegment(continuation: sc, complete: cmplt, timeOffset: offset, data: body)
            s.reservedBits = p[o] & 0xFC
            out.append(s)
            o += 2 + n
        }
        return (out, nil)
    }

    /// Segmentation header, Time_Offset when present, data.
    public func encode() -> [UInt8] {
        let t: [UInt8] = timeOffset.map { [UInt8($0 & 0xFF), UInt8(($0 >> 8) & 0xFF), UInt8(($0 >> 16) & 0xFF)] } ?? []
        return [(continuation ? 1 : 0) | (complete ? 2 : 0) | reservedBits & 0xFC, UInt8(t.count + data.count)] + t + data
    }
}

/// A BIG Control PDU (Core 6.0 Vol 6 Part B §2.6.3): BIG_CHANNEL_MAP_IND (0x00: the 37-bit
/// channel map and its instant) and BIG_TERMINATE_IND (0x01: the reason and the instant).
public enum BIGControlPDU: Hashable, Sendable {
    case channelMapInd(channelMap: UInt64, instant: UInt16)
    case terminateInd(reason: UInt8, instant: UInt16)
    case other(opcode: UInt8, data: [UInt8])

    /// Nil for an empty payload; a known opcode too short for its data is `other`.
    public init?(_ p: [UInt8]) {
        guard let op = p.first else { return nil }
        if op == 0x00, p.count >= 8 {
            var m: UInt64 = 0
            for i in 0..<5 { m |= UInt64(p[1 + i]) << (8 * UInt64(i)) }
            self = .channelMapInd(channelMap: m, instant: UInt16(p[6]) | UInt16(p[7]) << 8)
        } else if op == 0x01, p.count >= 4 {
            self = .terminateInd(reason: p[1], instant: UInt16(p[2]) | UInt16(p[3]) << 8)
        } else {
            self = .other(opcode: op, data: Array(p.dropFirst()))
        }
    }

    public func encode() -> [UInt8] {
        switch self {
        case .channelMapInd(let m, let instant):
            [0x00] + (0..<5).map { UInt8(truncatingIfNeeded: m >> (8 * UInt64($0))) } + [UInt8(instant & 0xFF), UInt8(instant >> 8)]
        case .terminateInd(let reason, let instant): [0x01, reason, UInt8(instant & 0xFF), UInt8(instant >> 8)]
        case .other(let op, let data): [op] + data
        }
    }

    public var name: String {
        switch self {
        case .channelMapInd: "BIG_CHANNEL_MAP_IND"
        case .terminateInd: "BIG_TERMINATE_IND"
        case .other(let op, _): "BIG Control " + Hex.fixed(UInt64(op), width: 2)
        }
    }
}
