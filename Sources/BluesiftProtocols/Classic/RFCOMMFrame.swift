import BluesiftWire

/// RFCOMM frame type: the control field without its P/F bit (RFCOMM 1.2 §4; TS 07.10 §5.2.1.3).
public struct RFCOMMFrameType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let sabm = RFCOMMFrameType(rawValue: 0x2F)
    public static let ua = RFCOMMFrameType(rawValue: 0x63)
    public static let dm = RFCOMMFrameType(rawValue: 0x0F)
    public static let disc = RFCOMMFrameType(rawValue: 0x43)
    public static let uih = RFCOMMFrameType(rawValue: 0xEF)
    public var name: String {
        switch rawValue {
        case 0x2F: "SABM"
        case 0x63: "UA"
        case 0x0F: "DM"
        case 0x43: "DISC"
        case 0xEF: "UIH"
        case 0x03: "UI"
        default: "Unknown"
        }
    }
}

/// Multiplexer control command type (TS 07.10 §5.4.6.3, RFCOMM 1.2 §4.1): the type octet's
/// six value bits.
public struct RFCOMMMuxType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let pn = RFCOMMMuxType(rawValue: 0x20)
    public static let msc = RFCOMMMuxType(rawValue: 0x38)
    public static let rpn = RFCOMMMuxType(rawValue: 0x24)
    public static let rls = RFCOMMMuxType(rawValue: 0x14)
    public static let test = RFCOMMMuxType(rawValue: 0x08)
    public static let fcOn = RFCOMMMuxType(rawValue: 0x28)
    public static let fcOff = RFCOMMMuxType(rawValue: 0x18)
    public static let nsc = RFCOMMMuxType(rawValue: 0x04)
    public var name: String {
        switch rawValue {
        case 0x20: "PN"
        case 0x38: "MSC"
        case 0x24: "RPN"
        case 0x14: "RLS"
        case 0x08: "Test"
        case 0x28: "FCon"
        case 0x18: "FCoff"
        case 0x04: "NSC"
        case 0x10: "PSC"
        case 0x30: "CLD"
        case 0x34: "SNC"
        default: "Unknown"
        }
    }
    public var longName: String {
        switch rawValue {
        case 0x20: "DLC Parameter Negotiation"
        case 0x38: "Modem Status Command"
        case 0x24: "Remote Port Negotiation"
        case 0x14: "Remote Line Status"
        case 0x08: "Test"
        case 0x28: "Flow Control On"
        case 0x18: "Flow Control Off"
        case 0x04: "Non Supported Command"
        default: name
        }
    }
}

/// One multiplexer control message on DLCI 0 (TS 07.10 §5.4.6, RFCOMM 1.2 §5.5).
public struct RFCOMMMuxCommand {
    public var type: RFCOMMMuxType
    public var isCommand: Bool
    public var values: UnsafeRawBufferPointer
    /// PN/MSC/RPN/RLS: the DLCI the message is about.
    public var dlci: UInt8? {
        switch type.rawValue {
        case 0x20: values.count >= 1 ? values[0] & 0x3F : nil
        case 0x38, 0x24, 0x14: values.count >= 1 ? values[0] >> 2 : nil
        default: nil
        }
    }

    init(_ r: inout ByteReader) throws(DecodeError) {
        let t = try r.readUInt8("mux type")
        type = RFCOMMMuxType(rawValue: t >> 2)
        isCommand = t & 0x02 != 0
        var len = 0, shift = 0
        while true { // EA-coded length, 7 bits per octet
            let b = try r.readUInt8("mux length")
            len |= Int(b >> 1) << shift
            shift += 7
            if b & 1 == 1 || shift > 14 { break }
        }
        values = try r.readBytes(len, "mux values")
    }

    func describe<S: FieldSink>(into sink: inout S) {
        sink.int("type", Int(type.rawValue)); sink.string("name", type.longName)
        sink.bool("command", isCommand)
        if let d = dlci { sink.int("dlci", Int(d)); sink.int("channel", Int(d >> 1)) }
        let v = values
        switch type.rawValue {
        case 0x20 where v.count >= 8: // PN (§5.5.3): I/CL, priority, timer, N1, N2, k
            let cl = v[1] >> 4
            sink.int("convergence_layer", Int(cl))
            if cl == 0xF { sink.string("flow_control", "credit based (request)") }
            if cl == 0xE { sink.string("flow_control", "credit based (accept)") }
            sink.int("priority", Int(v[2] & 0x3F))
            sink.int("max_frame_size", Int(v[4]) | Int(v[5]) << 8)
            sink.int("initial_credits", Int(v[7] & 0x07))
        case 0x38 where v.count >= 2: // MSC (§5.4.6.3.7): V.24 signals
            let s = v[1]
            sink.bool("fc", s & 0x02 != 0); sink.bool("rtc", s & 0x04 != 0); sink.bool("rtr", s & 0x08 != 0)
            sink.bool("ic", s & 0x40 != 0); sink.bool("dv", s & 0x80 != 0)
            if v.count >= 3 { sink.int("break", Int(v[2] >> 4)) }
        case 0x24 where v.count >= 8: // RPN (§5.4.6.3.10)
            sink.int("baud_rate", Int(v[1]))
            sink.int("data_bits", 5 + Int(v[2] & 0x03))
        case 0x14 where v.count >= 2: // RLS (§5.4.6.3.8)
            sink.int("line_status", Int(v[1] & 0x0F))
        default:
            if !v.isEmpty { sink.hex("values", v) }
        }
    }
}

/// One RFCOMM frame (RFCOMM 1.2 §5, TS 07.10 §5.2): address, control, length, optional
/// credits, information, FCS. Borrows its bytes.
public struct RFCOMMFrame: FieldDescribable {
    public var address: UInt8 = 0
    public var control: UInt8 = 0
    public var length = 0
    public var credits: UInt8?
    public var information = UnsafeRawBufferPointer(start: nil, count: 0)
    public var fcs: UInt8 = 0
    public var mux: RFCOMMMuxCommand?
    /// Service name of the channel, from SDP (set by the decoder).
    public var serviceName: String?
    /// HFP/HSP AT lines completed by this frame (set by the decoder).
    public var at: [ATLine] = []
    public var error: DecodeError?

    public var dlci: UInt8 { address >> 2 }
    public var channel: UInt8 { dlci >> 1 }
    public var commandResponse: Bool { address & 0x02 != 0 }
    public var pollFinal: Bool { control & 0x10 != 0 }
    public var frameType: RFCOMMFrameType { RFCOMMFrameType(rawValue: control & ~0x10) }

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            address = try r.readUInt8("address")
            control = try r.readUInt8("control")
            let l0 = try r.readUInt8("length")
            length = Int(l0 >> 1)
            var headerLength = 3
            if l0 & 1 == 0 { length |= Int(try r.readUInt8("length")) << 7; headerLength = 4 }
            // Credit-based flow control: a UIH with P/F set on a data DLCI carries a credit octet (§6.5.2).
            if frameType == .uih, pollFinal, dlci != 0 { credits = try r.readUInt8("credits") }
            information = try r.readBytes(length, "information")
            fcs = try r.readUInt8("FCS")
            if !r.isAtEnd {
                error = DecodeError(layer: "rfcomm", code: .invalidLength, offset: r.readerIndex, message: "\(r.readableBytes) bytes after the FCS")
            }
            let covered = frameType == .uih ? 2 : headerLength
            if Self.fcs(UnsafeRawBufferPointer(rebasing: bytes[0..<covered])) != fcs, error == nil {
                error = DecodeError(
                    layer: "rfcomm", code: .invalidValue, offset: r.readerIndex - 1,
                    message: "FCS " + Hex.fixed(UInt64(fcs), width: 2) + " does not match the header")
            }
            if dlci == 0, frameType == .uih, !information.isEmpty {
                var m = ByteReader(information)
                mux = try RFCOMMMuxCommand(&m)
            }
        } catch {
            self.error = error.inLayer("rfcomm")
        }
    }

    /// TS 07.10 §5.2.1.6 FCS: CRC-8 (x^8+x^2+x+1, reflected), ones' complement.
    public static func fcs(_ b: UnsafeRawBufferPointer) -> UInt8 {
        var crc: UInt8 = 0xFF
        for byte in b {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xE0 : crc >> 1 }
        }
        return 0xFF &- crc
    }

    /// Encodes a frame as sent, FCS included: symmetric with `init(bytes:)`.
    public static func encode(address: UInt8, control: UInt8, credits: UInt8? = nil, information: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [address, control]
        if information.count > 127 {
            out.append(UInt8(truncatingIfNeeded: information.count << 1))
            out.append(UInt8(truncatingIfNeeded: information.count >> 7))
        } else {
            out.append(UInt8(information.count << 1) | 1)
        }
        let covered = control & ~0x10 == 0xEF ? 2 : out.count
        let f = out.withUnsafeBytes { fcs(UnsafeRawBufferPointer(rebasing: $0[0..<covered])) }
        if let c = credits { out.append(c) }
        out += information
        out.append(f)
        return out
    }

    public var name: String { frameType.name }

    /// "RFCOMM UIH ch=3 (Handsfree) AT+BRSF=155", "RFCOMM UIH dlci=0 PN ch=3", "RFCOMM SABM ch=0".
    public var summary: String {
        var s = "RFCOMM " + frameType.name + " ch=\(channel)"
        if let n = serviceName { s += " (" + n + ")" }
        if let m = mux {
            s += " " + m.type.name + (m.isCommand ? "" : " response")
            if let d = m.dlci { s += " ch=\(d >> 1)" }
        }
        if let c = credits { s += " credits=\(c)" }
        if !at.isEmpty { s += " " + at.map { $0.text + ($0.indicator.map { " (" + $0 + ")" } ?? "") }.joined(separator: " | ") } else if frameType == .uih, dlci != 0, !information.isEmpty { s += " len=\(information.count)" }
        return s
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(frameType.rawValue)); sink.string("name", frameType.name)
        sink.int("dlci", Int(dlci)); sink.int("channel", Int(channel))
        if let n = serviceName { sink.string("service", n) }
        sink.bool("cr", commandResponse); sink.bool("pf", pollFinal)
        sink.int("length", length)
        if let c = credits { sink.int("credits", Int(c)) }
        sink.int("fcs", Int(fcs))
        if let m = mux { sink.beginObject("mux"); m.describe(into: &sink); sink.endObject() } else if !information.isEmpty, at.isEmpty { sink.hex("data", information) }
    }
}
