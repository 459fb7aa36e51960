import Foundation
import Testing
import BluesiftWire
import BluesiftGATT
import BluesiftPlugins
import BluesiftReplay
@testable import BluesiftDeviceFuzz

/// `--time`: the fuzzer's budget, read from an injected clock that advances a fixed step per
/// connection (no wall clock: the same counts on any machine), against an in-memory band.
struct DeviceFuzzBudgetTests {
    /// The band of DeviceFuzzPlanTests.live(), in memory: every write succeeds, except (with
    /// `hangs`) a write longer than the recorded 20 bytes, after which it answers nothing
    /// (the ATT timeout: a finding).
    final class MemoryBand: RawATTDevice {
        let hangs: Bool
        var peerAddress: String? = "c0:ba:0d:00:00:01"
        var linkLossReason: UInt8? { nil }
        var attMTU: Int { 23 }
        init(hangs: Bool) { self.hangs = hangs }
        func hang(_ value: some Collection) throws(ReplayFault) {
            if hangs && value.count > 20 { throw ReplayFault(.timeout, "no answer within the ATT timeout") }
        }
        func discover() throws(ReplayFault) -> GATTDatabase { DeviceFuzzPlanTests.live() }
        func exchangeMTU(_ mtu: Int) throws(ReplayFault) -> Int { mtu }
        func write(handle: UInt16, value: [UInt8], op: WriteOp) throws(ReplayFault) -> ATTOutcome {
            try hang(value)
            return .ok
        }
        func read(handle: UInt16) throws(ReplayFault) -> ATTOutcome { .value([0x01]) }
        /// Write Request (0x12) and Command (0x52) as `write`; Signed Write Command (0xD2): nothing
        /// back; Prepare (0x16) and Execute Write (0x18): their responses; anything else: Error
        /// Response, Request Not Supported (0x06).
        func sendRaw(_ pdu: [UInt8]) throws(ReplayFault) -> [UInt8]? {
            switch pdu.first ?? 0 {
            case 0x12: try hang(pdu.dropFirst(3)); return [0x13]
            case 0x52: try hang(pdu.dropFirst(3)); return nil
            case 0xD2: return nil
            case 0x16: return [0x17] + pdu.dropFirst()
            case 0x18: return [0x19]
            default: return [0x01, pdu.first ?? 0, pdu.count > 1 ? pdu[1] : 0, pdu.count > 2 ? pdu[2] : 0, 0x06]
            }
        }
        func notifications(until deadline: ContinuousClock.Instant, atLeast: Int) throws(ReplayFault) -> [ReceivedNotification] { [] }
        func disconnect() {}
    }

    /// A fuzzer whose clock advances `perConnection` at each connection; `starts` collects the
    /// clock's reading as each connection starts.
    final class Rig {
        var now: Duration = .zero
        var starts: [Duration] = []
        let fuzzer: DeviceFuzzer

        init(time: Duration?, variants: Int, hangs: Bool, perConnection: Duration = .milliseconds(250)) throws {
            var options = DeviceFuzzer.Options()
            options.time = time
            options.variants = variants
            options.reruns = 10
            let plugins = [try DeviceFuzzPlanTests.band()]
            let base = FuzzBase(script: DeviceFuzzPlanTests.script(), plugins: plugins)
            var box: Rig?
            fuzzer = DeviceFuzzer(base: base, plugins: plugins, options: options) { (_: String?) throws(ReplayFault) -> any RawATTDevice in
                box!.starts.append(box!.now)
                box!.now += perConnection
                return MemoryBand(hangs: hangs)
            }
            box = self
            fuzzer.elapsed = { [unowned self] in self.now }
        }
    }

    @Test func theTimeBudgetEndsTheRunAtTheFirstConnectionPastIt() throws {
        // 3 baseline connections (0, 0.25, 0.5 s), then a variant at 0.75 … 4.75 s: 17 variants.
        let rig = try Rig(time: .seconds(5), variants: .max, hangs: false)
        let s = try rig.fuzzer.run()
        #expect(s.findings.isEmpty)
        #expect(s.variants == 17)
        #expect(s.connections == 20)
        #expect(!s.interrupted)
        #expect(rig.starts.last == .milliseconds(4750))
        #expect(rig.now == .seconds(5))
    }

    @Test func noTimeBudgetRunsTheVariantsAsked() throws {
        let rig = try Rig(time: nil, variants: 40, hangs: false)
        let s = try rig.fuzzer.run()
        #expect(s.variants == 40)
        #expect(s.connections == 43)
        #expect(rig.now == .milliseconds(43 * 250))
    }

    /// A finding near the end of the budget: its minimisation and reruns stop at the budget as
    /// the variants do (before, they ran their 48 tests and 10 reruns past it).
    @Test func minimisingAndRerunsStopAtTheBudgetToo() throws {
        // Unbounded, to learn when the first long write comes and what a whole finding costs.
        let free = try Rig(time: nil, variants: 200, hangs: true)
        let all = try free.fuzzer.run()
        let first = try #require(all.findings.first)
        #expect(first.reaction.kind == "timeout")
        // Seed 1: variant 8's 4th and last step, a write longer than recorded.
        #expect(first.variant == 8 && first.at == 4 && first.originalSteps == 4)
        #expect(first.runs == 10 && first.reproduced == 10)

        // The budget ends 2 connections after the variant that finds it starts: one more
        // connection (its first minimisation test or rerun), then nothing more starts.
        let startOfVariant = Duration.milliseconds(250 * (3 + first.variant - 1))
        let rig = try Rig(time: startOfVariant + .milliseconds(500), variants: .max, hangs: true)
        let s = try rig.fuzzer.run()
        let cut = try #require(s.findings.first)
        #expect(s.findings.count == 1)
        #expect(cut.variant == first.variant)
        #expect(cut.signature == first.signature)
        #expect(s.variants == first.variant)
        #expect(s.connections == 3 + first.variant + 1)
        // The one connection left went to the step alone (it reproduces): no rerun, no reproducer.
        #expect(cut.steps.count == 1)
        #expect(cut.runs == 0 && cut.reproduced == 0 && cut.reproducer == nil)
        #expect(rig.starts.last == startOfVariant + .milliseconds(250))
        #expect(rig.now == startOfVariant + .milliseconds(500))
    }
}
