import Testing
import Foundation
import BluesiftWire
import BluesiftPlugins

/// `bluesift plugins export --wireshark` checked with the real tshark (Debian's, Lua 5.2):
/// for every frame, the generated dissector shows the same messages, field values and
/// checksum verdicts as `bluesift frames --format jsonl`.
@Suite struct WiresharkExportTests {
    static let tshark: String? = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var ready: Bool { tshark != nil && PluginsCLITests.haveBinary }
    static let sep = "\u{1F}"

    static func run(_ exe: String, _ args: [String]) throws -> (status: Int32, out: String, err: String) {
        try PluginsCLITests.runProcess(exe, args)
    }

    static func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-ws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    /// What Wireshark registered for the dissector: field abbrev → ftype, and value strings.
    struct Registry { var ftypes: [String: String] = [:]; var labels: [String: [String: String]] = [:] }

    static func registry(_ lua: String, proto: String) throws -> Registry {
        var reg = Registry()
        for line in try run(tshark!, ["-G", "fields", "-X", "lua_script:" + lua]).out.split(separator: "\n") {
            let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if c.count >= 4, c[0] == "F", c[2].hasPrefix(proto + ".") { reg.ftypes[c[2]] = c[3] }
        }
        for line in try run(tshark!, ["-G", "values", "-X", "lua_script:" + lua]).out.split(separator: "\n") {
            let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if c.count >= 4, c[0] == "V", c[1].hasPrefix(proto + ".") { reg.labels[c[1], default: [:]][c[2]] = c[3] }
        }
        return reg
    }

    /// Flattens a message's JSON fields into (abbrev → values in order), the way the
    /// dissector names them: PROTO.MESSAGE.PATH, or PROTO.PATH for top-level frame fields.
    static func flatten(_ v: Any, path: String, message: String, proto: String, reg: Registry, into out: inout [String: [String]]) {
        switch v {
        case let d as [String: Any]:
            for (k, x) in d { flatten(x, path: path.isEmpty ? k : path + "." + k, message: message, proto: proto, reg: reg, into: &out) }
        case let a as [Any]:
            for x in a { flatten(x, path: path, message: message, proto: proto, reg: reg, into: &out) }
        default:
            let abbrev = reg.ftypes["\(proto).\(message).\(path)"] != nil ? "\(proto).\(message).\(path)" : "\(proto).\(path)"
            let text: String
            if let n = v as? NSNumber { text = n.stringValue } else { text = "\(v)" }
            out[abbrev, default: []].append(text)
        }
    }

    struct FrameView: Equatable { var messages: [String]; var checksums: [String]; var fields: [String: [String]] }

    static func bluesiftFrames(_ capture: String, plugin: String, reg: Registry, extra: [String] = []) throws -> [Int: FrameView] {
        let r = try PluginsCLITests.run(["frames", capture, "--format", "jsonl"] + extra)
        #expect(r.status == 0, "\(r.err)")
        var out: [Int: FrameView] = [:]
        for line in r.out.split(separator: "\n") {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            guard o["plugin"] as? String == plugin else { continue }
            let frame = o["frame"] as! Int, message = o["message"] as! String
            var v = out[frame] ?? FrameView(messages: [], checksums: [], fields: [:])
            v.messages.append(message)
            if let c = o["checksum"] as? String { v.checksums.append(c) }
            flatten(o["fields"] as! [String: Any], path: "", message: message, proto: plugin, reg: reg, into: &v.fields)
            out[frame] = v
        }
        return out
    }

    static func tsharkFrames(_ capture: String, lua: String, plugin: String, reg: Registry, expectedFields: Set<String>) throws -> [Int: FrameView] {
        let fields = ["frame.number", "\(plugin).message", "\(plugin).checksum.status"] + expectedFields.sorted()
        let r = try run(tshark!, ["-X", "lua_script:" + lua, "-r", capture, "-Y", plugin, "-T", "fields",
                                  "-E", "occurrence=a", "-E", "aggregator=" + sep, "-E", "separator=\t"] + fields.flatMap { ["-e", $0] })
        #expect(r.status == 0, "\(r.err)")
        #expect(!r.err.contains("Lua"), "\(r.err)")
        var out: [Int: FrameView] = [:]
        for line in r.out.split(separator: "\n") {
            let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard c.count == fields.count, let frame = Int(c[0]), !c[1].isEmpty else { continue }
            func values(_ s: String) -> [String] { s.isEmpty ? [] : s.components(separatedBy: sep) }
            var v = FrameView(messages: values(c[1]).filter { $0 != "fragment" }, checksums: values(c[2]), fields: [:])
            for (i, f) in fields.enumerated().dropFirst(3) where !c[i].isEmpty {
                v.fields[f] = values(c[i]).map { raw in
                    if let l = reg.labels[f]?[raw] { return l }
                    return reg.ftypes[f] == "FT_BYTES" ? raw.replacingOccurrences(of: ":", with: "") : raw
                }
            }
            if !v.messages.isEmpty { out[frame] = v }
        }
        return out
    }

    static func export(_ plugin: String, to dir: URL, extra: [String] = []) throws -> String {
        let lua = dir.appendingPathComponent(plugin + ".lua").path
        let r = try PluginsCLITests.run(["plugins", "export", "--wireshark", plugin, "-o", lua] + extra)
        #expect(r.status == 0, "\(r.err)")
        return lua
    }

    static func compare(plugin: String, lua: String, captures: [String], extra: [String] = []) throws -> Int {
        let reg = try registry(lua, proto: plugin)
        var compared = 0
        for cap in captures {
            let want = try bluesiftFrames(cap, plugin: plugin, reg: reg, extra: extra)
            let names = Set(want.values.flatMap { $0.fields.keys })
            for n in names { #expect(reg.ftypes[n] != nil, "\(cap): no Wireshark field \(n)") }
            let got = try tsharkFrames(cap, lua: lua, plugin: plugin, reg: reg, expectedFields: names)
            #expect(Set(got.keys) == Set(want.keys), "\(cap): frames differ")
            for (frame, w) in want { #expect(got[frame] == w, "\(cap) frame \(frame)") }
            compared += want.count
        }
        return compared
    }

    static var captures: [String] {
        let dir = Fixtures.root.appendingPathComponent("Captures")
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
            .filter { !$0.hasSuffix(".json") && !$0.hasSuffix(".md") }.sorted().map { dir.appendingPathComponent($0).path }
    }

    @Test(.enabled(if: ready)) func bandMatchesBluesiftOnEveryCapture() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lua = try Self.export("band", to: dir)
        let text = try String(contentsOfFile: lua, encoding: .utf8)
        #expect(text.contains("ProtoField.uint16(\"band.set_time.year\", \"year\", base.DEC, nil)"))
        #expect(text.contains("ProtoField.uint8(\"band.set_time_reply.status\", \"status\", base.DEC, {[0]=\"ok\", [1]=\"error\", [2]=\"busy\"})"))
        let reg = try Self.registry(lua, proto: "band")
        #expect(reg.ftypes["band.sport_data_reply.samples.steps"] == "FT_UINT16")
        #expect(reg.ftypes["band.live_steps.steps"] == "FT_UINT32")
        #expect(reg.ftypes["band.set_user_name.name"] == "FT_STRING")
        // 15 band messages in each of the three band captures (sport_data_reply spans 2 ATT values at MTU 23).
        let n = try Self.compare(plugin: "band", lua: lua, captures: Self.captures)
        #expect(n == 45)
    }

    @Test(.enabled(if: ready)) func reassemblySpansNotificationsAtMTU23() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lua = try Self.export("band", to: dir)
        let r = try Self.run(Self.tshark!, ["-X", "lua_script:" + lua, "-r", Fixtures.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path,
                                            "-Y", "frame.number >= 135 && frame.number <= 136", "-T", "fields",
                                            "-e", "frame.number", "-e", "band.fragment", "-e", "band.message", "-e", "band.sport_data_reply.samples.heart_rate"])
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        // The notification at 135 starts a 30-byte frame that the one at 136 completes.
        #expect(lines == ["135\t20 of 30 bytes\t\t", "136\t\tsport_data_reply\t100,103,106,109,112,115,118,61"])
    }

    @Test(.enabled(if: ready)) func badChecksumIsExpertInfo() throws {
        // The plugin's own examples as a capture: the bad-checksum one must be flagged.
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lua = try Self.export("band", to: dir)
        let cap = dir.appendingPathComponent("band_examples.btsnoop").path
        try SyntheticCapture.write(path: cap, service: [0xe7, 0xfe], characteristic: [0xf5, 0x36], notifyCharacteristic: [0xf6, 0x36],
                                   examples: try PluginLoader.load(file: Fixtures.pluginsDir + "/band.yaml").examples)
        let n = try Self.compare(plugin: "band", lua: lua, captures: [cap])
        #expect(n == 16)
        let r = try Self.run(Self.tshark!, ["-X", "lua_script:" + lua, "-r", cap, "-Y", "band.checksum.status == \"bad\"", "-T", "fields",
                                            "-e", "band.message", "-e", "_ws.expert.message"])
        #expect(r.out.contains("sport_count\tBad checksum: 0x0, computed 0xb2"))
    }

    @Test(.enabled(if: ready)) func legoExamplesMatchBluesift() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lua = try Self.export("lego-lwp3", to: dir)
        let cap = dir.appendingPathComponent("lego_examples.btsnoop").path
        let hub: [UInt8] = Array([0x00, 0x00, 0x16, 0x24, 0x12, 0x12, 0xef, 0xde, 0x16, 0x23, 0x78, 0x5f, 0xea, 0xbc, 0xd1, 0x23].reversed())
        let service: [UInt8] = Array([0x00, 0x00, 0x16, 0x23, 0x12, 0x12, 0xef, 0xde, 0x16, 0x23, 0x78, 0x5f, 0xea, 0xbc, 0xd1, 0x23].reversed())
        try SyntheticCapture.write(path: cap, service: service, characteristic: hub, notifyCharacteristic: nil,
                                   examples: try PluginLoader.load(file: Fixtures.pluginsDir + "/lego-lwp3.yaml").examples)
        let reg = try Self.registry(lua, proto: "lego-lwp3")
        #expect(reg.ftypes["lego-lwp3.hub_attached_io.hw_revision.version.major"] == "FT_UINT8")
        #expect(reg.ftypes["lego-lwp3.length"] == "FT_UINT64")
        let n = try Self.compare(plugin: "lego-lwp3", lua: lua, captures: [cap])
        #expect(n == 10)
    }

    @Test(.enabled(if: PluginsCLITests.haveBinary)) func unexpressibleFeatureFailsWithFileLine() throws {
        let f = try PluginsCLITests.tempPlugin("""
        id: wide
        match:
          - { characteristic: 36f5 }
        frame:
          - { id: a, type: u1 }
          - id: crc
            type: u8
            checksum: { algorithm: crc, width: 64, poly: 0x42F0E1EBA9EA3693 }

        """)
        defer { try? FileManager.default.removeItem(at: f.deletingLastPathComponent()) }
        let r = try PluginsCLITests.run(["plugins", "export", "--wireshark", "wide", "--plugins", f.deletingLastPathComponent().path])
        #expect(r.status == 2)
        #expect(r.err == "bluesift: \(f.path):6: cannot export to Wireshark Lua: a 64-bit CRC (Lua 5.2's bit32 holds 32 bits)\n")
        #expect(r.out.isEmpty)
    }
}

/// A btsnoop (H4) capture of one LE connection: discovery of one service with a write and
/// a notify characteristic (so Wireshark and bluesift both name the handles), then each
/// plugin example as a Write Command or a Notification, one ATT value each.
enum SyntheticCapture {
    static func write(path: String, service: [UInt8], characteristic: [UInt8], notifyCharacteristic: [UInt8]?, examples: [PluginExample]) throws {
        var file: [UInt8] = Array("btsnoop\0".utf8) + be32(1) + be32(1002)
        var t: UInt64 = 0x00E0_3C4E_3F1A_8000 // 2024 in btsnoop µs since year 0
        func record(_ h4: [UInt8], sent: Bool) {
            t += 1000
            let flags: UInt32 = (sent ? 0 : 1) | (h4[0] == 0x01 || h4[0] == 0x04 ? 2 : 0)
            file += be32(UInt32(h4.count)) + be32(UInt32(h4.count)) + be32(flags) + be32(0)
            for i in (0..<8).reversed() { file.append(UInt8((t >> (UInt64(i) * 8)) & 0xFF)) }
            file += h4
        }
        func att(_ pdu: [UInt8], sent: Bool) {
            let l2 = le16(UInt16(pdu.count)) + le16(4) + pdu
            record([0x02] + le16(0x0040) + le16(UInt16(l2.count)) + l2, sent: sent)
        }
        // Core 5.4 Vol 4 Part E §7.7.65.1: LE Connection Complete, handle 0x0040, central.
        record([0x04, 0x3e, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x18, 0x00, 0x00, 0x00, 0xc8, 0x00, 0x00], sent: false)
        // Vol 3 Part F §3.4.4.9/10: Read By Group Type (primary services) 0x0001-0xffff.
        att([0x10, 0x01, 0x00, 0xff, 0xff, 0x00, 0x28], sent: true)
        att([0x11, UInt8(4 + service.count), 0x0a, 0x00, 0x10, 0x00] + service, sent: false)
        // §3.4.4.1/2: Read By Type (characteristic declarations) in the service.
        att([0x08, 0x0a, 0x00, 0x10, 0x00, 0x03, 0x28], sent: true)
        var decls: [UInt8] = [0x0b, 0x00, 0x1c, 0x0c, 0x00] + characteristic          // write + notify, value 0x000c
        if let n = notifyCharacteristic {
            decls += [0x0d, 0x00, 0x10, 0x0e, 0x00] + n                                   // notify, value 0x000e
        }
        att([0x09, UInt8(5 + characteristic.count)] + decls, sent: false)
        att([0x08, 0x0f, 0x00, 0x10, 0x00, 0x03, 0x28], sent: true)
        att([0x01, 0x08, 0x0f, 0x00, 0x0a], sent: false)
        for e in examples {
            let notify = e.direction != .write
            let handle: UInt16 = notify && notifyCharacteristic != nil ? 0x000e : 0x000c
            att([notify ? 0x1b : 0x52] + le16(handle) + e.bytes, sent: !notify)
        }
        FileManager.default.createFile(atPath: path, contents: Data(file))
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
}
