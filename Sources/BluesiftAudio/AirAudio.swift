import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect

// `bluesift audio` on a sniffer's capture: the LC3 SDUs of the CIS and BIS PDUs the analyzer
// read off the air (decrypted when the ACL's session key or a Broadcast_Code allows,
// `LEAudioAirCrypto.swift`). Unframed SDUs (Core 6.0 Vol 6 Part G §2) are rebuilt from their
// fragments: with payload counters (decrypted PDUs) SDU i takes payloads i·k … i·k+k-1 (k =
// BN over the SDUs of an ISO interval), so a missing fragment or a whole missing SDU is
// known, concealed by liblc3 and counted lost; a plain (never encrypted) stream has no
// counter: its fragments are chained until LLID 0b00 and only what arrived is written.
// Framed PDUs (§6): an SDU's segments from SC 0 to CMPLT. Retransmissions (the same payload
// counter again, a CIS PDU with its direction's last SN and bytes, a BIS's IRC repetitions)
// are written once. The codec configuration: a CIS's ASE on its ACL with the same CIG/CIS
// IDs (ASCS Config Codec / QoS over the decrypted ATT; a sink ASE for audio from the
// client), a BIS's entry in the BASE of its periodic advertising train.

extension AudioExtractor {
    func air(_ v: LEAudioAirLayer, _ f: borrowing DecodedFrame, _ r: CaptureRecord) throws(AudioError) {
        if v.periodic != nil {
            guard let aa = f.ll?.accessAddress else { return }
            for a in v.advertising {
                if case .base(let b) = a, b.error == nil, airBases.count < 64 || airBases[aa] != nil { airBases[aa] = b }
            }
            return
        }
        guard let p = v.isochronous, let aa = v.accessAddress, !p.npi, !p.payload.isEmpty, v.bigControl == nil, !p.isBIGControl else { return }
        let key = UInt64(aa) << 2 | UInt64(v.fromCentral.map { $0 ? 0 : 1 } ?? 2)
        if airStreams[key] == nil {
            guard iso.count + a2dp.count + airStreams.count < Self.maxStreams else { return }
            airStreams[key] = AirLC3Stream(v, accessAddress: aa, firstFrame: r.frame)
            order.append(0x4000_0000 | UInt32(airOrder.count))
            airOrder.append(key)
        }
        let s = airStreams[key]!
        // Bound once there is audio to write: a stream never decrypted says so at the end.
        let readable = !(s.encrypted && v.decryption?.counter == nil)
        if readable && s.lc3.decoder == nil && s.lc3.summary.skipped == nil, let (name, codec) = airBinding(v, s) {
            try openStream(s.lc3, name: name, codec: codec)
        }
        try s.add(v, p)
    }

    /// A CIS's ASE (same connection and CIG/CIS IDs; audio from the client goes to a sink
    /// ASE), or a BIS's BASE entry (its train's BASE, the BIS index its number).
    func airBinding(_ v: LEAudioAirLayer, _ s: AirLC3Stream) -> (String, LEAudioCodecSetting)? {
        if let c = v.cisIDs {
            let ases = state.ases.values.filter { $0.key.connection == c.connection && $0.cigID == c.cig && $0.cisID == c.cis && $0.codec != nil }.sorted { $0.key < $1.key }
            let clientCentral = c.connection.flatMap { airClientIsCentral[$0] } ?? true
            let wantSink = v.fromCentral.map { $0 == clientCentral }
            guard let a = ases.first(where: { wantSink == nil || $0.sink == wantSink }) ?? (ases.count == 1 ? ases.first : nil), let codec = a.codec else {
                s.missing =
                    "codec configuration unknown: no ASE of CIG \(c.cig) CIS \(c.cis) with its Config Codec was seen"
                    + (v.streamEncrypted ? " (over the ACL, decrypted)" : "")
                return nil
            }
            return (s.lc3.summary.name, codec)
        }
        if let b = v.bisOnAir {
            guard let train = b.train, let base = airBases[train] else {
                s.missing = "codec configuration unknown: no BASE was seen on the BIG's periodic advertising train"
                return nil
            }
            for g in base.subgroups {
                if let bis = g.bises.first(where: { Int($0.index) == b.bis }) {
                    var codec = g.codec
                    if let merged = g.configuration(of: bis) { codec.configurationBytes = merged.encode() }
                    return (s.lc3.summary.name, codec)
                }
            }
            s.missing = "codec configuration unknown: the BASE has no BIS \(b.bis)"
        }
        return nil
    }
}

/// One sniffed CIS direction's or BIS's LC3 stream and the SDUs being rebuilt.
final class AirLC3Stream {
    let lc3: LC3Stream
    let perSDU: UInt64
    let encrypted: Bool
    /// Why no codec configuration was bound (the last reason found).
    var missing: String?
    /// PDUs with data left encrypted, and the analyzer's reason for the last.
    var sealed = 0
    var sealedWhy: String?
    var opened = 0
    /// The SDU being rebuilt: its index (payload counter / perSDU), bytes, the counter the next
    /// fragment must have, whether all so far are there.
    var index: UInt64?
    var bytes: [UInt8] = []
    var next: UInt64 = 0
    var whole = false
    var chaining = false
    /// The last SDU written (or concealed), by index.
    var lastIndex: UInt64?
    var lastCounter: UInt64?
    var lastSN: Bool?
    var lastPayload: [UInt8] = []

    init(_ v: LEAudioAirLayer, accessAddress aa: UInt32, firstFrame: Int) {
        var name = "aa" + String(String(UInt64(aa) | 1 << 32, radix: 16).dropFirst())
        if let c = v.cisIDs {
            name += "-cig\(c.cig)-cis\(c.cis)" + (v.fromCentral.map { $0 ? "-c2p" : "-p2c" } ?? "")
        } else if let b = v.bisOnAir {
            name = b.seed.map { "big" + String(String(UInt64($0) | 1 << 32, radix: 16).dropFirst()) } ?? name
            name += "-bis\(b.bis)"
        }
        lc3 = LC3Stream(name: name, firstFrame: firstFrame)
        perSDU = max(1, v.payloadsPerSDU)
        encrypted = v.streamEncrypted
    }

    func whyNotDecoded() -> String {
        if encrypted && opened == 0 && sealed > 0 { return "encrypted, not decrypted: " + (sealedWhy ?? "no key") }
        return missing ?? "codec configuration unknown"
    }

    func add(_ v: LEAudioAirLayer, _ p: LLIsochronousPDU) throws(AudioError) {
        let counter = v.decryption?.counter
        if encrypted && counter == nil {
            sealed += 1
            if case .notDecrypted(let why)? = v.decryption { sealedWhy = why }
            return
        }
        if counter != nil { opened += 1 }
        // Sent again: not a new payload.
        if let c = counter, c == lastCounter { return }
        if counter == nil && p.stream == .cis && lastSN == p.sn && lastPayload == p.payload { return }
        lastCounter = counter
        if p.stream == .cis { lastSN = p.sn; lastPayload = p.payload }
        if p.isFramed {
            for seg in v.segments {
                if !seg.continuation {
                    if chaining { try emit(nil) }
                    bytes = seg.data; chaining = true; whole = true
                } else if chaining {
                    bytes += seg.data
                } else {
                    continue
                }
                if seg.complete {
                    try emit(whole ? bytes : nil)
                    chaining = false
                }
            }
            return
        }
        guard let c = counter else {
            // No counter: a chain of fragments ends at LLID 0b00.
            if !chaining { bytes = []; chaining = true }
            bytes += p.payload
            if p.llid == 0 {
                try emit(bytes)
                chaining = false
            }
            return
        }
        let i = c / perSDU
        if let pending = index, pending != i { try flush(ended: false) }
        if c % perSDU == 0 {
            index = i; bytes = p.payload; whole = true; next = c + 1
        } else if index == i, whole, c == next {
            bytes += p.payload; next = c + 1
        } else {
            index = i; whole = false // a fragment before this one was missed
        }
        if p.llid == 0 { try flush(ended: true) }
    }

    /// Writes the SDU being rebuilt: whole when its last fragment (`ended`) and every one
    /// before it came, else concealed as lost.
    func flush(ended: Bool) throws(AudioError) {
        guard let i = index else { return }
        index = nil
        if let l = lastIndex, i <= l { return }
        let gap = lastIndex.map { Int(i - $0) - 1 } ?? 0
        lastIndex = i
        try write(ended && whole ? bytes : nil, gap)
    }

    /// An SDU without a counter (framed, plain): the next after the last.
    func emit(_ b: [UInt8]?) throws(AudioError) {
        lastIndex = (lastIndex ?? 0) &+ 1
        try write(b, 0)
    }

    func write(_ b: [UInt8]?, _ gap: Int) throws(AudioError) {
        guard let b else { return try lc3.write(nil, missingBefore: gap) }
        lc3.summary.packets += 1
        var failure: AudioError?
        b.withUnsafeBytes { x in
            do throws(AudioError) { try lc3.write(x, missingBefore: gap) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// The capture ended: an SDU still missing fragments is lost.
    func finish() throws(AudioError) {
        if index != nil { try flush(ended: false) }
        chaining = false
    }
}
