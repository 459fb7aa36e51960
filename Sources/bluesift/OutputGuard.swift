import ArgumentParser
import Foundation
import BluesiftTransport
import BluesiftCapture
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Output-file safety, shared by every command that writes a file (`convert`, `script -o`,
/// `replay --record/--report`, `report -o`, `--output-dir`):
///
/// - `refuseSameFile(output:inputs:)`: an output that is the same file as an input
///   (device and inode, after links are resolved; names are never compared) ends the run
///   with exit 2 and one line, before anything is opened for writing.
/// - `write(_:to:)`: whole-file output through a temporary file renamed into place
///   (`AtomicFile`); on failure the destination is untouched and the temporary file gone.
/// - `installSignalHandlers()`: SIGINT/SIGTERM delete every temporary file still open,
///   then the process dies of the signal as usual. SIGPIPE is ignored, so a closed stdout
///   (`| head -1`) is an EPIPE that `Output` turns into a quiet exit 0. SIGBUS (a capture
///   cut short while it is mapped) is one line and exit 2.
enum OutputGuard {
    /// The (device, inode) of what `path` names, links followed; nil when it does not exist.
    static func identity(_ path: String) -> (dev: UInt64, ino: UInt64)? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    /// True when `a` and `b` are the same file (hard link, symlink, `./x`, `../dir/x`).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        guard let x = identity(a), let y = identity(b) else { return false }
        return x == y
    }

    /// The one-line reason `output` may not be written, or nil when it may.
    static func conflict(output: String, inputs: [String]) -> String? {
        for input in inputs where sameFile(output, input) {
            return output == input
                ? "\(output): is the input; refusing to overwrite it"
                : "\(output): is the same file as the input \(input); refusing to overwrite it"
        }
        return nil
    }

    /// Exits 2 with one line when `output` is the same file as any of `inputs`.
    static func refuseSameFile(output: String, inputs: [String]) throws {
        if let why = conflict(output: output, inputs: inputs) {
            stderrLine("bluesift: \(why)")
            throw Exit.unusableInput
        }
    }

    /// Writes `data` to `path` through a temporary file renamed into place; exits 2 with one
    /// line when it cannot (the destination is left as it was).
    static func write(_ data: Data, to path: String) throws {
        do throws(CaptureError) {
            let f = try AtomicFile(path: path)
            f.out.bytes.append(contentsOf: data)
            try f.commit()
        } catch {
            stderrLine("bluesift: \(error.description)")
            throw Exit.unusableInput
        }
    }

    nonisolated(unsafe) private static var installed = false

    /// Called once at start-up by every command (Bluesift.main).
    static func installSignalHandlers() {
        guard !installed else { return }
        installed = true
        AtomicFile.prepareForSignals()
        signal(SIGPIPE, SIG_IGN)
        let handler: @convention(c) (Int32) -> Void = { sig in
            AtomicFile.removeTemporaryFiles()
            AdapterLease.restoreFromSignal() // an adapter taken for hci:N is powered up again
            signal(sig, SIG_DFL)
            raise(sig)
        }
        // A signal the parent ignores stays ignored (a background job of a script); one it
        // left blocked is unblocked, so that an interrupt is never held back until the rename.
        var set = sigset_t()
        sigemptyset(&set)
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            let previous = signal(sig, handler)
            if let previous, unsafeBitCast(previous, to: Int.self) == 1 /* SIG_IGN */ { signal(sig, previous) }
            sigaddset(&set, sig)
        }
        sigprocmask(SIG_UNBLOCK, &set, nil)
        // A capture truncated while mapped: one line and exit 2 instead of a crash.
        let bus: @convention(c) (Int32) -> Void = { _ in
            AtomicFile.removeTemporaryFiles()
            MappedFile.reportShrunk()
            _exit(2)
        }
        signal(SIGBUS, bus)
    }
}
