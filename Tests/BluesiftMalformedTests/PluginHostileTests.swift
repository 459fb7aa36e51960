import Testing
import Foundation
import BluesiftPlugins
#if canImport(Glibc)
    import Glibc
#endif

/// Issue 13's plugin nasties: each is refused with FILE:LINE, in bounded time, and the
/// plugins beside it keep loading.
@Suite struct PluginHostileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let band = root.appendingPathComponent("Plugins/band.yaml").path
    static var bandYAML: String { (try? String(contentsOfFile: band, encoding: .utf8)) ?? "" }

    static func folder(_ files: [String: String]) throws -> String {
        let dir = Temp.dir.appendingPathComponent("plugins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(to: dir.appendingPathComponent(name), atomically: false, encoding: .utf8) }
        return dir.path
    }

    /// Two `cases` entries for 0x01 (one spelled 1): the second shadowed the first silently.
    @Test func duplicateKeyIsAnErrorWithItsLine() throws {
        let yaml = Self.bandYAML.replacingOccurrences(of: "      0x81: device_info_reply\n", with: "      0x81: device_info_reply\n      1: set_time\n")
        #expect(yaml != Self.bandYAML)
        do throws(PluginError) {
            _ = try PluginLoader.compile(yaml: yaml, path: "dup.yaml")
            Issue.record("compiled a plugin with a duplicate case")
        } catch {
            let line = yaml.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0 == "      1: set_time" }.map { $0 + 1 }
            #expect(error.line == line)
            #expect(error.message.hasPrefix("duplicate key '1' (first at line \((line ?? 0) - 2))"), "\(error)")
        }
        #expect(throws: PluginError.self) { _ = try PluginLoader.compile(yaml: "id: a\nid: b\nframe: []\n", path: "x.yaml") }
    }

    /// A second plugin with the same id in one folder is an error naming both files.
    @Test func duplicatePluginIdInOneFolderIsAnError() throws {
        let dir = try Self.folder(["a.yaml": Self.bandYAML, "b.yaml": Self.bandYAML])
        let loaded = PluginLoader.load(directories: [dir])
        #expect(loaded.plugins.map(\.id) == ["band"])
        #expect(loaded.plugins.first?.path == dir + "/a.yaml")
        let line = Self.bandYAML.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("id: ") }! + 1
        #expect(loaded.errors.map(\.description) == ["\(dir)/b.yaml:\(line): duplicate plugin id 'band': already defined by \(dir)/a.yaml:\(line)"])
        // Across folders the earlier one still wins quietly (a user's folder overrides the installed one).
        let other = try Self.folder(["c.yaml": Self.bandYAML])
        #expect(PluginLoader.load(directories: [dir, other]).errors.count == 1)
    }

    /// Billion laughs: nine levels of nine aliases. Refused fast, with a line.
    @Test func aliasBombIsRefusedInBoundedTime() throws {
        var yaml = "id: bomb\nmatch:\n  - { characteristic: fff1 }\nframe:\n  - { id: a, type: u1 }\nenums:\n"
        yaml += "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for i in 1...9 { yaml += "  l\(i): &l\(i) [" + Array(repeating: "*l\(i - 1)", count: 9).joined(separator: ", ") + "]\n" }
        do throws(PluginError) {
            _ = try PluginLoader.compile(yaml: yaml, path: "bomb.yaml")
            Issue.record("compiled an alias bomb")
        } catch {
            #expect(error.line > 0)
            #expect(error.message.contains("expands to more than"), "\(error)")
        }
    }

    @Test func nonUTF8IsRefusedWithItsLine() throws {
        let dir = try Self.folder(["good.yaml": Self.bandYAML])
        var bytes = Array("id: x\nname: caf".utf8) + [0xE9] + Array("\nframe: []\n".utf8)
        FileManager.default.createFile(atPath: dir + "/bad.yaml", contents: Data(bytes))
        bytes = []
        let loaded = PluginLoader.load(directories: [dir])
        #expect(loaded.plugins.map(\.id) == ["band"])
        #expect(loaded.errors.map(\.description) == ["\(dir)/bad.yaml:2: not UTF-8 text (invalid byte at offset 15)"])
    }

    /// A symlink loop and a dangling link in the folder: reported, the others load.
    @Test func symlinkLoopInThePluginFolder() throws {
        let dir = try Self.folder(["good.yaml": Self.bandYAML])
        #expect(symlink(dir + "/loop2.yaml", dir + "/loop1.yaml") == 0)
        #expect(symlink(dir + "/loop1.yaml", dir + "/loop2.yaml") == 0)
        #expect(symlink(dir, dir + "/self.yaml") == 0)
        let loaded = PluginLoader.load(directories: [dir])
        #expect(loaded.plugins.map(\.id) == ["band"])
        #expect(loaded.errors.count == 3)
    }

    /// The load-time nasties side by side with the band's plugin, through the CLI: `plugins
    /// check` names each with FILE:LINE (exit 2), and `dump` still decodes the band's frames
    /// with that folder, in bounded time and memory.
    @Test func nastiesBesideAGoodPluginThroughTheCLI() throws {
        var bomb = "id: bomb\nmatch:\n  - { characteristic: fff1 }\nframe:\n  - { id: a, type: u1 }\nenums:\n"
        bomb += "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for i in 1...9 { bomb += "  l\(i): &l\(i) [" + Array(repeating: "*l\(i - 1)", count: 9).joined(separator: ", ") + "]\n" }
        let nested = "id: nested\nmatch:\n  - { characteristic: fff2 }\nframe: " + String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000) + "\n"
        let recursive = "id: recursive\nmatch:\n  - { characteristic: fff3 }\nframe:\n  - { id: root, type: node }\ntypes:\n  node:\n    - { id: tag, type: u1 }\n    - { id: child, type: node, if: tag != 0 }\n"
        let expr = "id: expr\nmatch:\n  - { characteristic: fff4 }\nframe:\n  - { id: data, size: \"" + String(repeating: "(", count: 5000) + "1" + String(repeating: ")", count: 5000) + "\" }\n"
        let dir = try Self.folder([
            "band.yaml": Self.bandYAML, "bomb.yaml": bomb, "nested.yaml": nested,
            "recursive.yaml": recursive, "expr.yaml": expr
        ])
        let check = try CLI.run(["plugins", "check"] + ["band", "bomb", "nested", "recursive", "expr"].map { "\(dir)/\($0).yaml" })
        #expect(check.status == 2)
        let lines = check.stderr.split(separator: "\n").map(String.init).sorted()
        #expect(lines.count == 4, "\(check.stderr)")
        for (line, name) in zip(lines, ["bomb", "expr", "nested", "recursive"]) {
            // bluesift: DIR/NAME.yaml:LINE: message
            let rest = line.hasPrefix("bluesift: \(dir)/\(name).yaml:") ? line.dropFirst(10 + dir.count + name.count + 7) : ""
            #expect((Int(rest.prefix { $0.isNumber }) ?? 0) > 0, "\(line)")
        }
        #expect(check.stdout.contains("band.yaml: ok (band: "), "\(check.stdout)")
        let dump = try CLI.run([
            "dump", "--plugins", dir, "--frames", "118-136",
            Self.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path
        ])
        #expect(dump.status == 0)
        #expect(dump.stdout.contains("band sport_count"), "\(dump.stdout)")
        #expect(dump.peakRSSKiB > 0 && dump.peakRSSKiB < 200_000, "\(dump.peakRSSKiB) KiB")
    }

    /// A thousand plugins in a folder load, each under its own id, in bounded time.
    @Test func aThousandPluginsInAFolder() throws {
        let count = 1000 * CaptureHostileTests.scale
        var files: [String: String] = [:]
        for i in 0..<count {
            files[String(format: "p%05d.yaml", i)] = "id: p\(i)\nmatch:\n  - { characteristic: \(String(format: "%04x", 0xA000 + i)) }\nframe:\n  - { id: a, type: u1 }\n"
        }
        files["p00500.yaml"] = "id: broken\nframe:\n  - { id: a, type: nope }\n"
        let dir = try Self.folder(files)
        let loaded = PluginLoader.load(directories: [dir])
        #expect(loaded.plugins.count == count - 1)
        #expect(loaded.errors.count == 1 && loaded.errors[0].path.hasSuffix("p00500.yaml") && loaded.errors[0].line > 0, "\(loaded.errors)")
    }

    /// The band's trailing XOR is checked from the framing even when the body does not match
    /// the plugin's layout (a newer firmware's longer reply); the body error stays.
    @Test func checksumVerdictWithoutAMatchingBody() throws {
        let p = try PluginLoader.load(file: Self.band)
        // device_info_reply (0x81) with a body one byte shorter than the layout: a5 06 81 01 04 cs
        var good: [UInt8] = [0xA5, 0x06, 0x81, 0x01, 0x04]
        good.append(good.reduce(0, ^))
        let m = p.decode(good)
        #expect(m.error != nil)
        #expect(m.checksum == .ok)
        var bad = good; bad[5] ^= 0xFF
        let b = p.decode(bad)
        #expect(b.error != nil && b.checksum == .bad)
        #expect(b.checksumFound == UInt64(bad[5]) && b.checksumExpected == UInt64(good[5]))
    }
}
