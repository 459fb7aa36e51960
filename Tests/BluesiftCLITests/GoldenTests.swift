import Testing
import Foundation

/// Small in-repo captures with outputs a person has read (Tests/Golden): they keep the suite
/// meaningful without ../shared, and pin the text and JSON Lines formats byte for byte.
/// After an intended change: BLUESIFT_UPDATE_GOLDEN=1 swift test --filter Golden, then read the diff.
@Suite struct GoldenTests {
    static let golden = CLI.root.appendingPathComponent("Tests/Golden")

    static let cases: [(file: String, args: [String])] = [
        ("band_mtu23.txt", ["dump", "--no-color", "Captures/band_mtu23.btsnoop"]),
        ("band_mtu23.jsonl", ["dump", "--format", "jsonl", "Captures/band_mtu23.btsnoop"]),
        ("crackle_le_secure_connections.txt", ["dump", "--no-color", "Captures/crackle_le_secure_connections.pcapng"]),
        ("revcar.txt", ["dump", "--no-color", "Captures/revcar_btsnoop_hci.log"]),
        ("revcar_info.txt", ["info", "Captures/revcar_btsnoop_hci.log"])
    ]

    @Test(arguments: cases.map(\.file)) func outputEqualsGolden(_ name: String) throws {
        let args = Self.cases.first { $0.file == name }!.args
        let r = try CLI.run(args.map { $0.hasPrefix("Captures/") ? CLI.root.appendingPathComponent($0).path : $0 })
        #expect(r.status == 0)
        // Paths in the output are relative to the repository, as when the file was made.
        let out = r.stdout.replacingOccurrences(of: CLI.root.path + "/", with: "")
        let path = Self.golden.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["BLUESIFT_UPDATE_GOLDEN"] == "1" {
            try out.write(to: path, atomically: true, encoding: .utf8)
        }
        let want = try String(contentsOf: path, encoding: .utf8)
        #expect(out == want, "\(name) differs from Tests/Golden/\(name)")
    }
}
