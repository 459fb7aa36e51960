import Testing
import Foundation
@testable import BluesiftCapture

/// Paths and tshark's reference figures for the public corpus (../shared/captures/public).
enum Corpus {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let dir = repo.deletingLastPathComponent().appendingPathComponent("shared/captures/public")
    static let inRepo = repo.appendingPathComponent("Captures")

    static var available: Bool { FileManager.default.fileExists(atPath: dir.appendingPathComponent("TSHARK_SUMMARY.txt").path) }

    static func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
            .filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".txt") }.sorted()
    }

    /// Whether the content sniffer knows the container (a name or a full path).
    static func recognised(_ name: String) -> Bool {
        let p = name.hasPrefix("/") ? name : path(name)
        guard let d = FileManager.default.contents(atPath: p) else { return false }
        return d.withUnsafeBytes { CaptureFile.sniff($0) } != .unknown
    }

    struct Summary { var packets: Int; var first: String?; var last: String? }

    /// Parses TSHARK_SUMMARY.txt. capinfos rounds large counts ("50 k"), so the exact count
    /// comes from the io,stat table ("|   0.0 <> 130.2 |   3674 | 971280 |").
    static let summaries: [String: Summary] = {
        guard let text = try? String(contentsOf: dir.appendingPathComponent("TSHARK_SUMMARY.txt"), encoding: .utf8) else { return [:] }
        var out: [String: Summary] = [:]
        var name: String?
        var cur = Summary(packets: -1)
        func flush() { if let n = name { out[n] = cur } }
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix("=================== ") {
                flush()
                name = String(line.dropFirst(20)); cur = Summary(packets: -1)
            } else if line.hasPrefix("Number of packets:") {
                let v = line.dropFirst(18).trimmingCharacters(in: .whitespaces)
                if let n = Int(v) { cur.packets = n }
            } else if line.hasPrefix("First packet time:") {
                cur.first = line.dropFirst(18).trimmingCharacters(in: .whitespaces)
            } else if line.hasPrefix("Last packet time:") {
                cur.last = line.dropFirst(17).trimmingCharacters(in: .whitespaces)
            } else if line.contains("<>"), cur.packets < 0 || cur.packets > 0 {
                let cols = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                if cols.count >= 2, let n = Int(cols[1]) { cur.packets = n }
            }
        }
        flush()
        return out
    }()

    /// "2014-11-23 17:26:42.819629" (UTC) for a timestamp, with µs or ns digits as tshark prints.
    static func format(_ t: Timestamp, digits: Int) -> String {
        var tt = time_t(t.seconds)
        var tmv = tm()
        gmtime_r(&tt, &tmv)
        let frac = digits == 9 ? String(format: "%09d", t.nanoseconds) : String(format: "%06d", t.nanoseconds / 1000)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.", tmv.tm_year + 1900, tmv.tm_mon + 1, tmv.tm_mday,
            tmv.tm_hour, tmv.tm_min, tmv.tm_sec) + frac
    }

    static func hex(_ b: UnsafeRawBufferPointer, _ n: Int = .max) -> String {
        b.prefix(n).map { String(format: "%02x", $0) }.joined()
    }

    static func hex(_ b: [UInt8], _ n: Int = .max) -> String {
        b.prefix(n).map { String(format: "%02x", $0) }.joined()
    }

    /// All records of a file, copied (for tests only).
    struct Rec: Equatable {
        var frame: Int; var ts: Timestamp; var dir: Direction?; var kind: PacketKind
        var bytes: [UInt8]; var original: Int; var adapter: UInt16; var sourceType: UInt16
        var sniffer: SnifferInfo?
    }

    static func records(_ reader: any CaptureReader) -> [Rec] {
        var out: [Rec] = []
        while let r = reader.next() {
            out.append(
                Rec(
                    frame: r.frame, ts: r.timestamp, dir: r.direction, kind: r.kind, bytes: Array(r.bytes),
                    original: r.originalLength, adapter: r.adapter, sourceType: r.sourceType, sniffer: r.sniffer))
        }
        return out
    }
}

/// Temporary files for malformed-input tests: folders under one per process, removed when
/// the test process exits.
enum Temp {
    static let root: URL = {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-capture-\(getpid())")
        try? FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Temp.root) }
        return d
    }()

    static func dir() -> URL {
        let d = root.appendingPathComponent(String(UUID().uuidString.prefix(8)))
        try? FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    static func file(_ bytes: [UInt8], name: String = "x.bin") -> String {
        let p = dir().appendingPathComponent(name).path
        _ = FileManager.default.createFile(atPath: p, contents: Data(bytes))
        return p
    }
}

extension Array where Element == UInt8 {
    mutating func be32(_ v: UInt32) { append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]) }
    mutating func le32(_ v: UInt32) { append(contentsOf: [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24)]) }
    mutating func be64(_ v: UInt64) { be32(UInt32(v >> 32)); be32(UInt32(v & 0xffff_ffff)) }
    mutating func le16(_ v: UInt16) { append(contentsOf: [UInt8(v & 0xff), UInt8(v >> 8)]) }
}

/// All capture suites, run one at a time: the heap-growth test reads a process-wide counter.
@Suite(.serialized) struct CaptureTests {}
