import BluesiftWire
import BluesiftCapture

/// An over-the-air LE link-layer packet (Core 5.4 Vol 6 Part B §2), DLT 251 layout:
/// Access Address (4), PDU header (2), payload, then the CRC (3) when `sniffer.hasCRC`.
public struct LLPacket: FieldDescribable {
    public var accessAddress: UInt32
    public var isAdvertising: Bool
    /// Data channel: LLID (1 = L2CAP continuation/empty, 2 = L2CAP start, 3 = LL control).
    public var llid: UInt8?
    /// Data channel payload (without MIC/CRC), for L2CAP reassembly when llid is 1 or 2.
    /// Advertising channel: the PDU payload after the header. Encrypted: the ciphertext + MIC.
    public var payload: UnsafeRawBufferPointer
    /// Payload is encrypted (sniffer said so, or the connection is encrypted): not decoded.
    public var encrypted: Bool
    /// Advertising PDUs become the record's `adv` layer.
    public var advertising: AdvertisingLayer?
    public var error: DecodeError?

    /// The whole record.
    public var bytes: UnsafeRawBufferPointer
    /// First PDU header byte (flags and type/LLID) and the Length field.
    public var header: UInt8 = 0
    public var length: Int = 0
    /// Advertising channel PDU Type (§2.3 Table 2.3).
    public var pduType: UInt8?
    /// The sniffer saw it on a secondary advertising channel (AUX_* names).
    public var secondaryChannel = false
    /// Data channel CTEInfo when CP is set (§2.4).
    public var cteInfo: UInt8?
    public var controlOpcode: LLControlOpcode?
    /// CRC as sent (24 bits, transmitted LSB first; stored as read little-endian).
    public var crc: UInt32?
    public var sniffer: SnifferInfo?
    /// LE Coded PHY: the Coding Indicator octet after the access address (§2.2).
    public var codingIndicator: UInt8?
    /// Data channel, set by the decoder from the connection: true when the central sent it.
    public var fromCentral: Bool?
    /// `fromCentral` inferred from the ATT PDU it carries (the capture did not say).
    public var fromInferred = false
    /// The connection's central and peripheral (from its CONNECT_IND / AUX_CONNECT_REQ).
    public var central: BDAddr?
    public var peripheral: BDAddr?
    /// Decrypted with the connection's session key (MIC verified); `payload` is plaintext.
    public var decrypted = false
    /// The sender's previous PDU again (same SN, same content, §4.5.9): not fed twice.
    public var retransmission = false
    /// The SN/NESN sequence proves that the sniffer missed packets before this one.
    public var missedBefore = false
    /// This PDU's NESN acknowledges the other side's PDU that the sniffer saw only with a bad
    /// CRC (its frame): the link received it, only the sniffer did not.
    public var acknowledgesCRCBad: Int?

    public static let advertisingAccessAddress: UInt32 = 0x8E89_BED6

    public init(bytes: UnsafeRawBufferPointer, sniffer: SnifferInfo?) {
        self.bytes = bytes; self.sniffer = sniffer; crcOK = sniffer?.crcOK
        accessAddress = 0; isAdvertising = false; llid = nil
        payload = UnsafeRawBufferPointer(rebasing: bytes[bytes.count...]); encrypted = false
        do throws(DecodeError) { try parse() } catch { self.error = error.inLayer("ll") }
    }

    private mutating func parse() throws(DecodeError) {
        var r = ByteReader(bytes)
        accessAddress = try r.readUInt32(.little, "access address")
        isAdvertising = accessAddress == Self.advertisingAccessAddress
        if sniffer?.phy == 2 { codingIndicator = try r.readUInt8("coding indicator") & 0x03 }
        header = try r.readUInt8("pdu header")
        length = Int(try r.readUInt8("length"))
        var end = bytes.count
        if sniffer?.hasCRC ?? true, end - r.readerIndex >= 3 {
            end -= 3
            crc = UInt32(bytes[end]) | UInt32(bytes[end + 1]) << 8 | UInt32(bytes[end + 2]) << 16
        }
        if !isAdvertising, header & 0x20 != 0, r.readerIndex < end { // CP: CTEInfo follows the header
            cteInfo = try r.readUInt8("cte info")
        }
        let available = end - r.readerIndex
        let n = min(length, available)
        payload = try r.readBytes(n, "payload")
        if isAdvertising {
            pduType = header & 0x0F
            if let ch = sniffer?.channel { secondaryChannel = ch < 37 }
            advertising = makeAdvertising()
        } else {
            llid = header & 0x03
            encrypted = sniffer?.encrypted == true
            if llid == 3, !encrypted, let op = payload.first { controlOpcode = LLControlOpcode(rawValue: op) }
        }
        if length > available {
            throw DecodeError(code: .truncated, offset: r.readerIndex, message: "payload: length \(length), \(available) bytes there")
        }
        if available > length {
            throw DecodeError(code: .invalidLength, offset: r.readerIndex, message: "\(available - length) bytes after the PDU")
        }
    }

    // MARK: header bits (§2.3, §2.4)

    public var chSel: Bool { isAdvertising && header & 0x20 != 0 }
    public var txAdd: Bool { isAdvertising && header & 0x40 != 0 }
    public var rxAdd: Bool { isAdvertising && header & 0x80 != 0 }
    public var nesn: Bool { !isAdvertising && header & 0x04 != 0 }
    public var sn: Bool { !isAdvertising && header & 0x08 != 0 }
    public var md: Bool { !isAdvertising && header & 0x10 != 0 }
    public var cp: Bool { !isAdvertising && header & 0x20 != 0 }

    /// The CRC verdict: the sniffer's, or bluesift's when the sniffer did not check
    /// (`crcComputed`); nil when neither could (a data PDU of a link whose CRCInit is unknown).
    public var crcOK: Bool?
    /// bluesift computed `crcOK` (the capture did not say whether the CRC held).
    public var crcComputed = false
    /// The sniffer said the CRC held, and it does not under the link's CRCInit.
    public var crcValidatedWrongly = false
    /// The record has a CRC and no verdict: neither the sniffer nor bluesift could check it.
    public var crcUnverifiable: Bool { crcOK == nil && crc != nil }
    /// Set by the decoder: a data PDU not decoded because its CRC cannot be checked yet (an
    /// access address no CONNECT_IND announced; `ProtocolDecoder.decodeLL`).
    public var crcAwaitsLink = false

    /// The PDU the CRC covers: header and payload (after the Coding Indicator).
    public var crcCovered: UnsafeRawBufferPointer? {
        guard crc != nil else { return nil }
        let start = 4 + (codingIndicator == nil ? 0 : 1)
        guard bytes.count >= start + 5 else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<bytes.count - 3])
    }

    /// Checks the CRC with `crcInit`: the verdict when the sniffer gave none; against the
    /// sniffer's "valid", a disagreement is noted. Returns whether the CRC holds.
    @discardableResult
    public mutating func checkCRC(crcInit: UInt32) -> Bool? {
        guard let crc, let pdu = crcCovered else { return nil }
        let holds = LLCRC.compute(pdu, crcInit: crcInit) == crc
        if crcOK == nil { crcOK = holds; crcComputed = true } else if crcOK == true, !holds { crcValidatedWrongly = true }
        return holds
    }

    /// Replaces the ciphertext by its plaintext (the MIC verified): control PDUs are named.
    mutating func setPlaintext(_ p: UnsafeRawBufferPointer) {
        payload = p; length = p.count; encrypted = false; decrypted = true
        controlOpcode = llid == 3 ? p.first.map { LLControlOpcode(rawValue: $0) } : nil
    }

    /// Ciphertext: never read as L2CAP or LL control.
    mutating func markEncrypted() { encrypted = true; controlOpcode = nil }

    /// PDU type or control opcode name.
    public var name: String {
        if let pduType { return LLNames.advPDUTypeName(pduType, secondary: secondaryChannel) }
        if encrypted { return "Encrypted" }
        if let controlOpcode { return controlOpcode.name }
        return LLNames.dataName(llid: llid ?? 0, length: length)
    }

    /// `opcode` of the `ll` object: PDU type, control opcode, or the LLID for other data PDUs.
    public var opcode: Int {
        if let pduType { return Int(pduType) }
        if let controlOpcode { return Int(controlOpcode.rawValue) }
        return Int(llid ?? 0)
    }

    /// Control PDU parameters (after the opcode); nil unless an unencrypted LL control PDU.
    public var controlData: UnsafeRawBufferPointer? {
        guard controlOpcode != nil else { return nil }
        return UnsafeRawBufferPointer(rebasing: payload[1...])
    }

    /// AdvA (the first 6 payload bytes) of ADV_IND, ADV_DIRECT_IND, ADV_NONCONN_IND,
    /// SCAN_RSP, ADV_SCAN_IND; ScanA of SCAN_REQ; InitA of CONNECT_IND.
    func address(at offset: Int) -> BDAddr? {
        guard offset + 6 <= payload.count else { return nil }
        return BDAddr(littleEndian: UnsafeRawBufferPointer(rebasing: payload[offset..<offset + 6]))
    }

    private func makeAdvertising() -> AdvertisingLayer? {
        guard let t = pduType else { return nil }
        var rep = AdvertisingReport(
            eventType: UInt16(t), table: secondaryChannel ? .linkLayerSecondary : .linkLayer,
            data: UnsafeRawBufferPointer(rebasing: payload[payload.count...]))
        rep.rssi = sniffer?.rssi
        switch t {
        case 0x0, 0x2, 0x4, 0x6:
            guard let a = address(at: 0) else { return nil }
            rep.address = a; rep.addressType = txAdd ? .random : .public
            rep.data = UnsafeRawBufferPointer(rebasing: payload[6...])
        case 0x1:
            guard let a = address(at: 0) else { return nil }
            rep.address = a; rep.addressType = txAdd ? .random : .public
            rep.directAddress = address(at: 6); rep.directAddressType = rxAdd ? .random : .public
        case 0x7, 0x8:
            guard let x = extendedHeader, x.advA != nil || !x.advData.isEmpty else { return nil }
            rep.address = x.advA; rep.addressType = x.advA == nil ? nil : (txAdd ? .random : .public)
            rep.directAddress = x.targetA; rep.directAddressType = x.targetA == nil ? nil : (rxAdd ? .random : .public)
            rep.sid = x.adi.map { UInt8($0 >> 12) }
            rep.txPower = x.txPower
            rep.data = x.advData
        default:
            return nil
        }
        return AdvertisingLayer(opcode: Int(t), report: rep)
    }
}
