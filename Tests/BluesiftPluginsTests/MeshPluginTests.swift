import Foundation
import Testing
import BluesiftCapture
import BluesiftDissect
import BluesiftProtocols
import BluesiftSecurity
import BluesiftWire
@testable import BluesiftPlugins

/// Vendor Mesh models through plugins (issue 40): the `mesh: { company, opcode }` target, its
/// checks, its index-cache form, and the analyzer handing decrypted vendor access messages
/// (Mesh Protocol v1.1 §3.7.3.1) to it, on the advertising and GATT proxy bearers.
@Suite struct MeshPluginTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Tests/Fixtures/mesh")

    static func yaml(_ target: String) -> String {
        """
        id: vendor-test
        match:
          - \(target)
        frame:
          - { id: op, type: u1 }
          - { id: company, type: u2 }
          - { id: text, type: str }
        """
    }

    @Test func theTargetCompilesWithTheOpcodeAsItsFirstOctet() throws {
        let p = try PluginLoader.compile(yaml: Self.yaml("mesh: { company: 0x0059, opcode: 0xCA }"), path: "v.yaml")
        #expect(p.matches.first?.channel == .mesh(company: 0x0059, opcode: 0xCA))
        // Six bits, as BT_MESH_MODEL_OP_3 takes them, mean the same opcode.
        let six = try PluginLoader.compile(yaml: Self.yaml("mesh: { company: 0x0059, opcode: 0x0A }"), path: "v.yaml")
        #expect(six.matches.first?.channel == .mesh(company: 0x0059, opcode: 0xCA))
        let any = try PluginLoader.compile(yaml: Self.yaml("mesh: { company: 0x000A }"), path: "v.yaml")
        #expect(any.matches.first?.channel == .mesh(company: 0x000A, opcode: nil))
        #expect(any.matches.first?.channel?.description == "mesh company 0x000a")
        #expect(p.matches.first?.channel?.description == "mesh company 0x0059 opcode 0xca")
    }

    @Test(arguments: [
        ("mesh: { company: 0x10000, opcode: 0xCA }", "v.yaml:3: mesh company must be 0x0000-0xffff"),
        ("mesh: { company: 0x0059, opcode: 0x80 }", "v.yaml:3: mesh opcode must be a vendor opcode's first octet, 0xc0-0xff (or its six bits, 0x00-0x3f)"),
        ("mesh: { opcode: 0xCA }", "v.yaml:3: mesh needs 'company' (the vendor's company identifier)"),
        ("mesh: 0x0059", "v.yaml:3: mesh must be a mapping"),
        ("mesh: { company: 0x0059, model: 1 }", "v.yaml:3: unknown key 'model' in mesh (expected one of: company, opcode)")
    ])
    func aBadTargetIsOneLineWithItsPlace(_ target: String, _ message: String) throws {
        do {
            _ = try PluginLoader.compile(yaml: Self.yaml(target), path: "v.yaml")
            Issue.record("compiled: \(target)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func theIndexCacheKeepsTheTarget() throws {
        for c in [PluginChannel.mesh(company: 0x0059, opcode: 0xCA), .mesh(company: 0xFFFF, opcode: nil)] {
            let m = PluginMatch(service: nil, characteristic: BluetoothUUID(0), handle: nil, directions: Set(PluginDirection.allCases), channel: c)
            #expect(PluginIndexCache.match(PluginIndexCache.matchFields(m)) == m)
        }
    }

    static func shipped() throws -> Plugin {
        try PluginLoader.load(file: Self.root.appendingPathComponent("Plugins/nordic-mesh-chat.yaml").path)
    }

    @Test func theChatModelDecodesOnBothBearers() throws {
        let got = try Self.decode(capture: "mesh_vendor_chat.btsnoop", plugins: [try Self.shipped()])
        #expect(
            got == [
                1: "nordic-mesh-chat presence presence=away",
                2: "nordic-mesh-chat message text=\"Hi!\"",
                // Segmented: the message is on the record of its last segment.
                4: "nordic-mesh-chat private_message text=\"Lunch at noon?\"",
                5: "nordic-mesh-chat message_reply",
                6: "nordic-mesh-chat presence_get",
                // Through a GATT proxy, in three proxy SAR segments.
                18: "nordic-mesh-chat message text=\"hello\""
            ])
        // Still encrypted without the keys: nothing for the plugin.
        #expect(try Self.decode(capture: "mesh_vendor_chat.btsnoop", plugins: [try Self.shipped()], keys: false).isEmpty)
    }

    /// Four of the specification's sample messages (§8.3: "Hello" to a group and to two virtual
    /// addresses, "World" segmented) are vendor messages of company 0x000A: a rule without an
    /// opcode takes them all, one with an opcode only its own.
    @Test func theSampleDataVendorMessagesReachARuleByCompany() throws {
        let yaml = Self.yaml("mesh: { company: 0x000A }")
        let all = try Self.decode(capture: "mesh_sample_adv.btsnoop", plugins: [try PluginLoader.compile(yaml: yaml, path: "v.yaml")])
        #expect(all.values.sorted() == [String](repeating: #"vendor-test frame op=213 company=10 text="Hello""#, count: 3) + [#"vendor-test frame op=234 company=10 text="World""#])
        let one = try Self.decode(
            capture: "mesh_sample_adv.btsnoop",
            plugins: [try PluginLoader.compile(yaml: Self.yaml("mesh: { company: 0x000A, opcode: 0xEA }"), path: "v.yaml")])
        #expect(one == [55: #"vendor-test frame op=234 company=10 text="World""#])
    }

    /// The vendor capture of scripts/mesh_fixtures.py through the analyzer with the sample
    /// keys and the shipped plugin: frame → "plugin message field=value".
    static func decode(capture: String, plugins: [Plugin], keys: Bool = true) throws -> [Int: String] {
        let analyzer = Analyzer()
        if keys {
            analyzer.decoder.moduleConfiguration = try ProtocolRegistry.shared.configure([
                ("mesh-keys", Self.fixtures.appendingPathComponent("mesh_sample_keys.json").path)
            ])
        }
        analyzer.plugins = PluginSet(plugins)
        let reader = try CaptureFile.open(path: Self.fixtures.appendingPathComponent(capture).path)
        var out: [Int: String] = [:]
        while let r = reader.next() {
            let a = analyzer.analyze(r)
            guard let v = a.vendor else { continue }
            out[r.frame] = v.messages.map { m in
                ([v.plugin, m.message] + m.fields.map { "\($0.name)=\($0.value)" }).joined(separator: " ")
            }.joined(separator: "; ")
        }
        return out
    }
}
