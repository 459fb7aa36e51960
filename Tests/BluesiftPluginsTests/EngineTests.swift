import Testing
import Foundation
import BluesiftWire
@testable import BluesiftPlugins

@Suite struct ChecksumTests {
    static let check = Array("123456789".utf8)

    /// Check values from the CRC RevEng catalogue.
    @Test func catalogueCheckValues() {
        #expect(ChecksumAlgorithm.xor8.compute(Self.check) == 0x31)
        #expect(ChecksumAlgorithm.sum8.compute(Self.check) == 0xDD)
        #expect(ChecksumAlgorithm.crc8Maxim.compute(Self.check) == 0xA1)
        #expect(ChecksumAlgorithm.crc8SMBus.compute(Self.check) == 0xF4)
        #expect(ChecksumAlgorithm.crc16CCITTFalse.compute(Self.check) == 0x29B1)
        #expect(ChecksumAlgorithm.crc16Modbus.compute(Self.check) == 0x4B37)
        #expect(ChecksumAlgorithm.crc16XModem.compute(Self.check) == 0x31C3)
        #expect(ChecksumAlgorithm.crc32.compute(Self.check) == 0xCBF4_3926)
        // Generic form: CRC-8/ROHC (poly 07, init ff, refin/out) = 0xD0.
        let rohc = ChecksumAlgorithm(kind: .crc, width: 8, poly: 0x07, initial: 0xFF, refin: true, refout: true)
        #expect(rohc.compute(Self.check) == 0xD0)
    }
}

@Suite struct ExpressionTests {
    func eval(_ s: String, _ vars: [String: Int64] = [:]) throws -> Int64 {
        try Expr.parse(s).evaluate { vars[$0] }
    }

    @Test func precedenceAndOperators() throws {
        #expect(try eval("1 + 2 * 3") == 7)
        #expect(try eval("(1 + 2) * 3") == 9)
        #expect(try eval("len - 4", ["len": 6]) == 2)
        #expect(try eval("cmd | 0x80", ["cmd": 3]) == 0x83)
        #expect(try eval("1 << 4 | 1") == 17)
        #expect(try eval("0xff & ~0x0f") == 0xf0)
        #expect(try eval("7 % 4 == 3 && 2 > 1") == 1)
        #expect(try eval("-3 + 5") == 2)
        #expect(try eval("0b101 ^ 1") == 4)
        #expect(try eval("request.cmd + 1", ["request.cmd": 2]) == 3)
    }

    @Test func divisionByZeroIsAnErrorNotATrap() throws {
        #expect(throws: Expr.EvalError.self) { try eval("10 / (len - 6)", ["len": 6]) }
        #expect(throws: Expr.EvalError.self) { try eval("10 % 0") }
        #expect(throws: Expr.EvalError.self) { try eval("1 << 64") }
        #expect(throws: Expr.EvalError.self) { try eval("missing + 1") }
        // Short-circuit keeps guarded divisions safe; overflow wraps.
        #expect(try eval("n != 0 && 10 / n > 1", ["n": 0]) == 0)
        #expect(try eval("9223372036854775807 + 1") == Int64.min)
        #expect(try eval("-9223372036854775808 / -1") == Int64.min)
    }

    @Test func parseErrorsAndDepthLimit() {
        #expect(throws: Expr.ParseError.self) { try Expr.parse("1 +") }
        #expect(throws: Expr.ParseError.self) { try Expr.parse("(1") }
        #expect(throws: Expr.ParseError.self) { try Expr.parse("a $ b") }
        #expect(throws: Expr.ParseError.self) { try Expr.parse(String(repeating: "(", count: 100) + "1" + String(repeating: ")", count: 100)) }
    }
}

@Suite struct LoadErrorTests {
    func error(_ yaml: String) -> PluginError? {
        do { _ = try PluginLoader.compile(yaml: yaml, path: "t.yaml"); return nil } catch { return error }
    }

    static let head = """
        id: t
        match:
          - { characteristic: 36f5 }
        """

    @Test func malformedYAMLHasALine() {
        let e = error("id: t\nmatch: [\n  - a: b\n")
        #expect(e?.line ?? 0 > 0)
        #expect(e?.message.hasPrefix("malformed YAML") == true)
    }

    @Test func unknownType() {
        let e = error(Self.head + "\nframe:\n  - { id: a, type: u9 }\n")
        #expect(e?.line == 5)
        #expect(e?.description.hasPrefix("t.yaml:5: unknown type 'u9'") == true)
    }

    @Test func undefinedReference() {
        let e = error(Self.head + "\nframe:\n  - { id: a, type: u1 }\n  - { id: b, size: c + 1 }\n")
        #expect(e?.line == 6)
        #expect(e?.message == "'c' is not a field defined before 'b'")
    }

    @Test func referenceToALaterFieldIsRejected() {
        let e = error(Self.head + "\nframe:\n  - { id: b, size: a }\n  - { id: a, type: u1 }\n")
        #expect(e?.line == 5)
    }

    @Test func cycleInNestedTypes() {
        let e = error(
            Self.head + """

                frame:
                  - { id: a, type: x }
                types:
                  x:
                    - { id: y1, type: y }
                  y:
                    - { id: x1, type: x }
                """)
        #expect(e?.message.hasPrefix("cycle in nested types") == true)
        #expect(e?.line == 8 || e?.line == 10)
    }

    @Test func unknownKeyAndChecksum() {
        #expect(error(Self.head + "\nframe:\n  - { id: a, type: u1, sise: 3 }\n")?.line == 5)
        #expect(error(Self.head + "\nframe:\n  - { id: a, type: u1, checksum: crc99 }\n")?.message.hasPrefix("unknown checksum") == true)
        #expect(error(Self.head + "\nframe:\n  - { id: a, type: u1, checksum: crc32 }\n")?.message == "checksum is wider than its 1-byte field")
    }

    @Test func missingPartsAndBadMatch() {
        #expect(error("id: t\nframe: []\n")?.message == "missing 'match'")
        #expect(error("id: t\nmatch:\n  - { characteristic: zz }\nframe: []\n")?.line == 3)
        #expect(error("match: []\n")?.message == "missing 'id'")
    }

    @Test func loaderSkipsBrokenPluginsAndKeepsOthers() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-plugins-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try (Self.head + "\nframe:\n  - { id: a, type: u9 }\n").write(to: dir.appendingPathComponent("a-broken.yaml"), atomically: true, encoding: .utf8)
        try String(contentsOfFile: Fixtures.pluginsDir + "/band.yaml", encoding: .utf8)
            .write(to: dir.appendingPathComponent("b.yaml"), atomically: true, encoding: .utf8)
        let loaded = PluginLoader.load(directories: [dir.path, Fixtures.pluginsDir])
        // b.yaml's band first; the folder's own band.yaml (same id, later on the path) is not loaded twice.
        let ids = loaded.plugins.map(\.id)
        #expect(ids.first == "band" && ids.contains("lego-lwp3") && ids.contains("bthome-v2"))
        #expect(ids.filter { $0 == "band" }.count == 1)
        #expect(loaded.plugins[0].path.hasSuffix("/b.yaml"))
        #expect(loaded.errors.count == 1)
        #expect(loaded.errors.first?.description.hasSuffix("a-broken.yaml:5: unknown type 'u9' (built-in: u1…u8, s1…s8 with le/be, vlq, str, strz, bytes; or a name under types)") == true)
    }

    @Test func searchPath() {
        let dirs = PluginLoader.searchPath(
            executable: "/repo/.build/debug/bluesift", extra: ["/x"],
            environment: ["BLUESIFT_PLUGINS": "/a:/b"])
        #expect(dirs == ["/x", "/a", "/b", "/repo/.build/share/bluesift/Plugins", "/repo/Plugins"])
    }
}

@Suite struct CRCPluginTests {
    /// A Modbus-style frame: addr, func, count, data[count], CRC-16/MODBUS little-endian over all before.
    static let yaml = """
        id: modbusish
        match:
          - { service: ffe0, characteristic: ffe1, direction: [write, notify] }
        frame:
          - { id: addr, type: u1 }
          - { id: func, type: u1 }
          - { id: count, type: u1, value: "_size - 5 - (func == 0x10)" }
          - { id: data, size: count }
          - { id: crc, type: u2le, checksum: crc16-modbus }
          - id: crc8
            type: u1
            if: func == 0x10
            checksum: { algorithm: crc, width: 8, poly: 0x07, from: 0, to: _offset }
        examples:
          - { direction: write, hex: 01 03 02 00 0a 38 43, message: frame, fields: { addr: 1, func: 3, data: "000a" }, checksum: ok }
        """

    @Test func modbusFrame() throws {
        let p = try PluginLoader.compile(yaml: Self.yaml, path: "m.yaml")
        let good: [UInt8] = try p.encode(message: "frame", fields: ["addr": 1, "func": 3, "data": .bytes([0x00, 0x0a])])
        #expect(good == [0x01, 0x03, 0x02, 0x00, 0x0a, 0x38, 0x43])
        #expect(p.decode(good).checksum == .ok)
        var bad = good; bad[3] = 0xFF
        #expect(p.decode(bad).checksum == .bad)
        for r in p.runExamples() { #expect(r.passed, "\(r.problems)") }
        // Two checksums: CRC-16 then a CRC-8 covering it as well.
        let two = try p.encode(message: "frame", fields: ["addr": 1, "func": 0x10, "data": .bytes([7])])
        try #require(two.count == 7)
        #expect(two[2] == 1)
        #expect(UInt64(two[6]) == ChecksumAlgorithm.crc8SMBus.compute(Array(two[0..<6])))
        #expect(p.decode(two).checksum == .ok)
    }
}

@Suite struct FrameAssemblerTests {
    static func band() throws -> (Plugin, FrameAssembler) {
        let p = try Fixtures.band()
        return (p, FrameAssembler(framing: p.framing!))
    }
    static let key = FrameAssembler.StreamKey(device: 1, handle: 0x0012, direction: .notify)

    @Test func thirtyByteReplySpansTwoNotifications() throws {
        let (p, a) = try Self.band()
        let frame = Fixtures.bytes("a5 1e 84 01 00 05 00 3c 69 00 3d cd 00 3e 31 01 3f 95 01 40 f9 01 41 5d 02 42 c1 02 43 5f")
        let first = a.push(Self.key, Array(frame[0..<20]), atMicroseconds: 1_000)
        #expect(first.frames.isEmpty)
        #expect(first.pending == 20)
        #expect(first.pendingNeed == 30)
        let second = a.push(Self.key, Array(frame[20...]), atMicroseconds: 8_000)
        #expect(second.frames == [frame])
        #expect(second.pending == 0)
        #expect(p.decode(second.frames[0]).message == "sport_data_reply")
    }

    @Test func twoFramesInOneWriteAreSplit() throws {
        let (_, a) = try Self.band()
        let out = a.push(Self.key, Fixtures.bytes("a5 04 01 a0 a5 06 03 06 14 b2"), atMicroseconds: 0)
        #expect(out.frames == [Fixtures.bytes("a5 04 01 a0"), Fixtures.bytes("a5 06 03 06 14 b2")])
    }

    @Test func timeoutDropsAPartialFrame() throws {
        let (_, a) = try Self.band()
        _ = a.push(Self.key, Fixtures.bytes("a5 1e 84 01"), atMicroseconds: 0)
        let out = a.push(Self.key, Fixtures.bytes("a5 04 01 a0"), atMicroseconds: 2_000_000)
        #expect(out.dropped.count == 1)
        #expect(out.frames == [Fixtures.bytes("a5 04 01 a0")])
    }

    @Test func streamsAreKeptApartAndGarbageIsSkipped() throws {
        let (_, a) = try Self.band()
        let other = FrameAssembler.StreamKey(device: 2, handle: 0x0012, direction: .notify)
        _ = a.push(Self.key, Fixtures.bytes("a5 06 03"), atMicroseconds: 0)
        let o = a.push(other, Fixtures.bytes("00 11 a5 04 01 a0"), atMicroseconds: 0)
        #expect(o.frames == [Fixtures.bytes("a5 04 01 a0")])
        #expect(o.dropped == ["dropped 2 bytes before the frame start"])
        #expect(a.push(Self.key, Fixtures.bytes("06 14 b2"), atMicroseconds: 10).frames == [Fixtures.bytes("a5 06 03 06 14 b2")])
    }

    @Test func terminatorFraming() {
        var f = FramingSpec()
        f.terminator = [0x0d, 0x0a]
        let a = FrameAssembler(framing: f)
        let k = Self.key
        #expect(a.push(k, Array("AT+X".utf8), atMicroseconds: 0).frames.isEmpty)
        #expect(a.push(k, Array("\r\nOK\r\n".utf8), atMicroseconds: 1).frames == [Array("AT+X\r\n".utf8), Array("OK\r\n".utf8)])
    }

    @Test func pluginSetMatchesAndReassembles() throws {
        let set = PluginSet([try Fixtures.band()])
        let svc = BluetoothUUID(0xfee7), ch = BluetoothUUID(0x36f6)
        #expect(set.match(service: svc, characteristic: BluetoothUUID(0x2a19), handle: 3, direction: .notify) == nil)
        #expect(set.match(service: svc, characteristic: ch, handle: 3, direction: .write) == nil)
        let frame = Fixtures.bytes("a5 1e 84 01 00 05 00 3c 69 00 3d cd 00 3e 31 01 3f 95 01 40 f9 01 41 5d 02 42 c1 02 43 5f")
        let r1 = frame[0..<20].withUnsafeBytes { set.process(service: svc, characteristic: ch, handle: 0x12, direction: .notify, device: 1, value: $0, timeMicroseconds: 0) }
        #expect(r1?.messages.isEmpty == true)
        #expect(r1?.pending == 20)
        let r2 = frame[20...].withUnsafeBytes { set.process(service: svc, characteristic: ch, handle: 0x12, direction: .notify, device: 1, value: $0, timeMicroseconds: 5000) }
        #expect(r2?.messages.map(\.message) == ["sport_data_reply"])
    }
}

@Suite struct LengthAndCountTests {
    /// A length-prefixed name and a counted list: both counts computed on encode.
    static let yaml = """
        id: tlv
        endian: be
        match:
          - { characteristic: ffe1 }
        frame:
          - { id: name_len, type: u1, value: name._length }
          - { id: name, type: str, size: name_len }
          - { id: n, type: u1, value: items._count }
          - { id: items, type: u2, repeat: n }
          - { id: tail, type: bytes, size: _remaining }
        """

    @Test func computedLengthAndCountRoundTrip() throws {
        let p = try PluginLoader.compile(yaml: Self.yaml, path: "tlv.yaml")
        let b = try p.encode(message: "frame", fields: ["name": "hi", "items": [1, 0x0203], "tail": .bytes([9])])
        #expect(b == [2, 0x68, 0x69, 2, 0x00, 0x01, 0x02, 0x03, 9])
        let m = p.decode(b)
        #expect(m.error == nil)
        #expect(m["name"] == .string("hi"))
        #expect(m["items"] == [1, 0x0203])
        #expect(try p.encode(m) == b)
        // A count larger than the data is an error on that frame, not a crash.
        let bad = p.decode([0, 9, 0x00])
        #expect(bad.error != nil)
    }

    @Test func lengthOfAnUnknownFieldIsRejected() {
        #expect(throws: PluginError.self) {
            try PluginLoader.compile(yaml: Self.yaml.replacingOccurrences(of: "value: name._length", with: "value: nope._length"), path: "x")
        }
    }
}
