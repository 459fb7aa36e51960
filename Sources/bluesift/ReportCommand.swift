import Foundation
import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftGATT
import BluesiftPlugins
import BluesiftReport
#if canImport(Glibc)
import Glibc
#endif

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write one self-contained HTML file: timeline, sequence view, GATT tree, per-characteristic table, problems (or a replay report's steps).",
        discussion: """
        FILE is a capture, or the JSON that `replay --report` writes. The page needs no network: \
        its SVG charts and script are inside it. Default output: FILE's name with .html, in the \
        current directory. Exit codes: 0 written, 2 unusable input or output.
        """)

    @Argument(help: "A capture file, or a replay report (JSON from `bluesift replay --report`).")
    var file: String

    @Option(name: .shortAndLong, help: "Output HTML file (default: <file name>.html in the current directory).")
    var output: String?

    @Flag(help: "Show times in this machine's time zone instead of UTC.")
    var local = false

    @Option(help: "Sequence rows kept in the page; past it only errors, vendor messages and SMP (default 250000).")
    var maxOperations: Int = 250_000

    @Option(help: "Import a GATT database (JSON from `bluesift gatt --format json`) to name undiscovered handles.")
    var gatt: String?

    @OptionGroup var plugins: PluginOptions

    func run() throws {
        let out = output ?? ((file.split(separator: "/").last.map(String.init) ?? "report") + ".html")
        try refuseSameFile(input: file, output: out)
        var options = ReportOptions()
        options.maxOperations = max(1000, maxOperations)
        if local {
            let tz = TimeZone.current
            options.utcOffsetSeconds = tz.secondsFromGMT()
            options.zoneLabel = tz.abbreviation() ?? tz.identifier
        }
        let sink = try AtomicFile(out)
        let writer = CaptureReportWriter { bytes in sink.write(bytes) }
        if let replay = Self.replayJSON(file) {
            writer.writeReplay(json: replay, file: file, options: options)
        } else {
            let db = try gatt.map(loadGATT)
            let reader = try openOrExit(file)
            let analyzer = Analyzer(naming: true)
            if let db { analyzer.gatt.importDatabase(db) }
            analyzer.plugins = plugins.loadPlugins().map { PluginSet($0) }
            var progress = Progress(file)
            let report = writer.write(reader: reader, file: file, analyzer: analyzer, options: options) { done, total in
                progress.update(done: done, total: total)
            }
            progress.finish()
            printWarnings(reader, path: file)
            _ = report
        }
        try sink.commit()
        stderrLine("bluesift: report written to \(out) (\(writer.bytesWritten) bytes" +
                   (writer.operationsLeftOut > 0 ? ", \(writer.operationsLeftOut) operations left out of the sequence view" : "") + ")")
    }

    /// The bytes of a replay report (a JSON object with "steps"), nil for anything else.
    static func replayJSON(_ path: String) -> [UInt8]? {
        guard let fh = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? fh.close() }
        let head = fh.readData(ofLength: 64)
        guard let first = head.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }), first == UInt8(ascii: "{") else { return nil }
        fh.seek(toFileOffset: 0)
        let data = fh.readDataToEndOfFile()
        guard let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any], obj["steps"] is [Any] else { return nil }
        return Array(data)
    }
}

/// Refuses to write over an input: same device and inode (a hard link or another path to it).
func refuseSameFile(input: String, output: String) throws {
    var a = stat(), b = stat()
    guard stat(input, &a) == 0, stat(output, &b) == 0 else { return }
    if a.st_dev == b.st_dev && a.st_ino == b.st_ino {
        stderrLine("bluesift: \(output) is the input file; choose another output")
        throw Exit.unusableInput
    }
}

/// A file written under a temporary name in the same directory and renamed into place at
/// the end: readers never see half a report, and a failed run leaves nothing behind.
final class AtomicFile {
    let path: String
    let tmp: String
    var fd: Int32
    var failed = false

    init(_ path: String) throws {
        self.path = path
        let dir = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let base = path.split(separator: "/").last.map(String.init) ?? path
        tmp = (dir.isEmpty ? "/" : dir) + "/." + base + ".tmp-\(getpid())"
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else {
            stderrLine("bluesift: \(path): cannot write (\(String(cString: strerror(errno))))")
            throw Exit.unusableInput
        }
    }

    func write(_ p: UnsafeRawBufferPointer) {
        var off = 0
        while off < p.count && !failed {
            let n = Glibc.write(fd, p.baseAddress! + off, p.count - off)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { failed = true; break }
            off += n
        }
    }

    func commit() throws {
        let closed = close(fd) == 0
        fd = -1
        if failed || !closed || rename(tmp, path) != 0 {
            unlink(tmp)
            stderrLine("bluesift: \(path): cannot write")
            throw Exit.unusableInput
        }
    }

    deinit { if fd >= 0 { close(fd); unlink(tmp) } }
}
