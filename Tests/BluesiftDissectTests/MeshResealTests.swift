import Foundation
import Testing
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect

/// Only `redact` seals Bluetooth Mesh key material again (issue 40): the analyzer `dump` and
/// `stats` build opens the specification's Config AppKey Add (§8.3.6, DevKey of 0x1201 given)
/// without encrypting it a second time; the redactor's analyzer does, and its layers' `secrets`
/// are what `redact` writes into the records.
@Suite struct MeshResealTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/mesh")

    /// Frames whose access message is a Config AppKey Add, and frame → secrets of its mesh layer.
    static func decode(redacting: Bool) throws -> (appKeyAdd: [Int], secrets: [Int: [String]]) {
        let analyzer = Analyzer()
        analyzer.decoder.moduleConfiguration = try ProtocolRegistry.shared.configure([
            ("mesh-keys", fixtures.appendingPathComponent("mesh_sample_keys.json").path)
        ])
        let redactor = redacting ? Redactor(options: .init(salt: Array("mesh".utf8)), analyzer: analyzer) : nil
        #expect(analyzer.decoder.redacting == (redactor != nil))
        let reader = try CaptureFile.open(path: fixtures.appendingPathComponent("mesh_sample_adv.btsnoop").path)
        var out: (appKeyAdd: [Int], secrets: [Int: [String]]) = ([], [:])
        while let r = reader.next() {
            let a = analyzer.analyze(r)
            guard let m = a.decoded.moduleLayer(MeshPDU.self) else { continue }
            if m.mesh.access?.opcode.name == "Config AppKey Add" { out.appKeyAdd.append(r.frame) }
            if !m.secrets.isEmpty { out.secrets[r.frame] = m.secrets.map { "\($0.frame ?? -1) \($0.range)" } }
        }
        return out
    }

    @Test func onlyTheRedactorSealsConfigurationKeysAgain() throws {
        let dump = try Self.decode(redacting: false), redact = try Self.decode(redacting: true)
        #expect(dump.appKeyAdd == [39] && redact.appKeyAdd == [39])
        #expect(dump.secrets.isEmpty, "\(dump.secrets)")
        // Its two segments (frames 38, 39) and the segment heard again (41, and relayed: 44) sealed
        // again; the Provisioning Data (27) left as it was (no provisioning secret given).
        #expect(redact.secrets == [27: ["27 0..<0"], 39: ["38 15..<44", "39 15..<44"], 41: ["41 15..<44"], 44: ["44 30..<59"]], "\(redact.secrets)")
    }
}
