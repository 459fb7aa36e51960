import Testing
import Foundation

/// Issue 3's acceptance, on captures recorded from the virtual band (Tests/VirtualDevice)
/// with varied MTUs and a moved layout: the rebuilt database equals the peripheral's own
/// (written by band_peripheral.py --dump-gatt), every existing handle is named, and every
/// vendor frame decodes with the right checksum verdict, split frames included.
@Suite struct BandCaptureTests {
    static let captures = ["band_mtu23", "band_mtu185", "band_moved_mtu517"]

    static func json(_ s: String) -> Any? { try? JSONSerialization.jsonObject(with: Data(s.utf8)) }

    /// Names are informative and may differ in wording; structure and UUIDs must not.
    static func withoutNames(_ v: Any?) -> Any? {
        if let d = v as? [String: Any] { return d.filter { $0.key != "name" }.mapValues { withoutNames($0) as Any } }
        if let a = v as? [Any] { return a.map { withoutNames($0) as Any } }
        return v
    }

    @Test(arguments: captures) func gattEqualsThePeripheralsDatabase(_ name: String) throws {
        let r = try CLI.run(["gatt", "--format", "json", CLI.capture(name + ".btsnoop")])
        #expect(r.status == 0)
        let ours = Self.withoutNames(Self.json(r.stdout)) as? NSDictionary
        let truth = Self.withoutNames(try JSONSerialization.jsonObject(with: Data(contentsOf: CLI.captures.appendingPathComponent(name + ".gatt.json")))) as? NSDictionary
        #expect(ours != nil && ours == truth)
    }

    @Test(arguments: captures) func everyExistingHandleIsNamed(_ name: String) throws {
        let r = try CLI.run(["dump", "--format", "jsonl", CLI.capture(name + ".btsnoop")])
        var addressed = 0, unnamed: [Int] = []
        for line in r.stdout.split(separator: "\n") {
            guard let d = Self.json(String(line)) as? [String: Any], let att = d["att"] as? [String: Any] else { continue }
            guard let h = (att["handle"] ?? att["error_handle"]) as? Int else { continue }
            // Discovery ends with an Error Response on the first handle past the database.
            if att["name"] as? String == "Error Response", att["error"] as? Int == 0x0A { continue }
            addressed += 1
            if att["characteristic"] == nil && att["service"] == nil { unnamed.append(d["frame"] as? Int ?? -1) }
            _ = h
        }
        #expect(addressed > 20)
        #expect(unnamed.isEmpty, "unnamed frames: \(unnamed)")
    }

    @Test(arguments: captures) func everyVendorFrameDecodes(_ name: String) throws {
        let r = try CLI.run(["frames", "--format", "jsonl", CLI.capture(name + ".btsnoop")])
        let rows = r.stdout.split(separator: "\n").compactMap { Self.json(String($0)) as? [String: Any] }
        let messages = rows.map { "\($0["message"] ?? "?") \($0["checksum"] ?? "-")" }
        // One deliberately corrupted ping, answered by a nack; the 30-byte reply and the long
        // name frame span several notifications/writes at MTU 23.
        #expect(
            messages == [
                "live_steps ok", "device_info ok", "device_info_reply ok", "set_time ok", "set_time_reply ok",
                "sport_count ok", "sport_count_reply ok", "sport_data ok", "sport_data_reply ok",
                "set_user_name ok", "set_user_name_reply ok", "ping ok", "ping_reply ok", "ping bad", "nack ok"
            ])
        let name = rows.first { $0["message"] as? String == "set_user_name" }?["fields"] as? [String: Any]
        #expect(name?["name"] as? String == "Augusta Ada King-Noel Lovelace")
    }
}

/// `diff` aligns by characteristic identity and compares vendor messages once reassembled:
/// the same session at MTU 23 and at MTU 517 with every handle moved has no difference.
@Test func diffIgnoresHandlesAndFrameSplitting() throws {
    let r = try CLI.run(["diff", CLI.capture("band_mtu23.btsnoop"), CLI.capture("band_moved_mtu517.btsnoop")])
    #expect(r.status == 0)
    #expect(r.stdout == "summary: 22 same, 0 changed, 0 only in A, 0 only in B\n")
}

/// A phone is a GATT server too: in pongbot, the peripheral on 0x0043 discovers the phone's
/// database while the phone writes to the peripheral's. Each PDU is named from its server's
/// side: errors the phone sends from its own database, the phone's writes not from it.
@Test(.enabled(if: FileManager.default.fileExists(atPath: CLI.corpus.appendingPathComponent("pongbot_btsnoop_hci.log").path), "needs ../shared/captures/public"))
func handlesAreNamedFromTheServersDatabase() throws {
    let file = CLI.corpus.appendingPathComponent("pongbot_btsnoop_hci.log").path
    let r = try CLI.run(["dump", "--format", "jsonl", "--frames", "680-696", file])
    var named: [Int: String] = [:]
    for line in r.stdout.split(separator: "\n") {
        guard let d = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let a = d["att"] as? [String: Any], let f = d["frame"] as? Int
        else { continue }
        named[f] = [a["service"], a["characteristic"]].compactMap { $0 as? String }.joined(separator: "/")
    }
    #expect(named[680] == "1800/2aa6") // phone's Error Response, in the phone's database
    #expect(named[685] == "") // phone's Write Request to the peripheral: not discovered here
    #expect(named[696] == "1801/2b2a")
}
