import Testing
import Foundation
import BluesiftWire
@testable import BluesiftPlugins

enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pluginsDir = root.appendingPathComponent("Plugins").path

    static func band() throws -> Plugin { try PluginLoader.load(file: pluginsDir + "/band.yaml") }
    static func bytes(_ hex: String) -> [UInt8] { Hex.parse(hex)! }
}

@Suite struct BandPluginTests {
    @Test func decodesSportCount() throws {
        let p = try Fixtures.band()
        let m = p.decode(Fixtures.bytes("a5 06 03 06 14 b2"))
        #expect(m.message == "sport_count")
        #expect(m.fields == [PluginField(name: "month", value: .int(6)), PluginField(name: "day", value: .int(20))])
        #expect(m.checksum == .ok)
        #expect(m.error == nil)
        #expect(m.header["cmd"] == 3)
        #expect(m.summary == "sport_count month=6 day=20 checksum ok")
    }

    @Test func badChecksumIsAVerdict() throws {
        let m = try Fixtures.band().decode(Fixtures.bytes("a5 06 03 06 14 00"))
        #expect(m.message == "sport_count")
        #expect(m.checksum == .bad)
        #expect(m.checksumExpected == 0xb2)
        #expect(m.checksumFound == 0)
        #expect(m.error == nil)
    }

    @Test func unknownCommandKeepsPayload() throws {
        let m = try Fixtures.band().decode(Fixtures.bytes("a5 06 42 01 02 e2"))
        #expect(m.message == "unknown")
        #expect(m["cmd"] == .int(0x42))
        #expect(m["payload"] == .bytes([1, 2]))
        #expect(m.checksum == .ok)
    }

    @Test func truncatedFrameSetsErrorKeepsMessage() throws {
        let m = try Fixtures.band().decode(Fixtures.bytes("a5 1e 84 01 00 05"))
        #expect(m.error != nil)
        #expect(m.message == "sport_data_reply")
    }

    @Test func sportDataReplySamples() throws {
        let m = try Fixtures.band().decode(Fixtures.bytes("a5 1e 84 01 00 05 00 3c 69 00 3d cd 00 3e 31 01 3f 95 01 40 f9 01 41 5d 02 42 c1 02 43 5f"))
        #expect(m.message == "sport_data_reply")
        guard case .list(let samples)? = m["samples"] else { Issue.record("no samples"); return }
        #expect(samples.count == 8)
        #expect(samples[7]["steps"] == .int(705))
        #expect(samples[7]["heart_rate"] == .int(67))
    }

    @Test func encodesWithLengthAndChecksum() throws {
        let p = try Fixtures.band()
        #expect(try p.encode(message: "sport_count", fields: ["month": 6, "day": 20]) == Fixtures.bytes("a5 06 03 06 14 b2"))
        #expect(try p.encode(message: "set_user_name", fields: ["name": "Alice"]) == Fixtures.bytes("a5 09 05 41 6c 69 63 65 eb"))
        #expect(try p.encode(message: "set_time_reply", fields: ["status": "ok"]) == Fixtures.bytes("a5 05 82 00 22"))
        #expect(try p.encode(message: "nack", fields: [:]) == Fixtures.bytes("a5 04 ee 4f"))
    }

    @Test func encodeRejectsMissingAndOutOfRange() throws {
        let p = try Fixtures.band()
        #expect(throws: PluginEncodeError.self) { try p.encode(message: "sport_count", fields: ["month": 6]) }
        #expect(throws: PluginEncodeError.self) { try p.encode(message: "sport_count", fields: ["month": 300, "day": 1]) }
        #expect(throws: PluginEncodeError.self) { try p.encode(message: "no_such", fields: [:]) }
    }

    @Test func everyExamplePasses() throws {
        let p = try Fixtures.band()
        #expect(p.examples.count == 16)
        for r in p.runExamples() { #expect(r.passed, "line \(r.line): \(r.problems)") }
    }

    @Test func responseRule() throws {
        let p = try Fixtures.band()
        let req = p.decode(Fixtures.bytes("a5 06 03 06 14 b2"))
        let rsp = p.decode(Fixtures.bytes("a5 06 83 34 12 06"))
        let other = p.decode(Fixtures.bytes("a5 05 82 00 22"))
        let nack = p.decode(Fixtures.bytes("a5 04 ee 4f"))
        #expect(p.isResponse(rsp, direction: .notify, to: req, direction: .write, elapsedMicroseconds: 12_000))
        #expect(!p.isResponse(rsp, direction: .notify, to: req, direction: .write, elapsedMicroseconds: 501_000))
        #expect(!p.isResponse(other, direction: .notify, to: req, direction: .write, elapsedMicroseconds: 1000))
        #expect(p.isResponse(nack, direction: .notify, to: req, direction: .write, elapsedMicroseconds: 1000))
        #expect(p.responseTimeout(for: req, direction: .write) == 500_000)
    }

    @Test func volatileFieldsAreIgnored() throws {
        let p = try Fixtures.band()
        #expect(p.volatileFields(message: "ping_reply") == ["counter", "uptime_s"])
        let a = p.decode(Fixtures.bytes("a5 0c 86 07 00 00 00 10 0e 00 00 36"))
        let b = p.decode(try p.encode(message: "ping_reply", fields: ["counter": 8, "uptime_s": 3601]))
        #expect(b.checksum == .ok)
        #expect(a.fields != b.fields)
        #expect(p.equalIgnoringVolatile(a, b))
        let c = p.decode(Fixtures.bytes("a5 06 83 34 12 06"))
        #expect(!p.equalIgnoringVolatile(a, c))
    }
}

@Suite struct LegoPluginTests {
    static func lego() throws -> Plugin { try PluginLoader.load(file: Fixtures.pluginsDir + "/lego-lwp3.yaml") }

    @Test func everyExamplePasses() throws {
        let p = try Self.lego()
        #expect(p.examples.count == 10)
        for r in p.runExamples() { #expect(r.passed, "line \(r.line): \(r.problems)") }
    }

    @Test func attachedIO() throws {
        let m = try Self.lego().decode(Fixtures.bytes("0f 00 04 01 01 25 00 00 00 00 10 00 00 00 10"))
        #expect(m.message == "hub_attached_io")
        #expect(m["io_type"] == .named(0x25, "vision_sensor"))
        #expect(m["sw_revision"]?["version"]?["major"] == .int(1))
        #expect(m.checksum == nil)
    }

    /// §3.2: a 130-byte message takes a 2-byte length, 0x82 0x01.
    @Test func longLengthEncoding() throws {
        let p = try Self.lego()
        let name = String(repeating: "x", count: 125)
        let b = try p.encode(message: "hub_properties", fields: ["property": "advertising_name", "operation": "set", "value": ["text": .string(name)]])
        #expect(b.count == 131)
        #expect(Array(b.prefix(4)) == [0x83, 0x01, 0x00, 0x01])
        let m = p.decode(b)
        #expect(m.error == nil)
        #expect(m["value"]?["text"] == .string(name))
        let short = try p.encode(message: "generic_error", fields: ["command_type": 0x81, "error_code": "ack"])
        #expect(short == [0x05, 0x00, 0x05, 0x81, 0x01])
    }
}
