import BluesiftWire

// Assigned numbers of the LE Audio profiles: the values carried in LTVs, PAC records, ASE
// states and BASE. One place for their names (Assigned Numbers 2024-xx, §6.12 Generic Audio).

/// Assigned Numbers §6.12.5.1 Sampling_Frequency (codec configuration LTV 0x01). Open.
public struct LEAudioSamplingFrequency: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    static let hertzTable: [Int] = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000, 176400, 192000, 384000]
    /// The rate in Hz; nil for a reserved value.
    public var hertz: Int? { rawValue >= 1 && Int(rawValue) <= Self.hertzTable.count ? Self.hertzTable[Int(rawValue) - 1] : nil }
    public init?(hertz: Int) {
        guard let i = Self.hertzTable.firstIndex(of: hertz) else { return nil }
        rawValue = UInt8(i + 1)
    }
    public var name: String { hertz.map { "\($0) Hz" } ?? "Unknown" }
}

/// Assigned Numbers §6.12.4.1 Supported_Sampling_Frequencies: bit n is the rate of
/// Sampling_Frequency n+1.
public struct LEAudioSupportedSamplingFrequencies: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public var hertz: [Int] {
        (0..<16).compactMap { rawValue & (1 << $0) != 0 ? LEAudioSamplingFrequency(rawValue: UInt8($0 + 1)).hertz : nil }
    }
}

/// Assigned Numbers §6.12.5.2 Frame_Duration. Open.
public struct LEAudioFrameDuration: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let ms7_5 = LEAudioFrameDuration(rawValue: 0)
    public static let ms10 = LEAudioFrameDuration(rawValue: 1)
    public var microseconds: Int? { rawValue == 0 ? 7500 : rawValue == 1 ? 10000 : nil }
    public var name: String { rawValue == 0 ? "7.5 ms" : rawValue == 1 ? "10 ms" : "Unknown" }
}

/// Assigned Numbers §6.12.4.2 Supported_Frame_Durations bit field.
public struct LEAudioSupportedFrameDurations: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let ms7_5 = Self(rawValue: 0x01)
    public static let ms10 = Self(rawValue: 0x02)
    public static let ms7_5Preferred = Self(rawValue: 0x10)
    public static let ms10Preferred = Self(rawValue: 0x20)
}

/// Assigned Numbers §6.12.1 Audio Location bit field (Audio_Channel_Allocation, PACS
/// Sink/Source Audio Locations). 0 is mono audio (no allocation).
public struct LEAudioLocation: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let frontLeft = Self(rawValue: 1 << 0)
    public static let frontRight = Self(rawValue: 1 << 1)
    static let names = [
        "Front Left", "Front Right", "Front Center", "Low Frequency Effects 1", "Back Left",
        "Back Right", "Front Left of Center", "Front Right of Center", "Back Center",
        "Low Frequency Effects 2", "Side Left", "Side Right", "Top Front Left", "Top Front Right",
        "Top Front Center", "Top Center", "Top Back Left", "Top Back Right", "Top Side Left",
        "Top Side Right", "Top Back Center", "Bottom Front Center", "Bottom Front Left",
        "Bottom Front Right", "Front Left Wide", "Front Right Wide", "Left Surround", "Right Surround"
    ]
    /// Names of the bits set; "Mono" for none; "RFU bit n" for bits the table does not name.
    public var names: [String] {
        if rawValue == 0 { return ["Mono"] }
        return (0..<32).compactMap { rawValue & (1 << $0) == 0 ? nil : $0 < Self.names.count ? Self.names[$0] : "RFU bit \($0)" }
    }
    public func describe<S: FieldSink>(_ key: FieldKey, into sink: inout S) {
        sink.uint(key, UInt64(rawValue))
        sink.array(.dynamic(key.string + "_names")) { s in for n in names { s.string("", n) } }
    }
}

/// Assigned Numbers §6.12.3 Context Type bit field (PACS contexts, Preferred/Streaming
/// Audio Contexts metadata, ASCS announcements).
public struct LEAudioContextType: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let unspecified = Self(rawValue: 0x0001)
    public static let conversational = Self(rawValue: 0x0002)
    public static let media = Self(rawValue: 0x0004)
    static let names = [
        "Unspecified", "Conversational", "Media", "Game", "Instructional", "Voice Assistants",
        "Live", "Sound Effects", "Notifications", "Ringtone", "Alerts", "Emergency Alarm"
    ]
    public var names: [String] {
        (0..<16).compactMap { rawValue & (1 << $0) == 0 ? nil : $0 < Self.names.count ? Self.names[$0] : "RFU bit \($0)" }
    }
    public func describe<S: FieldSink>(_ key: FieldKey, into sink: inout S) {
        sink.uint(key, UInt64(rawValue))
        sink.array(.dynamic(key.string + "_names")) { s in for n in names { s.string("", n) } }
    }
}

/// Core 6.0 Vol 4 Part E §7.8.109 / Assigned Numbers §2.11 Coding Format, with the company
/// and vendor codec id that follow it (5 octets). Open.
public struct LEAudioCodecID: Hashable, Sendable {
    public var codingFormat: UInt8
    public var companyID: UInt16
    public var vendorCodecID: UInt16
    public init(codingFormat: UInt8, companyID: UInt16 = 0, vendorCodecID: UInt16 = 0) {
        self.codingFormat = codingFormat; self.companyID = companyID; self.vendorCodecID = vendorCodecID
    }
    public static let lc3 = Self(codingFormat: 0x06)
    public static let transparent = Self(codingFormat: 0x03)
    public var isVendor: Bool { codingFormat == 0xFF }
    public var name: String {
        switch codingFormat {
        case 0x00: "u-law log"
        case 0x01: "A-law log"
        case 0x02: "CVSD"
        case 0x03: "Transparent"
        case 0x04: "Linear PCM"
        case 0x05: "mSBC"
        case 0x06: "LC3"
        case 0x07: "G.729A"
        case 0xFF: "Vendor Specific"
        default: "Unknown"
        }
    }
    init(_ r: inout ByteReader) throws(DecodeError) {
        self.init(
            codingFormat: try r.readUInt8("coding format"), companyID: try r.readUInt16(.little, "company id"),
            vendorCodecID: try r.readUInt16(.little, "vendor codec id"))
    }
    func encode(into w: inout ByteWriter) { w.writeUInt8(codingFormat); w.writeUInt16(companyID); w.writeUInt16(vendorCodecID) }
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("coding_format", Int(codingFormat)); sink.string("coding_format_name", name)
        sink.int("company_id", Int(companyID)); sink.int("vendor_codec_id", Int(vendorCodecID))
    }
    public var summary: String {
        isVendor ? "vendor " + Hex.fixed(UInt64(companyID), width: 4) + ":" + Hex.fixed(UInt64(vendorCodecID), width: 4) : name
    }
}

/// Core 6.0 Vol 6 Part B §2.4.2.22 / Vol 4 Part E §7.8.97: a PHY as LE Audio carries it
/// (bit field: 1M, 2M, Coded).
public enum LEAudioPHY {
    public static func names(_ v: UInt8) -> String {
        var out: [String] = []
        if v & 1 != 0 { out.append("LE 1M") }
        if v & 2 != 0 { out.append("LE 2M") }
        if v & 4 != 0 { out.append("LE Coded") }
        if v & 0xF8 != 0 { out.append("RFU") }
        return out.isEmpty ? "none" : out.joined(separator: "|")
    }
}

/// BAP 1.0.1 §4.3.3 / ASCS 1.0 §5.2 Framing. Open.
public struct LEAudioFraming: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String { rawValue == 0 ? "Unframed" : rawValue == 1 ? "Framed" : "Unknown" }
}

/// Three-octet little-endian values (SDU intervals, presentation delays, Broadcast_ID).
extension ByteReader {
    @inlinable mutating func readU24(_ what: StaticString) throws(DecodeError) -> UInt32 { try readUInt24(.little, what) }
}
extension ByteWriter {
    mutating func writeU24(_ v: UInt32) { writeUInt(UInt64(v & 0xFF_FFFF), size: 3, endianness: .little) }
}

/// Errors of the LE Audio decoders, in the `le_audio` layer.
enum LEAudioError {
    static func make(_ code: DecodeError.Code, _ offset: Int, _ message: String) -> DecodeError {
        DecodeError(layer: "le_audio", code: code, offset: offset, message: message)
    }
}
