import Testing
import Foundation
import BluesiftWire
@testable import BluesiftPlugins

/// Issue 41's start-up cache (`PluginIndexCache`): what it gives back is what the quick read of
/// the YAML gives, and a stale, corrupt or foreign file changes nothing but the time.
@Suite struct PluginIndexCacheTests {
    static func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("index-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func shippedFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: Fixtures.pluginsDir).filter(PluginLoader.isPluginFile).sorted()
            .map { Fixtures.pluginsDir + "/" + $0 }
    }

    /// Every shipped plugin's quick read (advertising, GATT and channel rules), written and read
    /// back: equal, field for field.
    @Test func shippedPluginsRoundTrip() throws {
        var entries: [String: (stamp: PluginIndexCache.Stamp, entry: PluginIndexCache.Entry)] = [:]
        for path in try Self.shippedFiles() {
            let data = try #require(FileManager.default.contents(atPath: path))
            let info = try #require(PluginLoader.stubInfo(yaml: String(decoding: data, as: UTF8.self), path: path), "\(path)")
            entries[path] = (PluginIndexCache.stamp(data), .stub(info))
        }
        #expect(entries.count >= 70)
        let text = PluginIndexCache.encode(entries, salt: "s1")
        let back = try #require(PluginIndexCache.decode(Data(text.utf8), salt: "s1"))
        #expect(back.count == entries.count)
        for (path, e) in entries {
            #expect(back[path]?.stamp == e.stamp, "\(path)")
            #expect(back[path]?.entry == e.entry, "\(path)")
        }
        // Another executable's file is not read.
        #expect(PluginIndexCache.decode(Data(text.utf8), salt: "s2") == nil)
    }

    /// Loaded through the cache (written by the first load, read by the second), the stubs are
    /// those loaded without one; the second load computes nothing.
    @Test func loadThroughCacheGivesSameStubs() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("plugin-index").path
        let plain = try Self.shippedFiles().map { try PluginLoader.load(file: $0, onUse: true) }
        let first = PluginIndexCache(file: file, salt: "t")
        let written = try Self.shippedFiles().map { try PluginLoader.load(file: $0, onUse: true, cache: first) }
        #expect(first.changed)
        first.save()
        #expect(FileManager.default.fileExists(atPath: file))
        let second = PluginIndexCache(file: file, salt: "t")
        #expect(second.entries.count == plain.count)
        let read = try Self.shippedFiles().map { try PluginLoader.load(file: $0, onUse: true, cache: second) }
        #expect(!second.changed)
        for (p, (w, r)) in zip(plain, zip(written, read)) {
            for q in [w, r] {
                #expect(q.id == p.id && q.idLine == p.idLine && q.matches == p.matches, "\(p.id)")
                #expect(q.contextUse == p.contextUse && q.decrypts == p.decrypts && q.isStub == p.isStub, "\(p.id)")
            }
        }
    }

    static let v1 = """
        id: v
        match:
          - { company: 0x0059, prefix: "01" }
        frame:
          - { id: x, type: u1 }
        """

    /// A plugin edited since the cache was written is read afresh; a damaged cache file is
    /// ignored (and rewritten).
    @Test func staleOrCorruptCacheIsIgnored() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("plugin-index").path
        let plugin = dir.appendingPathComponent("v.yaml")
        try Self.v1.write(to: plugin, atomically: true, encoding: .utf8)
        let c1 = PluginIndexCache(file: file, salt: "t")
        #expect(try PluginLoader.load(file: plugin.path, onUse: true, cache: c1).matches[0].advertising?.prefix == [0x01])
        c1.save()
        try Self.v1.replacingOccurrences(of: "\"01\"", with: "\"02\"").write(to: plugin, atomically: true, encoding: .utf8)
        let c2 = PluginIndexCache(file: file, salt: "t")
        #expect(c2.entries.count == 1)
        #expect(try PluginLoader.load(file: plugin.path, onUse: true, cache: c2).matches[0].advertising?.prefix == [0x02])
        #expect(c2.changed)
        c2.save()
        // Damaged: a rule line cut short.
        var text = try String(contentsOfFile: file, encoding: .utf8)
        text = String(text.dropLast(8)) + "\n"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let c3 = PluginIndexCache(file: file, salt: "t")
        #expect(c3.entries.isEmpty)
        #expect(try PluginLoader.load(file: plugin.path, onUse: true, cache: c3).matches[0].advertising?.prefix == [0x02])
        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: file))
        #expect(PluginIndexCache(file: file, salt: "t").entries.isEmpty)
    }

    /// `$BLUESIFT_CACHE_DIR` names the folder, empty turns the cache off; XDG's folder next.
    /// The file is named by the executable's stamp.
    @Test func cacheFolderFromEnvironment() {
        let name = PluginIndexCache.fileName(salt: "e")
        #expect(name.hasPrefix("plugin-index-") && name != PluginIndexCache.fileName(salt: "f"))
        #expect(PluginIndexCache.open(environment: ["BLUESIFT_CACHE_DIR": "/c", "HOME": "/h"], salt: "e")?.file == "/c/" + name)
        #expect(PluginIndexCache.open(environment: ["BLUESIFT_CACHE_DIR": "", "HOME": "/h"], salt: "e") == nil)
        #expect(PluginIndexCache.open(environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"], salt: "e")?.file == "/x/bluesift/" + name)
        #expect(PluginIndexCache.open(environment: ["HOME": "/h"], salt: "e")?.file == "/h/.cache/bluesift/" + name)
        #expect(PluginIndexCache.open(environment: [:], salt: "e") == nil)
    }

    /// Two executables run in turn each keep their file (one file for all made each re-read
    /// every plugin); a folder keeps the last `filesKept` written, and loses the single file of
    /// earlier versions.
    @Test func oneFilePerExecutableBounded() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["BLUESIFT_CACHE_DIR": dir.path]
        let plugin = dir.appendingPathComponent("v.yaml").path
        try Self.v1.write(toFile: plugin, atomically: true, encoding: .utf8)
        try "bluesift plugin index 1\told\n".write(toFile: dir.appendingPathComponent("plugin-index").path, atomically: true, encoding: .utf8)
        // One run of executable `salt`: whether it had to read the plugin afresh (and write).
        func run(_ salt: String) throws -> Bool {
            let c = try #require(PluginIndexCache.open(environment: env, salt: salt))
            #expect(try PluginLoader.load(file: plugin, onUse: true, cache: c).matches[0].advertising?.prefix == [0x01])
            let wrote = c.changed
            c.save()
            return wrote
        }
        func files() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("plugin-index") }.sorted()
        }
        // The write times are set one second apart (a fast machine writes several in one tick).
        func age(_ salt: String, _ seconds: Double) throws {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -seconds)], ofItemAtPath: dir.path + "/" + PluginIndexCache.fileName(salt: salt))
        }
        #expect(try run("a"))
        try age("a", 100)
        #expect(try files() == [PluginIndexCache.fileName(salt: "a")])
        #expect(try run("b"))
        try age("b", 90)
        // a's entries are still there: its next run reads them and writes nothing.
        #expect(try !run("a"))
        #expect(try !run("b"))
        #expect(try files() == [PluginIndexCache.fileName(salt: "a"), PluginIndexCache.fileName(salt: "b")].sorted())
        for (i, s) in ["c", "d", "e"].enumerated() {
            #expect(try run(s))
            try age(s, 80 - Double(i))
        }
        // Five written, four kept: a (the oldest write) went.
        #expect(try files() == ["b", "c", "d", "e"].map { PluginIndexCache.fileName(salt: $0) }.sorted())
        #expect(try run("a")) // read afresh and written again; b is now the oldest
        #expect(try files() == ["a", "c", "d", "e"].map { PluginIndexCache.fileName(salt: $0) }.sorted())
    }
}
