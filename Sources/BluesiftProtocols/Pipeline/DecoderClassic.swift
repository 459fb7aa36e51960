import BluesiftWire
import BluesiftCapture

/// Per-connection state of the Classic layers, created on the first Classic PDU (LE-only
/// connections never allocate it). Bounded: a few small tables per connection.
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
    /// Profiles already recorded in the connection table.
    var recorded: Set<String> = []
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

extension ProtocolDecoder {
    /// PSMs whose PDUs have a Classic layer above L2CAP.
    @inline(__always)
    static func isClassicPSM(_ psm: UInt16) -> Bool {
        psm == 0x0001 || psm == 0x0003 || psm == 0x0017 || psm == 0x0019 || psm == 0x001B
    }

    /// An SDU (or B-frame information payload) on a Classic PSM → its layer (Core 5.4 Vol 3
    /// Part B SDP; RFCOMM 1.2; AVDTP 1.3; AVCTP 1.4/AVRCP 1.6).
    func decodeClassic(_ payload: UnsafeRawBufferPointer, psm: UInt16, bearer: UInt16, state s: ConnState,
                       side: UInt8, _ record: CaptureRecord, _ f: inout DecodedFrame) {
        let c = s.classic ?? { let n = ClassicState(); s.classic = n; return n }()
        let layer: ClassicLayer
        switch psm {
        case 0x0001: layer = .sdp(sdp(payload, c, side: side))
        case 0x0003: layer = .rfcomm(rfcomm(payload, c, side: side, record, &f))
        case 0x0019:
            if c.avdtpSignalling == nil { c.avdtpSignalling = bearer }
            if c.avdtpSignalling == bearer {
                var sig = AVDTPSignal(bytes: payload)
                if sig.packetType != 0, sig.error == nil { sig = avdtpParts(sig, c, side: side, record, &f) }
                avdtp(sig, c, side: side, record)
                layer = .avdtp(sig)
            } else {
                layer = .media(AVDTPMediaPacket(bytes: payload, codecType: c.codec?.codecType))
            }
        default:
            var p = AVCTPPDU(bytes: payload, browsing: psm == 0x001B)
            if p.packetType != 0, p.error == nil, !p.browsing { p = avctpParts(p, payload, c, side: side, record, &f) }
            if p.error == nil, p.packetType == 0 || p.reassembled != nil, !p.browsing {
                if p.avrcpPacketType != 0 { p = avrcpFragments(p, c, side: side, record, &f) }
                else if p.pduID?.rawValue == 0x41, !p.isResponse { c.avrcpParts[Int(L2CAPChannels.other(side))] = nil }   // AbortContinuingResponse
            }
            if p.pid == 0x110E || p.pid == 0x110C, !p.isResponse {
                profile(record, "AVRCP", role: side == 0 ? "controller" : side == 1 ? "target" : nil, c)
            }
            layer = .avrcp(p)
        }
        if let e = layer.error, !(e.code == .truncated && f.l2capStorage.truncated) { f.errors.append(e) }
        f.set(layer)
    }

    private func sdp(_ payload: UnsafeRawBufferPointer, _ c: ClassicState, side: UInt8) -> SDPPDU {
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
            p.complete = sdpWhole.hold(c.sdpLists[i])
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

    private func rfcomm(_ payload: UnsafeRawBufferPointer, _ c: ClassicState, side: UInt8,
                        _ record: CaptureRecord, _ f: inout DecodedFrame) -> RFCOMMFrame {
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
        let hfp = name.hasPrefix("Handsfree") || name.hasPrefix("Headset")
            || (name.isEmpty && (c.atLines[UInt16(side) << 8 | UInt16(fr.dlci)] != nil
                                 || (ATLineSplitter.isText(fr.information) && Self.looksLikeHFP(fr.information))))
        guard hfp else {
            profile(record, name == "Serial Port" ? "SPP" : "RFCOMM channel \(fr.channel)" + (name.isEmpty ? "" : " (" + name + ")"), role: nil, c)
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
            if isCommand { profile(record, hs, role: side == 0 ? "HF" : side == 1 ? "AG" : nil, c) }
            if l.command == "+BCS", let codec = l.codecs?.first { profileDetail(record, hs, detail: "codec " + codec) }
            fr.at.append(l)
        }
        return fr
    }

    /// The service on a DLCI's server channel, from the SDP record of the side that holds the
    /// channel: the multiplexer's initiator when the direction bit (the DLCI's low bit) is 1,
    /// the other side when it is 0. Unknown sides fall back to any record for the channel.
    private func serviceName(_ fr: RFCOMMFrame, _ c: ClassicState) -> String? {
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

    private func avdtp(_ sig: AVDTPSignal, _ c: ClassicState, side: UInt8, _ record: CaptureRecord) {
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
            profile(record, "A2DP", role: hostIsSource.map { $0 ? "source" : "sink" }, c)
            profileDetail(record, "A2DP", detail: codec.summary)
        }
    }

    /// AVDTP 1.3 §8.4.2: a start packet (with the number of packets and the signal id), then
    /// continue packets, then an end packet, each with the same transaction label. The end
    /// packet's frame carries the whole message, decoded as the single packet it makes.
    private func avdtpParts(_ sig: AVDTPSignal, _ c: ClassicState, side: UInt8, _ record: CaptureRecord,
                            _ f: inout DecodedFrame) -> AVDTPSignal {
        let header = sig.signalID.map { [sig.transaction << 4 | sig.messageType.rawValue, $0.rawValue] } ?? []
        guard let whole = joinParts(&c.avdtpParts[Int(side)], type: sig.packetType, transaction: sig.transaction,
                                    announced: sig.numberOfPackets ?? 0, header: header, data: sig.parameters,
                                    layer: "avdtp", record, &f) else { return sig }
        var out = AVDTPSignal(bytes: sdpWhole.hold(whole.bytes))
        out.reassembled = whole.packets
        out.startFrame = whole.startFrame
        return out
    }

    /// AVCTP 1.4 §6.1.2: the start packet has the number of packets and the PID, continue and
    /// end packets a one-octet header; the whole message gets a single packet's header.
    private func avctpParts(_ p: AVCTPPDU, _ payload: UnsafeRawBufferPointer, _ c: ClassicState, side: UInt8,
                            _ record: CaptureRecord, _ f: inout DecodedFrame) -> AVCTPPDU {
        let start = p.packetType == 1
        let skip = start ? 4 : 1
        guard payload.count >= skip else { return p }
        let h0 = payload[0] & 0xF3   // packet type bits cleared: a single packet
        let header: [UInt8] = start ? [h0, payload[2], payload[3]] : []
        let data = UnsafeRawBufferPointer(rebasing: payload[skip...])
        guard let whole = joinParts(&c.avctpParts[Int(side)], type: p.packetType, transaction: p.transaction,
                                    announced: start ? Int(payload[1]) : 0, header: header, data: data,
                                    layer: "avrcp", record, &f) else { return p }
        var out = AVCTPPDU(bytes: sdpWhole.hold(whole.bytes), browsing: false)
        out.reassembled = whole.packets
        out.startFrame = whole.startFrame
        return out
    }

    /// AVRCP 1.6 §6.5.1: a vendor-dependent response too long for one AVCTP message comes as
    /// a start fragment, then (each asked for by RequestContinuingResponse, so each with its
    /// own transaction label) continue fragments and an end fragment of the same PDU ID. The
    /// end fragment's frame carries the whole response, decoded as a single one.
    private func avrcpFragments(_ p: AVCTPPDU, _ c: ClassicState, side: UInt8, _ record: CaptureRecord,
                                _ f: inout DecodedFrame) -> AVCTPPDU {
        guard let pdu = p.pduID, let pid = p.pid, let company = p.companyID, let ctype = p.ctype, let subunit = p.subunitType else { return p }
        // The single response it will become: AVCTP header (one packet), AV/C frame (subunit
        // id 0: AVRCP's panel subunit is 0x48), packet type 0; label and length set at the end.
        let header: [UInt8] = p.avrcpPacketType != 1 ? [] : [0, UInt8(pid >> 8), UInt8(pid & 0xFF), ctype.rawValue, subunit << 3, 0x00,
                                                            UInt8(company >> 16), UInt8(company >> 8 & 0xFF), UInt8(company & 0xFF), pdu.rawValue, 0, 0, 0]
        guard var whole = joinParts(&c.avrcpParts[Int(side)], type: p.avrcpPacketType, transaction: pdu.rawValue, announced: nil,
                                    header: header, data: p.parameters, layer: "avrcp", naming: .fragments(pdu.name), record, &f)
        else { return p }
        let n = whole.bytes.count - 13
        whole.bytes[11] = UInt8(n >> 8); whole.bytes[12] = UInt8(n & 0xFF)
        whole.bytes[0] = p.transaction << 4 | (p.isResponse ? 2 : 0)   // this frame's own label: the answer to its request
        var out = AVCTPPDU(bytes: sdpWhole.hold(whole.bytes), browsing: false)
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
    private func joinParts(_ parts: inout MessageParts?, type: UInt8, transaction: UInt8, announced: Int?,
                           header: [UInt8], data: UnsafeRawBufferPointer, layer: String, naming: PartNaming = .packets,
                           _ record: CaptureRecord, _ f: inout DecodedFrame) -> (bytes: [UInt8], packets: Int, startFrame: Int)? {
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

    /// Records a profile on the connection's table entry once (roles added as they appear).
    func profile(_ record: CaptureRecord, _ name: String, role: String?, _ c: ClassicState) {
        let tag = name + "/" + (role ?? "")
        guard !c.recorded.contains(tag), c.recorded.count < ClassicState.maxEntries else { return }
        c.recorded.insert(tag)
        guard let h = lastACL?.key.connection else { return }
        let id = table.ensure(.init(adapter: record.adapter, handle: UInt16(truncatingIfNeeded: h)), record: record)
        table.update(id) { info in
            if let i = info.profiles.firstIndex(where: { $0.name == name }) {
                if let r = role, !info.profiles[i].roles.contains(r) { info.profiles[i].roles.append(r) }
            } else {
                info.profiles.append(ClassicProfile(name: name, roles: role.map { [$0] } ?? []))
            }
        }
    }

    func profileDetail(_ record: CaptureRecord, _ name: String, detail: String) {
        guard let h = lastACL?.key.connection else { return }
        let id = table.ensure(.init(adapter: record.adapter, handle: UInt16(truncatingIfNeeded: h)), record: record)
        table.update(id) { info in
            if let i = info.profiles.firstIndex(where: { $0.name == name }) { info.profiles[i].detail = detail }
            else { info.profiles.append(ClassicProfile(name: name, roles: [], detail: detail)) }
        }
    }
}

/// Bytes the decoder owns for the frame it returns (valid until the next decode call).
final class OwnedBytes {
    private var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    func hold(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
        if buffer.count < bytes.count {
            buffer.deallocate()
            buffer = .allocate(byteCount: max(bytes.count, 1024), alignment: 1)
        }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return UnsafeRawBufferPointer(rebasing: buffer[0..<bytes.count])
    }
    deinit { buffer.deallocate() }
}

/// A Classic profile seen on a connection, for `info`: "A2DP (source) SBC 44100 joint stereo".
/// Roles are the capture host's.
public struct ClassicProfile: Sendable, Hashable {
    public var name: String
    public var roles: [String]
    public var detail: String?
    public init(name: String, roles: [String], detail: String? = nil) { self.name = name; self.roles = roles; self.detail = detail }
    public var description: String {
        var s = name
        if !roles.isEmpty { s += " (" + roles.joined(separator: "+") + ")" }
        if let d = detail { s += " " + d }
        return s
    }
}
