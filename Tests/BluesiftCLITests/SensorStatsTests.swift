import Testing
import Foundation

/// Issue 29, where people look: `stats`' sensor table (per advertiser and plugin message,
/// each numeric field's count, min, max, first and last) and the report's Sensors view.
/// Fixtures: Tests/Fixtures/sensors (bthome-ble's own test vectors, MIT, written by
/// make_captures.py; the bthome-v2 and govee-h5075 plugins of the issue's drafts).
@Suite(.serialized) struct SensorStatsTests {
    static let dir = CLI.root.appendingPathComponent("Tests/Fixtures/sensors").path
    static let vectors = dir + "/bthome_vectors.btsnoop"

    static func stats(_ args: [String]) throws -> [String: Any] {
        let r = try CLI.run(["stats", "--format", "json"] + args)
        #expect(r.status == 0, "\(r.stderr)")
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
    }

    static func row(_ sensors: [[String: Any]], _ address: String, _ field: String) -> [String: Any]? {
        sensors.first { $0["address"] as? String == address && $0["field"] as? String == field }
    }

    /// The values bthome-ble 3.25.0 gives for the same ten advertisements (oracle.py run on
    /// vectors 050, 051, 081, 082, 115, 135-138, 155): a4:c1:38:8d:18:b2 temperature 25.06,
    /// 23.97, 27.3, -22 (×3), -7.7, 25.06; humidity 50.55, 63.27, 50.55; battery 93;
    /// 54:48:e6:8f:80:a5 temperature 27.8 ×2, humidity 52 ×2, battery 100 ×2.
    @Test func tableOfTheBTHomeVectors() throws {
        let s = try Self.stats([Self.vectors, "--plugins", Self.dir])
        let sensors = try #require(s["sensors"] as? [[String: Any]])
        #expect(sensors.count == 6)
        // Device by device, in the order they first gave a reading; fields in message order.
        #expect(
            sensors.map { "\($0["address"]!) \($0["field"]!)" } == [
                "54:48:e6:8f:80:a5 battery", "54:48:e6:8f:80:a5 humidity", "54:48:e6:8f:80:a5 temperature",
                "a4:c1:38:8d:18:b2 temperature", "a4:c1:38:8d:18:b2 humidity", "a4:c1:38:8d:18:b2 battery"
            ])
        let t = try #require(Self.row(sensors, "a4:c1:38:8d:18:b2", "temperature"))
        #expect(t["plugin"] as? String == "bthome-v2" && t["message"] as? String == "measurement" && t["unit"] as? String == "°C")
        #expect(t["count"] as? Int == 8 && t["na"] as? Int == 0)
        #expect(t["min"] as? Double == -22 && t["max"] as? Double == 27.3)
        #expect(t["first"] as? Double == 25.06 && t["first_frame"] as? Int == 3 && t["first_us"] as? Int == 1_764_115_200_200_000)
        #expect(t["last"] as? Double == 25.06 && t["last_frame"] as? Int == 10 && t["last_us"] as? Int == 1_764_115_200_900_000)
        let h = try #require(Self.row(sensors, "a4:c1:38:8d:18:b2", "humidity"))
        #expect(h["count"] as? Int == 3 && h["min"] as? Double == 50.55 && h["max"] as? Double == 63.27 && h["unit"] as? String == "%")
        let b = try #require(Self.row(sensors, "a4:c1:38:8d:18:b2", "battery"))
        #expect(b["count"] as? Int == 1 && b["min"] as? Double == 93 && b["first_frame"] as? Int == 4)
        let t2 = try #require(Self.row(sensors, "54:48:e6:8f:80:a5", "temperature"))
        #expect(t2["count"] as? Int == 2 && t2["min"] as? Double == 27.8 && t2["max"] as? Double == 27.8)
        // BTHome's info bits and packet id are not readings.
        #expect(!sensors.contains { ["encrypted", "version", "packet_id", "mac_included"].contains($0["field"] as? String ?? "") })
    }

    /// Without plugins (or without decoded advertising) the JSON has no sensor keys at all:
    /// every other capture's stats object stays byte for byte what it was.
    @Test func noKeyWithoutReadings() throws {
        let s = try Self.stats([Self.vectors, "--no-plugins"])
        #expect(s["sensors"] == nil && s["sensors_not_listed"] == nil)
        #expect((s["devices"] as? [Any])?.count == 2)
    }

    @Test func textAndCSV() throws {
        let r = try CLI.run(["stats", Self.vectors, "--plugins", Self.dir])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let at = try #require(lines.firstIndex { $0.hasPrefix("sensors: ") })
        #expect(lines[at] == "sensors: 6 fields of 2 devices (decoded from advertising data; times UTC)")
        #expect(lines.contains("  a4:c1:38:8d:18:b2  \"ATC_8D18B2\", \"SBTR-001AEU\", \"SBHT-003C\", \"SBHT-203C\"  bthome-v2 measurement"))
        #expect(
            lines.contains("    temperature (°C)      8     -22.00      27.30  25.06 at 00:00:00.200000      25.06 at 00:00:00.900000"),
            "\(lines[at...].joined(separator: "\n"))")
        let c = try CLI.run(["stats", Self.vectors, "--plugins", Self.dir, "--format", "csv", "--table", "sensors"])
        let rows = c.stdout.split(separator: "\n").map(String.init)
        #expect(rows.first == "file,address,plugin,message,field,unit,count,na,min,max,first,first_us,first_frame,last,last_us,last_frame")
        #expect(rows.count == 7)
        #expect(rows.contains(Self.vectors + ",a4:c1:38:8d:18:b2,bthome-v2,measurement,temperature,°C,8,0,-22.00,27.30,25.06,1764115200200000,3,25.06,1764115200900000,10"))
    }

    /// A long capture: 30 000 readings of one BTHome sensor, one every 2 s for 16.7 hours, a
    /// known curve with one spike. stats counts every reading; the report keeps at most 512
    /// buckets (first, min, max, last each), so the spike survives and the page stays small.
    @Test func longCaptureIsDecimated() throws {
        let n = 30_000
        var packets: [(UInt64, [UInt8])] = []
        var lo = Int.max, hi = Int.min
        for i in 0..<n {
            var t = 2000 + Int(800 * sin(Double(i) / 2000)) // 0.01 °C
            if i == 17_321 { t = 4321 } // the spike
            lo = min(lo, t); hi = max(hi, t)
            packets.append((UInt64(i) * 2_000_000, Self.bthomeReport(temperature: Int16(t))))
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-sensors-\(UUID().uuidString).btsnoop").path
        let html = path + ".html"
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: html) }
        try Data(Self.btsnoop(packets)).write(to: URL(fileURLWithPath: path))

        let s = try Self.stats([path, "--plugins", Self.dir])
        let t = try #require(Self.row(s["sensors"] as? [[String: Any]] ?? [], "a4:c1:38:8d:18:b2", "temperature"))
        #expect(t["count"] as? Int == n)
        #expect(t["min"] as? Double == Double(lo) / 100 && t["max"] as? Double == 43.21)

        let r = try CLI.run(["report", path, "--plugins", Self.dir, "-o", html])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        let json = try #require(ReportBrowserTests.matches(page, #"(?s)<script type="application/json" id="sensors">(.*?)</script>"#).first?[1])
        let series = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(series.count == 1)
        let buckets = try #require(series[0]["b"] as? [[Double]])
        #expect(buckets.count <= 512 && buckets.count > 400)
        #expect(buckets.reduce(0) { $0 + Int($1[6]) } == n)
        #expect(buckets.map { $0[2] }.min() == Double(lo) / 100 && buckets.map { $0[3] }.max() == 43.21)
        #expect(buckets.first?[1] == 20 && buckets.last?[4] == t["last"] as? Double)
        // The sensor data is a small part of the page (the report of 30 000 records).
        #expect(json.utf8.count < 40_000, "\(json.utf8.count) bytes of series")
    }

    /// The Sensors view in Chromium: one card per field, each with a chart, numbers as stats'.
    @Test(.enabled(if: Chromium.path != nil))
    func sensorsViewInChromium() throws {
        let html = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-sensors-\(UUID().uuidString).html").path
        defer { try? FileManager.default.removeItem(atPath: html) }
        let r = try CLI.run(["report", Self.vectors, "--plugins", Self.dir, "-o", html])
        #expect(r.status == 0, "\(r.stderr)")
        let (dom, log) = try Chromium.run("file://" + html + "#view=all")
        #expect(dom.contains("data-ready=\"1\"") && !log.contains("Uncaught"), "\(log.suffix(800))")
        #expect(dom.contains("<pre id=\"script-errors\" hidden=\"\"></pre>"))
        #expect(ReportBrowserTests.attr(dom, id: "n-sensors", "data-value") == "2")
        let cards = ReportBrowserTests.matches(dom, #"(?s)<div class="sensor-card" data-field="([a-z_0-9]+)" data-i="(\d+)" data-count="(\d+)" data-points="(\d+)">(.*?)</svg>"#)
        #expect(
            cards.map { "\($0[1]) \($0[3]) \($0[4])" } == [
                "battery 2 2", "humidity 2 2", "temperature 2 2",
                "temperature 8 8", "humidity 3 3", "battery 1 1"
            ])
        #expect(cards[3][5].contains("8 readings · min -22.00 · max 27.30 · last 25.06"))
        #expect(cards.allSatisfy { $0[5].contains("<path d=\"M") })
        #expect(dom.contains("a4:c1:38:8d:18:b2 “ATC_8D18B2”, “SBTR-001AEU”, “SBHT-003C”, “SBHT-203C” — bthome-v2 measurement"))
    }

    /// An HCI LE Advertising Report from a4:c1:38:8d:18:b2 with BTHome v2 service data
    /// (bthome.io/format: 0x40 v2 unencrypted, object 0x02 temperature s16 × 0.01).
    static func bthomeReport(temperature t: Int16) -> [UInt8] {
        let u = UInt16(bitPattern: t)
        let ad: [UInt8] = [0x02, 0x01, 0x06, 0x07, 0x16, 0xD2, 0xFC, 0x40, 0x02, UInt8(u & 0xFF), UInt8(u >> 8)]
        let report: [UInt8] = [0x01, 0x00, 0x00, 0xB2, 0x18, 0x8D, 0x38, 0xC1, 0xA4, UInt8(ad.count)] + ad + [0xC4]
        let event: [UInt8] = [0x02] + report // subevent LE Advertising Report
        return [0x04, 0x3E, UInt8(event.count)] + event
    }

    /// btsnoop (datalink 1002, H4), records received by the host at `us` from 2025-11-26.
    static func btsnoop(_ packets: [(UInt64, [UInt8])]) -> [UInt8] {
        var out = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        for (us, p) in packets {
            let ts = 0x00DC_DDB3_0F2F_8000 + 1_764_115_200_000_000 + us
            out += be32(UInt32(p.count)) + be32(UInt32(p.count)) + be32(3) + be32(0)
            out += be32(UInt32(ts >> 32)) + be32(UInt32(ts & 0xFFFF_FFFF)) + p
        }
        return out
    }
}
