import Testing
import Foundation
@testable import BluesiftCapture

extension CaptureTests {
    /// read X → write btsnoop / btsnoop monitor / pcap / pcapng → read back: the same records.
    @Suite struct RoundTripTests {
        struct Key: Equatable {
            var us: Int64; var dir: Direction?; var kind: PacketKind; var bytes: [UInt8]; var original: Int
        }

        static func key(_ r: Corpus.Rec) -> Key {
            Key(us: r.ts.microseconds, dir: r.dir ?? (r.kind == .event ? .received : .sent), kind: r.kind, bytes: r.bytes, original: r.original)
        }

        /// Writes `source` in `format`, returns (records written, skipped, records read back).
        static func convert(_ source: String, _ format: CaptureOutputFormat) throws -> (kept: [Corpus.Rec], skipped: Int, back: [Corpus.Rec]) {
            let out = Temp.dir().appendingPathComponent("out.\(format.rawValue)").path
            let reader = try CaptureFile.open(path: source)
            let writer = try CaptureFile.writer(path: out, format: format)
            var all: [Corpus.Rec] = []
            while let r = reader.next() {
                all.append(
                    Corpus.Rec(
                        frame: r.frame, ts: r.timestamp, dir: r.direction, kind: r.kind, bytes: Array(r.bytes),
                        original: r.originalLength, adapter: r.adapter, sourceType: r.sourceType, sniffer: r.sniffer))
                try writer.write(r)
            }
            try writer.finish()
            let kept = all.filter { format == .btsnoopMonitor ? ($0.kind.isHCI || $0.kind == .note || [.index, .control].contains($0.kind) && $0.sourceType < 18) : $0.kind.isHCI }
            return (kept, writer.skipped, Corpus.records(try CaptureFile.open(path: out)))
        }

        @Test(
            .enabled(if: Corpus.available, "needs ../shared/captures/public"),
            arguments: [
                "yeelock_btsnoop_hci.log", "blepcapanalyzer_hci.pcap", "bafang_bluetoothd-hci-latest.pklg",
                "btsnooprs_btsnoop_btmon.log", "airbily_bluethoot_logs.pcapng", "cheoljun_bluetooth-infocar.pcap"
            ])
        func roundTrip(file: String) throws {
            for format in CaptureOutputFormat.allCases {
                let (kept, skipped, back) = try Self.convert(Corpus.path(file), format)
                let total = try #require(Corpus.summaries[file]).packets
                #expect(kept.count + skipped == total, "\(file) → \(format)")
                #expect(back.count == kept.count, "\(file) → \(format)")
                #expect(back.map(\.frame) == Array(0..<back.count).map { $0 + 1 })
                let a = kept.map(Self.key), b = back.map(Self.key)
                if let i = a.indices.first(where: { $0 < b.count && a[$0] != b[$0] }) {
                    Issue.record("\(file) → \(format): record \(i + 1) differs: \(a[i]) vs \(b[i])")
                }
                if format == .btsnoopMonitor { #expect(back.map(\.adapter) == kept.map(\.adapter)) }
            }
        }

        @Test func truncatedRecordKeepsOriginalLength() throws {
            let src = Temp.file(Build.btsnoopHeader() + Build.btsnoopRecord([0x02, 0x40, 0x00, 0x1b, 0x00], flags: 1, original: 100))
            for format in CaptureOutputFormat.allCases {
                let (_, _, back) = try Self.convert(src, format)
                #expect(back.count == 1 && back[0].original == 99 && back[0].bytes == [0x40, 0x00, 0x1b, 0x00], "\(format)")
                #expect(back[0].dir == .received && back[0].ts == Timestamp(seconds: 1))
            }
        }

        @Test func writerIsAtomic() throws {
            let dir = Temp.dir()
            let out = dir.appendingPathComponent("a.log").path
            let temp = dir.appendingPathComponent(".a.log.tmp-\(getpid())").path
            do {
                let w = try CaptureFile.writer(path: out, format: .btsnoop)
                #expect(FileManager.default.fileExists(atPath: temp))
                #expect(!FileManager.default.fileExists(atPath: out))
                _ = w
            }
            // Dropped without finish(): no temp file, no output.
            #expect(!FileManager.default.fileExists(atPath: temp))
            #expect(!FileManager.default.fileExists(atPath: out))
            let w = try CaptureFile.writer(path: out, format: .pcapng)
            try w.finish()
            #expect(FileManager.default.fileExists(atPath: out) && !FileManager.default.fileExists(atPath: temp))
            let r = try CaptureFile.open(path: out)
            #expect(r.format.container == .pcapng && r.format.datalink == 201 && r.next() == nil)
            do { _ = try CaptureFile.writer(path: "/nonexistent-dir/x.log", format: .pcap); Issue.record("wrote nowhere") } catch {
                #expect(error.code == .writeFailed)
            }
        }

        /// A file larger than the reader's page-release step (8 MB) and the writer's flush size.
        @Test func largeFileThroughWriterAndReader() throws {
            let out = Temp.dir().appendingPathComponent("big.log").path
            let w = try CaptureFile.writer(path: out, format: .btsnoop)
            let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: 100, alignment: 1)
            defer { payload.deallocate() }
            payload.initializeMemory(as: UInt8.self, repeating: 0)
            for i in 0..<120_000 {
                payload[0] = UInt8(i & 0xff); payload[1] = UInt8(i >> 8 & 0xff)
                try w.write(
                    CaptureRecord(
                        frame: i + 1, timestamp: Timestamp(microseconds: Int64(i)), direction: .received,
                        kind: .acl, bytes: UnsafeRawBufferPointer(payload)))
            }
            try w.finish()
            let r = try CaptureFile.open(path: out)
            #expect(r.fileSize == 16 + 120_000 * (24 + 101))
            var n = 0, ok = true
            while let rec = r.next() {
                ok =
                    ok && rec.bytes[0] == UInt8(n & 0xff) && rec.bytes[1] == UInt8(n >> 8 & 0xff)
                    && rec.timestamp.microseconds == Int64(n) && rec.kind == .acl && rec.direction == .received
                n += 1
            }
            #expect(n == 120_000 && ok && r.warnings.isEmpty && r.bytesRead == r.fileSize)
        }

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func skipsWhatTheFormatCannotHold() throws {
            let (kept, skipped, back) = try Self.convert(Corpus.path("tesible_mouse.pcapng"), .pcap)
            #expect(kept.isEmpty && back.isEmpty && skipped == 3110)
        }
    }
}
