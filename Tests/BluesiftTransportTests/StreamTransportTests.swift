import Testing
import Foundation
import TestEvents
import BluesiftCapture
@testable import BluesiftTransport

@Suite struct StreamTransportTests {
    static let reset = H4Packet(.command, [0x03, 0x0C, 0x00])
    static let acl = H4Packet(.acl, [0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00])

    /// Sends two packets through an echo peer and checks they come back, tapped in order.
    func roundTrip(_ t: FDTransport) throws {
        var events = [HCITapEvent]()
        t.tap = { events.append($0) }
        try t.send(Self.reset)
        try t.send(Self.acl)
        #expect(try t.receive(timeout: .seconds(2)) == Self.reset)
        #expect(try t.receive(timeout: .seconds(2)) == Self.acl)
        #expect(events.map(\.direction) == [.sent, .sent, .received, .received])
        #expect(events.map(\.packet) == [Self.reset, Self.acl, Self.reset, Self.acl])
        #expect(events[0].timestamp <= events[3].timestamp)
        #expect(events[0].timestamp.seconds > 1_600_000_000) // wall clock, not monotonic
        events[2].withCaptureRecord(frame: 3) { r in
            #expect(r.frame == 3 && r.kind == .command && r.direction == .received)
            #expect(Array(r.bytes) == [0x03, 0x0C, 0x00])
        }
    }

    @Test func tcpEcho() throws {
        let server = try OneShotServer(tcp: OneShotServer.echo)
        let t = try TransportSpec(parsing: "tcp:127.0.0.1:\(server.port)").open()
        defer { t.close() }
        #expect(t.name == "tcp:127.0.0.1:\(server.port)")
        // The server must outlive the exchange: its deinit closes the listening socket.
        try withExtendedLifetime(server) { try roundTrip(t) }
    }

    @Test func unixEcho() throws {
        let path = NSTemporaryDirectory() + "bluesift-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let server = try OneShotServer(unixPath: path, handler: OneShotServer.echo)
        let t = try TransportSpec(parsing: "unix:\(path)").open()
        defer { t.close() }
        try withExtendedLifetime(server) { try roundTrip(t) }
    }

    /// With nothing sent, `receive` ends at its timeout with nil; once the peer has sent, it
    /// returns the packet (no clock read: the time taken is the load's, not the code's).
    @Test func receiveTimesOutWithNil() throws {
        let event = H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        // Silent until it is sent a byte, then answers with one event.
        let server = try OneShotServer(tcp: { c in if readExactly(c, 1).count == 1 { writeAll(c, [0x04] + event.bytes) } })
        try withExtendedLifetime(server) {
            let t = try TransportSpec(parsing: "tcp:127.0.0.1:\(server.port)").open()
            defer { t.close() }
            #expect(try t.receive(timeout: .milliseconds(150)) == nil)
            #expect(try t.receive(timeout: .zero) == nil)
            try t.send(Self.reset)
            #expect(try t.receive(timeout: Events.hangGuard) == event)
        }
    }

    @Test func peerCloseIsClosedError() throws {
        // The peer sends half a packet, then hangs up.
        let server = try OneShotServer(tcp: { c in writeAll(c, [0x04, 0x0E]) })
        let t = try TransportSpec(parsing: "tcp:127.0.0.1:\(server.port)").open()
        #expect(throws: TransportError(.closed, "tcp:127.0.0.1:\(server.port): peer closed the connection")) {
            _ = try t.receive(timeout: .seconds(2))
        }
        #expect(!t.isOpen)
        #expect(throws: TransportError.self) { try t.send(Self.reset) }
    }

    @Test func connectRefusedSaysSo() throws {
        // Bind then close to get a port nobody listens on.
        let port: UInt16
        do { let s = try OneShotServer(tcp: { _ in }); port = s.port }
        do {
            _ = try TransportSpec(parsing: "tcp:127.0.0.1:\(port)").open()
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.code == .openFailed)
            // The address once, then what to check (issue 14).
            #expect(error.message.hasPrefix("tcp:127.0.0.1:\(port): connection refused: nothing is listening there ("))
            #expect(error.message.components(separatedBy: "127.0.0.1").count == 2)
            #expect(error.errno == ECONNREFUSED)
        }
    }

    @Test func missingUnixSocket() {
        #expect(throws: TransportError.self) { _ = try TransportSpec(parsing: "unix:/nonexistent/bluesift.sock").open() }
    }
}

@Suite struct SerialTransportTests {
    /// A pty pair: the transport opens the slave by path, the test drives the master.
    /// (Glibc's Swift module hides the XSI pty calls, so they are looked up at run time.)
    func openPTY() throws -> (master: Int32, path: String) {
        typealias IntFn = @convention(c) (Int32) -> Int32
        typealias NameFn = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        func sym<T>(_ n: String, _: T.Type) throws -> T {
            guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), n) else { throw POSIXError(.ENOSYS) }
            return unsafeBitCast(p, to: T.self)
        }
        let m = try sym("posix_openpt", IntFn.self)(O_RDWR | O_NOCTTY)
        guard m >= 0, try sym("grantpt", IntFn.self)(m) == 0, try sym("unlockpt", IntFn.self)(m) == 0,
            let name = try sym("ptsname", NameFn.self)(m)
        else { throw POSIXError(.ENODEV) }
        return (m, String(cString: name))
    }

    @Test func serialOverPTY() throws {
        let (master, path) = try openPTY()
        defer { close(master) }
        let t = try TransportSpec(parsing: "serial:\(path)@1000000").open()
        defer { t.close() }
        // Controller → host, split across writes, with bytes a cooked tty would mangle (0x0D, 0x03, 0x11).
        writeAll(master, [0x04, 0x0E, 0x04, 0x01])
        #expect(try t.receive(timeout: .milliseconds(50)) == nil)
        writeAll(master, [0x03, 0x0C, 0x00, 0x04, 0x0F, 0x04, 0x11, 0x0D, 0x0A, 0x7F])
        #expect(try t.receive(timeout: .seconds(2)) == H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]))
        #expect(try t.receive(timeout: .seconds(2)) == H4Packet(.event, [0x0F, 0x04, 0x11, 0x0D, 0x0A, 0x7F]))
        // Host → controller.
        try t.send(.command, [0x01, 0x10, 0x00])
        try t.send(.acl, [0x01, 0x00, 0x02, 0x00, 0x0D, 0x0A])
        #expect(readExactly(master, 11) == [0x01, 0x01, 0x10, 0x00, 0x02, 0x01, 0x00, 0x02, 0x00, 0x0D, 0x0A])
    }

    @Test func notATTY() {
        do {
            _ = try TransportSpec(parsing: "serial:/dev/null").open()
            Issue.record("opened /dev/null as a serial line")
        } catch {
            #expect(error.message.contains("not a serial device"))
        }
    }

    @Test func missingDevice() {
        do {
            _ = try TransportSpec(parsing: "serial:/dev/ttyNOPE9").open()
            Issue.record("opened a missing device")
        } catch {
            #expect(error.code == .noSuchAdapter)
            #expect(error.message.contains("/dev/ttyNOPE9"))
        }
    }
}
