import Foundation
import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// Directed forwarding control messages (Mesh Protocol v1.1 §3.6.5.11-§3.6.5.17). Neither
/// tshark 4.0 nor Silvair's bluetooth-mesh decodes them, so the reference is
/// scripts/mesh_path_fixtures.py: bytes packed bit by bit from the specification's field
/// tables, written apart from the Swift.
@Suite struct MeshPathMessageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = "/usr/bin/python3"
    static let available = FileManager.default.isExecutableFile(atPath: python)

    static func fixtures() throws -> [[String: Any]] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [root.appendingPathComponent("scripts/mesh_path_fixtures.py").path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    /// Every field the hand-built messages carry, compared by name; every message encodes
    /// back to its octets.
    @Test(.enabled(if: available, "needs python3 for scripts/mesh_path_fixtures.py"))
    func handBuiltMessagesAgree() throws {
        let fixtures = try Self.fixtures()
        var fields = 0, agree = 0, opcodes = Set<Int>()
        for f in fixtures {
            let op = f["opcode"] as! Int, params = Hex.parse(f["parameters"] as! String)!
            let m = try #require(try MeshPathMessage(opcode: MeshControlOpcode(rawValue: UInt8(op)), parameters: params))
            #expect(m.opcode.rawValue == UInt8(op))
            #expect(m.encodeParameters() == params, "\(Hex.string(params))")
            let ours = try JSONSerialization.jsonObject(with: Data(json(m).utf8)) as! [String: Any]
            opcodes.insert(op)
            for (k, v) in f["fields"] as! [String: Any] {
                fields += 1
                if NSDictionary(dictionary: ["v": v]).isEqual(to: ["v": ours[k] as Any]) {
                    agree += 1
                } else {
                    Issue.record("\(Hex.string(params)) \(k): ours \(String(describing: ours[k])), spec tables \(v)")
                }
            }
        }
        print("mesh path messages (hand-built from the field tables): \(fixtures.count) messages (\(opcodes.count) opcodes), \(fields) fields, \(agree) agree")
        #expect(opcodes.count == 7)
        #expect(fields == agree)
        #expect(fields > 150) // 195 top-level fields (address ranges compared whole)
    }

    /// A PATH_REQUEST with a dependent origin, fields by name, through the control message.
    @Test func pathRequestThroughControlMessage() throws {
        // OBO 1, metric type 0, lifetime 2 (24 hours), interval 1, forwarding number 5, metric 3,
        // destination 0xC000, origin 0x0102 + 3 addresses, dependent origin 0x0200.
        let p: [UInt8] = [0b1000_1010, 0x05, 0x03, 0xC0, 0x00, 0x81, 0x02, 0x03, 0x02, 0x00]
        let c = MeshControlMessage(opcode: .pathRequest, parameters: p)
        try c.validate()
        #expect(
            json(c)
                == #"{"opcode":11,"name":"Path Request","on_behalf_of_dependent_origin":1,"path_origin_path_metric_type":0,"path_origin_path_metric_type_name":"node count","path_origin_path_lifetime":2,"path_origin_path_lifetime_name":"24 hours","path_discovery_interval":1,"path_discovery_interval_name":"30 seconds","prohibited":0,"path_origin_forwarding_number":5,"path_origin_path_metric":3,"destination":49152,"path_origin_unicast_addr_range":{"length_present":1,"range_start":258,"range_length":3},"dependent_origin_unicast_addr_range":{"length_present":0,"range_start":512}}"#
        )
        #expect(c.summary == "Mesh Path Request origin=0x0102 destination=0xc000")
        // Without the dependent origin the OBO flag promises: a typed error, shown as a note.
        let short = MeshControlMessage(opcode: .pathRequest, parameters: Array(p.prefix(8)))
        #expect(throws: DecodeError.self) { try short.validate() }
        #expect(json(short).contains(#""parameters":"8a0503c000810203","error":"#))
        #expect(throws: DecodeError.self) { try MeshControlMessage(opcode: .pathEchoReply, parameters: [1, 2, 3]).validate() }
        #expect(json(MeshControlMessage(opcode: .pathEchoReply, parameters: [0x12, 0x01])) == #"{"opcode":15,"name":"Path Echo Reply","destination":4609}"#)
    }
}
