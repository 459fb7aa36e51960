import Foundation
import TestEvents
import BluesiftTransport
#if canImport(Glibc)
    import Glibc
#endif

/// Runs Fixtures/peripheral.py (Bumble virtual link + tiny GATT peripheral) for one test.
final class BumblePeer {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".venv/bin/python").path
    static let script = packageRoot.appendingPathComponent("Tests/BluesiftHostTests/Fixtures/peripheral.py").path

    /// True when the venv exists and has Bumble.
    static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", "import bumble.controller"]
        p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()
    static let skipMessage = "Bumble venv missing: cd to the package and run `python3 -m venv .venv && .venv/bin/pip install bumble==0.0.236`"

    let process = Process()
    let port: UInt16
    let logPath: String
    /// Its stdout, where it prints `READY port` once it listens and advertises.
    let stdout = Pipe()

    init(legacyReports: Bool) throws {
        port = try Self.freePort()
        logPath = NSTemporaryDirectory() + "bluesift-bumble-\(port).log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script, String(port)] + (legacyReports ? ["--legacy-reports"] : [])
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
    }

    /// Connects once the script has said READY (Python start-up takes a second or two).
    func openTransport() throws -> FDTransport {
        var said = Data()
        guard Events.read(stdout.fileHandleForReading.fileDescriptor, into: &said, until: { $0.contains(0x0A) }) else {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw TransportError(.openFailed, "bumble peer did not start: \(log.suffix(2000))")
        }
        return try TransportSpec.tcp(host: "127.0.0.1", port: port).open()
    }

    /// Ends the script: SIGTERM, then SIGKILL if it is still there at the hang guard.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        if !Events.exit(process) { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    deinit {
        stop()
        unlink(logPath)
    }

    /// A port the kernel just handed out (and we released).
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw POSIXError(.EADDRINUSE) }
        return UInt16(bigEndian: sa.sin_port)
    }
}
