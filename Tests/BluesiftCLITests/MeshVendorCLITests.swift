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

    /// `plugins list` names a mesh rule by company and opcode, with no GATT direction after it.
    @Test func pluginsListShowsMeshRulesWithoutDirections() throws {
        let r = try CLI.run(["plugins", "list", "--plugins", CLI.root.appendingPathComponent("Plugins/nordic-mesh-chat.yaml").path])
        #expect(r.status == 0, "\(r.stderr)")
        let rules = r.stdout.split(separator: "\n").filter { $0.hasPrefix("  mesh ") }.map(String.init)
        #expect(rules.first == "  mesh company 0x0059 opcode 0xca", "\(r.stdout)")
        #expect(rules.count == 5 && !rules.contains { $0.contains("notify") }, "\(r.stdout)")
    }
}
