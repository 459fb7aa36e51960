import Testing
import Foundation

/// Issue 14: text a person can read. Terminal behaviour is tested on a real pseudo-terminal
/// (util-linux `script`), as a user sees it.
@Suite struct PresentationTests {
    static let blefun = CLI.corpus.appendingPathComponent("blefun_btsnoop_hci.log").path
    static let bafang = CLI.corpus.appendingPathComponent("bafang_bluetoothd-hci-latest.pklg").path

    /// Runs bluesift with stdout on a terminal `columns` wide; the lines it showed.
    static func onTerminal(_ args: [String], columns: Int = 80, env: [String: String] = [:]) throws -> [String] {
        let quoted = ([CLI.binary] + args).map { "'" + $0 + "'" }.joined(separator: " ")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-qec", "stty cols \(columns); " + quoted, "/dev/null"]
        var e = ProcessInfo.processInfo.environment.filter { $0.key != "COLUMNS" && $0.key != "NO_COLOR" }
        e.merge(env) { $1 }
        p.environment = e
        let out = Pipe()
        p.standardOutput = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r", with: "").split(separator: "\n").map(String.init)
    }

    static func visible(_ s: String) -> String {
        s.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }

    @Test func dumpFitsTheTerminalUnlessWide() throws {
        let lines = try Self.onTerminal(["dump", "--frames", "460-470", Self.blefun])
        #expect(lines.count == 11)
        #expect(lines.allSatisfy { Self.visible($0).count <= 80 })
        // 128-bit UUIDs without a name are shortened, so the names still fit.
        let l466 = Self.visible(lines.first { $0.hasPrefix("   466") } ?? "")
        #expect(l466.contains("[00020001… / 00020005…]") || l466.hasSuffix("…"))
        let wide = try Self.onTerminal(["dump", "--wide", "--frames", "466", Self.blefun])
        #expect(Self.visible(wide[0]).hasSuffix("[00020001-574f-4f20-5370-6865726f2121 / 00020005-574f-4f20-5370-6865726f2121] (reply to #464, 97 ms)"))
        // Not a terminal: whole lines, as before.
        let piped = try CLI.run(["dump", "--frames", "466", Self.blefun])
        #expect(piped.stdout.hasSuffix("(reply to #464, 97 ms)\n"))
    }

    @Test func colourMarksFailuresAndNOCOLORIsRespected() throws {
        let band = CLI.capture("band_mtu23.btsnoop")
        let red = "\u{1B}[31m"
        let lines = try Self.onTerminal(["dump", "--wide", "--frames", "50-52", band])
        #expect(lines.count == 3)
        // 51: ATT Error Response, red; 50 and 52 not.
        #expect(lines[1].contains(red + "ATT Error Response"))
        #expect(!lines[0].contains(red) && !lines[2].contains(red))
        // A disconnection for Connection Timeout is red; Remote User Terminated is not.
        let timeout = try Self.onTerminal(["dump", "--wide", "--frames", "514", Self.blefun])
        #expect(timeout[0].contains(red + "Disconnection Complete"))
        let normal = try Self.onTerminal(["dump", "--wide", "--frames", "151", band])
        #expect(!normal[0].contains(red))
        let plain = try Self.onTerminal(["dump", "--wide", "--frames", "51", band], env: ["NO_COLOR": "1"])
        #expect(!plain[0].contains("\u{1B}["))
        let forced = try CLI.run(["dump", "--color", "--frames", "51", band])
        #expect(forced.stdout.contains(red))
    }

    @Test func latencyUnits() throws {
        // PacketLogger clock in whole milliseconds: no "0 µs" or "1000 µs".
        let r = try CLI.run(["dump", "--no-color", "--frames", "1742-2912", Self.bafang])
        #expect(r.stdout.contains("  1742 09:55:39.692000 < [0x0401] ATT Write Response (reply to #1741 handle 0x001b, 1 ms)\n"))
        #expect(r.stdout.contains("  2912 10:00:49.742000 < [0x0403] ATT Handle Value Confirmation (reply to #2911, <1 ms)\n"))
        #expect(!r.stdout.contains(" µs)"))
        // A µs clock: µs below 10 ms, ms above.
        let band = try CLI.run(["dump", "--no-color", "--frames", "40-42", CLI.capture("band_mtu23.btsnoop")])
        #expect(band.stdout.contains("(reply to #40, 5046 µs)"))
    }

    /// The -v tree shows codes and handles in hex, as the summary line does.
    @Test func treeAndSummaryInTheSameBase() throws {
        let r = try CLI.run(["dump", "-v", "--no-color", "--frames", "112", CLI.capture("band_mtu23.btsnoop")])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines[0].contains("handle=0x0011"))
        #expect(lines.contains("    handle: 0x0001"))   // hci
        #expect(lines.contains("    cid: 0x0004"))      // l2cap
        #expect(lines.contains("    opcode: 0x12"))     // att
        #expect(lines.contains("    handle: 0x0011"))   // att
        #expect(lines.contains("    length: 9"))        // lengths stay decimal
    }
}
