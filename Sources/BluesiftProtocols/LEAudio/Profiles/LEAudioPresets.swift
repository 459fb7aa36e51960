/// BAP 1.0.1 §5.2 Table 5.2 (unicast) and §6.4 Table 6.4 (broadcast): the LC3 codec
/// configuration settings (`16_2`) and their QoS configurations (`16_2_1` low latency,
/// `16_2_2` high reliability). A capture's values are named by the preset they equal.
public enum LEAudioPresets {
    public struct Codec: Sendable, Hashable {
        public var name: String
        public var samplingFrequency: LEAudioSamplingFrequency
        public var frameDuration: LEAudioFrameDuration
        public var octetsPerCodecFrame: UInt16
    }

    public struct QoS: Sendable, Hashable {
        public var name: String
        public var sduIntervalMicroseconds: UInt32
        public var framed: Bool
        public var maxSDU: UInt16
        public var retransmissionNumber: UInt8
        public var maxTransportLatencyMilliseconds: UInt16
        public var presentationDelayMicroseconds: UInt32 = 40000
    }

    /// (name, kHz code, 7.5 ms?, octets): BAP Table 3.11 / 5.2 first columns.
    public static let codecs: [Codec] = [
        ("8_1", 1, 0, 26), ("8_2", 1, 1, 30), ("16_1", 3, 0, 30), ("16_2", 3, 1, 40),
        ("24_1", 5, 0, 45), ("24_2", 5, 1, 60), ("32_1", 6, 0, 60), ("32_2", 6, 1, 80),
        ("441_1", 7, 0, 97), ("441_2", 7, 1, 130), ("48_1", 8, 0, 75), ("48_2", 8, 1, 100),
        ("48_3", 8, 0, 90), ("48_4", 8, 1, 120), ("48_5", 8, 0, 117), ("48_6", 8, 1, 155)
    ].map { Codec(name: $0.0, samplingFrequency: .init(rawValue: UInt8($0.1)), frameDuration: .init(rawValue: UInt8($0.2)), octetsPerCodecFrame: UInt16($0.3)) }

    public static func codec(_ f: LEAudioSamplingFrequency, _ d: LEAudioFrameDuration, _ octets: UInt16) -> Codec? {
        codecs.first { $0.samplingFrequency == f && $0.frameDuration == d && $0.octetsPerCodecFrame == octets }
    }

    static func qos(_ codec: Codec, _ suffix: String, rtn: UInt8, latency: UInt16) -> QoS {
        let framed = codec.name.hasPrefix("441")
        let interval: UInt32 = framed ? (codec.frameDuration.rawValue == 0 ? 8163 : 10884) : (codec.frameDuration.rawValue == 0 ? 7500 : 10000)
        return QoS(
            name: codec.name + suffix, sduIntervalMicroseconds: interval, framed: framed, maxSDU: codec.octetsPerCodecFrame,
            retransmissionNumber: rtn, maxTransportLatencyMilliseconds: latency)
    }

    /// Table 5.2: unicast `_1` (low latency) and `_2` (high reliability).
    public static let unicastQoS: [QoS] = codecs.flatMap { c -> [QoS] in
        let short = c.frameDuration.rawValue == 0
        let lowLatency: (UInt8, UInt16) =
            c.name.hasPrefix("441")
            ? (5, short ? 24 : 31)
            : c.name.hasPrefix("48") ? (5, short ? 15 : 20) : (2, short ? 8 : 10)
        let reliable: (UInt8, UInt16) =
            c.name.hasPrefix("441")
            ? (13, short ? 80 : 85)
            : (c.name == "48_4" || c.name == "48_6") ? (13, 100) : (13, short ? 75 : 95)
        return [qos(c, "_1", rtn: lowLatency.0, latency: lowLatency.1), qos(c, "_2", rtn: reliable.0, latency: reliable.1)]
    }

    /// Table 6.4: broadcast `_1` and `_2`.
    public static let broadcastQoS: [QoS] = codecs.flatMap { c -> [QoS] in
        let short = c.frameDuration.rawValue == 0
        let lowLatency: (UInt8, UInt16) =
            c.name.hasPrefix("441")
            ? (4, short ? 24 : 31)
            : c.name.hasPrefix("48") ? (4, short ? 15 : 20) : (2, short ? 8 : 10)
        let reliable: (UInt8, UInt16) =
            c.name.hasPrefix("441")
            ? (4, short ? 54 : 60)
            : c.name.hasPrefix("48") ? (4, short ? 50 : 65) : (4, short ? 45 : 60)
        return [qos(c, "_1", rtn: lowLatency.0, latency: lowLatency.1), qos(c, "_2", rtn: reliable.0, latency: reliable.1)]
    }

    /// The unicast QoS preset these values equal (presentation delay aside: servers choose
    /// it within their range).
    public static func unicastQoS(sduInterval: UInt32, framing: UInt8, maxSDU: UInt16, rtn: UInt8, latency: UInt16) -> QoS? {
        unicastQoS.first {
            $0.sduIntervalMicroseconds == sduInterval && $0.framed == (framing == 1) && $0.maxSDU == maxSDU
                && $0.retransmissionNumber == rtn && $0.maxTransportLatencyMilliseconds == latency
        }
    }
}
