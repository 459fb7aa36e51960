import BluesiftWire

/// AV/C command type and response code (AV/C Digital Interface Command Set 4.0 §7.3.1, §7.3.2;
/// AVRCP 1.6 §6.3). Open.
public struct AVCType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0x0: "Control"
        case 0x1: "Status"
        case 0x2: "Specific Inquiry"
        case 0x3: "Notify"
        case 0x4: "General Inquiry"
        case 0x8: "Not Implemented"
        case 0x9: "Accepted"
        case 0xA: "Rejected"
        case 0xB: "In Transition"
        case 0xC: "Stable"
        case 0xD: "Changed"
        case 0xF: "Interim"
        default: "Unknown"
        }
    }
}

/// AVRCP PDU ids of vendor-dependent and browsing commands (AVRCP 1.6 §6.?, Table 4.5). Open.
public struct AVRCPPDUID: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0x10: "GetCapabilities"
        case 0x11: "ListPlayerApplicationSettingAttributes"
        case 0x12: "ListPlayerApplicationSettingValues"
        case 0x13: "GetCurrentPlayerApplicationSettingValue"
        case 0x14: "SetPlayerApplicationSettingValue"
        case 0x15: "GetPlayerApplicationSettingAttributeText"
        case 0x16: "GetPlayerApplicationSettingValueText"
        case 0x17: "InformDisplayableCharacterSet"
        case 0x18: "InformBatteryStatusOfCT"
        case 0x20: "GetElementAttributes"
        case 0x30: "GetPlayStatus"
        case 0x31: "RegisterNotification"
        case 0x40: "RequestContinuingResponse"
        case 0x41: "AbortContinuingResponse"
        case 0x50: "SetAbsoluteVolume"
        case 0x60: "SetAddressedPlayer"
        case 0x70: "SetBrowsedPlayer"
        case 0x71: "GetFolderItems"
        case 0x72: "ChangePath"
        case 0x73: "GetItemAttributes"
        case 0x74: "PlayItem"
        case 0x75: "GetTotalNumberOfItems"
        case 0x80: "Search"
        case 0x90: "AddToNowPlaying"
        case 0xA0: "General Reject"
        default: "Unknown"
        }
    }
}

/// AVRCP notification events (AVRCP 1.6 §6.7.2, Table 6.?). Open.
public struct AVRCPEvent: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0x01: "PlaybackStatusChanged"
        case 0x02: "TrackChanged"
        case 0x03: "TrackReachedEnd"
        case 0x04: "TrackReachedStart"
        case 0x05: "PlaybackPosChanged"
        case 0x06: "BattStatusChanged"
        case 0x07: "SystemStatusChanged"
        case 0x08: "PlayerApplicationSettingChanged"
        case 0x09: "NowPlayingContentChanged"
        case 0x0A: "AvailablePlayersChanged"
        case 0x0B: "AddressedPlayerChanged"
        case 0x0C: "UIDsChanged"
        case 0x0D: "VolumeChanged"
        default: "Unknown"
        }
    }
}

/// One AVCTP message (AVCTP 1.4 §6.1) carrying AVRCP: an AV/C frame on the control channel
/// (AVRCP 1.6 §6.3: pass-through, unit/subunit info, vendor dependent) or a browsing PDU on
/// the browsing channel (§6.? browsing). Borrows its bytes.
public struct AVCTPPDU: FieldDescribable {
    public var transaction: UInt8 = 0
    public var packetType: UInt8 = 0
    public var isResponse = false
    public var invalidPID = false
    public var pid: UInt16?
    public var browsing: Bool
    /// AV/C (control channel).
    public var ctype: AVCType?
    public var subunitType: UInt8?
    public var opcode: UInt8?
    /// Pass-through: operation id and released flag.
    public var operationID: UInt8?
    public var released = false
    /// Vendor dependent / browsing.
    public var companyID: UInt32?
    public var pduID: AVRCPPDUID?
    /// Vendor dependent: AVRCP's own fragmentation (AVRCP 1.6 §6.5.1: 0 single, 1 start,
    /// 2 continue, 3 end), distinct from AVCTP's packet type.
    public var avrcpPacketType: UInt8 = 0
    public var parameters = UnsafeRawBufferPointer(start: nil, count: 0)
    public var error: DecodeError?
    /// On an end packet (AVCTP 1.4 §6.1.2): the number of packets the whole message came in,
    /// and the frame of its start packet.
    public var reassembled: Int?
    public var startFrame: Int?
    /// `reassembled` counts AVRCP fragments (§6.5.1), each its own AVCTP message.
    public var fragments = false

    public init(bytes: UnsafeRawBufferPointer, browsing: Bool) {
        self.browsing = browsing
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            let h = try r.readUInt8("header")
            transaction = h >> 4; packetType = (h >> 2) & 3; isResponse = h & 2 != 0; invalidPID = h & 1 != 0
            if packetType == 1 { _ = try r.readUInt8("number of packets") }
            guard packetType <= 1 else { parameters = r.readRemaining(); return }
            pid = try r.readUInt16(.big, "PID")
            guard pid == 0x110E || pid == 0x110C, !invalidPID else { parameters = r.readRemaining(); return }
            if browsing {
                pduID = AVRCPPDUID(rawValue: try r.readUInt8("PDU ID"))
                let n = Int(try r.readUInt16(.big, "parameter length"))
                parameters = try r.readBytes(min(n, r.readableBytes), "parameters")
                return
            }
            ctype = AVCType(rawValue: try r.readUInt8("ctype") & 0x0F)
            subunitType = try r.readUInt8("subunit") >> 3
            let op = try r.readUInt8("opcode")
            opcode = op
            switch op {
            case 0x7C: // PASS THROUGH (AV/C Panel Subunit §9.4)
                let b = try r.readUInt8("operation id")
                operationID = b & 0x7F; released = b & 0x80 != 0
                parameters = r.readRemaining()
            case 0x00: // VENDOR-DEPENDENT (AVRCP §6.3.1)
                companyID = try r.readUInt24(.big, "company id")
                guard companyID == 0x001958 else { parameters = r.readRemaining(); return }
                pduID = AVRCPPDUID(rawValue: try r.readUInt8("PDU ID"))
                avrcpPacketType = try r.readUInt8("packet type") & 0x03
                let n = Int(try r.readUInt16(.big, "parameter length"))
                parameters = try r.readBytes(min(n, r.readableBytes), "parameters")
            default:
                parameters = r.readRemaining()
            }
        } catch {
            self.error = error.inLayer("avrcp")
        }
    }

    /// Encodes a single-packet AVCTP message with its AV/C frame (AVCTP 1.4 §6.1.1):
    /// symmetric with `init(bytes:)` on the control channel.
    public static func encode(transaction: UInt8, response: Bool, ctype: UInt8, subunit: UInt8, opcode: UInt8, operands: [UInt8]) -> [UInt8] {
        [transaction << 4 | (response ? 2 : 0), 0x11, 0x0E, ctype & 0x0F, subunit, opcode] + operands
    }

    /// Pass-through operation ids (AV/C Panel Subunit Table 9.21).
    public static func operationName(_ op: UInt8) -> String {
        switch op {
        case 0x40: "POWER"
        case 0x41: "VOLUME UP"
        case 0x42: "VOLUME DOWN"
        case 0x43: "MUTE"
        case 0x44: "PLAY"
        case 0x45: "STOP"
        case 0x46: "PAUSE"
        case 0x47: "RECORD"
        case 0x48: "REWIND"
        case 0x49: "FAST FORWARD"
        case 0x4A: "EJECT"
        case 0x4B: "FORWARD"
        case 0x4C: "BACKWARD"
        case 0x7E: "VENDOR UNIQUE"
        default: "Unknown"
        }
    }

    public static func opcodeName(_ op: UInt8) -> String {
        switch op {
        case 0x00: "Vendor Dependent"
        case 0x30: "Unit Info"
        case 0x31: "Subunit Info"
        case 0x7C: "Pass Through"
        default: "Unknown"
        }
    }

    /// Media attribute ids (AVRCP 1.6 §26, Appendix E).
    public static func attributeName(_ id: UInt32) -> String {
        switch id {
        case 1: "title"
        case 2: "artist"
        case 3: "album"
        case 4: "track_number"
        case 5: "total_tracks"
        case 6: "genre"
        case 7: "playing_time"
        case 8: "cover_art"
        default: "attribute_\(id)"
        }
    }

    /// RegisterNotification's event (command first byte; interim/changed first byte).
    public var event: AVRCPEvent? {
        guard pduID?.rawValue == 0x31, let b = parameters.first else { return nil }
        return AVRCPEvent(rawValue: b)
    }

    /// GetElementAttributes response (AVRCP 1.6 §6.6.1): (attribute, text) pairs.
    public var elementAttributes: [(UInt32, String)] {
        guard pduID?.rawValue == 0x20, isResponse, let n = parameters.first else { return [] }
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: parameters[1...]))
        var out: [(UInt32, String)] = []
        for _ in 0..<n {
            guard let id = try? r.readUInt32(.big), (try? r.readUInt16(.big)) != nil,
                let len = try? r.readUInt16(.big), let v = try? r.readBytes(Int(len))
            else { break }
            out.append((id, String(decoding: v, as: UTF8.self)))
        }
        return out
    }

    public var name: String {
        if let p = pduID { return p.name }
        if let op = operationID { return Self.operationName(op) }
        if let o = opcode { return Self.opcodeName(o) }
        return "AVCTP"
    }

    /// "AVRCP Notify RegisterNotification PlaybackStatusChanged", "AVRCP Control PLAY pressed".
    public var summary: String {
        var s = browsing ? "AVRCP Browsing " : "AVRCP "
        if let c = ctype { s += c.name + " " }
        s += name
        if operationID != nil { s += released ? " released" : " pressed" }
        if let e = event { s += " " + e.name }
        for (id, v) in elementAttributes where id <= 3 { s += " " + Self.attributeName(id) + "=\"" + v + "\"" }
        if pid != nil, pid != 0x110E, pid != 0x110C { s += " PID=" + Hex.fixed(UInt64(pid!), width: 4) }
        if packetType != 0 { s += " (" + AVDTPSignal.packetTypeNames[Int(packetType)] + " packet)" }
        if avrcpPacketType != 0 { s += " (" + AVDTPSignal.packetTypeNames[Int(avrcpPacketType)] + " fragment)" }
        if let n = reassembled, let st = startFrame { s += " (\(n) " + (fragments ? "fragments" : "packets") + " from #\(st))" }
        return s + " tid=\(transaction)"
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        if let p = pduID { sink.int("opcode", Int(p.rawValue)); sink.string("name", p.name) } else if let o = opcode { sink.int("opcode", Int(o)); sink.string("name", name) }
        sink.int("transaction", Int(transaction))
        sink.bool("response", isResponse)
        if packetType != 0 || (reassembled != nil && !fragments) { sink.string("packet_type", AVDTPSignal.packetTypeNames[reassembled == nil ? Int(packetType) : 3]) }
        if avrcpPacketType != 0 { sink.string("avrcp_packet_type", AVDTPSignal.packetTypeNames[Int(avrcpPacketType)]) }
        if let n = reassembled, let st = startFrame {
            sink.int(fragments ? "reassembled_fragments" : "reassembled_packets", n); sink.int("start_frame", st)
        }
        if let p = pid { sink.int("pid", Int(p)) }
        if invalidPID { sink.bool("invalid_pid", true) }
        if browsing { sink.bool("browsing", true) }
        if let c = ctype { sink.int("ctype", Int(c.rawValue)); sink.string("ctype_name", c.name) }
        if let s = subunitType { sink.int("subunit_type", Int(s)) }
        if let o = opcode, pduID != nil { sink.int("avc_opcode", Int(o)) }
        if let op = operationID { sink.int("operation_id", Int(op)); sink.string("operation", Self.operationName(op)); sink.bool("released", released) }
        if let c = companyID { sink.uint("company_id", UInt64(c)) }
        if let e = event { sink.int("event_id", Int(e.rawValue)); sink.string("event", e.name) }
        let attrs = elementAttributes
        if !attrs.isEmpty {
            sink.beginObject("attributes")
            for (id, v) in attrs { sink.string(.dynamic(Self.attributeName(id)), v) }
            sink.endObject()
        }
        if !parameters.isEmpty { sink.hex("parameters", parameters) }
    }
}
