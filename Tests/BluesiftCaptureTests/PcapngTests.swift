import Testing
import Foundation
@testable import BluesiftCapture

extension CaptureTests {
    /// pcapng files libpcap cannot read (several link types) go through the native block reader.
    @Suite struct PcapngTests {
        static let h4: [UInt8] = [0, 0, 0, 0, 0x01, 0x03, 0x0c, 0x00]
        static let ll: [UInt8] = [0xd6, 0xbe, 0x89, 0x8e, 0x40, 0x06, 1, 2, 3, 4, 5, 6, 0xaa, 0xbb, 0xcc]

        @Test func interfacesWithDifferentLinkTypes() throws {
            let ng = NG()
            let bytes =
                ng.shb() + ng.idb(201) + ng.idb(251) + ng.block(0x0BAD, [1, 2, 3, 4])
                + ng.epb(0, 1_000_000, Self.h4) + ng.epb(1, 2_000_000, Self.ll) + ng.epb(0, 3_000_001, Self.h4)
            let r = try CaptureFile.open(path: Temp.file(bytes))
            #expect(r.format.container == .pcapng && r.format.datalink == 201)
            let recs = Corpus.records(r)
            #expect(recs.map(\.kind) == [.command, .ll, .command] && r.warnings.isEmpty)
            #expect(recs.map(\.frame) == [1, 2, 3])
            #expect(recs[1].bytes == Self.ll && recs[1].sniffer?.hasCRC == true)
            #expect(recs[2].ts == Timestamp(seconds: 3, nanoseconds: 1000))
        }

        /// libpcap delivers the first packets, then stops at the new interface; the native
        /// reader takes over without repeating or losing a frame.
        @Test func linkTypeChangeMidFile() throws {
            let ng = NG()
            let bytes =
                ng.shb() + ng.idb(201) + ng.epb(0, 1_000_000, Self.h4) + ng.epb(0, 2_000_000, Self.h4)
                + ng.idb(251) + ng.epb(1, 3_000_000, Self.ll) + ng.epb(0, 4_000_000, Self.h4)
            let r = try CaptureFile.open(path: Temp.file(bytes))
            let recs = Corpus.records(r)
            #expect(recs.map(\.kind) == [.command, .command, .ll, .command] && r.warnings.isEmpty)
            #expect(recs.map(\.frame) == [1, 2, 3, 4] && recs.map(\.ts.seconds) == [1, 2, 3, 4])
            #expect(r.bytesRead == bytes.count)
        }

        @Test func sectionsOfBothByteOrdersAndResolutions() throws {
            let le = NG(), be = NG(big: true)
            let bytes =
                le.shb() + le.idb(201) + le.epb(0, 1_500_000, Self.h4)
                + be.shb() + be.idb(251, tsresol: 9) + be.epb(0, 2_000_000_123, Self.ll) + be.spb(Self.ll)
                + le.shb() + le.idb(201, tsresol: 0x80 | 10) + le.epb(0, 3 * 1024 + 512, Self.h4)
            let r = try CaptureFile.open(path: Temp.file(bytes))
            let recs = Corpus.records(r)
            #expect(r.warnings.isEmpty)
            #expect(recs.map(\.kind) == [.command, .ll, .ll, .command])
            #expect(recs[0].ts == Timestamp(seconds: 1, nanoseconds: 500_000_000))
            #expect(recs[1].ts == Timestamp(seconds: 2, nanoseconds: 123))
            #expect(recs[2].bytes == Self.ll && recs[2].ts == Timestamp(seconds: 0))
            #expect(recs[3].ts == Timestamp(seconds: 3, nanoseconds: 500_000_000))
        }

        @Test func damagedBlocks() throws {
            let ng = NG()
            let head = ng.shb() + ng.idb(201) + ng.epb(0, 1, Self.h4)
            let cut = Array(ng.epb(0, 2, Self.h4 + Array(repeating: 9, count: 40)).prefix(30))
            let r = try CaptureFile.open(path: Temp.file(head + ng.idb(251) + cut))
            #expect(Corpus.records(r).count == 1)
            #expect(r.warnings == ["file ends mid-record at offset \(head.count + 20): 30 of 80 bytes"])

            // An EPB claiming more captured bytes than its block holds, and a packet on an undescribed interface.
            var lying = ng.epb(0, 2, Self.h4)
            lying.replaceSubrange(20..<24, with: ng.u32(0xFFFF_FFF0))
            let l = try CaptureFile.open(path: Temp.file(head + ng.idb(251) + lying))
            #expect(Corpus.records(l).count == 1 && l.warnings.count == 1)
            let ghost = try CaptureFile.open(path: Temp.file(head + ng.idb(251) + ng.epb(7, 2, Self.h4)))
            #expect(Corpus.records(ghost).count == 2) // kept, as an unknown record
            #expect(ghost.warnings == ["packet at offset \(head.count + 20) refers to interface 7, but only 2 are described; kept as unknown records"])
        }

        /// The native reader agrees with libpcap on every pcapng file of the corpus.
        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func nativeReaderMatchesLibpcapOnCorpus() throws {
            var compared = 0
            for name in Corpus.files {
                let file = try MappedFile(path: Corpus.path(name))
                guard case .pcapng = CaptureFile.sniff(file.bytes) else { continue }
                let viaLibpcap = Corpus.records(try PcapReader(file: file, container: .pcapng))
                let native = Corpus.records(try PcapngReader(file: file))
                #expect(native == viaLibpcap, "\(name)")
                compared += 1
            }
            #expect(compared == 5)
        }
    }
}
