import BluesiftSecurity
import BluesiftWire

/// The stateful Bluetooth Mesh decoder: one per capture. It takes bearer payloads (the data
/// of AD types 0x29/0x2A/0x2B, Mesh service data, GATT proxy or provisioning PDUs) and
/// returns a `MeshLayer`. It keeps the keys (`--mesh-keys`), the IV index (from the key
/// file, then from authenticated beacons and Friend Updates), friendship credentials learnt
/// from Friend Request/Offer, and reassembly tables; every table has a fixed bound and drops
/// its oldest entry when full, so memory stays flat over any capture.
public struct MeshDecoder {
    public var keys: MeshKeys? { didSet { recent.removeAll() } }
    /// The IV index the network is at (§3.10.5); a PDU's IVI picks it or the one before.
    public private(set) var ivIndex: UInt32
    /// Print key fields of configuration messages (AppKey Add, NetKey Add, ...).
    public var showKeys: Bool

    /// Bounds of the reassembly tables.
    static let alreadyReassembled = "segment of a message already reassembled"
    public static let maxSegmentedMessages = 64, maxTransactions = 32, maxProxyStreams = 16, maxFriendships = 16

    struct SARKey: Hashable { var src: UInt16, seqAuth: UInt32, ctl: Bool }
    struct SAREntry {
        var dst: UInt16, ivIndex: UInt32, segN: UInt8, akf: Bool, aid: UInt8, szmic: Bool, opcode: MeshControlOpcode?
        var parts: [UInt8: [UInt8]], age: Int, done: Bool
        /// DevKey messages only (they carry configuration keys): where each segment was
        /// heard, and the upper transport PDU sealed again with its keys zeroed (`redact`).
        var heard: [HeardSegment] = []
        var credentials: MeshNetworkCredentials? = nil
        var resealed: [UInt8]? = nil
    }
    /// A network PDU of a segment in its record(s), and what its network header held.
    struct HeardSegment { var pieces: [Piece], length: Int, seq: UInt32, ttl: UInt8, header: UInt32, segO: UInt8 }
    /// Where bytes of a bearer PDU lie: `length` octets at `offset` of record `frame`. A PDU
    /// carried in proxy SAR segments (§6.3.2) lies in several, in order.
    struct Piece { var frame: Int, offset: Int, length: Int }
    struct TxnKey: Hashable { var link: UInt32, number: UInt8 }
    struct TxnEntry {
        var segN: UInt8, total: UInt16, fcs: UInt8, parts: [UInt8: [UInt8]], age: Int, done: Bool
        /// With provisioning secrets only: each segment's record (AD value offset, segment
        /// index, data length), and the Provisioning PDU sealed again with its NetKey zeroed.
        var heard: [(frame: Int, offset: Int, index: UInt8, length: Int)] = []
        var resealed: [UInt8]? = nil
    }

    var sar: [SARKey: SAREntry] = [:]
    var txns: [TxnKey: TxnEntry] = [:]
    /// `pieces`: where each segment's data lies (nil once one was not in its record).
    var proxyStreams: [Int: (type: MeshProxyMessageType, data: [UInt8], age: Int, pieces: [Piece]?)] = [:]
    /// `counters`: LPNCounter << 16 | FriendCounter, the offer the credentials were made from.
    var friendships: [(lpn: UInt16, friend: UInt16, counters: UInt32, credentials: MeshNetworkCredentials)] = [] {
        didSet { recent.removeAll() }
    }
    var friendRequests: [UInt16: UInt16] = [:]
    /// Their order of arrival: at the bound the oldest goes (a Dictionary's order is seeded per
    /// process, so its `first` would differ from run to run).
    var friendRequestOrder: [UInt16] = []
    var clock = 0
    /// Unicast addresses heard, for resolving node identities (`MeshIdentityResolver`).
    var identities = MeshIdentityResolver()

    /// ECDH secrets or private keys (32 octets each, MSB first) of provisioning sessions in
    /// the capture: with one of them the Provisioning Data PDU is decrypted (§5.4.2.5) and
    /// its NetKey, IV index and the new node's DevKey are used from there on.
    public var provisioningSecrets: [[UInt8]] = []
    struct ProvisioningSession {
        var invite: [UInt8]?, capabilities: [UInt8]?, start: [UInt8]?
        var publicKeys: [[UInt8]] = [], randoms: [[UInt8]] = []
        var age: Int
    }
    var sessions: [Int: ProvisioningSession] = [:]
    var learntNets: [MeshNetworkCredentials] = [] { didSet { recent.removeAll() } }
    /// Network PDUs opened lately. Relays and Network Transmit repeats put the same PDU on
    /// the air several times (WHAD's capture: 74 % of its network PDUs are repeats, each
    /// within 16 PDUs of the first), and decrypting it again gives the same result: an exact
    /// cache keyed by the obfuscated bytes, the IV index in force and the nonce kind, emptied
    /// whenever the credentials change. Only the crypto is skipped: every copy still goes
    /// through the lower and upper transport (segments, SEQ, relays, statistics).
    /// The credentials are named by list and index (no key state copied per PDU): the lists
    /// do not change while the cache holds anything.
    struct Opened { var bytes: [UInt8], pdu: MeshNetworkPDU, ivIndex: UInt32, index: UInt16, list: UInt8, proxyNonce: Bool }
    var recent: [Opened] = [] { didSet { if recent.isEmpty { recentHeads.removeAll(); recentNext = 0 } } }
    /// The first eight octets of each `recent` PDU (its obfuscated SEQ among them): compared
    /// first, so a miss costs a scan of integers.
    var recentHeads: [UInt64] = []
    var recentNext = 0
    static let maxRecent = 32
    var learntDevKeys: [UInt16: MeshAccessKey] = [:]
    /// Their order of learning, for dropping the oldest at the bound.
    var learntDevKeyOrder: [UInt16] = []

    /// The record being decoded (its frame number) and where the bearer PDU starts in its
    /// bytes, nil when it is not in them (a reassembled value): set by the caller before each
    /// decode, so key material can be sealed again in place (`MeshLayer.secrets`, `redact`).
    public var frame = 0
    public var recordOffset: Int?
    /// Only `redact` reads the layers' `redactions`: without it no key material is sealed
    /// again and nothing is noted as left (dump, stats: the work of a second encryption).
    public var reseal = false
    /// Where the network (or provisioning) PDU being decoded lies in the records, when it does.
    /// (One piece kept without an array: most PDUs lie in one record and are never sealed again.)
    var networkPieces: [Piece]? {
        get { joinedPieces ?? onePiece.map { [$0] } }
        set { joinedPieces = newValue; onePiece = nil }
    }
    var onePiece: Piece?, joinedPieces: [Piece]?
    /// A Provisioning Data PDU sealed again by the last `provisioning` call.
    var resealedProvisioning: [UInt8]?
    /// An upper transport PDU with its configuration keys zeroed, sealed again by the last
    /// `upperAccess` call.
    var resealedAccess: [UInt8]?

    public init(keys: MeshKeys? = nil, showKeys: Bool = false) {
        self.keys = keys; self.showKeys = showKeys; ivIndex = keys?.ivIndex ?? 0
    }

    // MARK: bearers

    /// The data of an AD structure of type 0x29 (PB-ADV), 0x2A (Mesh Message) or 0x2B (Mesh
    /// Beacon) (Mesh Protocol v1.1 §3.3.1).
    public mutating func decodeAdvertising(adType: UInt8, data: [UInt8]) -> MeshLayer {
        clock += 1
        var l = MeshLayer(bearer: .advertising, adType: adType)
        onePiece = recordOffset.map { Piece(frame: frame, offset: $0, length: data.count) }; joinedPieces = nil
        switch adType {
        case 0x29: pbADV(data, into: &l)
        case 0x2A: network(data, proxyNonce: false, into: &l)
        case 0x2B: beacon(data, into: &l)
        default: l.notes.append(meshError(.unsupported, 0, "AD type 0x\(String(adType, radix: 16)) is not a mesh bearer"))
        }
        return l
    }

    /// Mesh Provisioning (0x1827) or Mesh Proxy (0x1828) service data.
    public mutating func decodeServiceData(uuid: UInt16, data: [UInt8]) -> MeshLayer {
        var l = MeshLayer(bearer: .advertising)
        do {
            var d = try MeshServiceData(uuid: uuid, data: data)
            if case .networkID(let id, _) = d, let keys { d = .networkID(networkID: id, known: keys.netKey(networkID: id) != nil) }
            if case .identity(let t, let h, let r) = d, let keys { l.identity = identities.resolve(type: t, hash: h, random: r, keys: keys) }
            l.serviceData = d
        } catch { l.notes.append(error) }
        return l
    }

    /// A Proxy PDU written to or notified from Mesh Proxy Data In/Out or Mesh Provisioning
    /// Data In/Out (§6.3). `stream` names one connection and direction: segments of one
    /// stream are joined (§6.3.2); `connection` names the link both directions share (a
    /// PB-GATT provisioning session), the stream when nil.
    public mutating func decodeProxy(_ bytes: [UInt8], stream: Int, connection: Int? = nil) -> MeshLayer {
        clock += 1
        var l = MeshLayer(bearer: .gatt)
        let p: MeshProxyPDU
        do { p = try MeshProxyPDU(decoding: bytes) } catch { l.notes.append(error); return l }
        l.proxy = p
        var whole: [UInt8]
        // Each segment's data follows its one-octet header in its record.
        let piece = recordOffset.map { Piece(frame: frame, offset: $0 + 1, length: p.data.count) }
        onePiece = p.sar == .complete ? piece : nil; joinedPieces = nil
        switch p.sar {
        case .complete:
            if proxyStreams.removeValue(forKey: stream) != nil {
                l.notes.append(meshError(.reassembly, 0, "a segmented proxy message was left incomplete"))
            }
            whole = p.data
        case .first:
            if proxyStreams[stream] != nil { l.notes.append(meshError(.reassembly, 0, "a segmented proxy message was left incomplete")) }
            evictProxyStream()
            proxyStreams[stream] = (p.messageType, p.data, clock, piece.map { [$0] })
            l.proxyReassembling = true
            return l
        default:
            guard var s = proxyStreams[stream], s.type == p.messageType else {
                l.notes.append(meshError(.reassembly, 0, "\(p.sar.name) without a first segment"))
                return l
            }
            guard s.data.count + p.data.count <= 4096 else {
                proxyStreams[stream] = nil
                l.notes.append(meshError(.reassembly, 0, "proxy message longer than 4096 octets dropped"))
                return l
            }
            s.data += p.data
            s.pieces = piece.flatMap { x in s.pieces.map { $0 + [x] } }
            if p.sar == .continuation { s.age = clock; proxyStreams[stream] = s; l.proxyReassembling = true; return l }
            proxyStreams[stream] = nil
            whole = s.data
            networkPieces = s.pieces
        }
        switch p.messageType {
        case .networkPDU: network(whole, proxyNonce: false, into: &l)
        case .meshBeacon: beacon(whole, into: &l)
        case .proxyConfiguration: network(whole, proxyNonce: true, into: &l)
        case .provisioningPDU:
            provisioning(whole, session: 1 << 40 | (connection ?? stream), into: &l)
            if let r = resealedProvisioning {
                // The Provisioning Data PDU sealed again, written over each segment's data.
                resealedProvisioning = nil
                if let pieces = networkPieces, r.count == whole.count {
                    write(r, over: pieces, Self.provisioningResealed, into: &l)
                } else if reseal {
                    l.redactions.append(ModuleSecret(frame: frame, range: 0..<0, replacement: nil, Self.provisioningOverGATT))
                }
            }
        default: l.notes.append(meshError(.unsupported, 0, "proxy message type \(p.messageType.rawValue)"))
        }
        whole = []
        return l
    }

    /// `bytes` written over the records they were heard in, piece by piece: one secret per
    /// record. Nothing when the lengths differ.
    func write(_ bytes: [UInt8], over pieces: [Piece], _ what: String, into l: inout MeshLayer) {
        guard pieces.reduce(0, { $0 + $1.length }) == bytes.count else { return }
        var at = 0
        for x in pieces {
            l.redactions.append(ModuleSecret(frame: x.frame, range: x.offset..<x.offset + x.length, replacement: Array(bytes[at..<at + x.length]), what))
            at += x.length
        }
    }

    mutating func evictProxyStream() {
        if proxyStreams.count >= Self.maxProxyStreams, let old = proxyStreams.min(by: { $0.value.age < $1.value.age })?.key {
            proxyStreams[old] = nil
        }
    }

    // MARK: beacons

    mutating func beacon(_ data: [UInt8], into l: inout MeshLayer) {
        do throws(DecodeError) {
            var b = try MeshBeacon(decoding: data)
            switch b {
            case .secureNetwork(let f, let id, let iv, let auth, _):
                if let net = keys?.netKey(networkID: id), let sb = try? MeshSecureNetworkBeacon(decoding: data) {
                    let ok = net.authenticates(sb)
                    b = .secureNetwork(flags: f, networkID: id, ivIndex: iv, authenticationValue: auth, authenticated: ok)
                    if ok { learnIVIndex(iv) }
                }
            case .meshPrivate(let r, let d, let t, _, _):
                for net in keys?.netKeys ?? [] {
                    if let p = try? net.decryptPrivateBeacon(data) {
                        b = .meshPrivate(random: r, obfuscatedData: d, authenticationTag: t, flags: p.flags, ivIndex: p.ivIndex)
                        learnIVIndex(p.ivIndex)
                        break
                    }
                }
            default: break
            }
            l.beacon = b
        } catch {
            l.notes.append(error)
        }
    }

    /// An IV index from an authenticated beacon or a decrypted Friend Update: used from here on.
    mutating func learnIVIndex(_ iv: UInt32) { ivIndex = iv }

    // MARK: provisioning

    mutating func pbADV(_ data: [UInt8], into l: inout MeshLayer) {
        let p: MeshPBADVPDU
        do { p = try MeshPBADVPDU(decoding: data) } catch { l.notes.append(error); return }
        l.pbadv = p
        let key = TxnKey(link: p.linkID, number: p.transactionNumber)
        // Where segments are heard matters only when a Provisioning Data PDU can be opened.
        let track = !provisioningSecrets.isEmpty && recordOffset != nil
        switch p.pdu {
        case .transactionStart(let n, let total, let fcs, let d):
            let heard = (frame: frame, offset: recordOffset ?? 0, index: UInt8(0), length: d.count)
            if var t = txns[key], t.done {
                t.age = clock; txns[key] = t
                if let r = t.resealed, track { resealProvisioningSegment(heard, of: t, resealed: r, into: &l) }
                if n == 0 { l.retransmission = true; finishTransaction(d, total: total, fcs: fcs, session: Int(p.linkID), into: &l) }
                return
            }
            if n == 0 {
                txns[key] = TxnEntry(segN: 0, total: total, fcs: fcs, parts: [:], age: clock, done: true, heard: track ? [heard] : [])
                evictTransactions()
                finishTransaction(d, total: total, fcs: fcs, session: Int(p.linkID), into: &l)
                resealedTransaction(key, into: &l)
                return
            }
            var t = txns[key] ?? TxnEntry(segN: n, total: total, fcs: fcs, parts: [:], age: clock, done: false)
            t.segN = n; t.total = total; t.fcs = fcs; t.parts[0] = d; t.age = clock
            if track && t.heard.count < 64 { t.heard.append(heard) }
            txns[key] = t
            evictTransactions()
            tryComplete(key, session: Int(p.linkID), into: &l)
        case .transactionContinuation(let i, let d):
            var t = txns[key] ?? TxnEntry(segN: 0xFF, total: 0, fcs: 0, parts: [:], age: clock, done: false)
            let heard = (frame: frame, offset: recordOffset ?? 0, index: i, length: d.count)
            if t.done {
                if let r = t.resealed, track { resealProvisioningSegment(heard, of: t, resealed: r, into: &l) }
                return
            }
            guard t.parts.count < 64 else { return }
            t.parts[i] = d; t.age = clock
            if track && t.heard.count < 64 { t.heard.append(heard) }
            txns[key] = t
            evictTransactions()
            tryComplete(key, session: Int(p.linkID), into: &l)
        default: break
        }
    }

    static let provisioningResealed = "Mesh Provisioning Data: NetKey zeroed, sealed again (records)"

    /// After a transaction completed: a Provisioning Data PDU opened and sealed again is
    /// written over every segment heard so far, and kept for the repeats to come.
    mutating func resealedTransaction(_ key: TxnKey, into l: inout MeshLayer) {
        guard let r = resealedProvisioning, let t = txns[key] else { return }
        resealedProvisioning = nil
        txns[key]?.resealed = r
        for h in t.heard { resealProvisioningSegment(h, of: t, resealed: r, into: &l) }
    }

    /// One PB-ADV segment (§5.2.1, §5.3.1) of a Provisioning Data PDU sealed again: its
    /// data, and the FCS of the Transaction Start (computed over the whole PDU).
    func resealProvisioningSegment(
        _ h: (frame: Int, offset: Int, index: UInt8, length: Int), of t: TxnEntry, resealed r: [UInt8], into l: inout MeshLayer
    ) {
        // A segment's place in the PDU: Start's data, then each continuation's in order.
        var lengths: [UInt8: Int] = [:]
        for x in t.heard { lengths[x.index] = x.length }
        var at = 0
        for i in 0..<h.index { guard let n = lengths[i] else { return }; at += n }
        guard at < r.count else { return }
        let chunk = r[at..<min(at + h.length, r.count)]
        // Link ID (4), Transaction Number (1), then the Generic Provisioning PDU: Start has
        // SegN, TotalLength (2), FCS before its data; a continuation its segment index.
        let (range, bytes) =
            h.index == 0
            ? (h.offset + 8..<h.offset + 9 + chunk.count, [MeshFCS.compute(r)] + chunk)
            : (h.offset + 6..<h.offset + 6 + chunk.count, Array(chunk))
        l.redactions.append(ModuleSecret(frame: h.frame, range: range, replacement: bytes, Self.provisioningResealed))
    }

    mutating func tryComplete(_ key: TxnKey, session: Int, into l: inout MeshLayer) {
        guard var t = txns[key], t.segN != 0xFF, !t.done, (0...t.segN).allSatisfy({ t.parts[$0] != nil }) else { return }
        var whole: [UInt8] = []
        for i in 0...t.segN { whole += t.parts[i]! }
        t.done = true; t.parts = [:]
        txns[key] = t
        finishTransaction(whole, total: t.total, fcs: t.fcs, session: session, into: &l)
        resealedTransaction(key, into: &l)
    }

    mutating func finishTransaction(_ whole: [UInt8], total: UInt16, fcs: UInt8, session: Int, into l: inout MeshLayer) {
        guard whole.count >= Int(total) else {
            l.notes.append(meshError(.reassembly, 0, "transaction of \(whole.count) octets, TotalLength \(total)")); return
        }
        let pdu = Array(whole[0..<Int(total)])
        l.fcsOK = MeshFCS.compute(pdu) == fcs
        if l.fcsOK == false { l.notes.append(meshError(.invalidValue, 3, "FCS does not match the provisioning PDU")) }
        provisioning(pdu, session: session, into: &l)
    }

    mutating func evictTransactions() {
        while txns.count > Self.maxTransactions, let old = txns.min(by: { $0.value.age < $1.value.age })?.key { txns[old] = nil }
    }

    mutating func provisioning(_ pdu: [UInt8], session key: Int, into l: inout MeshLayer) {
        let p: MeshProvisioningPDU
        do { p = try MeshProvisioningPDU(decoding: pdu) } catch { l.notes.append(error); return }
        l.provisioning = p
        guard !l.retransmission else { return }
        // What the session keys are made of (§5.4.2.4-§5.4.2.5), in the order sent: the
        // provisioner's public key and random come before the device's.
        var s = sessions[key] ?? ProvisioningSession(age: clock)
        s.age = clock
        switch p.type {
        case .invite: s = ProvisioningSession(age: clock); s.invite = p.parameters
        case .capabilities: s.capabilities = p.parameters
        case .start: s.start = p.parameters
        case .publicKey: if s.publicKeys.count < 2 { s.publicKeys.append(p.parameters) }
        case .random: if s.randoms.count < 2 { s.randoms.append(p.parameters) }
        case .data: l.provisioningData = decryptProvisioningData(p.type.rawValue, p.parameters, s, into: &l)
        default: break
        }
        sessions[key] = s
        while sessions.count > 16, let old = sessions.min(by: { $0.value.age < $1.value.age })?.key { sessions[old] = nil }
    }

    /// The Provisioning Data PDU opened with one of `provisioningSecrets` (§5.4.2.5).
    mutating func decryptProvisioningData(_ type: UInt8, _ pdu: [UInt8], _ s: ProvisioningSession, into l: inout MeshLayer) -> MeshProvisioningData? {
        guard !provisioningSecrets.isEmpty else {
            if reseal { l.redactions.append(ModuleSecret(frame: frame, range: 0..<0, replacement: nil, Self.provisioningNoSecret)) }
            return nil
        }
        guard let invite = s.invite, let caps = s.capabilities, let start = s.start, s.publicKeys.count == 2, s.randoms.count == 2,
            let algorithm = start.first.map(MeshProvisioningAlgorithm.init(rawValue:))
        else {
            l.notes.append(meshError(.reassembly, 0, "provisioning data: the session's earlier PDUs were not all seen"))
            if reseal { l.redactions.append(ModuleSecret(frame: frame, range: 0..<0, replacement: nil, Self.provisioningUnopened)) }
            return nil
        }
        let inputs = MeshProvisioningSecurity.confirmationInputs(
            invite: invite, capabilities: caps, start: start,
            provisionerPublicKey: s.publicKeys[0], devicePublicKey: s.publicKeys[1])
        let salt = MeshProvisioningSecurity.confirmationSalt(inputs: inputs, algorithm: algorithm)
        let provSalt = MeshProvisioningSecurity.provisioningSalt(confirmationSalt: salt, randomProvisioner: s.randoms[0], randomDevice: s.randoms[1])
        var candidates: [[UInt8]] = []
        for secret in provisioningSecrets where secret.count == 32 {
            candidates.append(secret)
            // As a private key: the shared secret with the other side's public key.
            if let pair = try? SMPKeyPair(privateKey: secret) {
                for (mine, peer) in [(0, 1), (1, 0)] where Array(s.publicKeys[mine][0..<32]) == pair.x {
                    if let dh = try? pair.dhKey(peerX: Array(s.publicKeys[peer][0..<32]), peerY: Array(s.publicKeys[peer][32..<64])) { candidates.append(dh) }
                }
            }
        }
        for ecdh in candidates {
            let key = MeshProvisioningSecurity.sessionKey(ecdhSecret: ecdh, provisioningSalt: provSalt)
            let nonce = MeshProvisioningSecurity.sessionNonce(ecdhSecret: ecdh, provisioningSalt: provSalt)
            guard let d = try? MeshProvisioningSecurity.decryptData(pdu, sessionKey: key, sessionNonce: nonce) else { continue }
            learnIVIndex(d.ivIndex)
            if let c = MeshNetworkCredentials(netKey: d.netKey), !(keys?.credentials(nid: c.nid).isEmpty == false) {
                learntNets.append(c); if learntNets.count > 16 { learntNets.removeFirst() }
            }
            if let devKey = MeshAccessKey(devKey: MeshProvisioningSecurity.deviceKey(ecdhSecret: ecdh, provisioningSalt: provSalt)),
                learntDevKeys.updateValue(devKey, forKey: d.unicastAddress) == nil
            {
                learntDevKeyOrder.append(d.unicastAddress)
            }
            if learntDevKeys.count > 64 { learntDevKeys[learntDevKeyOrder.removeFirst()] = nil }
            // For `redact`: the same PDU with a zero NetKey, sealed with the same session key
            // and nonce (IV index and unicast address are heard in the clear anyway).
            var zero = d
            zero.netKey = [UInt8](repeating: 0, count: 16)
            if reseal, let sealed = try? MeshProvisioningSecurity.encryptData(zero, sessionKey: key, sessionNonce: nonce) {
                resealedProvisioning = [type] + sealed + pdu.dropFirst(sealed.count)
            }
            return d
        }
        l.notes.append(meshError(.invalidValue, 25, "provisioning data: no given secret opens it"))
        if reseal { l.redactions.append(ModuleSecret(frame: frame, range: 0..<0, replacement: nil, Self.provisioningUnopened)) }
        return nil
    }

    static let provisioningNoSecret = "Mesh Provisioning Data left encrypted as it was (no provisioning secret in --mesh-keys)"
    static let provisioningUnopened = "Mesh Provisioning Data left encrypted as it was (no given secret opens it)"
    static let provisioningOverGATT = "Mesh Provisioning Data over GATT left encrypted as it was (its segments were not all in their records)"

    // MARK: network and transport

    mutating func network(_ pdu: [UInt8], proxyNonce: Bool, into l: inout MeshLayer) {
        l.networkPDU = pdu
        guard pdu.count >= MeshNetworkSecurity.minimumPDUSize else {
            l.notes.append(meshError(.truncated, pdu.count, "network PDU: \(pdu.count) octets, needs \(MeshNetworkSecurity.minimumPDUSize)"))
            return
        }
        guard keys != nil || !learntNets.isEmpty else { l.encrypted = "no --mesh-keys"; return }
        let nid = pdu[0] & 0x7F
        // The credentials with this NID: the key file's, those learnt from provisioning data,
        // friendships'; tried in place (no list made per PDU).
        let kind: MeshNetworkNonceKind = proxyNonce ? .proxy : .network
        var tried = false
        var hit: (MeshNetworkPDU, MeshNetworkCredentials, Bool)?
        // Where the credentials that opened it are: 0 the key file's (by NID), 1 learnt, 2 friendships'.
        var from: (list: UInt8, index: Int) = (0, 0)
        let head = pdu.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } // 14 octets or more
        for i in recentHeads.indices where recentHeads[i] == head && recent[i].bytes == pdu {
            guard recent[i].ivIndex == ivIndex && recent[i].proxyNonce == proxyNonce else { continue }
            let k = Int(recent[i].index)
            let c: MeshNetworkCredentials? =
                switch recent[i].list {
                case 0: keys?.credentials(nid: nid)[k]
                case 1: learntNets[k]
                default: friendships[k].credentials
                }
            if let c { hit = (recent[i].pdu, c, recent[i].list == 2); tried = true }
            break
        }
        let cached = hit != nil
        for (i, c) in (keys?.credentials(nid: nid) ?? []).enumerated() where !cached {
            tried = true
            if let p = try? MeshNetworkSecurity.decrypt(pdu, credentials: c, currentIVIndex: ivIndex, nonce: kind) { hit = (p, c, false); from = (0, i); break }
        }
        if hit == nil {
            for (i, c) in learntNets.enumerated() where c.nid == nid {
                tried = true
                if let p = try? MeshNetworkSecurity.decrypt(pdu, credentials: c, currentIVIndex: ivIndex, nonce: kind) { hit = (p, c, false); from = (1, i); break }
            }
        }
        if hit == nil {
            for (i, f) in friendships.enumerated() where f.credentials.nid == nid {
                tried = true
                if let p = try? MeshNetworkSecurity.decrypt(pdu, credentials: f.credentials, currentIVIndex: ivIndex, nonce: kind) {
                    hit = (p, f.credentials, true); from = (2, i); break
                }
            }
        }
        guard tried else { l.encrypted = "no NetKey with NID " + Hex.fixed(UInt64(nid), width: 2); return }
        if case let (p, c, friend)? = hit {
            if !cached {
                let e = Opened(bytes: pdu, pdu: p, ivIndex: ivIndex, index: UInt16(from.index), list: from.list, proxyNonce: proxyNonce)
                if recent.count < Self.maxRecent {
                    recent.append(e); recentHeads.append(head)
                } else {
                    recent[recentNext] = e; recentHeads[recentNext] = head
                }
                recentNext = (recentNext + 1) % Self.maxRecent
            }
            l.netMIC = "ok"
            identities.heard(p.src)
            l.network = MeshNetworkInfo(
                ivi: p.ivi, nid: p.nid, ctl: p.ctl, ttl: p.ttl, seq: p.seq, src: p.src, dst: p.dst,
                ivIndex: p.ivIndex, friendship: friend, proxyNonce: proxyNonce)
            if proxyNonce {
                do { l.proxyConfig = try MeshProxyConfigMessage(decoding: p.transportPDU) } catch { l.notes.append(error) }
            } else {
                lowerTransport(p, c, into: &l)
            }
            return
        }
        l.netMIC = "bad"
    }

    mutating func lowerTransport(_ p: MeshNetworkPDU, _ c: MeshNetworkCredentials, into l: inout MeshLayer) {
        let lower: MeshLowerTransportPDU
        do { lower = try MeshLowerTransportPDU(decoding: p.transportPDU, ctl: p.ctl) } catch { l.notes.append(error); return }
        l.lower = lower
        switch lower {
        case .unsegmentedAccess(let akf, let aid, let upper):
            upperAccess(upper, akf: akf, aid: aid, szmic: false, seqAuth: p.seq, src: p.src, dst: p.dst, ivIndex: p.ivIndex, segments: 1, into: &l)
            if let r = resealedAccess {
                resealedAccess = nil
                if let pieces = networkPieces, let n = l.networkPDU?.count {
                    let h = HeardSegment(pieces: pieces, length: n, seq: p.seq, ttl: p.ttl, header: UInt32(p.transportPDU[0]), segO: 0)
                    resealSegment(h, headerSize: 1, upper: r, src: p.src, dst: p.dst, ivIndex: p.ivIndex, c, into: &l)
                }
            }
        case .unsegmentedControl(let op, let params):
            control(MeshControlMessage(opcode: op, parameters: params), p, into: &l)
        case .segmentAck(_, let z, _):
            // Acknowledges the message the destination sent: SRC of the ack is its DST.
            for (k, e) in sar where k.src == p.dst && k.seqAuth & 0x1FFF == UInt32(z) && e.dst == p.src { sar[k]?.age = clock }
        case .segmentedAccess(let akf, let aid, let sz, let z, let o, let n, let seg):
            segment(
                key: SARKey(src: p.src, seqAuth: MeshLowerTransportPDU.seqAuth(seq: p.seq, seqZero: z), ctl: false),
                segO: o, segN: n, data: seg, akf: akf, aid: aid, szmic: sz, opcode: nil, p, c, into: &l)
        case .segmentedControl(let op, let z, let o, let n, let seg):
            segment(
                key: SARKey(src: p.src, seqAuth: MeshLowerTransportPDU.seqAuth(seq: p.seq, seqZero: z), ctl: true),
                segO: o, segN: n, data: seg, akf: false, aid: 0, szmic: false, opcode: op, p, c, into: &l)
        }
    }

    mutating func segment(
        key: SARKey, segO: UInt8, segN: UInt8, data: [UInt8], akf: Bool, aid: UInt8, szmic: Bool, opcode: MeshControlOpcode?,
        _ p: MeshNetworkPDU, _ c: MeshNetworkCredentials, into l: inout MeshLayer
    ) {
        var e =
            sar[key]
            ?? SAREntry(
                dst: p.dst, ivIndex: p.ivIndex, segN: segN, akf: akf, aid: aid, szmic: szmic, opcode: opcode,
                parts: [:], age: clock, done: false)
        guard e.segN == segN else { l.notes.append(meshError(.reassembly, 3, "SegN \(segN) differs from the message's \(e.segN)")); return }
        if e.done {
            l.segmentsHeld = (Int(segN) + 1, Int(segN) + 1)
            l.upper = MeshUpperTransportInfo(mic: nil, encrypted: Self.alreadyReassembled, key: nil, seqAuth: key.seqAuth, segments: Int(segN) + 1)
            if let r = e.resealed, let h = heardSegment(p, segO: segO), let ec = e.credentials {
                resealSegment(h, headerSize: 4, upper: r, src: p.src, dst: e.dst, ivIndex: e.ivIndex, ec, into: &l)
            }
            return
        }
        e.parts[segO] = data; e.age = clock
        // DevKey messages are the ones that may carry configuration keys.
        if !akf && opcode == nil && e.heard.count < 64, let h = heardSegment(p, segO: segO) {
            e.heard.append(h)
            if e.credentials == nil { e.credentials = c }
        }
        l.segmentsHeld = (e.parts.count, Int(segN) + 1)
        guard e.parts.count == Int(segN) + 1 else {
            sar[key] = e
            evictSegmented()
            return
        }
        var whole: [UInt8] = []
        for i in 0...segN { whole += e.parts[i]! }
        e.parts = [:]; e.done = true
        sar[key] = e
        evictSegmented()
        if let op = opcode {
            control(MeshControlMessage(opcode: op, parameters: whole), p, into: &l)
        } else {
            upperAccess(
                whole, akf: akf, aid: aid, szmic: szmic, seqAuth: key.seqAuth, src: p.src, dst: e.dst, ivIndex: e.ivIndex,
                segments: Int(segN) + 1, into: &l)
            if let r = resealedAccess {
                resealedAccess = nil
                sar[key]?.resealed = r
                for h in e.heard { resealSegment(h, headerSize: 4, upper: r, src: p.src, dst: e.dst, ivIndex: e.ivIndex, e.credentials ?? c, into: &l) }
            }
        }
    }

    static let accessResealed = "Mesh configuration keys (AppKey/NetKey Add/Update) zeroed, sealed again (records)"
    static let accessUnopened = "Mesh DevKey messages left encrypted as they were (no DevKey opens them; configuration keys they may carry stay)"

    /// Where this record's network PDU lies, with the header fields a segment keeps.
    func heardSegment(_ p: MeshNetworkPDU, segO: UInt8) -> HeardSegment? {
        guard let pieces = networkPieces, p.transportPDU.count >= 4 else { return nil }
        let t = p.transportPDU
        let header = UInt32(t[0]) << 24 | UInt32(t[1]) << 16 | UInt32(t[2]) << 8 | UInt32(t[3])
        return HeardSegment(pieces: pieces, length: t.count + 9 + 4, seq: p.seq, ttl: p.ttl, header: header, segO: segO)
    }

    /// One network PDU of a DevKey message sealed again (§3.9.7): its segment of the upper
    /// transport PDU `upper` (12 octets per segment, §3.5.2.3), encrypted and obfuscated with
    /// the network credentials, SEQ and TTL it was heard with. Kept only when the length is
    /// the record's.
    func resealSegment(
        _ h: HeardSegment, headerSize: Int, upper: [UInt8], src: UInt16, dst: UInt16, ivIndex: UInt32, _ c: MeshNetworkCredentials,
        into l: inout MeshLayer
    ) {
        let a = headerSize == 1 ? 0 : Int(h.segO) * 12
        guard a < upper.count else { return }
        let chunk = headerSize == 1 ? upper[...] : upper[a..<min(a + 12, upper.count)]
        let header = (0..<headerSize).map { UInt8(truncatingIfNeeded: h.header >> (8 * UInt32(headerSize - 1 - $0))) }
        let pdu = MeshNetworkPDU(nid: c.nid, ctl: false, ttl: h.ttl, seq: h.seq, src: src, dst: dst, transportPDU: header + chunk, ivIndex: ivIndex)
        guard let sealed = try? MeshNetworkSecurity.encrypt(pdu, credentials: c), sealed.count == h.length else { return }
        write(sealed, over: h.pieces, Self.accessResealed, into: &l)
    }

    mutating func evictSegmented() {
        while sar.count > Self.maxSegmentedMessages, let old = sar.min(by: { $0.value.age < $1.value.age })?.key { sar[old] = nil }
    }

    /// Segmented messages whose segments have not all been seen (for statistics).
    public var incompleteSegmentedMessages: Int { sar.values.filter { !$0.done }.count }

    mutating func upperAccess(
        _ upper: [UInt8], akf: Bool, aid: UInt8, szmic: Bool, seqAuth: UInt32, src: UInt16, dst: UInt16, ivIndex: UInt32,
        segments: Int, into l: inout MeshLayer
    ) {
        var info = MeshUpperTransportInfo(mic: nil, encrypted: nil, key: nil, seqAuth: seqAuth, segments: segments)
        defer { l.upper = info }
        guard keys != nil || !learntDevKeys.isEmpty else { info.encrypted = "no --mesh-keys"; return }
        func dev(_ a: UInt16) -> MeshAccessKey? { keys?.devKeys[a] ?? learntDevKeys[a] }
        // The keys to try, without a list per PDU: AppKeys by AID, or the DevKeys of the
        // source and the destination; each name is made only for the one that opens it.
        let appKeys = akf ? keys?.appKeys(aid: aid) ?? [] : []
        let devSrc = akf ? nil : dev(src), devDst = akf ? nil : dev(dst)
        guard !appKeys.isEmpty || devSrc != nil || devDst != nil else {
            info.encrypted = akf ? "no AppKey with AID " + Hex.fixed(UInt64(aid), width: 2) : "no DevKey of " + MeshAddress.text(src) + " or " + MeshAddress.text(dst)
            if reseal && !akf { l.redactions.append(ModuleSecret(frame: frame, range: 0..<0, replacement: nil, Self.accessUnopened)) }
            return
        }
        let virtual = dst & 0xC000 == 0x8000
        let labels = virtual ? keys?.labels[dst] ?? [] : []
        if virtual && labels.isEmpty { info.encrypted = "no label UUID for virtual address " + MeshAddress.text(dst); return }
        var opened: ([UInt8], MeshAccessKey, [UInt8]?, UInt16?)?
        func attempt(_ k: MeshAccessKey, _ devOf: UInt16?) -> Bool {
            if !virtual {
                if let plain = try? MeshUpperTransport.decrypt(upper, key: k, szmic: szmic, seq: seqAuth, src: src, dst: dst, ivIndex: ivIndex) {
                    opened = (plain, k, nil, devOf); return true
                }
                return false
            }
            for label in labels {
                if let plain = try? MeshUpperTransport.decrypt(upper, key: k, szmic: szmic, seq: seqAuth, src: src, dst: dst, ivIndex: ivIndex, label: label) {
                    opened = (plain, k, label, devOf); return true
                }
            }
            return false
        }
        var done = false
        for k in appKeys where !done { done = attempt(k, nil) }
        if !done, let k = devSrc { done = attempt(k, src) }
        if !done, let k = devDst { done = attempt(k, dst) }
        guard case let (plain, k, label, devOf)? = opened else {
            info.mic = "bad"
            if reseal && !akf { l.redactions.append(ModuleSecret(frame: frame, range: 0..<0, replacement: nil, Self.accessUnopened)) }
            return
        }
        info.mic = "ok"; info.key = devOf.map { "dev " + MeshAddress.text($0) } ?? "app"; info.label = label
        do {
            var a = try MeshAccessMessage(decoding: plain)
            a.showKeys = showKeys
            if reseal, !akf, case let ranges = a.secretRanges, !ranges.isEmpty {
                // For `redact`: the keys zeroed, sealed with the same key and nonce.
                var zero = plain
                for r in ranges { for i in r { zero[i] = 0 } }
                resealedAccess = try? MeshUpperTransport.encrypt(
                    accessPayload: zero, key: k, szmic: szmic, seq: seqAuth, src: src, dst: dst, ivIndex: ivIndex, label: label)
            }
            l.access = a
        } catch { l.notes.append(error) }
    }

    mutating func control(_ c: MeshControlMessage, _ p: MeshNetworkPDU, into l: inout MeshLayer) {
        l.control = c
        do { try c.validate() } catch { l.notes.append(error); return }
        let b = c.parameters
        switch c.opcode {
        case .friendRequest:
            if friendRequests.updateValue(UInt16(meshBE(b, 8, 2)), forKey: p.src) == nil { friendRequestOrder.append(p.src) }
            if friendRequests.count > Self.maxFriendships { friendRequests[friendRequestOrder.removeFirst()] = nil }
        case .friendOffer:
            // Friendship credentials (§3.9.6.3.1) from the LPN's request and this offer.
            guard let lpnCounter = friendRequests[p.dst], let keys else { break }
            let friendCounter = UInt16(meshBE(b, 4, 2))
            let counters = UInt32(lpnCounter) << 16 | UInt32(friendCounter)
            // An offer heard again (the same counters) keeps the credentials made from the
            // first: deriving them (k2) cost as much as decrypting the PDU.
            if friendships.contains(where: { $0.lpn == p.dst && $0.friend == p.src && $0.counters == counters }) { break }
            for net in keys.netKeys where net.flooding.nid == p.nid {
                friendships.removeAll { $0.lpn == p.dst && $0.friend == p.src }
                friendships.append(
                    (p.dst, p.src, counters, net.friendship(lpnAddress: p.dst, friendAddress: p.src, lpnCounter: lpnCounter, friendCounter: friendCounter)))
                if friendships.count > Self.maxFriendships { friendships.removeFirst() }
            }
        case .friendUpdate:
            learnIVIndex(meshBE(b, 1, 4))
        default: break
        }
    }

    /// Friendship credentials given directly (the sample data's LPN/Friend pair), for
    /// captures that start after the Friend Offer.
    public mutating func addFriendship(lpnAddress: UInt16, friendAddress: UInt16, lpnCounter: UInt16, friendCounter: UInt16) {
        for net in keys?.netKeys ?? [] {
            friendships.append(
                (
                    lpnAddress, friendAddress, UInt32(lpnCounter) << 16 | UInt32(friendCounter),
                    net.friendship(
                        lpnAddress: lpnAddress, friendAddress: friendAddress,
                        lpnCounter: lpnCounter, friendCounter: friendCounter)
                ))
        }
        while friendships.count > Self.maxFriendships { friendships.removeFirst() }
    }
}
