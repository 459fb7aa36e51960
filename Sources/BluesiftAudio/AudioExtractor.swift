import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftCodecs

/// What `bluesift audio` says of one stream: what it is, how it was decoded, what was
/// written (or why nothing was).
public struct AudioStreamSummary: Sendable {
    /// The file's name without `.wav`: `conn0040-ase1-sink`, `big1-bis2`, `a2dp-conn000b-cid0041`.
    public var name: String
    /// The ISO handle (CIS/BIS) or the ACL handle (A2DP).
    public var handle: UInt16
    public var codec: String
    /// "16000 Hz 10 ms 40 octets 1 ch (FL)".
    public var parameters: String
    public var sampleRate = 0
    public var channels = 0
    /// Codec frames written per channel (SDU blocks for LC3, SBC frames), concealed ones included.
    public var frames = 0
    /// SDUs (LE Audio) or media packets (A2DP) missing or flagged lost; for LC3 each was
    /// concealed, for SBC filled with silence by the RTP time stamps.
    public var lost = 0
    /// SDUs or packets received.
    public var packets = 0
    public var sampleFrames = 0
    /// LC3 frames present but not decodable (liblc3 concealed them): not LC3 at this configuration.
    public var undecodable = 0
    public var file: String?
    /// Why nothing was written.
    public var skipped: String?
    public var firstFrame: Int
    public var seconds: Double { sampleRate == 0 ? 0 : Double(sampleFrames) / Double(sampleRate) }

    /// One line: "conn0040-ase1-sink  LC3 16000 Hz …  16 frames, 1 lost, 0.160 s -> DIR/x.wav".
    public var line: String {
        if let skipped { return "\(name)  \(codec)\(parameters.isEmpty ? "" : " " + parameters)  skipped: \(skipped)" }
        let secs = String(Int(seconds)) + "." + String(String(Int((seconds * 1000).rounded()) % 1000 + 1000).dropFirst())
        let bad = undecodable == 0 ? "" : ", \(undecodable) undecodable (concealed)"
        return "\(name)  \(codec) \(parameters)  \(frames) frames, \(lost) lost\(bad), \(secs) s -> \(file ?? "")"
    }
}

public struct AudioError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Every LE Audio stream (CIS and BIS, by ISO handle and direction) and A2DP media channel of
/// one capture decoded to a WAV file each, as the frames of a session come: LC3 through
/// liblc3 with its packet loss concealment for lost SDUs, SBC through libsbc. Memory stays
/// flat: PCM goes to the files as it is decoded.
public final class AudioExtractor {
    let directory: String
    let select: (String, UInt16) -> Bool
    var state = LEAudioState()
    /// Connections where this host wrote the ASE Control Point: it is the BAP client there.
    var clientConnections: Set<UInt16> = []
    var reassembler = ISOReassembler()
    /// Periodic advertising sync handle → the last BASE heard on it.
    var bases: [UInt16: BASE] = [:]
    /// BIG handle → (sync handle, BIS indices asked for), from LE BIG Create Sync.
    var bigSyncs: [UInt8: (sync: UInt16, bis: [UInt8])] = [:]
    /// A broadcast source's own HCI: BIG handle → advertising handle (LE Create BIG), and by
    /// advertising handle the BASE (LE Set Periodic Advertising Data). The Broadcast_ID and
    /// name of a BIG, source or sink, come from `state`.
    var bigAdvertising: [UInt8: UInt8] = [:]
    var advertisedBases: [UInt8: BASE] = [:]
    var iso: [UInt32: LC3Stream] = [:]
    var a2dp: [UInt32: SBCStream] = [:]
    /// ACL handle → the codec AVDTP Set Configuration chose.
    var a2dpCodecs: [UInt16: A2DPCodec] = [:]
    var order: [UInt32] = []
    static let maxStreams = 64
    /// Sniffed CIS/BIS streams (`AirAudio.swift`) by access address << 2 | direction, in
    /// the order first seen (keys in `order` with bit 30 set index `airOrder`).
    var airStreams: [UInt64: AirLC3Stream] = [:]
    var airOrder: [UInt64] = []
    /// Periodic advertising train access address → the last BASE heard on it.
    var airBases: [UInt32: BASE] = [:]
    /// Sniffed connection → whether the central wrote the ASE Control Point (the BAP client).
    var airClientIsCentral: [UInt16: Bool] = [:]

    /// `select(name, handle)`: whether a stream is written (`--stream`).
    public init(directory: String, select: @escaping (String, UInt16) -> Bool = { _, _ in true }) {
        self.directory = directory
        self.select = select
    }

    public func add(_ frame: borrowing AnalyzedFrame) throws(AudioError) {
        let f = frame.decoded
        guard let layer = f.module else { return }
        let r = f.record
        switch layer {
        case let v as ISOLayer:
            guard v.header.error == nil else { return }
            let h = v.header
            let fragment = UnsafeRawBufferPointer(rebasing: r.bytes[h.fragmentOffset..<(h.fragmentOffset + h.fragmentLength)])
            var failure: AudioError?
            _ = reassembler.add(h, fragment: fragment) { sdu, bytes in
                do throws(AudioError) { try self.sdu(sdu, bytes, sent: v.sent, frame: r.frame) } catch { failure = error }
            }
            if let failure { throw failure }
        case let v as LEAudioMessageLayer:
            leAudio(v, f, r)
        case let v as LEAudioAirLayer:
            try air(v, f, r)
        case let v as AVDTPSignal:
            if v.signalID == .setConfiguration, v.messageType == .command, let c = v.codec, let conn = f.connection { a2dpCodecs[conn] = c }
        case let v as AVDTPMediaPacket:
            guard v.error == nil, let conn = f.connection, let cid = f.l2cap?.cid else { return }
            try media(v, connection: conn, cid: cid, frame: r.frame)
        default: break
        }
    }

    func leAudio(_ v: LEAudioMessageLayer, _ f: borrowing DecodedFrame, _ r: CaptureRecord) {
        state.advertised(v, adv: f.adv)
        if let m = v.hci {
            state.hci(m, frame: r.frame)
            switch m.kind {
            case .command(HCICommandOpcode.leBIGCreateSync.rawValue):
                if let b = m.uint("big_handle"), let s = m.uint("sync_handle"), bigSyncs.count < 64 {
                    bigSyncs[UInt8(truncatingIfNeeded: b)] = (UInt16(s & 0x0FFF), m.uints("bis").map { UInt8(truncatingIfNeeded: $0) })
                }
            case .command(HCICommandOpcode.leCreateBIG.rawValue), .command(HCICommandOpcode.leCreateBIGTest.rawValue):
                if let b = m.uint("big_handle"), let a = m.uint("advertising_handle"), bigAdvertising.count < 64 {
                    bigAdvertising[UInt8(truncatingIfNeeded: b)] = UInt8(truncatingIfNeeded: a)
                }
            case .command(HCICommandOpcode.leSetPeriodicAdvertisingData.rawValue):
                guard let a = m.uint("advertising_handle").map({ UInt8(truncatingIfNeeded: $0) }), advertisedBases.count < 64 || advertisedBases[a] != nil else { break }
                for x in v.advertising { if case .base(let b) = x, b.error == nil { advertisedBases[a] = b } }
            case .subevent(HCILESubeventCode.periodicAdvertisingReport.rawValue), .subevent(HCILESubeventCode.periodicAdvertisingReportV2.rawValue):
                if let s = m.uint("sync_handle") {
                    for a in v.advertising { if case .base(let b) = a, b.error == nil, bases.count < 64 || bases[UInt16(s & 0x0FFF)] != nil { bases[UInt16(s & 0x0FFF)] = b } }
                }
            default: break
            }
        } else if let value = v.value, let c = v.characteristic, let conn = f.connection {
            if case .aseOperation = value, v.written, r.direction == .sent { clientConnections.insert(conn) }
            // On the air: the side that writes the ASE Control Point is the client.
            if case .aseOperation = value, v.written, let c = f.ll?.fromCentral { airClientIsCentral[conn] = c }
            state.apply(value, connection: conn, uuid: c, frame: r.frame)
        }
    }

    // MARK: LE Audio

    func sdu(_ sdu: ISOSDU, _ bytes: UnsafeRawBufferPointer, sent: Bool, frame: Int) throws(AudioError) {
        let key = UInt32(sdu.handle) << 1 | (sent ? 1 : 0)
        if iso[key] == nil {
            guard iso.count + a2dp.count < Self.maxStreams else { return }
            iso[key] = LC3Stream(handle: sdu.handle, sent: sent, firstFrame: frame)
            order.append(key)
        }
        let s = iso[key]!
        if s.decoder == nil && s.summary.skipped == nil { try configure(s) }
        try s.add(sdu, bytes)
    }

    /// Finds the stream's codec configuration (ASE on its CIS, or BASE of its BIG) and opens
    /// its file; a stream without one is counted until one appears.
    func configure(_ s: LC3Stream) throws(AudioError) {
        guard let (name, codec) = binding(s) else { return }
        try openStream(s, name: name, codec: codec)
    }

    /// Names the stream and opens its file for `codec`, or says why it is skipped.
    func openStream(_ s: LC3Stream, name: String, codec: LEAudioCodecSetting) throws(AudioError) {
        s.summary.name = name
        guard select(name, s.handle) else { s.summary.skipped = "not selected"; return }
        guard codec.codecID == .lc3, let cfg = codec.configuration else {
            s.summary.codec = codec.codecID.isVendor ? "vendor codec" : codec.codecID.name
            if codec.codecID.isVendor { s.summary.parameters = "company " + Hex.fixed(UInt64(codec.codecID.companyID), width: 4) + " codec " + Hex.fixed(UInt64(codec.codecID.vendorCodecID), width: 4) }
            s.summary.skipped = "not LC3; bluesift decodes LC3 only"
            return
        }
        s.summary.codec = "LC3"
        guard let hz = cfg.samplingFrequency?.hertz, let us = cfg.frameDuration?.microseconds, let octets = cfg.octetsPerCodecFrame else {
            s.summary.skipped = "the codec configuration lacks sampling frequency, frame duration or octets per codec frame"
            return
        }
        let allocation = cfg.audioChannelAllocation ?? LEAudioLocation(rawValue: 0)
        let channels = max(1, allocation.rawValue.nonzeroBitCount)
        let blocks = Int(cfg.codecFrameBlocksPerSDU ?? 1)
        s.summary.parameters = "\(hz) Hz \(Double(us) / 1000) ms \(octets) octets \(channels) ch (" + allocation.names.joined(separator: "+") + ")" + (blocks > 1 ? " \(blocks) blocks/SDU" : "")
        if let p = cfg.preset { s.summary.parameters = p + " " + s.summary.parameters }
        let format = LC3Format(sampleRate: hz, frameMicroseconds: us, octetsPerFrame: Int(octets))
        do {
            s.decoder = try (0..<channels).map { _ throws(CodecError) in try LC3Decoder(format) }
        } catch {
            s.summary.skipped = error.message
            return
        }
        s.blocks = max(1, blocks)
        let path = directory + "/" + name + ".wav"
        do { s.wav = try WAVFile(path: path, sampleRate: hz, channels: channels) } catch { throw AudioError(message: error.description) }
        s.summary.sampleRate = hz; s.summary.channels = channels; s.summary.file = path
    }

    /// The stream's file name and codec: a CIS's ASE (sink ASE for audio the client sends,
    /// source ASE for what it receives), or a BIS's BASE entry.
    func binding(_ s: LC3Stream) -> (String, LEAudioCodecSetting)? {
        if let cis = state.cises[s.handle] {
            let ases = state.ases(onCIS: s.handle).filter { $0.codec != nil }
            // Audio the client sends goes to a sink ASE; a server sends from its source ASEs.
            let client = ases.first.map { clientConnections.contains($0.key.connection) } ?? true
            let wantSink = s.sent == client
            guard let a = ases.first(where: { $0.sink == wantSink }) ?? (ases.count == 1 ? ases.first : nil), let codec = a.codec else { return nil }
            _ = cis
            let dir = a.sink.map { $0 ? "sink" : "source" } ?? (s.sent ? "sent" : "received")
            return ("conn" + Hex.digits(a.key.connection) + "-ase\(a.key.aseID)-" + dir, codec)
        }
        for (b, g) in state.bigs where g.bisHandles.contains(s.handle) {
            let position = g.bisHandles.firstIndex(of: s.handle)!
            let sync = bigSyncs[b]
            let index = sync.flatMap { position < $0.bis.count ? $0.bis[position] : nil } ?? UInt8(position + 1)
            // A sink: the BASE heard on its sync; a source: the BASE it advertises with the
            // BIG's advertising set (BIS indices in BIG order, BAP §3.7.2.2).
            let advertising = sync == nil ? bigAdvertising[b] : nil
            guard let base = sync.flatMap({ bases[$0.sync] }) ?? advertising.flatMap({ advertisedBases[$0] }) else { return nil }
            let broadcast = state.broadcast(big: b)
            for g in base.subgroups {
                if let bis = g.bises.first(where: { $0.index == index }) {
                    var codec = g.codec
                    if let merged = g.configuration(of: bis) { codec.configurationBytes = merged.encode() }
                    return (Self.broadcastPrefix(broadcast) + "big\(b)-bis\(index)", codec)
                }
            }
        }
        return nil
    }

    /// "bcast5a17c3-Gate_12-": the Broadcast_ID (and the Broadcast_Name, file-name safe)
    /// of a BIS's broadcast, when known.
    static func broadcastPrefix(_ b: LEAudioState.BroadcastIdentity?) -> String {
        guard let b, let id = b.id else { return "" }
        var out = "bcast" + String(String(id | 0x100_0000, radix: 16).dropFirst()) + "-"
        if let n = b.name {
            let safe = String(n.unicodeScalars.prefix(32).map { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "." ? Character($0) : "_" })
            if !safe.isEmpty { out += safe + "-" }
        }
        return out
    }

    // MARK: A2DP

    func media(_ p: AVDTPMediaPacket, connection: UInt16, cid: UInt16, frame: Int) throws(AudioError) {
        let key = UInt32(connection) << 16 | UInt32(cid)
        if a2dp[key] == nil {
            guard iso.count + a2dp.count < Self.maxStreams else { return }
            let name = "a2dp-conn" + Hex.digits(connection) + "-cid" + Hex.digits(cid)
            let s = SBCStream(name: name, handle: connection, firstFrame: frame)
            a2dp[key] = s
            order.append(0x8000_0000 | key)
            let codec = a2dpCodecs[connection]
            s.summary.codec = codec?.name ?? p.codec ?? "unknown codec"
            if !select(name, connection) {
                s.summary.skipped = "not selected"
            } else if p.sbcFrames == nil && codec?.name != "SBC" {
                s.summary.parameters = codec?.summary.dropFirst(codec?.name.count ?? 0).trimmingCharacters(in: " ") ?? ""
                s.summary.skipped = codec == nil ? "no AVDTP Set Configuration seen for this channel" : "not SBC; bluesift decodes SBC only"
            } else {
                do { s.decoder = try SBCDecoder() } catch { s.summary.skipped = error.message }
                s.path = directory + "/" + name + ".wav"
            }
        }
        let s = a2dp[key]!
        guard s.summary.skipped == nil else { s.summary.packets += 1; return }
        do { try s.add(p) } catch { throw AudioError(message: error.description) }
    }

    // MARK: end

    /// Writes the files' headers and renames them into place; the streams in the order first seen.
    public func finish() throws(AudioError) -> [AudioStreamSummary] {
        var out: [AudioStreamSummary] = []
        for key in order {
            if key & 0x4000_0000 != 0 {
                let a = airStreams[airOrder[Int(key & 0x3FFF_FFFF)]]!
                try a.finish()
                let s = a.lc3
                if s.summary.skipped == nil && s.decoder == nil { s.summary.skipped = a.whyNotDecoded() }
                do { try s.wav?.commit() } catch { throw AudioError(message: error.description) }
                s.summary.sampleFrames = s.wav?.frames ?? 0
                out.append(s.summary)
            } else if key & 0x8000_0000 != 0 {
                let s = a2dp[key & 0x7FFF_FFFF]!
                do { try s.wav?.commit() } catch { throw AudioError(message: error.description) }
                s.summary.sampleFrames = s.wav?.frames ?? 0
                out.append(s.summary)
            } else {
                let s = iso[key]!
                if s.summary.skipped == nil && s.decoder == nil {
                    s.summary.skipped = state.cises[s.handle] != nil ? "no ASE codec configuration bound to this CIS" : "no BASE or ASE codec configuration bound to this ISO handle"
                }
                do { try s.wav?.commit() } catch { throw AudioError(message: error.description) }
                s.summary.sampleFrames = s.wav?.frames ?? 0
                out.append(s.summary)
            }
        }
        return out.filter { $0.skipped != "not selected" }
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String { String(self).trimmingCharacters(in: set) }
}

extension Hex {
    /// "0040": four hex digits, no prefix (file names).
    static func digits(_ v: UInt16) -> String { String(Hex.fixed(UInt64(v), width: 4).dropFirst(2)) }
}

/// One CIS or BIS direction's LC3 stream.
final class LC3Stream {
    let handle: UInt16
    let sent: Bool
    var summary: AudioStreamSummary
    var decoder: [LC3Decoder]?
    var blocks = 1
    var wav: WAVFile?
    var lastSequence: UInt16?
    var pcm: [Int16] = []
    /// Longest sequence gap filled by concealment (10 s of 10 ms frames); a longer one is a
    /// restart, not loss.
    static let maxGap = 1000

    init(handle: UInt16, sent: Bool, firstFrame: Int) {
        self.handle = handle; self.sent = sent
        summary = AudioStreamSummary(
            name: "iso" + Hex.digits(handle) + (sent ? "-sent" : "-received"), handle: handle, codec: "LC3", parameters: "", firstFrame: firstFrame)
    }

    /// A sniffed stream, named by its access address (`AirAudio.swift`).
    init(name: String, firstFrame: Int) {
        handle = 0; sent = false
        summary = AudioStreamSummary(name: name, handle: 0, codec: "LC3", parameters: "", firstFrame: firstFrame)
    }

    func add(_ sdu: ISOSDU, _ bytes: UnsafeRawBufferPointer) throws(AudioError) {
        summary.packets += 1
        defer { lastSequence = sdu.packetSequenceNumber }
        let gap = lastSequence.map { Int(sdu.packetSequenceNumber &- $0) - 1 } ?? 0
        try write(sdu.packetStatus == .lost ? nil : bytes, missingBefore: gap)
    }

    /// One SDU (nil: lost) after `missingBefore` SDUs that never came, each concealed.
    func write(_ bytes: UnsafeRawBufferPointer?, missingBefore gap: Int) throws(AudioError) {
        guard let decoder, let wav else { return }
        let format = decoder[0].format
        let n = format.samplesPerFrame, channels = decoder.count
        if pcm.count != n * channels { pcm = [Int16](repeating: 0, count: n * channels) }
        if gap > 0 && gap <= Self.maxGap {
            for _ in 0..<(gap * blocks) { try block(nil, wav, decoder) }
            summary.lost += gap
        }
        let frameBytes = format.octetsPerFrame * channels
        guard let bytes, bytes.count > 0, bytes.count % frameBytes == 0 else {
            // Lost, empty or not a whole number of codec frames: conceal the SDU's frames.
            for _ in 0..<blocks { try block(nil, wav, decoder) }
            summary.lost += 1
            return
        }
        for b in 0..<(bytes.count / frameBytes) {
            try block(UnsafeRawBufferPointer(rebasing: bytes[(b * frameBytes)..<((b + 1) * frameBytes)]), wav, decoder)
        }
    }

    /// One codec frame block: a frame per channel in allocation order (BAP 1.0.1 §4.2.2), or nil to conceal.
    func block(_ bytes: UnsafeRawBufferPointer?, _ wav: WAVFile, _ decoder: [LC3Decoder]) throws(AudioError) {
        let octets = decoder[0].format.octetsPerFrame, channels = decoder.count
        let bad = pcm.withUnsafeMutableBufferPointer { p in
            (0..<channels).reduce(false) { bad, c in
                let frame = bytes.map { UnsafeRawBufferPointer(rebasing: $0[(c * octets)..<((c + 1) * octets)]) }
                return decoder[c].decode(frame, into: p.baseAddress! + c, stride: channels) && frame != nil || bad
            }
        }
        if bad { summary.undecodable += 1 }
        summary.frames += 1
        do { try pcm.withUnsafeBufferPointer { b throws(CaptureError) in try wav.write(b) } } catch { throw AudioError(message: error.description) }
    }
}

/// One A2DP media channel's SBC stream.
final class SBCStream {
    var summary: AudioStreamSummary
    var decoder: SBCDecoder?
    var path = ""
    var wav: WAVFile?
    var lastSequence: UInt16?
    var lastTimestamp: UInt32?
    var lastSamples = 0
    /// Longest gap filled with silence: 10 s at 48 kHz.
    static let maxGapSamples = 480_000

    init(name: String, handle: UInt16, firstFrame: Int) {
        summary = AudioStreamSummary(name: name, handle: handle, codec: "SBC", parameters: "", firstFrame: firstFrame)
    }

    func add(_ p: AVDTPMediaPacket) throws(CaptureError) {
        summary.packets += 1
        guard let decoder, p.payload.count > 1 else { return }
        // A2DP 1.3 §4.3.4: one octet of media payload header, then the SBC frames.
        let frames = UnsafeRawBufferPointer(rebasing: p.payload[1...])
        if wav == nil, let h = SBCFrameHeader(frames) {
            wav = try WAVFile(path: path, sampleRate: h.sampleRate, channels: h.channels)
            summary.sampleRate = h.sampleRate; summary.channels = h.channels; summary.file = path
            summary.parameters = "\(h.sampleRate) Hz \(h.channelModeName) \(h.blocks) blocks \(h.subbands) subbands bitpool \(h.bitpool) " + (h.allocation == 0 ? "loudness" : "SNR")
        }
        guard let wav else { return }
        if let ls = lastSequence, let lt = lastTimestamp {
            let missing = Int(p.sequence &- ls) - 1
            // RTP time stamps count samples (A2DP 1.3 §4.3.4): the gap's length in samples.
            let gap = Int(Int32(bitPattern: p.timestamp &- lt)) - lastSamples
            if missing > 0 && missing < 0x8000 {
                summary.lost += missing
                if gap > 0 && gap <= Self.maxGapSamples {
                    let silence = [Int16](repeating: 0, count: gap * wav.channels)
                    try silence.withUnsafeBufferPointer { b throws(CaptureError) in try wav.write(b) }
                }
            }
        }
        lastSequence = p.sequence; lastTimestamp = p.timestamp
        let before = wav.frames
        var failure: CaptureError?
        let r = decoder.decode(frames) { pcm in
            guard failure == nil else { return }
            do throws(CaptureError) { try wav.write(pcm) } catch { failure = error }
        }
        if let failure { throw failure }
        summary.frames += r.frames
        lastSamples = wav.frames - before
    }
}
