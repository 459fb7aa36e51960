import BluesiftWire
import BluesiftCapture

// The Classic (BR/EDR) protocols above L2CAP as modules (docs/DESIGN.md, "Adding a
// protocol"): each declares its layers and PSM here; they share one per-connection state
// (`ClassicState`: SDP names RFCOMM channels, AVDTP signalling configures media) and one
// stats collector (`ClassicStats`).

/// SDP (Core 5.4 Vol 3 Part B), on PSM 0x0001.
public enum SDP: ProtocolModule {
    public static let layers = [LayerSpec("sdp", group: "classic", specificity: 6)]
    public static let carriers: [Carrier] = [.psm(0x0001)]
    public static let layer = FrameLayer.registered("sdp")
    public static var collector: (any StatsCollector.Type)? { ClassicStats.self }
    public static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        ClassicDecode.sdp(pdu, x.state(ClassicState.self, ClassicState.init), x, side: x.side)
    }
}

/// RFCOMM (RFCOMM 1.2 / TS 07.10), on PSM 0x0003, and the AT lines of HFP/HSP it carries.
public enum RFCOMM: ProtocolModule {
    public static let layers = [
        LayerSpec("rfcomm", group: "classic", specificity: 6),
        // Rides on RFCOMM frames already counted.
        LayerSpec("hfp", group: "classic", specificity: 7, counted: false)
    ]
    public static let carriers: [Carrier] = [.psm(0x0003)]
    public static let layer = FrameLayer.registered("rfcomm")
    public static let hfp = FrameLayer.registered("hfp")
    public static var collector: (any StatsCollector.Type)? { ClassicStats.self }
    public static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        ClassicDecode.rfcomm(pdu, x.state(ClassicState.self, ClassicState.init), x, side: x.side, x.record, &f)
    }
}

/// AVDTP (AVDTP 1.3), on PSM 0x0019: the first channel signals (§5.4.2), later ones carry
/// A2DP media.
public enum AVDTP: ProtocolModule {
    public static let layers = [LayerSpec("avdtp", group: "classic", specificity: 6)]
    public static let carriers: [Carrier] = [.psm(0x0019)]
    public static let layer = FrameLayer.registered("avdtp")
    public static var collector: (any StatsCollector.Type)? { ClassicStats.self }
    public static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        let c = x.state(ClassicState.self, ClassicState.init)
        if c.avdtpSignalling == nil { c.avdtpSignalling = x.bearer }
        guard c.avdtpSignalling == x.bearer else { return AVDTPMediaPacket(bytes: pdu, codecType: c.codec?.codecType) }
        var sig = AVDTPSignal(bytes: pdu)
        if sig.packetType != 0, sig.error == nil { sig = ClassicDecode.avdtpParts(sig, c, x, side: x.side, x.record, &f) }
        ClassicDecode.avdtp(sig, c, x, side: x.side, x.record)
        return sig
    }
}

/// AVCTP (AVCTP 1.4) carrying AVRCP (AVRCP 1.6), on PSM 0x0017 (control) and 0x001B (browsing).
public enum AVCTP: ProtocolModule {
    public static let layers = [LayerSpec("avrcp", group: "classic", specificity: 6)]
    public static let carriers: [Carrier] = [.psm(0x0017), .psm(0x001B)]
    public static let layer = FrameLayer.registered("avrcp")
    public static var collector: (any StatsCollector.Type)? { ClassicStats.self }
    public static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        let c = x.state(ClassicState.self, ClassicState.init)
        let side = x.side
        var p = AVCTPPDU(bytes: pdu, browsing: x.carrier == .psm(0x001B))
        if p.packetType != 0, p.error == nil, !p.browsing { p = ClassicDecode.avctpParts(p, pdu, c, x, side: side, x.record, &f) }
        if p.error == nil, p.packetType == 0 || p.reassembled != nil, !p.browsing {
            if p.avrcpPacketType != 0 { p = ClassicDecode.avrcpFragments(p, c, x, side: side, x.record, &f) } else if p.pduID?.rawValue == 0x41, !p.isResponse { c.avrcpParts[Int(L2CAPChannels.other(side))] = nil } // AbortContinuingResponse
        }
        if p.pid == 0x110E || p.pid == 0x110C, !p.isResponse {
            x.profile("AVRCP", role: side == 0 ? "controller" : side == 1 ? "target" : nil)
        }
        return p
    }
}

// MARK: layer values

extension SDPPDU: ModuleLayer {
    public var layers: DecodedFrame.Layers { SDP.layer.bit }
    public func name(_ layer: FrameLayer) -> String { name }
    public func summary(_ layer: FrameLayer) -> String { summary }
    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key)); describe(into: &w); w.endObject()
    }
}

extension RFCOMMFrame: ModuleLayer {
    public var layers: DecodedFrame.Layers { at.isEmpty ? RFCOMM.layer.bit : RFCOMM.layer.bit.union(RFCOMM.hfp.bit) }
    /// The `hfp` layer's name is its first AT line's command ("AT+BRSF", "+CIND").
    public func name(_ layer: FrameLayer) -> String {
        guard layer == RFCOMM.hfp else { return name }
        return at.first.map { ($0.isCommand ? "AT" : "") + $0.command } ?? ""
    }
    public func summary(_ layer: FrameLayer) -> String { summary }
    /// `rfcomm`: the frame's object; `hfp`: its AT lines, an array.
    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        if layer == RFCOMM.hfp {
            w.beginArray(.literal(layer.key))
            for l in at { w.beginObject(""); l.describe(into: &w); w.endObject() }
            w.endArray()
        } else {
            w.beginObject(.literal(layer.key)); describe(into: &w); w.endObject()
        }
    }
}

extension AVDTPSignal: ModuleLayer {
    public var layers: DecodedFrame.Layers { AVDTP.layer.bit }
    public func name(_ layer: FrameLayer) -> String { name }
    public func summary(_ layer: FrameLayer) -> String { summary }
    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key)); describe(into: &w); w.endObject()
    }
}

extension AVDTPMediaPacket: ModuleLayer {
    public var layers: DecodedFrame.Layers { AVDTP.layer.bit }
    public func name(_ layer: FrameLayer) -> String { "Media" }
    public func summary(_ layer: FrameLayer) -> String { summary }
    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key)); describe(into: &w); w.endObject()
    }
    public var inSequence: Bool { false }
}

extension AVCTPPDU: ModuleLayer {
    public var layers: DecodedFrame.Layers { AVCTP.layer.bit }
    public func name(_ layer: FrameLayer) -> String { name }
    public func summary(_ layer: FrameLayer) -> String { summary }
    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key)); describe(into: &w); w.endObject()
    }
}

/// Per-connection state of the Classic modules (shared by SDP, RFCOMM, AVDTP and AVCTP), created
/// on the first Classic PDU (LE-only connections never allocate it). Bounded: a few small tables per connection.
final class ClassicState {
    /// SDP attribute lists split by continuation state, by responder side (§4.6-§4.7).
    var sdpLists: [[UInt8]] = [[], [], []]
    /// (serving side << 8 | RFCOMM server channel) → service name, from the SDP records each
    /// side's responses describe: both sides may serve the same channel number.
    var channelNames: [UInt16: String] = [:]
    /// The side that opened the RFCOMM multiplexer (SABM on DLCI 0): a DLCI's direction bit
    /// says whose server channel it is (RFCOMM 1.2 §5.4 / TS 07.10 §5.4.3.1).
    var muxInitiator: UInt8?
    /// The last SDP search each side sent: transaction id and the first UUID's name.
    var searched: [(tid: UInt16, name: String)?] = [nil, nil]
    /// AT line assembly per (side, DLCI).
    var atLines: [UInt16: ATLineSplitter] = [:]
    /// +CIND indicator names, in order.
    var indicators: [String] = []
    /// The AVDTP signalling channel's bearer (the first AVDTP channel, AVDTP 1.3 §5.4.2);
    /// later AVDTP channels carry media.
    var avdtpSignalling: UInt16?
    /// SEP types by (responder side, SEID) from Discover responses: true = sink.
    var sepIsSink: [UInt16: Bool] = [:]
    /// The configured codec (Set Configuration), for media packets and `info`.
    var codec: A2DPCodec?
    /// AVDTP signalling (AVDTP 1.3 §8.4.2) and AVCTP control (AVCTP 1.4 §6.1.2) messages being
    /// reassembled, by sending side.
    var avdtpParts: [MessageParts?] = [nil, nil, nil]
    var avctpParts: [MessageParts?] = [nil, nil, nil]
    /// AVRCP vendor-dependent responses sent in fragments (AVRCP 1.6 §6.5.1), by sending side.
    var avrcpParts: [MessageParts?] = [nil, nil, nil]
    static let maxEntries = 64
    /// Largest reassembled AVDTP/AVCTP message kept (a Get All Capabilities response with
    /// every vendor codec is well under 1 KB); past it the message is dropped with a note.
    static let maxMessage = 16_384
}

/// A fragmented message being put together: the single-packet header it will get, the data
/// so far, and how many packets the start packet announced (nil: AVRCP fragments do not say).
struct MessageParts {
    var header: [UInt8]
    var data: [UInt8] = []
    var announced: Int?
    var packets = 1
    var transaction: UInt8
    var startFrame: Int
    /// Past `ClassicState.maxMessage`: data dropped, the end packet only closes it.
    var overflow = false
}

/// The Classic modules' decoding, with their shared state (`ClassicState`).
enum ClassicDecode {
    static func sdp(_ payload: UnsafeRawBufferPointer, _ c: ClassicState, _ x: ModuleContext, side: UInt8) -> SDPPDU {
        var p = SDPPDU(bytes: payload)
        // A request's search pattern names what its response's records are, when a record
        // carries no Service Class ID List (the attribute list asked for only the protocols).
        if p.error == nil, let pattern = p.searchPattern, let uuid = SDPDataElement.uuids(pattern).first, side < 2 {
            c.searched[Int(side)] = (p.transactionID, SDPDataElement.uuidName(uuid))
        }
        guard p.error == nil, p.pduID.carriesAttributeLists, let part = p.attributeBytes else { return p }
        let i = Int(side)
        if p.isFragment {
            if c.sdpLists[i].count + part.count <= 65_536 { c.sdpLists[i] += part } else { c.sdpLists[i] = [] }
            return p
        }
        if c.sdpLists[i].isEmpty {
            p.complete = part
        } else {
            c.sdpLists[i] += part
            // Kept until the next decode call (the frame borrows it).
            p.complete = x.hold(c.sdpLists[i])
            c.sdpLists[i] = []
        }
        if let whole = p.complete {
            for rec in SDPServiceRecord.records(whole) {
                if let ch = rec.rfcommChannel, c.channelNames.count < ClassicState.maxEntries {
                    let asked = side < 2 ? c.searched[Int(1 - side)].flatMap { $0.tid == p.transactionID ? $0.name : nil } : nil
                    c.channelNames[UInt16(side) << 8 | UInt16(ch)] = rec.serviceClasses.first.map(SDPDataElement.uuidName) ?? rec.serviceName ?? asked ?? "channel \(ch)"
                }
            }
        }
        return p
    }

    static func rfcomm(
        _ payload: UnsafeRawBufferPointer, _ c: ClassicState, _ x: ModuleContext, side: UInt8,
        _ record: CaptureRecord, _ f: inout DecodedFrame
    ) -> RFCOMMFrame {
        var fr = RFCOMMFrame(bytes: payload)
        guard fr.dlci != 0 else {
            if fr.frameType == .sabm, c.muxInitiator == nil, side < 2 { c.muxInitiator = side }
            return fr
        }
        fr.serviceName = serviceName(fr, c)
        guard fr.frameType == .uih, !fr.information.isEmpty else { return fr }
        let name = fr.serviceName ?? ""
        // AT lines on channels SDP named Handsfree/Headset; on channels SDP did not name, only
        // text that starts like HFP's extended commands ("AT+", "\r\n+"): serial-port devices
        // (ELM327 OBD dongles) speak plain AT too.
        let hfp =
            name.hasPrefix("Handsfree") || name.hasPrefix("Headset")
            || (name.isEmpty
                && (c.atLines[UInt16(side) << 8 | UInt16(fr.dlci)] != nil
                    || (ATLineSplitter.isText(fr.information) && looksLikeHFP(fr.information))))
        guard hfp else {
            x.profile(name == "Serial Port" ? "SPP" : "RFCOMM channel \(fr.channel)" + (name.isEmpty ? "" : " (" + name + ")"), role: nil)
            return fr
        }
        let key = UInt16(side) << 8 | UInt16(fr.dlci)
        guard c.atLines[key] != nil || c.atLines.count < ClassicState.maxEntries else { return fr }
        var splitter = c.atLines[key] ?? ATLineSplitter()
        let lines = splitter.feed(fr.information)
        c.atLines[key] = splitter
        for text in lines {
            let isCommand = text.count >= 2 && text.prefix(2).uppercased() == "AT"
            var l = ATLine(line: text, isCommand: isCommand)
            if let names = l.indicatorNames, l.kind == .result { c.indicators = Array(names.prefix(32)) }
            if let i = l.indicatorIndex, i >= 1, i <= c.indicators.count { l.indicator = c.indicators[i - 1] }
            let hs = name.hasPrefix("Headset") ? "HSP" : "HFP"
            if isCommand { x.profile(hs, role: side == 0 ? "HF" : side == 1 ? "AG" : nil) }
            if l.command == "+BCS", let codec = l.codecs?.first { x.profileDetail(hs, detail: "codec " + codec) }
            fr.at.append(l)
        }
        return fr
    }

    /// The service on a DLCI's server channel, from the SDP record of the side that holds the
    /// channel: the multiplexer's initiator when the direction bit (the DLCI's low bit) is 1,
    /// the other side when it is 0. Unknown sides fall back to any record for the channel.
    static func serviceName(_ fr: RFCOMMFrame, _ c: ClassicState) -> String? {
        let ch = UInt16(fr.channel)
        if let m = c.muxInitiator {
            let server = fr.dlci & 1 == 1 ? m : 1 - m
            if let n = c.channelNames[UInt16(server) << 8 | ch] { return n }
        }
        return c.channelNames[2 << 8 | ch] ?? c.channelNames[0 << 8 | ch] ?? c.channelNames[1 << 8 | ch]
    }

    /// "AT+…" from the hands-free unit, or "\r\n+…" from the audio gateway.
    static func looksLikeHFP(_ d: UnsafeRawBufferPointer) -> Bool {
        if d.count >= 3, d[0] | 0x20 == 0x61, d[1] | 0x20 == 0x74, d[2] == 0x2B { return true }
        return d.count >= 3 && d[0] == 0x0D && d[1] == 0x0A && d[2] == 0x2B
    }

    static func avdtp(_ sig: AVDTPSignal, _ c: ClassicState, _ x: ModuleContext, side: UInt8, _ record: CaptureRecord) {
        guard sig.packetType == 0, let id = sig.signalID else { return }
        if id == .discover, sig.messageType == .accept {
            AVDTPCapability.forEachSEP(sig.parameters) { seid, _, _, sink in
                if c.sepIsSink.count < ClassicState.maxEntries { c.sepIsSink[UInt16(side) << 8 | UInt16(seid)] = sink }
            }
        }
        if id == .setConfiguration || id.rawValue == 0x05, sig.messageType == .command, let codec = sig.codec, let acp = sig.acpSEID {
            c.codec = codec
            // The acceptor's SEP type tells the roles: configuring a sink makes the sender the source.
            let peer = L2CAPChannels.other(side)
            let acpSink = c.sepIsSink[UInt16(peer) << 8 | UInt16(acp)] ?? true
            let hostIsSource: Bool? = side == 2 ? nil : (side == 0) == acpSink
            x.profile("A2DP", role: hostIsSource.map { $0 ? "source" : "sink" })
            x.profileDetail("A2DP", detail: codec.summary)
        }
    }

    /// AVDTP 1.3 §8.4.2: a start packet (with the number of packets and the signal id), then
    /// continue packets, then an end packet, each with the same transaction label. The end
    /// packet's frame carries the whole message, decoded as the single packet it makes.
    static func avdtpParts(
        _ sig: AVDTPSignal, _ c: ClassicState, _ x: ModuleContext, side: UInt8, _ record: CaptureRecord,
        _ f: inout DecodedFrame
    ) -> AVDTPSignal {
        let header = sig.signalID.map { [sig.transaction << 4 | sig.messageType.rawValue, $0.rawValue] } ?? []
        guard
            let whole = joinParts(
                &c.avdtpParts[Int(side)], type: sig.packetType, transaction: sig.transaction,
                announced: sig.numberOfPackets ?? 0, header: header, data: sig.parameters,
                layer: AVDTP.layer.key.description, record, &f)
        else { return sig }
        var out = AVDTPSignal(bytes: x.hold(whole.bytes))
        out.reassembled = whole.packets
        out.startFrame = whole.startFrame
        return out
    }

    /// AVCTP 1.4 §6.1.2: the start packet has the number of packets and the PID, continue and
    /// end packets a one-octet header; the whole message gets a single packet's header.
    static func avctpParts(
        _ p: AVCTPPDU, _ payload: UnsafeRawBufferPointer, _ c: ClassicState, _ x: ModuleContext, side: UInt8,
        _ record: CaptureRecord, _ f: inout DecodedFrame
    ) -> AVCTPPDU {
        let start = p.packetType == 1
        let skip = start ? 4 : 1
        guard payload.count >= skip else { return p }
        let h0 = payload[0] & 0xF3 // packet type bits cleared: a single packet
        let header: [UInt8] = start ? [h0, payload[2], payload[3]] : []
        let data = UnsafeRawBufferPointer(rebasing: payload[skip...])
        guard
            let whole = joinParts(
                &c.avctpParts[Int(side)], type: p.packetType, transaction: p.transaction,
                announced: start ? Int(payload[1]) : 0, header: header, data: data,
                layer: AVCTP.layer.key.description, record, &f)
        else { return p }
        var out = AVCTPPDU(bytes: x.hold(whole.bytes), browsing: false)
        out.reassembled = whole.packets
        out.startFrame = whole.startFrame
        return out
    }

    /// AVRCP 1.6 §6.5.1: a vendor-dependent response too long for one AVCTP message comes as
    /// a start fragment, then (each asked for by RequestContinuingResponse, so each with its
    /// own transaction label) continue fragments and an end fragment of the same PDU ID. The
    /// end fragment's frame carries the whole response, decoded as a single one.
    static func avrcpFragments(
        _ p: AVCTPPDU, _ c: ClassicState, _ x: ModuleContext, side: UInt8, _ record: CaptureRecord,
        _ f: inout DecodedFrame
    ) -> AVCTPPDU {
        guard let pdu = p.pduID, let pid = p.pid, let company = p.companyID, let ctype = p.ctype, let subunit = p.subunitType else { return p }
        // The single response it will become: AVCTP header (one packet), AV/C frame (subunit
        // id 0: AVRCP's panel subunit is 0x48), packet type 0; label and length set at the end.
        let header: [UInt8] =
            p.avrcpPacketType != 1
            ? []
            : [
                0, UInt8(pid >> 8), UInt8(pid & 0xFF), ctype.rawValue, subunit << 3, 0x00,
                UInt8(company >> 16), UInt8(company >> 8 & 0xFF), UInt8(company & 0xFF), pdu.rawValue, 0, 0, 0
            ]
        guard
            var whole = joinParts(
                &c.avrcpParts[Int(side)], type: p.avrcpPacketType, transaction: pdu.rawValue, announced: nil,
                header: header, data: p.parameters, layer: AVCTP.layer.key.description, naming: .fragments(pdu.name), record, &f)
        else { return p }
        let n = whole.bytes.count - 13
        whole.bytes[11] = UInt8(n >> 8); whole.bytes[12] = UInt8(n & 0xFF)
        whole.bytes[0] = p.transaction << 4 | (p.isResponse ? 2 : 0) // this frame's own label: the answer to its request
        var out = AVCTPPDU(bytes: x.hold(whole.bytes), browsing: false)
        out.reassembled = whole.packets
        out.startFrame = whole.startFrame
        out.fragments = true
        return out
    }

    /// How notes name the parts of a split message: AVDTP/AVCTP packets of a message, told
    /// apart by transaction label; AVRCP fragments of a response, by PDU.
    enum PartNaming {
        case packets, fragments(String)
        var unit: String { if case .packets = self { "packet" } else { "fragment" } }
        var whole: String { if case .packets = self { "message" } else { "response" } }
    }

    /// One part of a split message into `parts`; the whole message on a good end part.
    /// Problems (a continue or end part without its start, a start before the last message
    /// ended, a count that differs from the announced one, a message past the cap) are notes
    /// on the record; nothing is allocated beyond `ClassicState.maxMessage`. `announced` nil:
    /// the start part does not say how many follow.
    static func joinParts(
        _ parts: inout MessageParts?, type: UInt8, transaction: UInt8, announced: Int?,
        header: [UInt8], data: UnsafeRawBufferPointer, layer: String, naming: PartNaming = .packets,
        _ record: CaptureRecord, _ f: inout DecodedFrame
    ) -> (bytes: [UInt8], packets: Int, startFrame: Int)? {
        func note(_ m: String) { f.errors.append(DecodeError(layer: layer, code: .reassembly, offset: 0, message: m)) }
        let unit = naming.unit, whole = naming.whole
        if type == 1 {
            if let old = parts { note("start \(unit) before the \(whole) started in #\(old.startFrame) ended; that \(whole) is dropped") }
            parts = MessageParts(header: header, announced: announced, transaction: transaction, startFrame: record.frame)
        } else {
            guard parts != nil, parts!.transaction == transaction else {
                let which: String
                switch naming {
                case .packets: which = "(tid=\(transaction))"
                case .fragments(let pdu): which = "of \(pdu)"
                }
                note((type == 2 ? "continue" : "end") + " \(unit) \(which) without a start \(unit)")
                return nil
            }
            parts!.packets += 1
        }
        if !parts!.overflow {
            if parts!.data.count + data.count > ClassicState.maxMessage {
                parts!.overflow = true
                parts!.data = []
                note("\(whole) started in #\(parts!.startFrame) is over \(ClassicState.maxMessage) bytes: not reassembled")
            } else {
                parts!.data.append(contentsOf: data)
            }
        }
        guard type == 3, let done = parts else { return nil }
        parts = nil
        if done.overflow { return nil }
        if let n = done.announced, done.packets != n {
            note("\(done.packets) packets from #\(done.startFrame), the start packet announced \(n)")
        }
        return (done.header + done.data, done.packets, done.startFrame)
    }

}

extension FrameLayer {
    /// The Classic modules' layers by name (`--protocol sdp`, …).
    public static var sdp: FrameLayer { SDP.layer }
    public static var rfcomm: FrameLayer { RFCOMM.layer }
    public static var hfp: FrameLayer { RFCOMM.hfp }
    public static var avdtp: FrameLayer { AVDTP.layer }
    public static var avrcp: FrameLayer { AVCTP.layer }
}

extension DecodedFrame.Layers {
    /// Any Classic module layer (SDP, RFCOMM, HFP, AVDTP, AVRCP): `--protocol classic`.
    public static var anyClassic: DecodedFrame.Layers { DecodedFrame.Layers(.sdp, .rfcomm, .hfp, .avdtp, .avrcp) }
}
