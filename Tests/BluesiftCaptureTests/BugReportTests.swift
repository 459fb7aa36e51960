import Testing
import Foundation
import CCompression
import ZIPFoundation
@testable import BluesiftCapture

/// Issue 17: Android bug reports. The tests write btsnooz the way AOSP does (9-byte header:
/// version, last timestamp LE; zlib of records with delta timestamps; base64 between the
/// BTSNOOP_LOG_SUMMARY markers) from a corpus capture, and check every record btsnooz keeps.
@Suite struct BugReportTests {
    struct Kept: Equatable {
        var us: Int64; var dir: Direction?; var kind: PacketKind; var bytes: [UInt8]; var original: Int
    }

    static let source = "lightctl_btsnoop_hci.log"

    /// AOSP's rule (snoop_logger.cc, get_btsnooz_packet_length_to_write), written out here
    /// on its own: commands/events whole, ACL whole on CID 1 else 14 bytes, no SCO/ISO.
    static func kept(_ r: CaptureRecord) -> Int? {
        switch r.kind {
        case .command, .event: return r.bytes.count
        case .acl:
            if r.bytes.count > 8, r.bytes[6] == 1, r.bytes[7] == 0 { return r.bytes.count }
            return min(14, r.bytes.count)
        default: return nil
        }
    }

    static func le(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// A btsnooz section (decoded base64) for `path`, and what a reader must give back.
    static func snooz(_ path: String, version: UInt8) throws -> ([UInt8], [Kept]) {
        let reader = try CaptureFile.open(path: path)
        var body: [UInt8] = [], expected: [Kept] = []
        var last: Int64?
        while let r = reader.next() {
            guard let keep = kept(r) else { continue }
            let type: UInt8 = r.kind == .command ? 0x20 : r.kind == .event ? 0x10 : (r.direction == .received ? 0x11 : 0x21)
            let us = r.timestamp.microseconds
            // Deltas are unsigned: a clock step back is logged as 0 (kept at the previous time).
            let delta = last.map { max(0, us - $0) } ?? 0
            let t = (last ?? us) + delta
            last = t
            let data = Array(r.bytes.prefix(keep))
            body += le(UInt64(keep + 1), 2)
            if version == 2 { body += le(UInt64(r.bytes.count + 1), 2) }
            body += le(UInt64(delta), 4) + [type] + data
            expected.append(
                Kept(
                    us: t, dir: r.direction, kind: r.kind, bytes: data,
                    original: version == 2 ? r.bytes.count : keep))
        }
        var zlen = compressBound(uLong(body.count))
        var z = [UInt8](repeating: 0, count: Int(zlen))
        #expect(compress2(&z, &zlen, body, uLong(body.count), 9) == Z_OK)
        let header = [version] + le(UInt64(bitPattern: last ?? 0), 8)
        return (header + z.prefix(Int(zlen)), expected)
    }

    /// A dumpstate-like text around the section, as `dumpsys bluetooth_manager` prints it.
    static func bugreportText(_ snooz: [UInt8]) -> String {
        let b64 = Data(snooz).base64EncodedString()
        var lines: [Substring] = []
        var i = b64.startIndex
        while i < b64.endIndex { let j = b64.index(i, offsetBy: 76, limitedBy: b64.endIndex) ?? b64.endIndex; lines.append(b64[i..<j]); i = j }
        return """
            == dumpstate: 2026-07-19 11:01:49
            ------ DUMPSYS (/system/bin/dumpsys) ------
            DUMP OF SERVICE bluetooth_manager:
            Bluetooth Status
              enabled: true
            --- BEGIN:BTSNOOP_LOG_SUMMARY (\(snooz.count) bytes in) ---
            \(lines.joined(separator: "\n"))
            --- END:BTSNOOP_LOG_SUMMARY (\(b64.count) bytes out) ---
            DUMP OF SERVICE bluetooth_rfcomm:

            """
    }

    static func records(_ reader: any CaptureReader) -> [Kept] {
        var out: [Kept] = []
        while let r = reader.next() {
            out.append(Kept(us: r.timestamp.microseconds, dir: r.direction, kind: r.kind, bytes: Array(r.bytes), original: r.originalLength))
        }
        return out
    }

    static func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-bugreport-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public"), arguments: [UInt8(1), 2]) func textReportKeepsEveryRecord(_ version: UInt8) throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (snooz, expected) = try Self.snooz(Corpus.path(Self.source), version: version)
        #expect(expected.count == 61318 - 0) // lightctl: commands, events and ACL only
        let txt = dir.appendingPathComponent("bugreport-lightctl-2026-07-19.txt")
        try Self.bugreportText(snooz).write(to: txt, atomically: true, encoding: .utf8)

        let report = try BugReport(path: txt.path)
        #expect(report.logs.map(\.name) == ["btsnooz"])
        let got = Self.records(try CaptureFile.open(path: txt.path))
        #expect(got.count == expected.count)
        let firstBad = zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstBad == nil, "record \(firstBad.map { $0 + 1 } ?? 0): \(firstBad.map { "\(got[$0]) vs \(expected[$0])" } ?? "")")
        // Truncated ACL copies say how long the packet was (v2 keeps the original length).
        let cut = got.filter { $0.original > $0.bytes.count }.count
        if version == 2 { #expect(cut > 1000) } else { #expect(cut == 0) }

        // Converted both ways: btsnooz → btsnoop (as btsnooz.py writes it) → records again.
        let out = dir.appendingPathComponent("back.btsnoop").path
        let w = try CaptureFile.writer(path: out, format: .btsnoop)
        let again = try CaptureFile.open(path: txt.path + ":btsnooz")
        while let r = again.next() { try w.write(r) }
        try w.finish()
        #expect(Self.records(try CaptureFile.open(path: out)) == expected)
    }

    @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func zipReportOffersEveryLog() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tree = dir.appendingPathComponent("tree")
        let fm = FileManager.default
        let (snooz, expected) = try Self.snooz(Corpus.path(Self.source), version: 2)
        let files: [(String, Data)] = [
            ("bugreport-lightctl-2026-07-19.txt", Data(Self.bugreportText(snooz).utf8)),
            ("FS/data/misc/bluetooth/logs/btsnoop_hci.log", try Data(contentsOf: URL(fileURLWithPath: Corpus.path("blefun_btsnoop_hci.log")))),
            ("FS/data/log/bt/BT_HCI_2026_0719_110149.cfa", try Data(contentsOf: URL(fileURLWithPath: Corpus.path("oppo_BT_HCI_2026_0719_110149.cfa")))),
            // Found by content: an odd place and name.
            ("FS/vendor/odd/hci.dump", try Data(contentsOf: URL(fileURLWithPath: Corpus.path("bafang_bluetoothd-hci-latest.pklg")))),
            ("FS/data/misc/notes.txt", Data("no snoop here\n".utf8)),
            ("version.txt", Data("2.0\n".utf8))
        ]
        for (name, data) in files {
            let u = tree.appendingPathComponent(name)
            try fm.createDirectory(at: u.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: u)
        }
        let zipURL = dir.appendingPathComponent("bugreport-lightctl.zip")
        let archive = try Archive(url: zipURL, accessMode: .create)
        for (name, _) in files { try archive.addEntry(with: name, relativeTo: tree, compressionMethod: .deflate) }

        let report = try BugReport(path: zipURL.path)
        #expect(
            Set(report.logs.map(\.name)) == [
                "btsnooz@bugreport-lightctl-2026-07-19.txt",
                "FS/data/misc/bluetooth/logs/btsnoop_hci.log",
                "FS/data/log/bt/BT_HCI_2026_0719_110149.cfa",
                "FS/vendor/odd/hci.dump"
            ])
        // One log by name (a unique suffix of the path is enough).
        let snoozLog = Self.records(try CaptureFile.open(path: zipURL.path + ":btsnooz"))
        #expect(snoozLog == expected)
        let counts = ["blefun_btsnoop_hci.log", "oppo_BT_HCI_2026_0719_110149.cfa", "bafang_bluetoothd-hci-latest.pklg"]
            .map { Corpus.summaries[$0]?.packets ?? -1 }
        let blefun = Self.records(try CaptureFile.open(path: zipURL.path + ":btsnoop_hci.log"))
        #expect(blefun.count == counts[0])
        #expect(blefun == Self.records(try CaptureFile.open(path: Corpus.path("blefun_btsnoop_hci.log"))))

        // All logs together, merged by time (each log keeps its own order), renumbered.
        let all = try CaptureFile.open(path: zipURL.path)
        var n = 0, first: Timestamp?
        while let r = all.next() {
            n += 1
            #expect(r.frame == n)
            if first == nil { first = r.timestamp }
        }
        #expect(n == expected.count + counts.reduce(0, +))
        let starts = [Self.source, "blefun_btsnoop_hci.log", "oppo_BT_HCI_2026_0719_110149.cfa", "bafang_bluetoothd-hci-latest.pklg"]
            .compactMap { try? CaptureFile.open(path: Corpus.path($0)).next()?.timestamp }
        #expect(first == starts.min())

        // A name that is not there: a clear error.
        #expect(throws: CaptureError.self) { try CaptureFile.open(path: zipURL.path + ":nothing.log") }
    }
}
