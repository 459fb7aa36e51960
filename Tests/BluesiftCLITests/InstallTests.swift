import Testing
import Foundation

/// Issue 14: install and discovery. `make install` is `release-static check-static man` then
/// `install-files`; the test runs `install-files` with the debug binary (building a release
/// inside `swift test` is not possible: the build folder is locked).
@Suite(.serialized) struct InstallTests {
    /// The environment without anything pointing at the repository's plugins.
    static var cleanEnv: [String: String] {
        ProcessInfo.processInfo.environment.filter { $0.key != "BLUESIFT_PLUGINS" }
    }

    @Test func installIntoATemporaryPrefixAndRunFromElsewhere() throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-prefix-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let prefix = "/opt/bluesift-test"
        // Man pages from swift-argument-parser's generator (make test builds it).
        let generator = CLI.root.appendingPathComponent(".build/debug/generate-manual").path
        try #require(FileManager.default.isExecutableFile(atPath: generator), "make test builds generate-manual first")
        let man = try CLI.process(
            "/usr/bin/make",
            [
                "-s", "man-files", "GENERATE_MANUAL=\(generator)", "BIN_TO_INSTALL=\(CLI.binary)",
                "MAN_BUILD=\(tmp.path)/man"
            ], cwd: CLI.root.path)
        #expect(man.status == 0, "\(man.stderr)")
        let make = try CLI.process(
            "/usr/bin/make",
            [
                "-s", "install-files", "PREFIX=\(prefix)", "DESTDIR=\(tmp.path)",
                "BIN_TO_INSTALL=\(CLI.binary)", "MAN_BUILD=\(tmp.path)/man"
            ], cwd: CLI.root.path)
        #expect(make.status == 0, "\(make.stderr)")
        let root = tmp.path + prefix
        let bin = root + "/bin/bluesift"
        #expect(FileManager.default.isExecutableFile(atPath: bin))
        let dumpPage = try String(contentsOfFile: root + "/share/man/man1/bluesift.dump.1", encoding: .utf8)
        #expect(dumpPage.contains("characteristic"))
        #expect(FileManager.default.fileExists(atPath: root + "/share/man/man1/bluesift.1"))
        #expect(FileManager.default.fileExists(atPath: root + "/share/man/man1/bluesift.plugins.export.1"))
        #expect(!FileManager.default.fileExists(atPath: root + "/share/man/man1/bluesift.plugins.bench.1")) // hidden
        for f in [
            "share/bluesift/Plugins/band.yaml", "share/bluesift/Plugins/lego-lwp3.yaml",
            "share/bash-completion/completions/bluesift", "share/zsh/site-functions/_bluesift",
            "share/fish/vendor_completions.d/bluesift.fish"
        ] {
            #expect(FileManager.default.fileExists(atPath: root + "/" + f), "\(f)")
        }
        let bash = try String(contentsOfFile: root + "/share/bash-completion/completions/bluesift", encoding: .utf8)
        #expect(bash.contains("--characteristic") && bash.contains("--peer"))
        let fish = try String(contentsOfFile: root + "/share/fish/vendor_completions.d/bluesift.fish", encoding: .utf8)
        #expect(fish.contains("complete -c 'bluesift'"))

        // Run from another folder: the installed plugins are found beside the binary.
        let list = try CLI.process(bin, ["plugins", "list"], cwd: tmp.path, env: Self.cleanEnv)
        #expect(list.status == 0)
        #expect(list.stdout.contains("band  Smart band"))
        #expect(list.stdout.contains(root + "/share/bluesift/Plugins/band.yaml"))
        let frames = try CLI.process(bin, ["frames", "--format", "csv", CLI.capture("band_mtu23.btsnoop")], cwd: tmp.path, env: Self.cleanEnv)
        #expect(frames.status == 0)
        #expect(frames.stdout.split(separator: "\n").count == 16) // header + 15 band messages

        let un = try CLI.process("/usr/bin/make", ["-s", "uninstall", "PREFIX=\(prefix)", "DESTDIR=\(tmp.path)"], cwd: CLI.root.path)
        #expect(un.status == 0)
        let left =
            FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String }.filter {
                var d: ObjCBool = false
                return FileManager.default.fileExists(atPath: root + "/" + $0, isDirectory: &d) && !d.boolValue
            } ?? []
        #expect(left == [])
    }

    /// scripts/bench.sh builds through `make release` (one build path), so the binary it times
    /// says which commit it is. SWIFT=true stands in for the compiler (a release build inside
    /// `swift test` is too slow): a copy of the debug binary is what `make release` stamps.
    @Test func benchBinaryIsStampedByMakeRelease() throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-bench-\(UUID().uuidString)")
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: tmp.path)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let describe = try CLI.process("/usr/bin/git", ["describe", "--always", "--dirty", "--abbrev=12"], cwd: CLI.root.path)
        let commit = describe.status == 0 ? describe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "unknown"
        var env = ProcessInfo.processInfo.environment
        env["SWIFT"] = "true"
        env["RELEASE_BIN"] = tmp.path
        env["BENCH_BUILD_ONLY"] = "1"
        let r = try CLI.process(CLI.root.appendingPathComponent("scripts/bench.sh").path, [], cwd: CLI.root.path, env: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "0.1.0 (commit \(commit))\n")
        #expect(commit != "unknown" || describe.status != 0)
    }

    /// make check-static refuses a binary that needs the Swift runtime (the debug build does),
    /// naming the libraries; the static build passes it (README, Install).
    @Test func checkStaticRefusesADynamicBinary() throws {
        let r = try CLI.process("/usr/bin/make", ["-s", "check-static", "BIN_TO_INSTALL=\(CLI.binary)"], cwd: CLI.root.path)
        #expect(r.status != 0)
        #expect(r.stderr.hasPrefix("check-static: \(CLI.binary): links Swift libraries dynamically: "))
        #expect(r.stderr.contains("libswiftCore.so") && r.stderr.contains("libFoundation.so"))
        #expect(r.stdout.isEmpty)
    }

    @Test func versionShowsTheStampedCommit() throws {
        let plain = try CLI.run(["--version"])
        #expect(plain.status == 0)
        #expect(plain.stdout == "0.1.0 (commit unknown)\n")
        // make release / make install stamp the commit into the linked binary.
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-ver-\(UUID().uuidString)")
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: tmp.path)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let stamp = try CLI.process("/usr/bin/env", ["python3", CLI.root.appendingPathComponent("scripts/stamp_binary.py").path, tmp.path, "7842b50abcde-dirty"])
        #expect(stamp.status == 0, "\(stamp.stderr)")
        let v = try CLI.process(tmp.path, ["--version"])
        #expect(v.stdout == "0.1.0 (commit 7842b50abcde-dirty)\n")
    }
}
