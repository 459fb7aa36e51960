import Foundation
import Testing

/// `bluesift fuzz` against a band with faults planted at random each run
/// (Tests/VirtualDevice/fault_band.py): a field above a bound in a valid frame drops the link,
/// a write longer than recorded hangs the ATT server, one command order resets the band.
/// The fuzzer must find all three within its budget, each minimised reproducer must replay to
/// the same reaction in at least 9 of 10 runs, and `--blind` with the same budget finds fewer.
@Suite(.serialized, .enabled(if: Rig.available, "needs the Bumble venv: make venv"))
struct FuzzAgainstFaultyBand {
    struct Faults: CustomStringConvertible {
        var bound: (field: String, limit: Int)
        var longOver: Int
        var order: (first: String, then: String)
        var arguments: [String] {
            ["--bound", "\(bound.field)=\(bound.limit)", "--long-over", "\(longOver)", "--order", "\(order.first),\(order.then)"]
        }
        var description: String { arguments.joined(separator: " ") }

        /// From the test's seed (a small LCG: the choice only needs to vary between runs).
        init(seed: UInt64) {
            var s = seed
            func draw(_ n: Int) -> Int {
                s = s &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int((s >> 33) % UInt64(n))
            }
            // Field, and a bound above its recorded value (sport_count 6/20, sport_data 6/20/0).
            let fields: [(String, Int, Int)] = [
                ("sport_count.month", 6, 254), ("sport_count.day", 20, 254), ("sport_data.month", 6, 254), ("sport_data.day", 20, 254),
                ("sport_data.index", 0, 65534)
            ]
            let f = fields[draw(fields.count)]
            bound = (f.0, f.1 + 1 + draw(f.2 - f.1 - 1))
            // The recording's longest write is 20 bytes (MTU 23).
            longOver = 20 + draw(4)
            // A command after one the recording sends it before (each a single write).
            let pairs = [("02", "01"), ("03", "02"), ("04", "03")]
            order = pairs[draw(pairs.count)]
        }
    }

    struct Run {
        var status: Int32
        var stderr: String
        var summary: [String: Any]
        var findings: [[String: Any]] { summary["findings"] as? [[String: Any]] ?? [] }
    }

    static func run(_ args: [String], in dir: String) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments = args
        let o = dir + "/out-\(UUID().uuidString).txt", e = dir + "/err-\(UUID().uuidString).txt"
        FileManager.default.createFile(atPath: o, contents: nil)
        FileManager.default.createFile(atPath: e, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: o))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: e))
        try p.run()
        p.waitUntilExit()
        return (p.terminationStatus, (try? String(contentsOfFile: o, encoding: .utf8)) ?? "", (try? String(contentsOfFile: e, encoding: .utf8)) ?? "")
    }

    /// Which planted fault a finding is, by its reaction.
    static func fault(_ f: [String: Any]) -> String? {
        let r = f["reaction"] as? [String: Any] ?? [:]
        switch (r["kind"] as? String, r["code"] as? Int) {
        case ("disconnect", 0x13): return "bound"
        case ("timeout", _): return "long"
        case ("reset", 0x15): return "order"
        default: return nil
        }
    }

    @Test func findsEveryPlantedFaultAndEachReproducerReplays() throws {
        let seed = ProcessInfo.processInfo.environment["BLUESIFT_FAULT_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...1_000_000)
        let faults = Faults(seed: seed)
        print("fault seed \(seed): \(faults)")
        let (central, bandPort) = Rig.ports()
        let dir = NSTemporaryDirectory() + "bluesift-fuzz-\(getpid())-\(bandPort)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(central)", "127.0.0.1:\(bandPort)"], log: dir + "/controllers.log", lifetime: 900)
        defer { Rig.stop(ctl) }
        let dev = try Rig.start("fault_band.py", ["tcp-client:127.0.0.1:\(bandPort)"] + faults.arguments, log: dir + "/band.log", lifetime: 900)
        defer { Rig.stop(dev) }
        let capture = Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path
        let common = [
            "fuzz", capture, "--transport", "tcp:127.0.0.1:\(central)", "--characteristic", "36f5", "--steps", "160", "--seed", "1", "--timeout", "2", "--window", "200",
            "--rate", "0", "--reruns", "3"
        ]

        let (status, stdout, stderr) = try Self.run(common + ["-o", dir + "/aware"], in: dir)
        #expect(status == 1, "\(stdout)\n\(stderr)")
        let summary = try #require(
            FileManager.default.contents(atPath: dir + "/aware/findings.json").flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] },
            "\(stdout)\n\(stderr)")
        let findings = summary["findings"] as? [[String: Any]] ?? []
        let found = Dictionary(findings.compactMap { f in Self.fault(f).map { ($0, f) } }, uniquingKeysWith: { a, _ in a })
        print("plugin-aware: \(found.count) of 3 planted faults, \(findings.count) findings in \(summary["variants"] ?? 0) variants\n\(stdout)")
        #expect(Set(found.keys) == ["bound", "long", "order"], "\(faults)\n\(stdout)")

        // Each minimised reproducer, replayed as a capture, shows the same reaction 9 times of 10.
        for (name, f) in found.sorted(by: { $0.key < $1.key }) {
            let file = try #require(f["reproducer"] as? String, "\(name) has no reproducer")
            #expect((f["steps"] as? [Any])?.count ?? 99 <= (name == "order" ? 2 : 1), "\(name) not minimised: \(f["steps"] ?? "")")
            var same = 0
            for i in 0..<10 {
                let report = dir + "/replay-\(name)-\(i).json"
                let (s, _, err) = try Self.run(
                    ["replay", dir + "/aware/" + file, "--transport", "tcp:127.0.0.1:\(central)", "--timing", "asap", "--timeout", "2", "--window", "200", "--report", report],
                    in: dir)
                let fault = (FileManager.default.contents(atPath: report).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] })?["fault"] as? [String: Any]
                let code = fault?["code"] as? String
                let message = fault?["message"] as? String ?? err
                switch name {
                case "bound": if s == 3, code == "connection_lost", message.contains("(0x13)") { same += 1 }
                case "long": if s == 3, code == "timeout" { same += 1 }
                default: if s == 3, code == "connection_lost", message.contains("(0x15)") { same += 1 }
                }
            }
            print("reproducer of \(name) (\(file)): \(same) of 10 replays show the reaction")
            #expect(same >= 9, "\(name): \(same) of 10")
        }

        // The same budget, blind.
        let (bs, bout, berr) = try Self.run(common + ["--blind", "-o", dir + "/blind"], in: dir)
        let blind = FileManager.default.contents(atPath: dir + "/blind/findings.json").flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let blindFound = Set((blind?["findings"] as? [[String: Any]] ?? []).compactMap(Self.fault))
        print("blind: \(blindFound.count) of 3 planted faults (\(blindFound.sorted()))\n\(bout)")
        #expect(bs == 0 || bs == 1, "\(bout)\n\(berr)")
        #expect(blindFound.count < found.count)
    }
}
