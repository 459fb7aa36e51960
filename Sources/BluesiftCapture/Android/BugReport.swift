import Foundation
import ZIPFoundation
import BluesiftWire

/// An Android bug report, `bugreport-*.zip` or its main `bugreport-*.txt`, and the Bluetooth
/// logs in it, each offered as a capture:
/// - the btsnooz section of `dumpsys bluetooth_manager` (between `--- BEGIN:BTSNOOP_LOG_SUMMARY`
///   and `--- END:BTSNOOP_LOG_SUMMARY`, base64 lines), decoded by ``BTSnoozReader``;
/// - full snoop logs (btsnoop_hci.log, .last, .filtered, vendors' .cfa, pcap, PacketLogger,
///   compressed ones), found by their content wherever the vendor put them
///   (FS/data/misc/bluetooth/logs/, FS/data/log/bt/, ...), not by their path.
/// Zip entries are read with ZIPFoundation into unlinked temporary files, so memory stays flat.
public final class BugReport {
    public struct Log: Sendable, Hashable {
        /// The zip entry's path, or "btsnooz" (+ "@entry" inside a zip; "-2"... when several).
        public var name: String
        /// Where it is: the zip entry holding it (nil: the text file itself).
        public var entry: String?
        public var isBTSnooz: Bool
        /// Uncompressed bytes of the entry (snoop logs) or of the decoded section (btsnooz).
        public var size: Int
    }

    public let path: String
    public private(set) var logs: [Log] = []
    private let archive: Archive?

    static let begin = Array("--- BEGIN:BTSNOOP_LOG_SUMMARY".utf8)
    static let end = Array("--- END:BTSNOOP_LOG_SUMMARY".utf8)
    static let zipMagic: [UInt8] = [0x50, 0x4B, 0x03, 0x04]

    /// Whether the file at hand is a bug report: a zip archive, or text with a btsnooz section.
    static func isBugReport(_ file: MappedFile) -> Bool {
        let b = file.bytes
        if b.count >= 4 && b.prefix(4).elementsEqual(zipMagic) { return true }
        return find(begin, in: b, from: 0) != nil
    }

    public init(path: String) throws(CaptureError) {
        self.path = path
        let file = try MappedFile(path: path)
        if file.bytes.count >= 4, file.bytes.prefix(4).elementsEqual(Self.zipMagic) {
            let a: Archive
            do { a = try Archive(url: URL(fileURLWithPath: path), accessMode: .read) } catch {
                throw CaptureError(.notACapture, path: path, "not a readable zip archive: \(error)")
            }
            archive = a
            for entry in a where entry.type == .file {
                scanEntry(entry)
            }
        } else {
            archive = nil
            for (i, s) in Self.sections(in: file.bytes).enumerated() {
                logs.append(Log(name: i == 0 ? "btsnooz" : "btsnooz-\(i + 1)", entry: nil, isBTSnooz: true, size: s.count))
            }
        }
        if logs.isEmpty {
            throw CaptureError(.notACapture, path: path, "bug report without Bluetooth logs: no BTSNOOP_LOG_SUMMARY section and no snoop log inside")
        }
    }

    /// Sniffs one entry by its first bytes: a capture, or text that may hold btsnooz.
    private func scanEntry(_ entry: Entry) {
        guard let archive else { return }
        let head = Self.head(of: entry, in: archive)
        guard !head.isEmpty else { return }
        let known = head.withUnsafeBytes { b -> Bool in
            if Compression.detect(b) != nil { return true }
            if case .unknown = CaptureFile.sniff(b) { return false }
            if case .empty = CaptureFile.sniff(b) { return false }
            return true
        }
        if known {
            logs.append(Log(name: entry.path, entry: entry.path, isBTSnooz: false, size: Int(entry.uncompressedSize)))
            return
        }
        // Text (no NUL in the head): look for btsnooz sections.
        guard !head.contains(0), let tmp = try? extract(entry) else { return }
        defer { unlink(tmp.path) }
        for (i, s) in Self.sections(in: tmp.file.bytes).enumerated() {
            let base = i == 0 ? "btsnooz" : "btsnooz-\(i + 1)"
            logs.append(Log(name: "\(base)@\(entry.path)", entry: entry.path, isBTSnooz: true, size: s.count))
        }
    }

    private static func head(of entry: Entry, in archive: Archive) -> [UInt8] {
        struct Enough: Error {}
        var out: [UInt8] = []
        _ = try? archive.extract(entry, bufferSize: 4096, skipCRC32: true) { data in
            out.append(contentsOf: data.prefix(4096 - out.count))
            if out.count >= 4096 { throw Enough() }
        }
        return out
    }

    /// The entry in an unlinked-on-close temporary file, mapped.
    private func extract(_ entry: Entry) throws(CaptureError) -> (path: String, file: MappedFile) {
        guard let archive else { throw CaptureError(.notFound, path: path, "not a zip") }
        var name = Array("/tmp/bluesift-bugreport-XXXXXX".utf8CString)
        let fd = name.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw CaptureError(.unreadable, path: path, "cannot make a temporary file") }
        let tmp = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { close(fd) }
        do {
            _ = try archive.extract(entry, bufferSize: 1 << 20) { data in
                if data.withUnsafeBytes({ WriteAll.write(fd, $0) }) != 0 {
                    throw CaptureError(.unreadable, path: tmp, "cannot write a temporary file")
                }
            }
        } catch {
            unlink(tmp)
            throw CaptureError(.unreadable, path: "\(path):\(entry.path)", "cannot extract from the zip: \(error)")
        }
        do { return (tmp, try MappedFile(path: tmp)) } catch { unlink(tmp); throw error }
    }

    /// The log named `name` (a log's name, or a unique suffix of it: "btsnoop_hci.log.last").
    public func log(named name: String) -> Log? {
        if let l = logs.first(where: { $0.name == name }) { return l }
        let m = logs.filter { $0.name.hasSuffix("/" + name) || $0.name.hasPrefix(name + "@") }
        return m.count == 1 ? m[0] : nil
    }

    /// A reader for one log. Errors name it as `report.zip:NAME`.
    public func reader(for log: Log) throws(CaptureError) -> any CaptureReader {
        let label = "\(path):\(log.name)"
        let source: MappedFile
        var tmp: String?
        if let entry = log.entry, let e = archive?[entry] {
            let x = try extract(e)
            source = x.file
            tmp = x.path
        } else {
            source = try MappedFile(path: path)
        }
        defer { if let tmp { unlink(tmp) } } // mapped (or opened by libpcap) already
        if log.isBTSnooz {
            let index = log.name.split(separator: "@")[0].split(separator: "-").last.flatMap { Int($0) } ?? 1
            let sections = Self.sections(in: source.bytes)
            guard index - 1 < sections.count else { throw CaptureError(.notFound, path: label, "no such btsnooz section") }
            guard let snooz = Data(base64Encoded: sections[index - 1], options: .ignoreUnknownCharacters) else {
                throw CaptureError(.notACapture, path: label, "btsnooz section is not valid base64")
            }
            return try BTSnoozReader(snooz: Array(snooz), path: label)
        }
        guard let tmp else { throw CaptureError(.notFound, path: label, "no such entry") }
        do throws(CaptureError) {
            return try CaptureFile.open(path: tmp)
        } catch {
            throw CaptureError(error.code, path: label, error.message)
        }
    }

    /// The base64 text of each btsnooz section (lines between the markers, whitespace removed).
    static func sections(in b: UnsafeRawBufferPointer) -> [String] {
        var out: [String] = []
        var from = 0
        while let s = find(begin, in: b, from: from) {
            guard let lineEnd = find([0x0A], in: b, from: s) else { break }
            let stop = find(end, in: b, from: lineEnd) ?? b.count
            var text = [UInt8]()
            text.reserveCapacity(stop - lineEnd)
            for c in b[lineEnd..<stop] where c > 0x20 { text.append(c) }
            // A line of the END marker that starts mid-line: drop its leading dashes.
            while text.last == 0x2D { text.removeLast() }
            out.append(String(decoding: text, as: UTF8.self))
            from = stop
        }
        return out
    }

    static func find(_ needle: [UInt8], in b: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard needle.count > 0, b.count >= needle.count else { return nil }
        let first = needle[0]
        var i = from
        let last = b.count - needle.count
        while i <= last {
            if b[i] == first {
                var j = 1
                while j < needle.count && b[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }
}
