import Testing
import Foundation
import BluesiftCapture
@testable import BluesiftTransport

/// Scripted syscalls: chosen errnos per call, canned reads, recorded writes.
final class FakeSocketSystem: SocketSystem {
    var socketErrno: Int32?
    var bindErrno: Int32?
    var reads: [[UInt8]] = []
    var socketCalls: [(Int32, Int32, Int32)] = []
    var boundAddress: [UInt8]?
    var written: [UInt8] = []
    var closed: [Int32] = []

    func socket(domain: Int32, type: Int32, protocol: Int32) throws(SystemErrno) -> Int32 {
        socketCalls.append((domain, type, `protocol`))
        if let e = socketErrno { throw SystemErrno(e) }
        return 42
    }
    func bind(_ fd: Int32, address: [UInt8]) throws(SystemErrno) {
        boundAddress = address
        if let e = bindErrno { throw SystemErrno(e) }
    }
    func connect(_ fd: Int32, address: [UInt8], timeoutMilliseconds: Int32) throws(SystemErrno) {}
    func setNonBlocking(_ fd: Int32) throws(SystemErrno) {}
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int {
        guard !reads.isEmpty else { throw SystemErrno(EAGAIN) }
        let r = reads.removeFirst()
        buffer.copyBytes(from: r)
        return r.count
    }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int {
        written += bytes
        return bytes.count
    }
    func wait(_ fd: Int32, forWriting: Bool, timeoutMilliseconds: Int32) throws(SystemErrno) -> Bool {
        forWriting || !reads.isEmpty
    }
    func close(_ fd: Int32) { closed.append(fd) }
}

@Suite struct HCIUserChannelTests {
    func openError(_ fake: FakeSocketSystem, index: UInt16 = 0) -> TransportError? {
        do { _ = try TransportSpec.hci(index: index).open(system: fake); return nil } catch { return error }
    }

    @Test func noBluetoothSockets() {
        let fake = FakeSocketSystem()
        fake.socketErrno = EAFNOSUPPORT
        let e = openError(fake)
        #expect(e?.code == .noBluetoothSockets)
        #expect(e?.message.hasPrefix("this kernel has no Bluetooth sockets (AF_BLUETOOTH unavailable)") == true)
        #expect(fake.socketCalls.count == 1)
        #expect(fake.socketCalls.first?.0 == 31) // AF_BLUETOOTH
        #expect(fake.socketCalls.first.map { $0.1 & 0xF } == 3) // SOCK_RAW
        #expect(fake.socketCalls.first.map { $0.1 & Int32(SOCK_CLOEXEC.rawValue) } != 0)
        #expect(fake.socketCalls.first?.2 == 1) // BTPROTO_HCI
    }

    @Test(arguments: [EBUSY, EALREADY])
    func busyAdapter(errno: Int32) {
        let fake = FakeSocketSystem()
        fake.bindErrno = errno
        let e = openError(fake, index: 1)
        #expect(e?.code == .adapterBusy)
        #expect(e?.message == "hci1 is busy: bring it down first with `sudo hciconfig hci1 down` or `sudo btmgmt --index 1 power off`")
        #expect(fake.closed == [42, 42]) // neither the HCIGETDEVINFO socket nor the user channel is leaked
    }

    @Test func permissionAndNoDevice() {
        let fake = FakeSocketSystem()
        fake.bindErrno = EPERM
        #expect(openError(fake)?.code == .permissionDenied)
        #expect(openError(fake)?.message.contains("CAP_NET_ADMIN") == true)
        fake.bindErrno = ENODEV
        #expect(openError(fake, index: 3)?.code == .noSuchAdapter)
        #expect(openError(fake, index: 3)?.message.contains("hci3") == true)
    }

    @Test func bindsUserChannelAndFramesPackets() throws {
        let fake = FakeSocketSystem()
        let t = try TransportSpec.hci(index: 2).open(system: fake)
        // sockaddr_hci: family 31 (host order u16), dev 2, channel 1 (HCI_CHANNEL_USER).
        #expect(fake.boundAddress == [31, 0, 2, 0, 1, 0])
        try t.send(.command, [0x03, 0x0C, 0x00])
        #expect(fake.written == [0x01, 0x03, 0x0C, 0x00])
        fake.reads = [[0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], [0x02, 0x01, 0x20, 0x01, 0x00, 0xFF]]
        #expect(try t.receive(timeout: .seconds(1)) == H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]))
        #expect(try t.receive(timeout: .seconds(1)) == H4Packet(.acl, [0x01, 0x20, 0x01, 0x00, 0xFF]))
        #expect(try t.receive(timeout: .milliseconds(10)) == nil)
        t.close()
        #expect(fake.closed == [42, 42]) // the HCIGETDEVINFO socket, then the user channel
    }

    /// This machine's kernel has no AF_BLUETOOTH: the real call must say so plainly.
    @Test func realHCI0FailsClearly() throws {
        // Probe the kernel directly; where AF_BLUETOOTH is missing the message must be exact.
        let probe = Glibc.socket(31, Int32(SOCK_RAW.rawValue), 1)
        let kernelHasBluetooth = probe >= 0 || errno != EAFNOSUPPORT
        if probe >= 0 { Glibc.close(probe) }
        if !kernelHasBluetooth {
            #expect(
                throws: TransportError(
                    .noBluetoothSockets, errno: EAFNOSUPPORT,
                    "this kernel has no Bluetooth sockets (AF_BLUETOOTH unavailable); use a tcp:, unix: or serial: transport instead")
            ) {
                _ = try TransportSpec(parsing: "hci:0").open()
            }
            return
        }
        do {
            let t = try TransportSpec(parsing: "hci:0").open()
            t.close()
            // A machine with Bluetooth and rights may really open it; nothing to check then.
        } catch {
            #expect([.noBluetoothSockets, .adapterBusy, .permissionDenied, .noSuchAdapter].contains(error.code), "\(error)")
            if error.code == .noBluetoothSockets {
                #expect(error.message.hasPrefix("this kernel has no Bluetooth sockets (AF_BLUETOOTH unavailable)"))
            }
        }
    }
}
