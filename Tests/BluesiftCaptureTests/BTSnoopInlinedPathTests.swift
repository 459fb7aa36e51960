import Testing
@testable import BluesiftCapture

/// `BTSnoopReader.next()` builds a whole H4 record inline (info's loop) and leaves every other
/// case to `nextRecord()`; both must give the same records for the same bytes.
@Suite struct BTSnoopInlinedPathTests {
    struct Seen: Equatable {
        var frame: Int, ts: Timestamp, direction: Direction?, kind: PacketKind, bytes: [UInt8], original: Int, type: UInt16
        init(_ r: CaptureRecord) {
            frame = r.frame; ts = r.timestamp; direction = r.direction; kind = r.kind
            bytes = Array(r.bytes); original = r.originalLength; type = r.sourceType
        }
    }

    /// Every indicator (known, unknown, zero), empty and truncated records, times before the
    /// epoch and the file's last record cut short: records and warnings agree.
    @Test func inlinedRecordsEqualTheFullPath() throws {
        var file = Build.btsnoopHeader()
        for i in 0..<300 {
            let indicator = UInt8(i % 9) // 0, the five H4 kinds, 6-8 unknown
            let body = (0..<(i % 40)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) }
            let data = i % 23 == 0 ? [] : [indicator] + body
            let original: UInt32? = i % 11 == 0 ? UInt32(data.count + 5) : nil
            file += Build.btsnoopRecord(data, flags: UInt32(i % 4), us: Int64(i - 150) * 1_234_567, original: original)
        }
        file += Array(Build.btsnoopRecord([0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00], flags: 3).prefix(24 + 3))
        let path = Temp.file(file, name: "inlined.btsnoop")
        let fast = try #require(try CaptureFile.open(path: path) as? BTSnoopReader)
        let full = try #require(try CaptureFile.open(path: path) as? BTSnoopReader)
        var a: [Seen] = [], b: [Seen] = []
        while let r = fast.next() { a.append(Seen(r)) }
        while let r = full.nextRecord() { b.append(Seen(r)) }
        #expect(a.count == 300 && a == b)
        #expect(a[4].kind == .event && a[7].kind == .unknown && a[7].type == 7 && a[9].kind == .unknown && a[9].type == 0)
        #expect(a[11].original == a[11].bytes.count + 5 && a[0].bytes.isEmpty && a[0].kind == .unknown)
        #expect(fast.warnings == full.warnings && fast.warnings.count == 1)
        #expect(fast.next() == nil && full.nextRecord() == nil)
    }
}
