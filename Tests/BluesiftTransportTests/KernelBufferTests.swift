import Testing
import Foundation
import BluesiftCapture
@testable import BluesiftTransport

/// A kernel's socket options as an HCI user channel sees them: SO_RCVBUFFORCE for root (the
/// kernel doubles what is set), SO_RCVBUF capped at net.core.rmem_max, SO_MEMINFO's drop
/// count, datagrams carrying SO_RXQ_OVFL's count. No Bluetooth needed: the seam answers.
final class BufferKernel: SocketSystem {
    var forceErrno: Int32?
    var rmemMax: Int32 = 212_992
    var rcvbuf: Int32 = 212_992
    /// nil: a kernel before 4.12, without SO_MEMINFO.
    var meminfoDrops: UInt32? = 0
    var options: [(name: Int32, value: Int32)] = []
    var datagrams: [(bytes: [UInt8], drops: UInt32?)] = []
    var plainReads = 0
    var closed: [Int32] = []

    func socket(domain: Int32, type: Int32, protocol: Int32) throws(SystemErrno) -> Int32 { 7 }
    func bind(_ fd: Int32, address: [UInt8]) throws(SystemErrno) {}
    func connect(_ fd: Int32, address: [UInt8], timeoutMilliseconds: Int32) throws(SystemErrno) {}
    func setNonBlocking(_ fd: Int32) throws(SystemErrno) {}
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int {
        plainReads += 1
        throw SystemErrno(EAGAIN)
    }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int { bytes.count }
    func wait(_ fd: Int32, forWriting: Bool, timeoutMilliseconds: Int32) throws(SystemErrno) -> Bool { forWriting || !datagrams.isEmpty }
    func close(_ fd: Int32) { closed.append(fd) }

    func setOption(_ fd: Int32, level: Int32, name: Int32, value: [UInt8]) throws(SystemErrno) {
        let v = value.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) }
        options.append((name, v))
        switch name {
        case 33: // SO_RCVBUFFORCE
            if let e = forceErrno { throw SystemErrno(e) }
            rcvbuf = 2 * v
        case SO_RCVBUF: rcvbuf = 2 * min(v, rmemMax)
        default: break
        }
    }
    func getOption(_ fd: Int32, level: Int32, name: Int32, value: inout [UInt8]) throws(SystemErrno) {
        switch name {
        case SO_RCVBUF: value = withUnsafeBytes(of: rcvbuf.littleEndian) { Array($0) }
        case 55: // SO_MEMINFO: u32[9], drops last
            guard let d = meminfoDrops else { throw SystemErrno(ENOPROTOOPT) }
            value = [UInt8](repeating: 0, count: 32) + withUnsafeBytes(of: d.littleEndian) { Array($0) }
        default: throw SystemErrno(ENOPROTOOPT)
        }
    }
    func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Datagram {
        guard !datagrams.isEmpty else { throw SystemErrno(EAGAIN) }
        let d = datagrams.removeFirst()
        buffer.copyBytes(from: d.bytes)
        return Datagram(count: d.bytes.count, drops: d.drops)
    }
}

@Suite(.serialized) struct KernelBufferTests {
    /// An ACL packet of a notification on handle 0x001f (H4 indicator first, as the user channel gives it).
    static func notification(_ n: UInt8) -> [UInt8] { [0x02, 0x01, 0x20, 0x08, 0x00, 0x04, 0x00, 0x04, 0x00, 0x1B, 0x1F, 0x00, n] }

    @Test func asRootTheBufferIsForcedTo8MBAndTheKernelsDropsAreCounted() throws {
        let k = BufferKernel()
        var notices: [String] = []
        let t = try TransportSpec.hci(index: 0).open(system: k) { notices.append($0) }
        #expect(k.options.map(\.name) == [33, 40]) // SO_RCVBUFFORCE, SO_RXQ_OVFL
        #expect(k.options.map(\.value) == [8 << 20, 1])
        #expect(notices.isEmpty)
        #expect(t.kernelBuffer == KernelBuffer(bytes: 16 << 20, dropped: 0))
        // The second datagram was queued after 5 drops, the third after 7 (SO_RXQ_OVFL).
        k.datagrams = [(Self.notification(1), nil), (Self.notification(2), 5), (Self.notification(3), 7)]
        for n: UInt8 in 1...3 {
            #expect(try t.receive(timeout: .seconds(1))?.bytes.last == n)
        }
        #expect(k.plainReads == 0) // recvmsg, never read(): read() would lose the count
        #expect(t.kernelBuffer?.dropped == 7)
        // Two more dropped and no packet after them to say so: SO_MEMINFO does.
        k.meminfoDrops = 9
        #expect(t.kernelBuffer?.dropped == 9)
        t.close()
        k.meminfoDrops = 50 // the socket is gone: the count stays what it was at close
        #expect(t.kernelBuffer == KernelBuffer(bytes: 16 << 20, dropped: 9))
        #expect(k.closed == [7, 7]) // HCIGETDEVINFO's socket, the user channel
    }

    @Test func withoutForceTheBufferIsWhatRmemMaxAllowsAndTheRunSaysSo() throws {
        let k = BufferKernel()
        k.forceErrno = EPERM
        var notices: [String] = []
        let t = try TransportSpec.hci(index: 1).open(system: k) { notices.append($0) }
        #expect(k.options.map(\.name) == [33, SO_RCVBUF, 40])
        #expect(k.options.map(\.value) == [8 << 20, 8 << 20, 1])
        #expect(t.kernelBuffer == KernelBuffer(bytes: 425_984, dropped: 0))
        #expect(
            notices == [
                "hci1: the kernel gave the user channel a receive buffer of 416 KiB, not 16 MiB "
                    + "(SO_RCVBUFFORCE: Operation not permitted (errno 1); SO_RCVBUF stops at net.core.rmem_max): "
                    + "a notification flood past it is dropped by the kernel (counted in the report)"
            ])
        t.close()
    }

    @Test func beforeLinux412OnlySO_RXQ_OVFLCounts() throws {
        let k = BufferKernel()
        k.meminfoDrops = nil
        let t = try TransportSpec.hci(index: 0).open(system: k)
        k.datagrams = [(Self.notification(1), 3)]
        #expect(try t.receive(timeout: .seconds(1))?.bytes.last == 1)
        #expect(t.kernelBuffer?.dropped == 3)
        t.close()
    }

    @Test func aByteStreamHasNoKernelBuffer() {
        let k = BufferKernel()
        let t = FDTransport(fd: 7, system: k, name: "tcp:127.0.0.1:9")
        #expect(t.kernelBuffer == nil)
        #expect((try? t.receive(timeout: .milliseconds(1))) == .some(nil))
        #expect(k.plainReads == 0) // nothing readable: wait said so first
        t.close()
    }

    /// The real recvmsg and getsockopt on this machine's kernel, with UDP on loopback standing
    /// in for the user channel (same socket layer: SO_RXQ_OVFL, SO_MEMINFO): datagrams past a
    /// tiny receive buffer are dropped, and the count comes back both ways.
    @Test func theRealKernelsDropCountComesBackThroughRecvmsgAndMeminfo() throws {
        let sys = PosixSocketSystem()
        let rx = try sys.socket(domain: AF_INET, type: Int32(SOCK_DGRAM.rawValue), protocol: 0)
        let tx = try sys.socket(domain: AF_INET, type: Int32(SOCK_DGRAM.rawValue), protocol: 0)
        defer { sys.close(tx) }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = inet_addr("127.0.0.1")
        try sys.bind(rx, address: withUnsafeBytes(of: &sa) { Array($0) })
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(rx, $0, &len) } }
        try sys.connect(tx, address: withUnsafeBytes(of: &sa) { Array($0) }, timeoutMilliseconds: 1000)
        try sys.setOption(rx, level: SOL_SOCKET, name: SO_RCVBUF, value: withUnsafeBytes(of: Int32(1)) { Array($0) }) // the minimum
        try sys.setOption(rx, level: SOL_SOCKET, name: LinuxBluetooth.soRxqOvfl, value: [1, 0, 0, 0])
        try sys.setNonBlocking(rx)
        let t = FDTransport(fd: rx, system: sys, name: "udp") // closes rx
        defer { t.close() }
        t.watchKernelBuffer(bytes: nil)
        // 40 H4 packets of ~1 KB each, one per datagram: most find the buffer full.
        for n in 1...40 {
            let acl: [UInt8] = [0x02, 0x01, 0x20, 0x00, 0x04] + [UInt8](repeating: UInt8(n), count: 1024)
            _ = try acl.withUnsafeBytes { try sys.write(tx, $0) }
        }
        var queued = 0
        while try t.receive(timeout: .milliseconds(50)) != nil { queued += 1 }
        let dropped = 40 - queued
        #expect(queued > 0 && dropped > 0, "queued \(queued)")
        // SO_MEMINFO's count; then one more packet, queued after the drops, carries SO_RXQ_OVFL's.
        #expect(t.kernelBuffer?.dropped == dropped)
        let last: [UInt8] = [0x02, 0x01, 0x20, 0x01, 0x00, 0xEE]
        _ = try last.withUnsafeBytes { try sys.write(tx, $0) }
        var buf = [UInt8](repeating: 0, count: 64)
        #expect(try sys.wait(rx, forWriting: false, timeoutMilliseconds: 1000))
        let got = try buf.withUnsafeMutableBytes { try sys.receive(rx, into: $0) }
        #expect(got.count == last.count)
        #expect(got.drops == UInt32(dropped))
    }
}
