import Testing
import BluesiftWire
import BluesiftGATT
@testable import BluesiftReplay

/// A band whose writes need encryption: 0x0F until `secure()` ran; `secure()` can be made
/// to fail like a wrong passkey.
final class LockedDevice: ReplayDevice {
    let inner: ScriptedDevice
    var encrypted: ReplaySecurity?
    var secureCalls = 0
    var failPairing = false
    var requested = false
    init() { inner = ScriptedDevice(db: bandDB(), answer: bandAnswers(shift: 0)) }
    var peerAddress: String? { inner.peerAddress }
    func discover() throws(ReplayFault) -> GATTDatabase { inner.db }
    func exchangeMTU(_ mtu: Int) throws(ReplayFault) -> Int { mtu }
    func write(handle: UInt16, value: [UInt8], op: WriteOp) throws(ReplayFault) -> ATTOutcome {
        guard encrypted != nil || handle == 0x20 else { return op == .command ? .ok : .error(code: 0x0F) }
        return try inner.write(handle: handle, value: value, op: op)
    }
    func read(handle: UInt16) throws(ReplayFault) -> ATTOutcome { .value([87]) }
    func notifications(until deadline: ContinuousClock.Instant, atLeast: Int) throws(ReplayFault) -> [ReceivedNotification] {
        try inner.notifications(until: deadline, atLeast: atLeast)
    }
    func disconnect() {}
    func secure() throws(ReplayFault) -> ReplaySecurity {
        secureCalls += 1
        if failPairing { throw ReplayFault(.pairingFailed, "Pairing Failed: Confirm Value Failed (sent by the device) while pairing") }
        let s = ReplaySecurity(
            level: 2, levelName: "encrypted unauthenticated", method: "just_works", keySize: 16,
            secureConnections: true, paired: true, bonded: false, bondForgotten: false)
        encrypted = s
        return s
    }
    var security: ReplaySecurity? { encrypted }
    var securityRequested: Bool { requested && encrypted == nil }
}

@Suite struct ReplayPairingTests {
    @Test func autoPairsOnInsufficientEncryptionAndRetriesOnce() {
        let dev = LockedDevice()
        let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
        #expect(r.exitCode == 0)
        #expect(dev.secureCalls == 1)
        #expect(r.security?.beforeStep == 2)
        #expect(r.security?.reason == "step 2 answered 0x0f (Insufficient Encryption)")
        #expect(r.steps[1].security == "answered 0x0f (Insufficient Encryption): paired, sent again")
        #expect(r.steps[1].status == "match")
        #expect(dev.inner.written.map(\.0) == [0x20, 0x1d, 0x1d])
    }

    @Test func neverLeavesTheErrorAsAMismatch() {
        let dev = LockedDevice()
        var o = fastOptions(); o.pair = .never
        let r = ReplayRunner(script: bandScript(), options: o).run(device: dev)
        #expect(r.exitCode == 1)
        #expect(dev.secureCalls == 0 && r.security == nil)
        #expect(r.steps[1].status == "mismatch")
    }

    @Test func recordingWithPairingOrAlwaysPairsBeforeStep1() {
        var script = bandScript()
        script.source.secured = true
        let dev = LockedDevice()
        let r = ReplayRunner(script: script, options: fastOptions()).run(device: dev)
        #expect(r.exitCode == 0 && r.security?.beforeStep == 1)
        #expect(r.security?.reason == "the recording shows SMP or encryption on this connection")
        #expect(
            ReplayRunner(script: script, options: fastOptions()).pairingPlan()
                == "pairing: needed, before step 1 (the recording shows SMP or encryption on this connection)")
        var o = fastOptions(); o.pair = .always
        let d2 = LockedDevice()
        #expect(ReplayRunner(script: bandScript(), options: o).run(device: d2).security?.reason == "--pair always")
    }

    @Test func securityRequestIsHonouredBeforeTheNextStep() {
        let dev = LockedDevice()
        dev.requested = true
        let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
        #expect(r.exitCode == 0 && r.security?.beforeStep == 1)
        #expect(r.security?.reason == "the device sent a Security Request")
    }

    @Test func pairingFailureIsExit3WithTheReason() {
        let dev = LockedDevice()
        dev.failPairing = true
        let r = ReplayRunner(script: bandScript(), options: fastOptions()).run(device: dev)
        #expect(r.exitCode == 3)
        #expect(r.fault?.code == "pairing_failed")
        #expect(r.fault?.message.hasPrefix("Pairing Failed: Confirm Value Failed") == true)
        #expect(r.complete == false && r.steps.count == 2)
    }
}
