import Testing
import Foundation
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftPlugins

/// Plugins on Classic channels: an ELM327 OBD-II dongle speaking text over SPP (RFCOMM
/// channel 1 in happyleaf_btsnoop_hci.log), framed at CR.
@Suite struct ChannelPluginTests {
    static let yaml = """
        id: elm327
        name: ELM327 over SPP
        match:
          - rfcomm_channel: 1
            direction: [write, notify]
        framing:
          terminator: 0d
        frame:
          - { id: text, type: str }
        """

    @Test func compilesAndRejectsMixedTargets() throws {
        let p = try PluginLoader.compile(yaml: Self.yaml, path: "elm327.yaml")
        #expect(p.matches.first?.channel == .rfcomm(1))
        let bad = Self.yaml.replacingOccurrences(of: "  - rfcomm_channel: 1", with: "  - rfcomm_channel: 1\n    characteristic: 2a00")
        #expect(throws: (any Error).self) { try PluginLoader.compile(yaml: bad, path: "bad.yaml") }
        let even = Self.yaml.replacingOccurrences(of: "rfcomm_channel: 1", with: "psm: 0x0002")
        #expect(throws: (any Error).self) { try PluginLoader.compile(yaml: even, path: "even.yaml") }
    }

    @Test func decodesRFCOMMData() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/captures/public/happyleaf_btsnoop_hci.log").path
        guard FileManager.default.fileExists(atPath: path) else { return }
        let analyzer = Analyzer()
        analyzer.plugins = PluginSet([try PluginLoader.compile(yaml: Self.yaml, path: "elm327.yaml")])
        let reader = try CaptureFile.open(path: path)
        var first: [Int: String] = [:], messages = 0
        while let r = reader.next() {
            let a = analyzer.analyze(r)
            guard let v = a.vendor else { continue }
            for m in v.messages {
                messages += 1
                if first.count < 2, case .string(let s)? = m.fields.first?.value { first[r.frame] = s }
            }
        }
        // The host's first command, then the dongle's echo assembled from one-byte frames.
        #expect(first[8317]?.hasPrefix("ATCRA35X") == true)
        #expect(messages > 1000)
    }
}
