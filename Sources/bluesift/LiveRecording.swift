import Foundation
import BluesiftCapture
import BluesiftDissect
#if canImport(Glibc)
    import Glibc
#endif

/// What `tap` and `capture` share before they record live: `--rotate-size`, the filter's limits,
/// the stop signals and the start of a segmented recording. `tool` names the command in messages.
enum LiveRecording {
    /// `--rotate-size N`: a size of at least a header and 64 bytes, and only with `-w`.
    static func rotation(_ rotateSize: String?, write: String?) throws -> Int? {
        guard let r = rotateSize else { return nil }
        guard let n = Tap.parseSize(r), n >= BTSnoopSegments.headerSize + 64 else {
            throw usage("--rotate-size", "a size in bytes of at least 80, such as 65536, 64k or 2M", r)
        }
        guard write != nil else { throw usage("--rotate-size", "-w FILE with it", r) }
        return n
    }

    /// A live recording cannot look advertised names up ahead: `--peer` takes addresses only.
    static func refuseAdvertisedNames(_ filter: FrameFilter, tool: String) throws {
        guard let name = filter.peerNames.first else { return }
        throw usage("--peer", "an address (a live \(tool) cannot look advertised names up ahead)", name)
    }

    /// Ctrl-C, SIGTERM and SIGHUP end the session cleanly (the recording is completed, not
    /// removed): `handler` sets the command's flag; the signals are unblocked in case a parent
    /// started us with them blocked.
    static func catchStopSignals(_ handler: @convention(c) (Int32) -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        for sig in [SIGINT, SIGTERM, SIGHUP] { signal(sig, handler); sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Opens the first file of `recorder` and says which segments of an earlier recording
    /// under the same name it removed; exit 2 when it cannot be written.
    static func start(_ recorder: BTSnoopSegments, tool: String) throws {
        do {
            let removed = try recorder.start()
            if let first = removed.first, let last = removed.last {
                stderrLine(
                    "bluesift: \(tool): removed \(removed.count) segment\(removed.count == 1 ? "" : "s") of an earlier recording: "
                        + (removed.count == 1 ? first : "\(first) … \(last)"))
            }
        } catch {
            stderrLine("bluesift: \(error)")
            throw Exit.unusableInput
        }
    }
}
