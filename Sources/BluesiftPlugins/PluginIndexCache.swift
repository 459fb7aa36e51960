import BluesiftWire
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the quick read of a plugin file gives (`PluginLoader.stubInfo`): enough to index the
/// plugin in a set before it is compiled.
struct StubInfo: Equatable {
    var id: String
    var idLine: Int
    var matches: [PluginMatch]
    var contextUse: Set<String>
    var decrypts: Bool
}

/// The quick reads of plugin files kept between runs, so that a start reads no YAML and
/// compiles no name pattern (they were two thirds of the start-up cost of every plugin). One
/// text file in the user's cache folder; an entry holds for a path with the same size and
/// content hash, written by the same executable (its size and time): a stale entry is
/// recomputed, a corrupt or unreadable file is ignored, and a write that fails leaves the
/// plugins loading as without a cache.
final class PluginIndexCache {
    enum Entry: Equatable {
        case stub(StubInfo)
        /// The quick read gave up: the file is compiled at start.
        case compile
    }
    struct Stamp: Equatable { var size: Int; var hash: UInt64 }

    let file: String
    let salt: String
    private(set) var entries: [String: (stamp: Stamp, entry: Entry)] = [:]
    private(set) var changed = false

    init(file: String, salt: String) {
        self.file = file
        self.salt = salt
        if let data = FileManager.default.contents(atPath: file), let e = Self.decode(data, salt: salt) { entries = e }
    }

    /// The cache of this user and executable: `$BLUESIFT_CACHE_DIR` (empty: none), else
    /// `$XDG_CACHE_HOME/bluesift`, else `~/.cache/bluesift`.
    static func open(environment: [String: String] = ProcessInfo.processInfo.environment) -> PluginIndexCache? {
        let dir: String
        if let d = environment["BLUESIFT_CACHE_DIR"] {
            guard !d.isEmpty else { return nil }
            dir = d
        } else if let x = environment["XDG_CACHE_HOME"], x.hasPrefix("/") {
            dir = x + "/bluesift"
        } else if let h = environment["HOME"], h.hasPrefix("/") {
            dir = h + "/.cache/bluesift"
        } else {
            return nil
        }
        return PluginIndexCache(file: dir + "/plugin-index", salt: executableStamp())
    }

    /// Size and modification time of the running executable: another build reads afresh.
    static func executableStamp() -> String {
        var st = stat()
        guard stat("/proc/self/exe", &st) == 0 else { return "unknown" }
        return "\(st.st_size).\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }

    static func stamp(_ bytes: Data) -> Stamp {
        let h = bytes.withUnsafeBytes { DecodeCache.mix(0x6A09_E667_F3BC_C908, $0) }
        return Stamp(size: bytes.count, hash: h)
    }

    func lookup(_ path: String, _ stamp: Stamp) -> Entry? {
        guard let e = entries[path], e.stamp == stamp else { return nil }
        return e.entry
    }

    /// Keeps what the quick read gave; an entry that cannot be written as one line is not kept.
    func record(_ path: String, _ stamp: Stamp, _ entry: Entry) {
        guard Self.line(path, stamp, entry) != nil else { return }
        if let old = entries[path], old.stamp == stamp, old.entry == entry { return }
        entries[path] = (stamp, entry)
        changed = true
    }

    /// Writes the file when something changed (atomically: a reader sees the old or the new),
    /// without the entries of files gone since (a test's temporary plugins).
    func save() {
        guard changed else { return }
        entries = entries.filter { FileManager.default.fileExists(atPath: $0.key) }
        let dir = (file as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(Self.encode(entries, salt: salt).utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
            changed = false
        } catch {
            // No cache: the next run reads the plugins' YAML, as before.
        }
    }

    static let header = "bluesift plugin index 1"

    static func encode(_ entries: [String: (stamp: Stamp, entry: Entry)], salt: String) -> String {
        var out = header + "\t" + salt + "\n"
        for path in entries.keys.sorted() {
            let e = entries[path]!
            if let l = line(path, e.stamp, e.entry) { out += l }
        }
        return out
    }

    /// One entry: a P line, then an M line per match rule. nil when a text holds a tab or a
    /// line break (not written; the file is read afresh each run).
    static func line(_ path: String, _ stamp: Stamp, _ entry: Entry) -> String? {
        var fields = ["P", path, String(stamp.size), String(stamp.hash, radix: 16)]
        var rules: [[String]] = []
        switch entry {
        case .compile:
            fields.append("C")
        case .stub(let s):
            fields += ["S", s.id, String(s.idLine), s.decrypts ? "1" : "0", s.contextUse.sorted().joined(separator: ",")]
            for m in s.matches { rules.append(["M"] + matchFields(m)) }
        }
        var out = ""
        for f in [fields] + rules {
            guard !f.contains(where: { $0.contains(where: { $0 == "\t" || $0 == "\n" || $0 == "\r" }) }) else { return nil }
            out += f.joined(separator: "\t") + "\n"
        }
        return out
    }

    static func uuid(_ u: BluetoothUUID) -> String { u.longDescription }

    static func target(_ t: AdvertisingTarget) -> String {
        switch t {
        case .company(let c?): "c" + String(c)
        case .company(nil): "c-"
        case .serviceData(let u): "s" + uuid(u)
        }
    }

    static func matchFields(_ m: PluginMatch) -> [String] {
        var f = [
            m.service.map(uuid) ?? "-", uuid(m.characteristic), m.handle.map { String($0) } ?? "-",
            m.directions.map(\.rawValue).sorted().joined(separator: ",")
        ]
        switch m.channel {
        case nil: f.append("-")
        case .rfcomm(let c): f.append("r" + String(c))
        case .rfcommService(let n): f.append("s=" + n)
        case .psm(let p): f.append("p" + String(p))
        case .mesh(let c, let o): f.append("m" + String(c) + ":" + (o.map { String($0) } ?? "-"))
        }
        guard let a = m.advertising else { return f + ["-"] }
        f += [
            "+", target(a.target), Hex.string(a.prefix), Hex.string(a.prefixMask),
            a.size.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "-", a.name.map { "=" + $0 } ?? "-",
            a.uuid.map(uuid) ?? "-", a.withCompany ? "1" : "0", a.also.map { target($0.target) } ?? "-",
            a.also.map { Hex.string($0.prefix) } ?? ""
        ]
        return f
    }

    /// The entries of a file written by `encode` with this salt; nil when it is not one.
    static func decode(_ data: Data, salt: String) -> [String: (stamp: Stamp, entry: Entry)]? {
        guard let text = String(data: data, encoding: .utf8) else { return nil }
        var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: true).makeIterator()
        guard let first = lines.next(), String(Substring(first)) == header + "\t" + salt else { return nil }
        var out: [String: (stamp: Stamp, entry: Entry)] = [:]
        var current: (path: String, stamp: Stamp, info: StubInfo?)?
        func finish() {
            guard let c = current else { return }
            out[c.path] = (c.stamp, c.info.map { .stub($0) } ?? .compile)
            current = nil
        }
        while let l = lines.next() {
            let f = l.split(separator: 0x09, omittingEmptySubsequences: false).map { String(Substring($0)) }
            switch f.first {
            case "P":
                finish()
                guard f.count >= 5, let size = Int(f[2]), let hash = UInt64(f[3], radix: 16) else { return nil }
                let stamp = Stamp(size: size, hash: hash)
                if f[4] == "C", f.count == 5 {
                    current = (f[1], stamp, nil)
                } else if f[4] == "S", f.count == 9, let line = Int(f[6]), f[7] == "0" || f[7] == "1" {
                    let use = f[8].isEmpty ? [] : Set(f[8].split(separator: ",").map(String.init))
                    current = (f[1], stamp, StubInfo(id: f[5], idLine: line, matches: [], contextUse: use, decrypts: f[7] == "1"))
                } else {
                    return nil
                }
            case "M":
                guard current?.info != nil, let m = match(Array(f.dropFirst())) else { return nil }
                current!.info!.matches.append(m)
            default:
                return nil
            }
        }
        finish()
        // A stub without rules is not one the quick read makes: the file is damaged.
        for e in out.values { if case .stub(let s) = e.entry, s.matches.isEmpty { return nil } }
        return out
    }

    /// The dashed form `uuid` writes, read from its bytes (`BluetoothUUID(string:)` working on
    /// Characters was a sixth of a start read from the cache).
    static func parseUUID(_ s: String) -> BluetoothUUID? {
        var s = s
        return s.withUTF8 { b -> BluetoothUUID? in
            guard b.count == 36, b[8] == 0x2D, b[13] == 0x2D, b[18] == 0x2D, b[23] == 0x2D else { return nil }
            var v: [UInt64] = [0, 0]
            var n = 0
            for (i, c) in b.enumerated() where i != 8 && i != 13 && i != 18 && i != 23 {
                let d: UInt8
                switch c {
                case 0x30...0x39: d = c - 0x30
                case 0x61...0x66: d = c - 0x61 + 10
                default: return nil
                }
                v[n / 16] = v[n / 16] << 4 | UInt64(d)
                n += 1
            }
            return BluetoothUUID(high: v[0], low: v[1])
        }
    }

    static func parseTarget(_ s: String) -> AdvertisingTarget? {
        if s == "c-" { return .company(nil) }
        if s.hasPrefix("c"), let c = UInt16(s.dropFirst()) { return .company(c) }
        if s.hasPrefix("s"), let u = parseUUID(String(s.dropFirst())) { return .serviceData(u) }
        return nil
    }

    static func bytes(_ s: String) -> [UInt8]? { s.isEmpty ? [] : Hex.parse(s) }

    static func match(_ f: [String]) -> PluginMatch? {
        guard f.count == 6 || f.count == 15, let characteristic = parseUUID(f[1]) else { return nil }
        var m = PluginMatch(service: nil, characteristic: characteristic, handle: nil, directions: [])
        if f[0] != "-" {
            guard let s = parseUUID(f[0]) else { return nil }
            m.service = s
        }
        if f[2] != "-" {
            guard let h = UInt16(f[2]) else { return nil }
            m.handle = h
        }
        for d in f[3].split(separator: ",") {
            guard let v = PluginDirection(rawValue: String(d)) else { return nil }
            m.directions.insert(v)
        }
        let c = f[4]
        if c.hasPrefix("s=") {
            m.channel = .rfcommService(String(c.dropFirst(2)))
        } else if c.hasPrefix("r"), let v = UInt8(c.dropFirst()) {
            m.channel = .rfcomm(v)
        } else if c.hasPrefix("p"), let v = UInt16(c.dropFirst()) {
            m.channel = .psm(v)
        } else if c.hasPrefix("m"), case let t = c.dropFirst().split(separator: ":"), t.count == 2, let company = UInt16(t[0]),
            t[1] == "-" || UInt8(t[1]) != nil
        {
            m.channel = .mesh(company: company, opcode: UInt8(t[1]))
        } else if c != "-" {
            return nil
        }
        if f[5] == "-" { return f.count == 6 ? m : nil }
        guard f[5] == "+", f.count == 15, let t = parseTarget(f[6]), let prefix = bytes(f[7]), let mask = bytes(f[8]),
            f[12] == "0" || f[12] == "1"
        else { return nil }
        var a = AdvertisingMatch(target: t)
        a.prefix = prefix
        a.prefixMask = mask
        if f[9] != "-" {
            let r = f[9].split(separator: "-")
            guard r.count == 2, let lo = Int(r[0]), let hi = Int(r[1]), lo <= hi else { return nil }
            a.size = lo...hi
        }
        if f[10] != "-" {
            guard f[10].hasPrefix("=") else { return nil }
            a.name = String(f[10].dropFirst())
        }
        if f[11] != "-" {
            guard let u = parseUUID(f[11]) else { return nil }
            a.uuid = u
        }
        a.withCompany = f[12] == "1"
        if f[13] != "-" {
            guard let at = parseTarget(f[13]), let p = bytes(f[14]) else { return nil }
            a.also = AlsoFilter(target: at, prefix: p)
        }
        m.advertising = a
        return m
    }
}
