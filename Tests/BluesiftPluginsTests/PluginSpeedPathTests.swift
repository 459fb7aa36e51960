import Testing
import Foundation
import Synchronization
import BluesiftWire
@testable import BluesiftPlugins

/// What the fast paths of issue 41 must keep: plugins loaded for use (stubs compiled on first
/// use) take the same structures and decode the same as compiled ones; the decode cache keys on
/// the name a plugin reads; a record repeating a payload shares its result.
@Suite(.serialized) struct PluginSpeedPathTests {
    static func decode(_ set: PluginSet, _ hex: String, address: UInt64, name: String? = nil) -> (String, DecodedMessage)? {
        var ctx = AdvertisingContext()
        ctx.address = address; ctx.name = name
        let bytes = Hex.parse(hex.replacingOccurrences(of: " ", with: ""))!
        return bytes.withUnsafeBytes { v in
            set.decodeAdvertising(type: 0xFF, value: v, context: ctx, serviceUUIDs: { [] }).map { (set.plugins[$0.plugin].id, $0.message) }
        }
    }

    /// Every shipped advertising plugin: its stub has the compiled plugin's id, id line and
    /// rules, reads no less of the context, and once used is the compiled plugin.
    @Test func stubsOfShippedPluginsMatchCompiledOnes() throws {
        let eager = PluginLoader.load(directories: [Fixtures.pluginsDir])
        let lazy = PluginLoader.loadOnUse(directories: [Fixtures.pluginsDir])
        #expect(eager.errors.isEmpty && lazy.errors.isEmpty)
        #expect(lazy.plugins.map(\.id) == eager.plugins.map(\.id))
        let stubs = lazy.plugins.filter(\.isStub)
        // band, nordic-uart and the other GATT/channel plugins are stubs too.
        #expect(stubs.count == lazy.plugins.count)
        #expect(lazy.plugins.first { $0.id == "band" }!.isStub)
        for (s, p) in zip(lazy.plugins, eager.plugins) where s.isStub {
            #expect(s.matches == p.matches, "\(p.id)")
            #expect(s.idLine == p.idLine, "\(p.id)")
            #expect(s.contextUse.isSuperset(of: p.contextUse), "\(p.id): \(s.contextUse) ⊉ \(p.contextUse)")
            let r = try #require(s.resolved)
            #expect(r.types.count == p.types.count && r.contextUse == p.contextUse && !r.isStub, "\(p.id)")
        }
    }

    /// Each shipped advertising plugin's examples through a set of stubs: the plugin and the
    /// message a set of compiled plugins gives.
    @Test func setOfStubsDecodesAsCompiledSet() throws {
        let eager = PluginSet(PluginLoader.load(directories: [Fixtures.pluginsDir]).plugins)
        let lazy = PluginSet(PluginLoader.loadOnUse(directories: [Fixtures.pluginsDir]).plugins)
        var compared = 0
        for p in eager.plugins {
            for ex in p.examples {
                guard let target = ex.advertising else { continue }
                let a = p.decodeAdvertisingExample(ex, target, in: eager)
                let b = p.decodeAdvertisingExample(ex, target, in: lazy)
                #expect(a.map { eager.plugins[$0.plugin].id } == b.map { lazy.plugins[$0.plugin].id }, "\(p.id) line \(ex.line)")
                #expect(a?.message.summary == b?.message.summary, "\(p.id) line \(ex.line)")
                compared += 1
            }
        }
        #expect(compared > 400) // 487 examples when written
    }

    static let broken = """
        id: broken
        match:
          - { company: 0x0059, prefix: "01" }
        frame:
          - { id: x, type: no_such_type }
        """
    static let fallback = """
        id: fallback
        match:
          - { company: 0x0059 }
        frame:
          - { id: rest, type: bytes }
        """

    /// A stub that fails to compile when a record reaches it is reported once, through
    /// `lateErrors`, and its rules take nothing: the next rule takes the structure.
    @Test func stubFailingOnUseIsReportedOnceAndSkipped() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stub-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.broken.write(to: dir.appendingPathComponent("a-broken.yaml"), atomically: true, encoding: .utf8)
        try Self.fallback.write(to: dir.appendingPathComponent("b-fallback.yaml"), atomically: true, encoding: .utf8)
        let loaded = PluginLoader.loadOnUse(directories: [dir.path])
        #expect(loaded.errors.isEmpty)
        #expect(loaded.plugins.map(\.id) == ["broken", "fallback"])
        #expect(loaded.plugins[0].isStub)
        let reported = Mutex<[String]>([])
        PluginLoader.lateErrors.withLock { $0 = { e in reported.withLock { $0.append(e.description) } } }
        defer { PluginLoader.lateErrors.withLock { $0 = nil } }
        let set = PluginSet(loaded.plugins)
        let first = Self.decode(set, "5900 01 02", address: 1)
        #expect(first?.0 == "fallback")
        #expect(first?.1["rest"] == .bytes([0x01, 0x02]))
        #expect(Self.decode(set, "5900 01 03", address: 1)?.0 == "fallback")
        // The error compiling at once gives at load (as before), with its line.
        let eager = PluginLoader.load(directories: [dir.path]).errors.map(\.description)
        #expect(eager.count == 1 && eager[0].contains("a-broken.yaml:5:"), "\(eager)")
        #expect(reported.withLock { $0 } == eager)
    }

    static let named = """
        id: named
        match:
          - { company: 0x0059 }
        frame:
          - { id: v, type: u1 }
          - { id: who, context: _name }
        """

    /// A plugin reading `_name` is cached with the name in the key: the same bytes from two
    /// advertisers with different names decode with each one's name.
    @Test func cacheKeysOnTheNameAPluginReads() throws {
        let set = PluginSet([try PluginLoader.compile(yaml: Self.named, path: "n.yaml")])
        set.observeName("alpha", address: 1)
        "beta".utf8.withContiguousStorageIfAvailable { set.observeName(UnsafeRawBufferPointer($0), address: 2) }
        #expect(Self.decode(set, "5900 07", address: 1)?.1["who"] == .string("alpha"))
        #expect(Self.decode(set, "5900 07", address: 2)?.1["who"] == .string("beta"))
        #expect(Self.decode(set, "5900 07", address: 1)?.1["who"] == .string("alpha"))
        #expect(Self.decode(set, "5900 07", address: 3)?.1["who"] == .null)
        // A name that changes is a new decode.
        set.observeName("gamma", address: 1)
        #expect(Self.decode(set, "5900 07", address: 1)?.1["who"] == .string("gamma"))
    }

    /// Records repeating a payload from one advertiser share one result; another advertiser or
    /// other bytes get their own.
    @Test func repeatedPayloadSharesItsResult() throws {
        let set = PluginSet([try PluginLoader.compile(yaml: AdvertisingPluginTests.govee, path: "g.yaml")])
        func result(_ hex: String, _ address: UInt64) -> PluginSet.Result? {
            var ctx = AdvertisingContext()
            ctx.address = address
            return Hex.parse(hex.replacingOccurrences(of: " ", with: ""))!.withUnsafeBytes { v in
                set.advertisingResult(
                    type: 0xFF, value: v, context: ctx, serviceUUIDs: { [] },
                    report: UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
        let a = try #require(result("88ec 00 03 8c 14 64 00", 1))
        let b = try #require(result("88ec 00 03 8c 14 64 00", 1))
        let c = try #require(result("88ec 00 03 8c 14 64 00", 2))
        let d = try #require(result("88ec 00 03 8c 15 64 00", 1))
        #expect(a.identity == b.identity)
        #expect(a.identity != c.identity && a.identity != d.identity)
        #expect(a.sources.map(\.address) == [1] && c.sources.map(\.address) == [2])
        #expect(a.messages.map(\.summary) == c.messages.map(\.summary))
        // A change makes a copy: the shared result stays as it was.
        var e = b
        e.messages.append(d.messages[0])
        #expect(e.messages.count == 2 && a.messages.count == 1 && e.identity != a.identity)
    }

    /// What a stub reads of the context, found in one pass: a name at a word start counts
    /// (also as the start of a longer word, as before), inside an identifier it does not.
    @Test func mentionedFindsNamesAtWordStarts() {
        let text = "_rssi: 1\nx_company: 2\n  value: { context: _names }\ndecrypted\nfoo_pdu _rule"
        let names: Set<String> = ["_rssi", "_company", "_name", "decrypt", "_pdu", "_rule", "_address"]
        #expect(PluginLoader.mentioned(text, names) == ["_rssi", "_name", "decrypt", "_rule"])
        #expect(PluginLoader.mentions(text, "_rule") && !PluginLoader.mentions(text, "_pdu"))
        #expect(PluginLoader.mentioned("", names).isEmpty && PluginLoader.mentioned("_rss", names).isEmpty)
    }
}
