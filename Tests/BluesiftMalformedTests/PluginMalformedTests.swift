import Testing
import BluesiftPlugins

/// Hostile plugins and frames: the loader reports errors with a line, the interpreter never
/// traps, never allocates what a length field claims, and stops at its depth limits.
@Suite struct PluginMalformedTests {
    static func plugin(_ frame: String, types: String = "") throws(PluginError) -> Plugin {
        let yaml = """
            id: hostile
            name: Hostile
            match:
              - characteristic: fff1
                direction: write
            frame:
            \(frame)
            \(types.isEmpty ? "" : "types:\n" + types)
            """
        return try PluginLoader.compile(yaml: yaml, path: "hostile.yaml")
    }

    func field(_ m: DecodedMessage, _ name: String) -> Int64? { m.fields.first { $0.name == name }?.value.integer }

    @Test func lengthFieldPointingPastTheEnd() throws {
        let p = try Self.plugin(
            """
              - { id: len, type: u1 }
              - { id: data, size: len }
              - { id: tail, type: u2 }
            """)
        let m = p.decode([0xFF, 0x01, 0x02])
        #expect(m.error != nil)
        #expect(field(m, "len") == 255)
        #expect(m.fields.count <= 2)
    }

    @Test func hugeRepeatCountIsBounded() throws {
        let p = try Self.plugin(
            """
              - { id: n, type: u4 }
              - { id: items, type: u1, repeat: n }
            """)
        let m = p.decode([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])
        #expect(m.error != nil)
        #expect(field(m, "n") == 0xFFFF_FFFF)
    }

    @Test func divisionByZeroIsAnErrorNotATrap() throws {
        for expr in ["10 / (len - len)", "10 % (len - len)", "(0 - 9223372036854775807 - 1) / -1", "1 << 200", "len >> -1"] {
            let p = try Self.plugin(
                """
                  - { id: len, type: u1 }
                  - { id: data, size: \(expr) }
                """)
            let m = p.decode([0x04, 1, 2, 3, 4])
            #expect(field(m, "len") == 4, "\(expr)")
            if expr.contains("(len - len)") { #expect(m.error != nil, "\(expr)") }
        }
        let cond = try Self.plugin(
            """
              - { id: len, type: u1 }
              - { id: opt, type: u1, if: 1 / (len - 4) }
            """)
        #expect(cond.decode([0x04, 0x09]).error != nil)
    }

    @Test func recursiveTypesAreALoadError() {
        do {
            _ = try Self.plugin(
                """
                  - { id: root, type: node }
                """,
                types: """
                      node:
                        - { id: tag, type: u1 }
                        - { id: child, type: node, if: tag != 0 }
                    """)
            Issue.record("compiled a self-recursive type")
        } catch {
            #expect(error.message.contains("cycle in nested types"))
            #expect(error.line == 11)
        }
    }

    @Test func typeChainDeeperThanTheDecoderLimit() throws {
        // t0 → t1 → … → t39: no cycle, but deeper than the decoder's nesting limit.
        let types = (0..<40).map { i in
            "  t\(i):\n    - { id: v, type: u1 }\n" + (i < 39 ? "    - { id: c, type: t\(i + 1) }\n" : "")
        }.joined()
        let p = try Self.plugin("  - { id: root, type: t0 }", types: types)
        let m = p.decode([UInt8](repeating: 7, count: 64))
        #expect(m.error != nil)
    }

    @Test func deeplyNestedExpressionIsALoadError() {
        let deep = String(repeating: "(", count: 5000) + "1" + String(repeating: ")", count: 5000)
        #expect(throws: PluginError.self) {
            _ = try Self.plugin("  - { id: data, size: \"\(deep)\" }")
        }
    }

    /// 20 000 nested flow sequences overflow the stack in Yams' recursive Parser.loadNode /
    /// loadSequence (Parser.swift:285/336), called from PluginCompiler.swift:99: SIGSEGV in
    /// `plugins check` and in any `dump` whose plugin search path holds such a file.
    @Test
    func deeplyNestedYAMLIsALoadError() {
        let deep = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
        #expect(throws: PluginError.self) {
            _ = try PluginLoader.compile(yaml: "id: x\nname: y\nframe: \(deep)\n", path: "deep.yaml")
        }
    }

    @Test func brokenYAMLReportsALine() {
        do {
            _ = try PluginLoader.compile(yaml: "id: x\nname: y\nframe:\n  - { id: a, type: u1\n", path: "broken.yaml")
            Issue.record("compiled broken YAML")
        } catch {
            #expect(error.path == "broken.yaml")
            #expect(error.line > 0)
        }
    }
}
