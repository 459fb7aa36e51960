import Testing
import Foundation
import TestEvents
#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17: rotated logs read as one (`--merge`), and a growing file read as it grows (`--follow`).
@Suite struct MergeFollowTests {
    /// Record boundaries of a btsnoop (16-byte header, 24-byte record headers) or PacketLogger
    /// (4-byte big-endian length first) file.
    static func recordOffsets(_ d: Data, btsnoop: Bool) -> [Int] {
        var o = btsnoop ? 16 : 0, out: [Int] = []
        let b = [UInt8](d)
        while o + (btsnoop ? 24 : 4) <= b.count {
            out.append(o)
            let be = { (i: Int) in Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
            o += btsnoop ? 24 + be(o + 4) : 4 + be(o)
        }
        return out
    }

    /// A rotated session: the first part (as .last) and the rest, each a whole file.
    @Test(arguments: [("lightctl_btsnoop_hci.log", true), ("bafang_bluetoothd-hci-latest.pklg", false)])
    func mergedRotationEqualsTheWholeSession(_ name: String, _ btsnoop: Bool) throws {
        let dir = try CompressedCaptureTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let whole = CLI.corpus.appendingPathComponent(name).path
        let d = try Data(contentsOf: URL(fileURLWithPath: whole))
        let offsets = Self.recordOffsets(d, btsnoop: btsnoop)
        let cut = offsets[offsets.count / 2] // mid-session: connections open across it
        let header = btsnoop ? d.prefix(16) : Data()
        let first = dir.appendingPathComponent(btsnoop ? "btsnoop_hci.log.last" : "hci-1.pklg")
        let second = dir.appendingPathComponent(btsnoop ? "btsnoop_hci.log" : "hci-2.pklg")
        try d.prefix(cut).write(to: first)
        try (header + d.dropFirst(cut)).write(to: second)

        let ref = try CLI.run(["dump", "--format", "jsonl", whole])
        // Order of the arguments does not matter: records are merged by time.
        for args in [[first.path, second.path], [second.path, first.path]] {
            let r = try CLI.run(["dump", "--format", "jsonl", "--merge"] + args)
            #expect(r.status == 0)
            #expect(r.stdout == ref.stdout, "\(name): \(r.stdout.count) vs \(ref.stdout.count) bytes")
        }
        let info = try CLI.run(["info", "--merge", first.path, second.path])
        let infoRef = try CLI.run(["info", whole])
        let body = { (s: String) in s.split(separator: "\n").filter { !$0.hasPrefix("file:") && !$0.hasPrefix("format:") } }
        #expect(body(info.stdout) == body(infoRef.stdout))
    }

    /// `dump --follow` prints records as a btsnoop file grows, waits on a record written in
    /// two parts, and ends on SIGINT with whole lines and exit code 0.
    @Test func followPrintsRecordsAsTheFileGrows() throws {
        let dir = try CompressedCaptureTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = CLI.corpus.appendingPathComponent("blefun_btsnoop_hci.log").path
        let d = try Data(contentsOf: URL(fileURLWithPath: source))
        let offsets = Self.recordOffsets(d, btsnoop: true)
        let live = dir.appendingPathComponent("growing.log")
        try d.prefix(offsets[10]).write(to: live) // header and 10 records so far

        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = ["dump", "--follow", "--format", "jsonl", live.path]
        let errURL = dir.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let stdout = Pipe()
        p.standardOutput = stdout
        p.standardError = try FileHandle(forWritingTo: errURL)
        // Reads of the growing file: they show when the follower has met what was appended.
        let reads = FileWatch(live.path, mask: UInt32(IN_ACCESS))
        try p.run()
        defer { if p.isRunning { p.terminate() } }

        // What it printed: the pipe is read until the lines wanted are there (or it ends).
        var printed = Data()
        let fd = stdout.fileHandleForReading.fileDescriptor
        func lines() -> Int { printed.filter { $0 == 0x0A }.count }
        func waitFor(_ n: Int) -> Bool { Events.read(fd, into: &printed) { d in d.filter { $0 == 0x0A }.count >= n } }
        #expect(waitFor(10))
        let h = try FileHandle(forWritingTo: live)
        h.seekToEndOfFile()
        // A record in two writes: the half must not be printed. Ten lines out means the ten
        // records were read; the next read that returns data is the half.
        reads.drain()
        let mid = offsets[10] + 12 // inside its 24-byte header
        h.write(d[offsets[10]..<mid])
        #expect(reads.next(), "the follower never read the appended half record")
        Events.read(fd, into: &printed, guard: .zero) { _ in false } // whatever it printed so far
        #expect(lines() == 10)
        h.write(d[mid..<offsets[20]])
        #expect(waitFor(20))
        h.write(d[offsets[20]...])
        try h.close()
        #expect(waitFor(offsets.count))
        p.interrupt() // Ctrl-C
        #expect(Events.exit(p), "still running \(Events.hangGuard) after SIGINT")
        if p.isRunning { p.terminate(); p.waitUntilExit() }
        #expect(p.terminationStatus == 0)
        Events.read(fd, into: &printed) { _ in false } // to the end of its output
        let out = String(decoding: printed, as: UTF8.self)
        let ref = try CLI.run(["dump", "--format", "jsonl", source])
        #expect(out == ref.stdout)
        #expect(out.hasSuffix("}\n"))
    }
}
