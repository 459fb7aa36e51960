import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds, reads and compiles plugins. A broken plugin is reported and skipped; it never
/// stops the others from loading.
public enum PluginLoader {
    public static func compile(yaml: String, path: String) throws(PluginError) -> Plugin {
        var c = PluginCompiler(path: path)
        return try c.compile(yaml: yaml)
    }

    public static func load(file path: String) throws(PluginError) -> Plugin {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PluginError(path: path, line: 0, message: "cannot read the plugin file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            let (line, offset) = firstInvalidUTF8(Array(data))
            throw PluginError(path: path, line: line, message: "not UTF-8 text (invalid byte at offset \(offset))")
        }
        return try compile(yaml: text, path: path)
    }

    /// Line (1-based) and byte offset of the first byte that is not valid UTF-8.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> (line: Int, offset: Int) {
        var parser = Unicode.UTF8.ForwardParser()
        var it = bytes.makeIterator()
        var offset = 0, line = 1
        while true {
            switch parser.parseScalar(from: &it) {
            case .valid(let s):
                if s.count == 1 && s.first == 0x0A { line += 1 }
                offset += s.count
            case .error(let length):
                _ = length
                return (line, offset)
            case .emptyInput:
                return (line, offset)
            }
        }
    }

    public struct Loaded: Sendable {
        public var plugins: [Plugin] = []
        public var errors: [PluginError] = []
    }

    /// `*.yaml` / `*.yml` files of each directory, sorted by name; an entry that is a plugin
    /// file itself is loaded as it is. Entries earlier in the list win when two plugins share
    /// an id; missing directories are ignored.
    public static func load(directories: [String]) -> Loaded { load(directories: directories, onUse: false) }

    static func load(directories: [String], onUse: Bool) -> Loaded {
        var out = Loaded()
        let cache = onUse ? PluginIndexCache.open() : nil
        defer { cache?.save() }
        var ids = Set<String>()
        var seenFiles = Set<String>()
        for dir in directories {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else { continue }
            let paths: [String]
            if isDir.boolValue {
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
                paths = names.sorted().filter(isPluginFile).map { (dir as NSString).appendingPathComponent($0) }
            } else {
                paths = [dir]
            }
            // Within one folder two plugins with one id are an error (the second would shadow
            // the first silently); across folders the earlier folder wins, as documented.
            var here: [String: Plugin] = [:]
            for path in paths {
                let real = realPath(path)
                guard seenFiles.insert(real).inserted else { continue }
                do {
                    let p = try load(file: path, onUse: onUse, cache: cache)
                    if let first = here[p.id] {
                        out.errors.append(
                            PluginError(
                                path: path, line: p.idLine,
                                message: "duplicate plugin id '\(p.id)': already defined by \(first.path):\(first.idLine)"))
                        continue
                    }
                    here[p.id] = p
                    if ids.insert(p.id).inserted { out.plugins.append(p) }
                } catch {
                    out.errors.append(error)
                }
            }
        }
        return out
    }

    public static func isPluginFile(_ name: String) -> Bool { name.hasSuffix(".yaml") || name.hasSuffix(".yml") }

    /// The file's path with every link resolved (the path itself when that fails): libc's
    /// `realpath`, a tenth of NSString's `resolvingSymlinksInPath` (7 % of a start's plugin
    /// cost for 72 files).
    static func realPath(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }

    /// Where plugins are looked for, first wins: `extra` (--plugins), $BLUESIFT_PLUGINS
    /// (colon-separated), `<exe dir>/../share/bluesift/Plugins`, and the repository's
    /// Plugins/ when the executable runs from `.build`.
    public static func searchPath(
        executable: String, extra: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        var dirs = extra
        if let env = environment["BLUESIFT_PLUGINS"] {
            dirs += env.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        }
        let exe = URL(fileURLWithPath: executable).resolvingSymlinksInPath()
        let exeDir = exe.deletingLastPathComponent()
        dirs.append(exeDir.deletingLastPathComponent().appendingPathComponent("share/bluesift/Plugins").path)
        let comps = exe.pathComponents
        if let i = comps.lastIndex(where: { $0 == ".build" || $0.hasPrefix(".build-") || $0.hasPrefix(".build_") }) {
            let repo = NSString.path(withComponents: Array(comps[0..<i]))
            dirs.append((repo as NSString).appendingPathComponent("Plugins"))
        }
        return dirs
    }
}
