import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftReplay
import BluesiftPlugins
import BluesiftSession

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Semantic diff of two captures: ATT operations aligned by characteristic and order, handles ignored.",
        discussion: "Exit codes: 0 no differences, 1 differences, 2 unusable input, or nothing to compare (neither capture holds an ATT operation the filters pass).")

    @Argument(help: "Reference capture (e.g. a good run).") var a: String
    @Argument(help: "Capture to compare (e.g. a failing run).") var b: String
    @Option(help: "How many differing operations to list.") var limit = 20
    @OptionGroup var decode: DecodeOptions
    @OptionGroup var filter: FilterOptions

    func operations(_ path: String, _ settings: DecodeSettings, _ filter: FrameFilter) throws -> [CaptureDiff.Operation] {
        let session = try openSessionOrExit(path, decode: settings, filter: filter)
        var reads: [UInt16: UInt16] = [:]
        var ops: [CaptureDiff.Operation] = []
        session.forEach { a in ops += CaptureDiff.operations(a, analyzer: session.analyzer, lastRead: &reads) }
        if session.filtering && session.matched == 0 { self.filter.reportNoMatch(path) }
        try decode.keyOptions.save(session.decoder)
        return ops
    }

    func run() throws {
        let filter = try self.filter.make()
        let settings = try decode.settings()
        let opsA = try operations(a, settings, filter), opsB = try operations(b, settings, filter)
        // "0 same, 0 changed" would read as two equal captures.
        if opsA.isEmpty && opsB.isEmpty {
            stderrLine("bluesift: nothing to compare: neither \(a) nor \(b) holds an ATT read, write, notification or indication" + (filter.isEmpty ? "" : " that the filters pass"))
            throw Exit.unusableInput
        }
        let diff = CaptureDiff.align(opsA, opsB)
        var out = Output()
        func show(_ op: CaptureDiff.Operation) -> String {
            "#\(op.frame) \(op.kind) \(op.identity) \(Hex.string(op.value))" + (op.vendor.map { " (\($0))" } ?? "")
        }
        let s = diff.summary
        if let first = diff.firstDivergence {
            out.line("first divergence:")
            switch first {
            case .changed(let x, let y): out.line("  A \(show(x))"); out.line("  B \(show(y))")
            case .onlyInA(let x): out.line("  only in A: \(show(x))")
            case .onlyInB(let y): out.line("  only in B: \(show(y))")
            case .same: break
            }
            var listed = 0
            out.line("differences:")
            for e in diff.entries where listed < limit {
                switch e {
                case .changed(let x, let y):
                    out.line("  ~ \(show(x))  →  \(y.vendor ?? Hex.string(y.value)) (B #\(y.frame))"); listed += 1
                case .onlyInA(let x): out.line("  - \(show(x))"); listed += 1
                case .onlyInB(let y): out.line("  + \(show(y))"); listed += 1
                case .same: break
                }
            }
        }
        out.line("summary: \(s.same) same, \(s.changed) changed, \(s.onlyA) only in A, \(s.onlyB) only in B")
        out.flush()
        if diff.firstDivergence != nil { throw ExitCode(1) }
    }
}
