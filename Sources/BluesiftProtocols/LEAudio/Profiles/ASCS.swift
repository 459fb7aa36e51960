import BluesiftWire

/// ASCS 1.0 §4.1 Table 4.2 ASE_State. Open.
public struct ASEState: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let idle = Self(rawValue: 0), codecConfigured = Self(rawValue: 1), qosConfigured = Self(rawValue: 2)
    public static let enabling = Self(rawValue: 3), streaming = Self(rawValue: 4), disabling = Self(rawValue: 5), releasing = Self(rawValue: 6)
    public var name: String {
        switch rawValue {
        case 0: "Idle"
        case 1: "Codec Configured"
        case 2: "QoS Configured"
        case 3: "Enabling"
        case 4: "Streaming"
        case 5: "Disabling"
        case 6: "Releasing"
        default: "Unknown"
        }
    }
}

/// ASCS 1.0 §5 Table 5.1 ASE Control Point opcodes. Open.
public struct ASEOpcode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let configCodec = Self(rawValue: 1), configQoS = Self(rawValue: 2), enable = Self(rawValue: 3)
    public static let receiverStartReady = Self(rawValue: 4), disable = Self(rawValue: 5), receiverStopReady = Self(rawValue: 6)
    public static let updateMetadata = Self(rawValue: 7), release = Self(rawValue: 8)
    public var name: String {
        switch rawValue {
        case 1: "Config Codec"
        case 2: "Config QoS"
        case 3: "Enable"
        case 4: "Receiver Start Ready"
        case 5: "Disable"
        case 6: "Receiver Stop Ready"
        case 7: "Update Metadata"
        case 8: "Release"
        default: "Unknown"
        }
    }
}

/// ASCS 1.0 §5.1 Table 5.3 Response_Code. Open.
public struct ASEResponseCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = Self(rawValue: 0)
    public static let unsupportedMetadata = Self(rawValue: 0x0A), rejectedMetadata = Self(rawValue: 0x0B), invalidMetadata = Self(rawValue: 0x0C)
    static let names = [
        "Success", "Unsupported Opcode", "Invalid Length", "Invalid ASE_ID",
        "Invalid ASE State Machine Transition", "Invalid ASE direction", "Unsupported Audio Capabilities",
        "Unsupported Configuration Parameter value", "Rejected Configuration Parameter value",
        "Invalid Configuration Parameter value", "Unsupported Metadata", "Rejected Metadata",
        "Invalid Metadata", "Insufficient Resources", "Unspecified Error"
    ]
    public var name: String { Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : "Unknown" }
}

/// ASCS 1.0 §5.1 Table 5.4 Reason (for configuration parameter response codes 0x07-0x09;
/// for metadata codes 0x0A-0x0C the reason is the metadata type). Open.
public struct ASEReason: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    static let names = [
        "None", "Codec_ID", "Codec_Specific_Configuration", "SDU_Interval", "Framing", "PHY",
        "Maximum_SDU_Size", "Retransmission_Number", "Max_Transport_Latency", "Presentation_Delay",
        "Invalid_ASE_CIS_Mapping"
    ]
    public var name: String { Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : "Unknown" }
    /// The reason's name as the response code reads it.
    public func name(for code: ASEResponseCode) -> String {
        [.unsupportedMetadata, .rejectedMetadata, .invalidMetadata].contains(code) ? "Metadata type " + LEAudioMetadataType(rawValue: rawValue).key : name
    }
}

/// ASCS 1.0 §5.1 Target_Latency. Open.
public struct ASETargetLatency: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 1: "Low Latency";
        case 2: "Balanced";
        case 3: "High Reliability";
        default: "Unknown"
        }
    }
}

/// ASCS 1.0 §4.3 Table 4.4 and §5.2 Table 5.5: the QoS parameters of the QoS Configured
/// state and of Config QoS (SDU interval and presentation delay in µs, latency in ms).
public struct ASEQoS: Hashable, Sendable {
    public var cigID: UInt8
    public var cisID: UInt8
    public var sduInterval: UInt32
    public var framing: LEAudioFraming
    public var phy: UInt8
    public var maxSDU: UInt16
    public var retransmissionNumber: UInt8
    public var maxTransportLatency: UInt16
    public var presentationDelay: UInt32

    public init(
        cigID: UInt8, cisID: UInt8, sduInterval: UInt32, framing: LEAudioFraming, phy: UInt8, maxSDU: UInt16,
        retransmissionNumber: UInt8, maxTransportLatency: UInt16, presentationDelay: UInt32
    ) {
        self.cigID = cigID; self.cisID = cisID; self.sduInterval = sduInterval; self.framing = framing; self.phy = phy
        self.maxSDU = maxSDU; self.retransmissionNumber = retransmissionNumber
        self.maxTransportLatency = maxTransportLatency; self.presentationDelay = presentationDelay
    }

    init(_ r: inout ByteReader) throws(DecodeError) {
        self.init(
            cigID: try r.readUInt8("CIG_ID"), cisID: try r.readUInt8("CIS_ID"), sduInterval: try r.readU24("SDU_Interval"),
            framing: .init(rawValue: try r.readUInt8("Framing")), phy: try r.readUInt8("PHY"),
            maxSDU: try r.readUInt16(.little, "Max_SDU"), retransmissionNumber: try r.readUInt8("Retransmission_Number"),
            maxTransportLatency: try r.readUInt16(.little, "Max_Transport_Latency"),
            presentationDelay: try r.readU24("Presentation_Delay"))
    }

    func encode(into w: inout ByteWriter) {
        w.writeUInt8(cigID); w.writeUInt8(cisID); w.writeU24(sduInterval); w.writeUInt8(framing.rawValue); w.writeUInt8(phy)
        w.writeUInt16(maxSDU); w.writeUInt8(retransmissionNumber); w.writeUInt16(maxTransportLatency); w.writeU24(presentationDelay)
    }

    /// The BAP unicast QoS preset (`16_2_1`) these values equal.
    public var preset: String? {
        LEAudioPresets.unicastQoS(
            sduInterval: sduInterval, framing: framing.rawValue, maxSDU: maxSDU,
            rtn: retransmissionNumber, latency: maxTransportLatency)?.name
    }

    func describe<S: FieldSink>(into sink: inout S) {
        sink.int("cig_id", Int(cigID)); sink.int("cis_id", Int(cisID))
        sink.int("sdu_interval", Int(sduInterval))
        sink.int("framing", Int(framing.rawValue)); sink.string("framing_name", framing.name)
        sink.int("phy", Int(phy)); sink.string("phy_name", LEAudioPHY.names(phy))
        sink.int("max_sdu", Int(maxSDU)); sink.int("retransmission_number", Int(retransmissionNumber))
        sink.int("max_transport_latency", Int(maxTransportLatency)); sink.int("presentation_delay", Int(presentationDelay))
        if let p = preset { sink.string("qos_preset", p) }
    }
}

/// A codec and its Codec_Specific_Configuration as ASCS and BASE carry them: LTVs for
/// every codec but a vendor's, whose bytes are its own (BAP 1.0.1 §4.3.2).
public struct LEAudioCodecSetting: Hashable, Sendable {
    public var codecID: LEAudioCodecID
    public var configurationBytes: [UInt8]
    public init(codecID: LEAudioCodecID, configurationBytes: [UInt8]) { self.codecID = codecID; self.configurationBytes = configurationBytes }
    public var configuration: LEAudioCodecConfiguration? { codecID.isVendor ? nil : LEAudioCodecConfiguration(bytes: configurationBytes) }

    func describe<S: FieldSink>(into sink: inout S) {
        sink.object("codec_id") { s in codecID.describe(into: &s) }
        if let c = configuration {
            sink.object("codec_specific_configuration") { s in c.describe(into: &s) }
        } else {
            sink.hex("codec_specific_configuration", configurationBytes)
        }
    }
    var summary: String {
        codecID.summary + (configuration.map { c in c.summary.isEmpty ? "" : " " + c.summary } ?? "")
    }
}

/// ASCS 1.0 §4.1 Sink ASE / Source ASE characteristic value (0x2BC4 / 0x2BC5): ASE_ID,
/// ASE_State and the state's Additional_ASE_Parameters (§4.3 Tables 4.3-4.5).
public struct ASEStateValue: Hashable, Sendable, FieldDescribable {
    /// §4.3.1 Table 4.3: the Codec Configured state's parameters.
    public struct CodecConfigured: Hashable, Sendable {
        public var framing: UInt8
        public var preferredPHY: UInt8
        public var preferredRetransmissionNumber: UInt8
        public var maxTransportLatency: UInt16
        public var presentationDelayMin: UInt32
        public var presentationDelayMax: UInt32
        public var preferredPresentationDelayMin: UInt32
        public var preferredPresentationDelayMax: UInt32
        public var codec: LEAudioCodecSetting
    }
    /// §4.3.3 Table 4.5: Enabling, Streaming, Disabling.
    public struct Enabled: Hashable, Sendable {
        public var cigID: UInt8
        public var cisID: UInt8
        public var metadata: LEAudioMetadata
    }

    public var aseID: UInt8
    public var state: ASEState
    public var codecConfigured: CodecConfigured?
    public var qos: ASEQoS?
    public var enabled: Enabled?
    /// Bytes after the state's parameters, or parameters of an unknown state.
    public var extra: [UInt8] = []
    public var error: DecodeError?

    public init(aseID: UInt8, state: ASEState, codecConfigured: CodecConfigured? = nil, qos: ASEQoS? = nil, enabled: Enabled? = nil) {
        self.aseID = aseID; self.state = state; self.codecConfigured = codecConfigured; self.qos = qos; self.enabled = enabled
    }

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        aseID = 0; state = .idle
        do throws(DecodeError) {
            aseID = try r.readUInt8("ASE_ID")
            state = ASEState(rawValue: try r.readUInt8("ASE_State"))
            switch state.rawValue {
            case 1:
                let framing = try r.readUInt8("Framing"), phy = try r.readUInt8("Preferred_PHY"), rtn = try r.readUInt8("Preferred_Retransmission_Number")
                let lat = try r.readUInt16(.little, "Max_Transport_Latency")
                let a = try r.readU24("Presentation_Delay_Min"), b = try r.readU24("Presentation_Delay_Max")
                let c = try r.readU24("Preferred_Presentation_Delay_Min"), d = try r.readU24("Preferred_Presentation_Delay_Max")
                let codec = try LEAudioCodecID(&r)
                let n = Int(try r.readUInt8("Codec_Specific_Configuration_Length"))
                let cfg = Array(try r.readBytes(n, "Codec_Specific_Configuration"))
                codecConfigured = CodecConfigured(
                    framing: framing, preferredPHY: phy, preferredRetransmissionNumber: rtn, maxTransportLatency: lat,
                    presentationDelayMin: a, presentationDelayMax: b, preferredPresentationDelayMin: c,
                    preferredPresentationDelayMax: d, codec: LEAudioCodecSetting(codecID: codec, configurationBytes: cfg))
            case 2: qos = try ASEQoS(&r)
            case 3, 4, 5:
                let cig = try r.readUInt8("CIG_ID"), cis = try r.readUInt8("CIS_ID")
                let n = Int(try r.readUInt8("Metadata_Length"))
                enabled = Enabled(cigID: cig, cisID: cis, metadata: LEAudioMetadata(bytes: try r.readBytes(n, "Metadata")))
            default: break
            }
            extra = Array(r.readRemaining())
        } catch {
            self.error = error.inLayer("ascs")
        }
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.writeUInt8(aseID); w.writeUInt8(state.rawValue)
        if let c = codecConfigured {
            w.writeUInt8(c.framing); w.writeUInt8(c.preferredPHY); w.writeUInt8(c.preferredRetransmissionNumber)
            w.writeUInt16(c.maxTransportLatency); w.writeU24(c.presentationDelayMin); w.writeU24(c.presentationDelayMax)
            w.writeU24(c.preferredPresentationDelayMin); w.writeU24(c.preferredPresentationDelayMax)
            c.codec.codecID.encode(into: &w); w.writeUInt8(UInt8(c.codec.configurationBytes.count)); w.writeBytes(c.codec.configurationBytes)
        }
        qos?.encode(into: &w)
        if let e = enabled {
            let m = e.metadata.encode()
            w.writeUInt8(e.cigID); w.writeUInt8(e.cisID); w.writeUInt8(UInt8(m.count)); w.writeBytes(m)
        }
        w.writeBytes(extra)
        return w.bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("ase_id", Int(aseID)); sink.int("ase_state", Int(state.rawValue)); sink.string("ase_state_name", state.name)
        if let c = codecConfigured {
            sink.int("framing", Int(c.framing)); sink.int("preferred_phy", Int(c.preferredPHY))
            sink.int("preferred_retransmission_number", Int(c.preferredRetransmissionNumber))
            sink.int("max_transport_latency", Int(c.maxTransportLatency))
            sink.int("presentation_delay_min", Int(c.presentationDelayMin)); sink.int("presentation_delay_max", Int(c.presentationDelayMax))
            sink.int("preferred_presentation_delay_min", Int(c.preferredPresentationDelayMin))
            sink.int("preferred_presentation_delay_max", Int(c.preferredPresentationDelayMax))
            c.codec.describe(into: &sink)
        }
        qos?.describe(into: &sink)
        if let e = enabled {
            sink.int("cig_id", Int(e.cigID)); sink.int("cis_id", Int(e.cisID))
            sink.object("metadata") { s in e.metadata.describe(into: &s) }
        }
        if !extra.isEmpty { sink.hex("extra", extra) }
        if let error { sink.string("error", error.message) }
    }

    public var summary: String {
        var s = "ASE \(aseID) " + state.name
        if let c = codecConfigured { s += " " + c.codec.summary }
        if let q = qos { s += " CIG \(q.cigID) CIS \(q.cisID) \(q.sduInterval) us \(q.maxSDU) B" + (q.preset.map { " " + $0 } ?? "") }
        if let e = enabled { s += " CIG \(e.cigID) CIS \(e.cisID)" }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

/// ASCS 1.0 §5 ASE Control Point operation (0x2BC6 write): opcode, Number_of_ASEs, and per
/// ASE the operation's parameters (§5.1-§5.8).
public struct ASEControlPointOperation: Hashable, Sendable, FieldDescribable {
    public struct Entry: Hashable, Sendable {
        public var aseID: UInt8
        /// Config Codec (§5.1).
        public var targetLatency: ASETargetLatency?
        public var targetPHY: UInt8?
        public var codec: LEAudioCodecSetting?
        /// Config QoS (§5.2).
        public var qos: ASEQoS?
        /// Enable, Update Metadata (§5.3, §5.7).
        public var metadata: LEAudioMetadata?
        public init(
            aseID: UInt8, targetLatency: ASETargetLatency? = nil, targetPHY: UInt8? = nil, codec: LEAudioCodecSetting? = nil,
            qos: ASEQoS? = nil, metadata: LEAudioMetadata? = nil
        ) {
            self.aseID = aseID; self.targetLatency = targetLatency; self.targetPHY = targetPHY; self.codec = codec; self.qos = qos; self.metadata = metadata
        }
    }

    public var opcode: ASEOpcode
    public var entries: [Entry]
    public var error: DecodeError?

    public init(opcode: ASEOpcode, entries: [Entry]) { self.opcode = opcode; self.entries = entries }

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        opcode = ASEOpcode(rawValue: 0); entries = []
        do throws(DecodeError) {
            opcode = ASEOpcode(rawValue: try r.readUInt8("Opcode"))
            guard (1...8).contains(opcode.rawValue) else {
                throw LEAudioError.make(.unsupported, 0, "opcode \(Hex.fixed(UInt64(opcode.rawValue), width: 2)) not in ASCS")
            }
            let n = Int(try r.readUInt8("Number_of_ASEs"))
            for _ in 0..<n {
                var e = Entry(aseID: try r.readUInt8("ASE_ID"))
                switch opcode.rawValue {
                case 1:
                    e.targetLatency = ASETargetLatency(rawValue: try r.readUInt8("Target_Latency"))
                    e.targetPHY = try r.readUInt8("Target_PHY")
                    let id = try LEAudioCodecID(&r)
                    let len = Int(try r.readUInt8("Codec_Specific_Configuration_Length"))
                    e.codec = LEAudioCodecSetting(codecID: id, configurationBytes: Array(try r.readBytes(len, "Codec_Specific_Configuration")))
                case 2:
                    // The ASE_ID was read: QoS parameters follow it.
                    e.qos = try ASEQoS(&r)
                case 3, 7:
                    let len = Int(try r.readUInt8("Metadata_Length"))
                    e.metadata = LEAudioMetadata(bytes: try r.readBytes(len, "Metadata"))
                default: break
                }
                entries.append(e)
            }
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex, "\(r.readableBytes) bytes after the operation") }
        } catch {
            self.error = error.inLayer("ascs")
        }
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.writeUInt8(opcode.rawValue); w.writeUInt8(UInt8(entries.count))
        for e in entries {
            w.writeUInt8(e.aseID)
            if let t = e.targetLatency { w.writeUInt8(t.rawValue) }
            if let p = e.targetPHY { w.writeUInt8(p) }
            if let c = e.codec { c.codecID.encode(into: &w); w.writeUInt8(UInt8(c.configurationBytes.count)); w.writeBytes(c.configurationBytes) }
            e.qos?.encode(into: &w)
            if let m = e.metadata { let b = m.encode(); w.writeUInt8(UInt8(b.count)); w.writeBytes(b) }
        }
        return w.bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(opcode.rawValue)); sink.string("opcode_name", opcode.name)
        sink.int("number_of_ases", entries.count)
        sink.array("ases") { s in
            for e in entries {
                s.object("") { s in
                    s.int("ase_id", Int(e.aseID))
                    if let t = e.targetLatency { s.int("target_latency", Int(t.rawValue)); s.string("target_latency_name", t.name) }
                    if let p = e.targetPHY { s.int("target_phy", Int(p)) }
                    e.codec?.describe(into: &s)
                    // ASE_ID already written; the rest of the QoS fields.
                    e.qos?.describe(into: &s)
                    if let m = e.metadata { s.object("metadata") { s in m.describe(into: &s) } }
                }
            }
        }
        if let error { sink.string("error", error.message) }
    }

    public var summary: String {
        var s = "ASE CP " + opcode.name + " ASE " + entries.map { String($0.aseID) }.joined(separator: ",")
        if let c = entries.first?.codec { s += " " + c.summary }
        if let q = entries.first?.qos { s += " CIG \(q.cigID) CIS \(q.cisID)" + (q.preset.map { " " + $0 } ?? "") }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

/// ASCS 1.0 §5 Table 5.2: the ASE Control Point notification after an operation: opcode,
/// Number_of_ASEs (0xFF for Unsupported Opcode / Invalid Length), per ASE ID, code, reason.
public struct ASEControlPointNotification: Hashable, Sendable, FieldDescribable {
    public struct Response: Hashable, Sendable {
        public var aseID: UInt8
        public var code: ASEResponseCode
        public var reason: ASEReason
        public init(aseID: UInt8, code: ASEResponseCode, reason: ASEReason) { self.aseID = aseID; self.code = code; self.reason = reason }
    }
    public var opcode: ASEOpcode
    public var numberOfASEs: UInt8
    public var responses: [Response]
    public var error: DecodeError?

    public init(opcode: ASEOpcode, numberOfASEs: UInt8? = nil, responses: [Response]) {
        self.opcode = opcode; self.numberOfASEs = numberOfASEs ?? UInt8(responses.count); self.responses = responses
    }

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        opcode = ASEOpcode(rawValue: 0); numberOfASEs = 0; responses = []
        do throws(DecodeError) {
            opcode = ASEOpcode(rawValue: try r.readUInt8("Opcode"))
            numberOfASEs = try r.readUInt8("Number_of_ASEs")
            // 0xFF: one response for the whole operation follows (§5, Unsupported Opcode / Invalid Length).
            let n = numberOfASEs == 0xFF ? 1 : Int(numberOfASEs)
            for _ in 0..<n {
                responses.append(
                    Response(
                        aseID: try r.readUInt8("ASE_ID"), code: ASEResponseCode(rawValue: try r.readUInt8("Response_Code")),
                        reason: ASEReason(rawValue: try r.readUInt8("Reason"))))
            }
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex, "\(r.readableBytes) bytes after the responses") }
        } catch {
            self.error = error.inLayer("ascs")
        }
    }

    public func encode() -> [UInt8] {
        var out: [UInt8] = [opcode.rawValue, numberOfASEs]
        for x in responses { out += [x.aseID, x.code.rawValue, x.reason.rawValue] }
        return out
    }

    public var failed: Bool { responses.contains { $0.code != .success } }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(opcode.rawValue)); sink.string("opcode_name", opcode.name)
        sink.int("number_of_ases", Int(numberOfASEs))
        sink.array("responses") { s in
            for x in responses {
                s.object("") { s in
                    s.int("ase_id", Int(x.aseID))
                    s.int("response_code", Int(x.code.rawValue)); s.string("response_code_name", x.code.name)
                    s.int("reason", Int(x.reason.rawValue)); s.string("reason_name", x.reason.name(for: x.code))
                }
            }
        }
        if let error { sink.string("error", error.message) }
    }

    public var summary: String {
        var s = "ASE CP response " + opcode.name + ": "
        s += responses.map { "ASE \($0.aseID) " + $0.code.name + ($0.reason.rawValue == 0 ? "" : " (" + $0.reason.name(for: $0.code) + ")") }.joined(separator: ", ")
        if let error { s += " [" + error.message + "]" }
        return s
    }
}
