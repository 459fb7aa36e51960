/// Over-the-air sniffer headers, decoded into `SnifferInfo` and stripped so that the record
/// bytes are in DLT 251 layout: access address, PDU header, payload, CRC.
enum Sniffers {
    static let advertisingAA: UInt32 = 0x8E89_BED6

    @inline(__always) static func le16(_ d: UnsafeRawBufferPointer, _ o: Int) -> UInt16 { UInt16(d[o]) | UInt16(d[o + 1]) << 8 }
    @inline(__always) static func le32(_ d: UnsafeRawBufferPointer, _ o: Int) -> UInt32 {
        UInt32(le16(d, o)) | UInt32(le16(d, o + 2)) << 16
    }

    /// RF channel (0…39, by frequency) to link-layer channel index (Core 5.4 Vol 6 Part B §1.4.1).
    static func channelIndex(rf: Int) -> UInt8? {
        switch rf {
        case 0: 37
        case 12: 38
        case 39: 39
        case 1...11: UInt8(rf - 1)
        case 13...38: UInt8(rf - 2)
        default: nil
        }
    }

    /// LINKTYPE 256 (BLUETOOTH_LE_LL_WITH_PHDR): rf_channel, signal, noise, AA offenses,
    /// reference AA (LE32), flags (LE16). Flags per Wireshark packet-btle_rf.c: 0x0002 signal
    /// valid, 0x0008 decrypted, 0x0380 PDU type (2 data central→peripheral, 3 data
    /// peripheral→central, 4 connected isochronous central→peripheral, 5 connected isochronous
    /// peripheral→central, 6 broadcast isochronous), 0x0400 CRC checked, 0x0800 CRC valid,
    /// 0xC000 PHY.
    static func btleRF(_ d: UnsafeRawBufferPointer) -> (SnifferInfo, UnsafeRawBufferPointer)? {
        guard d.count >= 10 else { return nil }
        let flags = le16(d, 8)
        var info = SnifferInfo(channel: channelIndex(rf: Int(d[0])), hasCRC: true)
        if flags & 0x0002 != 0 { info.rssi = Int8(bitPattern: d[1]) }
        if flags & 0x0400 != 0 { info.crcOK = flags & 0x0800 != 0 }
        switch (flags >> 7) & 7 {
        case 2: info.fromCentral = true
        case 3: info.fromCentral = false
        case 4: info.fromCentral = true; info.isochronous = true
        case 5: info.fromCentral = false; info.isochronous = true
        case 6: info.isochronous = true
        default: break
        }
        if flags & 0x0008 != 0 { info.encrypted = false }
        info.phy = UInt8((flags >> 14) & 3)
        return (info, d.dropping(10))
    }

    /// LINKTYPE 272, nRF Sniffer for Bluetooth LE (Wireshark packet-nordic_ble.c).
    /// Legacy (0xBEEF marker): fixed 17-byte header. Versions 1…3: board id, lengths,
    /// protocol version, packet counter, packet id, then the event header whose first byte is
    /// its own length: flags (bit 0 CRC OK; data: 1 central→peripheral, 2 encrypted, 3 MIC OK;
    /// advertising on a secondary channel: 1-2 the auxiliary PDU type; 4-6 PHY), channel, RSSI
    /// (negated), event counter, time. No isochronous PDU type exists. The link-layer
    /// packet (with access address and CRC) follows it in every version seen.
    static func nordic(_ d: UnsafeRawBufferPointer) -> (SnifferInfo, UnsafeRawBufferPointer)? {
        let flagsAt = 8, start: Int, isData: Bool
        if d.count >= 2, d[0] == 0xBE, d[1] == 0xEF {
            start = 17
            guard d.count >= start + 4 else { return nil }
            isData = le32(d, start) != advertisingAA
        } else {
            guard d.count >= 8 else { return nil }
            let version = d[3]
            start = 7 + Int(d[7])
            guard d[7] >= 10, d.count >= start + 4 else { return nil }
            isData = version >= 3 ? d[6] == 0x06 : le32(d, start) != advertisingAA
        }
        let flags = d[flagsAt]
        var info = SnifferInfo(
            channel: d[flagsAt + 1], rssi: Int8(truncatingIfNeeded: -Int(d[flagsAt + 2])),
            crcOK: flags & 1 != 0, phy: (flags >> 4) & 7, hasCRC: true)
        if isData {
            info.fromCentral = flags & 2 != 0
            let encrypted = flags & 4 != 0, micOK = flags & 8 != 0
            info.encrypted = encrypted && !micOK
        } else if d[flagsAt + 1] < 37 {
            // Secondary channel: bits 1-2 say which auxiliary PDU (AUX_SYNC_IND and
            // AUX_CHAIN_IND look alike on the air).
            info.auxType = (flags >> 1) & 3
        }
        return (info, d.dropping(start))
    }

    /// LINKTYPE 192, PPI: version, flags, length (LE16), inner DLT (LE32), then fields
    /// (type LE16, length LE16, data). The PPI-BTLE field (type 30006, Ubertooth) carries the
    /// channel as a frequency in MHz and RSSI; the inner packet is then a BTLE link-layer packet.
    static func ppi(_ d: UnsafeRawBufferPointer) -> (SnifferInfo, UnsafeRawBufferPointer)? {
        guard d.count >= 8 else { return nil }
        let aligned = d[1] & 1 != 0
        let headerLen = Int(le16(d, 2)), inner = le32(d, 4)
        guard headerLen >= 8, headerLen <= d.count else { return nil }
        let body = d.dropping(headerLen)
        if inner == LinkType.leLL { return (SnifferInfo(hasCRC: true), body) }
        if inner == LinkType.leLLWithPHDR { return btleRF(body) }
        var o = 8
        while o + 4 <= headerLen {
            let type = le16(d, o), len = Int(le16(d, o + 2))
            guard o + 4 + len <= headerLen else { return nil }
            if type == 30006, len >= 12 {
                let f = o + 4
                let mhz = Int(le16(d, f + 1))
                let rf = (mhz - 2402) / 2
                let channel = mhz >= 2402 && mhz <= 2480 && mhz % 2 == 0 ? channelIndex(rf: rf) : nil
                return (SnifferInfo(channel: channel, rssi: Int8(bitPattern: d[f + 10]), hasCRC: true), body)
            }
            o += 4 + len
            if aligned { o = (o + 3) & ~3 }
        }
        return nil
    }
}
