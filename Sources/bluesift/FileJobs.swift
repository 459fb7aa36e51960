import Foundation
import ArgumentParser
import BluesiftCapture
#if canImport(Glibc)
    import Glibc
#endif

/// Runs one command over many captures (files or folders), on `jobs` threads, keeping each
/// file's output whole and in argument order. Workers write to unlinked temporary files, so
/// memory stays flat whatever the outputs' size; the main thread copies them out in order.
enum FileJobs {
    /// Files named, and the captures in folders named (sorted, not recursive). The other
    /// files of a folder are said on stderr in one line (each with why, when `listSkipped`
    /// or when there is one); a folder without a capture is kept in the list so that opening
    /// it fails ("no captures in DIR", exit 2).
    static func expand(_ paths: [String], listSkipped: Bool = false) -> [String] {
        var out: [String] = []
        for p in paths {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), isDir.boolValue,
                let names = try? FileManager.default.contentsOfDirectory(atPath: p)
            {
                let base = p.hasSuffix("/") ? p : p + "/"
                let before = out.count
                var skipped: [String] = [], folders = 0
                for n in names.sorted() where !n.hasPrefix(".") {
                    var sub: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: base + n, isDirectory: &sub) else { continue }
                    if sub.boolValue { skipped.append("\(base + n): a folder (folders are not searched recursively)"); folders += 1; continue }
                    do { _ = try CaptureFile.open(path: base + n); out.append(base + n) } catch {
                        skipped.append(error.description)
                    }
                }
                if out.count == before {
                    out.append(p)
                } else if listSkipped || skipped.count == 1 {
                    for s in skipped { stderrLine("bluesift: skipped " + s) }
                } else if !skipped.isEmpty {
                    let files = skipped.count - folders
                    let what = [
                        files > 0 ? (files == 1 ? "1 file that is not a capture" : "\(files) files that are not captures") : nil,
                        folders > 0 ? "\(folders) folder\(folders == 1 ? "" : "s")" : nil
                    ].compactMap { $0 }
                    stderrLine("bluesift: \(p): skipped \(what.joined(separator: " and ")) (-v lists them)")
                }
            } else {
                out.append(p)
            }
        }
        return out
    }

    /// Captures of a run that found nothing to show (`frames`: no vendor message), said in one
    /// line when there are several, each with `list`.
    final class Quiet: @unchecked Sendable {
        let lock = NSLock()
        var files: [String: String] = [:]
        func add(_ file: String, _ line: String) { lock.lock(); files[file] = line; lock.unlock() }

        /// In the order of `order`: each line, or one summary.
        func report(order: [String], list: Bool, summary: (Int) -> String) {
            let lines = order.compactMap { files[$0] }
            if list || lines.count == 1 { for l in lines { stderrLine(l) } } else if !lines.isEmpty { stderrLine(summary(lines.count)) }
        }
    }

    /// `--output-dir`: where each capture's output goes, DIR/NAME.EXT with NAME the capture's
    /// file name; captures of the same name in different folders get their path, slashes
    /// replaced by "_" (Android logs are all btsnoop_hci.log).
    static func outputPaths(_ files: [String], dir: String, ext: String) -> [String: String] {
        let base = dir.hasSuffix("/") ? dir : dir + "/"
        func name(_ f: String) -> String { String(f.split(separator: "/").last ?? Substring(f)) }
        var seen: [String: Int] = [:]
        for f in files { seen[name(f), default: 0] += 1 }
        var out: [String: String] = [:]
        for f in files {
            var n = name(f)
            if seen[n]! > 1 {
                n = f.split(separator: "/").filter { $0 != "." && $0 != ".." }.joined(separator: "_")
            }
            out[f] = base + n + "." + ext
        }
        return out
    }

    /// Runs `body` per capture into its own file under `dir` (created if missing), each written
    /// atomically (`AtomicFile`: a temporary file renamed into place when the capture is done;
    /// a capture that fails leaves no file). An output that is an input is refused first (exit
    /// 2, nothing written). Returns the worst exit code, as `run`.
    static func runToDirectory(
        _ files: [String], dir: String, ext: String, jobs: Int,
        body: @escaping (String, Int32) -> Int32
    ) throws -> Int32 {
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            stderrLine("bluesift: \(dir): cannot create the output folder")
            throw Exit.unusableInput
        }
        guard isFolder(dir) else {
            stderrLine("bluesift: \(dir): not a folder")
            throw Exit.unusableInput
        }
        let targets = outputPaths(files, dir: dir, ext: ext)
        for f in files { try OutputGuard.refuseSameFile(output: targets[f]!, inputs: files) }
        let work = UncheckedBox(body)
        return run(files, jobs: jobs) { path, _ in
            let target = targets[path]!
            do throws(CaptureError) {
                let file = try AtomicFile(path: target)
                let code = work.value(path, file.fileDescriptor)
                if code >= 2 { file.discard(); return code }
                try file.commit()
                return code
            } catch {
                stderrLine("bluesift: \(error.description)")
                return 2
            }
        }
    }

    static var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// `body(path, fd)` writes the file's output to fd and returns its exit code. The result
    /// is the worst exit code (2 over 1 over 0). `files` come from ``expand(_:)``.
    static func run(_ files: [String], jobs: Int, body: @escaping (String, Int32) -> Int32) -> Int32 {
        if files.count == 1 || jobs <= 1 {
            var worst: Int32 = 0
            for f in files { worst = max(worst, body(f, 1)) }
            return worst
        }
        let state = JobState(count: files.count)
        // The body only reads what the command parsed; each call builds its own analyzer.
        let work = UncheckedBox(body)
        let workers = min(jobs, files.count)
        for _ in 0..<workers {
            let t = Thread {
                while let i = state.take() {
                    var name = Array("/tmp/bluesift-job-XXXXXX".utf8CString)
                    let fd = name.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
                    if fd >= 0 { name.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) } }
                    let code = fd >= 0 ? work.value(files[i], fd) : 2
                    state.finish(i, fd: fd, code: code)
                }
            }
            t.stackSize = 8 << 20
            t.start()
        }
        var worst: Int32 = 0
        for i in files.indices {
            let (fd, code) = state.wait(i)
            worst = max(worst, code)
            guard fd >= 0 else { continue }
            copyOut(fd)
            close(fd)
        }
        return worst
    }

    static func copyOut(_ fd: Int32) {
        _ = lseek(fd, 0, SEEK_SET)
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            buf.withUnsafeBytes { Output.writeAll(1, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }
}

final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Work queue and completion slots, guarded by one condition variable.
final class JobState: @unchecked Sendable {
    let cond = NSCondition()
    var nextIndex = 0
    let count: Int
    var results: [(fd: Int32, code: Int32)?]

    init(count: Int) { self.count = count; results = Array(repeating: nil, count: count) }

    func take() -> Int? {
        cond.lock(); defer { cond.unlock() }
        guard nextIndex < count else { return nil }
        nextIndex += 1
        return nextIndex - 1
    }

    func finish(_ i: Int, fd: Int32, code: Int32) {
        cond.lock(); results[i] = (fd, code); cond.broadcast(); cond.unlock()
    }

    func wait(_ i: Int) -> (Int32, Int32) {
        cond.lock(); defer { cond.unlock() }
        while results[i] == nil { cond.wait() }
        return results[i]!
    }
}

/// Progress on stderr, only when stderr is a terminal; at most ~10 updates a second.
struct Progress {
    let enabled = isatty(2) == 1
    let label: String
    var last = ContinuousClock.now
    var shown = false

    init(_ label: String) { self.label = label }

    mutating func update(done: Int, total: Int, unit: String = "bytes") {
        guard enabled, total > 0 else { return }
        let now = ContinuousClock.now
        guard now - last > .milliseconds(100) else { return }
        last = now
        shown = true
        let pct = Int(Double(done) / Double(total) * 100)
        let text = unit == "bytes" ? "\(done >> 20)/\(total >> 20) MB" : "\(done)/\(total) \(unit)"
        stderrRaw("\r\u{1B}[K\(label): \(pct)% \(text)")
    }

    mutating func finish() {
        if shown { stderrRaw("\r\u{1B}[K") }
        shown = false
    }
}
