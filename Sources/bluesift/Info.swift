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

    func run() throws {
        let code = FileJobs.run(FileJobs.expand(files), jobs: jobs) { path, fd in Info.report(path, fd: fd) }
        if code != 0 { throw ExitCode(code) }
    }

    static func report(_ file: String, fd: Int32) -> Int32 {
        guard let reader = openCapture(file) else { return 2 }
        let decoder = ProtocolDecoder()
        var summary = CaptureSummary()
        var progress = Progress(file)
        // btsnoop, the common case, is read through its concrete type: the loop calls its
        // `next()` directly instead of through the protocol witness.
        if let btsnoop = reader as? BTSnoopReader {
            tally(btsnoop, decoder, &summary, &progress)
        } else {
            tally(reader, decoder, &summary, &progress)
        }
        progress.finish()
        var out = Output(fd: fd)
        let f = reader.format
        out.line("file:        \(file)")
        out.line("format:      \(f.container.rawValue), \(f.datalinkName)" + (f.datalink != 0 ? " (link type \(f.datalink))" : ""))
        out.line("records:     \(summary.records)" + (summary.truncatedRecords > 0 ? " (\(summary.truncatedRecords) truncated by the capture)" : ""))
        if let a = summary.first, let b = summary.last {
            out.line("time span:   \(TimeFormat.rfc3339(a)) → \(TimeFormat.rfc3339(b)) (\(TimeFormat.duration(microseconds: summary.spanMicroseconds)))")
        }
        let adapters = summary.adapters.sorted().map { "hci\($0)" }
        out.line("controllers: \(adapters.isEmpty ? "none seen" : adapters.joined(separator: ", "))")
        let kinds = summary.kinds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }
        out.line("kinds:       \(kinds.joined(separator: ", "))")
        let order = ["hci", "ll", "adv", "l2cap", "att", "smp"]
        let counts = summary.protocols
        let protos = order.compactMap { p in counts[p].map { "\(p) \($0)" } }
        out.line("protocols:   \(protos.isEmpty ? "none" : protos.joined(separator: ", "))")
        let conns = decoder.connections
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
        }
        var warnings = reader.warnings
        if summary.recordsWithErrors > 0 {
            warnings.append("\(summary.recordsWithErrors) records with malformed data (see dump)")
        }
        out.line("warnings:    \(warnings.isEmpty ? "none" : warnings.joined(separator: "; "))")
        out.line("")
        out.flush()
        printWarnings(reader, path: file)
        return 0
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
