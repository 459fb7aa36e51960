import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarise a capture: format, records, time span, controllers, connections, protocols, warnings.")

    @Argument(help: "Capture files (btsnoop, pcap, pcapng or PacketLogger), or folders of them.")
    var files: [String]

    @Option(help: "Files decoded in parallel (default: the number of cores).")
    var jobs: Int = FileJobs.defaultJobs

    @OptionGroup var keyOptions: KeyOptions

    @OptionGroup var filter: FilterOptions

    @Flag(help: "Read the files as one session (rotated logs: btsnoop_hci.log.last and btsnoop_hci.log), merged in time order.")
    var merge = false

    func run() throws {
        let keys = try keyOptions.keys()
        let options = keyOptions
        let frameFilter = try filter.make()
        let filterOptions = filter
        let code = FileJobs.run(MergedInputs.inputs(files, merge: merge), jobs: jobs) { path, fd in
            Info.report(path, fd: fd, keys: keys, options: options, filter: frameFilter, filterOptions: filterOptions)
        }
        if code != 0 { throw ExitCode(code) }
    }

    /// With a filter, the summary counts the records it passes, and lists the connections
    /// they belong to; every record is still decoded (connection state needs them all).
    static func report(_ file: String, fd: Int32, keys: [KnownLTK] = [], options: KeyOptions? = nil,
                       filter: FrameFilter = FrameFilter(), filterOptions: FilterOptions? = nil) -> Int32 {
        var filter = filter
        if let filterOptions {
            guard let f = filterOptions.prepare(filter, file: file) else { return 2 }
            filter = f
        }
        guard let reader = openCapture(file) else { return 2 }
        let filtering = !filter.isEmpty
        let analyzer = filtering ? Analyzer(naming: filter.needsNaming) : nil
        let decoder = analyzer?.decoder ?? ProtocolDecoder()
        options?.configure(decoder, keys: keys)
        var summary = CaptureSummary()
        var progress = Progress(file)
        var total = 0
        var matchedConnections: Set<ConnectionID> = []
        if let analyzer {
            var frame = AnalyzedFrame(decoded: DecodedFrame(record: CaptureRecord.empty))
            while let record = reader.next() {
                total += 1
                analyzer.analyze(record, into: &frame)
                if filter.matches(frame, analyzer: analyzer) {
                    summary.add(frame.decoded)
                    if let c = frame.decoded.connection, let info = decoder.connection(adapter: record.adapter, handle: c) {
                        matchedConnections.insert(ConnectionID(info))
                    }
                }
                if record.frame & 0xFFFF == 0 { progress.update(done: reader.bytesRead, total: reader.fileSize) }
            }
        } else if let btsnoop = reader as? BTSnoopReader {
            // btsnoop, the common case, is read through its concrete type: the loop calls its
            // `next()` directly instead of through the protocol witness.
            tally(btsnoop, decoder, &summary, &progress)
        } else {
            tally(reader, decoder, &summary, &progress)
        }
        progress.finish()
        var out = Output(fd: fd)
        let f = reader.format
        out.line("file:        \(file)")
        if let report = CaptureFile.bugReport(file) {
            // Android bug report: its Bluetooth logs, each openable as FILE:NAME.
            out.line("logs:        \(report.logs.count), read together in time order (one alone: \(file):NAME)")
            for l in report.logs { out.line("  \(l.name)  \(l.isBTSnooz ? "btsnooz section" : "snoop log"), \(l.size) bytes") }
        }
        out.line("format:      \(f.container.rawValue), \(f.datalinkName)" + (f.datalink != 0 ? " (link type \(f.datalink))" : "")
                 + (f.compression.map { ", \($0.rawValue)-compressed" } ?? ""))
        if filtering { out.line("filter:      \(filterOptions?.summary ?? "")") }
        out.line("records:     \(summary.records)" + (filtering ? " of \(total)" : "")
                 + (summary.truncatedRecords > 0 ? " (\(summary.truncatedRecords) truncated by the capture)" : ""))
        if let a = summary.first, let b = summary.last {
            out.line("time span:   \(TimeFormat.rfc3339(a)) → \(TimeFormat.rfc3339(b)) (\(TimeFormat.duration(microseconds: summary.spanMicroseconds)))")
        }
        let adapters = summary.adapters.sorted().map { "hci\($0)" }
        out.line("controllers: \(adapters.isEmpty ? "none seen" : adapters.joined(separator: ", "))")
        let kinds = summary.kinds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }
        out.line("kinds:       \(kinds.isEmpty ? "none" : kinds.joined(separator: ", "))")
        let order = ["hci", "ll", "adv", "l2cap", "att", "smp", "classic"]
        let counts = summary.protocols
        let protos = order.compactMap { p in counts[p].map { "\(p) \($0)" } }
        out.line("protocols:   \(protos.isEmpty ? "none" : protos.joined(separator: ", "))")
        let conns = filtering ? decoder.connections.filter { matchedConnections.contains(ConnectionID($0)) } : decoder.connections
        out.line("connections: \(conns.count)")
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
            out.line(s)
            if let air = c.air { airLines(c, air, &out) }
            if let lt = c.linkType {
                // Synchronous link (Vol 4 Part E §7.7.35): audio is counted, not decoded.
                let air = c.airMode.map { ["µ-law", "A-law", "CVSD", "transparent (mSBC/LC3)"][Int(min($0, 3))] } ?? "?"
                out.line("        \(lt == 2 ? "eSCO" : "SCO") air mode \(air), \(c.scoPackets) SCO packets")
            } else if c.scoPackets > 0 {
                out.line("        \(c.scoPackets) SCO packets")
            }
            if !c.profiles.isEmpty { out.line("        profiles: " + c.profiles.map(\.description).joined(separator: ", ")) }
        }
        if decoder.crcBadPackets + decoder.encryptedPackets + decoder.retransmissions > 0 {
            out.line("air:         \(decoder.crcBadPackets) CRC-bad packets (not decoded), \(decoder.encryptedPackets) encrypted PDUs"
                     + " (\(decoder.decryptedPackets) decrypted), \(decoder.retransmissions) retransmissions")
        }
        for k in decoder.recoveredKeys { out.line("key:         " + Info.describe(k)) }
        var warnings = reader.warnings
        if summary.recordsWithErrors > 0 {
            warnings.append("\(summary.recordsWithErrors) records with malformed data (see dump)")
        }
        out.line("warnings:    \(warnings.isEmpty ? "none" : warnings.joined(separator: "; "))")
        out.line("")
        out.flush()
        printWarnings(reader, path: file)
        if filtering && summary.records == 0 { filterOptions?.reportNoMatch(file) }
        do { try options?.save(decoder) } catch { stderrLine("bluesift: \(error)"); return 2 }
        return 0
    }

    /// One connection of the capture (controllers reuse handles: the first frame tells them apart).
    struct ConnectionID: Hashable {
        var adapter: UInt16, handle: UInt16, startFrame: Int?
        init(_ c: ConnectionInfo) { adapter = c.adapter; handle = c.handle; startFrame = c.startFrame }
    }

    /// An over-the-air connection: who is who, its parameters, its end, its encryption.
    static func airLines(_ c: ConnectionInfo, _ air: AirLink, _ out: inout Output) {
        func addr(_ a: BDAddr?, _ t: AddressType?) -> String {
            guard let a else { return "unknown" }
            return a.description + (t.map { " (\($0.name))" } ?? "")
        }
        var s = "        central \(addr(air.central, air.centralAddressType)) → peripheral \(addr(air.peripheral, air.peripheralAddressType))"
        if let aa = c.accessAddress { s += "  access address " + Hex.fixed(UInt64(aa), width: 8) }
        out.line(s)
        var p: [String] = []
        if let i = air.interval { p.append("interval \(Double(i) * 1.25) ms") }
        if let t = air.timeout { p.append("timeout \(Int(t) * 10) ms") }
        if air.connectionUpdates > 0 { p.append("\(air.connectionUpdates) connection updates") }
        p.append("\(air.channelMapUpdates) channel map updates")
        if let phy = air.phy { p.append("PHY " + (phy == 1 ? "2M" : phy == 2 ? "Coded" : "1M")) }
        p.append("\(air.packets) data PDUs")
        if air.retransmissions > 0 { p.append("\(air.retransmissions) retransmissions") }
        if air.missed > 0 { p.append("\(air.missed) with packets missed before") }
        if air.crcBad > 0 { p.append("\(air.crcBad) CRC-bad") }
        if let r = air.terminateReason {
            p.append("ended by LL_TERMINATE_IND: \(HCIStatus(r).name) (\(Hex.fixed(UInt64(r), width: 2)))")
        } else if air.supervisionTimeout {
            p.append("ended: supervision timeout (packets stopped)")
        }
        out.line("        " + p.joined(separator: ", "))
        if air.encryptionStarts > 0 || air.encrypted > 0 {
            out.line("        encrypted \(air.encryptionStarts)×: \(air.encrypted) encrypted PDUs, \(air.decrypted) decrypted"
                     + (air.decryptedBySniffer > 0 ? " (\(air.decryptedBySniffer) by the sniffer)" : "")
                     + (air.micFailures > 0 ? ", \(air.micFailures) MIC failures" : ""))
        }
        for note in air.security { out.line("        " + note) }
    }

    /// A recovered key, one line: what, for which pair of devices.
    static func describe(_ k: RecoveredKey) -> String {
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

    @inline(__always)
    static func tally<R: CaptureReader>(_ reader: R, _ decoder: ProtocolDecoder,
                                        _ summary: inout CaptureSummary, _ progress: inout Progress) {
        var frame = DecodedFrame(record: CaptureRecord.empty)
        while let record = reader.next() {
            let found = decoder.layers(of: record, scratch: &frame)
            summary.add(record, layers: found.layers, hasErrors: found.damaged)
            if record.frame & 0xFFFF == 0 { progress.update(done: reader.bytesRead, total: reader.fileSize) }
        }
    }
}
