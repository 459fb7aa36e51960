import BluesiftWire

extension LLPacket {
    /// Fields of the `ll` JSON object: opcode (PDU type or control opcode), name, fields.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", opcode); sink.string("name", name)
        sink.string("access_address", Hex.fixed(UInt64(accessAddress), width: 8))
        if let ch = sniffer?.channel { sink.int("channel", Int(ch)) }
        if let rssi = sniffer?.rssi { sink.int("rssi", Int(rssi)) }
        if let ci = codingIndicator { sink.int("coding_indicator", Int(ci)) }
        if let ok = crcOK { sink.bool("crc_ok", ok) }
        if crcComputed { sink.bool("crc_computed", true) }
        if crcValidatedWrongly { sink.bool("crc_fails", true) }
        if let c = fromCentral { sink.string("from", c ? "central" : "peripheral") }
        if fromInferred { sink.bool("from_inferred", true) }
        if let a = central { sink.address("central", a) }
        if let a = peripheral { sink.address("peripheral", a) }
        if retransmission { sink.bool("retransmission", true) }
        if missedBefore { sink.bool("missed_before", true) }
        if isAdvertising { describeAdvertising(into: &sink) } else { describeData(into: &sink) }
        // As Wireshark shows it (btle.crc): the first bit sent is the most significant.
        if let crc { sink.string("crc", Hex.fixed(UInt64(LLCRC.wiresharkOrder(crc)), width: 6)) }
    }

    private func addr<S: FieldSink>(_ key: FieldKey, _ offset: Int, into sink: inout S) {
        if let a = address(at: offset) { sink.address(key, a) }
    }

    private func describeAdvertising<S: FieldSink>(into sink: inout S) {
        sink.int("pdu_type", Int(pduType ?? 0))
        sink.bool("ch_sel", chSel); sink.bool("tx_add", txAdd); sink.bool("rx_add", rxAdd)
        sink.int("length", length)
        switch pduType ?? 0xFF {
        case 0x0, 0x2, 0x4, 0x6: addr("adv_a", 0, into: &sink)
        case 0x1: addr("adv_a", 0, into: &sink); addr("target_a", 6, into: &sink)
        case 0x3: addr("scan_a", 0, into: &sink); addr("adv_a", 6, into: &sink)
        case 0x5:
            guard let c = connectInd else { break }
            sink.address("init_a", c.initA); sink.address("adv_a", c.advA)
            sink.string("aa", Hex.fixed(UInt64(c.accessAddress), width: 8))
            sink.string("crc_init", Hex.fixed(UInt64(c.crcInit), width: 6))
            sink.int("win_size", Int(c.winSize)); sink.int("win_offset", Int(c.winOffset))
            sink.int("interval", Int(c.interval)); sink.int("latency", Int(c.latency)); sink.int("timeout", Int(c.timeout))
            sink.string("channel_map", Hex.fixed(c.channelMap, width: 10))
            sink.int("hop", Int(c.hop)); sink.int("sca", Int(c.sca))
        case 0x7, 0x8:
            guard let x = extendedHeader else { break }
            sink.int("adv_mode", Int(x.advMode)); sink.string("adv_mode_name", LLExtendedHeader.advModeName(x.advMode))
            if let a = x.advA { sink.address("adv_a", a) }
            if let a = x.targetA { sink.address("target_a", a) }
            if let c = x.cteInfo { sink.int("cte_info", Int(c)) }
            if let adi = x.adi { sink.int("did", Int(adi & 0x0FFF)); sink.int("sid", Int(adi >> 12)) }
            if let p = x.auxPtr {
                sink.object("aux_ptr") { s in
                    s.int("channel", Int(p & 0x3F)); s.int("ca", Int(p >> 6 & 1))
                    s.int("offset_units", Int(p >> 7 & 1)); s.int("offset", Int(p >> 8 & 0x1FFF))
                    s.int("phy", Int(p >> 21 & 0x7))
                }
            }
            if let s = x.syncInfo { sink.hex("sync_info", s) }
            if let t = x.txPower { sink.int("tx_power", Int(t)) }
            if !x.acad.isEmpty { sink.hex("acad", x.acad) }
        default:
            sink.hex("payload", payload)
        }
    }

    private func describeData<S: FieldSink>(into sink: inout S) {
        sink.int("llid", Int(llid ?? 0))
        sink.bool("nesn", nesn); sink.bool("sn", sn); sink.bool("md", md); sink.bool("cp", cp)
        sink.int("length", length)
        if let cteInfo { sink.int("cte_info", Int(cteInfo)) }
        if encrypted { sink.bool("encrypted", true); return }
        if decrypted { sink.bool("decrypted", true) }
        if let p = controlData { describeControl(p, into: &sink) }
    }

    private func describeControl<S: FieldSink>(_ p: UnsafeRawBufferPointer, into sink: inout S) {
        var r = ByteReader(p)
        func u8() -> Int { Int((try? r.readUInt8()) ?? 0) }
        func u16() -> Int { Int((try? r.readUInt16()) ?? 0) }
        func hex(_ key: FieldKey, _ n: Int, into sink: inout S) { if let b = try? r.readBytes(n) { sink.hex(key, b) } }
        func error(_ sink: inout S) {
            let e = UInt8(u8()); sink.int("error_code", Int(e)); sink.string("error_name", LLNames.errorName(e))
        }
        let op = controlOpcode!.rawValue
        guard p.count >= Self.controlParameterLength(op) ?? p.count else { sink.hex("params", p); return }
        switch op {
        case 0x00:
            sink.int("win_size", u8()); sink.int("win_offset", u16()); sink.int("interval", u16())
            sink.int("latency", u16()); sink.int("timeout", u16()); sink.int("instant", u16())
        case 0x01:
            if let m = try? r.readUInt(size: 5, endianness: .little) { sink.string("channel_map", Hex.fixed(m, width: 10)) }
            sink.int("instant", u16())
        case 0x02, 0x0D: error(&sink)
        case 0x11:
            let o = UInt8(u8()); sink.int("reject_opcode", Int(o)); sink.string("reject_opcode_name", LLControlOpcode(rawValue: o).name)
            error(&sink)
        case 0x03:
            hex("rand", 8, into: &sink); sink.int("ediv", u16()); hex("skd_c", 8, into: &sink); hex("iv_c", 4, into: &sink)
        case 0x04: hex("skd_p", 8, into: &sink); hex("iv_p", 4, into: &sink)
        case 0x07:
            let t = UInt8(u8()); sink.int("unknown_type", Int(t)); sink.string("unknown_type_name", LLControlOpcode(rawValue: t).name)
        case 0x08, 0x09, 0x0E:
            if let f = try? r.readUInt64() { sink.string("features", Hex.fixed(f, width: 16)) }
        case 0x0C:
            let v = UInt8(u8()); sink.int("version", Int(v)); sink.string("version_name", LLNames.versionName(v))
            let c = UInt16(u16()); sink.int("company_id", Int(c)); sink.optionalString("company_name", AssignedNumbers.companyName(c))
            sink.int("subversion", u16())
        case 0x14, 0x15:
            sink.int("max_rx_octets", u16()); sink.int("max_rx_time", u16())
            sink.int("max_tx_octets", u16()); sink.int("max_tx_time", u16())
        case 0x16, 0x17: sink.int("tx_phys", u8()); sink.int("rx_phys", u8())
        case 0x18: sink.int("phy_c_to_p", u8()); sink.int("phy_p_to_c", u8()); sink.int("instant", u16())
        case 0x0F, 0x10:
            sink.int("interval_min", u16()); sink.int("interval_max", u16())
            sink.int("latency", u16()); sink.int("timeout", u16())
        case 0x1D, 0x1E: sink.int("sca", u8())
        case 0x22: sink.int("cig_id", u8()); sink.int("cis_id", u8()); error(&sink)
        default:
            if !p.isEmpty { sink.hex("params", p) }
        }
    }

    /// CtrData length for the opcodes decoded above (§2.4.2.*).
    static func controlParameterLength(_ op: UInt8) -> Int? {
        switch op {
        case 0x00: 11
        case 0x01: 7
        case 0x02, 0x0D, 0x07, 0x1D, 0x1E: 1
        case 0x11: 2
        case 0x03: 22
        case 0x04: 12
        case 0x08, 0x09, 0x0E: 8
        case 0x0C: 5
        case 0x14, 0x15: 8
        case 0x16, 0x17: 2
        case 0x18: 4
        case 0x0F, 0x10: 23
        case 0x22: 3
        default: nil
        }
    }

    /// Hundredths of a millisecond as text: 3000 → "30 ms", 6750 → "67.5 ms", 125 → "1.25 ms".
    static func milliseconds(hundredths v: Int) -> String {
        let f = v % 100
        guard f != 0 else { return "\(v / 100) ms" }
        return "\(v / 100)." + (f % 10 == 0 ? "\(f / 10)" : f < 10 ? "0\(f)" : "\(f)") + " ms"
    }

    /// e.g. "LL ADV_IND 7d:43:82:42:23:16 rssi=-40", "LL LL_VERSION_IND", "LL L2CAP Start len=27"
    public var summary: String {
        var s = "LL " + name
        if isAdvertising {
            if let c = connectInd {
                s += " " + c.initA.description + " → " + c.advA.description
                // Interval in 1.25 ms units, timeout in 10 ms units (Vol 6 Part B §2.3.3.1), as tshark says them.
                s += " interval=\(Self.milliseconds(hundredths: Int(c.interval) * 125)) timeout=\(Int(c.timeout) * 10) ms"
            } else if pduType == 0x3 {
                if let a = address(at: 0), let b = address(at: 6) { s += " " + a.description + " → " + b.description }
            } else if let r = advertising?.firstReport, let a = r.address {
                s += " " + a.description
                if let n = r.localName { s += " name=" + n }
            }
        } else if llid == 1 || llid == 2 || encrypted {
            if length > 0 { s += " len=\(length)" }
        }
        if crcOK == false { s += " CRC bad" }
        if crcAwaitsLink { s += " [CRC not checked: no CONNECT_IND or second packet gives its CRCInit]" }
        if retransmission { s += " (retransmission)" }
        if missedBefore { s += " [packets missed before this one]" }
        if let error, crcOK != false { s += " [" + error.message + "]" }
        return s
    }
}
