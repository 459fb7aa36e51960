import Testing
import Foundation
import TestEvents
#if canImport(Glibc)
    import Glibc
#endif

/// Issue 13's capture nasties, generated here (small in the repository, large at run time):
/// every one decodes or is refused in one line, in bounded time and memory.
@Suite struct CaptureHostileTests {
    /// `make fuzz` runs these again with BLUESIFT_HOSTILE_SCALE=10 (more fragments, more loops).
    static let scale = max(1, Int(ProcessInfo.processInfo.environment["BLUESIFT_HOSTILE_SCALE"] ?? "") ?? 1)

    static func btsnoop(_ packets: [(received: Bool, h4: [UInt8])], timestamps: [UInt64]? = nil) -> String {
        var out = Bytes.btsnoopHeader()
        for (i, p) in packets.enumerated() {
            var rec = Bytes.btsnoopRecord(p.h4, received: p.received, command: p.h4.first == 0x01 || p.h4.first == 0x04)
            if let ts = timestamps?[i] { rec.replaceSubrange(16..<24, with: Bytes.be64(ts)) }
            out += rec
        }
        return Temp.file(out)
    }

    static func jsonLines(_ s: String) -> [[String: Any]] {
        s.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// One L2CAP start claiming 65,535 bytes, then 5,000 continuation fragments: memory stays
    /// bounded (the reassembly buffer never holds more than the claim) and every record shows.
    @Test func thousandsOfContinuationFragments() throws {
        var packets: [(Bool, [UInt8])] = [(true, Bytes.acl(Bytes.l2cap(0x0004, [0x1B, 0x10, 0x00], length: 0xFFFF)))]
        let n = 5_000 * Self.scale
        for _ in 0..<n { packets.append((true, Bytes.acl([UInt8](repeating: 0x41, count: 27), pb: 0b01))) }
        let r = try CLI.run(["dump", "--format", "jsonl", Self.btsnoop(packets)])
        #expect(r.status == 0)
        #expect(Self.jsonLines(r.stdout).count == n + 1)
        #expect(r.peakRSSKiB > 0 && r.peakRSSKiB < 200_000, "peak \(r.peakRSSKiB) KiB")
    }

    /// Discovery answers that loop back (end < start) or end at 0xFFFF: gatt terminates and
    /// keeps what is sane.
    @Test func loopingDiscoveryResponses() throws {
        func att(_ pdu: [UInt8], received: Bool) -> (Bool, [UInt8]) { (received, Bytes.acl(Bytes.l2cap(0x0004, pdu))) }
        // Read By Group Type Request 0x0001-0xFFFF primary service (Core 5.4 Vol 3 Part F §3.4.4.9).
        let req: [UInt8] = [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]
        var packets: [(Bool, [UInt8])] = []
        for _ in 0..<(200 * Self.scale) {
            packets.append(att(req, received: false))
            // start 0x0010, end 0x0005 (end < start), then 0xFFFF-0xFFFF.
            packets.append(att([0x11, 0x06, 0x10, 0x00, 0x05, 0x00, 0x0F, 0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0x0A, 0x18], received: true))
            // Find Information Response on 0xFFFF (§3.4.3.2), Read By Type on 0x0000.
            packets.append(att([0x05, 0x01, 0xFF, 0xFF, 0x02, 0x29], received: true))
            packets.append(att([0x09, 0x07, 0x00, 0x00, 0x02, 0x00, 0x00, 0x19, 0x2A], received: true))
        }
        for args in [["gatt"], ["gatt", "--format", "json"], ["dump", "--format", "jsonl"], ["info"]] {
            let r = try CLI.run(args + [Self.btsnoop(packets)])
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
    }

    /// 65,535 LE Connection Complete events (handles wrap at 12 bits) each followed by an
    /// unfinished L2CAP start: connection and reassembly tables stay bounded.
    @Test func sixtyFiveThousandConnectionHandles() throws {
        var packets: [(Bool, [UInt8])] = []
        packets.reserveCapacity(131_070)
        for i in 0..<65_535 {
            let h = UInt16(i & 0x0EFF)
            // LE Connection Complete (Core 5.4 Vol 4 Part E §7.7.65.1).
            let ev: [UInt8] =
                [0x04, 0x3E, 0x13, 0x01, 0x00] + Bytes.le16(h) + [
                    0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, UInt8(i & 0xFF),
                    0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00
                ]
            packets.append((true, ev))
            packets.append((true, Bytes.acl(Bytes.l2cap(0x0004, [0x52, 0x10, 0x00], length: 500), handle: h)))
        }
        let r = try CLI.run(["info", Self.btsnoop(packets)])
        #expect(r.status == 0)
        #expect(r.stdout.contains("records:     131070"))
        #expect(r.peakRSSKiB > 0 && r.peakRSSKiB < 300_000, "peak \(r.peakRSSKiB) KiB")
    }

    @Test func timestampsGoingBackwards() throws {
        let base: UInt64 = 0x00E0_3BB0_6C7D_8000
        let ts: [UInt64] = [base + 5_000_000, base + 1_000_000, base + 9_000_000, base, base + 3]
        let f = Self.btsnoop(Array(repeating: (false, Bytes.reset), count: 5), timestamps: ts)
        let r = try CLI.run(["dump", "--format", "jsonl", f])
        #expect(r.status == 0)
        #expect(Self.jsonLines(r.stdout).map { $0["frame"] as? Int } == [1, 2, 3, 4, 5])
        let i = try CLI.run(["info", f])
        #expect(i.status == 0 && i.stdout.contains("records:     5"))
    }

    /// A second section of the other byte order in the middle of a pcapng: both read.
    @Test func pcapngSectionOfTheOtherByteOrderMidFile() throws {
        let le = Bytes.Pcapng(), be = Bytes.Pcapng(big: true)
        let file = Temp.file(
            le.shb() + le.idb(201) + le.epb(0, Bytes.phdr(Bytes.reset))
                + be.shb() + be.idb(201) + be.epb(0, Bytes.phdr(Bytes.resetComplete, received: true)))
        let r = try CLI.run(["dump", "--format", "jsonl", file])
        #expect(r.status == 0)
        let rows = Self.jsonLines(r.stdout)
        #expect(rows.count == 2)
        #expect(rows.map { $0["dir"] as? String } == ["sent", "received"])
    }

    /// A FIFO (nobody writing) and character devices: refused at once, one line, exit 2.
    @Test func fifoAndCharacterDevicesAreRefusedWithoutHanging() throws {
        let fifo = Temp.dir.appendingPathComponent("fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // O_RDONLY on a FIFO blocks until a writer comes: keep one open so the test itself
        // cannot hang, and the tool must still refuse rather than read forever.
        let keep = open(fifo, O_RDWR | O_NONBLOCK)
        defer { close(keep) }
        for path in [fifo, "/dev/zero", "/dev/urandom", "/dev/null"] {
            let r = try CLI.run(["info", path], killAfter: 20)
            #expect(r.status == 2, "\(path)")
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(path), "\(path): \(r.stderr)")
            // --follow too: it blocked in read() on the FIFO (deaf to Ctrl-C and SIGTERM) and
            // read /dev/zero forever.
            let f = try CLI.run(["dump", "--follow", path], killAfter: 20)
            #expect(f.status == 2, "--follow \(path)")
            #expect(f.stderr == "bluesift: \(path): not a regular file\n", "--follow \(path): \(f.stderr)")
        }
        // Eight runs of the debug build, each refused at once (a hang is killed after 20 s).
    }

    /// A capture cut short while it is read (mapped): one line and exit 2, not a crash; a
    /// capture that grows while read is read as it was when opened.
    @Test func fileShrinkingWhileRead() throws {
        var big = Bytes.btsnoopHeader()
        let rec = Bytes.btsnoopRecord(Bytes.resetComplete, received: true)
        big.reserveCapacity(16 + rec.count * 1_500_000)
        for _ in 0..<1_500_000 { big += rec }
        let path = Temp.file(big)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = ["dump", "--format", "jsonl", path]
        let stdout = Pipe()
        p.standardOutput = stdout
        let errURL = Temp.dir.appendingPathComponent(UUID().uuidString + ".err")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        p.standardError = try FileHandle(forWritingTo: errURL)
        try p.run()
        // Its first line out means the file is mapped and being read; with the pipe not read
        // any further, it soon blocks writing, far from the end of its 1.5 M records.
        var printed = Data()
        let fd = stdout.fileHandleForReading.fileDescriptor
        #expect(Events.read(fd, into: &printed) { $0.contains(0x0A) }, "no record printed")
        #expect(truncate(path, 4096) == 0)
        Events.read(fd, into: &printed) { _ in false } // the rest, to its end
        p.waitUntilExit()
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        #expect(p.terminationReason == .exit && p.terminationStatus == 2, "status \(p.terminationStatus) (\(p.terminationReason == .exit ? "exit" : "signal"))")
        #expect(err == "bluesift: \(path): the file shrank while it was being read\n")
        // Growing: appended records after opening are simply not seen; nothing breaks.
        let grow = Temp.file(Bytes.btsnoopHeader() + rec)
        let r = try CLI.run(["info", grow])
        #expect(r.status == 0)
    }
}
