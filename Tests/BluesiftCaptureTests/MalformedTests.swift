import Testing
import Foundation
@testable import BluesiftCapture

extension CaptureTests {
    /// Damaged and hostile inputs: every one either throws a CaptureError with the right code
    /// or yields the complete records and a warning. Nothing traps or allocates a claimed length.
    @Suite struct MalformedTests {
        func code(_ bytes: [UInt8]) -> CaptureError.Code? {
            do { _ = try CaptureFile.open(path: Temp.file(bytes)); return nil } catch { return error.code }
        }

        @Test func notACaptureInputs() throws {
            #expect(code([]) == .notACapture)
            #expect(code(Array("btsn".utf8)) == .notACapture) // half-written magic
            #expect(code(Array("btsnoop\0\0\0".utf8)) == .notACapture) // header cut short
            #expect(code([0xD4, 0xC3, 0xB2, 0xA1, 0x02, 0x00]) == .notACapture) // pcap header cut short
            #expect(code([0x0A, 0x0D, 0x0D, 0x0A, 0x1C, 0x00]) == .notACapture)
            #expect(code(Array("hello, this is plainly not a capture file\n".utf8)) == .notACapture)
            do {
                _ = try CaptureFile.open(path: Temp.file(Array("GIF89a.....".utf8)))
                Issue.record("opened a GIF")
            } catch {
                #expect(error.message.hasPrefix("not a capture: no btsnoop, pcap, pcapng or PacketLogger signature"))
                #expect(!error.message.contains("\n"))
            }
        }

        @Test func fileSystemErrors() throws {
            let dir = Temp.dir()
            do { _ = try CaptureFile.open(path: dir.path); Issue.record("opened a directory") } catch { #expect(error.code == .isDirectory) }
            do { _ = try CaptureFile.open(path: dir.appendingPathComponent("missing.log").path); Issue.record("opened nothing") } catch {
                #expect(error.code == .notFound)
            }
        }

        @Test func unsupportedBTSnoopDatalinks() throws {
            #expect(code(Build.btsnoopHeader(datalink: 1003)) == .unsupported)
            #expect(code(Build.btsnoopHeader(datalink: 1004)) == .unsupported)
            #expect(code(Build.btsnoopHeader(datalink: 1002)) == nil)
        }

        @Test func btsnoopCutMidRecord() throws {
            let good = Build.btsnoopRecord([0x01, 0x03, 0x0c, 0x00], flags: 2)
            let cut = Array(Build.btsnoopRecord(Array(repeating: 0xAA, count: 40), flags: 1).prefix(24 + 12))
            let r = try CaptureFile.open(path: Temp.file(Build.btsnoopHeader() + good + cut))
            let recs = Corpus.records(r)
            #expect(recs.count == 1 && recs[0].bytes == [0x03, 0x0c, 0x00] && recs[0].kind == .command)
            #expect(r.warnings == ["file ends mid-record at offset 44: 12 of 40 bytes"])
            #expect(r.next() == nil)
        }

        @Test func btsnoopCutInRecordHeader() throws {
            let r = try CaptureFile.open(path: Temp.file(Build.btsnoopHeader() + [0, 0, 0, 9, 0, 0, 0, 9, 0, 0]))
            #expect(Corpus.records(r).isEmpty)
            #expect(r.warnings == ["file ends mid-record at offset 16: 10 of 24 header bytes"])
        }

        @Test func btsnoopHugeLengthNeverAllocates() throws {
            let rec = Build.btsnoopRecord([0x04, 0x0e], flags: 3, original: 0xFFFF_FFFF, included: 0xFFFF_FFFF)
            let r = try CaptureFile.open(path: Temp.file(Build.btsnoopHeader() + rec))
            #expect(Corpus.records(r).isEmpty)
            #expect(r.warnings == ["file ends mid-record at offset 16: 2 of 4294967295 bytes"])
        }

        @Test func btsnoopZeroLengthAndTruncatedRecords() throws {
            let zero = Build.btsnoopRecord([], flags: 0)
            let short = Build.btsnoopRecord([0x02, 0x40, 0x00, 0x1b, 0x00], flags: 1, original: 100)
            let r = try CaptureFile.open(path: Temp.file(Build.btsnoopHeader() + zero + short))
            let recs = Corpus.records(r)
            #expect(recs.count == 2 && r.warnings.isEmpty)
            #expect(recs[0].kind == .unknown && recs[0].bytes.isEmpty && recs[0].frame == 1)
            #expect(recs[1].kind == .acl && recs[1].dir == .received && recs[1].bytes == [0x40, 0x00, 0x1b, 0x00])
            #expect(recs[1].original == 99)
            #expect(recs[1].ts == Timestamp(seconds: 1))
        }

        @Test func pklgBigEndianHandMade() throws {
            var b = Build.pklg(0xFC, Array("hello\0".utf8), secs: 1_400_000_000, usecs: 250_000, big: true)
            b += Build.pklg(0x00, [0x03, 0x0c, 0x00], secs: 1_400_000_001, usecs: 0, big: true)
            b += Build.pklg(0x01, [0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00], secs: 1_400_000_001, usecs: 7, big: true)
            b += Build.pklg(0x21, [0xAB], secs: 1_400_000_002, usecs: 0, big: true)
            b += Build.pklg(nil, [], secs: 1_400_000_003, usecs: 0, big: true) // zero-length: no type byte
            b += Build.pklg(0x13, [0x01, 0x00], secs: 1_400_000_004, usecs: 0, big: true)
            let r = try CaptureFile.open(path: Temp.file(b + [0, 0, 0, 40, 0, 0]))
            #expect(r.format.container == .packetlogger && r.format.byteOrder == .big)
            let recs = Corpus.records(r)
            #expect(recs.map(\.kind) == [.note, .command, .event, .unknown, .unknown, .iso])
            #expect(String(decoding: recs[0].bytes, as: UTF8.self) == "hello")
            #expect(recs[0].ts == Timestamp(seconds: 1_400_000_000, nanoseconds: 250_000_000))
            #expect(recs[1].dir == .sent && recs[1].bytes == [0x03, 0x0c, 0x00])
            #expect(recs[2].dir == .received && recs[2].ts == Timestamp(seconds: 1_400_000_001, nanoseconds: 7000))
            #expect(recs[3].sourceType == 0x21 && recs[3].bytes == [0xAB])
            #expect(recs[5].dir == .received)
            #expect(r.warnings == ["file ends mid-record at offset \(b.count): 6 of 12 header bytes"])
        }

        @Test func pklgLittleEndianHandMade() throws {
            let b =
                Build.pklg(0x02, [0x40, 0x00, 0x01, 0x00, 0xAA], secs: 1_700_000_000, usecs: 1, big: false)
                + Build.pklg(0x09, [0x01, 0x00, 0x00], secs: 1_700_000_000, usecs: 2, big: false)
            let r = try CaptureFile.open(path: Temp.file(b))
            #expect(r.format.byteOrder == .little)
            let recs = Corpus.records(r)
            #expect(recs.map(\.kind) == [.acl, .sco] && recs.map(\.dir) == [.sent, .received])
            #expect(recs[0].bytes == [0x40, 0x00, 0x01, 0x00, 0xAA])
        }

        @Test func pklgLengthBeyondFile() throws {
            var b = Build.pklg(0x00, [0x03, 0x0c, 0x00], secs: 1, usecs: 0, big: true)
            b += [0x00, 0x00, 0xFF, 0x00] + Array(repeating: 0, count: 9) // claims 65280 bytes
            let r = try CaptureFile.open(path: Temp.file(b))
            #expect(Corpus.records(r).count == 1)
            #expect(r.warnings == ["file ends mid-record at offset 16: 9 of 65280 bytes"])
        }

        @Test func pcapCutAndHugeRecords() throws {
            let ok = Build.pcapRecord([0, 0, 0, 0, 0x01, 0x03, 0x0c, 0x00])
            let cut = Array(Build.pcapRecord(Array(repeating: 1, count: 40)).prefix(16 + 12))
            let r = try CaptureFile.open(path: Temp.file(Build.pcapHeader() + ok + cut))
            let recs = Corpus.records(r)
            #expect(recs.count == 1 && recs[0].kind == .command && recs[0].dir == .sent && recs[0].bytes == [0x03, 0x0c, 0x00])
            #expect(r.warnings.count == 1 && r.warnings[0].hasPrefix("file ends mid-record at offset 48"))

            let huge = Build.pcapRecord([1, 2], included: 0xFFFF_FFFF)
            let h = try CaptureFile.open(path: Temp.file(Build.pcapHeader() + huge))
            #expect(Corpus.records(h).isEmpty && h.warnings.count == 1)
        }

        @Test func pcapShortPacketsAndUnknownLinkType() throws {
            let r = try CaptureFile.open(
                path: Temp.file(
                    Build.pcapHeader() + Build.pcapRecord([0, 0, 0])
                        + Build.pcapRecord([0, 0, 0, 1, 0x04, 0x0e], original: 9)))
            let recs = Corpus.records(r)
            #expect(recs[0].kind == .unknown && recs[0].bytes == [0, 0, 0] && recs[0].sourceType == CaptureRecord.noType)
            #expect(recs[1].kind == .event && recs[1].dir == .received && recs[1].bytes == [0x0e] && recs[1].original == 4)
            // A link type this tool does not decode is refused (issue 13: it was read as unknown records, exit 0).
            do {
                _ = try CaptureFile.open(path: Temp.file(Build.pcapHeader(linktype: 1) + Build.pcapRecord([1, 2, 3])))
                Issue.record("opened an Ethernet pcap")
            } catch {
                #expect(error.code == .unsupported && error.message.contains("LINKTYPE 1, Ethernet"))
            }
        }
    }
}
