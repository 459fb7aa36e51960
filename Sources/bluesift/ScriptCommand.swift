import ArgumentParser
import BluesiftSession
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftReplay
import BluesiftPlugins

struct Script: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "script",
        abstract: "Extract a replay script (MTU, subscriptions, writes, reads and the answers recorded) from one connection.",
        discussion: "The script is editable JSON; its schema is in docs/replay-script.md.")

    @Argument(help: "Capture file.") var file: String
    /// --connection picks the connection (default: the one with the most ATT writes among
    /// the records the other filters keep); the other filters choose the steps.
    @OptionGroup var filter: FilterOptions
    @OptionGroup var decode: DecodeOptions
    @Option(name: .shortAndLong, help: "Output file (default: stdout).") var output: String?

    func run() throws {
        if let output { try OutputGuard.refuseSameFile(output: output, inputs: [file] + (decode.gatt.map { [$0] } ?? [])) }
        let filter = try self.filter.make()
        let script = try Script.extract(file: file, filter: filter, settings: try decode.settings(), filterText: self.filter.summary)
        if script.steps.isEmpty && !filter.isEmpty { self.filter.reportNoMatch(file) }
        let data = try script.encoded()
        if let output {
            try OutputGuard.write(data, to: output)
            let refused = script.steps.filter { $0.refuse != nil }.count
            stderrLine(
                "bluesift: \(script.steps.count) steps from connection \(Hex.fixed(UInt64(script.source.connection), width: 4)) written to \(output)"
                    + (refused > 0 ? " (\(refused) refuse to replay: truncated records)" : ""))
        } else {
            data.withUnsafeBytes { Output.writeAll(1, $0) }
        }
    }

    /// Extracts the script of one connection (default: the one with the most ATT writes).
    /// `filterText`: the filter options as typed, for the message when none of them match.
    static func extract(
        file: String, filter: FrameFilter, settings: DecodeSettings,
        filterText: String = ""
    ) throws -> ReplayScript {
        var handle = filter.connection
        if handle == nil { handle = try busiestConnection(file, filter: filter, settings: settings) }
        guard let handle else {
            // Nothing to write a script from: exit 2, as for a capture without writes.
            stderrLine(
                "bluesift: \(file): "
                    + (filter.isEmpty
                        ? "no connection with ATT writes in this capture"
                        : "no ATT writes match \(filterText)"))
            throw Exit.unusableInput
        }
        var filter = filter
        filter.connection = handle
        let session = try openSessionOrExit(file, decode: settings, filter: filter)
        return ScriptExtractor.script(session, connection: handle, capture: (file as NSString).lastPathComponent)
    }

    /// The connection with the most ATT writes (GATT names only when a filter needs them).
    static func busiestConnection(_ file: String, filter: FrameFilter, settings: DecodeSettings) throws -> UInt16? {
        let session = try openSessionOrExit(file, decode: ScriptExtractor.countingSettings(settings, filter: filter), filter: filter)
        return ScriptExtractor.busiestConnection(session)
    }
}
