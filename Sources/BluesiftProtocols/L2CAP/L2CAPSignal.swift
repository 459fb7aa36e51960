import BluesiftWire

/// One signalling command on channel 0x0001 (BR/EDR) or 0x0005 (LE)
/// (Core 5.4 Vol 3 Part A §4). Borrows its data; option/CID lists are read in `describe`.
public struct L2CAPSignal {
    public var code: UInt8
    public var identifier: UInt8
    /// Data after the 4-byte command header (borrowed).
    public var data: UnsafeRawBufferPointer
    public var psm: UInt16?
    public var sourceCID: UInt16?
    public var destinationCID: UInt16?
    /// Result of responses; reason of Command Reject.
    public var result: UInt16?
    public var status: UInt16?
    public var flags: UInt16?
    public var infoType: UInt16?
    public var mtu: UInt16?
    public var mps: UInt16?
    public var credits: UInt16?
    public var intervalMin: UInt16?
    public var intervalMax: UInt16?
    public var latency: UInt16?
    public var timeout: UInt16?
    /// Offset in `data` of a trailing list: config options (0x04/0x05), CIDs (0x17-0x19),
    /// information data (0x0B), reject data (0x01).
    public var listOffset: Int?
    /// False for commands whose data is only shown raw (echo, AMP, unknown codes).
    public var decoded = true
    public var error: DecodeError?

    /// Parses the command at the reader's position; consumes the header and declared data.
    public init(_ r: inout ByteReader) throws(DecodeError) {
        code = try r.readUInt8("signal code")
        identifier = try r.readUInt8("identifier")
        let len = Int(try r.readUInt16(.little, "signal length"))
        let start = r.readerIndex
        data = try r.readBytes(len, "signal data")
        var p = ByteReader(data)
        do throws(DecodeError) { try decodeFields(&p) } catch {
            var e = error
            e.offset += start
            self.error = e.inLayer("l2cap")
        }
    }

    private mutating func decodeFields(_ p: inout ByteReader) throws(DecodeError) {
        func u16(_ what: StaticString) throws(DecodeError) -> UInt16 { try p.readUInt16(.little, what) }
        switch code {
        case 0x01: // §4.1 Command Reject
            result = try u16("reason"); listOffset = p.readerIndex
        case 0x02, 0x0C: // §4.2 Connection Request (Create Channel adds a controller id)
            psm = try u16("PSM"); sourceCID = try u16("source CID")
        case 0x03, 0x0D: // §4.3 Connection Response
            destinationCID = try u16("destination CID"); sourceCID = try u16("source CID")
            result = try u16("result"); status = try u16("status")
        case 0x04: // §4.4 Configuration Request
            destinationCID = try u16("destination CID"); flags = try u16("flags"); listOffset = p.readerIndex
        case 0x05: // §4.5 Configuration Response
            sourceCID = try u16("source CID"); flags = try u16("flags"); result = try u16("result")
            listOffset = p.readerIndex
        case 0x06, 0x07: // §4.6/4.7 Disconnection Request/Response
            destinationCID = try u16("destination CID"); sourceCID = try u16("source CID")
        case 0x0A: // §4.10 Information Request
            infoType = try u16("info type")
        case 0x0B: // §4.11 Information Response
            infoType = try u16("info type"); result = try u16("result"); listOffset = p.readerIndex
        case 0x12: // §4.20 Connection Parameter Update Request
            intervalMin = try u16("interval min"); intervalMax = try u16("interval max")
            latency = try u16("latency"); timeout = try u16("timeout")
        case 0x13: // §4.21 Connection Parameter Update Response
            result = try u16("result")
        case 0x14: // §4.22 LE Credit Based Connection Request
            psm = try u16("LE_PSM"); sourceCID = try u16("source CID")
            mtu = try u16("MTU"); mps = try u16("MPS"); credits = try u16("initial credits")
        case 0x15: // §4.23 LE Credit Based Connection Response
            destinationCID = try u16("destination CID")
            mtu = try u16("MTU"); mps = try u16("MPS"); credits = try u16("initial credits")
            result = try u16("result")
        case 0x16: // §4.24 Flow Control Credit Indication
            sourceCID = try u16("CID"); credits = try u16("credits")
        case 0x17: // §4.25 Credit Based Connection Request
            psm = try u16("SPSM"); mtu = try u16("MTU"); mps = try u16("MPS")
            credits = try u16("initial credits"); listOffset = p.readerIndex
        case 0x18: // §4.26 Credit Based Connection Response
            mtu = try u16("MTU"); mps = try u16("MPS"); credits = try u16("initial credits")
            result = try u16("result"); listOffset = p.readerIndex
        case 0x19: // §4.27 Credit Based Reconfigure Request
            mtu = try u16("MTU"); mps = try u16("MPS"); listOffset = p.readerIndex
        case 0x1A: // §4.28 Credit Based Reconfigure Response
            result = try u16("result")
        default:
            decoded = false
        }
    }

    /// Number of CIDs in the trailing list (ECFC request/response, reconfigure).
    public var cidCount: Int { listOffset.map { (data.count - $0) / 2 } ?? 0 }

    public func cid(at i: Int) -> UInt16 {
        let o = (listOffset ?? 0) + 2 * i
        return UInt16(data[o]) | UInt16(data[o + 1]) << 8
    }

    public var name: String { Self.name(code) }

    /// Core 5.4 Vol 3 Part A §4, Table 4.2.
    public static func name(_ code: UInt8) -> String {
        switch code {
        case 0x01: "Command Reject"
        case 0x02: "Connection Request"
        case 0x03: "Connection Response"
        case 0x04: "Configuration Request"
        case 0x05: "Configuration Response"
        case 0x06: "Disconnection Request"
        case 0x07: "Disconnection Response"
        case 0x08: "Echo Request"
        case 0x09: "Echo Response"
        case 0x0A: "Information Request"
        case 0x0B: "Information Response"
        case 0x0C: "Create Channel Request"
        case 0x0D: "Create Channel Response"
        case 0x0E: "Move Channel Request"
        case 0x0F: "Move Channel Response"
        case 0x10: "Move Channel Confirmation Request"
        case 0x11: "Move Channel Confirmation Response"
        case 0x12: "Connection Parameter Update Request"
        case 0x13: "Connection Parameter Update Response"
        case 0x14: "LE Credit Based Connection Request"
        case 0x15: "LE Credit Based Connection Response"
        case 0x16: "Flow Control Credit Indication"
        case 0x17: "Credit Based Connection Request"
        case 0x18: "Credit Based Connection Response"
        case 0x19: "Credit Based Reconfigure Request"
        case 0x1A: "Credit Based Reconfigure Response"
        default: "Unknown"
        }
    }

    /// Configuration option types (§5).
    public static func optionName(_ type: UInt8) -> String {
        switch type & 0x7F {
        case 0x01: "MTU"
        case 0x02: "Flush Timeout"
        case 0x03: "QoS"
        case 0x04: "Retransmission and Flow Control"
        case 0x05: "FCS"
        case 0x06: "Extended Flow Specification"
        case 0x07: "Extended Window Size"
        default: "Unknown"
        }
    }

    func describe<S: FieldSink>(into sink: inout S) {
        sink.int("identifier", Int(identifier))
        if let v = psm { sink.int("psm", Int(v)); sink.string("psm_name", L2CAPLayer.psmName(v)) }
        if let v = sourceCID { sink.int("scid", Int(v)) }
        if let v = destinationCID { sink.int("dcid", Int(v)) }
        if let v = flags { sink.int("flags", Int(v)) }
        if let v = infoType { sink.int("info_type", Int(v)) }
        if let v = result { sink.int(code == 0x01 ? "reason" : "result", Int(v)) }
        if let v = status { sink.int("status", Int(v)) }
        if let v = mtu { sink.int("mtu", Int(v)) }
        if let v = mps { sink.int("mps", Int(v)) }
        if let v = credits { sink.int("credits", Int(v)) }
        if let v = intervalMin { sink.int("interval_min", Int(v)) }
        if let v = intervalMax { sink.int("interval_max", Int(v)) }
        if let v = latency { sink.int("latency", Int(v)) }
        if let v = timeout { sink.int("timeout", Int(v)) }
        guard let off = listOffset, off <= data.count else {
            if !decoded, !data.isEmpty { sink.hex("data", data) }
            return
        }
        switch code {
        case 0x04, 0x05:
            sink.beginArray("options")
            var i = off
            while i + 2 <= data.count {
                let type = data[i], len = Int(data[i + 1])
                let end = min(i + 2 + len, data.count)
                sink.beginObject("")
                sink.int("type", Int(type)); sink.string("name", Self.optionName(type))
                if type & 0x7F == 0x01, end - i - 2 >= 2 {
                    sink.int("mtu", Int(UInt16(data[i + 2]) | UInt16(data[i + 3]) << 8))
                } else {
                    sink.hex("value", UnsafeRawBufferPointer(rebasing: data[(i + 2)..<end]))
                }
                sink.endObject()
                i = end
            }
            sink.endArray()
        case 0x17, 0x18, 0x19:
            sink.beginArray(code == 0x17 ? "scids" : "dcids")
            for i in 0..<cidCount { sink.int("", Int(cid(at: i))) }
            sink.endArray()
        default:
            if off < data.count { sink.hex("data", UnsafeRawBufferPointer(rebasing: data[off...])) }
        }
    }
}
