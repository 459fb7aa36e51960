import Testing
import Foundation

/// `bluesift plugins …` as a user runs it (needs the built binary, like BluesiftCLITests).
@Suite struct PluginsCLITests {
    static let binary = Fixtures.root.appendingPathComponent(".build/debug/bluesift").path

    static func run(_ args: [String], env: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        try runProcess(binary, args, env: env)
    }

    /// Runs any executable (bluesift, tshark) with stdout and stderr through files, not pipes:
    /// a full pipe would block a child that writes more than 64 kB to the stream not read first.
    static func runProcess(_ exe: String, _ args: [String], env: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-plugins-cli-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: tmp.path + ".out", contents: nil)
        FileManager.default.createFile(atPath: tmp.path + ".err", contents: nil)
        defer { try? FileManager.default.removeItem(atPath: tmp.path + ".out"); try? FileManager.default.removeItem(atPath: tmp.path + ".err") }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: tmp.path + ".out"))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: tmp.path + ".err"))
        try p.run()
        p.waitUntilExit()
        let o = FileManager.default.contents(atPath: tmp.path + ".out") ?? Data()
        let e = FileManager.default.contents(atPath: tmp.path + ".err") ?? Data()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    static var haveBinary: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    static func tempPlugin(_ text: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-p-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let f = dir.appendingPathComponent("broken.yaml")
        try text.write(to: f, atomically: true, encoding: .utf8)
        return f
    }

    static let broken = "id: x\nmatch:\n  - { characteristic: 36f5 }\nframe:\n  - { id: a, type: u1 }\n  - { id: b, size: a + zz }\n"

    @Test(.enabled(if: haveBinary)) func checkReportsFileLineAndExits2() throws {
        let f = try Self.tempPlugin(Self.broken)
        defer { try? FileManager.default.removeItem(at: f.deletingLastPathComponent()) }
        let r = try Self.run(["plugins", "check", f.path, Fixtures.pluginsDir + "/band.yaml"])
        #expect(r.status == 2)
        #expect(r.err == "bluesift: \(f.path):6: 'zz' is not a field defined before 'b'\n")
        #expect(r.out.contains("band.yaml: ok (band: 14 messages, 16 examples)"))
    }

    /// A folder is checked as --plugins loads it (it was "cannot read the plugin file").
    /// `plugins list --field`: which plugins produce a value, by its name or another name for it.
    @Test(.enabled(if: haveBinary)) func listByField() throws {
        let t = try Self.run(["plugins", "list", "--plugins", Fixtures.pluginsDir, "--field", "temperature"])
        #expect(t.status == 0)
        let lines = t.out.split(separator: "\n").map(String.init)
        let ids = Set(lines.map { String($0.prefix { $0 != " " }) })
        for id in ["govee-h5075", "ruuvitag", "bthome-v2", "xiaomi-mibeacon", "cypress-beacon", "inkbird", "switchbot"] { #expect(ids.contains(id), "\(id)") }
        #expect(!ids.contains("band") && !ids.contains("ibeacon") && !ids.contains("inkbird-bbq")) // probes are temperature_probe_N
        #expect(lines.contains("govee-h5075  temperature (°C)  Govee H5072/H5075/H5100-series thermo-hygrometers (packed 24-bit reading)"))
        // another name for the value: co2 finds BTHome's and Qingping's carbon_dioxide
        let c = try Self.run(["plugins", "list", "--plugins", Fixtures.pluginsDir, "--field", "co2"])
        #expect(c.status == 0)
        #expect(c.out.contains("qingping  carbon_dioxide (ppm)  "))
        #expect(c.out.contains("bthome-v2  carbon_dioxide (ppm)  "))
        // none: one line, exit 1
        let n = try Self.run(["plugins", "list", "--plugins", Fixtures.pluginsDir, "--field", "no_such_value"])
        #expect(n.status == 1 && n.out.isEmpty)
        #expect(n.err == "bluesift: no loaded plugin produces a field named no_such_value\n")
    }

    @Test(.enabled(if: haveBinary)) func checkTakesAFolder() throws {
        let good = try Self.run(["plugins", "check", Fixtures.pluginsDir])
        #expect(good.status == 0)
        // One line per file of the folder, in name order (Plugins/ ships 51 plugins).
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixtures.pluginsDir).filter { $0.hasSuffix(".yaml") }.sorted()
        let lines = good.out.split(separator: "\n").map(String.init)
        #expect(lines.count == files.count)
        #expect(lines.map { String($0.split(separator: ":")[0]) } == files.map { "\(Fixtures.pluginsDir)/\($0)" })
        #expect(lines.contains("\(Fixtures.pluginsDir)/band.yaml: ok (band: 14 messages, 16 examples)"))
        #expect(lines.contains("\(Fixtures.pluginsDir)/lego-lwp3.yaml: ok (lego-lwp3: 5 messages, 10 examples)"))
        #expect(lines.contains { $0.hasPrefix("\(Fixtures.pluginsDir)/ibeacon.yaml: ok (ibeacon: 1 message, ") })
        #expect(!good.out.contains(" 1 messages") && !good.out.contains(" 1 examples"))
        let f = try Self.tempPlugin(Self.broken)
        let dir = f.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = try Self.run(["plugins", "check", dir.path])
        #expect(bad.status == 2)
        #expect(bad.err == "bluesift: \(f.path):6: 'zz' is not a field defined before 'b'\n")
        try FileManager.default.removeItem(at: f)
        let empty = try Self.run(["plugins", "check", dir.path])
        #expect(empty.status == 2)
        #expect(empty.err == "bluesift: \(dir.path): no plugin files (*.yaml, *.yml) in this folder\n")
    }

    @Test(.enabled(if: haveBinary)) func testRunsEveryExample() throws {
        let r = try Self.run(["plugins", "test"])
        #expect(r.status == 0)
        #expect(r.out.contains("band: 16/16 examples pass"))
        #expect(r.out.contains("lego-lwp3: 10/10 examples pass"))
    }

    @Test(.enabled(if: haveBinary)) func brokenPluginOnThePathIsSkippedInOneLine() throws {
        let f = try Self.tempPlugin(Self.broken)
        defer { try? FileManager.default.removeItem(at: f.deletingLastPathComponent()) }
        let r = try Self.run(["plugins", "list"], env: ["BLUESIFT_PLUGINS": f.deletingLastPathComponent().path])
        #expect(r.status == 0)
        #expect(r.err.split(separator: "\n").count == 1)
        #expect(r.err.contains("broken.yaml:6:"))
        #expect(r.out.contains("band  Smart band"))
        let t = try Self.run(["plugins", "test"], env: ["BLUESIFT_PLUGINS": f.deletingLastPathComponent().path])
        #expect(t.status == 1)
    }

    @Test(.enabled(if: haveBinary)) func decodeAndEncode() throws {
        let d = try Self.run(["plugins", "decode", "--plugin", "band", "--direction", "write", "a5 06 03 06 14 b2"])
        #expect(d.status == 0)
        #expect(d.out.hasPrefix("band sport_count month=6 day=20 checksum ok\n"))
        let j = try Self.run(["plugins", "decode", "--plugin", "band", "--json", "a50603061400"])
        #expect(j.out == #"{"plugin":"band","message":"sport_count","fields":{"month":6,"day":20},"checksum":"bad"}"# + "\n")
        let e = try Self.run(["plugins", "encode", "--plugin", "band", "sport_count", "month=6", "day=20"])
        #expect(e.out == "a5 06 03 06 14 b2\n")
        let u = try Self.run(["plugins", "decode", "--plugin", "nope", "00"])
        #expect(u.status == 64)
    }
}
