import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Waiting on events, not on the clock (house rule: no wall-clock budgets, no ordering by
/// sleep). Every wait ends on the event it names: a descriptor becoming readable (poll), a
/// file changing (inotify), a process ending (pidfd). `hangGuard` only stops a test that would
/// otherwise hang; callers fail the test with a message when it is reached.
public enum Events {
    public static let hangGuard: Duration = .seconds(120)

    /// Blocks until one of `fds` is readable or hung up: the ready ones. nil once `end` has
    /// passed with none ready (an `end` already past polls once without blocking).
    public static func readable(_ fds: [Int32], by end: ContinuousClock.Instant) -> [Int32]? {
        var p = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let left = end - ContinuousClock.now
            let ms = left <= .zero ? 0 : Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, Int64(Int32.max)))
            let n = poll(&p, nfds_t(p.count), ms)
            if n > 0 { return p.filter { $0.revents != 0 }.map(\.fd) }
            if n < 0 && errno != EINTR { return fds } // the caller's read reports the error
            if n == 0 && left <= .zero { return nil }
        }
    }

    /// A descriptor that becomes readable when process `pid` ends (pidfd_open, Linux 5.3;
    /// looked up at run time as Glibc's Swift module leaves sys/pidfd.h out); -1 when the
    /// process is already gone.
    public static func exitDescriptor(_ pid: pid_t) -> Int32 {
        typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open") else { fatalError("pidfd_open missing: glibc 2.36 or later") }
        return unsafeBitCast(sym, to: PidfdOpen.self)(pid, 0)
    }

    /// Waits for `p` to end; false when the hang guard ran out first (`p` is left running).
    @discardableResult
    public static func exit(_ p: Process, guard limit: Duration = hangGuard) -> Bool {
        let fd = exitDescriptor(p.processIdentifier)
        if fd >= 0 {
            defer { close(fd) }
            guard readable([fd], by: .now + limit) != nil else { return false }
        }
        p.waitUntilExit() // it has ended: this only collects its status
        return true
    }

    /// Reads `fd` (a pipe or socket) into `buffer` until `done(buffer)` holds: true then;
    /// false at end of stream or when the hang guard ran out with `done` still false.
    /// `guard: .zero` reads only what is there already.
    @discardableResult
    public static func read(_ fd: Int32, into buffer: inout Data, guard limit: Duration = hangGuard, until done: (Data) -> Bool) -> Bool {
        let end = ContinuousClock.now + limit
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !done(buffer) {
            guard readable([fd], by: end) != nil else { return false }
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<n])
        }
        return true
    }

    /// Waits until `done()` holds, checking it again each time a file in `path`'s folder is
    /// created, written or closed, and once more when `process` ends. False when it never held.
    public static func file(_ path: String, process: Process? = nil, guard limit: Duration = hangGuard, until done: () -> Bool) -> Bool {
        let watch = FileWatch((path as NSString).deletingLastPathComponent)
        return watch.wait(process: process, guard: limit, until: done)
    }

    /// Waits until the file at `path` contains `text` (see `file`).
    public static func text(_ text: String, in path: String, process: Process? = nil, guard limit: Duration = hangGuard) -> Bool {
        file(path, process: process, guard: limit) { contents(path).contains(text) }
    }

    public static func contents(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }
}

/// An inotify watch on one file or folder.
public final class FileWatch {
    public static let changes = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)
    let fd: Int32

    /// `mask`: inotify events (`IN_ACCESS` to see a file being read, say).
    public init(_ path: String, mask: UInt32 = FileWatch.changes) {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        precondition(fd >= 0 && inotify_add_watch(fd, path, mask) >= 0, "inotify on \(path): errno \(errno)")
    }

    deinit { close(fd) }

    /// Forgets the events seen so far; true when there was any.
    @discardableResult
    public func drain() -> Bool {
        var buf = [UInt8](repeating: 0, count: 4096), any = false
        while Glibc.read(fd, &buf, buf.count) > 0 { any = true }
        return any
    }

    /// Waits for the next event: false when the hang guard ran out first.
    public func next(guard limit: Duration = Events.hangGuard) -> Bool {
        let end = ContinuousClock.now + limit
        while true {
            if drain() { return true }
            guard Events.readable([fd], by: end) != nil else { return false }
        }
    }

    /// Waits until `done()` holds, checked now and after each event, and once more when
    /// `process` ends. False when it never held.
    public func wait(process: Process? = nil, guard limit: Duration = Events.hangGuard, until done: () -> Bool) -> Bool {
        let end = ContinuousClock.now + limit
        let exited = process.map { Events.exitDescriptor($0.processIdentifier) } ?? -1
        defer { if exited >= 0 { close(exited) } }
        while true {
            if done() { return true }
            if process != nil && exited < 0 { return false } // gone already, and `done` checked since
            guard let ready = Events.readable([fd] + (exited >= 0 ? [exited] : []), by: end) else { return false }
            drain()
            if exited >= 0 && ready.contains(exited) { return done() }
        }
    }
}
