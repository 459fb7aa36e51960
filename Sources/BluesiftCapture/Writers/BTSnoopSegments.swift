import Foundation

/// A live recording in btsnoop (datalink 1002, the tap's; 2001, `capture`'s): one file, or numbered segments FILE.1, FILE.2, … of at
/// most `rotateSize` bytes. Each goes through `AtomicFile` (BTSnoopWriter): written as a
/// temporary file and renamed into place whole, when the next segment starts or at the end.
public final class BTSnoopSegments {
    public static let headerSize = 16
    public let base: String
    public let rotateSize: Int?
    /// Why a file may not be written (it is an input), or nil: the caller's check.
    let refuse: (String) -> String?
    /// Linux monitor (datalink 2001) files, written with `writeMonitor`.
    public let monitor: Bool
    private var writer: BTSnoopWriter?
    private var size = 0
    private var inSegment = 0
    public private(set) var files: [String] = []
    public private(set) var records = 0
    /// Why recording stopped, if it did (the tap forwards on).
    public private(set) var failure: String?

    public init(base: String, rotateSize: Int?, monitor: Bool = false, refuse: @escaping (String) -> String? = { _ in nil }) {
        self.base = base; self.rotateSize = rotateSize; self.monitor = monitor; self.refuse = refuse
    }

    private var nextName: String { rotateSize == nil ? base : "\(base).\(files.count + 1)" }

    /// Opens the first file now, so an unwritable place is said before anything connects.
    /// With rotation, the numbered segments of an earlier recording under the same name are
    /// removed (as -w FILE replaces FILE): left, `FILE.*` would mix two sessions. Only files
    /// named FILE.N that are btsnoop files go; their names are returned, to be said.
    public func start() throws(SegmentError) -> [String] {
        try open()
        guard rotateSize != nil else { return [] }
        let url = URL(fileURLWithPath: base)
        let dir = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + "."
        var stale: [(Int, String)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where name.hasPrefix(prefix) {
            let n = name.dropFirst(prefix.count)
            guard !n.isEmpty, n.allSatisfy(\.isASCII), n.allSatisfy(\.isNumber), let k = Int(n) else { continue }
            let path = dir + "/" + name
            guard let h = FileHandle(forReadingAtPath: path) else { continue }
            let magic = (try? h.read(upToCount: 8)) ?? Data()
            try? h.close()
            guard magic == Data("btsnoop\0".utf8) else { continue }
            if (try? FileManager.default.removeItem(atPath: path)) != nil { stale.append((k, path)) }
        }
        return stale.sorted { $0.0 < $1.0 }.map(\.1)
    }

    private func open() throws(SegmentError) {
        let name = nextName
        if let why = refuse(name) { throw SegmentError(message: why) }
        do {
            writer = try BTSnoopWriter(path: name, monitor: monitor)
        } catch {
            throw SegmentError(message: error.description)
        }
        files.append(name)
        size = Self.headerSize
        inSegment = 0
    }

    public func write(_ r: CaptureRecord) {
        append(need: 24 + 1 + r.bytes.count) { w throws(CaptureError) in try w.write(r) } // record header, H4 indicator, packet
    }

    /// A Linux monitor packet as the kernel gave it (`capture`; a monitor recording).
    public func writeMonitor(adapter: UInt16, opcode: UInt16, timestamp: Timestamp, payload: UnsafeRawBufferPointer) {
        append(need: 24 + payload.count) { w throws(CaptureError) in
            try w.writeMonitor(adapter: adapter, opcode: opcode, timestamp: timestamp, payload: payload)
        }
    }

    private func append(need: Int, _ body: (BTSnoopWriter) throws(CaptureError) -> Void) {
        guard failure == nil, writer != nil else { return }
        do throws(SegmentError) {
            if let limit = rotateSize, inSegment > 0, size + need > limit {
                try commit()
                try open()
            }
            do throws(CaptureError) { if let w = writer { try body(w) } } catch { throw SegmentError(message: error.description) }
            size += need
            inSegment += 1
            records += 1
        } catch {
            failure = error.message + " (recording stopped; forwarding went on)"
            if writer != nil { files.removeLast() } // its temporary file goes with it
            writer = nil
        }
    }

    private func commit() throws(SegmentError) {
        guard let w = writer else { return }
        writer = nil
        do { try w.finish() } catch { throw SegmentError(message: error.description) }
    }

    public func finish() {
        do throws(SegmentError) { try commit() } catch {
            if failure == nil { failure = error.message }
        }
    }

    public func describeFiles() -> String {
        files.count == 1 ? files[0] : "\(files.count) files, \(files[0]) … \(files[files.count - 1])"
    }
}

public struct SegmentError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
