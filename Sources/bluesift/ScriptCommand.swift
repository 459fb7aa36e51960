import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftReplay
import BluesiftPlugins

struct Script: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Extract a replay script (MTU, subscriptions, writes, reads and the answers recorded) from one connection.",
        discussion: "The script is editable JSON; its schema is in docs/replay-script.md.")

    @Argument(help: "Capture file.") var file: String
    /// --connection picks the connection (default: the one with the most ATT writes among
    /// the records the other filters keep); the other filters choose the steps.
    @OptionGroup var filter: FilterOptions
    @OptionGroup var plugins: PluginOptions
    @Option(name: .shortAndLong, help: "Output file (default: stdout).") var output: String?
    @Option(help: "GATT database JSON, when the capture has no discovery.") var gatt: String?

    func run() throws {
        if let output { try OutputGuard.refuseSameFile(output: output, inputs: [file] + (gatt.map { [$0] } ?? [])) }
        guard let filter = self.filter.prepare(try self.filter.make(), file: file) else { throw Exit.unusableInput }
        let script = try Script.extract(file: file, filter: filter, gatt: gatt, plugins: plugins.loadPlugins(),
                                        filterText: self.filter.summary)
        if script.steps.isEmpty && !filter.isEmpty { self.filter.reportNoMatch(file) }
        let data = try script.encoded()
        if let output {
            try OutputGuard.write(data, to: output)
            let refused = script.steps.filter { $0.refuse != nil }.count
            stderrLine("bluesift: \(script.steps.count) steps from connection \(Hex.fixed(UInt64(script.source.connection), width: 4)) written to \(output)"
                       + (refused > 0 ? " (\(refused) refuse to replay: truncated records)" : ""))
        } else {
            data.withUnsafeBytes { Output.writeAll(1, $0) }
        }
    }

    /// Extracts the script of one connection (default: the one with the most ATT writes).
    /// `filterText`: the filter options as typed, for the message when none of them match.
    static func extract(file: String, filter: FrameFilter, gatt: String?, plugins: [Plugin]? = nil,
                        filterText: String = "") throws -> ReplayScript {
        var handle = filter.connection
        if handle == nil { handle = try busiestConnection(file, filter: filter, gatt: gatt) }
        guard let handle else {
            // Nothing to write a script from: exit 2, as for a capture without writes.
            stderrLine("bluesift: \(file): " + (filter.isEmpty ? "no connection with ATT writes in this capture"
                                                               : "no ATT writes match \(filterText)"))
            throw Exit.unusableInput
        }
        let reader = try openOrExit(file)
        let analyzer = Analyzer(naming: true)
        if let gatt { try importGATT(gatt, into: analyzer) }
        analyzer.plugins = plugins.map { PluginSet($0) }
        let extractor = ScriptExtractor(connection: handle)
        var filter = filter
        filter.connection = handle
        let filtering = !filter.isEmpty
        while let r = reader.next() {
            let a = analyzer.analyze(r)
            if !filtering || filter.matches(a, analyzer: analyzer) { extractor.observe(a) }
        }
        let info = analyzer.decoder.connections.last(where: { $0.handle == handle })
        let source = ReplayScript.Source(capture: (file as NSString).lastPathComponent, connection: Int(handle),
                                         peer: info?.peer?.description, peerAddressType: info?.peerAddressType?.name,
                                         peerName: nil, mtu: extractor.mtu, secured: extractor.secured ? true : nil)
        return ReplayScript(source: source, steps: extractor.steps)
    }

    /// The connection with the most ATT writes.
    static func busiestConnection(_ file: String, filter: FrameFilter, gatt: String?) throws -> UInt16? {
        let reader = try openOrExit(file)
        let analyzer = Analyzer(naming: filter.needsNaming)
        if filter.needsNaming, let gatt { try importGATT(gatt, into: analyzer) }
        var filter = filter
        let filtering = !filter.isEmpty
        var counts: [UInt16: Int] = [:]
        while let r = reader.next() {
            let a = analyzer.analyze(r)
            if filtering && !filter.matches(a, analyzer: analyzer) { continue }
            let f = a.decoded
            if let c = f.connection, let op = f.att?.bytes.first, op == 0x12 || op == 0x52 || op == 0x16 || op == 0xD2 {
                counts[c, default: 0] += 1
            }
        }
        return counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }
}
