import BluesiftWire
import BluesiftCapture

extension ProtocolDecoder {
    /// A whole L2CAP PDU → signalling / ATT / SMP / dynamic channels (Core 5.4 Vol 3 Part A).
    /// Built in the frame and read there (see `DecodedFrame.l2capStorage`).
    func decodeL2CAP(
        _ pdu: UnsafeRawBufferPointer, fragments: Int, truncated: Bool, state s: ConnState,
        side: UInt8, _ record: CaptureRecord, _ f: inout DecodedFrame
    ) {
        f.l2capStorage = L2CAPLayer(pdu: pdu, fragments: fragments, truncated: truncated)
        f.layers.insert(.l2cap)
        if let e = f.l2capStorage.error { f.errors.append(e) }
        let cid = f.l2capStorage.cid, payload = f.l2capStorage.payload
        switch cid {
        case L2CAPCID.signalling, L2CAPCID.leSignalling:
            var r = ByteReader(payload)
            while r.readableBytes >= 4, let sig = try? L2CAPSignal(&r) {
                s.channels.observe(sig, sentBy: side)
                if cid == L2CAPCID.leSignalling { break }
            }
        case L2CAPCID.att:
            decodeATT(payload, cid: L2CAPCID.att, truncated: truncated, state: s, side: side, record, &f)
        case L2CAPCID.smp, L2CAPCID.smpBREDR:
            let smp = SMPPDU(bytes: payload)
            if let e = smp.error, !(e.code == .truncated && f.l2capStorage.truncated) { f.errors.append(e.inLayer("smp")) }
            f.set(smp)
        case L2CAPCID.firstDynamic...:
            guard let ch = s.channels.channel(sentBy: side, cid: cid) else { break }
            f.l2capStorage.psm = ch.psm
            // ATT on BR/EDR and Enhanced ATT (Vol 3 Part A §4.2, Part G §5.4); the modules'
            // PSMs from the registry's table.
            let isATT = ch.psm == L2CAPChannels.attPSM || ch.psm == L2CAPChannels.eattPSM
            let module = isATT ? nil : registry.module(psm: ch.psm)
            if !ch.creditBased {
                if isATT {
                    decodeATT(payload, cid: ch.bearer, truncated: truncated, state: s, side: side, record, &f)
                } else if let m = module {
                    if ch.mode == 3 || ch.mode == 4 {
                        if let sdu = retransmissionFrame(ch, &f) {
                            decodeModule(
                                m, sdu, carrier: .psm(ch.psm), state: s, side: side, bearer: ch.bearer,
                                truncated: f.l2capStorage.truncated, record, &f)
                        }
                    } else if !payload.isEmpty {
                        decodeModule(
                            m, payload, carrier: .psm(ch.psm), state: s, side: side, bearer: ch.bearer,
                            truncated: f.l2capStorage.truncated, record, &f)
                    }
                }
            } else if let sdu = kFrame(side: side, state: s, truncated: truncated, &f) {
                if isATT {
                    decodeATT(sdu, cid: ch.bearer, truncated: truncated, state: s, side: side, record, &f)
                } else if let m = module {
                    decodeModule(
                        m, sdu, carrier: .psm(ch.psm), state: s, side: side, bearer: ch.bearer,
                        truncated: f.l2capStorage.truncated, record, &f)
                }
            }
        case _ where registry.fixedCIDs.isEmpty: break
        case let c:
            if let m = registry.module(fixedCID: c) {
                decodeModule(m, payload, carrier: .fixedCID(c), state: s, side: side, truncated: f.l2capStorage.truncated, record, &f)
            }
        }
    }

    /// Enhanced retransmission / streaming I- and S-frames (Vol 3 Part A §3.3): notes mode and
    /// control on the l2cap layer; returns the information of an unsegmented I-frame.
    private func retransmissionFrame(_ ch: L2CAPChannels.Channel, _ f: inout DecodedFrame) -> UnsafeRawBufferPointer? {
        let p = f.l2capStorage.payload
        f.l2capStorage.mode = ch.mode
        let tail = ch.fcs ? 2 : 0
        guard p.count >= 2 + tail else { return nil }
        let c = UInt16(p[0]) | UInt16(p[1]) << 8
        f.l2capStorage.control = c
        guard c & 1 == 0, c >> 14 == 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: p[2..<(p.count - tail)])
    }

    /// Credit-based K-frames (Vol 3 Part A §3.4): the first of an SDU carries its length.
    /// Returns the SDU once complete; notes SDU progress on the frame's l2cap layer.
    private func kFrame(side: UInt8, state s: ConnState, truncated: Bool, _ f: inout DecodedFrame) -> UnsafeRawBufferPointer? {
        let p = f.l2capStorage.payload
        var out: UnsafeRawBufferPointer?
        s.channels.update(sentBy: side, cid: f.l2capStorage.cid) { ch in
            if ch.sduRemaining == 0 {
                guard p.count >= 2 else {
                    f.errors.append(DecodeError(layer: "l2cap", code: .truncated, offset: 4, message: "K-frame without SDU length"))
                    return
                }
                let total = Int(p[0]) | Int(p[1]) << 8
                f.l2capStorage.sduLength = total
                let seg = UnsafeRawBufferPointer(rebasing: p[2...])
                if seg.count >= total || truncated {
                    if seg.count > total {
                        f.errors.append(
                            DecodeError(
                                layer: "l2cap", code: .invalidLength, offset: 6 + total,
                                message: "K-frame longer than its SDU (\(seg.count) > \(total))"))
                    }
                    out = UnsafeRawBufferPointer(rebasing: seg[0..<min(total, seg.count)])
                    return
                }
                let r = ch.sdu ?? Reassembler()
                ch.sdu = r
                _ = r.startSDU(seg, total: total)
                ch.sduRemaining = total - seg.count
                f.l2capStorage.sduIncomplete = true
            } else if let r = ch.sdu {
                switch r.continuation(p, declared: p.count) {
                case .pending:
                    ch.sduRemaining -= p.count
                    f.l2capStorage.sduIncomplete = true
                case .complete(let sdu, let n, _):
                    ch.sduRemaining = 0
                    f.l2capStorage.sduLength = sdu.count
                    f.l2capStorage.fragments = n
                    out = sdu
                case .failed(var e):
                    ch.sduRemaining = 0
                    e.message = "SDU: " + e.message
                    f.errors.append(e)
                }
            }
        }
        return out
    }

    /// `cid`: the bearer (0x0004, or the dynamic channel's `bearer`, equal in both directions).
    func decodeATT(
        _ payload: UnsafeRawBufferPointer, cid: UInt16, truncated: Bool, state s: ConnState, side: UInt8,
        _ record: CaptureRecord, _ f: inout DecodedFrame
    ) {
        f.attStorage = ATTPDU(bytes: payload)
        f.layers.insert(.att)
        // A PDU the capture cut short is flagged truncated, not malformed.
        if let e = f.attStorage.error, !(e.code == .truncated && truncated) {
            f.errors.append(e.inLayer("att"))
        }
        f.attTransaction = s.att.observe(payload, cid: cid, side: side, frame: record.frame, timestamp: record.timestamp)
    }
}
