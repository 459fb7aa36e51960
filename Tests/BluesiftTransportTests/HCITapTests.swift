import Testing
import Foundation
import BluesiftCapture
@testable import BluesiftTransport
#if canImport(Glibc)
    import Glibc
#endif

/// Results handed back from the tap's thread.
private final class TapOutcome: @unchecked Sendable {
    var stop: HCITap.Stop?
    var events: [HCITapEvent] = []
    var counts = HCITap.Counts()
    var error: String?
}

@Suite struct HCITapTests {
    /// A tap on its own thread between a UNIX socket for the host (its path returned) and a
    /// TCP controller; `done` is signalled when the tap has stopped, `outcome` then holds what it did.
    fileprivate static func startTap(controllerPort port: UInt16) -> (path: String, done: DispatchSemaphore, outcome: TapOutcome) {
        let path = NSTemporaryDirectory() + "bluesift-tap-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let ready = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let outcome = TapOutcome()
        Thread.detachNewThread {
            defer { done.signal() }
            do {
                let tap = HCITap(
                    host: try TapEndpoint(parsing: "listen:unix:\(path)"),
                    controller: try TapEndpoint(parsing: "tcp:127.0.0.1:\(port)"))
                try tap.prepare { _ in ready.signal() }
                guard try tap.accept(shouldStop: { false }) else { return }
                outcome.stop = tap.run(shouldStop: { false }) { outcome.events.append($0) }
                outcome.counts = tap.counts
                tap.close()
            } catch {
                outcome.error = "\(error)"
                ready.signal()
            }
        }
        #expect(ready.wait(timeout: .now() + .seconds(120)) == .success)
        return (path, done, outcome)
    }

    /// Half a command reaches the controller before the host has written the rest, and half
    /// an event reaches the host before the controller has written the rest: nothing waits
    /// for a whole packet. The framed copy still reports one whole packet each way.
    @Test func bytesAreForwardedAsReadNotAsPackets() throws {
        let controllerGotHalf = DispatchSemaphore(value: 0), hostGotHalf = DispatchSemaphore(value: 0)
        let hostGotAll = DispatchSemaphore(value: 0)
        let controllerSaw = TapOutcome()
        let controller = try OneShotServer(tcp: { c in
            var b = [UInt8](repeating: 0, count: 16)
            guard read(c, &b, 16) == 2 else { return } // 01 03: the first half only
            controllerGotHalf.signal()
            var rest = 0
            while rest < 2 { let n = read(c, &b, 16); if n <= 0 { return }; rest += n }
            controllerSaw.error = "whole"
            writeAll(c, [0x04, 0x0e, 0x04, 0x01])
            guard hostGotHalf.wait(timeout: .now() + .seconds(120)) == .success else { return }
            writeAll(c, [0x03, 0x0c, 0x00])
            _ = hostGotAll.wait(timeout: .now() + .seconds(120)) // close only once the host has it all
        })
        let (path, done, outcome) = Self.startTap(controllerPort: controller.port)
        let fd = try connectUnix(path)
        defer { close(fd) }
        writeAll(fd, [0x01, 0x03])
        #expect(controllerGotHalf.wait(timeout: .now() + .seconds(120)) == .success, "the first half was held back")
        writeAll(fd, [0x0c, 0x00])
        var got = [UInt8](repeating: 0, count: 16)
        #expect(read(fd, &got, 16) == 4)
        #expect(Array(got[0..<4]) == [0x04, 0x0e, 0x04, 0x01])
        hostGotHalf.signal()
        var rest = [UInt8]()
        while rest.count < 3 { let n = read(fd, &got, 16); if n <= 0 { break }; rest += got[0..<n] }
        #expect(rest == [0x03, 0x0c, 0x00])
        hostGotAll.signal()
        #expect(done.wait(timeout: .now() + .seconds(120)) == .success) // the controller closing ends the tap
        withExtendedLifetime(controller) {}
        #expect(outcome.error == nil)
        #expect(controllerSaw.error == "whole")
        guard case .controllerClosed = outcome.stop else { Issue.record("stop: \(String(describing: outcome.stop))"); return }
        #expect(outcome.events.map(\.direction) == [.sent, .received])
        #expect(outcome.events.map(\.packet) == [H4Packet(.command, [0x03, 0x0c, 0x00]), H4Packet(.event, [0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])])
        #expect(outcome.counts == HCITap.Counts(sentPackets: 1, receivedPackets: 1, sentBytes: 4, receivedBytes: 7, discardedBytes: 0, pendingBytes: 0))
        #expect(!FileManager.default.fileExists(atPath: path)) // the listening socket is removed
    }

    /// Bytes from the host that are no H4 packet (a stack out of step, a baud-rate mismatch)
    /// are forwarded unchanged, counted, and not recorded; the framing finds the next packet.
    @Test func nonH4BytesAreForwardedCountedAndSkipped() throws {
        let sent: [UInt8] = [0xAA, 0x00, 0xFF, 0x01, 0x03, 0x0c, 0x00]
        let hostGotAnswer = DispatchSemaphore(value: 0)
        let controllerGot = TapOutcome()
        let controller = try OneShotServer(tcp: { c in
            var b = [UInt8](repeating: 0, count: 64), got: [UInt8] = []
            while got.count < sent.count { let n = read(c, &b, 64); if n <= 0 { return }; got += b[0..<n] }
            controllerGot.error = got.map { String(format: "%02x", $0) }.joined()
            writeAll(c, [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])
            _ = hostGotAnswer.wait(timeout: .now() + .seconds(120)) // close only once the host has it
        })
        let (path, done, outcome) = Self.startTap(controllerPort: controller.port)
        let fd = try connectUnix(path)
        defer { close(fd) }
        writeAll(fd, sent)
        var got = [UInt8](repeating: 0, count: 16), answer: [UInt8] = []
        while answer.count < 7 { let n = read(fd, &got, 16); if n <= 0 { break }; answer += got[0..<n] }
        #expect(answer == [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])
        hostGotAnswer.signal()
        #expect(done.wait(timeout: .now() + .seconds(120)) == .success)
        withExtendedLifetime(controller) {}
        #expect(outcome.error == nil)
        #expect(controllerGot.error == "aa00ff01030c00") // every byte, unchanged
        #expect(outcome.events.map(\.packet) == [H4Packet(.command, [0x03, 0x0c, 0x00]), H4Packet(.event, [0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])])
        #expect(outcome.counts.discardedBytes == 3)
        #expect(outcome.counts.sentPackets == 1 && outcome.counts.sentBytes == 7)
    }
}

private func connectUnix(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var sa = sockaddr_un()
    sa.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &sa.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
    let rc = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    guard rc == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
    return fd
}
