import Testing
import Foundation

/// Every command that reads captures decodes them alike, from one group of options: the same
/// lines in each `--help`, and the keys decrypt wherever they are given.
@Suite struct DecodeOptionsTests {
    static let commands = ["info", "dump", "stats", "report", "frames", "gatt", "script", "diff", "convert", "redact", "tap"]
    static let options = ["--ltk", "--keys", "--write-keys", "--gatt", "--plugins", "--no-plugins"]

    /// The help lines of the decode options (each option's line and its continuation lines).
    static func decodeHelp(_ command: String) throws -> [String] {
        let help = try CLI.run([command, "--help"]).stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var out: [String] = [], inside = false
        for l in help {
            let t = l.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("-") { inside = options.contains { t.hasPrefix($0 + " ") || t == $0 } }
            if inside && !t.isEmpty { out.append(t) }
        }
        return out
    }

    @Test func everyCommandListsTheSameDecodeOptions() throws {
        let reference = try Self.decodeHelp("dump")
        for o in Self.options { #expect(reference.contains { $0.hasPrefix(o + " ") || $0 == o }, "dump --help lacks \(o)") }
        for c in Self.commands.dropFirst() {
            #expect(try Self.decodeHelp(c) == reference, "\(c) --help")
        }
    }

    /// An encrypted sniffed link summarised with its LTK (`stats` and `report` took no --ltk):
    /// the ATT inside is counted. crackle's known-LTK test capture, the LTK its README gives.
    @Test func statsDecryptsWithTheKeys() throws {
        let cap = AirDecryptCLITests.fixture("02_ltk_decrypt/known_ltk.pcap")
        let ltk = "7f62c053f104a5bbe68b1d896a2ed49c"
        func att(_ args: [String]) throws -> Int {
            let r = try CLI.run(["stats", "--format", "json"] + args + [cap])
            #expect(r.status == 0, "\(r.stderr)")
            let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            return ((o?["counts"] as? [String: Any])?["att"] as? Int) ?? -1
        }
        #expect(try att([]) == 0)
        #expect(try att(["--ltk", ltk]) > 0)
    }
}
