import Histogram

/// Request → response latencies of one characteristic: HdrHistogram (2 significant digits,
/// so median/p95 are within 1 % of the exact value, as its highest equivalent value; min
/// and max exact) and the display buckets of the report. Allocated on first use.
public struct LatencyHistogram: Sendable {
    var histogram: Histogram<UInt32>?
    var display: [Int] = []
    var minUs = Int64.max, maxUs = Int64.min

    /// Lower bound of each display bucket (µs): the report's histograms use decades/3.
    public static let bounds: [Int64] = [
        0, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000,
        100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000
    ]

    mutating func add(_ us: Int64) {
        if histogram == nil {
            histogram = Histogram(numberOfSignificantValueDigits: .two)
            display = [Int](repeating: 0, count: Self.bounds.count)
        }
        histogram!.record(UInt64(max(0, us)))
        var b = Self.bounds.count - 1
        while b > 0 && Self.bounds[b] > us { b -= 1 }
        display[b] += 1
        if us < minUs { minUs = us }
        if us > maxUs { maxUs = us }
    }

    func quantile(_ q: Double) -> Int64 {
        guard let h = histogram else { return 0 }
        return min(maxUs, max(minUs, Int64(clamping: h.valueAtPercentile(q * 100))))
    }

    var summary: StatsReport.Latency? {
        guard let h = histogram, h.totalCount > 0 else { return nil }
        return .init(
            count: Int(h.totalCount), minUs: minUs, medianUs: quantile(0.5), p95Us: quantile(0.95), maxUs: maxUs,
            histogram: display)
    }
}
