import Testing
import Foundation

/// Issue 17: compressed captures are read by content (magic bytes), streamed through
/// Debian's zlib/liblzma/libzstd/libbz2, and decode exactly as the uncompressed file.
@Suite struct CompressedCaptureTests {
    static let tools: [(name: String, argv: [String])] = [
        ("gzip", ["gzip", "-c"]), ("xz", ["xz", "-c", "-T1"]), ("zstd", ["zstd", "-q", "-c"]), ("bzip2", ["bzip2", "-c"])
    ]

    static var corpusFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: CLI.corpus.path)) ?? [])
            .filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".txt") }.sorted()
    }

    static func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-17-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    /// `tool args input > output`, through /usr/bin/env so PATH finds the tool.
    static func compress(_ argv: [String], _ input: String, to output: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = argv + [input]
        FileManager.default.createFile(atPath: output, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(argv[0]) failed on \(input)")
    }

    @Test(arguments: corpusFiles) func compressedDumpsAreIdentical(_ name: String) throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = CLI.corpus.appendingPathComponent(name).path
        let ref = try CLI.run(["dump", "--format", "jsonl", plain])
        for tool in Self.tools {
            // A misleading name on purpose: detection is by content.
            let packed = dir.appendingPathComponent("\(name).\(tool.name).capture").path
            try Self.compress(tool.argv, plain, to: packed)
            let r = try CLI.run(["dump", "--format", "jsonl", packed])
            #expect(r.status == ref.status, "\(name) \(tool.name)")
            #expect(r.stdout == ref.stdout, "\(name) \(tool.name): \(r.stdout.count) vs \(ref.stdout.count) bytes")
        }
        // info names the compression.
        let gz = dir.appendingPathComponent("\(name).gzip.capture").path
        let info = try CLI.run(["info", gz])
        if ref.status == 0 { #expect(info.stdout.contains("gzip-compressed")) }
    }

    /// Concatenated gzip members read as one file, like `zcat` reads them.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path), "needs ../shared/captures/public")) func concatenatedMembers() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log")
        let data = try #require(FileManager.default.contents(atPath: plain.path))
        let half = 16 + 24 * 5000 // cut anywhere: the members join into one byte stream
        let a = dir.appendingPathComponent("a"), b = dir.appendingPathComponent("b")
        try data.prefix(half).write(to: a)
        try data.dropFirst(half).write(to: b)
        try Self.compress(["gzip", "-c"], a.path, to: a.path + ".gz")
        try Self.compress(["gzip", "-c"], b.path, to: b.path + ".gz")
        let joined = (FileManager.default.contents(atPath: a.path + ".gz") ?? Data()) + (FileManager.default.contents(atPath: b.path + ".gz") ?? Data())
        try joined.write(to: dir.appendingPathComponent("joined.gz"))
        let ref = try CLI.run(["dump", "--format", "jsonl", plain.path])
        let r = try CLI.run(["dump", "--format", "jsonl", dir.appendingPathComponent("joined.gz").path])
        #expect(r.stdout == ref.stdout)
        #expect(r.stdout.split(separator: "\n").count == 61318)
    }

    /// A compressed file cut short keeps every record before the cut and says why it stopped.
    @Test func truncatedCompressedFile() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path
        let gz = dir.appendingPathComponent("cut.gz").path
        try Self.compress(["gzip", "-c"], plain, to: gz)
        let whole = FileManager.default.contents(atPath: gz) ?? Data()
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: gz))
        let r = try CLI.run(["dump", "--format", "jsonl", gz])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count > 10_000 && lines.count < 61318)
        #expect(r.stderr.contains("gzip data damaged at compressed offset") && r.stderr.contains("ends early"))
        // Every line is whole JSON.
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    /// Memory stays flat: decompression streams through a window, it never holds the file.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path), "needs ../shared/captures/public")) func peakMemoryUnchanged() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let one = try #require(FileManager.default.contents(atPath: CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path))
        let big = dir.appendingPathComponent("big.btsnoop")
        FileManager.default.createFile(atPath: big.path, contents: one)
        let h = try FileHandle(forWritingTo: big)
        h.seekToEndOfFile()
        for _ in 0..<15 { h.write(one.dropFirst(16)) } // 64 MB, 980 k records
        try h.close()
        try Self.compress(["gzip", "-1", "-c"], big.path, to: big.path + ".gz")
        try Self.compress(["zstd", "-q", "-1", "-c"], big.path, to: big.path + ".zst")
        func peak(_ path: String) throws -> (Int, String) {
            let rss = dir.appendingPathComponent("rss").path
            let r = try CLI.run(["info", path], wrapper: ["/usr/bin/time", "-f", "%M", "-o", rss])
            let kib = Int((try String(contentsOfFile: rss, encoding: .utf8)).split(separator: "\n").last ?? "") ?? -1
            return (kib, r.stdout)
        }
        let (plainKiB, plainOut) = try peak(big.path)
        #expect(plainOut.contains("records:     981088"))
        for ext in ["gz", "zst"] {
            let (kib, out) = try peak(big.path + "." + ext)
            #expect(out.contains("records:     981088"))
            #expect(abs(kib - plainKiB) < 8 * 1024, "\(ext): \(kib) KiB vs \(plainKiB) KiB uncompressed")
        }
    }
}
