import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftSecurity

/// What `info` prints of a capture read once: its lines, in order (the caller escapes them
/// for the terminal). `filter`: the filter as typed, when one was given; `connections`: the
/// connections the filtered records belong to (all of them when nil).
public enum InfoRender {
    public static func lines(
        file: String, format: CaptureFormat, summary: CaptureSummary, total: Int, decoder: ProtocolDecoder,
        filter: String?, connections: Set<ConnectionID>?, warnings: [String]
    ) -> [String] {
        var out: [String] = []
        let f = format
        out.append("file:        \(file)")
        if let report = CaptureFile.bugReport(file) {
            // Android bug report: its Bluetooth logs, each openable as FILE:NAME.
            out.append("logs:        \(report.logs.count), read together in time order (one alone: \(file):NAME)")
            for l in report.logs { out.append("  \(l.name)  \(l.isBTSnooz ? "btsnooz section" : "snoop log"), \(l.size) bytes") }
        }
        out.append(
            "format:      \(f.container.rawValue), \(f.datalinkName)" + (f.datalink != 0 ? " (link type \(f.datalink))" : "")
                + (f.compression.map { ", \($0.rawValue)-compressed" } ?? ""))
        if let filter { out.append("filter:      \(filter)") }
        out.append(
            "records:     \(summary.records)" + (filter != nil ? " of \(total)" : "")
                + (summary.truncatedRecords > 0 ? " (\(summary.truncatedRecords) truncated by the capture)" : ""))
        if let a = summary.first, let b = summary.last {
            out.append("time span:   \(TimeFormat.rfc3339(a)) → \(TimeFormat.rfc3339(b)) (\(TimeFormat.duration(microseconds: summary.spanMicroseconds)))")
        }
        let adapters = summary.adapters.sorted().map { "hci\($0)" }
        out.append("controllers: \(adapters.isEmpty ? "none seen" : adapters.joined(separator: ", "))")
        let kinds = summary.kinds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }
        out.append("kinds:       \(kinds.isEmpty ? "none" : kinds.joined(separator: ", "))")
        let protos = summary.protocols.map { "\($0.name) \($0.count)" }
        out.append("protocols:   \(protos.isEmpty ? "none" : protos.joined(separator: ", "))")
        let conns = connections.map { m in decoder.connections.filter { m.contains(ConnectionID($0)) } } ?? decoder.connections
        out.append("connections: \(conns.count)")
        for c in conns {
            var s = "  " + Hex.fixed(UInt64(c.handle), width: 4)
            if c.adapter != 0 { s += " hci\(c.adapter)" }
            s += "  " + (c.transport?.rawValue ?? "?")
            if let p = c.peer {
                s += "  peer \(p)"
                if let t = c.peerAddressType { s += " (\(t.name))" }
            } else {
                s += "  peer unknown"
            }
            if let r = c.role { s += "  \(r.rawValue)" }
            if let a = c.start, let b = c.end {
                s += "  \(TimeFormat.duration(microseconds: b.microseconds &- a.microseconds))"
            } else if c.start == nil {
                s += "  started before the capture"
            } else {
                s += "  open at end of capture"
            }
            if let fr = c.startFrame { s += "  frames \(fr)…" + (c.endFrame.map { String($0) } ?? "") }
            if let reason = c.disconnectReason { s += "  ended: \(HCIStatus(reason).name) (\(Hex.fixed(UInt64(reason), width: 2)))" }
            out.append(s)
            if let air = c.air { airLines(c, air, &out) }
            if let lt = c.linkType {
                // Synchronous link (Vol 4 Part E §7.7.35): audio is counted, not decoded.
                let air = c.airMode.map { ["µ-law", "A-law", "CVSD", "transparent (mSBC/LC3)"][Int(min($0, 3))] } ?? "?"
                out.append("        \(lt == 2 ? "eSCO" : "SCO") air mode \(air), \(c.scoPackets) SCO packets")
            } else if c.scoPackets > 0 {
                out.append("        \(c.scoPackets) SCO packets")
            }
            if !c.profiles.isEmpty { out.append("        profiles: " + c.profiles.map(\.description).joined(separator: ", ")) }
        }
        if decoder.crcBadPackets + decoder.encryptedPackets + decoder.retransmissions > 0 {
            out.append(
                "air:         \(decoder.crcBadPackets) CRC-bad packets (not decoded), \(decoder.encryptedPackets) encrypted PDUs"
                    + " (\(decoder.decryptedPackets) decrypted), \(decoder.retransmissions) retransmissions")
        }
        if decoder.crcComputedPackets + decoder.unverifiedPackets + decoder.accessAddressBitErrors + decoder.crcValidatedWrongly > 0 {
            var p: [String] = []
            if decoder.crcComputedPackets > 0 {
                p.append("bluesift checked \(decoder.crcComputedPackets) CRCs the capture did not (\(decoder.crcComputedBad) bad)")
            }
            if decoder.unverifiedPackets > 0 {
                p.append("\(decoder.unverifiedPackets) data PDUs on unconfirmed access addresses (not decoded)")
            }
            if decoder.accessAddressBitErrors > 0 {
                p.append("\(decoder.accessAddressBitErrors) with a corrupted access address (not decoded)")
            }
            if decoder.crcValidatedWrongly > 0 {
                p.append("\(decoder.crcValidatedWrongly) marked CRC-valid by the sniffer fail the check")
            }
            out.append("crc:         " + p.joined(separator: ", ") + " of \(decoder.airPackets) packets")
        }
        for k in decoder.recoveredKeys { out.append("key:         " + describe(k)) }
        out.append("warnings:    \(warnings.isEmpty ? "none" : warnings.joined(separator: "; "))")
        out.append("")
        return out
    }

    /// An over-the-air connection: who is who, its parameters, its end, its encryption.
    static func airLines(_ c: ConnectionInfo, _ air: AirLink, _ out: inout [String]) {
        func addr(_ a: BDAddr?, _ t: AddressType?) -> String {
            guard let a else { return "unknown" }
            return a.description + (t.map { " (\($0.name))" } ?? "")
        }
        var s = "        central \(addr(air.central, air.centralAddressType)) → peripheral \(addr(air.peripheral, air.peripheralAddressType))"
        if let aa = c.accessAddress { s += "  access address " + Hex.fixed(UInt64(aa), width: 8) }
        out.append(s)
        var p: [String] = []
        if let i = air.interval { p.append("interval \(Double(i) * 1.25) ms") }
        if let t = air.timeout { p.append("timeout \(Int(t) * 10) ms") }
        if air.connectionUpdates > 0 { p.append("\(air.connectionUpdates) connection updates") }
        p.append("\(air.channelMapUpdates) channel map updates")
        if let phy = air.phy { p.append("PHY " + (phy == 1 ? "2M" : phy == 2 ? "Coded" : "1M")) }
        p.append("\(air.packets) data PDUs")
        if air.retransmissions > 0 { p.append("\(air.retransmissions) retransmissions") }
        if air.missed > 0 { p.append("\(air.missed) with packets missed before") }
        if air.crcBad > 0 {
            // Acknowledged by the receiver's NESN: lost by the sniffer only, not by the link.
            p.append("\(air.crcBad) CRC-bad" + (air.firstCRCBadAcknowledged.map { " (\(air.crcBadAcknowledged) received by the link, acknowledged: first #\($0))" } ?? ""))
        }
        if let r = air.terminateReason {
            p.append("ended by LL_TERMINATE_IND: \(HCIStatus(r).name) (\(Hex.fixed(UInt64(r), width: 2)))")
        } else if air.supervisionTimeout {
            p.append("ended: supervision timeout (packets stopped)")
        }
        out.append("        " + p.joined(separator: ", "))
        if air.encryptionStarts > 0 || air.encrypted > 0 {
            out.append(
                "        encrypted \(air.encryptionStarts)×: \(air.encrypted) encrypted PDUs, \(air.decrypted) decrypted"
                    + (air.decryptedBySniffer > 0 ? " (\(air.decryptedBySniffer) by the sniffer)" : "")
                    + (air.micFailures > 0 ? ", \(air.micFailures) MIC failures" : ""))
        }
        for note in air.security { out.append("        " + note) }
    }

    /// A recovered key, one line: what, for which pair of devices.
    public static func describe(_ k: RecoveredKey) -> String {
        var s = "connection \(Hex.fixed(UInt64(k.connection), width: 4))"
        if let c = k.central, let p = k.peripheral { s += " \(c) → \(p)" }
        if let tk = k.tk {
            let d = String(tk)
            s += "  TK " + String(repeating: "0", count: max(0, 6 - d.count)) + d
        }
        if let stk = k.stk { s += "  STK " + Hex.string(stk) }
        if let ltk = k.ltk {
            s += "  LTK " + Hex.string(ltk)
            if let e = k.ediv { s += " EDIV " + Hex.fixed(UInt64(e), width: 4) }
            if let r = k.rand { s += " Rand " + Hex.string(r.reversed()) }
            if let by = k.distributedBy { s += " (from the " + (by ? "central" : "peripheral") + ")" }
        }
        return s + "  (frame \(k.frame))"
    }
}

/// A connection as `info` lists it: a handle reused after a disconnection is another one.
public struct ConnectionID: Hashable {
    public var adapter: UInt16, handle: UInt16, startFrame: Int?
    public init(_ c: ConnectionInfo) { adapter = c.adapter; handle = c.handle; startFrame = c.startFrame }
}
