import Foundation
import Testing

/// `bluesift fuzz` against a band with one planted fault (Tests/VirtualDevice/fault_band.py: it
/// drops the link, 0x13, on a valid sport_count frame whose month is above 100): the same run
/// over TCP, a UNIX socket and a serial line (a pty relayed to a controller), and Ctrl-C in the
/// middle of a run.
@Suite(.serialized, .enabled(if: Rig.available, "needs the Bumble venv: make venv"))
struct FuzzOverTransports {
    static let capture = Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path
    /// Short answers: the plain band answers at once, and a variant's reaction is its own.
    static let common = ["--characteristic", "36f5", "--seed", "1", "--timeout", "2", "--window", "200", "--rate", "0", "--reruns", "2"]

    static func json(_ path: String) -> [String: Any]? {
        FileManager.default.contents(atPath: path).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    /// The summary line `fuzz` prints first, from findings.json's own figures.
    static func summaryLine(_ s: [String: Any]) -> String {
        let n = (s["findings"] as? [Any])?.count ?? -1
        return "fuzz: band_mtu23.btsnoop, seed 1: \(s["variants"] ?? "?") variants (first round \(s["planned"] ?? "?")), \(s["connections"] ?? "?") connections"
            + ((s["interrupted"] as? Bool) == true ? ", interrupted" : "") + ", \(n) finding\(n == 1 ? "" : "s")"
    }

    /// A controller for each transport on one link with the band: TCP, a UNIX socket, and a
    /// TCP port behind a pty (pty_bridge.py). The same 4 variants over each find the fault at
    /// variant 3, minimise it to its one write, reproduce it 2 of 2 times, and write the same
    /// findings.json byte for byte: the run depends on the seed and the device, not the transport.
    @Test func theSameRunOverTCPAUnixSocketAndASerialLine() throws {
        let (tcp, bridged) = Rig.ports()
        let (_, bandPort) = Rig.ports()
        let dir = NSTemporaryDirectory() + "bluesift-fuzz-transports-\(getpid())-\(bandPort)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sock = dir + "/controller.sock"
        let ctl = try Rig.start(
            "controllers.py", ["127.0.0.1:\(tcp)", "unix:\(sock)", "127.0.0.1:\(bridged)", "127.0.0.1:\(bandPort)"], log: dir + "/controllers.log", lifetime: 300)
        defer { Rig.stop(ctl) }
        let band = try Rig.start("fault_band.py", ["tcp-client:127.0.0.1:\(bandPort)", "--bound", "sport_count.month=100"], log: dir + "/band.log", lifetime: 300)
        defer { Rig.stop(band) }
        let bridge = try Rig.start("pty_bridge.py", ["127.0.0.1:\(bridged)"], log: dir + "/bridge.log", lifetime: 300)
        defer { Rig.stop(bridge) }
        let pty = try #require(TapRig.read(dir + "/bridge.log").split(separator: "\n").first { $0.hasPrefix("READY /dev/") }?.dropFirst(6))

        var outputs: [String: (status: Int32, stdout: String, json: Data)] = [:]
        for (name, transport) in [("tcp", "tcp:127.0.0.1:\(tcp)"), ("unix", "unix:\(sock)"), ("serial", "serial:\(pty)@1000000")] {
            let out = dir + "/" + name
            let (status, stdout, stderr) = try FuzzAgainstFaultyBand.run(["fuzz", Self.capture, "--transport", transport, "--steps", "4"] + Self.common + ["-o", out], in: dir)
            let data = try #require(FileManager.default.contents(atPath: out + "/findings.json"), "\(name): \(stdout)\n\(stderr)")
            print("fuzz over \(transport): exit \(status)\n\(stdout)")
            outputs[name] = (status, stdout, data)
        }
        let tcpRun = try #require(outputs["tcp"])
        let summary = try #require(Self.json(dir + "/tcp/findings.json"))
        // 3 baseline connections (the recording, then two reads of every value), 4 variants,
        // and for the finding: a look for a reset after the disconnection, the write alone
        // (and its look), 2 reruns (and theirs).
        #expect(summary["variants"] as? Int == 4)
        #expect(summary["connections"] as? Int == 14)
        #expect(summary["interrupted"] as? Bool == false)
        #expect(tcpRun.stdout.hasPrefix("fuzz: band_mtu23.btsnoop, seed 1: 4 variants (first round 100), 14 connections, 1 finding\n"), "\(tcpRun.stdout)")
        #expect(tcpRun.stdout.hasSuffix("  reproduced 2 of 2 runs; reproducer finding-1.btsnoop\n"), "\(tcpRun.stdout)")
        #expect(tcpRun.status == 1)
        let findings = summary["findings"] as? [[String: Any]] ?? []
        #expect(findings.count == 1)
        let f = try #require(findings.first)
        let reaction = f["reaction"] as? [String: Any] ?? [:]
        #expect(reaction["kind"] as? String == "disconnect")
        #expect(reaction["code"] as? Int == 0x13)
        #expect(f["variant"] as? Int == 3)
        #expect((f["steps"] as? [[String: Any]])?.map { $0["value"] as? String } == ["a50603fe144a"])
        #expect(f["runs"] as? Int == 2 && f["reproduced"] as? Int == 2)
        #expect(FileManager.default.fileExists(atPath: dir + "/tcp/finding-1.btsnoop"))
        for name in ["unix", "serial"] {
            let run = try #require(outputs[name])
            #expect(run.status == tcpRun.status, "\(name)")
            #expect(run.stdout == tcpRun.stdout, "\(name)")
            #expect(run.json == tcpRun.json, "\(name): findings.json differs from the TCP run's")
        }
    }

    /// SIGINT once the run has said on stderr that it is 10 variants in (after the finding at
    /// variant 3): it stops between runs, writes findings.json (interrupted) with the finding,
    /// its JSON and reproducer, prints the summary and exits as a finished run with findings
    /// does: 1 (Fuzz's help).
    @Test func ctrlCWritesWhatWasFoundAndExitsWithTheRunsCode() throws {
        let (central, bandPort) = Rig.ports()
        let dir = NSTemporaryDirectory() + "bluesift-fuzz-sigint-\(getpid())-\(bandPort)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(bandPort)"], log: dir + "/controllers.log", lifetime: 300)
        defer { Rig.stop(ctl) }
        let band = try Rig.start("fault_band.py", ["tcp-client:127.0.0.1:\(bandPort)", "--bound", "sport_count.month=100"], log: dir + "/band.log", lifetime: 300)
        defer { Rig.stop(band) }
        let out = dir + "/out", errPath = dir + "/fuzz.err", outPath = dir + "/fuzz.out"
        let p = try TapRig.process(
            Rig.binary, ["fuzz", Self.capture, "--transport", "tcp:127.0.0.1:\(central)", "--steps", "400"] + Self.common + ["-o", out], out: outPath, err: errPath)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        // Not on a terminal: a progress line each 10 variants.
        let tenth = TapRig.waitFor("fuzz: variant 10/400,", in: errPath, writer: p)
        #expect(tenth, "\(TapRig.read(errPath))")
        kill(p.processIdentifier, SIGINT)
        let ended = TapRig.wait(p)
        #expect(ended, "fuzz did not stop after SIGINT: \(TapRig.read(errPath))")
        let stdout = TapRig.read(outPath), stderr = TapRig.read(errPath)
        let summary = try #require(Self.json(out + "/findings.json"), "\(stdout)\n\(stderr)")
        let findings = summary["findings"] as? [[String: Any]] ?? []
        print("interrupted run: exit \(p.terminationStatus)\n\(stdout)")
        #expect(summary["interrupted"] as? Bool == true)
        let variants = summary["variants"] as? Int ?? 0
        // Stopped at the first check after the signal: no later progress line came first.
        #expect(variants >= 10 && variants < 20, "\(variants) variants")
        #expect(!stderr.contains("fuzz: variant 20/400"))
        let last = stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("fuzz: variant \(variants)/400, 1 finding, \(summary["connections"] ?? "?") connections, "), "\(stderr)")
        #expect(last.hasSuffix(" connections/s (done)"), "\(stderr)")
        #expect(stdout.hasPrefix(Self.summaryLine(summary) + "\n"), "\(stdout)")
        #expect(p.terminationReason == .exit)
        #expect(p.terminationStatus == 1)
        #expect(findings.count == 1)
        let f = try #require(findings.first)
        #expect((f["reaction"] as? [String: Any])?["code"] as? Int == 0x13)
        #expect(f["variant"] as? Int == 3)
        #expect(f["runs"] as? Int == 2 && f["reproduced"] as? Int == 2)
        #expect(Self.json(out + "/finding-1.json")?["signature"] as? String == f["signature"] as? String)
        #expect(FileManager.default.fileExists(atPath: out + "/finding-1.btsnoop"))
        #expect(stdout.contains("\nfinding 1: disconnect: Remote User Terminated Connection (0x13)\n"), "\(stdout)")
    }
}
