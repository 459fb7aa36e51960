import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftFuzz
#if canImport(Glibc)
    import Glibc
#endif

/// Little builders for damaged files, written byte by byte (no writer of ours involved, so a
/// writer bug cannot hide a reader bug).
enum Bytes {
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { be32(v).reversed() }
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func be64(_ v: UInt64) -> [UInt8] { be32(UInt32(v >> 32)) + be32(UInt32(v & 0xFFFF_FFFF)) }

    /// btsnoop file header, datalink 1002 (H4).
    static func btsnoopHeader(datalink: UInt32 = 1002) -> [UInt8] { Array("btsnoop\0".utf8) + be32(1) + be32(datalink) }
    /// btsnoop record; `included`/`original` override the lengths the header claims.
    static func btsnoopRecord(
        _ data: [UInt8], received: Bool = false, command: Bool = false,
        included: UInt32? = nil, original: UInt32? = nil, frame: UInt64 = 1
    ) -> [UInt8] {
        let flags: UInt32 = (received ? 1 : 0) | (command ? 2 : 0)
        let ts: UInt64 = 0x00E0_3BB0_6C7D_8000 + frame * 1000 // 2023, in btsnoop's year-0 epoch
        return be32(original ?? UInt32(data.count)) + be32(included ?? UInt32(data.count)) + be32(flags) + be32(0)
            + be64(ts) + data
    }

    /// pcap (little-endian, µs) header and record.
    static func pcapHeader(linktype: UInt32 = 201) -> [UInt8] {
        le32(0xA1B2_C3D4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(65535) + le32(linktype)
    }
    static func pcapRecord(_ data: [UInt8], included: UInt32? = nil, original: UInt32? = nil) -> [UInt8] {
        le32(1_700_000_000) + le32(0) + le32(included ?? UInt32(data.count)) + le32(original ?? UInt32(data.count)) + data
    }
    /// DLT 201 payload: 4-byte direction (big-endian, 1 = received) + H4.
    static func phdr(_ h4: [UInt8], received: Bool = false) -> [UInt8] { be32(received ? 1 : 0) + h4 }

    /// PacketLogger record (big-endian): length, seconds, microseconds, type, payload.
    static func pklg(_ type: UInt8, _ payload: [UInt8], secs: UInt32 = 1_700_000_000, length: UInt32? = nil) -> [UInt8] {
        be32(length ?? UInt32(9 + payload.count)) + be32(secs) + be32(0) + [type] + payload
    }

    /// pcapng blocks in either byte order.
    struct Pcapng {
        var big = false
        func u16(_ v: UInt16) -> [UInt8] { big ? le16(v).reversed() : le16(v) }
        func u32(_ v: UInt32) -> [UInt8] { big ? be32(v) : le32(v) }
        func pad(_ b: [UInt8]) -> [UInt8] { b + [UInt8](repeating: 0, count: (4 - b.count % 4) % 4) }
        func block(_ type: UInt32, _ body: [UInt8], length: UInt32? = nil) -> [UInt8] {
            let body = pad(body)
            let n = length ?? UInt32(12 + body.count)
            return u32(type) + u32(n) + body + u32(n)
        }
        func shb() -> [UInt8] { block(0x0A0D_0D0A, u32(0x1A2B_3C4D) + u16(1) + u16(0) + [UInt8](repeating: 0xFF, count: 8)) }
        func idb(_ linktype: UInt16) -> [UInt8] { block(1, u16(linktype) + u16(0) + u32(0)) }
        func epb(_ iface: UInt32, _ data: [UInt8], us: UInt64 = 1_700_000_000_000_000) -> [UInt8] {
            block(
                6,
                u32(iface) + u32(UInt32(us >> 32)) + u32(UInt32(us & 0xFFFF_FFFF))
                    + u32(UInt32(data.count)) + u32(UInt32(data.count)) + data)
        }
    }

    // HCI packets (H4 indicator included) used across the tests.
    static let reset: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
    static let resetComplete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    /// ACL on handle 0x0040: `pb` 0b10 = first automatically flushable, 0b01 = continuation.
    static func acl(_ payload: [UInt8], handle: UInt16 = 0x0040, pb: UInt16 = 0b10, length: UInt16? = nil) -> [UInt8] {
        [0x02] + le16(handle | pb << 12) + le16(length ?? UInt16(payload.count)) + payload
    }
    /// Basic L2CAP frame on `cid`; `length` overrides the header's length field.
    static func l2cap(_ cid: UInt16, _ payload: [UInt8], length: UInt16? = nil) -> [UInt8] {
        le16(length ?? UInt16(payload.count)) + le16(cid) + payload
    }
}

/// Temporary files, removed at exit of the test process.
enum Temp {
    static let dir: URL = {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-malformed-\(getpid())")
        try? FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Temp.dir) }
        return d
    }()

    static func file(_ bytes: [UInt8], _ name: String = UUID().uuidString) -> String {
        let url = dir.appendingPathComponent(name)
        FileManager.default.createFile(atPath: url.path, contents: Data(bytes))
        return url.path
    }
}

/// What a test keeps of one analysed frame (the frame itself borrows the reader's bytes).
struct Seen {
    var frame: Int
    var kind: String
    var layers: Set<String>
    var errors: [DecodeError]
    var json: String
    var attOpcode: UInt8?

    init(_ a: AnalyzedFrame) {
        let d = a.decoded
        frame = a.record.frame
        kind = a.record.kind.name
        var l = Set<String>()
        if d.hci != nil { l.insert("hci") }
        if d.l2cap != nil { l.insert("l2cap") }
        if d.att != nil { l.insert("att") }
        if d.smp != nil { l.insert("smp") }
        if d.adv != nil { l.insert("adv") }
        if d.ll != nil { l.insert("ll") }
        layers = l
        errors = d.errors
        attOpcode = d.att?.bytes.first
        var w = JSONFieldWriter(capacity: 512)
        FrameJSON.write(a, into: &w)
        json = String(decoding: w.out, as: UTF8.self)
    }

    func hasError(layer: String, code: DecodeError.Code) -> Bool {
        errors.contains { $0.layer == layer && $0.code == code }
    }
}

/// Analyses H4 packets (indicator first) as one capture, in process. Records are made
/// directly, so a length field inside a packet may disagree with the record's size.
func analyze(_ packets: [(received: Bool, bytes: [UInt8])]) -> [Seen] {
    let analyzer = Analyzer(naming: true)
    var out: [Seen] = []
    for (i, p) in packets.enumerated() {
        let body = Array(p.bytes.dropFirst())
        body.withUnsafeBytes { buf in
            let r = CaptureRecord(
                frame: i + 1, timestamp: Timestamp(seconds: 1_700_000_000 + Int64(i)),
                direction: p.received ? .received : .sent,
                kind: PacketKind(rawValue: p.bytes[0]), bytes: buf, sourceType: UInt16(p.bytes[0]))
            out.append(Seen(analyzer.analyze(r)))
        }
    }
    return out
}

/// Runs the built `bluesift` binary and measures its peak resident set through GNU time, so a
/// reader that allocates what a length field claims shows up. (wait4's rusage is not enough:
/// posix_spawn shares this process's memory until exec, and the child inherits its high-water mark.)
enum CLI {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let binary = root.appendingPathComponent(".build/debug/bluesift").path

    struct Result { var status: Int32; var stdout: String; var stderr: String; var peakRSSKiB: Int }

    /// `killAfter`: seconds before coreutils' timeout kills it (exit 137), for tests of "never hangs".
    static func run(_ args: [String], killAfter: Int? = nil) throws -> Result {
        let out = Temp.dir.appendingPathComponent("cli-\(UUID().uuidString).out").path
        let err = out.replacingOccurrences(of: ".out", with: ".err")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let rssFile = out.replacingOccurrences(of: ".out", with: ".rss")
        let argv: [UnsafeMutablePointer<CChar>?] = (["/usr/bin/time", "-f", "%M", "-o", rssFile] + (killAfter.map { ["/usr/bin/timeout", "-s", "KILL", "\($0)"] } ?? []) + [binary] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/usr/bin/time", &actions, nil, argv, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        // Exit code, or 128 + signal for a trap (SIGILL/SIGTRAP from a Swift precondition).
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let o = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let e = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        let rss = (try? String(contentsOfFile: rssFile, encoding: .utf8))?.split(separator: "\n").last.flatMap { Int($0) } ?? -1
        unlink(out); unlink(err); unlink(rssFile)
        return Result(status: code, stdout: o, stderr: e, peakRSSKiB: rss)
    }
}
