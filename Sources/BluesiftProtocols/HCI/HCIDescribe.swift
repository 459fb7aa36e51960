import BluesiftWire
import BluesiftCapture

extension HCIPacket {
    /// "central" / "peripheral" (HCI role values, Core 5.4 Vol 4 Part E §7.7.65.1).
    public static func roleName(_ role: UInt8) -> String {
        switch role {
        case 0: "central"
        case 1: "peripheral"
        default: "Unknown"
        }
    }

    /// Fields of the `hci` JSON object: opcode, name, then decoded parameters.
    public func describe<S: FieldSink>(into sink: inout S) {
        // An advertising report event keeps no fields of its own here (the `adv` layer
        // decodes it): its fields are a function of the subevent and `truncated`, replayed.
        if kind == .event, opcode == 0x3E, isAdvertisingReport, let s = subevent {
            withUnsafeBytes(of: (s, truncated)) { key in sink.replaying(.hciFields, key) { describeFields(into: &$0) } }
        } else {
            describeFields(into: &sink)
        }
    }

    private func describeFields<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", opcode)
        sink.string("name", name)
        if isVendorCommand { sink.int("ocf", opcode & 0x03FF) }
        if let s = subevent {
            sink.int("subevent", Int(s))
            sink.string("subevent_name", HCIEventNames.leSubeventName(s))
        }
        if let n = numPackets { sink.int("num_packets", Int(n)) }
        if let op = commandOpcode {
            sink.int("command_opcode", Int(op))
            sink.string("command_name", HCICommandNames.name(op))
        }
        if let s = status {
            sink.int("status", Int(s.rawValue))
            sink.string("status_name", s.name)
        }
        if let h = handle { sink.int("handle", Int(h)) }
        if let r = role { sink.string("role", Self.roleName(r)) }
        if let p = peer { sink.address("peer", p) }
        if let t = peerAddressType { sink.string("peer_type", t.name) }
        if let v = linkType { sink.int("link_type", Int(v)) }
        if let v = interval { sink.int("interval", Int(v)) }
        if let v = intervalMin { sink.int("interval_min", Int(v)) }
        if let v = intervalMax { sink.int("interval_max", Int(v)) }
        if let v = latency { sink.int("latency", Int(v)) }
        if let v = supervisionTimeout { sink.int("supervision_timeout", Int(v)) }
        if let v = encryption { sink.int("encryption", Int(v)) }
        if let v = keySize { sink.int("key_size", Int(v)) }
        if let v = txPHY { sink.int("tx_phy", Int(v)) }
        if let v = rxPHY { sink.int("rx_phy", Int(v)) }
        if let v = maxTxOctets { sink.int("max_tx_octets", Int(v)) }
        if let v = maxTxTime { sink.int("max_tx_time", Int(v)) }
        if let v = maxRxOctets { sink.int("max_rx_octets", Int(v)) }
        if let v = maxRxTime { sink.int("max_rx_time", Int(v)) }
        if let v = features { sink.uint("features", v) }
        if let r = reason {
            sink.int("reason", Int(r.rawValue))
            sink.string("reason_name", r.name)
        }
        if kind == .event, opcode == 0x13 { describeCompletedPackets(into: &sink) }
        if let ret = returnParameters, ret.count > 1 {
            sink.hex("return_parameters", UnsafeRawBufferPointer(rebasing: ret[1...]))
        }
        switch kind {
        case .acl:
            if let v = pbFlag { sink.int("pb", Int(v)) }
            if let v = bcFlag { sink.int("bc", Int(v)) }
        case .sco:
            if let v = pbFlag { sink.int("packet_status", Int(v)) }
        case .iso:
            if let v = pbFlag { sink.int("pb", Int(v)) }
            if let v = bcFlag { sink.int("ts", Int(v)) }
        default: break
        }
        if let v = dataLength { sink.int("length", v) }
        if truncated { sink.bool("truncated", true) }
        if !parametersDecoded, !parameters.isEmpty, !(kind == .event && opcode == 0x3E && isAdvertisingReport) {
            sink.hex("parameters", parameters)
        }
    }

    /// LE Meta subevents the `adv` layer decodes (§7.7.65.2, .11, .13).
    public var isAdvertisingReport: Bool {
        guard let s = subevent else { return false }
        return Self.isAdvertisingReport(subevent: s)
    }

    @inlinable
    public static func isAdvertisingReport(subevent s: UInt8) -> Bool { s == 0x02 || s == 0x0B || s == 0x0D }

    /// §7.7.19: the (handle, count) pairs, read by the event's view.
    private func describeCompletedPackets<S: FieldSink>(into sink: inout S) {
        guard !parameters.isEmpty else { return }
        let v = HCINumberOfCompletedPacketsEvent.View(parameters: parameters)
        sink.beginArray("completed")
        for i in 0..<v.count {
            let e = v.entry(i)
            sink.beginObject("")
            sink.int("handle", Int(e.handle))
            sink.int("count", Int(e.count))
            sink.endObject()
        }
        sink.endArray()
    }

    /// One line: "LE Meta: LE Connection Complete handle=0x0040 peer=… status=Success".
    public var summary: String {
        var b: [UInt8] = []
        writeSummary(into: &b)
        return String(decoding: b, as: UTF8.self)
    }

    /// `summary`'s bytes, appended to `out` (the text renderer's line, no String per piece).
    public func writeSummary(into out: inout [UInt8]) {
        if kind == .event && opcode == 0xFF && codeRead {
            // Vendor-specific event: the vendor's own code and the size.
            out.appendText("Vendor event")
            if let c = HCIVendorEventView(parameters: parameters).vendorCode { out.appendText(" code="); out.appendHex(UInt64(c), width: 2) }
            out.appendText(" len="); out.appendDecimal(parameters.count)
        } else {
            // Codes without a name show the code: "Unknown event 0x6e", "Unknown command 0x2099".
            let name = self.name
            if name == "Unknown" && codeRead {
                if kind == .event {
                    out.appendText("Unknown event "); out.appendHex(UInt64(opcode), width: 2)
                } else {
                    out.appendText("Unknown command "); out.appendHex(UInt64(opcode), width: 4)
                }
            } else {
                out.appendText(name)
            }
            if let sub = subevent {
                let n = HCIEventNames.leSubeventName(sub)
                out.appendText(": ")
                if n == "Unknown" { out.appendText("Unknown subevent "); out.appendHex(UInt64(sub), width: 2) } else { out.appendText(n) }
            }
            if let op = commandOpcode {
                let n = HCICommandNames.name(op)
                out.appendText(": ")
                if n == "Unknown" { out.appendText("Unknown command "); out.appendHex(UInt64(op), width: 4) } else { out.appendText(n) }
                if op >= 0xFC00 { out.appendText(" ocf="); out.appendHex(UInt64(op & 0x03FF), width: 4) } // which vendor command
            }
            if isVendorCommand { out.appendText(" ocf="); out.appendHex(UInt64(opcode & 0x03FF), width: 4) }
        }
        if let h = handle { out.appendText(" handle="); out.appendHex(UInt64(h), width: 4) }
        if let p = peer { out.appendText(" peer="); out.appendAddress(p) }
        if let r = role { out.appendText(" role="); out.appendText(Self.roleName(r)) }
        if let st = status, kind == .event { out.appendText(" status="); out.appendText(st.name) }
        if let r = reason { out.appendText(" reason="); out.appendText(r.name) }
        if let l = dataLength { out.appendText(" len="); out.appendDecimal(l) }
    }
}
