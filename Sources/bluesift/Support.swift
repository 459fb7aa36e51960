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
    /// Bytes gathered before a write: 64 KiB, 256 KiB into a pipe.
    let limit: Int
    let fd: Int32

    init(fd: Int32 = 1) {
        self.fd = fd
        limit = Output.isPipe(fd) ? Output.pipeChunk : 1 << 16
        buffer.reserveCapacity(limit + 4096)
    }

    /// Into a pipe (`| jq`, `| cat`), a 64 KiB pipe buffer made the writer wait for the reader
    /// after every chunk: 2.6× the time to /dev/null. The buffer is enlarged to 1 MiB (Linux's
    /// default limit for a user) once per pipe, and chunks are 256 KiB, so both sides run.
    static let pipeChunk = 1 << 18

    static func isPipe(_ fd: Int32) -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFIFO else { return false }
        #if os(Linux)
            let setPipeSize: Int32 = 1031 // F_SETPIPE_SZ (fcntl.h, Linux only)
            _ = fcntl(fd, setPipeSize, Int32(1 << 20))
        #endif
        return true
    }

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

    /// The whole buffer to `fd`, retrying short writes. A reader that went away (`| head`,
    /// EPIPE) ends the run quietly with exit 0; any other failure (a full disk, /dev/full,
    /// a quota) is one line and exit 2, with every temporary output file removed: nothing
    /// partial is left looking like success.
    static func writeAll(_ fd: Int32, _ p: UnsafeRawBufferPointer) {
        let err = WriteAll.write(fd, p)
        if err != 0 { writeFailed(fd, err) }
    }

    /// Ends the process after a failed write: quietly for a closed pipe, else one line, exit 2.
    /// Any thread may call it (`--jobs` workers); the first caller's message is the one shown.
    static func writeFailed(_ fd: Int32, _ err: Int32) -> Never {
        if err == EPIPE { AtomicFile.removeTemporaryFiles(); exit(0) }
        if WriteFailure.claim() {
            let what = fd == 1 ? "standard output" : "the output"
            stderrLine("bluesift: cannot write \(what): \(String(cString: strerror(err)))")
            AtomicFile.removeTemporaryFiles()
            _exit(2)
        }
        while true { pause() } // the first failing thread exits for all
    }

    /// One line of output. Control characters and terminal escapes in it (from the air:
    /// names, strings, vendor text) are escaped (TerminalText); JSON stays valid JSON.
    mutating func line(_ s: String) { buffer.append(contentsOf: TerminalText.escape(s).utf8); buffer.append(0x0A) }
}

/// The first failed write wins: other threads that fail at the same time exit silently.
enum WriteFailure {
    nonisolated(unsafe) static var claimed: Int32 = 0
    nonisolated(unsafe) static var lock = pthread_mutex_t()
    static func claim() -> Bool {
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        if claimed != 0 { return false }
        claimed = 1
        return true
    }
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
    static func inputs(_ files: [String], merge: Bool, listSkipped: Bool = false) -> [String] {
        let expanded = FileJobs.expand(files, listSkipped: listSkipped)
        guard merge, expanded.count > 1 else { return expanded }
        let label = expanded.joined(separator: " + ")
        groups[label] = expanded
        return [label]
    }
}

/// `dump --follow`: set by SIGINT, read by the stream waiting at the file's end.
nonisolated(unsafe) var followInterrupted: sig_atomic_t = 0

/// A command that reads one capture, given a folder: one line, exit 2 (never a crash reading
/// a directory as a file).
func refuseFolder(_ path: String, hint: String = "dump, info, stats and frames read folders") throws {
    guard isFolder(path) else { return }
    stderrLine("bluesift: \(path) is a folder; this command reads one capture file (\(hint))")
    throw Exit.unusableInput
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
