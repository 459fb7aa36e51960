import Testing
import Foundation
import BluesiftFuzz

/// Issue 13: structure-aware mutation of every reader's format (BluesiftFuzz/StructuredCaptureFuzz):
/// a fixed seed and a bounded number of mutants here; `make fuzz` runs many more with a random
/// seed (BLUESIFT_MUTATION_ITERATIONS, BLUESIFT_MUTATION_SEED). Inputs that failed are written
/// to BLUESIFT_MUTATION_ARTIFACTS (default: a temporary folder) and, once understood, kept in
/// Tests/FuzzRegressions/structured (FuzzRegressionTests replays them).
@Suite struct StructuredMutationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let env = ProcessInfo.processInfo.environment

    static func image(_ name: String, bytes: Int = 8192) -> CaptureImage {
        let data = FileManager.default.contents(atPath: root.appendingPathComponent("Captures/" + name).path) ?? Data()
        return CaptureImage.parse(Array(data))!.limited(bytes: bytes)
    }

    /// Every reader's format, in both byte orders where it has two, several sections and
    /// interfaces: 13 seeds from the repository's captures.
    static let seeds: [(String, CaptureImage)] = {
        let band = image("band_mtu23.btsnoop")
        let pcap = image("crackle_pairing_and_ltk_exchange.pcap")
        let pcapng = image("crackle_le_secure_connections.pcapng")
        return [
            ("btsnoop-h4", band),
            ("btsnoop-monitor", image("btsnooprs_btsnoop_btmon.log")),
            ("btsnoop-oppo", image("oppo_BT_HCI_2026_0719_110149.cfa")),
            ("pcap-le", pcap),
            ("pcap-be", pcap.pcapOtherByteOrder()),
            ("pcapng-le", pcapng),
            ("pcapng-be", pcapng.pcapngOtherByteOrder()!),
            ("pcapng-two-sections", pcapng.limited(bytes: 4096).pcapngTwoSections()!),
            ("packetlogger", image("hciparse_test00.pklg")),
            ("btsnooz-v1", CaptureImage.btsnooz(from: band, version: 1)!),
            ("btsnooz-v2", CaptureImage.btsnooz(from: band, version: 2)!)
        ]
    }()

    @Test func seedsParseAndEveryRecordIsAccountedFor() throws {
        for (name, im) in Self.seeds {
            let s = StructuredCaptureFuzz.seed(name: name, image: im)
            #expect(im.recordCount >= 20, "\(name): \(im.recordCount) records")
            // Each unit's records, read alone, add up to the whole file's: counts are predictable.
            #expect(s.perUnit != nil, "\(name): records depend on each other")
            let whole = StructuredCaptureFuzz.read(im.serialized())
            #expect(whole.warnings.isEmpty, "\(name): \(whole.warnings)")
            #expect(whole.records.count == s.perUnit?.reduce(0) { $0 + $1.count }, "\(name)")
        }
        // The byte-order and section variants read as the originals do.
        let le = StructuredCaptureFuzz.read(Self.seeds[5].1.serialized()).records
        #expect(StructuredCaptureFuzz.read(Self.seeds[6].1.serialized()).records == le)
        #expect(
            StructuredCaptureFuzz.read(Self.seeds[3].1.serialized()).records
                == StructuredCaptureFuzz.read(Self.seeds[4].1.serialized()).records)
    }

    @Test func mutantsOfEveryFormat() throws {
        let iterations = Int(Self.env["BLUESIFT_MUTATION_ITERATIONS"] ?? "") ?? 2_200
        let seed = UInt64(Self.env["BLUESIFT_MUTATION_SEED"] ?? "") ?? 1
        let artifacts = Self.env["BLUESIFT_MUTATION_ARTIFACTS"] ?? NSTemporaryDirectory() + "bluesift-mutants-\(getpid())"
        try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
        let seeds = Self.seeds.map { StructuredCaptureFuzz.seed(name: $0.0, image: $0.1) }
        var failures: [String] = []
        let t0 = Date()
        let stats = StructuredCaptureFuzz.campaign(
            seeds: seeds, iterations: iterations, seed: seed,
            lastInput: artifacts + "/last-input"
        ) { f in
            guard failures.count < 20 else { return }
            let file = "\(artifacts)/\(f.seed)-\(failures.count)"
            _ = StructuredCaptureFuzz.writeFile(file, f.input)
            failures.append("\(f) (input: \(file))")
        }
        let took = Date().timeIntervalSince(t0)
        try? FileManager.default.removeItem(atPath: artifacts + "/last-input")
        // Kept only when there is something to look at (a failing mutant, or a folder asked for).
        if failures.isEmpty && Self.env["BLUESIFT_MUTATION_ARTIFACTS"] == nil { try? FileManager.default.removeItem(atPath: artifacts) }
        print(
            "structured mutation, seed \(seed): \(stats.inputs) inputs, \(stats.predictable) with predicted records, "
                + "\(stats.records) records, \(stats.warned) cuts warned, slowest \(String(format: "%.3f", stats.slowest)) s, "
                + "\(String(format: "%.1f", took)) s; \(stats.byMutation.sorted { $0.key < $1.key })")
        #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.joined(separator: "\n"))")
        #expect(stats.inputs == iterations)
        // Most mutants keep their records predictable, and many cuts were checked for a warning.
        #expect(stats.predictable * 2 > stats.inputs)
        #expect(stats.warned * 20 > stats.inputs)
        for m in [
            "drop", "duplicate", "swap", "truncate-at-record", "cut-inside", "length", "header", "flip-byte-order",
            "bogus-option", "unknown-block", "duplicate-section", "second-interface"
        ] {
            #expect(stats.byMutation[m, default: 0] > 0, "\(m) never ran")
        }
    }
}
