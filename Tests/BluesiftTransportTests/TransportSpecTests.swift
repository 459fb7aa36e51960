import Testing
@testable import BluesiftTransport

@Suite struct TransportSpecTests {
    @Test func parsesEveryScheme() throws {
        #expect(try TransportSpec(parsing: "tcp:127.0.0.1:9001") == .tcp(host: "127.0.0.1", port: 9001))
        #expect(try TransportSpec(parsing: "tcp:[::1]:9002") == .tcp(host: "::1", port: 9002))
        #expect(try TransportSpec(parsing: "tcp:localhost:1") == .tcp(host: "localhost", port: 1))
        #expect(try TransportSpec(parsing: "unix:/tmp/ctl.sock") == .unix(path: "/tmp/ctl.sock"))
        #expect(try TransportSpec(parsing: "serial:/dev/ttyUSB0") == .serial(path: "/dev/ttyUSB0", baud: 115_200, rtscts: false))
        #expect(try TransportSpec(parsing: "serial:/dev/ttyACM0@1000000,rtscts") == .serial(path: "/dev/ttyACM0", baud: 1_000_000, rtscts: true))
        #expect(try TransportSpec(parsing: "hci:0") == .hci(index: 0))
        #expect(try TransportSpec(parsing: "hci:hci1") == .hci(index: 1))
        #expect(try TransportSpec(parsing: "tcp:[::1]:9002").description == "tcp:[::1]:9002")
        #expect(try TransportSpec(parsing: "serial:/dev/x@921600").description == "serial:/dev/x@921600")
    }

    @Test(arguments: [
        ("tcp127.0.0.1", "expected tcp:HOST:PORT"),
        ("tcp:127.0.0.1", "missing port"),
        ("tcp::9001", "missing host"),
        ("tcp:host:99999", "port '99999' is not a number"),
        ("tcp:host:0", "port '0'"),
        ("unix:", "missing socket path"),
        ("serial:/dev/ttyS0@12345", "unsupported baud rate '12345'"),
        ("serial:@115200", "missing device path"),
        ("hci:x", "adapter index 'x' is not a number"),
        ("usb:0", "unknown scheme 'usb'")
    ])
    func rejectsBadSpecs(spec: String, fragment: String) {
        do {
            _ = try TransportSpec(parsing: spec)
            Issue.record("'\(spec)' parsed")
        } catch {
            #expect(error.code == .badSpec)
            #expect(error.message.contains(fragment), "\(error.message)")
            #expect(error.message.contains("'\(spec)'"))
        }
    }
}

@Suite struct TapEndpointTests {
    @Test func listenPrefixAndOpenedSides() throws {
        let l = try TapEndpoint(parsing: "listen:tcp:127.0.0.1:9480")
        #expect(l.listens && l.spec == .tcp(host: "127.0.0.1", port: 9480) && l.description == "listen:tcp:127.0.0.1:9480")
        let u = try TapEndpoint(parsing: "listen:unix:/tmp/h.sock")
        #expect(u.listens && u.path == "/tmp/h.sock")
        let s = try TapEndpoint(parsing: "serial:/dev/ttyUSB0@1000000")
        #expect(!s.listens && s.spec == .serial(path: "/dev/ttyUSB0", baud: 1_000_000, rtscts: false) && s.path == "/dev/ttyUSB0")
        #expect(try TapEndpoint(parsing: "tcp:[::1]:9481").path == nil)
    }

    @Test(arguments: [
        ("hci:0", "not an H4 byte stream"),
        ("listen:serial:/dev/ttyS0", "not listened on"),
        ("listen:tcp:127.0.0.1", "missing port"),
        ("listen:", "expected tcp:HOST:PORT")
    ])
    func refusesWhatCannotBeTapped(spec: String, fragment: String) {
        do {
            _ = try TapEndpoint(parsing: spec)
            Issue.record("'\(spec)' parsed")
        } catch {
            #expect(error.code == .badSpec)
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }
}
