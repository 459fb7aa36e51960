import BluesiftWire
import BluesiftSecurity

// Decrypting sniffed CIS and BIS PDUs (Core 6.0 Vol 6 Part E §1-§2; `IsochronousEncryption`).
// The nonce carries the PDU's payload counter (39 bits), which is not on the air: a sniffer
// rebuilds it from the schedule. Payload k (0…BN-1) of isochronous event e is number e·BN + k
// (Vol 6 Part B §4.5.13.1 for a CIS, §4.4.6.4 for a BIS); with a flush timeout FT a payload
// may still be sent up to FT-1 events later, with a pre-transmission offset a BIS payload
// earlier. The event is counted from the time stamps:
// - a CIS: its first PDU is tried against every event since LL_CIS_IND (the CIS starts at
//   its instant, after it); then from the last decrypted payload: the next counters first,
//   else the events around the one Δt / ISO_Interval later;
// - a BIS: the BIGInfo says bisPayloadCount for the BIG event BIG_Offset after it; a BIG
//   Control PDU is tried with the BIG event counter too.
// Each candidate is checked by the MIC (a wrong one passes once in 2^32), so a wrong guess
// costs time, never a wrong plaintext.

/// An encrypted stream's keys and schedule (per CIS or BIS access address).
struct AirCrypto {
    /// CIS: the ACL's session key; BIS: one GSK per Broadcast_Code given, until one verifies.
    var keys: [AESCCM] = []
    var iv: [UInt8] = []
    /// Why it cannot be decrypted, when no key is known.
    var noKey: String?
    var isBIS = false
    var isoIntervalUs: Int64 = 0
    /// Per direction (0: C→P or the BIS, 1: P→C).
    var bn: [UInt64] = [1, 1]
    var ft: [Int64] = [1, 1]
    var pto: Int64 = 0
    /// The last payload decrypted per direction, and when.
    var last: [(counter: UInt64, us: Int64)?] = [nil, nil]
    /// BIS: the BIG event and time of the last BIGInfo's anchor.
    var bigAnchor: (event: Int64, us: Int64)?
    /// CIS: LL_CIS_IND's time (the CIS starts after it).
    var since: Int64 = 0
    /// PDUs no counter opened before any did: the wide first search stops after 8 (a wrong
    /// key would cost thousands of tries per PDU).
    var failures = 0
    var searching: Bool { failures < 8 }

    /// A CIS of an ACL decrypted with `link`'s session key; the schedule from its LL_CIS_REQ.
    init(cis i: LLCISInd, request r: LLCISReq?, link: SniffedLink?, since: Int64) {
        self.since = since
        if let link, let ccm = link.ccm, link.iv.count == 8 {
            keys = [ccm]
            iv = IsochronousEncryption.iv(link.iv, accessAddress: i.accessAddress)
        } else {
            noKey = "no key: the ACL's session key is not known"
        }
        if let r {
            isoIntervalUs = Int64(r.isoInterval) * 1250
            bn = [UInt64(max(1, r.bnCToP)), UInt64(max(1, r.bnPToC))]
            ft = [Int64(max(1, r.ftCToP)), Int64(max(1, r.ftPToC))]
        }
    }

    /// A BIS (or the BIG control channel) of an encrypted BIG, with the codes given.
    init(big b: LLBIGInfo, accessAddress aa: UInt32, codes: [[UInt8]]) {
        isBIS = true
        if let giv = b.giv, let gskd = b.gskd {
            keys = codes.map { AESCCM(key: IsochronousEncryption.gsk(broadcastCode: $0, gskd: gskd)) }
            iv = IsochronousEncryption.iv(giv, accessAddress: aa)
        }
        if keys.isEmpty { noKey = "no key: give the Broadcast_Code (--broadcast-code)" }
        isoIntervalUs = Int64(b.isoInterval) * 1250
        bn = [UInt64(max(1, b.bn)), 1]
        pto = Int64(b.pto)
    }

    /// A BIGInfo heard: the BIG event at `us` is bisPayloadCount / BN.
    mutating func anchor(_ b: LLBIGInfo, at us: Int64) {
        bigAnchor = (Int64(b.bisPayloadCount / UInt64(max(1, b.bn))), us)
    }

    /// The payload counters worth trying for a PDU of direction `d` at `now`, likeliest first.
    func candidates(_ d: Int, now: Int64, control: Bool) -> [UInt64] {
        let bn = self.bn[d]
        var out: [UInt64] = []
        var ref: (event: Int64, us: Int64)?
        if let l = last[d] {
            out += [l.counter + 1, l.counter, l.counter + 2, l.counter + 3]
            ref = (Int64(l.counter / bn), l.us)
        } else if !isBIS, let o = last[1 - d] {
            // The other direction's: the same CIS events.
            ref = (Int64(o.counter / self.bn[1 - d]), o.us)
        } else if let a = bigAnchor {
            ref = a
        }
        guard isoIntervalUs > 0 else { return out }
        var events: ClosedRange<Int64>
        if let r = ref {
            let e = r.event + Int64((Double(now - r.us) / Double(isoIntervalUs)).rounded())
            events = (e - ft[d] - 1)...(e + 2 + pto)
        } else if !isBIS, searching {
            // The first PDU: any event since LL_CIS_IND (bounded).
            events = 0...min(4096, max(0, (now - since) / isoIntervalUs) + 2)
        } else {
            return out
        }
        events = max(0, events.lowerBound)...max(0, events.upperBound)
        for e in events {
            if control { out.append(UInt64(e)) }
            for k in 0..<bn { out.append(UInt64(e) * bn + k) }
        }
        return out
    }
}

/// An encrypted CIS/BIS PDU decrypted (its payload counter) or not (why).
public enum AirDecryption: Hashable, Sendable {
    case decrypted(UInt64)
    case notDecrypted(String)
    public var counter: UInt64? { if case .decrypted(let c) = self { c } else { nil } }
}

/// LE Audio's decode configuration: the Broadcast_Codes of `--broadcast-code` (never printed).
public struct LEAudioAirKeys: Sendable {
    public var broadcastCodes: [[UInt8]]

    /// 32 hex digits: the 16 octets as HCI and BASS carry them (first octet first); otherwise
    /// the code as text (BAP: UTF-8, at most 16 octets, zero-padded).
    public static func parse(_ v: String) -> [UInt8]? {
        let h = v.lowercased().hasPrefix("0x") ? String(v.dropFirst(2)) : v
        if h.count == 32, let b = Hex.parse(h), b.count == 16 { return b }
        let t = Array(v.utf8)
        guard !t.isEmpty, t.count <= 16 else { return nil }
        return t + [UInt8](repeating: 0, count: 16 - t.count)
    }
}

extension LEAudio {
    public static func configure(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any Sendable)? {
        var codes: [[UInt8]] = []
        for v in values["broadcast-code"] {
            // The value is a key: the error does not repeat it.
            guard let c = LEAudioAirKeys.parse(v) else {
                throw ModuleOptionError(option: "broadcast-code", value: "(hidden)", "expected 32 hex digits or a text code of 1 to 16 octets")
            }
            codes.append(c)
        }
        return codes.isEmpty ? nil : LEAudioAirKeys(broadcastCodes: codes)
    }
}

extension LEAudioAirLayer {
    /// Decrypts the PDU's payload in place when a counter verifies; says why not otherwise.
    mutating func decrypt(_ c: inout AirCrypto, now: Int64) {
        guard case .isochronous(var p) = value, p.payload.count > AESCCM.micLength, p.error == nil else { return }
        if let why = c.noKey {
            decryption = .notDecrypted(why)
            return
        }
        let aad = c.isBIS ? IsochronousEncryption.bisAAD(header: p.header) : IsochronousEncryption.cisAAD(header: p.header)
        let dirs: [Int] = c.isBIS ? [0] : fromCentral.map { [$0 ? 0 : 1] } ?? [0, 1]
        let control = c.isBIS && p.isBIGControl
        var out: [UInt8] = []
        for d in dirs {
            for counter in c.candidates(d, now: now, control: control) {
                let nonce = AESCCM.nonce(counter: counter, fromCentral: c.isBIS || d == 0, iv: c.iv)
                for (i, k) in c.keys.enumerated() {
                    let ok = p.payload.withUnsafeBytes { k.open($0, nonce: nonce, aad: aad, into: &out) }
                    guard ok else { continue }
                    if c.keys.count > 1 { c.keys = [c.keys[i]] }
                    c.last[d] = (counter, now)
                    p.payload = out
                    value = .isochronous(p)
                    if !c.isBIS, fromCentral == nil { fromCentral = d == 0 }
                    decryption = .decrypted(counter)
                    return
                }
            }
        }
        c.failures += 1
        decryption = .notDecrypted(
            c.last[dirs[0]] == nil && c.bigAnchor == nil && c.isBIS
                ? "counter unknown: no BIGInfo with its payload count yet" : "counter unknown: no payload counter near the schedule verifies the MIC")
    }
}
