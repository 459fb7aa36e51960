import BluesiftWire

/// Dynamic channels of one connection, learnt from signalling (Core 5.4 Vol 3 Part A §4):
/// each CID belongs to the side that allocated it, so a PDU sent by side `s` is addressed
/// to a CID of the other side. Sides: 0 and 1 (HCI direction or sniffer central/peripheral),
/// 2 when the capture does not say (both sides then share one namespace).
struct L2CAPChannels {
    struct Key: Hashable { var side: UInt8; var cid: UInt16 }
    struct Channel {
        var psm: UInt16
        /// Same value for both ends of the channel (the requester's CID): ATT pairing key.
        var bearer: UInt16
        /// Credit-based flow control (K-frames with SDU segmentation, §3.4).
        var creditBased: Bool
        /// Bytes of the current SDU still to come, and its reassembly.
        var sduRemaining = 0
        var sdu: Reassembler?
        /// Configured mode (option 0x04, §5.4): 0 basic, 3 enhanced retransmission, 4 streaming.
        var mode: UInt8 = 0
        /// Frames carry an FCS in ERTM/streaming unless option 0x05 turned it off (§5.5).
        var fcs = true
    }
    private struct Pending { var identifier: UInt8; var side: UInt8; var psm: UInt16; var sourceCIDs: [UInt16] }

    static let maxChannels = 64
    /// PSMs of ATT over BR/EDR and of Enhanced ATT (Assigned Numbers §5.4; Vol 3 Part G §5.2-5.3).
    public static let attPSM: UInt16 = 0x001F
    public static let eattPSM: UInt16 = 0x0027
    private(set) var channels: [Key: Channel] = [:]
    private var pending: [Pending] = []
    private struct PendingConfig { var identifier: UInt8; var side: UInt8; var key: Key; var mode: UInt8; var fcs: Bool }
    private var pendingConfig: [PendingConfig] = []

    static func other(_ side: UInt8) -> UInt8 { side == 2 ? 2 : 1 - side }

    /// The channel a PDU sent by `side` to `cid` belongs to.
    func channel(sentBy side: UInt8, cid: UInt16) -> Channel? { channels[Key(side: Self.other(side), cid: cid)] }

    mutating func update(sentBy side: UInt8, cid: UInt16, _ body: (inout Channel) -> Void) {
        let k = Key(side: Self.other(side), cid: cid)
        if var c = channels[k] { body(&c); channels[k] = c }
    }

    private mutating func add(_ side: UInt8, _ cid: UInt16, psm: UInt16, creditBased: Bool, bearer: UInt16? = nil) {
        guard cid >= 0x0040 || (creditBased && cid >= 0x0020) else { return }
        if channels.count >= Self.maxChannels, channels[Key(side: side, cid: cid)] == nil { return }
        channels[Key(side: side, cid: cid)] = Channel(psm: psm, bearer: bearer ?? cid, creditBased: creditBased)
    }

    private mutating func remember(_ s: L2CAPSignal, side: UInt8, psm: UInt16, sourceCIDs: [UInt16]) {
        if pending.count >= 8 { pending.removeFirst() }
        pending.append(Pending(identifier: s.identifier, side: side, psm: psm, sourceCIDs: sourceCIDs))
    }

    private mutating func takePending(_ identifier: UInt8, requester: UInt8) -> Pending? {
        guard let i = pending.firstIndex(where: { $0.identifier == identifier && $0.side == requester }) else { return nil }
        return pending.remove(at: i)
    }

    /// Applies one signalling command sent by `side`.
    mutating func observe(_ s: L2CAPSignal, sentBy side: UInt8) {
        let peer = Self.other(side)
        switch s.code {
        case 0x02, 0x0C: // Connection Request: the requester's source CID
            if let psm = s.psm, let scid = s.sourceCID { add(side, scid, psm: psm, creditBased: false) }
        case 0x03, 0x0D: // Connection Response: the responder's CID joins the requester's
            guard let dcid = s.destinationCID, let scid = s.sourceCID, let result = s.result else { return }
            let k = Key(side: peer, cid: scid)
            if result == 0, let c = channels[k] { add(side, dcid, psm: c.psm, creditBased: false, bearer: c.bearer) } else if result > 1 { channels[k] = nil } // 1 = pending
        case 0x14: // LE Credit Based Connection Request
            if let psm = s.psm, let scid = s.sourceCID {
                add(side, scid, psm: psm, creditBased: true)
                remember(s, side: side, psm: psm, sourceCIDs: [scid])
            }
        case 0x15: // LE Credit Based Connection Response: matched by identifier
            guard let p = takePending(s.identifier, requester: peer), let dcid = s.destinationCID else { return }
            if s.result == 0 { add(side, dcid, psm: p.psm, creditBased: true, bearer: p.sourceCIDs.first) }
        case 0x17: // Credit Based Connection Request: up to 5 source CIDs
            guard let psm = s.psm else { return }
            let n = min(s.cidCount, 5)
            for i in 0..<n { add(side, s.cid(at: i), psm: psm, creditBased: true) }
            remember(s, side: side, psm: psm, sourceCIDs: (0..<n).map { s.cid(at: $0) })
        case 0x18: // Credit Based Connection Response: destination CIDs, 0 = refused
            guard let p = takePending(s.identifier, requester: peer) else { return }
            // Destination CIDs answer the request's source CIDs in order.
            for i in 0..<min(s.cidCount, 5) where s.cid(at: i) != 0 {
                add(
                    side, s.cid(at: i), psm: p.psm, creditBased: true,
                    bearer: i < p.sourceCIDs.count ? p.sourceCIDs[i] : nil)
            }
        case 0x04: // Configuration Request: options for the channel the receiver's CID names (§4.4, §5)
            guard let dcid = s.destinationCID, let off = s.listOffset else { return }
            let k = Key(side: peer, cid: dcid)
            guard let c = channels[k] else { return }
            var mode = c.mode, fcs = c.fcs
            var i = off
            while i + 2 <= s.data.count {
                let type = s.data[i] & 0x7F, len = Int(s.data[i + 1])
                if type == 0x04, len >= 1, i + 2 < s.data.count { mode = s.data[i + 2] }
                if type == 0x05, len >= 1, i + 2 < s.data.count { fcs = s.data[i + 2] != 0 }
                i += 2 + len
            }
            // Applies once the peer accepts it (a refusal proposes other values, §4.5).
            if mode != c.mode || fcs != c.fcs {
                if pendingConfig.count >= 8 { pendingConfig.removeFirst() }
                pendingConfig.append(PendingConfig(identifier: s.identifier, side: side, key: k, mode: mode, fcs: fcs))
            }
        case 0x05: // Configuration Response: success applies the request's mode
            guard let i = pendingConfig.firstIndex(where: { $0.identifier == s.identifier && $0.side == peer }) else { return }
            let p = pendingConfig.remove(at: i)
            if s.result == 0, var c = channels[p.key] { c.mode = p.mode; c.fcs = p.fcs; channels[p.key] = c }
        case 0x06, 0x07: // Disconnection Request/Response: DCID is the receiver's, SCID the sender's
            let senderIsRequester = s.code == 0x06
            if let d = s.destinationCID { channels[Key(side: senderIsRequester ? peer : side, cid: d)] = nil }
            if let c = s.sourceCID { channels[Key(side: senderIsRequester ? side : peer, cid: c)] = nil }
        default:
            break
        }
    }
}
