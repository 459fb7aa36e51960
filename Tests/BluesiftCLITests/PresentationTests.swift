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
        // 128-bit UUIDs without a name are shortened, so the names still fit; each is shown
        // whole once, after the first record that shows it (a narrow line drops the service).
        let later = try Self.onTerminal(["dump", "--frames", "1600-1625", Self.blefun]).map(Self.visible)
        #expect(
            later.filter { $0.hasPrefix("                       = ") } == [
                "                       = characteristic 00020005-574f-4f20-5370-6865726f2121",
                "                       = characteristic 00020002-574f-4f20-5370-6865726f2121",
                "                       = characteristic 00020003-574f-4f20-5370-6865726f2121"
            ])
        let i = try #require(later.firstIndex { $0.hasPrefix("  1604") })
        #expect(later[i] == "  1604 21:13:36.920952 < [0x0007] ATT Write Request handle=0x0015… [00020005…]")
        #expect(later[i + 1] == "                       = characteristic 00020005-574f-4f20-5370-6865726f2121")
        #expect(later.contains("  1606 21:13:36.982023 > [0x0007] ATT Write Response [00020005… (reply to #1604)"))
        let wide = try Self.onTerminal(["dump", "--wide", "--frames", "466", Self.blefun])
        #expect(Self.visible(wide[0]).hasSuffix("[00020001-574f-4f20-5370-6865726f2121 / 00020005-574f-4f20-5370-6865726f2121] (reply to #464, 97 ms)"))
        // Not a terminal: whole lines, as before.
        let piped = try CLI.run(["dump", "--frames", "466", Self.blefun])
        #expect(piped.stdout.hasSuffix("(reply to #464, 97 ms)\n"))
    }

    /// Issue 27: at 80 and 120 columns the GATT name and "reply to" were cut off; now the
    /// reply's handle, the service and then the PDU's own fields give way first.
    @Test func namesAndRepliesSurviveNarrowTerminals() throws {
        let band = CLI.capture("band_mtu23.btsnoop")
        let wide = try Self.onTerminal(["dump", "--frames", "118-124", band], columns: 120).map(Self.visible)
        #expect(wide.allSatisfy { $0.count <= 120 })
        #expect(wide.contains("   118 01:04:08.964211 < [0x0001] ATT Write Request… [36f6 / Client Characteristic Configuration] notifications on"))
        #expect(wide.contains("   120 01:04:08.965691 > [0x0001] ATT Write Response [36f6 / Client Characteristic Configuration] (reply to #118)"))
        #expect(wide.contains("   124 01:04:08.966957 > [0x0001] ATT Write Response [fee7 (Tencent Holdings Limited.) / 36f5] (reply to #122, 860 µs)"))
        let narrow = try Self.onTerminal(["dump", "--frames", "118-124", band], columns: 80).map(Self.visible)
        #expect(narrow.allSatisfy { $0.count <= 80 })
        #expect(narrow.contains("   120 01:04:08.965691 > [0x0001] ATT Write Response [36f6 / Cl… (reply to #118)"))
        #expect(narrow.contains("   124 01:04:08.966957 > [0x0001] ATT Write Response [36f5] (reply to #122)"))
    }

    /// Issue 27: `stats` lines reached 221 columns (lightctl's characteristics table). On a
    /// terminal its lines wrap under themselves and the table takes two lines per
    /// characteristic when its rows do not fit; files, pipes and --wide keep every line whole.
    @Test func statsFitsTheTerminal() throws {
        let lightctl = CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path
        let wide = try Self.onTerminal(["stats", lightctl], columns: 120).map(Self.visible)
        #expect(wide.allSatisfy { $0.count <= 120 }, "\(wide.filter { $0.count > 120 })")
        let i = try #require(wide.firstIndex(of: "     1 0x0009  Generic Attribute / Service Changed / Client Characteristic Configuration"))
        #expect(wide[i + 1] == "              2 write requests, 4 bytes to server, latency 46 ms/46 ms/52 ms/52 ms")
        #expect(wide.contains("              1 write request, 2 bytes to server, latency 68 ms/68 ms/68 ms/68 ms"))
        let narrow = try Self.onTerminal(["stats", lightctl], columns: 80).map(Self.visible)
        #expect(narrow.allSatisfy { $0.count <= 80 }, "\(narrow.filter { $0.count > 80 })")
        // Broken between the parts of a name and between counts, never inside one.
        let j = try #require(narrow.firstIndex(of: "     1 0x0009  Generic Attribute / Service Changed /"))
        #expect(
            Array(narrow[j + 1...j + 3]) == [
                "               Client Characteristic Configuration",
                "              2 write requests, 4 bytes to server,",
                "              latency 46 ms/46 ms/52 ms/52 ms"
            ])
        #expect(narrow.contains("  ! The capture starts during 1 connection(s): their set-up (parameters, role,"))
        #expect(narrow.contains("    MTU exchange, pairing) is not in it. (from frame 11)"))
        let row = "     1 0x0009      0      2      0     0     0    0           4          0  46 ms/46 ms/52 ms/52 ms         Generic Attribute / Service Changed / Client Characteristic Configuration"
        #expect(try Self.onTerminal(["stats", "--wide", lightctl], columns: 80).map(Self.visible).contains(row))
        #expect(try CLI.run(["stats", lightctl]).stdout.contains(row + "\n"))
    }

    /// A sniffer's direction mark (`C→P`) takes three columns: lines still fit.
    @Test func snifferLinesFitTheTerminal() throws {
        let mouse = CLI.corpus.appendingPathComponent("tesible_mouse.pcapng").path
        let lines = try Self.onTerminal(["dump", "--empty", "--frames", "990-1000", mouse]).map(Self.visible)
        #expect(lines.count == 11)
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.map(\.count))")
        // The reply's frame stays; the response's own fields give way.
        #expect(lines[4] == "   994 13:26:07.310960 P→C [0x0001] ATT Exchange MTU Response… (reply to #991)")
    }

    /// UUIDs of one vendor base that share their first 8 digits stay apart when shortened.
    @Test func shortenedUUIDsStayDistinct() throws {
        let pogo = CLI.corpus.appendingPathComponent("pogoplus_bt_log_plus_pair.log").path
        let l = try Self.onTerminal(["dump", "--frames", "230", pogo], columns: 200).map(Self.visible)
        #expect(l.count == 3) // the line, then the two UUIDs whole
        #expect(l.first?.hasSuffix("Attribute Not Found [21c50462…9aeb / 21c50462…9af0] (reply to #228, 12 ms)") == true, "\(l)")
        // Narrower: the service goes first, the reply stays whole.
        let n = try Self.onTerminal(["dump", "--frames", "230", pogo], columns: 160).map(Self.visible)
        #expect(n.count == 2 && n.first?.hasSuffix("Attribute Not Found [21c50462…9af0] (reply to #228, 12 ms)") == true, "\(n)")
        let pong = CLI.corpus.appendingPathComponent("pongbot_btsnoop_hci.log").path
        let p = try Self.onTerminal(["dump", "--frames", "390", pong], columns: 200).map(Self.visible)
        #expect(p.first?.hasSuffix("[089810cc… / 08981d24…] (reply to #376, 36 ms)") == true, "\(p)")
    }

    @Test func colourMarksFailuresAndNOCOLORIsRespected() throws {
        let band = CLI.capture("band_mtu23.btsnoop")
        let red = "\u{1B}[31m"
        let lines = try Self.onTerminal(["dump", "--wide", "--frames", "50-52", band])
        #expect(lines.count == 3)
        // 51: an Attribute Not Found that ends a discovery is not a failure: no line red.
        #expect(lines[1].contains("ATT Error Response") && !lines.contains { $0.contains(red) })
        // airbily #243: Write Request to handle 0x0000 answered Invalid Handle, red.
        let airbily = CLI.corpus.appendingPathComponent("airbily_bluethoot_logs.pcapng").path
        let attFailure = try Self.onTerminal(["dump", "--wide", "--frames", "243", airbily])
        #expect(attFailure[0].contains(red + "ATT Error Response"))
        // A disconnection for Connection Timeout is red; Remote User Terminated is not.
        let timeout = try Self.onTerminal(["dump", "--wide", "--frames", "514", Self.blefun])
        #expect(timeout[0].contains(red + "Disconnection Complete"))
        let normal = try Self.onTerminal(["dump", "--wide", "--frames", "151", band])
        #expect(!normal[0].contains(red))
        let plain = try Self.onTerminal(["dump", "--wide", "--frames", "243", airbily], env: ["NO_COLOR": "1"])
        #expect(!plain[0].contains("\u{1B}["))
        let forced = try CLI.run(["dump", "--color", "--frames", "243", airbily])
        #expect(forced.stdout.contains(red))
        // Failed commands: a Command Complete with an error status, a failed connection.
        let pong = CLI.capture("pongbot_btsnoop_hci.log")
        let failed = try Self.onTerminal(["dump", "--wide", "--frames", "858-859", pong])
        #expect(!failed[0].contains(red))
        #expect(failed[1].contains(red + "Command Complete: Delete Stored Link Key status=Invalid HCI Command Parameters"))
        let conn = try Self.onTerminal(["dump", "--wide", "--frames", "230", pong])
        #expect(conn[0].contains(red + "LE Meta: LE Enhanced Connection Complete"))
    }

    /// stats and dump print latencies alike: µs below 10 ms, whole ms above; "<1 ms" on a
    /// millisecond clock, never "0 µs" (stats printed "1.1 ms" and "0 µs" before).
    /// Median and p95 are HdrHistogram's (2 significant digits): here the exact values, 1399
    /// and 1578 µs of 860, 1399, 1578 (the log-bucket histogram before it printed 1387/1512).
    @Test func statsLatencyUnitsAsDump() throws {
        let band = try CLI.run(["stats", CLI.capture("band_mtu23.btsnoop")])
        #expect(band.stdout.contains("  1068 µs/1068 µs/1068 µs/1068 µs Device Information / PnP ID\n"))
        #expect(band.stdout.contains("  860 µs/1399 µs/1578 µs/1578 µs  fee7 (Tencent Holdings Limited.) / 36f5\n"))
        let json = try CLI.run(["stats", "--format", "json", CLI.capture("band_mtu23.btsnoop")])
        #expect(json.stdout.contains("\"millisecond_clock\":false"))
        let r = try CLI.run(["stats", Self.bafang])
        #expect(r.stdout.contains(" 132781          0  <1 ms/1 ms/7 ms/56 ms "))
        #expect(!r.stdout.contains(" µs"))
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
        #expect(lines.contains("    handle: 0x0001")) // hci
        #expect(lines.contains("    cid: 0x0004")) // l2cap
        #expect(lines.contains("    opcode: 0x12")) // att
        #expect(lines.contains("    handle: 0x0011")) // att
        #expect(lines.contains("    length: 9")) // lengths stay decimal
        // Flags as the summary shows them (auth=0x01), two-byte opcodes in four digits.
        let smp = try CLI.run(["dump", "-v", "--no-color", "--frames", "134", CLI.corpus.appendingPathComponent("btstack_sm_pairing.pklg").path])
        #expect(smp.stdout.hasPrefix("   134 12:12:52.256585 > [0x004a] SMP Pairing Request io=KeyboardDisplay auth=0x01 keysize=16\n"))
        for l in ["    auth_req: 0x01", "    initiator_key_distribution: 0x07", "    responder_key_distribution: 0x07"] {
            #expect(smp.stdout.contains(l + "\n"), "\(l)")
        }
        let reset = try CLI.run(["dump", "-v", "--no-color", "--frames", "1-2", CLI.capture("band_mtu23.btsnoop")])
        #expect(reset.stdout.contains("    opcode: 0x0c03\n") && reset.stdout.contains("    command_opcode: 0x0c03\n"))
        let adv = try CLI.run(["dump", "-v", "--no-color", "--frames", "1", CLI.corpus.appendingPathComponent("lightctl_btsnoop_hci.log").path])
        #expect(adv.stdout.contains("company_id: 0x004c\n"))
    }
}
