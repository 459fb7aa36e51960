import Testing
import BluesiftDissect

/// The report's per-field series: at most `SensorSeries.columns` buckets whatever the number
/// of readings, and the buckets together keep the exact count, extremes, first and last.
@Suite struct SensorSeriesTests {
    @Test(arguments: [1, 7, 511, 512, 513, 10_000, 100_000])
    func bucketsKeepExtremes(_ n: Int) throws {
        var s = SensorSeries()
        var lo = Double.infinity, hi = -Double.infinity
        let t0: Int64 = 1_764_115_200_000_000
        for i in 0..<n {
            let v = Double((i * 7919) % 1000) / 10 - 20 // a scrambled sequence in -20…79.9
            lo = min(lo, v); hi = max(hi, v)
            s.add(v, at: t0 + Int64(i) * 1_500_000)
        }
        let b = s.buckets.compactMap { $0 }
        #expect(s.buckets.count <= SensorSeries.columns)
        #expect(b.reduce(0) { $0 + $1.count } == n)
        #expect(b.map { $0.min }.min() == lo && b.map { $0.max }.max() == hi)
        #expect(b.first?.first == -20 && b.first?.tFirst == 0)
        #expect(b.last?.last == Double(((n - 1) * 7919) % 1000) / 10 - 20 && b.last?.tLast == Int64(n - 1) * 1_500_000)
        #expect(s.t0Us == t0)
        // Buckets are `widthUs` wide and in time order.
        for (i, x) in s.buckets.enumerated() { if let x { #expect(x.tFirst / s.widthUs == Int64(i) && x.tLast / s.widthUs == Int64(i)) } }
    }

    /// A clock that steps back lands in the first bucket; nothing is lost.
    @Test func timeGoingBackwards() {
        var s = SensorSeries()
        s.add(5, at: 10_000_000)
        s.add(3, at: 9_000_000)
        s.add(8, at: 12_000_000)
        let b = s.buckets.compactMap { $0 }
        #expect(b.reduce(0) { $0 + $1.count } == 3 && b.map { $0.min }.min() == 3 && b.map { $0.max }.max() == 8)
    }

    @Test func roundedToDecimals() {
        #expect(SensorTable.rounded(2130 * 0.01, 2) == 21.3)
        #expect(SensorTable.rounded(-0.045, 2) == -0.05)
        #expect(SensorTable.rounded(1.0 / 3, nil) == 1.0 / 3)
    }
}
