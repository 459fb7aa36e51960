import Testing
import Foundation
import BluesiftCapture

/// Damaged files through the real CLI: exit code 2 only when nothing can be read, otherwise
/// every complete record comes out, damage is a one-line warning, and memory stays bounded
/// whatever a length field claims.
@Suite(.serialized) struct CaptureFileMalformedTests {
    typealias B = Bytes
    /// Peak RSS allowed for a tiny hostile file (the debug binary itself needs about 30 MB).
    static let rssLimitKiB = 64 * 1024

    func dump(_ bytes: [UInt8], _ name: String) throws -> CLI.Result {
        try CLI.run(["dump", "--format", "jsonl", Temp.file(bytes, name)])
    }

    func lines(_ r: CLI.Result) -> [String] { r.stdout.split(separator: "\n").map(String.init) }

    @Test func truncatedHeadersExit2() throws {
        let cases: [(String, [UInt8], String)] = [
            ("btsnoop-12.log", Array(B.btsnoopHeader().prefix(12)), "btsnoop header cut short (12 of 16 bytes)"),
            ("pcap-10.pcap", Array(B.pcapHeader().prefix(10)), "pcap header cut short (10 of 24 bytes)"),
            ("pcapng-12.pcapng", Array(B.Pcapng().shb().prefix(12)), "pcapng header cut short (12 of 28 bytes)"),
            ("empty.log", [], "the file is empty")
        ]
        for (name, bytes, message) in cases {
            let r = try dump(bytes, name)
            #expect(r.status == 2, "\(name)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr == "bluesift: \(Temp.dir.path)/\(name): not a capture: \(message)\n")
        }
    }

    @Test func wrongOrHalfWrittenMagicExit2() throws {
        let half = try dump(Array("btsn".utf8), "half.log")
        #expect(half.status == 2 && half.stderr.contains("btsnoop header cut short (4 of 16 bytes)"))
        let wrong = try dump(Array("btsnoop\u{1}".utf8) + B.be32(1) + B.be32(1002) + B.btsnoopRecord(B.reset), "wrong.log")
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("starts with 62 74 73 6e 6f 6f 70 01"))
        #expect(wrong.stderr.split(separator: "\n").count == 1)
        let pcapHalf = try dump([0xD4, 0xC3], "half.pcap")
        #expect(pcapHalf.status == 2 && pcapHalf.stderr.contains("not a capture"))
    }

    @Test func lengthLargerThanFileKeepsEarlierRecords() throws {
        let bytes =
            B.btsnoopHeader() + B.btsnoopRecord(B.reset, command: true)
            + B.btsnoopRecord([UInt8](repeating: 0xAA, count: 10), received: true, included: 1000, original: 1000)
        let r = try dump(bytes, "longer.log")
        #expect(r.status == 0)
        #expect(lines(r).count == 1)
        #expect(lines(r).first?.hasPrefix(#"{"frame":1,"#) == true)
        #expect(lines(r).first?.contains(#""hci":{"opcode":3075,"name":"Reset"}"#) == true)
        #expect(r.stderr.contains("warning:") && r.stderr.contains("file ends mid-record at offset 44: 10 of 1000 bytes"))
    }

    @Test func zeroLengthRecordsAreRecords() throws {
        let bytes = B.btsnoopHeader() + B.btsnoopRecord([]) + B.btsnoopRecord(B.reset, command: true, frame: 2)
        let r = try dump(bytes, "zero.log")
        #expect(r.status == 0 && r.stderr.isEmpty)
        #expect(lines(r).count == 2)
        #expect(lines(r)[0].contains(#""frame":1,"#) && lines(r)[0].contains(#""kind":"unknown""#))
        #expect(lines(r)[1].contains(#""frame":2,"#) && lines(r)[1].contains(#""name":"Reset""#))
    }

    /// Every container with a record claiming ~4 GB: no allocation of the claim, one warning,
    /// the records before it intact.
    @Test func fourGigabyteLengthsStayBounded() throws {
        let huge: UInt32 = 0xFFFF_FFF0
        let ng = B.Pcapng()
        let pklgGood = (0..<5).flatMap { _ in B.pklg(0x00, Array(B.reset.dropFirst())) }
        let cases: [(String, [UInt8], Int)] = [
            (
                "huge.log",
                B.btsnoopHeader() + B.btsnoopRecord(B.reset, command: true)
                    + B.btsnoopRecord([0x04, 0x0E], received: true, included: huge, original: huge), 1
            ),
            ("huge-original.log", B.btsnoopHeader() + B.btsnoopRecord(B.reset, command: true, original: huge), 1),
            ("huge.pcap", B.pcapHeader() + B.pcapRecord(B.phdr(B.reset)) + B.pcapRecord([0, 0, 0, 1], included: huge, original: huge), 1),
            ("huge.pcapng", ng.shb() + ng.idb(201) + ng.epb(0, B.phdr(B.reset)) + ng.u32(6) + ng.u32(huge) + [UInt8](repeating: 0, count: 20), 1),
            ("huge.pklg", pklgGood + B.pklg(0x01, [0x0E], length: huge), 5)
        ]
        for (name, bytes, records) in cases {
            let r = try dump(bytes, name)
            #expect(r.status == 0, "\(name): \(r.stderr)")
            #expect(lines(r).count == records, "\(name)")
            #expect(r.peakRSSKiB > 4096 && r.peakRSSKiB < Self.rssLimitKiB, "\(name): peak RSS \(r.peakRSSKiB) KiB")
            if name != "huge-original.log" {
                #expect(r.stderr.contains("warning:"), "\(name)")
            } else {
                #expect(lines(r)[0].contains(#""truncated":true,"original_length":4294967279"#))
            }
        }
    }

    @Test func pklgOddTypes() throws {
        let bytes =
            B.pklg(0x00, Array(B.reset.dropFirst())) + B.pklg(0x01, Array(B.resetComplete.dropFirst()))
            + B.pklg(0xFB, Array("OFF".utf8)) + B.pklg(0x42, [1, 2, 3]) + B.pklg(0xFE, [0xAA])
            + B.pklg(0xFC, Array("hello\0".utf8)) + B.pklg(0xFF, []) + B.pklg(0x00, Array(B.reset.dropFirst()))
        let r = try dump(bytes, "odd.pklg")
        #expect(r.status == 0 && r.stderr.isEmpty)
        let l = lines(r)
        #expect(l.count == 8)
        guard l.count == 8 else { return }
        #expect(l[2].contains(#""kind":"note","note":"OFF""#))
        #expect(l[3].contains(#""frame":4,"#) && l[3].contains(#""kind":"unknown""#))
        #expect(l[5].contains(#""note":"hello""#))
        #expect(l[6].contains(#""kind":"unknown""#))
        #expect(l[7].contains(#""frame":8,"#) && l[7].contains(#""name":"Reset""#))
    }

    /// Two sections of opposite byte order, two interfaces of different link types.
    @Test func pcapngSeveralInterfacesAndSections() throws {
        let le = B.Pcapng(big: false), be = B.Pcapng(big: true)
        let adv: [UInt8] = [0xD6, 0xBE, 0x89, 0x8E, 0x00, 0x06, 1, 2, 3, 4, 5, 6, 0, 0, 0] // ADV_IND + CRC
        let bytes =
            le.shb() + le.idb(201) + le.idb(251) + le.epb(0, B.phdr(B.reset)) + le.epb(1, adv)
            + be.shb() + be.idb(201) + be.epb(0, B.phdr(B.resetComplete, received: true))
        let r = try dump(bytes, "multi.pcapng")
        #expect(r.status == 0 && r.stderr.isEmpty)
        let l = lines(r)
        #expect(l.count == 3)
        guard l.count == 3 else { return }
        #expect(l[0].contains(#""dir":"sent","kind":"command""#))
        #expect(l[1].contains(#""kind":"ll""#) && l[1].contains(#""name":"ADV_IND""#))
        #expect(l[2].contains(#""frame":3,"#) && l[2].contains(#""dir":"received","kind":"event""#))
    }

    /// A packet naming an interface no IDB described is kept as an unknown record, with a
    /// warning; the well-framed blocks after it still decode.
    @Test
    func pcapngUndescribedInterfaceKeepsGoing() throws {
        let ng = B.Pcapng()
        let bytes =
            ng.shb() + ng.idb(201) + ng.epb(0, B.phdr(B.reset)) + ng.epb(7, [1, 2, 3])
            + ng.epb(0, B.phdr(B.resetComplete, received: true))
        let r = try dump(bytes, "iface.pcapng")
        #expect(r.status == 0)
        #expect(r.stderr.contains("refers to interface 7"))
        let l = lines(r)
        #expect(l.count == 3)
        #expect(l.count == 3 && l[1].contains(#""frame":2,"#) && l[1].contains(#""kind":"unknown""#))
        #expect(l.count == 3 && l[2].contains(#""frame":3,"#) && l[2].contains(#""kind":"event""#))
    }

    /// pcap timestamps whose microsecond field holds more than a second (or 2^31 and above).
    @Test
    func pcapTimestampFieldOutOfRange() throws {
        for us: UInt32 in [0xFB08_3AE0, 0xFFFF_FFF0, 1_000_000] {
            var rec = B.pcapRecord(B.phdr(B.reset))
            rec.replaceSubrange(4..<8, with: B.le32(us))
            let r = try CLI.run(["dump", Temp.file(B.pcapHeader() + rec, "ts-\(us).pcap")])
            #expect(r.status == 0, "ts_usec \(us): \(r.stderr.prefix(200))")
            #expect(r.stdout.contains("Reset"))
        }
    }

    /// A request near the earliest btsnoop timestamp answered near 1972: the latency does not
    /// fit in Int64 microseconds (fuzz input pending/capture-att-latency-overflow).
    @Test
    func extremeTimestampsAcrossARequestAndItsResponse() throws {
        let req = B.acl(B.l2cap(0x0004, [0x02, 0x17, 0x00])) // Exchange MTU Request
        let rsp = B.acl(B.l2cap(0x0004, [0x03, 0x05, 0x02])) // Exchange MTU Response
        var a = B.btsnoopRecord(req), b = B.btsnoopRecord(rsp, received: true)
        a.replaceSubrange(16..<24, with: B.be64(0x80E3_3E9A_3AFE_0016))
        b.replaceSubrange(16..<24, with: B.be64(0x00E3_3E9A_3AFE_13CC))
        let r = try dump(B.btsnoopHeader() + a + b, "extreme-ts.log")
        #expect(r.status == 0, "\(r.stderr.prefix(300))")
        #expect(lines(r).count == 2)
        #expect(lines(r).last?.contains(#""request_frame":1"#) == true)
    }
}
