import ArgumentParser
import Foundation
import BluesiftCapture
import BluesiftWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Documented exit codes.
enum Exit {
    static let unusableInput = ExitCode(2)
    /// Bad command-line usage (sysexits EX_USAGE), as ArgumentParser uses for its own errors.
    static let usage = ExitCode(64)
}

/// Buffered stdout: whole chunks, never a write(2) per record.
struct Output {
    var buffer: [UInt8] = []
    let limit = 1 << 16
    let fd: Int32

    init(fd: Int32 = 1) { self.fd = fd; buffer.reserveCapacity(limit + 4096) }

    mutating func flushIfNeeded() { if buffer.count >= limit { flush() } }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { Output.writeAll(fd, $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes bytes already in a buffer of their own (JSON chunks) without copying them here.
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        flush()
        Output.writeAll(fd, bytes)
    }

    /// The whole buffer to `fd`, retrying short writes; a reader that went away (`| head`)
    /// ends the run quietly.
    static func writeAll(_ fd: Int32, _ p: UnsafeRawBufferPointer) {
        var off = 0
        while off < p.count {
            #if canImport(Glibc)
            let n = Glibc.write(fd, p.baseAddress! + off, p.count - off)
            #else
            let n = Darwin.write(fd, p.baseAddress! + off, p.count - off)
            #endif
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                exit(0)
            }
            off += n
        }
    }

    /// One line of output. Control characters and terminal escapes in it (from the air:
    /// names, strings, vendor text) are escaped (TerminalText); JSON stays valid JSON.
    mutating func line(_ s: String) { buffer.append(contentsOf: TerminalText.escape(s).utf8); buffer.append(0x0A) }
}

func stderrLine(_ s: String) { stderrRaw(TerminalText.escape(s) + "\n") }

func stderrRaw(_ s: String) {
    var s = s
    s.withUTF8 { p in _ = write(2, p.baseAddress, p.count) }
}

var stdoutIsTerminal: Bool { isatty(1) == 1 }

/// NO_COLOR (no-color.org): set and not empty, no colour unless --color asks for it.
var noColorEnvironment: Bool { !(ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty }

/// The terminal's width in columns ($COLUMNS, else the tty's, else 80).
func terminalColumns() -> Int {
    if let c = ProcessInfo.processInfo.environment["COLUMNS"].flatMap({ Int($0) }), c > 20 { return c }
    var w = winsize()
    if ioctl(1, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 20 { return Int(w.ws_col) }
    return 80
}

/// `--merge`: the files named are one session (rotated logs), read as one capture in time
/// order. The group is registered under a label that the job then opens.
enum MergedInputs {
    nonisolated(unsafe) static var groups: [String: [String]] = [:]

    /// The job list: each capture alone, or all of them as one when `merge` is set.
    static func inputs(_ files: [String], merge: Bool) -> [String] {
        let expanded = FileJobs.expand(files)
        guard merge, expanded.count > 1 else { return expanded }
        let label = expanded.joined(separator: " + ")
        groups[label] = expanded
        return [label]
    }
}

/// `dump --follow`: set by SIGINT, read by the stream waiting at the file's end.
nonisolated(unsafe) var followInterrupted: sig_atomic_t = 0

/// Opens a capture, or prints a one-line message and returns nil (the caller exits 2).
func openCapture(_ path: String) -> (any CaptureReader)? {
    if isFolder(path) {
        stderrLine("bluesift: no captures in \(path)")
        return nil
    }
    do {
        if let group = MergedInputs.groups[path] { return try CaptureFile.open(merging: group) }
        return try CaptureFile.open(path: path)
    } catch {
        stderrLine("bluesift: \(error.description)")
        return nil
    }
}

/// Opens a capture or exits 2 with a one-line message.
func openOrExit(_ path: String) throws -> any CaptureReader {
    if isFolder(path) {
        stderrLine("bluesift: no captures in \(path)")
        throw Exit.unusableInput
    }
    do {
        return try CaptureFile.open(path: path)
    } catch {
        stderrLine("bluesift: \(error.description)")
        throw Exit.unusableInput
    }
}

func isFolder(_ path: String) -> Bool {
    var isDir: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
}

func printWarnings(_ reader: any CaptureReader, path: String) {
    for w in reader.warnings { stderrLine("bluesift: warning: \(path): \(w)") }
}

/// "0x0040", "64" → 64
func parseInteger(_ s: String) -> Int? {
    if s.hasPrefix("0x") || s.hasPrefix("0X") { return Int(s.dropFirst(2), radix: 16) }
    return Int(s)
}
