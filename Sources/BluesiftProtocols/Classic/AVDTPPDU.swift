import BluesiftWire

/// AVDTP signal identifier (AVDTP 1.3 §8.5, Table 8.? "Signal identifiers"). Open.
public struct AVDTPSignalID: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let discover = AVDTPSignalID(rawValue: 0x01)
    public static let getCapabilities = AVDTPSignalID(rawValue: 0x02)
    public static let setConfiguration = AVDTPSignalID(rawValue: 0x03)
    public static let open = AVDTPSignalID(rawValue: 0x06)
    public static let start = AVDTPSignalID(rawValue: 0x07)
    public static let getAllCapabilities = AVDTPSignalID(rawValue: 0x0C)
    public var name: String {
        switch rawValue {
        case 0x01: "Discover"
        case 0x02: "Get Capabilities"
        case 0x03: "Set Configuration"
        case 0x04: "Get Configuration"
        case 0x05: "Reconfigure"
        case 0x06: "Open"
        case 0x07: "Start"
        case 0x08: "Close"
        case 0x09: "Suspend"
        case 0x0A: "Abort"
        case 0x0B: "Security Control"
        case 0x0C: "Get All Capabilities"
        case 0x0D: "Delay Report"
        default: "Unknown"
        }
    }
}

/// AVDTP message type (AVDTP 1.3 §8.4.3).
public struct AVDTPMessageType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let command = AVDTPMessageType(rawValue: 0)
    public static let generalReject = AVDTPMessageType(rawValue: 1)
    public static let accept = AVDTPMessageType(rawValue: 2)
    public static let reject = AVDTPMessageType(rawValue: 3)
    public var name: String {
        switch rawValue {
        case 0: "Command"
        case 1: "General Reject"
        case 2: "Response Accept"
        default: "Response Reject"
        }
    }
}

/// AVDTP and A2DP error codes (AVDTP 1.3 §8.20.6.2, A2DP 1.3 §5.1.3).
public struct AVDTPError: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0x01: "BAD_HEADER_FORMAT"
        case 0x11: "BAD_LENGTH"
        case 0x12: "BAD_ACP_SEID"
        case 0x13: "SEP_IN_USE"
        case 0x14: "SEP_NOT_IN_USE"
        case 0x17: "BAD_SERV_CATEGORY"
        case 0x18: "BAD_PAYLOAD_FORMAT"
        case 0x19: "NOT_SUPPORTED_COMMAND"
        case 0x1A: "INVALID_CAPABILITIES"
        case 0x22: "BAD_RECOVERY_TYPE"
        case 0x23: "BAD_MEDIA_TRANSPORT_FORMAT"
        case 0x25: "BAD_RECOVERY_FORMAT"
        case 0x26: "BAD_ROHC_FORMAT"
        case 0x27: "BAD_CP_FORMAT"
        case 0x28: "BAD_MULTIPLEXING_FORMAT"
        case 0x29: "UNSUPPORTED_CONFIGURATION"
        case 0x31: "BAD_STATE"
        case 0xC1: "INVALID_CODEC_TYPE"
        case 0xC2: "NOT_SUPPORTED_CODEC_TYPE"
        case 0xC3: "INVALID_SAMPLING_FREQUENCY"
        case 0xC4: "NOT_SUPPORTED_SAMPLING_FREQUENCY"
        case 0xC5: "INVALID_CHANNEL_MODE"
        case 0xC6: "NOT_SUPPORTED_CHANNEL_MODE"
        case 0xC7: "INVALID_SUBBANDS"
        case 0xC8: "NOT_SUPPORTED_SUBBANDS"
        case 0xC9: "INVALID_ALLOCATION_METHOD"
        case 0xCA: "NOT_SUPPORTED_ALLOCATION_METHOD"
        case 0xCB: "INVALID_MINIMUM_BITPOOL_VALUE"
        case 0xCC: "NOT_SUPPORTED_MINIMUM_BITPOOL_VALUE"
        case 0xCD: "INVALID_MAXIMUM_BITPOOL_VALUE"
        case 0xCE: "NOT_SUPPORTED_MAXIMUM_BITPOOL_VALUE"
        default: "Unknown"
        }
    }
}

/// One AVDTP signalling message (AVDTP 1.3 §8.4-§8.20). Borrows its bytes. Start and
/// continue packets of a fragmented message (§8.4.2) show their header; the decoder gives
/// the end packet the whole message (`reassembled`, `startFrame`).
public struct AVDTPSignal: FieldDescribable {
    public var transaction: UInt8 = 0
    /// 0 single, 1 start, 2 continue, 3 end.
    public var packetType: UInt8 = 0
    public var messageType = AVDTPMessageType(rawValue: 0)
    public var signalID: AVDTPSignalID?
    public var numberOfPackets: Int?
    public var parameters = UnsafeRawBufferPointer(start: nil, count: 0)
    public var error: DecodeError?
    /// On an end packet: the number of packets the whole message came in, and the frame of
    /// its start packet.
    public var reassembled: Int?
    public var startFrame: Int?

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            let h = try r.readUInt8("header")
            transaction = h >> 4; packetType = (h >> 2) & 3; messageType = AVDTPMessageType(rawValue: h & 3)
            if packetType == 1 { numberOfPackets = Int(try r.readUInt8("number of signal packets")) }
            if packetType <= 1 { signalID = AVDTPSignalID(rawValue: try r.readUInt8("signal identifier") & 0x3F) }
            parameters = r.readRemaining()
        } catch {
            self.error = error.inLayer("avdtp")
        }
    }

    /// Encodes a single-packet signal (§8.4.2): symmetric with `init(bytes:)`.
    public static func encode(transaction: UInt8, messageType: AVDTPMessageType, signal: AVDTPSignalID, parameters: [UInt8]) -> [UInt8] {
        [transaction << 4 | messageType.rawValue & 3, signal.rawValue & 0x3F] + parameters
    }

    static let packetTypeNames = ["single", "start", "continue", "end"]

    /// Commands addressing one SEP carry its ACP SEID first (§8.6-§8.19).
    var acpSEID: UInt8? {
        guard messageType == .command, let s = signalID?.rawValue, parameters.count >= 1,
            [0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0C, 0x0D].contains(s)
        else { return nil }
        return parameters[0] >> 2
    }

    /// The capabilities of Get (All) Capabilities responses, Set Configuration / Reconfigure
    /// commands and Get Configuration responses.
    public var capabilities: UnsafeRawBufferPointer? {
        guard packetType == 0, let s = signalID?.rawValue else { return nil }
        switch (s, messageType.rawValue) {
        case (0x02, 2), (0x0C, 2), (0x04, 2): return parameters
        case (0x03, 0) where parameters.count >= 2: return UnsafeRawBufferPointer(rebasing: parameters[2...])
        case (0x05, 0) where parameters.count >= 1: return UnsafeRawBufferPointer(rebasing: parameters[1...])
        default: return nil
        }
    }

    /// Rejects: error code (Set Configuration/Reconfigure put a category first, §8.9.3).
    public var errorCode: AVDTPError? {
        guard messageType == .reject, let p = parameters.last else { return nil }
        return AVDTPError(rawValue: p)
    }

    /// The media codec of `capabilities`, when present.
    public var codec: A2DPCodec? {
        guard let caps = capabilities else { return nil }
        var result: A2DPCodec?
        AVDTPCapability.forEach(caps) { cat, data in if cat == 7 { result = A2DPCodec(data) } }
        return result
    }

    public var name: String { signalID?.name ?? "Fragment" }

    /// "AVDTP Set Configuration Command tid=4 ACP SEID 1 SBC 44100 Hz joint stereo bitpool 2-53".
    public var summary: String {
        var s = "AVDTP " + name + " " + messageType.name + " tid=\(transaction)"
        if packetType != 0 { s += " (" + Self.packetTypeNames[Int(packetType)] + " packet)" }
        if let n = reassembled, let st = startFrame { s += " (\(n) packets from #\(st))" }
        if let a = acpSEID { s += " ACP SEID \(a)" }
        if signalID == .discover, messageType == .accept {
            AVDTPCapability.forEachSEP(parameters) { seid, inUse, media, sink in
                s += " [SEID \(seid) \(media == 0 ? "Audio" : media == 1 ? "Video" : "Multimedia") \(sink ? "Sink" : "Source")\(inUse ? " in use" : "")]"
            }
        }
        if let c = codec { s += " " + c.summary }
        if let e = errorCode { s += " " + e.name }
        return s
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        if let id = signalID { sink.int("opcode", Int(id.rawValue)); sink.string("name", id.name) }
        sink.int("transaction", Int(transaction))
        sink.string("packet_type", Self.packetTypeNames[reassembled == nil ? Int(packetType) : 3])
        if let n = reassembled, let st = startFrame { sink.int("reassembled_packets", n); sink.int("start_frame", st) }
        sink.int("message_type", Int(messageType.rawValue)); sink.string("message_type_name", messageType.name)
        if let n = numberOfPackets { sink.int("number_of_packets", n) }
        if let a = acpSEID { sink.int("acp_seid", Int(a)) }
        if signalID == .setConfiguration, messageType == .command, parameters.count >= 2 { sink.int("int_seid", Int(parameters[1] >> 2)) }
        if signalID == .discover, messageType == .accept {
            sink.beginArray("seps")
            AVDTPCapability.forEachSEP(parameters) { seid, inUse, media, isSink in
                sink.beginObject("")
                sink.int("seid", Int(seid)); sink.bool("in_use", inUse)
                sink.int("media_type", Int(media)); sink.string("sep_type", isSink ? "sink" : "source")
                sink.endObject()
            }
            sink.endArray()
        }
        if let caps = capabilities {
            sink.beginArray("capabilities")
            AVDTPCapability.forEach(caps) { cat, data in
                sink.beginObject("")
                sink.int("category", Int(cat)); sink.string("name", AVDTPCapability.name(cat))
                if cat == 7, let c = A2DPCodec(data) { c.describe(into: &sink) } else if !data.isEmpty { sink.hex("data", data) }
                sink.endObject()
            }
            sink.endArray()
        }
        if let e = errorCode { sink.int("error_code", Int(e.rawValue)); sink.string("error_name", e.name) }
        if capabilities == nil, signalID != .discover, messageType != .reject, packetType == 0, !parameters.isEmpty, acpSEID == nil {
            sink.hex("parameters", parameters)
        }
    }
}

/// Service capabilities (AVDTP 1.3 §8.21): category, length, data.
public enum AVDTPCapability {
    public static func name(_ c: UInt8) -> String {
        switch c {
        case 1: "Media Transport"
        case 2: "Reporting"
        case 3: "Recovery"
        case 4: "Content Protection"
        case 5: "Header Compression"
        case 6: "Multiplexing"
        case 7: "Media Codec"
        case 8: "Delay Reporting"
        default: "Unknown"
        }
    }

    static func forEach(_ caps: UnsafeRawBufferPointer, _ body: (UInt8, UnsafeRawBufferPointer) -> Void) {
        var i = 0
        while i + 2 <= caps.count {
            let cat = caps[i], len = Int(caps[i + 1])
            let end = min(i + 2 + len, caps.count)
            body(cat, UnsafeRawBufferPointer(rebasing: caps[(i + 2)..<end]))
            i = end
        }
    }

    /// Discover response (§8.6.2): two octets per stream end-point.
    static func forEachSEP(_ p: UnsafeRawBufferPointer, _ body: (UInt8, Bool, UInt8, Bool) -> Void) {
        var i = 0
        while i + 2 <= p.count {
            body(p[i] >> 2, p[i] & 0x02 != 0, p[i + 1] >> 4, p[i + 1] & 0x08 != 0)
            i += 2
        }
    }
}

/// A media codec capability (A2DP 1.3 §4.3-§4.7 and vendor codecs §4.7.2): SBC, MPEG-1,2,
/// MPEG-2,4 AAC, aptX, aptX HD, LDAC, or other vendor codecs by vendor and codec id.
public struct A2DPCodec: Sendable, Hashable {
    public var mediaType: UInt8
    public var codecType: UInt8
    public var vendorID: UInt32?
    public var vendorCodecID: UInt16?
    /// The codec specific information elements after the codec type (and vendor ids).
    public var info: [UInt8]

    public init?(_ d: UnsafeRawBufferPointer) {
        guard d.count >= 2 else { return nil }
        mediaType = d[0] >> 4; codecType = d[1]
        var rest = Array(d[2...])
        if codecType == 0xFF, rest.count >= 6 {
            vendorID = UInt32(rest[0]) | UInt32(rest[1]) << 8 | UInt32(rest[2]) << 16 | UInt32(rest[3]) << 24
            vendorCodecID = UInt16(rest[4]) | UInt16(rest[5]) << 8
            rest.removeFirst(6)
        }
        info = rest
    }

    public var name: String {
        switch codecType {
        case 0x00: return "SBC"
        case 0x01: return "MPEG-1,2 Audio"
        case 0x02: return "MPEG-2,4 AAC"
        case 0x04: return "ATRAC"
        case 0xFF:
            switch (vendorID ?? 0, vendorCodecID ?? 0) {
            case (0x004F, 0x0001): return "aptX"
            case (0x00D7, 0x0024): return "aptX HD"
            case (0x000A, 0x0002): return "aptX Low Latency"
            case (0x012D, 0x00AA): return "LDAC"
            case (0x0075, 0x0102): return "Samsung Scalable"
            default: return "Vendor"
            }
        default: return "Unknown"
        }
    }

    static func bits(_ v: UInt8, _ names: [(UInt8, String)]) -> [String] { names.filter { v & $0.0 != 0 }.map(\.1) }

    /// Sampling frequencies, channel modes and codec parameters, by codec.
    public var parameters: [(String, String)] {
        let i = info
        switch (codecType, name) {
        case (0x00, _) where i.count >= 4: // A2DP §4.3.2
            return [
                ("sampling_frequency", Self.bits(i[0], [(0x80, "16000"), (0x40, "32000"), (0x20, "44100"), (0x10, "48000")]).joined(separator: ",")),
                ("channel_mode", Self.bits(i[0], [(0x08, "mono"), (0x04, "dual channel"), (0x02, "stereo"), (0x01, "joint stereo")]).joined(separator: ",")),
                ("block_length", Self.bits(i[1], [(0x80, "4"), (0x40, "8"), (0x20, "12"), (0x10, "16")]).joined(separator: ",")),
                ("subbands", Self.bits(i[1], [(0x08, "4"), (0x04, "8")]).joined(separator: ",")),
                ("allocation_method", Self.bits(i[1], [(0x02, "SNR"), (0x01, "loudness")]).joined(separator: ",")),
                ("bitpool", "\(i[2])-\(i[3])")
            ]
        case (0x02, _) where i.count >= 6: // A2DP §4.5.2
            let f = UInt16(i[1]) << 4 | UInt16(i[2] >> 4)
            let freqs = [
                (0x800, "8000"), (0x400, "11025"), (0x200, "12000"), (0x100, "16000"), (0x80, "22050"), (0x40, "24000"),
                (0x20, "32000"), (0x10, "44100"), (0x8, "48000"), (0x4, "64000"), (0x2, "88200"), (0x1, "96000")
            ]
            let rate = Int(i[3] & 0x7F) << 16 | Int(i[4]) << 8 | Int(i[5])
            return [
                ("object_type", Self.bits(i[0], [(0x80, "MPEG-2 AAC LC"), (0x40, "MPEG-4 AAC LC"), (0x20, "MPEG-4 AAC LTP"), (0x10, "MPEG-4 AAC scalable")]).joined(separator: ",")),
                ("sampling_frequency", freqs.filter { f & UInt16($0.0) != 0 }.map(\.1).joined(separator: ",")),
                ("channels", Self.bits(i[2], [(0x08, "1"), (0x04, "2")]).joined(separator: ",")),
                ("vbr", i[3] & 0x80 != 0 ? "yes" : "no"), ("bit_rate", "\(rate)")
            ]
        case (_, "aptX"), (_, "aptX HD"):
            guard let b = i.first else { return [] }
            return [
                ("sampling_frequency", Self.bits(b, [(0x80, "16000"), (0x40, "32000"), (0x20, "44100"), (0x10, "48000")]).joined(separator: ",")),
                ("channel_mode", Self.bits(b, [(0x01, "mono"), (0x02, "stereo")]).joined(separator: ","))
            ]
        case (_, "LDAC") where i.count >= 2:
            return [
                ("sampling_frequency", Self.bits(i[0], [(0x20, "44100"), (0x10, "48000"), (0x08, "88200"), (0x04, "96000"), (0x02, "176400"), (0x01, "192000")]).joined(separator: ",")),
                ("channel_mode", Self.bits(i[1], [(0x04, "mono"), (0x02, "dual channel"), (0x01, "stereo")]).joined(separator: ","))
            ]
        default:
            return []
        }
    }

    /// "SBC 44100 joint stereo bitpool 2-53", "aptX 16000,32000,44100,48000 stereo".
    public var summary: String {
        var s = name
        if name == "Vendor", let v = vendorID, let c = vendorCodecID {
            s += " " + (AssignedNumbers.companyName(UInt16(truncatingIfNeeded: v)) ?? Hex.fixed(UInt64(v), width: 8)) + " codec " + Hex.fixed(UInt64(c), width: 4)
        }
        for (k, v) in parameters where ["sampling_frequency", "channel_mode", "bitpool", "object_type"].contains(k) && !v.isEmpty {
            s += " " + (k == "bitpool" ? "bitpool " : "") + v
        }
        return s
    }

    func describe<S: FieldSink>(into sink: inout S) {
        sink.int("media_type", Int(mediaType))
        sink.int("codec_type", Int(codecType)); sink.string("codec", name)
        if let v = vendorID { sink.uint("vendor_id", UInt64(v)) }
        if let c = vendorCodecID { sink.int("vendor_codec_id", Int(c)) }
        let p = parameters
        if p.isEmpty { if !info.isEmpty { sink.hex("info", info) } } else { for (k, v) in p { sink.string(.dynamic(k), v) } }
    }
}

/// A packet on an AVDTP media transport channel (AVDTP 1.3 §7.2): RTP header (RFC 3550 §5.1)
/// and, for SBC, the A2DP media payload header (A2DP 1.3 §4.3.4). Audio is not decoded.
public struct AVDTPMediaPacket: FieldDescribable {
    public var payloadType: UInt8 = 0
    public var marker = false
    public var sequence: UInt16 = 0
    public var timestamp: UInt32 = 0
    public var ssrc: UInt32 = 0
    public var payload = UnsafeRawBufferPointer(start: nil, count: 0)
    /// SBC: frames in this packet (set when the configured codec is SBC).
    public var sbcFrames: Int?
    public var codec: String?
    public var error: DecodeError?

    public init(bytes: UnsafeRawBufferPointer, codecType: UInt8?) {
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            let b0 = try r.readUInt8("RTP V/P/X/CC")
            guard b0 >> 6 == 2 else {
                throw DecodeError(code: .invalidValue, offset: 0, message: "RTP version \(b0 >> 6)")
            }
            let b1 = try r.readUInt8("RTP M/PT")
            marker = b1 & 0x80 != 0; payloadType = b1 & 0x7F
            sequence = try r.readUInt16(.big, "sequence number")
            timestamp = try r.readUInt32(.big, "timestamp")
            ssrc = try r.readUInt32(.big, "SSRC")
            try r.skip(4 * Int(b0 & 0x0F), "CSRC list")
            if b0 & 0x10 != 0 { // header extension
                try r.skip(2, "extension profile")
                try r.skip(4 * Int(try r.readUInt16(.big, "extension length")), "extension")
            }
            payload = r.readRemaining()
            if codecType == 0x00, let h = payload.first { sbcFrames = Int(h & 0x0F); codec = "SBC" } else if let c = codecType { codec = c == 0x02 ? "MPEG-2,4 AAC" : c == 0xFF ? "Vendor" : "codec \(c)" }
        } catch {
            self.error = error.inLayer("avdtp")
        }
    }

    public var summary: String {
        var s = "AVDTP Media seq=\(sequence) ts=\(timestamp)"
        if let n = sbcFrames { s += " SBC frames=\(n)" }
        s += " len=\(payload.count)"
        return s
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.string("name", "Media")
        sink.int("payload_type", Int(payloadType))
        if marker { sink.bool("marker", true) }
        sink.int("sequence", Int(sequence)); sink.uint("timestamp", UInt64(timestamp)); sink.uint("ssrc", UInt64(ssrc))
        if let c = codec { sink.string("codec", c) }
        if let n = sbcFrames { sink.int("sbc_frames", n) }
        sink.int("payload_length", payload.count)
    }
}
