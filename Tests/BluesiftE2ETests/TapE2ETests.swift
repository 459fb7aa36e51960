import Testing
import Foundation
import TestEvents
#if canImport(Glibc)
    import Glibc
#endif

/// `bluesift tap` between a Bumble host (Tests/VirtualDevice/tap_central.py) and Bumble's
/// virtual controllers, where band_peripheral.py answers:
///
///     tap_central.py ─tcp─ bluesift tap (listen:tcp:…) ─tcp─ controllers.py ─link─ band
///
/// Ports 9480…9493 (this issue's range is 9480…9499; the rest is TapRefusals'). Every process is bounded: the rig exits after 60 s
/// or with the test process, the host after its own timeout, the tap when a side closes
/// (killed after 15 s otherwise, which fails the test).
enum TapRig {
    static let python = Rig.root.appendingPathComponent(".venv/bin/python").path

    struct Run {
        var dir: String
        var tapStatus: Int32
        var tapStdout: String
        var tapStderr: String
        var hostStatus: Int32
        var hostOutput: String
        var hostATT: [ATTStep]
        var seconds: Double
    }

    /// One ATT PDU as the host logged it or as `dump --format jsonl` decodes it.
    struct ATTStep: Equatable, CustomStringConvertible {
        var dir: String, opcode: Int, handle: Int?, value: String?
        var description: String { "\(dir) 0x\(String(opcode, radix: 16))" + (handle.map { " h=\($0)" } ?? "") + (value.map { " v=\($0)" } ?? "") }
    }
    /// The PDUs whose handle and value both sides report (reads, writes, notifications).
    static let handleOpcodes: Set<Int> = [0x0A, 0x0C, 0x12, 0x52, 0x1B, 0x1D]
    static let valueOpcodes: Set<Int> = [0x0B, 0x0D, 0x12, 0x52, 0x1B, 0x1D]

    static func steps(jsonLines text: String) -> [ATTStep] {
        text.split(separator: "\n").compactMap { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            let att = (o["att"] as? [String: Any]) ?? (o["opcode"] != nil && o["pdu"] != nil ? o : nil)
            guard let att, let op = att["opcode"] as? Int, let dir = o["dir"] as? String else { return nil }
            return ATTStep(
                dir: dir, opcode: op, handle: handleOpcodes.contains(op) ? att["handle"] as? Int : nil,
                value: valueOpcodes.contains(op) ? att["value"] as? String : nil)
        }
    }

    static func read(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    static func process(_ exe: String, _ args: [String], out: String, err: String, cwd: URL? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        if let cwd { p.currentDirectoryURL = cwd }
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        p.standardError = out == err ? p.standardOutput : try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Waits for `p` to exit; kills it and returns false when it had not by the hang guard.
    @discardableResult
    static func wait(_ p: Process) -> Bool {
        if Events.exit(p) { return true }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        return false
    }

    static func dir(base: Int) -> String { NSTemporaryDirectory() + "bluesift-tap-\(getpid())-\(base)" }

    /// Waits for `text` in the file at `path`, which `writer` writes: false once it has
    /// ended without writing it (or at the hang guard).
    static func waitFor(_ text: String, in path: String, writer: Process) -> Bool {
        Events.text(text, in: path, process: writer)
    }

    /// Starts the rig on `base`, `base+1`, the tap listening on `base+2` for the host side,
    /// then either runs tap_central.py through it (`host: true`) or hands the tap's port to
    /// `during`; the tap is expected to stop by itself afterwards.
    static func run(
        base: Int, tapArgs: (String) -> [String], host: Bool = true, unixHost: Bool = false, serialController: Bool = false, relay: Relay? = nil,
        during: ((_ tap: Process, _ port: Int, _ controllers: Process) throws -> Void)? = nil
    ) throws -> Run {
        let dir = dir(base: base)
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(base)", "127.0.0.1:\(base + 1)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        let band = try Rig.start("band_peripheral.py", ["tcp-client:127.0.0.1:\(base + 1)"], log: dir + "/band.log")
        defer { Rig.stop(band) }
        var controllerSpec = "tcp:127.0.0.1:\(relay?.port ?? base)"
        var bridge: Process?
        defer { if let bridge { Rig.stop(bridge) } }
        if serialController {
            // The controller as a serial line: a pty relayed to its TCP port.
            bridge = try Rig.start("pty_bridge.py", ["127.0.0.1:\(base)"], log: dir + "/bridge.log")
            let ready = read(dir + "/bridge.log").split(separator: "\n").first { $0.hasPrefix("READY ") }
            controllerSpec = "serial:\(ready?.dropFirst(6) ?? "?")@1000000"
        }
        let sock = NSTemporaryDirectory() + "bluesift-tap-\(getpid())-\(base).sock"
        let (hostSpec, hostTransport) =
            unixHost
            ? ("listen:unix:\(sock)", "unix:\(sock)")
            : ("listen:tcp:127.0.0.1:\(base + 2)", "tcp-client:127.0.0.1:\(base + 2)")
        let t0 = Date()
        let tap = try process(
            Rig.binary, ["tap", "--host", hostSpec, "--controller", controllerSpec] + tapArgs(dir),
            out: dir + "/tap.out", err: dir + "/tap.err")
        defer { if tap.isRunning { kill(tap.processIdentifier, SIGKILL); tap.waitUntilExit() } }
        guard waitFor("listening on \(hostSpec.dropFirst(7))", in: dir + "/tap.err", writer: tap) else {
            throw Rig.RigError(message: "tap not listening: \(read(dir + "/tap.err"))")
        }
        var hostStatus: Int32 = -1
        if host {
            let h = try process(
                python,
                [
                    "tap_central.py", hostTransport, "--log", dir + "/host_att.jsonl",
                    "--snoop", dir + "/host.btsnoop", "--timeout", "15"
                ],
                out: dir + "/host.log", err: dir + "/host.log", cwd: Rig.root.appendingPathComponent("Tests/VirtualDevice"))
            if wait(h) { hostStatus = h.terminationStatus }
        }
        try during?(tap, base + 2, ctl)
        let stopped = wait(tap)
        return Run(
            dir: dir, tapStatus: stopped ? tap.terminationStatus : -1, tapStdout: read(dir + "/tap.out"),
            tapStderr: read(dir + "/tap.err"), hostStatus: hostStatus, hostOutput: read(dir + "/host.log"),
            hostATT: steps(jsonLines: read(dir + "/host_att.jsonl")), seconds: Date().timeIntervalSince(t0))
    }

    /// `bluesift ARGS`: status, stdout, stderr.
    static func bluesift(_ args: [String]) throws -> (Int32, String, String) {
        let dir = NSTemporaryDirectory() + "bluesift-tap-cli-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir + ".out"); try? FileManager.default.removeItem(atPath: dir + ".err") }
        let p = try process(Rig.binary, args, out: dir + ".out", err: dir + ".err")
        wait(p)
        return (p.terminationStatus, read(dir + ".out"), read(dir + ".err"))
    }

    /// btsnoop records as (flags, packet bytes); nil unless the file ends exactly on a record.
    static func btsnoop(_ path: String) -> [(UInt32, [UInt8])]? {
        guard let d = FileManager.default.contents(atPath: path), d.count >= 16,
            Array(d.prefix(8)) == Array("btsnoop\0".utf8)
        else { return nil }
        let b = [UInt8](d)
        func u32(_ o: Int) -> UInt32 { b[o..<(o + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        var o = 16, out: [(UInt32, [UInt8])] = []
        while o < b.count {
            guard o + 24 <= b.count else { return nil }
            let n = Int(u32(o + 4))
            guard o + 24 + n <= b.count else { return nil }
            out.append((u32(o + 8), Array(b[(o + 24)..<(o + 24 + n)])))
            o += 24 + n
        }
        return out
    }

    static func files(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }
}

@Suite(.serialized, .enabled(if: Rig.available, "needs the Bumble venv: make venv"))
struct TapBetweenBumbleHostAndController {
    /// The host's GATT session succeeds through the tap; the tap's btsnoop holds exactly the
    /// packets the host's own Bumble snooper saw, and decodes to the ATT sequence it logged.
    @Test func recordingDecodesToTheHostsATTSequence() throws {
        let r = try TapRig.run(base: 9480) { dir in ["-w", dir + "/tap.btsnoop", "--format", "jsonl"] }
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        #expect(r.hostStatus == 0 && r.hostOutput.contains("SESSION OK"), "\(r.hostOutput)")
        #expect(r.tapStatus == 0, "\(r.tapStderr)")
        let last = r.tapStderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.contains("host side closed (end of stream)"), "\(r.tapStderr)")

        // The session the host logged: the reads, the CCCD write, the vendor exchange.
        let host = r.hostATT
        #expect(host.count > 40)
        #expect(host.first == .init(dir: "sent", opcode: 0x02, handle: nil, value: nil))
        #expect(host.contains(.init(dir: "sent", opcode: 0x0A, handle: 0x18, value: nil))) // read 2A26
        #expect(host.contains(.init(dir: "received", opcode: 0x0B, handle: nil, value: "312e342e32"))) // "1.4.2"
        #expect(host.contains(.init(dir: "received", opcode: 0x0B, handle: nil, value: "57"))) // battery 87
        #expect(host.contains(.init(dir: "sent", opcode: 0x12, handle: 0x20, value: "0100"))) // 36F6 CCCD
        #expect(host.contains(.init(dir: "received", opcode: 0x1B, handle: 0x1F, value: "a50890e1100000cc"))) // live steps
        #expect(host.contains(.init(dir: "sent", opcode: 0x12, handle: 0x1D, value: "a50401a0"))) // device_info request
        #expect(host.contains(.init(dir: "received", opcode: 0x1B, handle: 0x1F, value: "a5078101045771"))) // fw 1.4, battery 87
        #expect(host.contains(.init(dir: "sent", opcode: 0x52, handle: 0x1D, value: "a50406a7"))) // ping command
        #expect(host.last?.opcode == 0x1B)

        // The recording, decoded by bluesift, is that sequence.
        let (status, jsonl, err) = try TapRig.bluesift(["dump", "--format", "jsonl", r.dir + "/tap.btsnoop"])
        #expect(status == 0 && err.isEmpty, "\(err)")
        #expect(TapRig.steps(jsonLines: jsonl) == host)
        // So are the lines printed live.
        #expect(TapRig.steps(jsonLines: r.tapStdout) == host)

        // Bytes unchanged: every packet, with its direction, as the host's own snooper wrote it.
        let mine = try #require(TapRig.btsnoop(r.dir + "/tap.btsnoop"))
        let theirs = try #require(TapRig.btsnoop(r.dir + "/host.btsnoop"))
        #expect(mine.count == theirs.count && mine.count > 100)
        #expect(zip(mine, theirs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
        #expect(last.contains("\(mine.count) packets"))
        #expect(last.contains("recorded \(mine.count) packets in \(r.dir)/tap.btsnoop"))
        #expect(!TapRig.files(r.dir).contains { $0.contains(".tmp-") })
    }

    /// --rotate-size 1k: whole numbered files, none over the size, none half-written, that
    /// together (`dump --merge`) are the same session. Segments of an earlier recording under
    /// the same name are removed (they would join the session in `FILE.*`); other files stay.
    @Test func rotationWritesWholeNumberedFiles() throws {
        let r = try TapRig.run(base: 9483) { dir in
            // An earlier run's segment 40 (a btsnoop header), and a file of the user's that only shares the name.
            FileManager.default.createFile(atPath: dir + "/tap.btsnoop.40", contents: Data("btsnoop\0".utf8) + Data([0, 0, 0, 1, 0, 0, 0x03, 0xEA]))
            FileManager.default.createFile(atPath: dir + "/tap.btsnoop.41", contents: Data("notes\n".utf8))
            return ["-w", dir + "/tap.btsnoop", "--rotate-size", "1k", "--quiet"]
        }
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        #expect(r.hostStatus == 0, "\(r.hostOutput)")
        #expect(r.tapStatus == 0, "\(r.tapStderr)")
        #expect(r.tapStdout.isEmpty)
        #expect(r.tapStderr.contains("bluesift: tap: removed 1 segment of an earlier recording: \(r.dir)/tap.btsnoop.40\n"), "\(r.tapStderr)")
        #expect(TapRig.files(r.dir).contains("tap.btsnoop.41"))
        let names = TapRig.files(r.dir).filter { $0.hasPrefix("tap.btsnoop") && $0 != "tap.btsnoop.41" }
        #expect(!names.contains("tap.btsnoop"))
        #expect(!TapRig.files(r.dir).contains { $0.contains(".tmp-") })
        #expect(names.count >= 4, "\(names)")
        let paths = (1...names.count).map { "\(r.dir)/tap.btsnoop.\($0)" }
        #expect(Set(names) == Set(paths.map { ($0 as NSString).lastPathComponent }))
        var total = 0
        for p in paths {
            let size = (try? FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0
            #expect(size <= 1024 && size > 16, "\(p): \(size) bytes")
            let records = try #require(TapRig.btsnoop(p), "\(p) is not whole")
            #expect(!records.isEmpty)
            total += records.count
            let (status, _, err) = try TapRig.bluesift(["info", p])
            #expect(status == 0 && err.isEmpty, "\(p): \(err)")
        }
        let theirs = try #require(TapRig.btsnoop(r.dir + "/host.btsnoop"))
        #expect(total == theirs.count)
        let (status, jsonl, err) = try TapRig.bluesift(["dump", "--merge", "--format", "jsonl"] + paths)
        #expect(status == 0, "\(err)")
        #expect(TapRig.steps(jsonLines: jsonl) == r.hostATT)
        #expect(r.tapStderr.contains("recorded \(total) packets in \(paths.count) files, \(paths[0]) … \(paths.last!)"))
    }

    /// A raw host writes an HCI Reset in two pieces: the controller, which only answers a
    /// whole command, gets it (forwarded as read, not held back for framing) and answers
    /// through the tap; SIGINT then ends the tap with both packets recorded.
    @Test func splitCommandIsForwardedAndSIGINTEndsTheTap() throws {
        var answer: [UInt8] = []
        // Between the tap and the controller: shows the first half arriving on its own.
        let relay = try Relay(to: 9486)
        let r = try TapRig.run(base: 9486, tapArgs: { dir in ["-w", dir + "/tap.btsnoop"] }, host: false, relay: relay) { tap, port, _ in
            let fd = try connectTCP(port: port)
            defer { close(fd) }
            _ = [UInt8]([0x01, 0x03]).withUnsafeBytes { write(fd, $0.baseAddress, 2) }
            #expect(relay.arrived.wait(timeout: .now() + .seconds(120)) == .success, "nothing reached the controller")
            #expect(relay.fromTap == [[0x01, 0x03]], "the half command was held back")
            _ = [UInt8]([0x0c, 0x00]).withUnsafeBytes { write(fd, $0.baseAddress, 2) }
            answer = readBytes(fd, count: 7)
            // The tap prints the event once it has recorded it: SIGINT only after that.
            _ = TapRig.waitFor("> Command Complete: Reset", in: TapRig.dir(base: 9486) + "/tap.out", writer: tap)
            kill(tap.processIdentifier, SIGINT)
            TapRig.wait(tap) // the host stays connected until the tap is gone
        }
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        #expect(answer == [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])
        #expect(r.tapStatus == 0, "\(r.tapStderr)")
        #expect(r.tapStdout.contains("< Reset") && r.tapStdout.contains("> Command Complete: Reset status=Success"), "\(r.tapStdout)")
        let last = r.tapStderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("bluesift: tap: interrupted: 2 packets (1 host→controller, 1 controller→host), 4 + 7 bytes forwarded"), "\(last)")
        let records = try #require(TapRig.btsnoop(r.dir + "/tap.btsnoop"))
        #expect(records.map(\.0) == [2, 3]) // command sent, event received (btsnoop flags)
        #expect(records.map(\.1) == [[0x01, 0x03, 0x0c, 0x00], [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00]])
    }

    /// The other side forms: the host connects to a UNIX socket the tap listens on, the
    /// controller is a serial line (a pty relayed to the virtual controller). Same session,
    /// same recording as the host's own snoop, and the socket is gone afterwards.
    @Test func unixHostAndSerialController() throws {
        let r = try TapRig.run(base: 9492, tapArgs: { dir in ["-w", dir + "/tap.btsnoop", "--quiet"] }, unixHost: true, serialController: true)
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        #expect(r.hostStatus == 0 && r.hostOutput.contains("SESSION OK"), "\(r.hostOutput)")
        #expect(r.tapStatus == 0, "\(r.tapStderr)")
        #expect(r.tapStderr.contains("⇄ serial:/dev/pts/"), "\(r.tapStderr)")
        #expect(r.tapStderr.contains("host side closed (end of stream)"), "\(r.tapStderr)")
        let mine = try #require(TapRig.btsnoop(r.dir + "/tap.btsnoop"))
        let theirs = try #require(TapRig.btsnoop(r.dir + "/host.btsnoop"))
        #expect(mine.count == theirs.count && mine.count > 100)
        #expect(zip(mine, theirs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
        let (_, jsonl, _) = try TapRig.bluesift(["dump", "--format", "jsonl", r.dir + "/tap.btsnoop"])
        #expect(TapRig.steps(jsonLines: jsonl) == r.hostATT && r.hostATT.count > 40)
        #expect(!FileManager.default.fileExists(atPath: NSTemporaryDirectory() + "bluesift-tap-\(getpid())-9492.sock"))
    }

    /// The controller going away ends the tap by itself, naming that side.
    @Test func controllerClosingEndsTheTap() throws {
        let r = try TapRig.run(base: 9489, tapArgs: { _ in [] }, host: false) { tap, port, controllers in
            let fd = try connectTCP(port: port)
            defer { close(fd) }
            // Kill the controller once the tap has accepted the host and forwards.
            _ = TapRig.waitFor("bluesift: tap: forwarding", in: TapRig.dir(base: 9489) + "/tap.err", writer: tap)
            kill(controllers.processIdentifier, SIGKILL)
            TapRig.wait(tap)
        }
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        #expect(r.tapStatus == 0, "\(r.tapStderr)")
        #expect(r.tapStderr.contains("bluesift: tap: controller side closed"), "\(r.tapStderr)")
    }
}

/// Side specs and outputs refused before anything is forwarded, and a stop while waiting (no
/// rig needed). Ports 9494…9499, apart from the Bumble suite's 9480…9493: suites run in parallel.
@Suite struct TapRefusals {
    @Test func badSideIsUsageExit64() throws {
        let (status, _, err) = try TapRig.bluesift(["tap", "--host", "listen:serial:/dev/ttyS0", "--controller", "tcp:127.0.0.1:9499"])
        #expect(status == 64)
        #expect(err == "bluesift: --host: bad tap side 'listen:serial:/dev/ttyS0': a serial line is opened, not listened on (serial:PATH[@BAUD])\n")
    }

    @Test func unreachableControllerIsExit3() throws {
        let (status, _, err) = try TapRig.bluesift(["tap", "--host", "listen:tcp:127.0.0.1:9494", "--controller", "tcp:127.0.0.1:9495"])
        #expect(status == 3)
        #expect(err.contains("listening on tcp:127.0.0.1:9494"))
        #expect(err.contains("bluesift: tap: tcp:127.0.0.1:9495: connection refused"))
    }

    /// The recording may not be the socket the tap listens on.
    @Test func outputThatIsASideIsRefused() throws {
        let sock = NSTemporaryDirectory() + "bluesift-tap-\(getpid()).sock"
        defer { unlink(sock) }
        let (status, _, err) = try TapRig.bluesift(["tap", "--host", "listen:unix:\(sock)", "--controller", "listen:tcp:127.0.0.1:9496", "-w", sock])
        #expect(status == 2)
        #expect(err.contains("bluesift: \(sock): is the input; refusing to overwrite it"), "\(err)")
        #expect(!FileManager.default.fileExists(atPath: sock)) // the listening socket is removed
    }

    /// An output that cannot be created is said before anything is forwarded.
    @Test func unwritableRecordingIsExit2BeforeForwarding() throws {
        let (status, _, err) = try TapRig.bluesift([
            "tap", "--host", "listen:tcp:127.0.0.1:9499", "--controller", "listen:unix:\(NSTemporaryDirectory())bluesift-tap-\(getpid())-w.sock",
            "-w", "/nonexistent-dir/tap.btsnoop"
        ])
        #expect(status == 2)
        #expect(err.contains("bluesift: /nonexistent-dir/tap.btsnoop: cannot create"), "\(err)")
        #expect(!err.contains("forwarding"))
    }

    /// SIGTERM while waiting for the host: exit 0, a complete (empty) btsnoop, no temporary file.
    @Test func sigtermWhileWaitingLeavesACompleteEmptyRecording() throws {
        let dir = NSTemporaryDirectory() + "bluesift-tap-term-\(getpid())"
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try TapRig.process(
            Rig.binary,
            [
                "tap", "--host", "listen:tcp:127.0.0.1:9497", "--controller", "listen:tcp:127.0.0.1:9498",
                "-w", dir + "/t.btsnoop"
            ], out: dir + "/out", err: dir + "/err")
        #expect(TapRig.waitFor("listening on tcp:127.0.0.1:9498", in: dir + "/err", writer: p))
        kill(p.processIdentifier, SIGTERM)
        #expect(TapRig.wait(p))
        #expect(p.terminationStatus == 0)
        #expect(TapRig.read(dir + "/err").hasSuffix("bluesift: tap: interrupted: 0 packets (0 host→controller, 0 controller→host), 0 + 0 bytes forwarded, recorded 0 packets in \(dir)/t.btsnoop\n"))
        #expect(TapRig.btsnoop(dir + "/t.btsnoop")?.isEmpty == true)
        #expect(TapRig.files(dir).sorted() == ["err", "out", "t.btsnoop"])
    }

    @Test func rotateSizeNeedsASizeAndAFile() throws {
        let (s1, _, e1) = try TapRig.bluesift(["tap", "--host", "listen:tcp:127.0.0.1:9499", "--controller", "tcp:127.0.0.1:9499", "-w", "/tmp/x", "--rotate-size", "12q"])
        #expect(s1 == 64 && e1.contains("--rotate-size: expected a size in bytes of at least 80"))
        let (s2, _, e2) = try TapRig.bluesift(["tap", "--host", "listen:tcp:127.0.0.1:9499", "--controller", "tcp:127.0.0.1:9499", "--rotate-size", "1M"])
        #expect(s2 == 64 && e2.contains("-w FILE with it"))
    }
}

/// A TCP relay from the tap to the controller on `target` that records what the tap sends
/// it, chunk by chunk as read, and signals `arrived` for each.
final class Relay: @unchecked Sendable {
    let port: Int
    let arrived = DispatchSemaphore(value: 0)
    private let listenFD: Int32
    private let lock = NSLock()
    private var chunks: [[UInt8]] = []
    var fromTap: [[UInt8]] { lock.withLock { chunks } }

    init(to target: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { close(fd); throw Rig.RigError(message: "relay: errno \(errno)") }
        listenFD = fd
        port = Int(UInt16(bigEndian: a.sin_port))
        Thread.detachNewThread { [self] in
            let tap = accept(fd, nil, nil)
            guard tap >= 0, let controller = try? connectTCP(port: target) else { return }
            let back = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                Self.pump(from: controller, to: tap, seen: nil); back.signal()
            }
            Self.pump(from: tap, to: controller) { chunk in
                self.lock.withLock { self.chunks.append(chunk) }
                self.arrived.signal()
            }
            back.wait() // both pumps done: the descriptors can go
            close(tap); close(controller)
        }
    }

    deinit { close(listenFD) }

    /// Copies until either side closes, then shuts both down (ending the other pump).
    static func pump(from: Int32, to: Int32, seen: (([UInt8]) -> Void)?) {
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(from, &buf, buf.count)
            if n <= 0 { break }
            seen?(Array(buf[0..<n]))
            if buf.withUnsafeBytes({ write(to, $0.baseAddress, n) }) != n { break }
        }
        shutdown(from, Int32(SHUT_RDWR)); shutdown(to, Int32(SHUT_RDWR))
    }
}

func connectTCP(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = in_port_t(UInt16(port).bigEndian)
    a.sin_addr.s_addr = inet_addr("127.0.0.1")
    let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard rc == 0 else { close(fd); throw Rig.RigError(message: "connect \(port): errno \(errno)") }
    return fd
}

/// `count` bytes, or fewer when the peer closes first (or at the hang guard).
func readBytes(_ fd: Int32, count: Int) -> [UInt8] {
    var out = Data()
    Events.read(fd, into: &out) { $0.count >= count }
    return [UInt8](out)
}
