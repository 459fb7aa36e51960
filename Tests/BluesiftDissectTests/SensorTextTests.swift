import Testing
@testable import BluesiftDissect

/// `stats`' sensor section as text: one row per field when it fits, the characteristics
/// table's two-line form on a narrow terminal (broken between values, never inside one),
/// dates in the times of a capture over a day.
@Suite struct SensorTextTests {
    static func report(durationUs: Int64) -> StatsReport {
        var r = StatsReport(file: "x.btsnoop", format: "btsnoop, HCI UART H4")
        let t0: Int64 = 1_764_115_200_000_000
        r.durationUs = durationUs
        r.devices = [.init(address: "a4:c1:38:8d:18:b2", names: ["Kitchen"], firstFrame: 1, lastFrame: 9, firstUs: t0, lastUs: t0 + durationUs)]
        r.sensors = [
            .init(
                address: "a4:c1:38:8d:18:b2", plugin: "bthome-v2", message: "measurement", field: "temperature", unit: "°C",
                count: 8, na: 1, min: -22, max: 27.3, first: 25.06, firstUs: t0 + 200_000, firstFrame: 3,
                last: 25.06, lastUs: t0 + durationUs, lastFrame: 10, decimals: 2)
        ]
        return r
    }

    static func section(_ text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let at = lines.firstIndex { $0.hasPrefix("sensors:") }!
        return Array(lines[at...].prefix { !$0.isEmpty })
    }

    @Test func oneRowAFieldWhenItFits() {
        #expect(
            Self.section(StatsRender.text(Self.report(durationUs: 900_000))) == [
                "sensors: 1 field of 1 device (decoded from advertising data; times UTC)",
                "    field             count        min        max  first                         last",
                "  a4:c1:38:8d:18:b2  \"Kitchen\"  bthome-v2 measurement",
                "    temperature (°C)      8     -22.00      27.30  25.06 at 00:00:00.200000      25.06 at 00:00:00.900000  (1 n/a)"
            ])
    }

    @Test func twoLinesAFieldOnANarrowTerminal() {
        #expect(
            Self.section(StatsRender.text(Self.report(durationUs: 900_000), width: 72)) == [
                "sensors: 1 field of 1 device (decoded from advertising data; times UTC)",
                "  a4:c1:38:8d:18:b2  \"Kitchen\"  bthome-v2 measurement",
                "    temperature (°C)",
                "        8 readings, min -22.00, max 27.30,",
                "        first 25.06 at 00:00:00.200000, last 25.06 at 00:00:00.900000,",
                "        1 n/a"
            ])
    }

    @Test func datesOverADay() {
        let s = Self.section(StatsRender.text(Self.report(durationUs: 90_000_000_000)))
        #expect(s.last == "    temperature (°C)      8     -22.00      27.30  25.06 at 2025-11-26T00:00:00.200000Z      25.06 at 2025-11-27T01:00:00.000000Z  (1 n/a)")
    }
}
