import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats`' findings about the capture itself, with advice.
extension CaptureStats {
    /// Where the capture came from, for advice that fits it.
    enum Origin {
        case android, packetLogger, btmon, sniffer, other
        var startAdvice: String {
            switch self {
            case .android: "Start the capture before connecting (enable the snoop log, then toggle Bluetooth)."
            case .packetLogger: "Start PacketLogger (or install Apple's Bluetooth logging profile on iOS) before the devices connect."
            case .btmon: "Start btmon -w before the devices connect."
            case .sniffer: "Start the sniffer before the devices connect."
            case .other: "Start the capture before the devices connect."
            }
        }
        var bufferAdvice: String {
            switch self {
            case .android: "On Android raise the snoop log buffer (Developer options → Bluetooth HCI snoop log size) or take the log sooner after the problem."
            case .packetLogger: "Save the PacketLogger trace sooner after the problem, or check that it was not merged from several traces."
            case .btmon: "Check that the file was not merged from several recordings; btmon -w records until stopped."
            case .sniffer: "Keep the sniffer closer to both devices: it loses packets it does not hear."
            case .other: "Check that the capture was not cut or merged from several files."
            }
        }
    }

    var origin: Origin {
        if isSniffer { return .sniffer }
        if report.format.hasPrefix("packetlogger") { return .packetLogger }
        if report.format.contains("Linux monitor") { return .btmon }
        if report.format.hasPrefix("btsnoop") { return .android }
        return .other
    }

    func assessQuality(warnings: [String], decoder: ProtocolDecoder) {
        var q: [StatsReport.Advice] = []
        linkLayer.airQuality(&q, decoder)
        if let f = report.firstUs, let l = report.lastUs {
            let outside = noteTimes.filter { $0 < f - 60_000_000 || $0 > l + 60_000_000 }
            if let earliest = outside.min() {
                q.append(
                    .init(
                        code: "notes_outside_span", severity: "info",
                        message: "\(outside.count) note(s) are dated more than a minute outside the records' span (from \(TimeFormat.rfc3339(Timestamp(microseconds: earliest)))): the span leaves them out.",
                        advice: "Nothing to do: PacketLogger keeps notes of earlier sessions in its file.", frame: nil))
            }
        }
        hci.quality(&q)
        if truncatedACL > 0 {
            if report.format.hasPrefix("btsnoop") {
                q.append(
                    .init(
                        code: "android_filtered", severity: "warning",
                        message: "\(truncatedACL) ACL records were cut short by the capture: this looks like Android's filtered HCI snoop log, which drops ATT values and L2CAP payloads.",
                        advice: "On the phone: Developer options → Enable Bluetooth HCI snoop log → \"Enabled\" (full, not \"Filtered\"), turn Bluetooth off and on, reproduce, then take a new bug report.",
                        frame: firstTruncatedFrame))
            } else {
                q.append(
                    .init(
                        code: "truncated", severity: "warning",
                        message: "\(truncatedACL) ACL records were cut short by the capture (snap length).",
                        advice: "Capture again without a snap length limit (tcpdump/dumpcap -s 0).", frame: firstTruncatedFrame))
            }
        }
        let midConn = report.connections.filter { $0.startFrame == nil }
        if let first = midConn.first {
            if isSniffer {
                q.append(
                    .init(
                        code: "sniffer_missed_connect", severity: "warning",
                        message: "The sniffer missed the CONNECT_IND of \(midConn.count) connection(s): connection parameters, roles and the channel map are unknown, and the link may have been followed only partly.",
                        advice: "Start the sniffer before the devices connect and have it follow the advertiser (e.g. nRF Sniffer: select the device before connecting).",
                        frame: first.firstFrame))
            } else if hci.control == 0 {
                // Not a late start: a logger that records ACL data only never shows one.
                q.append(
                    .init(
                        code: "no_hci_control", severity: "info",
                        message: "The log holds no HCI commands or events (ACL data only): how its \(midConn.count) connection(s) started (addresses, parameters, role) is not in it, though what they carried is.",
                        advice: "Nothing to do for this file; a log that records HCI commands and events too (the snoop log, btmon, PacketLogger) shows connections from their start.",
                        frame: first.firstFrame))
            } else {
                q.append(
                    .init(
                        code: "starts_mid_connection", severity: "warning",
                        message: "The capture starts during \(midConn.count) connection(s): their set-up (parameters, role, MTU exchange, pairing) is not in it.",
                        advice: origin.startAdvice,
                        frame: first.firstFrame))
            }
        }
        if att.unnamedOps > 0 {
            q.append(
                .init(
                    code: "no_gatt_discovery", severity: att.discoverySeen ? "info" : "warning",
                    message: "\(att.unnamedOps) ATT operations address handles the capture never discovered\(att.discoverySeen ? "" : " (no GATT discovery in the capture)"): they are shown by handle only.",
                    advice: "Name them with --gatt FILE, a database written by `bluesift gatt --format json` from a capture of the same device that includes the discovery (or connect once with a fresh bond so the phone rediscovers).",
                    frame: att.firstUnnamedFrame))
        }
        if backwards > 0 {
            q.append(
                .init(
                    code: "gaps", severity: "warning",
                    message: CaptureSummary.backwardsMessage(backwards),
                    advice: origin.bufferAdvice, frame: firstBackwardsFrame))
        }
        if gapCount > 0 {
            q.append(
                .init(
                    code: "idle_gaps", severity: "info",
                    message: "\(gapCount) gap(s) of more than 60 s while a connection was open: an idle link, or records lost from the capture's buffer.",
                    advice: origin.bufferAdvice, frame: firstGapFrame))
        }
        if jitter > 0 {
            q.append(
                .init(
                    code: "clock_jitter", severity: "info",
                    message: "\(jitter) timestamp(s) step back by at most \(maxJitterUs < 1000 ? "\(maxJitterUs) µs" : "\(maxJitterUs / 1000) ms"): the clock has jitter; records are in the file's order.",
                    advice: "Nothing to do: latencies near that size are approximate.", frame: firstJitterFrame))
        }
        if let first = att.crcBadResponses.first {
            let n = report.counts.crcBadResponses
            let list =
                att.crcBadResponses.map { "\(ATTOpcode(rawValue: $0.opcode).name) #\($0.request) → #\($0.frame)" }.joined(separator: ", ")
                + (n > att.crcBadResponses.count ? ", …" : "")
            let message =
                n == 1
                ? "1 ATT request was answered by a PDU the sniffer saw only with a bad CRC (\(list)): the \(first.byCentral ? "central" : "peripheral") acknowledged it, so the link carried the answer; what it said is not in the capture."
                : "\(n) ATT requests were answered by PDUs the sniffer saw only with a bad CRC (\(list)): their requesters acknowledged them, so the link carried the answers; what they said is not in the capture."
            q.append(
                .init(
                    code: "response_crc_bad", severity: "info", message: message,
                    advice: Origin.sniffer.bufferAdvice, frame: first.request))
        }
        if isSniffer, linkLayer.encryptedFrames > 0 {
            let sawPairing = smp.pairingRequests > 0
            q.append(
                .init(
                    code: "encrypted_no_key", severity: "warning",
                    message: "\(linkLayer.encryptedFrames) link-layer frames are encrypted and were not decrypted" + (sawPairing ? "." : "; the pairing is not in the capture, so the key cannot be recovered from it."),
                    advice: sawPairing
                        ? "Provide the long-term key (from the bond store of one of the devices) to decrypt." : "Capture the pairing too (remove the bond on both sides and pair while sniffing), or provide the long-term key from one of the devices.",
                    frame: linkLayer.firstEncryptedFrame))
        }
        for w in warnings {
            q.append(.init(code: "reader_warning", severity: "warning", message: w, advice: "The file is damaged or cut: records after the damage may be missing.", frame: nil))
        }
        report.quality = q
    }
}
