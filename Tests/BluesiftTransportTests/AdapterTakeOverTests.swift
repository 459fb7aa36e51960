import Testing
import Foundation
import BluesiftCapture
import BluesiftWire
@testable import BluesiftTransport

/// A kernel with adapters, as the HCI ioctls and the monitor channel show it (no Bluetooth
/// needed: the seam answers).
final class FakeKernel: SocketSystem {
    var adapters: [(index: UInt16, up: Bool)] = [(0, true), (1, false)]
    var devDownErrno: Int32?
    var calls: [String] = []
    var datagrams: [[UInt8]] = []
    var bindErrno: Int32?
    var nextFD: Int32 = 10

    func socket(domain: Int32, type: Int32, protocol: Int32) throws(SystemErrno) -> Int32 { nextFD += 1; return nextFD }
    func bind(_ fd: Int32, address: [UInt8]) throws(SystemErrno) {
        calls.append("bind \(address)")
        if let e = bindErrno { throw SystemErrno(e) }
    }
    func connect(_ fd: Int32, address: [UInt8], timeoutMilliseconds: Int32) throws(SystemErrno) {}
    func setNonBlocking(_ fd: Int32) throws(SystemErrno) {}
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int {
        guard !datagrams.isEmpty else { throw SystemErrno(EAGAIN) }
        let d = datagrams.removeFirst()
        buffer.copyBytes(from: d)
        return d.count
    }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int { bytes.count }
    func wait(_ fd: Int32, forWriting: Bool, timeoutMilliseconds: Int32) throws(SystemErrno) -> Bool { !datagrams.isEmpty }
    func close(_ fd: Int32) { calls.append("close \(fd)") }

    func ioctl(_ fd: Int32, request: UInt, value: Int32) throws(SystemErrno) {
        guard let i = adapters.firstIndex(where: { $0.index == UInt16(value) }) else { throw SystemErrno(ENODEV) }
        if request == LinuxBluetooth.hciDevDown {
            calls.append("HCIDEVDOWN \(value)")
            if let e = devDownErrno { throw SystemErrno(e) }
            adapters[i].up = false
        } else if request == LinuxBluetooth.hciDevUp {
            calls.append("HCIDEVUP \(value)")
            adapters[i].up = true
        }
    }

    func ioctl(_ fd: Int32, request: UInt, buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) {
        if request == LinuxBluetooth.hciGetDevInfo {
            let index = UInt16(buffer[0]) | UInt16(buffer[1]) << 8
            guard let a = adapters.first(where: { $0.index == index }) else { throw SystemErrno(ENODEV) }
            for (k, b) in [0x01, 0x00, 0x00, 0x5F, 0xB1, 0x00].enumerated() { buffer[10 + k] = UInt8(b) + (k == 0 ? UInt8(index) : 0) }
            buffer[16] = a.up ? 0x05 : 0x00 // HCI_UP | HCI_RUNNING
        } else if request == LinuxBluetooth.hciGetDevList {
            buffer[0] = UInt8(adapters.count); buffer[1] = 0
            for (k, a) in adapters.reversed().enumerated() { // the kernel lists the newest first
                buffer[4 + 8 * k] = UInt8(a.index)
                buffer[8 + 8 * k] = a.up ? 0x05 : 0x00
            }
        }
    }
}

@Suite(.serialized) struct AdapterTakeOverTests {
    @Test func anAdapterThatIsUpIsPoweredDownForTheRunAndUpAfter() throws {
        let k = FakeKernel()
        var notices: [String] = []
        let t = try TransportSpec.hci(index: 0).open(system: k) { notices.append($0) }
        #expect(notices == ["hci0 is up: powered it down for the run (it is powered up again afterwards)"])
        #expect(k.adapters[0].up == false)
        #expect(AdapterLease.held) // what a signal handler would restore
        #expect(k.calls.filter { $0.hasPrefix("HCIDEV") || $0.hasPrefix("bind") } == ["HCIDEVDOWN 0", "bind [31, 0, 0, 0, 1, 0]"])
        k.calls.removeAll()
        let userFD = k.nextFD // the last socket opened
        t.close()
        // The user channel closes first, then the adapter is powered up again, once.
        #expect(k.calls.first == "close \(userFD)")
        #expect(k.calls.filter { $0.hasPrefix("HCIDEV") } == ["HCIDEVUP 0"])
        #expect(k.adapters[0].up == true)
        #expect(!AdapterLease.held)
        t.close()
        #expect(k.calls.filter { $0.hasPrefix("HCIDEV") } == ["HCIDEVUP 0"])
        #expect(notices.count == 1)
    }

    @Test func anAdapterThatIsDownIsLeftDown() throws {
        let k = FakeKernel()
        var notices: [String] = []
        let t = try TransportSpec.hci(index: 1).open(system: k) { notices.append($0) }
        t.close()
        #expect(notices.isEmpty)
        #expect(k.calls.filter { $0.hasPrefix("HCIDEV") }.isEmpty)
        #expect(k.adapters[1].up == false)
    }

    @Test func withoutCapNetAdminOneLineSaysHowToGrantIt() {
        let k = FakeKernel()
        k.devDownErrno = EPERM
        #expect(
            throws: TransportError(
                .permissionDenied, errno: EPERM,
                "hci0 is up and taking it over needs CAP_NET_ADMIN: run as root, or grant it once with `sudo setcap cap_net_admin,cap_net_raw+ep $(which bluesift)`")
        ) {
            _ = try TransportSpec.hci(index: 0).open(system: k)
        }
        #expect(k.adapters[0].up == true)
    }

    @Test func aFailedBindPowersTheAdapterUpAgain() {
        let k = FakeKernel()
        k.bindErrno = EBUSY
        #expect(throws: TransportError.self) { _ = try TransportSpec.hci(index: 0).open(system: k) }
        #expect(k.calls.filter { $0.hasPrefix("HCIDEV") } == ["HCIDEVDOWN 0", "HCIDEVUP 0"])
        #expect(k.adapters[0].up == true)
    }

    @Test func aMissingAdapterListsTheAdaptersThereAre() throws {
        let k = FakeKernel()
        let list = try HCIAdapters(system: k).list()
        #expect(list.map(\.description) == ["hci0 (up)", "hci1 (down)"])
        #expect(HCIAdapters(system: k).describe() == "adapters here: hci0 (up), hci1 (down)")
        // Through the seam, the missing adapter's message (the list comes from the same kernel).
        #expect(try HCIAdapters(system: k).adapter(7) == nil)
        #expect(try HCIAdapters(system: k).adapter(1)?.address?.description == "00:b1:5f:00:00:02")
    }

    @Test func monitorPacketsAreReadWithTheirHeader() throws {
        let k = FakeKernel()
        let m = try HCIMonitor(system: k)
        #expect(k.calls.contains("bind [31, 0, 255, 255, 2, 0]")) // HCI_DEV_NONE, HCI_CHANNEL_MONITOR
        // opcode 3 (Event), index 0, length 6: Command Complete for HCI_Reset.
        k.datagrams = [[0x03, 0x00, 0x00, 0x00, 0x06, 0x00, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]]
        let p = try #require(try m.next(timeout: .milliseconds(10)))
        #expect(p.opcode == 3 && p.adapter == 0)
        #expect(Array(p.payload) == [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        #expect(try m.next(timeout: .milliseconds(10)) == nil)
    }

    @Test func monitorWithoutCapNetRawSaysSo() {
        let k = FakeKernel()
        k.bindErrno = EPERM
        do { _ = try HCIMonitor(system: k); Issue.record("opened") } catch {
            #expect(error.code == .permissionDenied)
            #expect(error.message.hasPrefix("capturing from the kernel's monitor channel needs CAP_NET_RAW"))
        }
    }

    @Test func l2capSpecAndSocketAddress() throws {
        #expect(try TransportSpec(parsing: "l2cap:0") == .l2cap(index: 0))
        #expect(try TransportSpec(parsing: "l2cap:hci1").description == "l2cap:1")
        #expect(throws: TransportError.self) { _ = try TransportSpec(parsing: "l2cap:x") }
        // struct sockaddr_l2: family 31, psm 0, bdaddr little-endian, cid 4, BDADDR_LE_RANDOM 2.
        let a = try #require(BDAddr(string: "c0:ba:0d:00:00:01"))
        #expect(
            L2CAPBearer.address(a, cid: 4, type: L2CAPBearer.socketAddressType(random: true))
                == [31, 0, 0, 0, 0x01, 0x00, 0x00, 0x0D, 0xBA, 0xC0, 4, 0, 2, 0])
        #expect(L2CAPBearer.socketAddressType(random: false) == 1)
    }
}
