import BluesiftWire
import BluesiftCapture

/// What the Classic modules add to `stats` (docs/stats.md): the `classic[]` channel rows,
/// `classic_not_listed`, their counts, the `classic:` text section, the `classic` CSV table
/// and the report's Classic view. SCO packets (the synchronous link's own connection) count too.
public final class ClassicStats: StatsCollector {
    /// One Classic channel: `profile` is SDP, AVDTP (signalling), A2DP media, AVRCP, RFCOMM or
    /// SCO. `commands`/`responses`: SDP requests/responses, AVDTP commands/responses (accept,
    /// reject, general reject), AVRCP commands/responses, and on RFCOMM the AT command lines /
    /// result code lines. `bytes`: L2CAP payload (RFCOMM: information field; SCO: data).
    public struct Channel: Codable, Sendable {
        public var connection: Int
        public var profile: String
        public var psm: Int?
        public var dlci: Int?
        public var serverChannel: Int?
        public var service: String?
        public var frames = 0
        public var commands = 0
        public var responses = 0
        public var bytes = 0
        public var firstFrame: Int
        public var lastFrame: Int
    }

    /// Rows kept (`classic_not_listed` counts the frames of channels past it).
    public static let maxChannels = 4096
    public private(set) var channels: [Channel] = []
    public private(set) var notListed = 0
    /// SDP PDUs, AVDTP signalling packets and media packets, AVRCP commands and responses,
    /// RFCOMM frames, HFP/HSP AT command lines and result code lines, SCO packets.
    public private(set) var sdp = 0, avdtpSignals = 0, avdtpMedia = 0, avrcpCommands = 0, avrcpResponses = 0
    public private(set) var rfcommFrames = 0, hfpCommands = 0, hfpResults = 0, scoPackets = 0
    /// A channel's key: the profile by its index in `profiles` (hashing a String per frame was
    /// most of an A2DP capture's stats), and the last row found, which most frames hit again.
    struct Key: Hashable { var conn: Int; var profile: UInt8; var dlci: Int }
    static let profiles = ["SDP", "AVDTP", "A2DP media", "AVRCP", "RFCOMM", "SCO"]
    static let sdpProfile: UInt8 = 0, avdtpProfile: UInt8 = 1, mediaProfile: UInt8 = 2, avrcpProfile: UInt8 = 3
    static let rfcommProfile: UInt8 = 4, scoProfile: UInt8 = 5
    var rows: [Key: Int] = [:]
    var last: (key: Key, row: Int)?

    public init() {}

    public static var recordKinds: [PacketKind] { [.sco] }

    func row(_ key: Key, _ r: CaptureRecord) -> Int? {
        if let l = last, l.key == key { channels[l.row].lastFrame = r.frame; return l.row }
        if let i = rows[key] { channels[i].lastFrame = r.frame; last = (key, i); return i }
        guard channels.count < Self.maxChannels else { notListed += 1; return nil }
        channels.append(
            .init(
                connection: key.conn, profile: Self.profiles[Int(key.profile)], dlci: key.dlci >= 0 ? key.dlci : nil,
                firstFrame: r.frame, lastFrame: r.frame))
        rows[key] = channels.count - 1
        last = (key, channels.count - 1)
        return channels.count - 1
    }

    public func add(_ f: borrowing DecodedFrame, _ stats: any StatsContext) {
        let r = f.record
        guard let layer = f.module else {
            guard r.kind == .sco, f.layers.contains(.hci), let conn = stats.connectionIndex(f) else { return }
            scoPackets += 1
            guard let i = row(Key(conn: conn, profile: Self.scoProfile, dlci: -1), r) else { return }
            channels[i].frames += 1
            channels[i].bytes += f.hciStorage.dataLength ?? 0
            return
        }
        guard let conn = stats.connectionIndex(f) else { return }
        // The l2cap fields read in place: `f.l2cap` copies the whole layer.
        let onL2CAP = f.layers.contains(.l2cap)
        let psm = onL2CAP ? f.l2capStorage.psm : nil
        var bytes = onL2CAP ? f.l2capStorage.length : 0
        // Media packets first, by type alone: most of an A2DP capture, and a cast copies the value.
        if type(of: layer) == AVDTPMediaPacket.self {
            avdtpMedia += 1
            count(Key(conn: conn, profile: Self.mediaProfile, dlci: -1), r, psm, commands: 0, responses: 0, bytes: bytes)
            return
        }
        var profile = Self.sdpProfile, dlci = -1, commands = 0, responses = 0
        var rfcomm: RFCOMMFrame?
        switch layer {
        case let p as SDPPDU:
            profile = Self.sdpProfile; sdp += 1
            if [2, 4, 6].contains(p.pduID.rawValue) { commands = 1 } else { responses = 1 }
        case let s as AVDTPSignal:
            profile = Self.avdtpProfile; avdtpSignals += 1
            if s.messageType == .command { commands = 1 } else { responses = 1 }
        case let p as AVCTPPDU:
            profile = Self.avrcpProfile
            if p.isResponse { responses = 1; avrcpResponses += 1 } else { commands = 1; avrcpCommands += 1 }
        case let fr as RFCOMMFrame:
            rfcomm = fr
            profile = Self.rfcommProfile; dlci = Int(fr.dlci); bytes = fr.length; rfcommFrames += 1
            for line in fr.at { if line.isCommand { commands += 1 } else { responses += 1 } }
            hfpCommands += commands; hfpResults += responses
        default: return
        }
        guard let i = count(Key(conn: conn, profile: profile, dlci: dlci), r, psm, commands: commands, responses: responses, bytes: bytes) else { return }
        if let fr = rfcomm {
            if dlci > 0 { channels[i].serverChannel = Int(fr.channel) }
            if let n = fr.serviceName { channels[i].service = n }
        }
    }

    /// One frame on a channel's row; nil past `maxChannels`.
    @discardableResult
    func count(_ key: Key, _ r: CaptureRecord, _ psm: UInt16?, commands: Int, responses: Int, bytes: Int) -> Int? {
        guard let i = row(key, r) else { return nil }
        channels[i].frames += 1
        channels[i].commands += commands
        channels[i].responses += responses
        channels[i].bytes += bytes
        if channels[i].psm == nil, let psm { channels[i].psm = Int(psm) }
        return i
    }

    public static var tables: [(name: String, header: String)] {
        [("classic", "file,connection,conn_handle,peer,profile,psm,dlci,server_channel,service,frames,commands,responses,bytes,first_frame,last_frame")]
    }

    public func finish(_ stats: any StatsContext) -> ModuleStats {
        var m = ModuleStats()
        m.members = [("classic", channels), ("classicNotListed", notListed)]
        m.hasData = !channels.isEmpty
        m.counts = [
            ("sdp", sdp), ("avdtpSignals", avdtpSignals), ("avdtpMedia", avdtpMedia), ("avrcpCommands", avrcpCommands),
            ("avrcpResponses", avrcpResponses), ("rfcommFrames", rfcommFrames), ("hfpCommands", hfpCommands),
            ("hfpResults", hfpResults), ("scoPackets", scoPackets)
        ]
        m.tables["classic"] = channels.map { c in
            [
                stats.file, String(c.connection), Hex.fixed(UInt64(stats.connectionHandle(c.connection)), width: 4),
                stats.connectionPeer(c.connection), c.profile, c.psm.map { Hex.fixed(UInt64($0), width: 4) }, c.dlci.map(String.init),
                c.serverChannel.map(String.init), c.service, String(c.frames), String(c.commands), String(c.responses),
                String(c.bytes), String(c.firstFrame), String(c.lastFrame)
            ]
        }
        if !channels.isEmpty {
            m.text.append("")
            m.text.append(
                "classic: \(channels.count) channels (SDP \(sdp), AVDTP \(avdtpSignals) signals + \(avdtpMedia) media, "
                    + "AVRCP \(avrcpCommands) commands + \(avrcpResponses) responses, RFCOMM \(rfcommFrames) frames, "
                    + "AT \(hfpCommands) commands + \(hfpResults) results, SCO \(scoPackets))"
                    + (notListed > 0 ? " (+\(notListed) frames on channels not listed)" : ""))
            m.text.append("  conn frames   cmds  resps      bytes  first…last  channel")
            for c in channels {
                let span = "\(c.firstFrame)…\(c.lastFrame)"
                m.text.append(
                    "  \(Self.padded(c.connection, 4)) \(Self.padded(c.frames, 6)) \(Self.padded(c.commands, 6)) \(Self.padded(c.responses, 6)) \(Self.padded(c.bytes, 10))  \(span)\(String(repeating: " ", count: max(1, 12 - span.count)))\(Self.label(c))"
                )
            }
        }
        return m
    }

    static func padded(_ v: Int, _ w: Int) -> String { let s = String(v); return String(repeating: " ", count: max(0, w - s.count)) + s }

    /// "AVDTP (PSM 0x0019)", "RFCOMM DLCI 2 (channel 1, Handsfree)", "SCO".
    public static func label(_ c: Channel) -> String {
        var s = c.profile
        if let d = c.dlci {
            s += " DLCI \(d)"
            var inner: [String] = []
            if let ch = c.serverChannel { inner.append("channel \(ch)") }
            if let n = c.service { inner.append(n) }
            if d == 0 { inner.append("multiplexer") }
            if !inner.isEmpty { s += " (" + inner.joined(separator: ", ") + ")" }
        } else if let p = c.psm {
            s += " (PSM \(Hex.fixed(UInt64(p), width: 4)))"
        }
        return s
    }

    /// SDP, AVDTP (signalling and A2DP media), AVRCP, RFCOMM per DLCI with HFP AT lines, SCO:
    /// stats' classic table; their PDUs are rows of the sequence view.
    public static var reportView: String? {
        #"""
          // ---------- Classic ----------
          // SDP, AVDTP (signalling and A2DP media), AVRCP, RFCOMM per DLCI with HFP AT lines, SCO:
          // stats' classic table; their PDUs are rows of the sequence view.
          function classicLabel(c){var s=c.profile;if(c.dlci!=null){var inner=[];if(c.server_channel!=null)inner.push('channel '+c.server_channel);if(c.service)inner.push(c.service);
            if(c.dlci===0)inner.push('multiplexer');s+=' DLCI '+c.dlci+(inner.length?' ('+inner.join(', ')+')':'');}else if(c.psm!=null)s+=' (PSM '+hex4(c.psm)+')';return s;}
          if((S.classic||[]).length){count('classic',S.classic.length,'Classic channels');
            addView('classic','Classic ('+S.classic.length+')',function(sec){var k=S.counts;
              sec.appendChild(el('p',{'class':'mut',id:'classic-counts'},'SDP '+k.sdp+' PDUs · AVDTP '+k.avdtp_signals+' signals + '+k.avdtp_media+' media packets · AVRCP '+k.avrcp_commands+' commands + '+k.avrcp_responses+' responses · RFCOMM '+k.rfcomm_frames+' frames · HFP/HSP AT '+k.hfp_commands+' commands + '+k.hfp_results+' results · SCO '+k.sco_packets+' packets. Their PDUs are in the Sequence view.'));
              var t=el('table',{id:'classic-table'});var h=el('tr');['conn','channel','frames','commands','responses','bytes','first','last'].forEach(function(x){h.appendChild(el('th',null,x));});t.appendChild(h);
              S.classic.forEach(function(c){var tr=el('tr',{'data-profile':c.profile});function td(v,cls){var d=el('td',{'class':cls||''},v);tr.appendChild(d);return d;}
                td(connLabel(c.connection),'nw');td(classicLabel(c));td(c.frames,'n');td(c.commands,'n');td(c.responses,'n');td(c.bytes,'n');
                td('').appendChild(frameLink(c.first_frame));td('').appendChild(frameLink(c.last_frame));t.appendChild(tr);});
              sec.appendChild(t);});}
        """#
    }
}
