import Testing
import Foundation

/// Sniffed, encrypted links from the command line (crackle's suite, Tests/Fixtures/crackle).
@Suite struct AirDecryptCLITests {
    static func fixture(_ p: String) -> String { CLI.root.appendingPathComponent("Tests/Fixtures/crackle/" + p).path }

    static func tshark(_ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/tshark")
        p.arguments = args
        let pipe = Pipe()
        p.standardOutput = pipe; p.standardError = FileHandle.nullDevice
        try p.run()
        let d = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: d, as: UTF8.self)
    }

    /// tshark reads the ATT of our decrypted file (crackle's PPI input it cannot read at all).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"), "needs tshark")) func convertDecryptIsReadByTshark() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-dec-\(UUID().uuidString).pcap").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["convert", "--decrypt", Self.fixture("05_numeric_pin/numeric_pin.pcap"), out])
        #expect(r.status == 0)
        // The 57th encrypted packet of crackle's capture has a bad CRC (issue 36): noise, not ciphertext.
        #expect(r.stderr.contains("56 of 56 encrypted packets written decrypted"))
        let att = try Self.tshark(["-r", out, "-Y", "btatt", "-T", "fields", "-e", "frame.number", "-e", "btatt.opcode", "-e", "btatt.handle"])
            .split(separator: "\n")
        #expect(att.count == 53)
        #expect(att.contains("29\t0x01\t0x0010"))
        let expert = try Self.tshark(["-r", out, "-q", "-z", "expert"])
        #expect(!expert.contains("Malformed") && !expert.contains("MIC") && !expert.contains("CRC incorrect"))
    }

    @Test func ltkAndKeysFileDecrypt() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-keys-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Keys recovered from 01 (cracked pairing, distributed LTK) decrypt 02's session.
        let w = try CLI.run(["info", "--write-keys", dir, Self.fixture("01_crack/pairing_and_ltk_exchange.pcap")])
        #expect(w.status == 0 && w.stdout.contains("TK 000000") && w.stdout.contains("LTK 7f62c053f104a5bbe68b1d896a2ed49c"))
        let k = try CLI.run(["dump", "--format", "jsonl", "--keys", dir, Self.fixture("02_ltk_decrypt/known_ltk.pcap")])
        #expect(k.stdout.components(separatedBy: "\"decrypted\":true").count - 1 == 7)
        let l = try CLI.run(["dump", "--format", "jsonl", "--ltk", "7f62c053f104a5bbe68b1d896a2ed49c", Self.fixture("02_ltk_decrypt/known_ltk.pcap")])
        #expect(l.stdout == k.stdout)
        let bad = try CLI.run(["info", "--ltk", "12", Self.fixture("02_ltk_decrypt/known_ltk.pcap")])
        #expect(bad.status != 0 && bad.stderr.contains("--ltk"))
    }

    @Test func secureConnectionsSaysGiveLTK() throws {
        let r = try CLI.run(["info", Self.fixture("04_le_secure_connections/le_secure_connections.pcapng")])
        #expect(r.stdout.contains("LE Secure Connections pairing: the LTK is not recoverable from a passive capture: give --ltk"))
        #expect(r.stdout.contains("central 5c:f3:70:73:3e:f4 (public) → peripheral 7d:43:82:42:23:16 (random)"))
    }
}
