import Testing
import BluesiftWire
import BluesiftCapture
import BluesiftDissect

@Suite struct FrameFilterTests {
    @Test func absoluteTimes() {
        // lightctl frame 1: 2025-12-23T10:12:39.376322Z
        #expect(FrameFilter.TimeBound("2025-12-23T10:12:39.376322Z") == .absolute(Timestamp(seconds: 1_766_484_759, nanoseconds: 376_322_000)))
        #expect(FrameFilter.TimeBound("2025-12-23T11:12:39.376322+01:00") == .absolute(Timestamp(seconds: 1_766_484_759, nanoseconds: 376_322_000)))
        #expect(FrameFilter.TimeBound("2025-12-23 10:12:39Z") == .absolute(Timestamp(seconds: 1_766_484_759)))
        #expect(FrameFilter.TimeBound("1969-12-31T23:59:59.5Z") == .absolute(Timestamp(seconds: -1, nanoseconds: 500_000_000)))
        #expect(FrameFilter.TimeBound("2025-13-23T10:12:39Z") == nil)
        // No zone: UTC, as dump prints times (it was refused).
        #expect(FrameFilter.TimeBound("2025-12-23T10:12:39") == .absolute(Timestamp(seconds: 1_766_484_759)))
        #expect(FrameFilter.TimeBound("2025-12-23T10:12") == nil)
        #expect(FrameFilter.TimeBound("2025-12-23T10:12:39Zjunk") == nil)
    }

    /// A time of day as dump prints it, resolved on the first record's date or the day after.
    @Test func timesOfDay() {
        #expect(FrameFilter.TimeBound("10:12:39.376322") == .timeOfDay(nanoseconds: 36_759_376_322_000))
        #expect(FrameFilter.TimeBound("10:12") == .timeOfDay(nanoseconds: 36_720_000_000_000))
        #expect(FrameFilter.TimeBound("10:12:39Z") == .timeOfDay(nanoseconds: 36_759_000_000_000))
        for bad in ["24:00", "10:60", "10:12:39.", "10:12:3", "1:12", "10:12:39.5x"] { #expect(FrameFilter.TimeBound(bad) == nil, "\(bad)") }
        let origin = Timestamp(seconds: 1_766_484_759, nanoseconds: 376_322_000) // 2025-12-23T10:12:39.376322Z
        #expect(FrameFilter.TimeBound("10:12:40")?.resolve(origin) == Timestamp(seconds: 1_766_484_760))
        #expect(FrameFilter.TimeBound("10:12:39")?.resolve(origin) == Timestamp(seconds: 1_766_484_759 + 86_400))
    }

    @Test func relativeTimes() {
        #expect(FrameFilter.TimeBound("+12.5s") == .relative(microseconds: 12_500_000))
        #expect(FrameFilter.TimeBound("+12.5") == .relative(microseconds: 12_500_000))
        #expect(FrameFilter.TimeBound("+250ms") == .relative(microseconds: 250_000))
        #expect(FrameFilter.TimeBound("+2m") == .relative(microseconds: 120_000_000))
        #expect(FrameFilter.TimeBound("+-1s") == nil)
        #expect(FrameFilter.TimeBound("+abc") == nil)
    }

    @Test func opcodeNames() {
        #expect(FrameFilter.attOpcodes(named: "write") == [0x12, 0x52, 0xD2])
        #expect(FrameFilter.attOpcodes(named: "Write Request") == [0x12])
        #expect(FrameFilter.attOpcodes(named: "handle-value-notification") == [0x1B])
        #expect(FrameFilter.attOpcodes(named: "read_by_type_response") == [0x09])
        #expect(FrameFilter.attOpcodes(named: "unknown") == nil)
        #expect(FrameFilter.attOpcodes(named: "wrte") == nil)
    }

    @Test func attributesByUUIDOrName() {
        let level = BluetoothUUID(0x2A19)
        #expect(FrameFilter.Attribute("2a19").matches(level))
        #expect(FrameFilter.Attribute("0x2A19").matches(level))
        #expect(FrameFilter.Attribute("00002a19-0000-1000-8000-00805f9b34fb").matches(level))
        #expect(FrameFilter.Attribute("Battery Level").matches(level))
        #expect(FrameFilter.Attribute("battery_level").matches(level))
        #expect(!FrameFilter.Attribute("Battery Service").matches(level))
        #expect(!FrameFilter.Attribute("2a18").matches(level))
    }

    @Test func emptyUntilAConditionIsSet() {
        var f = FrameFilter()
        #expect(f.isEmpty)
        f.errorsOnly = true
        #expect(!f.isEmpty)
        f = FrameFilter(); f.peerNames = ["band"]
        #expect(!f.isEmpty)
        f = FrameFilter(); f.since = .relative(microseconds: 0)
        #expect(!f.isEmpty)
    }
}
