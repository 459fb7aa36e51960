import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of SMP: pairing, its failures, invalid key sizes.
extension CaptureStats {
    // MARK: SMP

    func smp(_ smp: SMPPDU, _ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ decoder: ProtocolDecoder) {
        report.counts.smp += 1
        smpSeen = true
        guard let c = a.decoded.connection, let i = connection(r.adapter, c, r, decoder) else { return }
        lastConnection = i
        switch smp.code {
        case 0x01, 0x02: // Pairing Request/Response (Core 5.4 Vol 3 Part H §3.5.1-2)
            if smp.code == 0x01 {
                if report.connections[i].pairingFrame == nil { report.connections[i].pairingFrame = r.frame }
                pairingFrames += 1
            }
            // Maximum Encryption Key Size is 7…16 (§3.5.1); outside it is a downgrade attempt
            // (KNOB-style) or fuzzing, and a device that accepts it is at fault.
            if let k = smp.pairingFeatures?.maxEncryptionKeySize, !(7...16).contains(k) {
                problem("smp_invalid_key_size", r, conn: i, "\(smp.name) Maximum Encryption Key Size \(k) (valid 7-16; KNOB-style downgrade or fuzzing)")
            }
        case 0x05: // Pairing Failed (§3.5.5)
            report.counts.smpPairingFailed += 1
            let reason = smp.reason?.name ?? "unknown reason"
            report.connections[i].pairingFailed = reason
            problem("smp_pairing_failed", r, conn: i, "Pairing Failed: \(reason)")
        default: break
        }
    }
}
