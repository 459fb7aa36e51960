import BluesiftWire

/// One Length-Type-Value structure (Assigned Numbers §6.12.4-§6.12.6; BAP 1.0.1 §4.3):
/// Length counts the Type octet and the Value.
public struct LEAudioLTV: Hashable, Sendable {
    public var type: UInt8
    public var value: [UInt8]
    public init(type: UInt8, value: [UInt8]) { self.type = type; self.value = value }

    /// The value as a little-endian unsigned integer (up to 8 octets).
    public var uint: UInt64 {
        var v: UInt64 = 0
        for (i, b) in value.prefix(8).enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        return v
    }

    /// The LTVs of `bytes`; a structure running past the end stops the list with an error
    /// (the ones before it are kept). A zero length is an empty entry and is skipped.
    public static func decodeList(_ bytes: UnsafeRawBufferPointer) -> (ltvs: [LEAudioLTV], error: DecodeError?) {
        var out: [LEAudioLTV] = []
        var o = 0
        while o < bytes.count {
            let len = Int(bytes[o])
            if len == 0 { o += 1; continue }
            guard o + 1 + len <= bytes.count else {
                return (out, LEAudioError.make(.truncated, o, "LTV length \(len) at \(o): \(bytes.count - o - 1) bytes left"))
            }
            out.append(LEAudioLTV(type: bytes[o + 1], value: Array(bytes[(o + 2)..<(o + 1 + len)])))
            o += 1 + len
        }
        return (out, nil)
    }

    public static func encodeList(_ ltvs: [LEAudioLTV]) -> [UInt8] {
        var out: [UInt8] = []
        for l in ltvs { out.append(UInt8(truncatingIfNeeded: l.value.count + 1)); out.append(l.type); out += l.value }
        return out
    }

    static func uint(_ v: UInt64, _ size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
}

/// Assigned Numbers §6.12.4 Codec_Specific_Capabilities LTV structures (PAC records).
public struct LEAudioCodecCapabilities: Hashable, Sendable, FieldDescribable {
    public var ltvs: [LEAudioLTV]
    public var error: DecodeError?
    public init(ltvs: [LEAudioLTV]) { self.ltvs = ltvs }
    public init(bytes: UnsafeRawBufferPointer) { (ltvs, error) = LEAudioLTV.decodeList(bytes) }
    public func encode() -> [UInt8] { LEAudioLTV.encodeList(ltvs) }

    func first(_ t: UInt8) -> LEAudioLTV? { ltvs.first { $0.type == t } }
    /// 0x01 Supported_Sampling_Frequencies.
    public var supportedSamplingFrequencies: LEAudioSupportedSamplingFrequencies? { first(1).map { .init(rawValue: UInt16(truncatingIfNeeded: $0.uint)) } }
    /// 0x02 Supported_Frame_Durations.
    public var supportedFrameDurations: LEAudioSupportedFrameDurations? { first(2).map { .init(rawValue: UInt8(truncatingIfNeeded: $0.uint)) } }
    /// 0x03 Supported_Audio_Channel_Counts: bit n means n+1 channels (absent: 1).
    public var supportedAudioChannelCounts: UInt8? { first(3).map { UInt8(truncatingIfNeeded: $0.uint) } }
    /// 0x04 Supported_Octets_Per_Codec_Frame: minimum then maximum.
    public var octetsPerCodecFrame: (min: UInt16, max: UInt16)? {
        first(4).flatMap { $0.value.count >= 4 ? (UInt16($0.value[0]) | UInt16($0.value[1]) << 8, UInt16($0.value[2]) | UInt16($0.value[3]) << 8) : nil }
    }
    /// 0x05 Supported_Max_Codec_Frames_Per_SDU (absent: 1).
    public var maxCodecFramesPerSDU: UInt8? { first(5).map { UInt8(truncatingIfNeeded: $0.uint) } }

    public func describe<S: FieldSink>(into sink: inout S) {
        for l in ltvs {
            switch l.type {
            case 1:
                let f = LEAudioSupportedSamplingFrequencies(rawValue: UInt16(truncatingIfNeeded: l.uint))
                sink.uint("supported_sampling_frequencies", UInt64(f.rawValue))
                sink.array("supported_sampling_frequencies_hz") { s in for h in f.hertz { s.int("", h) } }
            case 2: sink.uint("supported_frame_durations", l.uint)
            case 3:
                sink.uint("supported_audio_channel_counts", l.uint)
                sink.array("supported_audio_channel_counts_list") { s in for i in 0..<8 where l.uint & (1 << UInt64(i)) != 0 { s.int("", i + 1) } }
            case 4 where l.value.count == 4:
                let o = octetsPerCodecFrame!
                sink.int("min_octets_per_codec_frame", Int(o.min)); sink.int("max_octets_per_codec_frame", Int(o.max))
            case 5: sink.uint("supported_max_codec_frames_per_sdu", l.uint)
            default: LEAudioLTVDescribe.unknown(l, into: &sink)
            }
        }
        if let error { sink.string("ltv_error", error.message) }
    }
}

/// Assigned Numbers §6.12.5 Codec_Specific_Configuration LTV structures (ASE Config Codec,
/// ASE Codec Configured state, BASE levels 2 and 3).
public struct LEAudioCodecConfiguration: Hashable, Sendable, FieldDescribable {
    public var ltvs: [LEAudioLTV]
    public var error: DecodeError?
    public init(ltvs: [LEAudioLTV]) { self.ltvs = ltvs }
    public init(bytes: UnsafeRawBufferPointer) { (ltvs, error) = LEAudioLTV.decodeList(bytes) }
    public init(bytes: [UInt8]) { self = bytes.withUnsafeBytes { Self(bytes: $0) } }
    public func encode() -> [UInt8] { LEAudioLTV.encodeList(ltvs) }

    /// A configuration with the given values, in the order of the assigned numbers.
    public init(
        samplingFrequency: LEAudioSamplingFrequency? = nil, frameDuration: LEAudioFrameDuration? = nil,
        audioChannelAllocation: LEAudioLocation? = nil, octetsPerCodecFrame: UInt16? = nil,
        codecFrameBlocksPerSDU: UInt8? = nil
    ) {
        var l: [LEAudioLTV] = []
        if let v = samplingFrequency { l.append(.init(type: 1, value: [v.rawValue])) }
        if let v = frameDuration { l.append(.init(type: 2, value: [v.rawValue])) }
        if let v = audioChannelAllocation { l.append(.init(type: 3, value: LEAudioLTV.uint(UInt64(v.rawValue), 4))) }
        if let v = octetsPerCodecFrame { l.append(.init(type: 4, value: LEAudioLTV.uint(UInt64(v), 2))) }
        if let v = codecFrameBlocksPerSDU { l.append(.init(type: 5, value: [v])) }
        ltvs = l
    }

    func first(_ t: UInt8) -> LEAudioLTV? { ltvs.first { $0.type == t } }
    public var samplingFrequency: LEAudioSamplingFrequency? { first(1).map { .init(rawValue: UInt8(truncatingIfNeeded: $0.uint)) } }
    public var frameDuration: LEAudioFrameDuration? { first(2).map { .init(rawValue: UInt8(truncatingIfNeeded: $0.uint)) } }
    public var audioChannelAllocation: LEAudioLocation? { first(3).map { .init(rawValue: UInt32(truncatingIfNeeded: $0.uint)) } }
    public var octetsPerCodecFrame: UInt16? { first(4).map { UInt16(truncatingIfNeeded: $0.uint) } }
    public var codecFrameBlocksPerSDU: UInt8? { first(5).map { UInt8(truncatingIfNeeded: $0.uint) } }

    /// This level's values over `base` (BASE level 3 over level 2, BAP 1.0.1 §3.7.2.2).
    public func merged(over base: LEAudioCodecConfiguration) -> LEAudioCodecConfiguration {
        var out = base
        for l in ltvs {
            if let i = out.ltvs.firstIndex(where: { $0.type == l.type }) { out.ltvs[i] = l } else { out.ltvs.append(l) }
        }
        return out
    }

    /// The BAP preset these values match (`16_2`, `48_4`), nil otherwise.
    public var preset: String? {
        guard let f = samplingFrequency, let d = frameDuration, let o = octetsPerCodecFrame else { return nil }
        return LEAudioPresets.codec(f, d, o)?.name
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        for l in ltvs {
            switch l.type {
            case 1:
                let f = LEAudioSamplingFrequency(rawValue: UInt8(truncatingIfNeeded: l.uint))
                sink.int("sampling_frequency", Int(f.rawValue))
                if let hz = f.hertz { sink.int("sampling_frequency_hz", hz) }
            case 2:
                let d = LEAudioFrameDuration(rawValue: UInt8(truncatingIfNeeded: l.uint))
                sink.int("frame_duration", Int(d.rawValue))
                if let us = d.microseconds { sink.int("frame_duration_us", us) }
            case 3: LEAudioLocation(rawValue: UInt32(truncatingIfNeeded: l.uint)).describe("audio_channel_allocation", into: &sink)
            case 4: sink.uint("octets_per_codec_frame", l.uint)
            case 5: sink.uint("codec_frame_blocks_per_sdu", l.uint)
            default: LEAudioLTVDescribe.unknown(l, into: &sink)
            }
        }
        if let p = preset { sink.string("preset", p) }
        if let error { sink.string("ltv_error", error.message) }
    }

    /// "16_2 16000 Hz 10 ms 40 octets FL".
    public var summary: String {
        var parts: [String] = []
        if let p = preset { parts.append(p) }
        if let hz = samplingFrequency?.hertz { parts.append("\(hz) Hz") }
        if let d = frameDuration { parts.append(d.name) }
        if let o = octetsPerCodecFrame { parts.append("\(o) octets") }
        if let a = audioChannelAllocation { parts.append(a.names.joined(separator: "+")) }
        return parts.joined(separator: " ")
    }
}

/// Assigned Numbers §6.12.6 Metadata LTV types. Open.
public struct LEAudioMetadataType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let preferredAudioContexts = Self(rawValue: 0x01)
    public static let streamingAudioContexts = Self(rawValue: 0x02)
    public static let programInfo = Self(rawValue: 0x03)
    public static let language = Self(rawValue: 0x04)
    public static let ccidList = Self(rawValue: 0x05)
    public static let parentalRating = Self(rawValue: 0x06)
    public static let programInfoURI = Self(rawValue: 0x07)
    public static let audioActiveState = Self(rawValue: 0x08)
    public static let broadcastAudioImmediateRenderingFlag = Self(rawValue: 0x09)
    public static let assistedListeningStream = Self(rawValue: 0x0A)
    public static let broadcastName = Self(rawValue: 0x0B)
    public static let extendedMetadata = Self(rawValue: 0xFE)
    public static let vendorSpecific = Self(rawValue: 0xFF)
    /// The JSON key of the value.
    public var key: String {
        switch rawValue {
        case 0x01: "preferred_audio_contexts"
        case 0x02: "streaming_audio_contexts"
        case 0x03: "program_info"
        case 0x04: "language"
        case 0x05: "ccid_list"
        case 0x06: "parental_rating"
        case 0x07: "program_info_uri"
        case 0x08: "audio_active_state"
        case 0x09: "broadcast_audio_immediate_rendering_flag"
        case 0x0A: "assisted_listening_stream"
        case 0x0B: "broadcast_name"
        case 0xFE: "extended_metadata"
        case 0xFF: "vendor_specific"
        default: "unknown"
        }
    }
}

/// A Metadata field (BAP 1.0.1 §4.3.3, Assigned Numbers §6.12.6): LTVs.
public struct LEAudioMetadata: Hashable, Sendable, FieldDescribable {
    public var ltvs: [LEAudioLTV]
    public var error: DecodeError?
    public init(ltvs: [LEAudioLTV] = []) { self.ltvs = ltvs }
    public init(bytes: UnsafeRawBufferPointer) { (ltvs, error) = LEAudioLTV.decodeList(bytes) }
    public init(bytes: [UInt8]) { self = bytes.withUnsafeBytes { Self(bytes: $0) } }
    public func encode() -> [UInt8] { LEAudioLTV.encodeList(ltvs) }

    public func value(_ t: LEAudioMetadataType) -> LEAudioLTV? { ltvs.first { $0.type == t.rawValue } }
    public var streamingAudioContexts: LEAudioContextType? { value(.streamingAudioContexts).map { .init(rawValue: UInt16(truncatingIfNeeded: $0.uint)) } }
    public var language: String? { value(.language).map { String(decoding: $0.value, as: UTF8.self) } }
    public var programInfo: String? { value(.programInfo).map { String(decoding: $0.value, as: UTF8.self) } }
    public var broadcastName: String? { value(.broadcastName).map { String(decoding: $0.value, as: UTF8.self) } }

    public func describe<S: FieldSink>(into sink: inout S) {
        for l in ltvs {
            let t = LEAudioMetadataType(rawValue: l.type)
            switch l.type {
            case 0x01, 0x02: LEAudioContextType(rawValue: UInt16(truncatingIfNeeded: l.uint)).describe(.dynamic(t.key), into: &sink)
            case 0x03, 0x04, 0x07, 0x0B: sink.string(.dynamic(t.key), String(decoding: l.value, as: UTF8.self))
            case 0x05: sink.array("ccid_list") { s in for c in l.value { s.int("", Int(c)) } }
            case 0x06, 0x08, 0x0A: sink.uint(.dynamic(t.key), l.uint)
            case 0x09: sink.bool("broadcast_audio_immediate_rendering_flag", true)
            case 0xFE: sink.hex("extended_metadata", l.value)
            case 0xFF:
                sink.object("vendor_specific") { s in
                    if l.value.count >= 2 { s.int("company_id", Int(l.value[0]) | Int(l.value[1]) << 8) }
                    s.hex("data", Array(l.value.dropFirst(2)))
                }
            default: LEAudioLTVDescribe.unknown(l, into: &sink)
            }
        }
        if let error { sink.string("ltv_error", error.message) }
    }
}

enum LEAudioLTVDescribe {
    /// An LTV of a type the tables do not name: its type and bytes, decoding goes on.
    static func unknown<S: FieldSink>(_ l: LEAudioLTV, into sink: inout S) {
        sink.object(.dynamic("ltv_type_" + Hex.fixed(UInt64(l.type), width: 2))) { s in s.hex("value", l.value) }
    }
}
