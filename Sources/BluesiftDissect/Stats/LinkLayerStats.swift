import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of over-the-air link-layer packets (sniffers) and their quality.
final class LinkLayerStats {
    /// CONNECT_IND seen by a sniffer, by access address.
    var connectInds: [UInt32: (frame: Int, us: Int64, peer: BDAddr?, params: (Int, Int, Int))] = [:]
    var packets = 0, crcBad = 0, crcComputed = 0, crcUnverified = 0, crcValidatedWrongly = 0
    var encryptedFrames = 0, firstEncryptedFrame: Int?

    func add(_ ll: LLPacket, _ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder, _ s: CaptureStats) {
        s.isSniffer = true
        packets += 1
        if ll.crcOK == false { crcBad += 1 }
        if ll.crcComputed { crcComputed += 1 }
        if ll.crcAwaitsLink { crcUnverified += 1 }
        if ll.crcValidatedWrongly { crcValidatedWrongly += 1 }
        // A damaged packet makes nothing: no connection, device or parameters.
        guard ll.crcOK != false else { return }
        if ll.isAdvertising {
            // CONNECT_IND (Core 5.4 Vol 6 Part B §2.3.3.1).
            guard let ind = ll.connectInd else { return }
            let aa = ind.accessAddress
            if connectInds.count < 1024 {
                connectInds[aa] = (r.frame, us, ind.advA, (Int(ind.interval), Int(ind.latency), Int(ind.timeout)))
            }
            // The connection exists from its CONNECT_IND, data PDUs or not (as `info` counts).
            if let n = decoder.sniffedConnection(accessAddress: aa) { _ = s.connection(r.adapter, n, r, decoder, fresh: true) }
            return
        }
        guard let c = a.decoded.connection else { return }
        let key = CaptureStats.ConnKey(adapter: r.adapter, handle: c)
        // After LL_TERMINATE_IND the peer's acknowledgement (and retransmissions of the
        // terminate) still use the access address: they belong to the ended connection, and
        // only a new CONNECT_IND opens another (Vol 6 Part B §5.1.1).
        if let st = s.conns[key], st.ended, let end = s.report.connections[st.index].endFrame,
            let aa = decoder.connection(adapter: r.adapter, handle: c)?.accessAddress, (connectInds[aa]?.frame ?? 0) < end
        {
            s.report.connections[st.index].lastFrame = r.frame; s.report.connections[st.index].lastUs = us
            return
        }
        guard let i = s.connection(r.adapter, c, r, decoder) else { return }
        s.report.connections[i].lastFrame = r.frame; s.report.connections[i].lastUs = us
        // This side acknowledged a PDU the sniffer saw with a bad CRC: the answer to its open
        // request (or indication) sent before that PDU, most likely.
        if let bad = ll.acknowledgesCRCBad, let fromCentral = ll.fromCentral, let st = s.conns[key] {
            s.att.acknowledgedCRCBad(st.index, bad: bad, fromCentral: fromCentral)
        }
        if ll.encrypted {
            s.report.connections[i].encryptedFrames += 1
            encryptedFrames += 1
            if firstEncryptedFrame == nil { firstEncryptedFrame = r.frame }
        }
        guard let op = ll.controlOpcode, let d = ll.controlData else { return }
        switch op {
        case .startEncReq: // §2.4.2.5
            s.report.connections[i].encryption.append(.init(frame: r.frame, us: us, enabled: true, keySize: nil, source: "ll"))
        case .terminateInd:
            if let t = LLTerminateInd(op, d) { s.end(i, key, r, reason: HCIStatus(t.errorCode)) }
        case .connectionUpdateInd:
            if let u = LLConnectionUpdateInd(op, d) {
                s.report.connections[i].parameters.append(
                    .init(frame: r.frame, us: us, interval: Int(u.interval), latency: Int(u.latency), timeout: Int(u.timeout)))
            }
        default: break
        }
    }

    func finish(_ s: CaptureStats) {
        guard packets > 0 else { return }
        s.report.counts.llPackets = packets; s.report.counts.crcBad = crcBad
        s.report.counts.crcCheckedByBluesift = crcComputed; s.report.counts.crcUnverified = crcUnverified
    }

    /// Over the air: packets with a bad CRC (Core 5.4 Vol 6 Part B §3.1.1) and data PDUs whose
    /// CRC nothing could check are noise: said with their share, and what causes them.
    func airQuality(_ q: inout [StatsReport.Advice], _ decoder: ProtocolDecoder) {
        let weak = "A weak or disturbed signal: move the sniffer closer to the devices (a metre or two), away from Wi-Fi access points and USB 3 ports; with an SDR, raise the gain."
        if crcBad > 0 {
            let share = Double(crcBad) / Double(packets) * 100
            let pct = share < 1 ? "under 1%" : "\(Int(share.rounded()))%"
            let by = crcComputed > 0 ? " (checked by bluesift: the capture does not say whether the sniffer checked them)" : ""
            let message =
                crcBad == packets
                ? "All \(crcBad) over-the-air packets have a bad CRC\(by): nothing in the capture can be trusted; they are shown, not decoded."
                : "\(crcBad) of \(packets) over-the-air packets (\(pct)) have a bad CRC\(by): they are shown, not decoded, and make no devices, connections or findings."
            q.append(
                .init(
                    code: "crc_bad", severity: share >= 10 ? "warning" : "info", message: message, advice: weak,
                    frame: nil))
        }
        if crcUnverified > 0 {
            let flipped = decoder.accessAddressBitErrors
            let detail = flipped > 0 ? ", \(flipped) of them a known connection's packets with a corrupted access address" : ""
            q.append(
                .init(
                    code: "crc_unverified", severity: "info",
                    message: "\(crcUnverified) data PDUs on access addresses no CONNECT_IND announced could not be checked (their CRCInit unknown, and no second packet agreed on one)\(detail): noise or bit errors, not decoded, not connections.",
                    advice: weak, frame: decoder.firstUnverifiedPacket ?? decoder.firstAccessAddressBitError))
        }
        if crcValidatedWrongly > 0 {
            q.append(
                .init(
                    code: "crc_header_disagrees", severity: "info",
                    message: "\(crcValidatedWrongly) packet(s) the sniffer marked CRC-valid fail bluesift's CRC check: the sniffer's verdict is kept (as Wireshark does). A sniffer that writes something else in the CRC field, or a damaged capture.",
                    advice: "Nothing to do if the sniffer's firmware is known to do so; otherwise compare with another sniffer.",
                    frame: decoder.firstCRCValidatedWrongly))
        }
    }
}
