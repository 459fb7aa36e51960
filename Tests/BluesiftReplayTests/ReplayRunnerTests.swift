import Testing
import Foundation
import BluesiftWire
import BluesiftGATT
@testable import BluesiftReplay

/// A scripted in-memory device: these tests pin the runner's decisions (remapping, matching,
/// exit codes, partial reports). The Bumble end-to-end suite covers the real transport.
final class ScriptedDevice: ReplayDevice {
    var peerAddress: String? = "c0:ba:0d:00:00:01"
    var db: GATTDatabase
    var pending: [ReceivedNotification] = []
    var written: [(UInt16, [UInt8])] = []
    var failAtWrite: Int?
    var droppedNotifications = 0
    var kernelDrops: KernelDrops?
    var answer: (UInt16, [UInt8]) -> [(UInt16, [UInt8])]

    init(db: GATTDatabase, answer: @escaping (UInt16, [UInt8]) -> [(UInt16, [UInt8])]) { self.db = db; self.answer = answer }
    func discover() throws(ReplayFault) -> GATTDatabase { db }
    func exchangeMTU(_ mtu: Int) throws(ReplayFault) -> Int { mtu }
    func write(handle: UInt16, value: [UInt8], op: WriteOp) throws(ReplayFault) -> ATTOutcome {
        written.append((handle, value))
        if let n = failAtWrite, written.count >= n { throw ReplayFault(.connectionLost, "connection lost (reason 0x08 Connection Timeout)") }
        pending += answer(handle, value).map { ReceivedNotification(handle: $0.0, value: $0.1, indication: false, at: .now) }
        return op == .command ? .ok : .ok
    }
    func read(handle: UInt16) throws(ReplayFault) -> ATTOutcome { .value([87]) }
    func notifications(until deadline: ContinuousClock.Instant, atLeast: Int) throws(ReplayFault) -> [ReceivedNotification] {
        defer { pending.removeAll() }
        return pending
    }
    func disconnect() {}
}

func bandDB(shift: UInt16 = 0) -> GATTDatabase {
    var db = GATTDatabase()
    var s = GATTDatabase.Service(start: 0x1c + shift, end: 0x20 + shift, uuid: BluetoothUUID(0xFEE7), primary: true)
    var w = GATTDatabase.Characteristic(handle: 0x1c + shift, valueHandle: 0x1d + shift, uuid: BluetoothUUID(0x36F5), properties: 0x0C)
    w.descriptors = []
    var n = GATTDatabase.Characteristic(handle: 0x1e + shift, valueHandle: 0x1f + shift, uuid: BluetoothUUID(0x36F6), properties: 0x10)
    n.descriptors = [.init(handle: 0x20 + shift, uuid: BluetoothUUID(0x2902))]
    s.characteristics = [w, n]
    db.services = [s]
    return db
}

func bandScript() -> ReplayScript {
    func t(_ h: Int, _ c: String, d: String? = nil) -> ReplayScript.Target {
        ReplayScript.Target(handle: h, service: "fee7", characteristic: c, instance: 0, descriptor: d)
    }
    var sub = ReplayScript.Step(kind: "subscribe", delayMs: 0, frame: 40, expect: .init(response: "ok"))
    sub.op = "request"; sub.target = t(0x20, "36f6", d: "2902"); sub.value = "0100"
    var w = ReplayScript.Step(kind: "write", delayMs: 5, frame: 44, expect: .init(response: "ok"))
    w.op = "request"; w.target = t(0x1d, "36f5"); w.value = "a50603061436"
    w.expect.notifications = [.init(target: t(0x1f, "36f6"), value: "a506831700ff", afterMs: 3)]
    var p = ReplayScript.Step(kind: "write", delayMs: 5, frame: 50, expect: .init())
    p.op = "command"; p.target = t(0x1d, "36f5"); p.value = "a50406a7"
    p.expect.notifications = [.init(target: t(0x1f, "36f6"), value: "a50c8601000000", afterMs: 2)]
    return ReplayScript(source: .init(capture: "band.btsnoop", connection: 64, peer: "c0:ba:0d:00:00:01"), steps: [sub, w, p])
}

func fastOptions() -> ReplayRunner.Options {
    var o = ReplayRunner.Options(); o.timing = .asap; o.window = .milliseconds(5); return o
}

/// Answers like the recorded band, on a value handle `shift` further on.
func bandAnswers(shift: UInt16, count: UInt8 = 0x17) -> (UInt16, [UInt8]) -> [(UInt16, [UInt8])] {
    { h, v in
        guard h == 0x1d + shift, v.count > 2 else { return [] }
        switch v[2] {
        case 0x03: return [(0x1f + shift, [0xa5, 0x06, 0x83, count, 0x00, 0xff])]
        case 0x06: return [(0x1f + shift, [0xa5, 0x0c, 0x86, 0x01, 0x00, 0x00, 0x00])]
        default: return []
        }
    }
}

@Test func sameDeviceMatchesEveryStep() {
    let dev = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0))
    let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
    #expect(r.exitCode == 0)
    #expect(r.summary == .init(steps: 3, matched: 3, mismatched: 0, missing: 0, unexpected: 0))
    #expect(r.remapped.isEmpty)
    #expect(dev.written.map(\.0) == [0x20, 0x1d, 0x1d])
}

/// hci:N: what the kernel dropped (its receive buffer full) is in `dropped`, and said apart.
@Test func theKernelsDropsAreCountedInDropped() throws {
    let dev = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0))
    dev.droppedNotifications = 3
    dev.kernelDrops = KernelDrops(dropped: 12, receiveBuffer: 16 << 20)
    let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
    #expect(r.notifications == .init(received: 2, dropped: 15, kernelDropped: 12, receiveBuffer: 16 << 20))
    let json = String(decoding: try r.encoded(), as: UTF8.self)
    #expect(json.contains(#""kernel_dropped" : 12"#) && json.contains(#""receive_buffer" : 16777216"#))
    // Over H4 the transport cannot tell: no such keys.
    let h4 = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0)))
    #expect(h4.notifications == .init(received: 2, dropped: 0))
    #expect(!String(decoding: try h4.encoded(), as: UTF8.self).contains("kernel_dropped"))
}

@Test func movedHandlesAreRemappedAndReported() {
    let dev = ScriptedDevice(db: bandDB(shift: 10), answer: bandAnswers(shift: 10))
    let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
    #expect(r.exitCode == 0)
    #expect(dev.written.map(\.0) == [0x2a, 0x27, 0x27])
    #expect(r.remapped.map { [$0.from, $0.to] } == [[0x1d, 0x27], [0x1f, 0x29], [0x20, 0x2a]])
    #expect(r.steps[1].liveHandle == 0x27)
}

@Test func regressionIsAMismatchNamingTheStep() {
    let dev = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0, count: 0x18))
    let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
    #expect(r.exitCode == 1)
    #expect(r.steps.map(\.status) == ["match", "mismatch", "match"])
    #expect(
        r.steps[1].differences == [
            .init(
                status: "mismatch", what: "notification", handle: 0x1f,
                expected: "a506831700ff", got: "a506831800ff")
        ])
}

@Test func ignoredByteRangeHidesTheDifference() {
    var o = fastOptions(); o.ignore = [IgnoreRule(parsing: "bytes=0x1f:3-4")!]
    let dev = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0, count: 0x18))
    #expect(ReplayRunner(script: bandScript(), options: o).run(device: dev).exitCode == 0)
}

@Test func connectionLossKeepsThePartialReport() {
    let dev = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0))
    dev.failAtWrite = 3
    let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
    #expect(r.exitCode == 3)
    #expect(r.fault?.code == "connection_lost")
    #expect(r.fault?.step == 3)
    #expect(r.steps.map(\.status) == ["match", "match", "interrupted"])
    #expect(r.summary.matched == 2)
    #expect(!r.complete)
}

@Test func anotherDeviceIsRefusedUnlessForced() {
    let dev = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0))
    dev.peerAddress = "c0:ba:0d:00:00:02"
    let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
    #expect(r.exitCode == 3)
    #expect(r.fault?.code == "wrong_device")
    #expect(dev.written.isEmpty)
    var o = fastOptions(); o.force = true
    #expect(ReplayRunner(script: bandScript(), options: o).run(device: dev).exitCode == 0)
}

@Test func missingCharacteristicIsRefused() {
    var db = bandDB(); db.services[0].characteristics.removeLast()
    let dev = ScriptedDevice(db: db, answer: bandAnswers(shift: 0))
    let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
    #expect(r.fault?.message.contains("no descriptor 2902 of characteristic 36f6") == true)
    #expect(dev.written.isEmpty)
}

@Test func truncatedStepStopsWithExit2() {
    var s = bandScript(); s.steps[1].refuse = "frame 44 was truncated by the capture (10 of 40 bytes kept)"
    let dev = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0))
    let r = ReplayRunner(script: s, options: fastOptions()).run(device: dev)
    #expect(r.exitCode == 2)
    #expect(r.steps.map(\.status) == ["match", "refused"])
    #expect(dev.written.count == 1)
}

@Test func ignoreRulesParse() {
    #expect(IgnoreRule(parsing: "handle=0x001f") == .handle(0x1f))
    #expect(IgnoreRule(parsing: "bytes=31:4-7") == .bytes(handle: 31, range: 4...7))
    #expect(IgnoreRule(parsing: "field=ping_reply.counter") == .field("ping_reply.counter"))
    #expect(IgnoreRule(parsing: "bytes=0x1f:7-4") == nil)
    #expect(IgnoreRule(parsing: "colour=red") == nil)
}

/// Issue 13: `--force` onto a device that lacks the recorded characteristic wrote the step's
/// payload to whatever sat at the recorded raw handle (the lock's bytes onto the band's
/// Battery Level). Forced, such a step is never sent: skipped, counted, exit 1.
@Test func forcedStepOnAMissingCharacteristicIsSkippedNotSentToItsRawHandle() {
    // The device has 36f5 (write) but not 36f6 (notify + CCCD at 0x20); 0x20 is something else there.
    var db = bandDB(); db.services[0].characteristics.removeLast()
    db.services.append(GATTDatabase.Service(start: 0x20, end: 0x21, uuid: BluetoothUUID(0x180F), primary: true))
    let dev = ScriptedDevice(db: db, answer: bandAnswers(shift: 0))
    var o = fastOptions(); o.force = true
    let r = ReplayRunner(script: bandScript(), options: o).run(device: dev)
    #expect(!dev.written.contains { $0.0 == 0x20 })
    #expect(dev.written.map(\.0) == [0x1d, 0x1d])
    #expect(r.steps.count == 3 && r.steps[0].status == "skipped")
    #expect(r.steps[0].reason == "descriptor 2902 of characteristic 36f6 (instance 0) in service fee7 not on the device")
    #expect(r.summary.skipped == 1 && r.summary.steps == 2)
    #expect(r.exitCode == 1)
    #expect(!r.rawHandles)
    let json = String(decoding: (try? r.encoded()) ?? Data(), as: UTF8.self)
    #expect(json.contains("\"skipped\" : 1"))
    // --raw-handles is the explicit way to send it anyway, and the report says so.
    var raw = fastOptions(); raw.rawHandles = true
    let dev2 = ScriptedDevice(db: db, answer: bandAnswers(shift: 0))
    let r2 = ReplayRunner(script: bandScript(), options: raw).run(device: dev2)
    #expect(dev2.written.first.map { $0.0 } == 0x20)
    #expect(r2.rawHandles && r2.summary.skipped == 0)
    #expect(r2.steps[0].reason?.hasPrefix("sent to recorded handle 0x0020 (--raw-handles)") == true)
}
