import Foundation
import Testing

/// A Mesh vendor model's messages through the shipped plugin (Plugins/nordic-mesh-chat.yaml)
/// from the command line (issue 40): the capture of scripts/mesh_fixtures.py, encrypted with
/// the specification's sample keys, in `dump`'s text line, `-v` tree and JSON Lines.
@Suite struct MeshVendorCLITests {
    static let fixtures = CLI.root.appendingPathComponent("Tests/Fixtures/mesh")
    static let capture = fixtures.appendingPathComponent("mesh_vendor_chat.btsnoop").path
    static let keys = fixtures.appendingPathComponent("mesh_sample_keys.json").path

    @Test func theChatMessagesAreDecodedInEveryFormat() throws {
        let text = try CLI.run(["dump", "--mesh-keys", Self.keys, "--frames", "4,18", Self.capture])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(text.stdout)")
        #expect(lines.first?.hasSuffix("nordic-mesh-chat private_message text=\"Lunch at noon?\"") == true, "\(text.stdout)")
        #expect(lines.last?.hasSuffix("nordic-mesh-chat message text=\"hello\"") == true, "\(text.stdout)")

        let tree = try CLI.run(["dump", "-v", "--mesh-keys", Self.keys, "--frames", "1", Self.capture])
        #expect(tree.status == 0 && tree.stdout.contains("nordic-mesh-chat") && tree.stdout.contains("presence"), "\(tree.stdout)")

        let json = try CLI.run(["dump", "--format", "jsonl", "--mesh-keys", Self.keys, "--frames", "4", Self.capture])
        let d = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        let vendor = try #require(d["vendor"] as? [String: Any])
        #expect(vendor["plugin"] as? String == "nordic-mesh-chat" && vendor["message"] as? String == "private_message")
        #expect((vendor["fields"] as? [String: Any])?["text"] as? String == "Lunch at noon?", "\(vendor)")
        let access = try #require((d["mesh"] as? [String: Any])?["access"] as? [String: Any])
        #expect(access["company_id"] as? Int == 0x0059 && access["opcode"] as? Int == 0xCB5900)

        // Without the keys the messages stay encrypted and no plugin sees them.
        let plain = try CLI.run(["dump", "--format", "jsonl", Self.capture])
        #expect(plain.status == 0 && !plain.stdout.contains("\"vendor\""))
    }

    /// `stats` summarises the vendor messages plugins decoded: per opcode with the plugin's
    /// message name, by source and destination, in text, JSON and CSV.
    @Test func statsSummariseTheVendorMessagesPerPluginMessage() throws {
        let json = try CLI.run(["stats", "--format", "json", "--mesh-keys", Self.keys, Self.capture])
        #expect(json.status == 0, "\(json.stderr)")
        let d = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        let vendor = try #require((d["mesh"] as? [String: Any])?["vendor_messages"] as? [[String: Any]])
        #expect(vendor.map { $0["message"] as? String } == ["message", "private_message", "message_reply", "presence", "presence_get"])
        #expect(vendor.map { $0["name"] as? String } == ["Vendor 0xca5900", "Vendor 0xcb5900", "Vendor 0xcc5900", "Vendor 0xcd5900", "Vendor 0xce5900"])
        #expect(vendor.map { $0["messages"] as? Int } == [2, 1, 1, 1, 1])
        #expect(vendor.allSatisfy { $0["plugin"] as? String == "nordic-mesh-chat" && $0["company"] as? Int == 0x0059 })
        let message = vendor[0]
        #expect(message["opcode"] as? Int == 0xCA5900)
        func counts(_ key: String) -> [[Int]] {
            ((message[key] as? [[String: Any]]) ?? []).map { [$0["address"] as? Int ?? -1, $0["messages"] as? Int ?? -1] }
        }
        #expect(counts("by_source") == [[0x0003, 1], [0x0005, 1]] && counts("by_destination") == [[0xC000, 2]], "\(message)")
        #expect((vendor[2]["by_source"] as? [[String: Any]])?.first?["address"] as? Int == 0x0004)

        let text = try CLI.run(["stats", "--mesh-keys", Self.keys, Self.capture])
        #expect(text.stdout.contains("  2 × nordic-mesh-chat message (Vendor 0xca5900, company 0x0059): from 0x0003 1, 0x0005 1; to 0xc000 2"), "\(text.stdout)")
        #expect(text.stdout.contains("  1 × nordic-mesh-chat private_message (Vendor 0xcb5900, company 0x0059): from 0x0003 1; to 0x0004 1"), "\(text.stdout)")

        let csv = try CLI.run(["stats", "--format", "csv", "--table", "mesh_vendor_messages", "--mesh-keys", Self.keys, Self.capture])
        let rows = csv.stdout.split(separator: "\n").map(String.init)
        #expect(rows.first == "file,opcode,company,plugin,message,src,dst,messages" && rows.count == 7, "\(csv.stdout)")
        #expect(rows.dropFirst().first == "\(Self.capture),0xca5900,0x0059,nordic-mesh-chat,message,0x0003,0xc000,1", "\(csv.stdout)")
        #expect(rows.contains("\(Self.capture),0xce5900,0x0059,nordic-mesh-chat,presence_get,0x0004,0x0003,1"), "\(csv.stdout)")

        // Without the keys nothing is decrypted, so no plugin decodes anything: no member.
        let plain = try CLI.run(["stats", "--format", "json", Self.capture])
        #expect(plain.status == 0 && !plain.stdout.contains("vendor_messages"))
    }

    /// `plugins list` names a mesh rule by company and opcode, with no GATT direction after it.
    @Test func pluginsListShowsMeshRulesWithoutDirections() throws {
        let r = try CLI.run(["plugins", "list", "--plugins", CLI.root.appendingPathComponent("Plugins/nordic-mesh-chat.yaml").path])
        #expect(r.status == 0, "\(r.stderr)")
        let rules = r.stdout.split(separator: "\n").filter { $0.hasPrefix("  mesh ") }.map(String.init)
        #expect(rules.first == "  mesh company 0x0059 opcode 0xca", "\(r.stdout)")
        #expect(rules.count == 5 && !rules.contains { $0.contains("notify") }, "\(r.stdout)")
    }
}
