import Foundation
import Synchronization
import Yams

/// A plugin read at start only as far as a set indexes it (id and match rules), compiled in
/// full when a record first reaches one of its rules: compiling the 73 shipped plugins was
/// 85 ms of a dump's start (the bundled 151-record capture took 106 ms against 22 ms without
/// plugins), and a capture usually meets few of them. GATT and channel plugins too (five
/// compiled at start were a third of what the plugins still cost it). Shared by every set
/// built from the same list (`--jobs` threads too): compiled once.
final class PendingPlugin: Sendable {
    let yaml: String
    let path: String
    let state = Mutex<Result<Plugin, PluginError>?>(nil)

    init(yaml: String, path: String) { self.yaml = yaml; self.path = path }

    /// The compiled plugin; a failure is reported once (`PluginLoader.lateErrors`).
    func compiled() -> Result<Plugin, PluginError> {
        let (r, first) = state.withLock { s -> (Result<Plugin, PluginError>, Bool) in
            if let s { return (s, false) }
            let r: Result<Plugin, PluginError>
            do throws(PluginError) { r = .success(try PluginLoader.compile(yaml: yaml, path: path)) } catch { r = .failure(error) }
            s = r
            return (r, true)
        }
        if first, case .failure(let e) = r { PluginLoader.lateErrors.withLock { $0?(e) } }
        return r
    }
}

extension Plugin {
    /// The plugin itself, compiled if it is a stub (nil: that failed).
    public var resolved: Plugin? {
        guard let pending else { return self }
        return try? pending.compiled().get()
    }
}

extension PluginLoader {
    /// Where a plugin that fails when compiled on first use is reported (the command line
    /// prints it as a warning, as it prints the errors `load` returns).
    public static let lateErrors = Mutex<(@Sendable (PluginError) -> Void)?>(nil)

    /// As `load(directories:)`, plugins compiled on first use (`PendingPlugin`): at start only
    /// their id and match rules are read, from the user's cache of them when it holds the file
    /// as it is (`PluginIndexCache`). A file the quick read cannot split into top-level keys is
    /// compiled at once.
    public static func loadOnUse(directories: [String]) -> Loaded {
        load(directories: directories, onUse: true)
    }

    /// The plugin of a file, compiled, or (`onUse`) its stub, through `cache` when given.
    static func load(file path: String, onUse: Bool, cache: PluginIndexCache? = nil) throws(PluginError) -> Plugin {
        // The standard library's UTF-8 check (Foundation's `String(data:encoding:)` was 15 % of
        // a start's plugin cost; a file with a byte order mark still goes through it, as
        // before); invalid text is reported by `load(file:)`.
        guard onUse, let data = FileManager.default.contents(atPath: path),
            let text = data.starts(with: [0xEF, 0xBB, 0xBF]) ? String(data: data, encoding: .utf8) : String(validating: data, as: UTF8.self)
        else { return try load(file: path) }
        let stamp = cache.map { _ in PluginIndexCache.stamp(data) }
        let info: StubInfo?
        if let cache, let stamp, let known = cache.lookup(path, stamp) {
            if case .stub(let s) = known { info = s } else { info = nil }
        } else {
            info = stubInfo(yaml: text, path: path)
            if let cache, let stamp { cache.record(path, stamp, info.map { .stub($0) } ?? .compile) }
        }
        guard let info else { return try compile(yaml: text, path: path) }
        return stub(info, yaml: text, path: path)
    }

    /// The stub of a plugin (nil: compiled at start).
    static func stub(yaml: String, path: String) -> Plugin? {
        stubInfo(yaml: yaml, path: path).map { stub($0, yaml: yaml, path: path) }
    }

    static func stub(_ s: StubInfo, yaml: String, path: String) -> Plugin {
        var p = Plugin(
            id: s.id, name: s.id, path: path, reference: nil, matches: s.matches, framing: nil, rules: [], examples: [],
            types: [], enums: [], frameType: 0, defaultMessage: "")
        p.idLine = s.idLine
        p.pending = PendingPlugin(yaml: yaml, path: path)
        p.contextUse = s.contextUse
        p.decrypts = s.decrypts
        return p
    }

    /// What a stub holds: id, match rules, and what it may read of the advertising context
    /// (from its text: a superset, so a decode cached before it is compiled keys on no less).
    /// nil when the file is not split simply into top-level keys or its rules do not compile:
    /// then it is compiled at start, as before, errors and all.
    static func stubInfo(yaml: String, path: String) -> StubInfo? {
        guard let keep = topLevelBlocks(yaml, keep: ["id", "match"]) else { return nil }
        let c = PluginCompiler(path: path)
        guard let root = try? Yams.compose(yaml: keep, .basic), let top = root.mapping,
            let idNode = top[k: "id"], let id = idNode.scalar?.string, !id.isEmpty,
            id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }),
            let matchNode = top[k: "match"], let matches = try? c.compileMatches(matchNode), !matches.isEmpty
        else { return nil }
        let said = mentioned(yaml, PluginCompiler.contextNames.union(["_name", "decrypt"]))
        var s = StubInfo(id: id, idLine: idNode.mark?.line ?? 0, matches: matches, contextUse: said.subtracting(["decrypt"]), decrypts: false)
        if said.contains("decrypt") { s.decrypts = true; s.contextUse.insert("_address") }
        return s
    }

    /// `name` as a word of the text (not inside a longer identifier before it).
    static func mentions(_ text: String, _ name: String) -> Bool { mentioned(text, [name]).contains(name) }

    /// Which of `names` start a word of the text (not inside a longer identifier before
    /// them): one pass over the bytes, each word start compared in place (a pass per name,
    /// eight per plugin, was a tenth of start-up with every plugin).
    static func mentioned(_ text: String, _ names: Set<String>) -> Set<String> {
        let wanted = names.map { Array($0.utf8) }.filter { !$0.isEmpty }
        var firsts = [Bool](repeating: false, count: 256)
        for n in wanted { firsts[Int(n[0])] = true }
        var found = Set<String>()
        var t = text
        t.withUTF8 { b in
            var i = 0
            while i < b.count {
                let c = b[i]
                if firsts[Int(c)], i == 0 || !isIdentifierByte(b[i - 1]) {
                    for n in wanted where n[0] == c && i + n.count <= b.count {
                        var k = 1
                        while k < n.count, b[i + k] == n[k] { k += 1 }
                        if k == n.count { found.insert(String(decoding: n, as: UTF8.self)) }
                    }
                }
                i += 1
            }
        }
        return found
    }

    static func isIdentifierByte(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x5F || c >= 0x80
    }

    /// The text with only the top-level blocks named in `keep`, other lines blank (so YAML
    /// marks keep their line numbers). nil unless every line is blank, a comment, indented, a
    /// compact list item, or a plain `key:` at the margin, and each kept key is there once.
    static func topLevelBlocks(_ yaml: String, keep: Set<String>) -> String? {
        // Bytes, not Characters: splitting the text into Substrings was a quarter of start-up.
        let b = Array(yaml.utf8)
        var out = [UInt8](repeating: 0x0A, count: 0)
        out.reserveCapacity(b.count)
        var keeping = false
        var seen = Set<String>()
        var start = 0
        while start <= b.count {
            var end = start
            while end < b.count, b[end] != 0x0A { end += 1 }
            let line = b[start..<end]
            if let c = line.first, c != 0x20, c != 0x23, c != 0x0D,
                !(c == 0x2D && (line.count == 1 || line[line.startIndex + 1] == 0x20))
            {
                // A key at the margin: letters, digits and '_', then ':' and a space or the end.
                guard let colon = line.firstIndex(of: 0x3A),
                    line[..<colon].allSatisfy({ isIdentifierByte($0) && $0 < 0x80 }),
                    colon + 1 == end || b[colon + 1] == 0x20 || b[colon + 1] == 0x0D
                else { return nil }
                let key = String(decoding: line[..<colon], as: UTF8.self)
                guard seen.insert(key).inserted else { return nil }
                keeping = keep.contains(key)
            } else if line.first == 0x2D, !keeping, seen.isEmpty {
                return nil
            }
            if keeping { out += line }
            if end < b.count { out.append(0x0A) }
            start = end + 1
        }
        guard keep.isSubset(of: seen) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }
}
