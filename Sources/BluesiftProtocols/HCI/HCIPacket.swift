import BluesiftWire
import BluesiftCapture

/// The `hci` layer: a command, event, ACL/SCO/ISO header (Core 5.4 Vol 4 Part E §5.4).
/// An event's parameters are read by its view (`HCIEventView`, one per event type), a
/// command's here, into `fields`; the rest stay in `parameters` (borrowed). Never traps:
/// damage sets `error`, fields decoded so far stay.
public struct HCIPacket: FieldDescribable {
    public var kind: PacketKind
    /// Command opcode, event code, or the H4 indicator for data packets.
    public var opcode: Int
    public var bytes: UnsafeRawBufferPointer
    /// Damage found by the decode. The error itself is decoded again when asked (rare): a
    /// packet holding no references is plain data, so frames copy, reset and overwrite it
    /// without reference counting or value-witness calls (one per record).
    var damaged = false
    public var error: DecodeError? {
        guard damaged else { return nil }
        var again = HCIPacket(kind: kind, opcode: Int(kind.rawValue), bytes: bytes)
        again.truncated = truncated
        return again.decodeFields()
    }
    /// The command or event code was read (a packet cut before it is "Unknown").
    var codeRead = false

    /// Command or event name from the tables; "ACL Data" and the like for data packets.
    public var name: String {
        switch kind {
        case .command: codeRead ? HCICommandNames.name(UInt16(truncatingIfNeeded: opcode)) : "Unknown"
        case .event: codeRead ? HCIEventNames.name(UInt8(truncatingIfNeeded: opcode)) : "Unknown"
        case .acl: "ACL Data"
        case .sco: "SCO Data"
        case .iso: "ISO Data"
        default: "Unknown"
        }
    }
    /// Command/event parameters, or the data of an ACL/SCO/ISO packet (borrowed).
    public var parameters: UnsafeRawBufferPointer
    /// The capture cut this packet: length mismatches are not errors.
    public var truncated = false

    /// LE Meta subevent code (§7.7.65).
    public var subevent: UInt8?
    /// `opcode` named, for an event (§7.7) and for a command (§7.8).
    @inline(__always) public var eventCode: HCIEventCode { HCIEventCode(UInt8(truncatingIfNeeded: opcode)) }
    @inline(__always) public var commandCode: HCICommandOpcode { HCICommandOpcode(UInt16(truncatingIfNeeded: opcode)) }
    /// `subevent` named.
    @inline(__always) public var leSubevent: HCILESubeventCode? { subevent.map { HCILESubeventCode($0) } }
    /// What the event's view (`HCIEvents.read`) or the command's decode read (by name: the
    /// extension at the end).
    public var fields = HCIFields()
    /// Broadcom controllers (many Android phones) log vendor diagnostics as ACL data on handle
    /// 0x0EDC, which no connection event opens: its "L2CAP" headers are noise (a CID of their
    /// own on most packets). Unless a Connection Complete gave the handle, such records are
    /// not a connection and are not decoded above HCI (Wireshark's btsnoop users see the same
    /// noise as L2CAP on unknown channels).
    public static let vendorDiagnosticHandle: UInt16 = 0x0EDC
    public static let vendorDiagnosticNote = "vendor diagnostics (Broadcom) on ACL handle 0x0edc, not decoded"
    /// Connection handles run 0x0000–0x0EFF; 0x0F00 and above are reserved (Core 5.4 Vol 4
    /// Part E §5.4.2), so no connection event opens one: controllers that log their own
    /// streams there (Broadcom's 0x0ff1) are vendor diagnostics like 0x0EDC.
    public static let maxConnectionHandle: UInt16 = 0x0EFF
    /// A handle only vendor diagnostics use: 0x0EDC, or any reserved one.
    @inline(__always)
    public static func isVendorDiagnostic(handle h: UInt16) -> Bool { h == vendorDiagnosticHandle || h > maxConnectionHandle }
    /// The note of a vendor diagnostic record on `handle` (made once per handle, not per record).
    public static func vendorDiagnosticNote(handle h: UInt16) -> String {
        h > maxConnectionHandle ? reservedHandleNotes[Int(h & 0xFF)] : vendorDiagnosticNote
    }
    static let reservedHandleNotes: [String] = (0..<256).map {
        "vendor diagnostics on reserved ACL handle " + Hex.fixed(UInt64(0x0F00 | $0), width: 4) + ", not decoded"
    }
    /// ACL: packet boundary and broadcast flags; SCO: packet status; ISO: PB and TS flags.
    public var pbFlag: UInt8?
    public var bcFlag: UInt8?
    /// Length field of the data packet header.
    public var dataLength: Int?
    /// False for packets whose parameters are only shown raw.
    public var parametersDecoded = false

    public init(kind: PacketKind, opcode: Int, bytes: UnsafeRawBufferPointer) {
        self.kind = kind; self.opcode = opcode; self.bytes = bytes
        self.parameters = UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// Decodes an HCI packet without its H4 indicator. `truncated`: the capture cut it.
    public init(kind: PacketKind, bytes: UnsafeRawBufferPointer, truncated: Bool = false) {
        self.init(kind: kind, opcode: Int(kind.rawValue), bytes: bytes)
        self.truncated = truncated
        damaged = decodeFields() != nil
    }

    /// Decodes the fields from `bytes`; returns the damage, if any.
    private mutating func decodeFields() -> DecodeError? {
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            switch kind {
            case .command: try decodeCommand(&r)
            case .event: try decodeEvent(&r)
            case .acl: try decodeACL(&r)
            case .sco: try decodeSCO(&r)
            case .iso: try decodeISO(&r)
            default: break
            }
        } catch {
            if !(truncated && error.code == .truncated) { return error.inLayer("hci") }
        }
        return nil
    }

    /// Reads the declared parameter/data length and takes that many bytes (fewer when the
    /// capture cut the packet). Bytes beyond the declared length are reported after the
    /// parameters are decoded.
    private mutating func takeParameters(_ r: inout ByteReader, declared: Int) throws(DecodeError) {
        if r.readableBytes < declared {
            parameters = r.readRemaining()
            if !truncated {
                throw DecodeError(
                    code: .truncated, offset: r.readerIndex,
                    message: "parameters: need \(declared) bytes, \(parameters.count) left")
            }
        } else {
            parameters = try r.readBytes(declared)
        }
    }

    private func checkEnd(_ r: ByteReader) throws(DecodeError) {
        if !r.isAtEnd {
            throw DecodeError(
                code: .invalidLength, offset: r.readerIndex,
                message: "\(r.readableBytes) bytes after the declared length")
        }
    }

    /// Core 5.4 Vol 4 Part E §5.4.1
    private mutating func decodeCommand(_ r: inout ByteReader) throws(DecodeError) {
        let op = try r.readUInt16(.little, "opcode")
        opcode = Int(op)
        codeRead = true
        let plen = Int(try r.readUInt8("parameter length"))
        let base = r.readerIndex
        try takeParameters(&r, declared: plen)
        var p = ByteReader(parameters)
        do throws(DecodeError) { try decodeCommandParameters(op, &p) } catch { throw error.shifted(base) }
        try checkEnd(r)
    }

    /// Core 5.4 Vol 4 Part E §5.4.4
    private mutating func decodeEvent(_ r: inout ByteReader) throws(DecodeError) {
        let code = try r.readUInt8("event code")
        opcode = Int(code)
        codeRead = true
        let plen = Int(try r.readUInt8("parameter length"))
        let base = r.readerIndex
        try takeParameters(&r, declared: plen)
        // The event's view reads its fields (`HCIEvents`); what it read before damage stays.
        parametersDecoded = true
        do throws(DecodeError) {
            parametersDecoded = try HCIEvents.read(code: code, parameters: parameters, subevent: &subevent, into: &fields, cut: truncated)
        } catch { throw error.shifted(base) }
        try checkEnd(r)
    }

    /// Core 5.4 Vol 4 Part E §5.4.2
    private mutating func decodeACL(_ r: inout ByteReader) throws(DecodeError) {
        let h = try r.readUInt16(.little, "handle")
        handle = h & 0x0FFF
        pbFlag = UInt8((h >> 12) & 3)
        bcFlag = UInt8(h >> 14)
        let len = Int(try r.readUInt16(.little, "data length"))
        dataLength = len
        try takeParameters(&r, declared: len)
        parametersDecoded = true
        try checkEnd(r)
    }

    /// Core 5.4 Vol 4 Part E §5.4.3
    private mutating func decodeSCO(_ r: inout ByteReader) throws(DecodeError) {
        let h = try r.readUInt16(.little, "handle")
        handle = h & 0x0FFF
        pbFlag = UInt8((h >> 12) & 3) // packet status flag
        let len = Int(try r.readUInt8("data length"))
        dataLength = len
        try takeParameters(&r, declared: len)
        parametersDecoded = true
        try checkEnd(r)
    }

    /// Core 5.4 Vol 4 Part E §5.4.5
    private mutating func decodeISO(_ r: inout ByteReader) throws(DecodeError) {
        let h = try r.readUInt16(.little, "handle")
        handle = h & 0x0FFF
        pbFlag = UInt8((h >> 12) & 3)
        bcFlag = UInt8((h >> 14) & 1) // TS flag
        let len = Int(try r.readUInt16(.little, "data length") & 0x3FFF)
        dataLength = len
        try takeParameters(&r, declared: len)
        parametersDecoded = true
        try checkEnd(r)
    }

    /// "LE Connection Complete" for LE Meta events, nil otherwise.
    public var subeventName: String? { subevent.map(HCIEventNames.leSubeventName) }

    /// Name of the command a Command Complete/Status answers.
    public var commandName: String? { commandOpcode.map(HCICommandNames.name) }

    /// The opcode is in the vendor-specific group (OGF 0x3F).
    public var isVendorCommand: Bool { kind == .command && opcode >> 10 == 0x3F }
}

/// The fields read (`fields`), by name: what describe, connection tracking and stats read.
extension HCIPacket {
    @inline(__always) public var commandOpcode: UInt16? {
        get { fields.commandOpcode }
        set { fields.commandOpcode = newValue }
    }
    @inline(__always) public var numPackets: UInt8? {
        get { fields.numPackets }
        set { fields.numPackets = newValue }
    }
    @inline(__always) public var returnParameters: UnsafeRawBufferPointer? {
        get { fields.returnParameters }
        set { fields.returnParameters = newValue }
    }
    @inline(__always) public var status: HCIStatus? {
        get { fields.status }
        set { fields.status = newValue }
    }
    @inline(__always) public var handle: UInt16? {
        get { fields.handle }
        set { fields.handle = newValue }
    }
    @inline(__always) public var reason: HCIStatus? {
        get { fields.reason }
        set { fields.reason = newValue }
    }
    @inline(__always) public var peer: BDAddr? {
        get { fields.peer }
        set { fields.peer = newValue }
    }
    @inline(__always) public var peerAddressType: AddressType? {
        get { fields.peerAddressType }
        set { fields.peerAddressType = newValue }
    }
    @inline(__always) public var role: UInt8? {
        get { fields.role }
        set { fields.role = newValue }
    }
    @inline(__always) public var linkType: UInt8? {
        get { fields.linkType }
        set { fields.linkType = newValue }
    }
    @inline(__always) public var interval: UInt16? {
        get { fields.interval }
        set { fields.interval = newValue }
    }
    @inline(__always) public var intervalMin: UInt16? {
        get { fields.intervalMin }
        set { fields.intervalMin = newValue }
    }
    @inline(__always) public var intervalMax: UInt16? {
        get { fields.intervalMax }
        set { fields.intervalMax = newValue }
    }
    @inline(__always) public var latency: UInt16? {
        get { fields.latency }
        set { fields.latency = newValue }
    }
    @inline(__always) public var supervisionTimeout: UInt16? {
        get { fields.supervisionTimeout }
        set { fields.supervisionTimeout = newValue }
    }
    @inline(__always) public var encryption: UInt8? {
        get { fields.encryption }
        set { fields.encryption = newValue }
    }
    @inline(__always) public var keySize: UInt8? {
        get { fields.keySize }
        set { fields.keySize = newValue }
    }
    @inline(__always) public var txPHY: UInt8? {
        get { fields.txPHY }
        set { fields.txPHY = newValue }
    }
    @inline(__always) public var rxPHY: UInt8? {
        get { fields.rxPHY }
        set { fields.rxPHY = newValue }
    }
    @inline(__always) public var maxTxOctets: UInt16? {
        get { fields.maxTxOctets }
        set { fields.maxTxOctets = newValue }
    }
    @inline(__always) public var maxTxTime: UInt16? {
        get { fields.maxTxTime }
        set { fields.maxTxTime = newValue }
    }
    @inline(__always) public var maxRxOctets: UInt16? {
        get { fields.maxRxOctets }
        set { fields.maxRxOctets = newValue }
    }
    @inline(__always) public var maxRxTime: UInt16? {
        get { fields.maxRxTime }
        set { fields.maxRxTime = newValue }
    }
    @inline(__always) public var features: UInt64? {
        get { fields.features }
        set { fields.features = newValue }
    }
}
