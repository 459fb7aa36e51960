import Testing
import Foundation

/// Replays to a band whose vendor commands characteristic needs an encrypted (or
/// authenticated) link: the built `bluesift` pairs with Bumble's SMP over the virtual
/// controllers (which simulate LE encryption: LTK request, Encryption Change, PIN or Key
/// Missing), then every step must match. Ports 9460-9479 (issue 16's range).
enum PairingRig {
    struct Run {
        var result: Rig.Result
        var bandLog: String
        var security: [String: Any] { result.report?["security"] as? [String: Any] ?? [:] }
        var fault: [String: Any] { result.report?["fault"] as? [String: Any] ?? [:] }
    }

    /// One rig on `port`, `port + 1`; `bluesift replay band_mtu23.btsnoop` against it.
    static func replay(port: Int, band: [String], extra: [String], capture: String? = nil) throws -> Run {
        let dir = NSTemporaryDirectory() + "bluesift-e2e16-\(getpid())-\(port)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ctl = try Rig.start("controllers.py", ["127.0.0.1:\(port)", "127.0.0.1:\(port + 1)"], log: dir + "/controllers.log")
        defer { Rig.stop(ctl) }
        let dev = try Rig.start("band_peripheral.py", ["tcp-client:127.0.0.1:\(port + 1)"] + band, log: dir + "/band.log")
        let report = dir + "/report.json"
        try? FileManager.default.removeItem(atPath: report)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments =
            [
                "replay", capture ?? Rig.root.appendingPathComponent("Captures/band_mtu23.btsnoop").path,
                "--transport", "tcp:127.0.0.1:\(port)", "--timing", "asap", "--window", "300",
                "--timeout", "3", "--report", report
            ] + extra
        let o = dir + "/out.txt", e = dir + "/err.txt"
        FileManager.default.createFile(atPath: o, contents: nil); FileManager.default.createFile(atPath: e, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: o))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: e))
        p.standardInput = FileHandle.nullDevice
        let t0 = Date()
        try p.run()
        p.waitUntilExit()
        let secs = Date().timeIntervalSince(t0)
        Rig.stop(dev)
        func text(_ f: String) -> String { String(decoding: FileManager.default.contents(atPath: f) ?? Data(), as: UTF8.self) }
        let r = FileManager.default.contents(atPath: report).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        return Run(
            result: Rig.Result(status: p.terminationStatus, stdout: text(o), stderr: text(e), seconds: secs, report: r),
            bandLog: text(dir + "/band.log"))
    }

    static func dump(_ file: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Rig.binary)
        p.arguments = ["dump", file]
        let out = file + ".txt"
        FileManager.default.createFile(atPath: out, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: out) }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        try p.run(); p.waitUntilExit()
        return String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self)
    }

    static func tmp(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "bluesift-e2e16-\(getpid())-\(name)"
        try? FileManager.default.removeItem(atPath: path)
        return path
    }
}

extension Rig.Result {
    var everyStepMatched: Bool {
        status == 0 && (summary["steps"] ?? 0) == 16 && summary["matched"] == 16
    }
}

@Suite(.serialized, .enabled(if: Rig.available, "needs the Bumble venv: make venv"))
struct PairingAgainstVirtualBand {
    /// LE SC Just Works: step 9 (the first vendor write) answers Insufficient Encryption, the
    /// replay pairs, sends it again, and all 16 steps match. The recording of the session
    /// shows the pairing decoded, then the vendor writes on the encrypted link.
    @Test func justWorksSecureConnections() throws {
        let rec = PairingRig.tmp("jw.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: rec) }
        let r = try PairingRig.replay(port: 9460, band: ["--security", "encryption"], extra: ["--record", rec])
        #expect(r.result.everyStepMatched, "\(r.result.stdout)\n\(r.result.stderr)")
        #expect(r.security["method"] as? String == "just_works")
        #expect(r.security["level"] as? Int == 2)
        #expect(r.security["secure_connections"] as? Bool == true)
        #expect(r.security["key_size"] as? Int == 16)
        #expect(r.security["before_step"] as? Int == 9)
        #expect(r.security["reason"] as? String == "step 9 answered 0x0f (Insufficient Encryption)")
        let step9 = r.result.steps.first { $0["index"] as? Int == 9 }
        #expect(step9?["status"] as? String == "match")
        #expect(step9?["security"] as? String == "answered 0x0f (Insufficient Encryption): paired, sent again")
        #expect(r.result.stdout.contains("security: level 2 (encrypted unauthenticated), paired, just works, LE Secure Connections, key size 16"))

        let text = try PairingRig.dump(rec)
        let lines = text.split(separator: "\n").map(String.init)
        let request = lines.firstIndex { $0.contains("SMP Pairing Request") }
        let publicKey = lines.firstIndex { $0.contains("SMP Pairing Public Key") }
        let check = lines.firstIndex { $0.contains("SMP Pairing DHKey Check") }
        let change = lines.firstIndex { $0.contains("Encryption Change") }
        let lastWrite = lines.lastIndex { $0.contains("Write Request") && $0.contains("0x001d") }
        #expect(request != nil && publicKey != nil && check != nil && change != nil && lastWrite != nil, "\(text)")
        if let request, let publicKey, let check, let change, let lastWrite {
            #expect(request < publicKey && publicKey < check && check < change && change < lastWrite)
        }
    }

    /// Passkey Entry SC: the band displays 123456 and needs authentication; level 4.
    @Test func passkeyEntrySecureConnections() throws {
        let r = try PairingRig.replay(
            port: 9462, band: ["--security", "authentication", "--io", "display", "--passkey", "123456"],
            extra: ["--passkey", "123456"])
        #expect(r.result.everyStepMatched, "\(r.result.stdout)\n\(r.result.stderr)")
        #expect(r.security["method"] as? String == "passkey_entry")
        #expect(r.security["level"] as? Int == 4)
        #expect(r.security["reason"] as? String == "step 9 answered 0x0f (Insufficient Encryption)")
    }

    /// A wrong passkey: the band refuses the first round whose bit differs; exit 3, the
    /// reason in the report and on stderr, and no step after 9 is sent.
    @Test func wrongPasskeyIsExit3ConfirmValueFailed() throws {
        let r = try PairingRig.replay(
            port: 9464, band: ["--security", "authentication", "--io", "display", "--passkey", "123456"],
            extra: ["--passkey", "123457"])
        #expect(r.result.status == 3, "\(r.result.stdout)\n\(r.result.stderr)")
        #expect(r.fault["code"] as? String == "pairing_failed")
        #expect((r.fault["message"] as? String)?.hasPrefix("Pairing Failed: Confirm Value Failed") == true)
        #expect(r.result.stderr.contains("Pairing Failed: Confirm Value Failed"))
        #expect(r.result.steps.count == 9)
        #expect(r.result.report?["complete"] as? Bool == false)
    }

    /// Numeric Comparison: both sides DisplayYesNo-capable and SC; the six digits are
    /// printed (the band logs the same ones) and --confirm accepts them.
    @Test func numericComparison() throws {
        let r = try PairingRig.replay(port: 9466, band: ["--security", "authentication", "--io", "yesno"], extra: ["--confirm"])
        #expect(r.result.everyStepMatched, "\(r.result.stdout)\n\(r.result.stderr)")
        #expect(r.security["method"] as? String == "numeric_comparison")
        #expect(r.security["level"] as? Int == 4)
        let ours = r.result.stderr.firstMatch(of: /numeric comparison: (\d{6})/)?.1
        let band = r.bandLog.firstMatch(of: /COMPARE (\d{6})/)?.1
        #expect(ours != nil && ours == band, "\(r.result.stderr)\n\(r.bandLog)")
    }

    /// Numeric Comparison without --confirm and without a terminal: refused, exit 3.
    @Test func numericComparisonNotConfirmedIsExit3() throws {
        let r = try PairingRig.replay(port: 9468, band: ["--security", "authentication", "--io", "yesno"], extra: ["--pair", "always", "--passkey", "000000"])
        #expect(r.result.status == 3, "\(r.result.stdout)\n\(r.result.stderr)")
        #expect((r.fault["message"] as? String)?.hasPrefix("Pairing Failed: Numeric Comparison Failed (sent by this host)") == true)
    }

    /// Legacy Just Works (c1, s1): the band distributes its LTK, EDIV/Rand, IRK, identity address and CSRK.
    @Test func legacyJustWorks() throws {
        let keys = PairingRig.tmp("legacy-keys.json")
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let r = try PairingRig.replay(port: 9470, band: ["--security", "encryption", "--pairing", "legacy"], extra: ["--keys", keys])
        #expect(r.result.everyStepMatched, "\(r.result.stdout)\n\(r.result.stderr)")
        #expect(r.security["method"] as? String == "just_works")
        #expect(r.security["secure_connections"] as? Bool == false)
        #expect(r.security["bonded"] as? Bool == true)
        let store = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: keys))) as? [String: Any]
        let bond = (store?["bonds"] as? [[String: Any]])?.first
        #expect(bond?["address"] as? String == "c0:ba:0d:00:00:01")
        #expect(bond?["secure_connections"] as? Bool == false)
        #expect((bond?["ltk"] as? String)?.count == 32)
        // Bumble's Central Identification carries EDIV 0 and Rand 0 (its smp.py).
        #expect(bond?["ediv"] as? Int == 0 && bond?["rand"] as? String == "0000000000000000")
        #expect(bond?["irk"] as? String != nil && bond?["csrk"] as? String != nil)
        #expect(bond?["identity_address"] as? String != nil)
    }

    /// Bonding, then a second run with --keys re-encrypts (no SMP PDU in its recording);
    /// then a band that lost the bond makes the replay pair again, saying so.
    @Test func bondReEncryptsAndALostBondPairsAgain() throws {
        let keys = PairingRig.tmp("keys.json"), bandKeys = PairingRig.tmp("band-keys.json"), rec = PairingRig.tmp("reenc.btsnoop")
        defer { for f in [keys, bandKeys, rec] { try? FileManager.default.removeItem(atPath: f) } }
        let band = ["--security", "encryption", "--keystore", bandKeys]
        let first = try PairingRig.replay(port: 9472, band: band, extra: ["--keys", keys, "--pair", "always"])
        #expect(first.result.everyStepMatched, "\(first.result.stdout)\n\(first.result.stderr)")
        #expect(first.security["paired"] as? Bool == true && first.security["bonded"] as? Bool == true)
        let mode = (try FileManager.default.attributesOfItem(atPath: keys)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600)

        let second = try PairingRig.replay(port: 9472, band: band, extra: ["--keys", keys, "--pair", "always", "--record", rec])
        #expect(second.result.everyStepMatched, "\(second.result.stdout)\n\(second.result.stderr)")
        #expect(second.security["paired"] as? Bool == false)
        #expect(second.security["method"] as? String == "stored_key")
        #expect(second.result.stdout.contains("re-encrypted with the stored key"))
        let text = try PairingRig.dump(rec)
        #expect(!text.contains("SMP "), "\(text)")
        #expect(text.contains("LE Enable Encryption"))
        #expect(text.contains("Encryption Change"))

        // The band forgets: an empty key store. PIN or Key Missing, then pairing again.
        try FileManager.default.removeItem(atPath: bandKeys)
        let third = try PairingRig.replay(port: 9472, band: band, extra: ["--keys", keys, "--pair", "always"])
        #expect(third.result.everyStepMatched, "\(third.result.stdout)\n\(third.result.stderr)")
        #expect(third.security["paired"] as? Bool == true)
        #expect(third.security["bond_forgotten"] as? Bool == true)
        #expect(third.result.stderr.contains("the device has no bond for this host any more (PIN or Key Missing): paired again"))
    }

    /// --pair never: the protected write answers Insufficient Encryption, recorded as a mismatch.
    @Test func pairNeverLeavesTheErrorAsADifference() throws {
        let r = try PairingRig.replay(port: 9474, band: ["--security", "encryption"], extra: ["--pair", "never"])
        #expect(r.result.status == 1, "\(r.result.stdout)\n\(r.result.stderr)")
        #expect(r.result.report?["security"] == nil)
        #expect(r.result.stdout.contains("0x0f (Insufficient Encryption)"))
    }

    /// A recording that shows pairing (the --record of a paired replay): --pair auto pairs
    /// before step 1, and --dry-run says so.
    @Test func recordingWithPairingPairsBeforeTheFirstStep() throws {
        let rec = PairingRig.tmp("paired.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: rec) }
        let first = try PairingRig.replay(port: 9476, band: ["--security", "encryption"], extra: ["--record", rec, "--pair", "always"])
        #expect(first.result.status == 0, "\(first.result.stdout)\n\(first.result.stderr)")
        let dry = Process()
        dry.executableURL = URL(fileURLWithPath: Rig.binary)
        dry.arguments = ["replay", rec, "--dry-run"]
        let out = rec + ".dry"
        FileManager.default.createFile(atPath: out, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: out) }
        dry.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        try dry.run(); dry.waitUntilExit()
        let plan = String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self)
        #expect(plan.contains("pairing: needed, before step 1 (the recording shows SMP or encryption on this connection)"), "\(plan)")
        let second = try PairingRig.replay(port: 9476, band: ["--security", "encryption"], extra: ["--device", "c0:ba:0d:00:00:01"], capture: rec)
        #expect(second.result.status == 0, "\(second.result.stdout)\n\(second.result.stderr)")
        #expect(second.security["before_step"] as? Int == 1)
    }
}
