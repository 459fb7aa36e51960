import BluesiftWire

/// §2.3.4.5 AuxPtr: where the next PDU of the chain is (channel, clock accuracy, offset in
/// 30 or 300 µs units, PHY). 3 octets.
public struct LLAuxPtr: Hashable, Sendable {
    public var channelIndex: UInt8
    /// CA: 0 the sender's clock is within 51-500 ppm, 1 within 0-50 ppm.
    public var clockAccuracy: UInt8
    /// 0: 30 µs, 1: 300 µs.
    public var offsetUnits: UInt8
    public var auxOffset: UInt16
    /// 0 LE 1M, 1 LE 2M, 2 LE Coded.
    public var auxPHY: UInt8
    public init(channelIndex: UInt8, clockAccuracy: UInt8, offsetUnits: UInt8, auxOffset: UInt16, auxPHY: UInt8) {
        self.channelIndex = channelIndex; self.clockAccuracy = clockAccuracy; self.offsetUnits = offsetUnits
        self.auxOffset = auxOffset; self.auxPHY = auxPHY
    }
    public init(_ p: UnsafeRawBufferPointer) {
        let v = isoLE(p, 0, 3)
        self.init(
            channelIndex: UInt8(v & 0x3F), clockAccuracy: UInt8((v >> 6) & 1), offsetUnits: UInt8((v >> 7) & 1),
            auxOffset: UInt16((v >> 8) & 0x1FFF), auxPHY: UInt8((v >> 21) & 7))
    }
    public func encode(into w: inout ByteWriter) {
        let v =
            UInt32(channelIndex & 0x3F) | UInt32(clockAccuracy & 1) << 6 | UInt32(offsetUnits & 1) << 7
            | UInt32(auxOffset & 0x1FFF) << 8 | UInt32(auxPHY & 7) << 21
        w.writeLE(v, 3)
    }
    /// The offset in µs.
    public var offsetMicroseconds: Int { Int(auxOffset) * (offsetUnits == 1 ? 300 : 30) }
    func describe<S: FieldSink>(into w: inout S) {
        w.int("channel_index", Int(channelIndex)); w.int("ca", Int(clockAccuracy)); w.int("offset_units", Int(offsetUnits))
        w.int("aux_offset", Int(auxOffset)); w.int("aux_phy", Int(auxPHY))
    }
}

/// §2.3.4.6 SyncInfo (in AUX_ADV_IND): how to reach the periodic advertising train: its
/// access address, CRCInit, interval (1.25 ms), channel map and event counter. 18 octets.
public struct LLSyncInfo: Hashable, Sendable {
    public static let length = 18
    /// Sync Packet Offset (13 bits) in 30 or 300 µs units, Offset Adjust (adds 2.4576 s).
    public var syncPacketOffset: UInt16
    public var offsetUnits: UInt8
    public var offsetAdjust: UInt8
    public var interval: UInt16
    /// 37 bits.
    public var channelMap: UInt64
    public var sca: UInt8
    public var accessAddress: UInt32
    public var crcInit: UInt32
    public var eventCounter: UInt16
    public var reservedBits: UInt8 = 0
    public init(
        syncPacketOffset: UInt16, offsetUnits: UInt8, offsetAdjust: UInt8, interval: UInt16, channelMap: UInt64, sca: UInt8,
        accessAddress: UInt32, crcInit: UInt32, eventCounter: UInt16
    ) {
        self.syncPacketOffset = syncPacketOffset; self.offsetUnits = offsetUnits; self.offsetAdjust = offsetAdjust
        self.interval = interval; self.channelMap = channelMap; self.sca = sca; self.accessAddress = accessAddress
        self.crcInit = crcInit; self.eventCounter = eventCounter
    }
    public init?(_ p: UnsafeRawBufferPointer) {
        guard p.count >= Self.length else { return nil }
        let o = UInt16(isoLE(p, 0, 2))
        var chm: UInt64 = 0
        for i in 0..<5 { chm |= UInt64(p[4 + i]) << (8 * UInt64(i)) }
        self.init(
            syncPacketOffset: o & 0x1FFF, offsetUnits: UInt8((o >> 13) & 1), offsetAdjust: UInt8((o >> 14) & 1),
            interval: UInt16(isoLE(p, 2, 2)), channelMap: chm & 0x1F_FFFF_FFFF, sca: UInt8(chm >> 37),
            accessAddress: isoLE(p, 9, 4), crcInit: isoLE(p, 13, 3), eventCounter: UInt16(isoLE(p, 16, 2)))
        reservedBits = UInt8(o >> 15)
    }
    public func encode(into w: inout ByteWriter) {
        w.writeUInt16(syncPacketOffset & 0x1FFF | UInt16(offsetUnits & 1) << 13 | UInt16(offsetAdjust & 1) << 14 | UInt16(reservedBits & 1) << 15)
        w.writeUInt16(interval)
        let chm = channelMap & 0x1F_FFFF_FFFF | UInt64(sca & 7) << 37
        w.writeUInt(chm, size: 5, endianness: .little)
        w.writeUInt32(accessAddress); w.writeLE(crcInit, 3); w.writeUInt16(eventCounter)
    }
    func describe<S: FieldSink>(into w: inout S) {
        w.int("sync_packet_offset", Int(syncPacketOffset)); w.int("offset_units", Int(offsetUnits)); w.int("offset_adjust", Int(offsetAdjust))
        w.int("interval", Int(interval)); w.string("channel_map", Hex.fixed(channelMap, width: 10)); w.int("sca", Int(sca))
        w.string("access_address", Hex.fixed(UInt64(accessAddress), width: 8)); w.string("crc_init", Hex.fixed(UInt64(crcInit), width: 6))
        w.int("event_counter", Int(eventCounter))
    }
}

/// §2.3.4.8 BIGInfo (an AD structure of type 0x2C in a periodic advertising train's ACAD): the
/// BIG's timing, its seed access address (the BISes' access addresses follow from it, §2.1.2),
/// BaseCRCInit, PHY, payload counter, framing, and when encrypted the GIV and GSKD. 33 octets
/// (57 encrypted).
public struct LLBIGInfo: Hashable, Sendable {
    public static let adType: UInt8 = 0x2C
    public var bigOffset: UInt16
    public var bigOffsetUnits: UInt8
    public var isoInterval: UInt16
    public var numBIS: UInt8
    public var nse: UInt8
    public var bn: UInt8
    public var subInterval: UInt32
    public var pto: UInt8
    public var bisSpacing: UInt32
    public var irc: UInt8
    public var maxPDU: UInt8
    public var reserved: UInt8
    public var seedAccessAddress: UInt32
    public var sduInterval: UInt32
    public var maxSDU: UInt16
    public var baseCRCInit: UInt16
    /// 37 bits.
    public var channelMap: UInt64
    /// 0 LE 1M, 1 LE 2M, 2 LE Coded.
    public var phy: UInt8
    /// 39 bits.
    public var bisPayloadCount: UInt64
    public var framed: Bool
    /// Present when the BIG is encrypted: GIV (8 octets) and GSKD (16).
    public var giv: [UInt8]?
    public var gskd: [UInt8]?

    public var encrypted: Bool { giv != nil }

    public init?(_ p: UnsafeRawBufferPointer) {
        guard p.count == 33 || p.count == 57 else { return nil }
        let a = isoLE(p, 0, 4), b = isoLE(p, 4, 4), c = isoLE(p, 8, 3), s = isoLE(p, 17, 4)
        bigOffset = UInt16(a & 0x3FFF); bigOffsetUnits = UInt8((a >> 14) & 1)
        isoInterval = UInt16((a >> 15) & 0xFFF); numBIS = UInt8(a >> 27)
        nse = UInt8(b & 0x1F); bn = UInt8((b >> 5) & 7); subInterval = (b >> 8) & 0xF_FFFF; pto = UInt8(b >> 28)
        bisSpacing = c & 0xF_FFFF; irc = UInt8(c >> 20)
        maxPDU = p[11]; reserved = p[12]
        seedAccessAddress = isoLE(p, 13, 4)
        sduInterval = s & 0xF_FFFF; maxSDU = UInt16(s >> 20)
        baseCRCInit = UInt16(isoLE(p, 21, 2))
        var chm: UInt64 = 0, count: UInt64 = 0
        for i in 0..<5 {
            chm |= UInt64(p[23 + i]) << (8 * UInt64(i))
            count |= UInt64(p[28 + i]) << (8 * UInt64(i))
        }
        channelMap = chm & 0x1F_FFFF_FFFF; phy = UInt8(chm >> 37)
        bisPayloadCount = count & 0x7F_FFFF_FFFF; framed = count >> 39 != 0
        if p.count == 57 { giv = Array(p[33..<41]); gskd = Array(p[41..<57]) }
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 57)
        w.writeUInt32(UInt32(bigOffset & 0x3FFF) | UInt32(bigOffsetUnits & 1) << 14 | UInt32(isoInterval & 0xFFF) << 15 | UInt32(numBIS & 0x1F) << 27)
        w.writeUInt32(UInt32(nse & 0x1F) | UInt32(bn & 7) << 5 | (subInterval & 0xF_FFFF) << 8 | UInt32(pto & 0xF) << 28)
        w.writeLE(bisSpacing & 0xF_FFFF | UInt32(irc & 0xF) << 20, 3)
        w.writeUInt8(maxPDU); w.writeUInt8(reserved); w.writeUInt32(seedAccessAddress)
        w.writeUInt32(sduInterval & 0xF_FFFF | UInt32(maxSDU & 0xFFF) << 20)
        w.writeUInt16(baseCRCInit)
        w.writeUInt(channelMap & 0x1F_FFFF_FFFF | UInt64(phy & 7) << 37, size: 5, endianness: .little)
        w.writeUInt(bisPayloadCount & 0x7F_FFFF_FFFF | (framed ? 1 << 39 : 0), size: 5, endianness: .little)
        if let giv, let gskd { w.writeBytes(giv); w.writeBytes(gskd) }
        return w.bytes
    }

    /// §2.1.2: the access address of BIS `n` (1…Num_BIS; 0 is the BIG control access
    /// address): the seed XOR a word built from D = (35·n + 42) mod 128.
    public static func accessAddress(seed: UInt32, bis n: Int) -> UInt32 {
        let d = UInt32((35 * n + 42) & 0x7F)
        var dw: UInt32 = d & 1 != 0 ? 0xFC00_0000 : 0
        dw |= (d >> 1 & 1) << 25 | (d >> 6 & 1) << 24 | (d >> 1 & 1) << 23
        dw |= (d >> 5 & 1) << 21 | (d >> 4 & 1) << 20 | (d >> 3 & 1) << 18 | (d >> 2 & 1) << 17
        return seed ^ dw
    }

    /// The access addresses of the BIG's BISes, 1…Num_BIS.
    public var bisAccessAddresses: [UInt32] { numBIS == 0 ? [] : (1...Int(numBIS)).map { Self.accessAddress(seed: seedAccessAddress, bis: $0) } }
    public var controlAccessAddress: UInt32 { Self.accessAddress(seed: seedAccessAddress, bis: 0) }
    /// A BIS's CRCInit (§3.1.1): BaseCRCInit in the upper 16 bits, the BIS number below.
    public func crcInit(bis n: Int) -> UInt32 { UInt32(baseCRCInit) << 8 | UInt32(n & 0xFF) }

    func describe<S: FieldSink>(into w: inout S) {
        w.int("big_offset", Int(bigOffset)); w.int("big_offset_units", Int(bigOffsetUnits)); w.int("iso_interval", Int(isoInterval))
        w.int("num_bis", Int(numBIS)); w.int("nse", Int(nse)); w.int("bn", Int(bn)); w.int("sub_interval_us", Int(subInterval))
        w.int("pto", Int(pto)); w.int("bis_spacing_us", Int(bisSpacing)); w.int("irc", Int(irc)); w.int("max_pdu", Int(maxPDU))
        w.string("seed_access_address", Hex.fixed(UInt64(seedAccessAddress), width: 8))
        w.int("sdu_interval_us", Int(sduInterval)); w.int("max_sdu", Int(maxSDU))
        w.string("base_crc_init", Hex.fixed(UInt64(baseCRCInit), width: 4))
        w.string("channel_map", Hex.fixed(channelMap, width: 10)); w.int("phy", Int(phy))
        w.uint("bis_payload_count", bisPayloadCount); w.bool("framed", framed); w.bool("encrypted", encrypted)
        if let giv, let gskd { w.hex("giv", giv); w.hex("gskd", gskd) }
        w.beginArray("bis_access_addresses")
        for a in bisAccessAddresses { w.string("", Hex.fixed(UInt64(a), width: 8)) }
        w.endArray()
    }
}

/// AUX_SYNC_IND and AUX_CHAIN_IND on a periodic advertising train (Core 6.0 Vol 6 Part B
/// §2.3.1.7 and §2.3.1.8: PDU type 0b0111 on the train's access address, in the Common
/// Extended Advertising Payload Format of §2.3.4). The PDU as sent:
/// header, then the extended header (length, AdvMode, flags, the fields the flags name, ACAD)
/// and AdvData. Which of the two it is the air does not say: `ProtocolDecoder` hands the
/// train's PDUs over and LEAudioAir tells them apart by the chain (`kind`).
public struct LLPeriodicAdvertisingPDU: Hashable, Sendable {
    public enum Kind: Hashable, Sendable { case auxSyncInd, auxChainInd }
    public var kind: Kind
    /// PDU header's first octet (PDU Type, ChSel, TxAdd, RxAdd).
    public var header: UInt8
    public var advMode: UInt8
    /// The extended header's flags octet; nil when the extended header is empty (length 0).
    public var flags: UInt8?
    public var advA: BDAddr?
    public var targetA: BDAddr?
    public var cteInfo: UInt8?
    /// DID (bits 0-11), SID (12-15).
    public var adi: UInt16?
    public var auxPtr: LLAuxPtr?
    public var syncInfo: LLSyncInfo?
    public var txPower: Int8?
    public var acad: [UInt8] = []
    public var advData: [UInt8] = []
    public var error: DecodeError?

    public init(kind: Kind, header: UInt8 = 0x07, advMode: UInt8 = 0, flags: UInt8? = nil, acad: [UInt8] = [], advData: [UInt8] = []) {
        self.kind = kind; self.header = header; self.advMode = advMode; self.flags = flags; self.acad = acad; self.advData = advData
    }

    /// From the PDU as sent (header, length, payload).
    public init(kind: Kind, bytes b: UnsafeRawBufferPointer) {
        self.kind = kind
        header = b.first ?? 0
        advMode = 0
        guard b.count >= 3 else {
            error = DecodeError(code: .truncated, offset: b.count, message: "AUX PDU: \(b.count) octets, no extended header")
            return
        }
        let length = Int(b[1])
        let p = UnsafeRawBufferPointer(rebasing: b[2..<min(b.count, 2 + length)])
        if length > b.count - 2 { error = DecodeError(code: .truncated, offset: 2, message: "payload: length \(length), \(b.count - 2) bytes there") }
        let hlen = Int(p[0] & 0x3F)
        advMode = p[0] >> 6
        guard 1 + hlen <= p.count else {
            error = DecodeError(code: .truncated, offset: 3, message: "extended header: length \(hlen), \(p.count - 1) bytes there")
            return
        }
        let end = 1 + hlen
        var i = 1
        if hlen > 0 { flags = p[1]; i = 2 }
        let f = flags ?? 0
        func take(_ n: Int, _ name: String) -> UnsafeRawBufferPointer? {
            guard i + n <= end else {
                if error == nil { error = DecodeError(code: .truncated, offset: 2 + i, message: "\(name): \(end - i) of \(n) octets in the extended header") }
                return nil
            }
            defer { i += n }
            return UnsafeRawBufferPointer(rebasing: p[i..<i + n])
        }
        if f & 0x01 != 0 { advA = take(6, "AdvA").map { BDAddr(littleEndian: $0) } }
        if f & 0x02 != 0 { targetA = take(6, "TargetA").map { BDAddr(littleEndian: $0) } }
        if f & 0x04 != 0 { cteInfo = take(1, "CTEInfo").map { $0[0] } }
        if f & 0x08 != 0 { adi = take(2, "ADI").map { UInt16($0[0]) | UInt16($0[1]) << 8 } }
        if f & 0x10 != 0 { auxPtr = take(3, "AuxPtr").map(LLAuxPtr.init) }
        if f & 0x20 != 0 { syncInfo = take(LLSyncInfo.length, "SyncInfo").flatMap(LLSyncInfo.init) }
        if f & 0x40 != 0 { txPower = take(1, "TxPower").map { Int8(bitPattern: $0[0]) } }
        acad = Array(p[min(i, end)..<end])
        advData = Array(p[end...])
    }

    /// Header, length, extended header, AdvData.
    public func encode() -> [UInt8] {
        var x = ByteWriter(capacity: 64)
        if let flags {
            x.writeUInt8(flags)
            if let advA { x.writeAddress(advA) }
            if let targetA { x.writeAddress(targetA) }
            if let cteInfo { x.writeUInt8(cteInfo) }
            if let adi { x.writeUInt16(adi) }
            if let auxPtr { auxPtr.encode(into: &x) }
            if let syncInfo { syncInfo.encode(into: &x) }
            if let txPower { x.writeUInt8(UInt8(bitPattern: txPower)) }
            x.writeBytes(acad)
        }
        let ext = x.bytes
        let payload = [UInt8(ext.count & 0x3F) | advMode << 6] + ext + advData
        return [header, UInt8(truncatingIfNeeded: payload.count)] + payload
    }

    public var name: String { kind == .auxSyncInd ? "AUX_SYNC_IND" : "AUX_CHAIN_IND" }

    /// The AD structures of the ACAD (CSS Part A §1 format): the BIGInfo among them.
    public var bigInfo: LLBIGInfo? {
        var o = 0
        while o + 1 < acad.count {
            let n = Int(acad[o])
            guard n > 0, o + 1 + n <= acad.count else { return nil }
            if acad[o + 1] == LLBIGInfo.adType {
                return acad[(o + 2)..<(o + 1 + n)].withUnsafeBytes { LLBIGInfo($0) }
            }
            o += 1 + n
        }
        return nil
    }
}
