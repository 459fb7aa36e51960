import Testing
import Foundation
import BluesiftPlugins
@testable import BluesiftReplay

/// The band plugin as the replayer uses it: steps written as fields, answers compared by field.
@Suite struct PluginInterpreterTests {
    static let band: PluginInterpreter = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Plugins/band.yaml").path
        return PluginInterpreter(plugins: [try! PluginLoader.load(file: path)])
    }()

    @Test func stepWithFieldsIsRebuiltWithItsChecksum() throws {
        var s = ReplayScript.Step(kind: "write", delayMs: 0, frame: 129, expect: .init(response: "ok"))
        s.target = .init(handle: 0x1d, service: "fee7", characteristic: "36f5", instance: 0)
        s.message = "sport_count"; s.fields = ["month": "6", "day": "0x14"]
        let runner = ReplayRunner(script: ReplayScript(source: .init(capture: "x", connection: 1), steps: [s]), interpreter: Self.band)
        #expect(try runner.payload(s) == [0xa5, 0x06, 0x03, 0x06, 0x14, 0xb2])
        #expect(runner.plan() == ["step 1 frame 129 write handle 0x001d (fee7/36f5) value a506030614b2  sport_count month=6 day=20"])
    }

    @Test func splitNotificationsAreOneMessage() {
        let parts: [[UInt8]] = [
            [0xa5, 0x1e, 0x84, 0x00, 0x00, 0x54, 0x01, 0x64, 0x5e, 0x01, 0x67, 0x68, 0x01, 0x6a, 0x72, 0x01, 0x6d, 0x7c, 0x01, 0x70],
            [0x86, 0x01, 0x73, 0x90, 0x01, 0x76, 0x9a, 0x01, 0x3d, 0x93]
        ]
        let m = Self.band.messages(service: "fee7", characteristic: "36f6", notify: true, values: parts)
        #expect(m?.map(\.message) == ["sport_data_reply"])
        #expect(m?.first?.checksum == "ok")
    }

    @Test func volatileFieldsDoNotDiffer() {
        let matcher = AnswerMatcher(ignore: [], interpreter: Self.band)
        let t = ReplayScript.Target(handle: 0x1f, service: "fee7", characteristic: "36f6", instance: 0)
        // ping_reply counter 1 vs 7, uptime 3600 vs 9: volatile, so no difference.
        let e = [AnswerMatcher.Expected(liveHandle: 0x1f, target: t, value: [0xa5, 0x0c, 0x86, 0x01, 0, 0, 0, 0x10, 0x0e, 0, 0, 0x30])]
        let got = [ReceivedNotification(handle: 0x1f, value: [0xa5, 0x0c, 0x86, 0x07, 0, 0, 0, 0x09, 0, 0, 0, 0x21], indication: false, at: .now)]
        #expect(matcher.notifications(expected: e, got: got).diffs == [])
    }
}
