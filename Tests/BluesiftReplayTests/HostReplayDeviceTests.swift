import Testing
import Foundation
import BluesiftTransport
import BluesiftHost
@testable import BluesiftReplay

/// A kernel with hci0 and hci1 and nothing at other indexes, as the HCI ioctls answer.
final class TwoAdapterKernel: SocketSystem {
    func socket(domain: Int32, type: Int32, protocol: Int32) throws(SystemErrno) -> Int32 { 5 }
    func bind(_ fd: Int32, address: [UInt8]) throws(SystemErrno) { throw SystemErrno(ENODEV) }
    func connect(_ fd: Int32, address: [UInt8], timeoutMilliseconds: Int32) throws(SystemErrno) {}
    func setNonBlocking(_ fd: Int32) throws(SystemErrno) {}
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int { throw SystemErrno(EAGAIN) }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int { bytes.count }
    func wait(_ fd: Int32, forWriting: Bool, timeoutMilliseconds: Int32) throws(SystemErrno) -> Bool { false }
    func close(_ fd: Int32) {}
    func ioctl(_ fd: Int32, request: UInt, buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) {
        switch request {
        case 0x8004_48D3: throw SystemErrno(ENODEV) // HCIGETDEVINFO: no adapter at the index asked
        case 0x8004_48D2: // HCIGETDEVLIST: u16 count, {u16 index, u32 flags}; hci1 listed first, as the kernel does
            buffer[0] = 2; buffer[1] = 0
            buffer[4] = 1; buffer[8] = 0x00
            buffer[12] = 0; buffer[16] = 0x05 // HCI_UP | HCI_RUNNING
        default: throw SystemErrno(ENOTTY)
        }
    }
}

@Test func aMissingAdapterIsItsOwnFaultListingTheAdaptersThereAre() {
    do {
        _ = try HostReplayDevice.connect(transport: "hci:9", match: .name("Band"), system: TwoAdapterKernel())
        Issue.record("connected to an adapter that is not there")
    } catch {
        // The CLI makes this exit 2 (ReplayCommand), as a missing capability: nothing was opened.
        #expect(error.code == .noAdapter)
        #expect(error.message == "hci:9: no Bluetooth adapter hci9: adapters here: hci0 (up), hci1 (down)")
    }
}
