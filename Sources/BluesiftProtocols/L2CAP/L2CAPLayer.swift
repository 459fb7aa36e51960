import BluesiftWire

/// The `l2cap` layer of a record that completes an L2CAP PDU: basic header and, on the
/// signalling channels, the first command (Core 5.4 Vol 3 Part A §3, §4).
public struct L2CAPLayer: FieldDescribable {
    public var cid: UInt16
    /// The header's length field.
    public var length: Int
    /// PSM of a dynamic channel, when its set-up was seen.
    public var psm: UInt16?
    /// Reassembled payload (borrowed until the next decode call). For credit-based channels:
    /// the SDU, without its SDU length field, once all its K-frames arrived.
    public var payload: UnsafeRawBufferPointer
    /// Number of ACL/LL fragments this PDU was reassembled from.
    public var fragments: Int
    public var error: DecodeError?
    /// The capture cut a fragment: `payload` holds what was captured.
    public var truncated = false
    /// First signalling command on channels 0x0001/0x0005.
    public var signal: L2CAPSignal?
    /// Commands after the first in the same signalling PDU (BR/EDR may batch them).
    public var moreSignals = 0
    /// Credit-based channels: SDU length from the first K-frame of an SDU.
    public var sduLength: Int?
    /// Credit-based channels: this K-frame continues an SDU that is not complete yet.
    public var sduIncomplete = false
    /// Enhanced retransmission (3) or streaming (4) mode channels: the mode and the frame's
    /// standard control field (Vol 3 Part A §3.3.2).
    public var mode: UInt8?
    public var control: UInt16?

    public init(cid: UInt16, length: Int, payload: UnsafeRawBufferPointer, fragments: Int = 1) {
        self.cid = cid; self.length = length; self.payload = payload; self.fragments = fragments
    }

    /// Parses a whole PDU (basic header + information payload), §3.1.
    public init(pdu: UnsafeRawBufferPointer, fragments: Int = 1, truncated: Bool = false) {
        self.init(cid: 0, length: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0), fragments: fragments)
        self.truncated = truncated
        var r = ByteReader(pdu)
        do throws(DecodeError) {
            length = Int(try r.readUInt16(.little, "length"))
            cid = try r.readUInt16(.little, "channel ID")
            if r.readableBytes < length {
                payload = r.readRemaining()
                if !truncated {
                    throw DecodeError(code: .truncated, offset: 4, message: "payload: need \(length) bytes, \(payload.count) left")
                }
            } else {
                payload = try r.readBytes(length)
                if !r.isAtEnd {
                    throw DecodeError(code: .invalidLength, offset: r.readerIndex, message: "\(r.readableBytes) bytes after the L2CAP PDU")
                }
            }
            if isSignalling { try decodeSignals() }
        } catch {
            // A capture cut is not a protocol error: the fields read so far stand.
            if !(truncated && error.code == .truncated) { self.error = error.inLayer("l2cap") }
        }
    }

    /// Channels 0x0001 (BR/EDR) and 0x0005 (LE) carry signalling commands.
    public var isSignalling: Bool { cid == 0x0001 || cid == 0x0005 }

    private mutating func decodeSignals() throws(DecodeError) {
        var r = ByteReader(payload)
        do throws(DecodeError) {
            let s = try L2CAPSignal(&r)
            signal = s
            if let e = s.error { error = e }
            // LE signalling carries one command per PDU (§4); BR/EDR may carry several.
            while cid == 0x0001, r.readableBytes >= 4 {
                _ = try L2CAPSignal(&r)
                moreSignals += 1
            }
        } catch {
            if !truncated { throw error.shifted(4) }
        }
    }

    /// opcode = signalling command code on channels 0x0001/0x0005, the CID otherwise; name.
    public func describe<S: FieldSink>(into sink: inout S) {
        if isSignalling, let s = signal {
            sink.int("opcode", Int(s.code)); sink.string("name", s.name)
        } else {
            sink.int("opcode", Int(cid)); sink.string("name", name)
        }
        sink.int("cid", Int(cid))
        sink.int("length", length)
        if let p = psm { sink.int("psm", Int(p)); sink.string("psm_name", Self.psmName(p)) }
        sink.int("fragments", fragments)
        if truncated { sink.bool("truncated", true) }
        if let n = sduLength { sink.int("sdu_length", n) }
        if sduIncomplete { sink.bool("sdu_incomplete", true) }
        if let m = mode { describeMode(m, into: &sink) }
        if let s = signal { s.describe(into: &sink) }
        if moreSignals > 0 { describeMoreSignals(into: &sink) }
    }

    private func describeMode<S: FieldSink>(_ m: UInt8, into sink: inout S) {
        sink.string("mode", Self.modeName(m))
        guard let c = control else { return }
        sink.int("control", Int(c))
        if c & 1 == 0 {
            sink.string("frame", "I")
            sink.int("tx_seq", Int(c >> 1 & 0x3F)); sink.int("req_seq", Int(c >> 8 & 0x3F)); sink.int("sar", Int(c >> 14))
        } else {
            sink.string("frame", "S")
            sink.int("supervisory", Int(c >> 2 & 3)); sink.int("req_seq", Int(c >> 8 & 0x3F))
        }
    }

    /// Channel modes of the Retransmission and Flow Control option (§5.4).
    public static func modeName(_ m: UInt8) -> String {
        switch m {
        case 0: "Basic"
        case 1: "Retransmission"
        case 2: "Flow Control"
        case 3: "Enhanced Retransmission"
        case 4: "Streaming"
        default: "Unknown"
        }
    }

    private func describeMoreSignals<S: FieldSink>(into sink: inout S) {
        var r = ByteReader(payload)
        _ = try? L2CAPSignal(&r)
        sink.beginArray("more_commands")
        for _ in 0..<moreSignals {
            guard let s = try? L2CAPSignal(&r) else { break }
            sink.beginObject("")
            sink.int("opcode", Int(s.code)); sink.string("name", s.name)
            s.describe(into: &sink)
            sink.endObject()
        }
        sink.endArray()
    }

    /// "ATT", "SMP", a signalling command name, a PSM name, or "Dynamic Channel".
    public var name: String {
        switch cid {
        case 0x0001, 0x0005: signal?.name ?? "Signaling"
        case 0x0002: "Connectionless"
        case 0x0003: "AMP Manager"
        case 0x0004: "ATT"
        case 0x0006: "SMP"
        case 0x0007: "SMP BR/EDR"
        case 0x0040...: psm.map(Self.psmName) ?? "Dynamic Channel"
        default: "Unknown"
        }
    }

    /// Protocol/service multiplexers (Assigned Numbers §5.4).
    public static func psmName(_ psm: UInt16) -> String {
        switch psm {
        case 0x0001: "SDP"
        case 0x0003: "RFCOMM"
        case 0x0005: "TCS-BIN"
        case 0x0007: "TCS-BIN-CORDLESS"
        case 0x000F: "BNEP"
        case 0x0011: "HID Control"
        case 0x0013: "HID Interrupt"
        case 0x0015: "UPnP"
        case 0x0017: "AVCTP"
        case 0x0019: "AVDTP"
        case 0x001B: "AVCTP Browsing"
        case 0x001D: "UDI C-Plane"
        case 0x001F: "ATT"
        case 0x0021: "3DSP"
        case 0x0023: "IPSP"
        case 0x0025: "OTS"
        case 0x0027: "EATT"
        default: "Unknown"
        }
    }

    /// "L2CAP Connection Parameter Update Request", "L2CAP ATT cid=0x0004 len=7".
    public var summary: String {
        if isSignalling, let s = signal {
            // A connection request names the protocol it asks for.
            if let p = s.psm, s.code == 0x02 || s.code == 0x0C || s.code == 0x14 || s.code == 0x17 {
                return "L2CAP " + s.name + " PSM " + Hex.fixed(UInt64(p), width: 4) + " (" + Self.psmName(p) + ")"
            }
            return "L2CAP " + s.name
        }
        var s = "L2CAP \(name) cid=" + Hex.fixed(UInt64(cid), width: 4) + " len=\(length)"
        if fragments > 1 { s += " fragments=\(fragments)" }
        return s
    }
}
