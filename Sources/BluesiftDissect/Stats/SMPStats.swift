import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of SMP: pairing, its failures, invalid key sizes.
final class SMPStats {
    /// Pairing Requests seen (the encrypted-link finding says whether the pairing is in the capture).
    var pairingRequests = 0

    func add(_ smp: SMPPDU, _ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder, _ s: CaptureStats) {
        s.report.counts.smp += 1
        guard let c = a.decoded.connection, let i = s.connection(r.adapter, c, r, decoder) else { return }
        s.lastConnection = i
        switch smp.smpCode {
        case .pairingRequest, .pairingResponse: // Core 5.4 Vol 3 Part H §3.5.1-2
            if smp.smpCode == .pairingRequest {
                if s.report.connections[i].pairingFrame == nil { s.report.connections[i].pairingFrame = r.frame }
                pairingRequests += 1
            }
            // Maximum Encryption Key Size is 7…16 (§3.5.1); outside it is a downgrade attempt
            // (KNOB-style) or fuzzing, and a device that accepts it is at fault.
            if let k = smp.pairingFeatures?.maxEncryptionKeySize, !(7...16).contains(k) {
                s.problem("smp_invalid_key_size", r, conn: i, "\(smp.name) Maximum Encryption Key Size \(k) (valid 7-16; KNOB-style downgrade or fuzzing)")
            }
        case .pairingFailed: // §3.5.5
            s.report.counts.smpPairingFailed += 1
            let reason = smp.reason?.name ?? "unknown reason"
            s.report.connections[i].pairingFailed = reason
            s.problem("smp_pairing_failed", r, conn: i, "Pairing Failed: \(reason)")
        default: break
        }
    }
}
