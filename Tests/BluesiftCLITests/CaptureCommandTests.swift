import Testing
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// `bluesift capture` on the build machines, whose kernel has no Bluetooth: the options are
/// checked first, then one line says why nothing can be captured. The capture itself is
/// tested inside a real kernel (Tests/Kernel, capture_btmon: equal to btmon -w).
@Suite struct CaptureCommandTests {
    static var kernelHasBluetooth: Bool {
        let s = socket(31, Int32(SOCK_RAW.rawValue), 1)
        if s >= 0 { close(s); return true }
        return errno != EAFNOSUPPORT
    }

    @Test func badOptionsAreUsageErrors() throws {
        let i = try CLI.run(["capture", "-i", "wlan0"])
        #expect(i.status == 64)
        #expect(i.stderr.contains("-i"), "\(i.stderr)")
        let r = try CLI.run(["capture", "--rotate-size", "64k"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("-w FILE with it"), "\(r.stderr)")
    }

    @Test(.enabled(if: !CaptureCommandTests.kernelHasBluetooth, "this kernel has Bluetooth: the no-Bluetooth line cannot be seen here"))
    func withoutBluetoothSocketsOneLineAndExit2() throws {
        // Its own name: every test target runs in one process, and BluesiftCaptureTests' `Temp.root`
        // is "bluesift-capture-<pid>" (sharing it, this test found their files and removed them).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-capture-command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("c.btsnoop").path
        let r = try CLI.run(["capture", "-w", out])
        #expect(r.status == 2)
        #expect(r.stderr == "bluesift: capture: this kernel has no Bluetooth sockets (AF_BLUETOOTH unavailable): nothing to capture\n")
        #expect(r.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty) // no temporary file left
    }
}
