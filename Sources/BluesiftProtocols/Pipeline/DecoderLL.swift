import BluesiftWire
import BluesiftCapture
import BluesiftSecurity

extension ProtocolDecoder {
    static let maxSniffedConnections = 1024

    /// Over-the-air LE packets (Core 5.4 Vol 6 Part B §2): advertising → `adv`, data channel
    /// LLID 1/2 → L2CAP reassembly per access address and direction, unless encrypted (then
    /// decrypted when a key is known). A packet whose CRC is bad (the sniffer said so, or it
    /// did not check and the CRC fails, §3.1.1) is shown and counted, nothing more: its bytes
    /// are noise. So is a data PDU whose CRC cannot be checked yet (`unconfirmedLink`).
    func decodeLL(_ record: CaptureRecord, _ f: inout DecodedFrame) {
        var ll = LLPacket(bytes: record.bytes, sniffer: record.sniffer)
        airPackets += 1
        if ll.crc != nil {
            // Checked even when the sniffer did: a "valid" CRC that fails is worth a warning.
            if ll.isAdvertising { ll.checkCRC(crcInit: LLCRC.advertisingInit) } else if let n = sniffed[ll.accessAddress], let i = links[n]?.crcInit { ll.checkCRC(crcInit: i) }
            if ll.crcComputed { crcComputedPackets += 1 }
            if ll.crcValidatedWrongly {
                crcValidatedWrongly += 1
                if firstCRCValidatedWrongly == nil { firstCRCValidatedWrongly = record.frame }
            }
        }
        if ll.crcOK == false {
            crcBadPackets += 1
            if ll.crcComputed { crcComputedBad += 1 }
            if !ll.isAdvertising, let n = sniffed[ll.accessAddress], let link = links[n] {
                f.connection = n
                link.air.crcBad += 1
                _ = link.guessSender(record.timestamp) // still a turn in the connection event
                // Its header is all there is to go on: a non-empty PDU whose receipt the other
                // side's NESN may confirm.
                if let from = record.sniffer?.fromCentral, ll.length > 0 { link.crcBadUnacknowledged[from ? 1 : 0] = record.frame }
            }
            f.set(ll)
            return
        }
        // An access address a module claimed (a CIS, a BIS, a periodic advertising train).
        if !ll.isAdvertising, registry.hasLLAddressCarriers, !claimedAccessAddresses.isEmpty,
            let claim = claimedAccessAddresses[ll.accessAddress]
        {
            claimedLL(&ll, claim, record, &f)
            return
        }
        if ll.crcUnverifiable, !ll.isAdvertising, sniffed[ll.accessAddress] == nil, !unconfirmedLink(&ll, record) {
            ll.crcAwaitsLink = true
            f.set(ll)
            return
        }
        if let e = ll.error { f.errors.append(e.inLayer("ll")) }
        if ll.isAdvertising {
            if let adv = ll.advertising {
                if let e = adv.error { f.errors.append(e.inLayer("adv")) }
                f.set(adv)
            }
            if ll.pduType == LLAdvPDUType.connectInd, let c = ll.connectInd { connectIndication(c, ll, record) }
        } else if ll.llid != nil {
            decodeAirData(&ll, record, &f)
        }
        f.set(ll)
    }

    /// A data PDU on an access address no CONNECT_IND announced, its CRC unchecked by the
    /// sniffer. Every packet has a CRCInit under which its CRC holds (`LLCRC.crcInit`); a
    /// connection's packets share one, noise does not. The second packet agreeing with the
    /// first opens the connection (true: decode it); a packet whose CRCInit is a known link's
    /// is that link's packet with a corrupted access address. Otherwise it waits (false).
    private func unconfirmedLink(_ ll: inout LLPacket, _ record: CaptureRecord) -> Bool {
        guard let pdu = ll.crcCovered, let crc = ll.crc else { return true }
        let aa = ll.accessAddress
        let crcInit = LLCRC.crcInit(of: pdu, crc: crc)
        if links.values.contains(where: { $0.crcInit == crcInit && $0.accessAddress != aa }) {
            accessAddressBitErrors += 1
            if firstAccessAddressBitError == nil { firstAccessAddressBitError = record.frame }
            return false
        }
        if let first = unconfirmed[aa], first.crcInit == crcInit {
            unconfirmed[aa] = nil
            let n = sniffedConnection(aa, record)
            links[n]?.crcInit = crcInit
            ll.checkCRC(crcInit: crcInit)
            crcComputedPackets += 1
            return true
        }
        if unconfirmed.count >= Self.maxSniffedConnections, unconfirmed[aa] == nil,
            let victim = unconfirmed.min(by: { $0.value.since < $1.value.since })
        {
            unconfirmed[victim.key] = nil
        }
        unconfirmed[aa] = (crcInit, unconfirmedSeen)
        unconfirmedSeen &+= 1
        unverifiedPackets += 1
        if firstUnverifiedPacket == nil { firstUnverifiedPacket = record.frame }
        return false
    }

    /// Stable small number of a sniffed connection (1, 2, …), with its ConnectionInfo.
    func sniffedConnection(_ aa: UInt32, _ record: CaptureRecord) -> UInt16 {
        if let n = sniffed[aa] { return n }
        // The oldest goes: numbers are handed out in order (a Dictionary's `first` is not).
        if sniffed.count >= Self.maxSniffedConnections, let victim = sniffed.min(by: { $0.value < $1.value }) {
            sniffed[victim.key] = nil
            links[victim.value] = nil
            release(StateKey(adapter: record.adapter, connection: 0x1_0000 | UInt32(victim.value)))
        }
        let n = nextSniffedNumber
        nextSniffedNumber = nextSniffedNumber == .max ? 1 : nextSniffedNumber + 1
        sniffed[aa] = n
        var c = ConnectionInfo(adapter: record.adapter, handle: n)
        c.transport = .le; c.accessAddress = aa
        c.start = record.timestamp; c.startFrame = record.frame
        let link = SniffedLink(number: n, tableID: table.open(c), accessAddress: aa)
        links[n] = link
        return n
    }

    /// CONNECT_IND / AUX_CONNECT_REQ (§2.3.3.1): the initiator becomes the central, the
    /// advertiser the peripheral. A new connection on an access address seen before starts
    /// afresh.
    private func connectIndication(_ c: LLConnectInd, _ ll: LLPacket, _ record: CaptureRecord) {
        if let old = sniffed[c.accessAddress] {
            flush(links[old])
            sniffed[c.accessAddress] = nil
            links[old] = nil
            release(StateKey(adapter: record.adapter, connection: 0x1_0000 | UInt32(old)))
        }
        let n = sniffedConnection(c.accessAddress, record)
        guard let link = links[n] else { return }
        link.air.central = c.initA; link.air.centralAddressType = ll.txAdd ? .random : .public
        link.air.peripheral = c.advA; link.air.peripheralAddressType = ll.rxAdd ? .random : .public
        link.air.interval = c.interval; link.air.timeout = c.timeout; link.air.crcInit = c.crcInit
        link.crcInit = c.crcInit
        link.air.phy = ll.sniffer?.phy
        table.update(link.tableID) { info in
            info.peer = c.advA; info.peerAddressType = ll.rxAdd ? .random : .public
            info.air = link.air
        }
    }

    /// LLID 2 starts an L2CAP PDU, LLID 1 continues it (empty LLID 1 PDUs carry nothing).
    /// Used by tests and the air path alike: `fromCentral` picks the reassembly side.
    func decodeLLData(
        llid: UInt8, payload: UnsafeRawBufferPointer, accessAddress: UInt32, fromCentral: Bool?,
        encrypted: Bool, _ record: CaptureRecord, _ f: inout DecodedFrame
    ) {
        let n = sniffedConnection(accessAddress, record)
        f.connection = n
        guard llid == 1 || llid == 2, !encrypted, !(llid == 1 && payload.isEmpty) else { return }
        let side: UInt8 = fromCentral.map { $0 ? 0 : 1 } ?? 2
        let s = state(StateKey(adapter: record.adapter, connection: 0x1_0000 | UInt32(n)))
        reassemble(payload, declared: payload.count, starts: llid == 2, state: s, side: side, record, &f)
    }

    /// A data channel PDU of a sniffed connection: direction, retransmission, encryption,
    /// then LL control or L2CAP.
    private func decodeAirData(_ ll: inout LLPacket, _ record: CaptureRecord, _ f: inout DecodedFrame) {
        let n = sniffedConnection(ll.accessAddress, record)
        f.connection = n
        guard let link = links[n] else { return }
        link.air.packets += 1
        link.air.lastSeen = record.timestamp
        link.air.lastSeenFrame = record.frame
        if let p = record.sniffer?.phy { link.air.phy = p }
        ll.central = link.air.central; ll.peripheral = link.air.peripheral
        var from = record.sniffer?.fromCentral
        // Without the sniffer's word, the timing tells: the central opens each connection
        // event and the two then alternate (§4.5.1). Tried first, never trusted alone for keys.
        let guess = from == nil ? link.guessSender(record.timestamp) : from
        ll.fromCentral = from
        if let from { link.sequence(&ll, side: from ? 0 : 1); link.acknowledge(&ll, side: from ? 0 : 1) }
        if ll.retransmission { link.air.retransmissions += 1; retransmissions += 1 }
        if ll.missedBefore { link.air.missed += 1 }

        // Ciphertext from LL_START_ENC_REQ on (§5.1.3.1): every non-empty PDU carries a MIC,
        // so one shorter than 5 octets is plaintext (a START_ENC_REQ sent again).
        // A sniffer may decrypt without saying so (WHAD: no "decrypted" flag): its plaintext,
        // once recognised, marks the link as decrypted by the sniffer.
        if link.encrypted, ll.length > 0, record.sniffer?.encrypted == nil, !link.snifferDecrypts, Self.isPlaintext(ll) {
            link.snifferDecrypts = true
        }
        if link.encrypted, ll.length > 0, record.sniffer?.encrypted == false || (link.snifferDecrypts && record.sniffer?.encrypted == nil) {
            // The sniffer decrypted it (nRF Sniffer following a pairing): MIC already removed.
            ll.decrypted = true
            link.air.encrypted += 1; link.air.decrypted += 1; link.air.decryptedBySniffer += 1
            encryptedPackets += 1; decryptedPackets += 1
        } else if link.encrypted, ll.length >= 5, ll.error == nil || ll.payload.count == ll.length {
            ll.markEncrypted()
            link.air.encrypted += 1; encryptedPackets += 1
            guard let dir = decrypt(&ll, link: link, from: from, guess: guess, record, &f) else { return }
            from = dir
            ll.fromCentral = dir
            if ll.retransmission { return }
        } else if ll.retransmission {
            return
        }
        guard let llid = ll.llid else { return }
        if llid == 3 {
            guard let p = ll.controlData, let op = ll.controlOpcode else { return }
            control(op, p, link: link, record)
            if registry.hasLLControlCarriers, let i = registry.module(llControl: op.rawValue) {
                f.set(ll) // the module reads the packet (decrypted or not) off the frame
                let s = state(StateKey(adapter: record.adapter, connection: 0x1_0000 | UInt32(n)))
                decodeModule(i, p, carrier: .llControl(op.rawValue), state: s, side: from.map { $0 ? 0 : 1 } ?? 2, record, &f)
            }
            return
        }
        guard llid == 1 || llid == 2, !(llid == 1 && ll.payload.isEmpty) else { return }
        let side: UInt8 = from.map { $0 ? 0 : 1 } ?? 2
        let s = state(StateKey(adapter: record.adapter, connection: 0x1_0000 | UInt32(n)))
        s.att.inferredSide = nil
        reassemble(ll.payload, declared: ll.payload.count, starts: llid == 2, state: s, side: side, record, &f)
        // Direction unspecified: an ATT PDU only a server sends tells who sent it.
        if from == nil, let inferred = s.att.inferredSide { ll.fromCentral = inferred == 0; ll.fromInferred = true }
        if f.layers.contains(.smp) { observeSMP(f.l2capStorage.payload, link: link, from: from, record) }
    }

    /// A data PDU on an encrypted link that is plaintext, not ciphertext and MIC (§5.1.3): one
    /// whole L2CAP frame on the fixed ATT, LE signalling or SMP channel (Vol 3 Part A §2.1)
    /// filling the PDU (no room for a 4-octet MIC), whose first octet is an opcode of that
    /// protocol. Ciphertext passes by chance about once in 2^32 PDUs.
    static func isPlaintext(_ ll: LLPacket) -> Bool {
        let p = ll.payload
        guard ll.llid == 2, p.count >= 5, ll.error == nil else { return false }
        let length = Int(p[0]) | Int(p[1]) << 8, cid = UInt16(p[2]) | UInt16(p[3]) << 8
        guard length + 4 == p.count else { return false }
        switch cid {
        case L2CAPCID.att: return ATTOpcode(rawValue: p[4]).kind != nil
        case L2CAPCID.leSignalling: return L2CAPSignalCode(rawValue: p[4]).isDefined
        case L2CAPCID.smp: return SMPCode(rawValue: p[4]).pduLength != nil
        default: return false
        }
    }

    /// LL control PDUs that change the connection (§2.4.2), read through their types.
    private func control(_ op: LLControlOpcode, _ p: UnsafeRawBufferPointer, link: SniffedLink, _ record: CaptureRecord) {
        switch op {
        case .connectionUpdateInd:
            guard let u = LLConnectionUpdateInd(op, p) else { return }
            link.air.interval = u.interval
            link.air.timeout = u.timeout
            link.air.connectionUpdates += 1
        case .channelMapInd: link.air.channelMapUpdates += 1
        case .terminateInd:
            guard let t = LLTerminateInd(op, p) else { return }
            link.air.terminateReason = t.errorCode
            table.update(link.tableID) { c in
                c.end = record.timestamp; c.endFrame = record.frame; c.disconnectReason = t.errorCode
            }
        case .encReq:
            guard let e = LLEncReq(op, p) else { return }
            link.rand = e.rand; link.ediv = e.ediv
            link.skdm = e.skdc; link.ivm = e.ivc
            link.ccm = nil; link.keyState = .unknown; link.crackTried = false; link.stk = nil
        case .encRsp:
            guard let e = LLEncRsp(op, p) else { return }
            link.skds = e.skdp; link.ivs = e.ivp
        case .startEncReq: // ciphertext from here on
            if !link.encrypted {
                link.air.encryptionStarts += 1
                // A captured legacy pairing is cracked now, even when the sniffer decrypts.
                if link.stk == nil, !link.secureConnections, link.ediv == 0, link.rand.allSatisfy({ $0 == 0 }),
                    link.preq != nil, link.randoms[1] != nil
                {
                    link.stk = crackLegacy(link, record)
                }
            }
            link.encrypted = true
            link.counter = [0, 0]
        case .pauseEncRsp: // plaintext until the next start
            link.encrypted = false
            link.snifferDecrypts = false
            link.ccm = nil; link.keyState = .unknown
        default: break
        }
    }

    /// SMP values a passive capture can use (Vol 3 Part H §3.5-3.6), read through the SMP
    /// command types (a PDU of the wrong length for its code is none of them).
    private func observeSMP(_ p: UnsafeRawBufferPointer, link: SniffedLink, from: Bool?, _ record: CaptureRecord) {
        let pdu = SMPPDU(bytes: p)
        let whole = pdu.error == nil
        switch pdu.smpCode {
        case .pairingRequest:
            guard whole, let q = SMPPairingRequest(pdu) else { return }
            link.preq = Array(p); link.confirms = [nil, nil]; link.randoms = [nil, nil]
            link.legacyOnly = !q.features.authReq.contains(.secureConnections)
        case .pairingResponse:
            guard whole, let r = SMPPairingResponse(pdu) else { return }
            link.pres = Array(p)
            if r.features.authReq.contains(.secureConnections), link.legacyOnly == false { link.secureConnections = true }
        case .pairingConfirm, .pairingRandom:
            guard whole, let body = pdu.value128.map(Array.init) else { return }
            let confirm = pdu.smpCode == .pairingConfirm
            let i = from.map { $0 ? 0 : 1 } ?? (confirm ? link.confirms : link.randoms).firstIndex(where: { $0 == nil || $0 == body }) ?? 1
            if confirm { link.confirms[i] = body } else { link.randoms[i] = body }
        case .pairingPublicKey, .pairingDHKeyCheck: link.secureConnections = true
        case .encryptionInformation: // the LTK, as sent
            guard whole, let e = SMPEncryptionInformation(pdu) else { return }
            let ltk = Array(e.value.reversed())
            let owner = from.map { $0 ? link.air.central : link.air.peripheral } ?? nil
            learnedKeys.append(KnownLTK(ltk: ltk, address: owner, source: "the LTK distributed in frame \(record.frame)"))
            recoveredKeys.append(
                RecoveredKey(
                    connection: link.number, frame: record.frame, central: link.air.central,
                    centralRandom: link.air.centralAddressType == .random,
                    peripheral: link.air.peripheral,
                    peripheralRandom: link.air.peripheralAddressType == .random,
                    ltk: ltk, distributedBy: from))
            link.pendingLTK = (learnedKeys.count - 1, recoveredKeys.count - 1)
            link.air.security.append("LTK \(Hex.string(ltk)) distributed in frame \(record.frame)")
        case .centralIdentification: // EDIV and Rand of that LTK
            guard whole, let c = SMPCentralIdentification(pdu),
                let (li, ri) = link.pendingLTK, li < learnedKeys.count, ri < recoveredKeys.count
            else { return }
            link.pendingLTK = nil
            learnedKeys[li].ediv = c.ediv; learnedKeys[li].rand = c.rand
            recoveredKeys[ri].ediv = c.ediv; recoveredKeys[ri].rand = c.rand
        default: break
        }
    }

    /// Decrypts an encrypted PDU in place when a key is known or can be found. Returns the
    /// sender (true: central) when the PDU was decrypted, nil otherwise (then it stays
    /// marked encrypted, with an error when a key was expected to work).
    private func decrypt(
        _ ll: inout LLPacket, link: SniffedLink, from: Bool?, guess: Bool?, _ record: CaptureRecord,
        _ f: inout DecodedFrame
    ) -> Bool? {
        if link.keyState == .unknown { findKey(link, ll: ll, from: from, record) }
        guard let ccm = link.ccm else { return nil }
        let aad = AESCCM.aad(header: ll.header)
        let sides: [Int] = from.map { [$0 ? 0 : 1] } ?? (guess == false ? [1, 0] : [0, 1])
        // The expected counter first, then a few past it (packets the sniffer missed), then
        // the one before (a retransmission the SN did not reveal).
        for side in sides {
            let base = link.counter[side]
            for delta in [0, 1, 2, 3, 4, 5, 6, 7, -1] as [Int64] {
                let c = Int64(base) + delta
                guard c >= 0 else { continue }
                let nonce = AESCCM.nonce(counter: UInt64(c), fromCentral: side == 0, iv: link.iv)
                guard ccm.open(ll.payload, nonce: nonce, aad: aad, into: &plainScratch) else { continue }
                if delta < 0 {
                    ll.retransmission = true
                } else {
                    link.counter[side] = UInt64(c) + 1
                    if delta > 0 { ll.missedBefore = true; link.air.missed += 1 }
                    link.air.decrypted += 1; decryptedPackets += 1
                }
                let m = plainScratch.count
                _ = plainStorage.withMemoryRebound(to: UInt8.self) { p in p.initialize(from: plainScratch) }
                ll.setPlaintext(UnsafeRawBufferPointer(rebasing: plainStorage[0..<m]))
                return side == 0
            }
        }
        link.air.micFailures += 1
        f.errors.append(
            DecodeError(
                layer: "ll", code: .invalidValue, offset: 6 + max(0, ll.payload.count - 4),
                message: "MIC check failed: wrong key, or packets missed"))
        return nil
    }

    /// Picks the session key of a newly encrypted link: every candidate LTK (given, found in
    /// the capture, or the STK of a cracked legacy pairing) is tried on this first encrypted
    /// PDU; the one whose MIC verifies is kept.
    private func findKey(_ link: SniffedLink, ll: LLPacket, from: Bool?, _ record: CaptureRecord) {
        link.keyState = .none
        guard link.skdm.count == 8, link.skds.count == 8 else {
            link.note("encrypted from frame \(record.frame), but LL_ENC_REQ/LL_ENC_RSP were not captured: cannot decrypt")
            return
        }
        var candidates: [KnownLTK] = []
        let stkSession = link.ediv == 0 && link.rand.allSatisfy { $0 == 0 }
        // LE Secure Connections: the LTK is not recoverable passively; said below only when no
        // given key verifies (a note beside "decrypting … with --ltk" contradicted it).
        let scUnrecoverable = stkSession && link.secureConnections
        if !scUnrecoverable, stkSession, let stk = link.stk ?? crackLegacy(link, record) {
            link.stk = stk
            candidates.append(stk)
        }
        for k in learnedKeys.reversed() where k.ediv == nil || (k.ediv == link.ediv && k.rand == link.rand) {
            candidates.append(k)
        }
        for k in knownKeys where k.address == nil || k.address == link.air.central || k.address == link.air.peripheral {
            candidates.append(k)
        }
        if candidates.isEmpty, link.micSearch != nil, let stk = searchTKByMIC(link, ll: ll, from: from, record) {
            candidates.append(stk)
        }
        if candidates.isEmpty {
            if scUnrecoverable {
                link.note("LE Secure Connections pairing: the LTK is not recoverable from a passive capture: give --ltk")
            } else if !link.secureConnections {
                link.note("encrypted from frame \(record.frame): no key known (give --ltk or --keys)")
            }
            return
        }
        let iv = LinkEncryption.iv(ivm: link.ivm, ivs: link.ivs)
        let aad = AESCCM.aad(header: ll.header)
        var sides: [Int] = from.map { [$0 ? 0 : 1] } ?? [0, 1]
        if from == nil { sides = [0, 1] }
        for k in candidates {
            let ccm = AESCCM(key: LinkEncryption.sessionKey(ltk: k.ltk, skdm: link.skdm, skds: link.skds))
            for side in sides {
                for c in 0..<8 as Range<UInt64> {
                    let nonce = AESCCM.nonce(counter: c, fromCentral: side == 0, iv: iv)
                    if ccm.open(ll.payload, nonce: nonce, aad: aad, into: &plainScratch) {
                        link.ccm = ccm; link.iv = iv; link.keyState = .known
                        link.note("decrypting from frame \(record.frame) with " + k.source)
                        return
                    }
                }
            }
        }
        if scUnrecoverable { link.note("LE Secure Connections pairing: the LTK is not recoverable from a passive capture: give --ltk") }
        link.note("encrypted from frame \(record.frame): none of \(candidates.count) known keys verifies the MIC")
    }

    /// The STK of a captured legacy pairing: TK 0 (Just Works) or the passkey whose confirm
    /// matches (Vol 3 Part H §2.3.5.5), then STK = s1(TK, Srand, Mrand).
    private func crackLegacy(_ link: SniffedLink, _ record: CaptureRecord) -> KnownLTK? {
        if link.crackTried { return link.stk }
        link.crackTried = true
        guard let preq = link.preq, let pres = link.pres else {
            link.note("pairing not captured (no Pairing Request/Response): the STK cannot be recovered")
            return nil
        }
        guard let central = link.air.central, let peripheral = link.air.peripheral else {
            link.note("CONNECT_IND not captured: the pairing addresses are unknown")
            return nil
        }
        guard let mrand = link.randoms[0], let srand = link.randoms[1] else {
            link.note("pairing random values not both captured: the TK cannot be recovered")
            return nil
        }
        let cap = LegacyPairingCapture(
            preq: preq, pres: pres, initiator: central,
            initiatorRandom: link.air.centralAddressType == .random,
            responder: peripheral, responderRandom: link.air.peripheralAddressType == .random,
            mconfirm: link.confirms[0], sconfirm: link.confirms[1], mrand: mrand, srand: srand)
        guard link.confirms[0] != nil || link.confirms[1] != nil else {
            link.micSearch = cap // searched from the first encrypted packet's MIC (`searchTKByMIC`)
            return nil
        }
        let clock = ContinuousClock(), t0 = clock.now, threads = ProcessInfoCores.count
        let (found, tried) = cap.crackTK(threads: threads, progress: crackProgress)
        let d = clock.now - t0
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        lastCrack = (tried, seconds, threads)
        guard let tk = found else {
            link.note("legacy pairing: no passkey 000000-999999 matches the confirm values (out-of-band pairing?)")
            return nil
        }
        return recovered(
            link, tk: tk, stk: cap.stk(tk: tk), central: central, peripheral: peripheral, record,
            how: "TK found", search: tried > 1 ? (tried, seconds, threads) : nil)
    }

    /// Notes a recovered TK, keeps it for `--write-keys`, and gives its STK as a candidate key.
    private func recovered(
        _ link: SniffedLink, tk: UInt32, stk: [UInt8], central: BDAddr, peripheral: BDAddr,
        _ record: CaptureRecord, how: String, search: (tried: Int, seconds: Double, threads: Int)?
    ) -> KnownLTK {
        let digits = String(tk), tkText = String(repeating: "0", count: max(0, 6 - digits.count)) + digits
        link.note("legacy pairing: \(how): \(tkText)" + (tk == 0 ? " (Just Works)" : " (passkey)") + ", STK \(Hex.string(stk))")
        if let s = search {
            let perCore = Int(Double(s.tried) / max(s.seconds, 1e-6) / Double(s.threads))
            link.note("passkey search: \(s.tried) candidates in \(Int(s.seconds * 1000)) ms on \(s.threads) threads (\(perCore) candidates/s per thread)")
        }
        recoveredKeys.append(
            RecoveredKey(
                connection: link.number, frame: record.frame, central: central,
                centralRandom: link.air.centralAddressType == .random, peripheral: peripheral,
                peripheralRandom: link.air.peripheralAddressType == .random,
                tk: tk, stk: stk))
        return KnownLTK(ltk: stk, source: "the STK of the captured pairing (TK \(tkText))")
    }

    /// The TK of a legacy pairing whose confirm values were not captured, found by the MIC of
    /// the first encrypted packet (counter 0, from either side): each TK's STK gives a session
    /// key (Vol 6 Part E §1), and one opens the packet.
    private func searchTKByMIC(_ link: SniffedLink, ll: LLPacket, from: Bool?, _ record: CaptureRecord) -> KnownLTK? {
        guard let cap = link.micSearch, let central = link.air.central, let peripheral = link.air.peripheral else { return nil }
        link.micSearch = nil
        let payload = Array(ll.payload), skdm = link.skdm, skds = link.skds
        let iv = LinkEncryption.iv(ivm: link.ivm, ivs: link.ivs), aad = AESCCM.aad(header: ll.header)
        let sides: [Bool] = from.map { [$0] } ?? [true, false]
        let nonces = sides.map { AESCCM.nonce(counter: 0, fromCentral: $0, iv: iv) }
        let clock = ContinuousClock(), t0 = clock.now, threads = ProcessInfoCores.count
        let (found, tried) = cap.searchTK(threads: threads) { stk in
            let ccm = AESCCM(key: LinkEncryption.sessionKey(ltk: stk, skdm: skdm, skds: skds))
            var out: [UInt8] = []
            return payload.withUnsafeBytes { p in nonces.contains { ccm.open(p, nonce: $0, aad: aad, into: &out) } }
        }
        let d = clock.now - t0
        lastCrack = (tried, Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18, threads)
        guard let tk = found else {
            link.note("legacy pairing: confirm values not captured, and no passkey 000000-999999 opens the first encrypted packet")
            return nil
        }
        link.stk = recovered(
            link, tk: tk, stk: cap.stk(tk: tk), central: central, peripheral: peripheral, record,
            how: "confirm values not captured; TK found by the first encrypted packet's MIC", search: nil)
        return link.stk
    }

    /// Copies a sniffed link's counters into its ConnectionInfo.
    func flush(_ link: SniffedLink?) {
        guard let link else { return }
        table.update(link.tableID) { $0.air = link.air }
    }

    /// Marks links whose packets stopped for longer than their supervision timeout.
    func flushLinks(endOfCapture: Timestamp?) {
        for link in links.values {
            if let end = endOfCapture, let last = link.air.lastSeen, let t = link.air.timeout,
                link.air.terminateReason == nil, end.microseconds - last.microseconds > Int64(t) * 10_000
            {
                link.air.supervisionTimeout = true
                // The link ended when its packets stopped: not "open at end of capture".
                table.update(link.tableID) { c in
                    if c.end == nil { c.end = last; c.endFrame = link.air.lastSeenFrame }
                }
            }
            flush(link)
        }
    }
}

/// Per sniffed connection: who is who, the SN/NESN sequence, encryption and pairing values.
final class SniffedLink {
    enum KeyState { case unknown, none, known }
    let number: UInt16
    let tableID: Int
    var air = AirLink()
    /// The CRCInit its packets are checked with: CONNECT_IND's, or the one its first two
    /// packets agreed on.
    var crcInit: UInt32?
    /// Per sender (0 central, 1 peripheral): last SN (2 = none yet), length and CRC.
    var lastSN: [UInt8] = [2, 2]
    var lastLength = [0, 0]
    var lastCRC: [UInt32?] = [nil, nil]
    /// Per receiver (0 central, 1 peripheral): NESN of its last PDU (2 = none yet), and the
    /// frame of a CRC-bad PDU sent to it that it has not acknowledged yet.
    var lastNESN: [UInt8] = [2, 2]
    var crcBadUnacknowledged: [Int?] = [nil, nil]
    var encrypted = false
    /// The sniffer writes this link's encrypted PDUs decrypted without saying so (plaintext
    /// recognised after LL_START_ENC_REQ, `isPlaintext`).
    var snifferDecrypts = false
    var rand: [UInt8] = [], ediv: UInt16 = 0, skdm: [UInt8] = [], ivm: [UInt8] = [], skds: [UInt8] = [], ivs: [UInt8] = []
    var ccm: AESCCM?
    var iv: [UInt8] = []
    var keyState = KeyState.unknown
    /// A legacy pairing without confirm values: its TK is searched by the MIC of the first
    /// encrypted packet.
    var micSearch: LegacyPairingCapture?
    var counter: [UInt64] = [0, 0]
    var preq: [UInt8]?, pres: [UInt8]?
    var confirms: [[UInt8]?] = [nil, nil], randoms: [[UInt8]?] = [nil, nil]
    var legacyOnly: Bool?
    var secureConnections = false
    /// The last Encryption Information's entries (learned, recovered), for its Central Identification.
    var pendingLTK: (Int, Int)?
    /// The STK of this link's cracked legacy pairing.
    var stk: KnownLTK?
    var crackTried = false

    let accessAddress: UInt32

    init(number: UInt16, tableID: Int, accessAddress: UInt32) {
        self.number = number; self.tableID = tableID; self.accessAddress = accessAddress
    }

    /// Timing of the last packet and whose turn it was, for captures without direction flags.
    var lastMicroseconds: Int64?
    var lastGuess = false

    /// The central sends first in each connection event (a gap of over half the interval,
    /// 3 ms when unknown, starts one); within an event the two alternate.
    func guessSender(_ t: Timestamp) -> Bool {
        let now = t.microseconds
        defer { lastMicroseconds = now }
        let threshold = air.interval.map { Int64($0) * 625 } ?? 3000
        guard let last = lastMicroseconds, now - last >= 0, now - last < threshold else { lastGuess = true; return true }
        lastGuess.toggle()
        return lastGuess
    }

    func note(_ s: String) { if air.security.last != s { air.security.append(s) } }

    /// Retransmission: the sender's SN unchanged and the same PDU (length and CRC) again
    /// (§4.5.9). The SN unchanged with another PDU proves packets were missed.
    func sequence(_ ll: inout LLPacket, side: Int) {
        let sn: UInt8 = ll.sn ? 1 : 0
        if lastSN[side] == sn {
            if lastLength[side] == ll.length && lastCRC[side] == ll.crc { ll.retransmission = true } else { ll.missedBefore = true }
        }
        lastSN[side] = sn; lastLength[side] = ll.length; lastCRC[side] = ll.crc
    }

    /// A receiver's NESN flips when it accepts a new PDU (§4.5.9): flipped after a PDU the
    /// sniffer saw with a bad CRC, it says the link received that PDU.
    func acknowledge(_ ll: inout LLPacket, side: Int) {
        let nesn: UInt8 = ll.nesn ? 1 : 0
        if let bad = crcBadUnacknowledged[side] {
            if lastNESN[side] != 2 && lastNESN[side] != nesn {
                ll.acknowledgesCRCBad = bad
                air.crcBadAcknowledged += 1
                // That PDU was new (SN = this NESN - 1): the sender's next is not a retransmission.
                lastSN[1 - side] = nesn ^ 1; lastLength[1 - side] = -1; lastCRC[1 - side] = nil
                if air.firstCRCBadAcknowledged == nil { air.firstCRCBadAcknowledged = bad }
            }
            crcBadUnacknowledged[side] = nil
        }
        lastNESN[side] = nesn
    }
}

/// How a sniffed link's data PDU was sealed (Core 6.0 Vol 6 Part E §2): the session key, the
/// nonce of its packet counter and direction, the additional data of its header. `redact`
/// seals an edited plaintext again with them (same length, a new MIC).
public struct LLSealing: Sendable {
    public var ccm: AESCCM
    public var nonce: [UInt8]
    public var aad: UInt8
    public func seal(_ plaintext: [UInt8]) -> [UInt8] { ccm.seal(plaintext, nonce: nonce, aad: aad) }
}

extension ProtocolDecoder {
    /// The sealing of the data PDU `f` just decoded, when bluesift decrypted it (the file holds
    /// its ciphertext); nil otherwise. Valid right after `f`'s record: `decrypt` leaves the
    /// direction's counter one past the one that opened it (a retransmission's too).
    public func sealing(of f: DecodedFrame) -> LLSealing? {
        guard let ll = f.ll, ll.decrypted, let from = ll.fromCentral, let n = f.connection, let link = links[n], !link.snifferDecrypts,
            let ccm = link.ccm, f.record.sniffer?.encrypted != false
        else { return nil }
        let c = link.counter[from ? 0 : 1]
        guard c > 0 else { return nil }
        return LLSealing(ccm: ccm, nonce: AESCCM.nonce(counter: c - 1, fromCentral: from, iv: link.iv), aad: AESCCM.aad(header: ll.header))
    }
}
