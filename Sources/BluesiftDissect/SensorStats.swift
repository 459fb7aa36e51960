import BluesiftWire
import BluesiftPlugins

extension StatsReport {
    /// One numeric field a plugin decoded from one advertiser's data (`stats`' sensor table,
    /// docs/stats.md): how many readings, the first and last (with their time and frame), the
    /// smallest and largest. `na`: readings that were "not available" (a sentinel, an invalid
    /// value), not in the count. Values are rounded to the field's decimal places.
    public struct Sensor: Codable, Sendable {
        public var address: String
        public var plugin: String
        public var message: String
        public var field: String
        public var unit: String?
        public var count = 0
        public var na = 0
        public var min: Double?
        public var max: Double?
        public var first: Double?
        public var firstUs: Int64?
        public var firstFrame: Int?
        public var last: Double?
        public var lastUs: Int64?
        public var lastFrame: Int?
        /// Decimal places of the field's values (scaled numbers), nil for integers and IEEE values.
        public var decimals: Int?
    }
}

/// The report's chart data of one sensor field: at most `SensorSeries.columns` buckets over
/// its readings' time span, each with its first, smallest, largest and last value, so a chart
/// draws every pixel column's range (min/max decimation) and the page stays small however long
/// the capture. Buckets start `width` µs wide (1 ms) and double, merging pairs, whenever a
/// reading falls past the last one: memory is fixed per field, never per reading.
public struct SensorSeries: Sendable {
    public static let columns = 512
    public struct Bucket: Sendable, Codable {
        /// Times in µs from the series' `t0Us`.
        public var tFirst: Int64, tLast: Int64
        public var first: Double, min: Double, max: Double, last: Double
        public var count: Int
    }
    public private(set) var t0Us: Int64 = 0
    public private(set) var widthUs: Int64 = 1_000
    public private(set) var buckets: [Bucket?] = []
    public init() {}

    public mutating func add(_ v: Double, at us: Int64) {
        if buckets.isEmpty { t0Us = us }
        let dt = Swift.max(0, us - t0Us) // a clock stepping back lands in the first bucket
        var i = Int(dt / widthUs)
        while i >= Self.columns {
            var merged: [Bucket?] = []
            merged.reserveCapacity(Self.columns)
            var k = 0
            while k < buckets.count {
                merged.append(Self.merge(buckets[k], k + 1 < buckets.count ? buckets[k + 1] : nil))
                k += 2
            }
            buckets = merged
            widthUs *= 2
            i = Int(dt / widthUs)
        }
        while buckets.count <= i { buckets.append(nil) }
        if var b = buckets[i] {
            if dt >= b.tLast { b.last = v; b.tLast = dt }
            if dt < b.tFirst { b.first = v; b.tFirst = dt }
            b.min = Swift.min(b.min, v); b.max = Swift.max(b.max, v)
            b.count += 1
            buckets[i] = b
        } else {
            buckets[i] = Bucket(tFirst: dt, tLast: dt, first: v, min: v, max: v, last: v, count: 1)
        }
    }

    static func merge(_ a: Bucket?, _ b: Bucket?) -> Bucket? {
        guard let a else { return b }
        guard let b else { return a }
        return Bucket(
            tFirst: a.tFirst, tLast: b.tLast, first: a.first, min: Swift.min(a.min, b.min), max: Swift.max(a.max, b.max),
            last: b.last, count: a.count + b.count)
    }
}

/// Collects `StatsReport.Sensor` rows (and, for the report, their `SensorSeries`) from the
/// advertising messages plugins decoded: per advertiser address, plugin, message and numeric
/// field (a number with a unit or a scale: not flags, versions, counters). Bounded by
/// `StatsLimits.sensors` rows; readings past it are counted only.
public struct SensorTable: Sendable {
    struct GroupKey: Hashable { var address: UInt64; var plugin: String; var message: String }
    /// Rows of one (address, plugin, message), by field name; few fields, searched in order.
    var groups: [GroupKey: [(field: String, row: Int)]] = [:]
    public private(set) var rows: [StatsReport.Sensor] = []
    public private(set) var series: [SensorSeries] = []
    /// Device order: the first row of each address, so rows list device by device.
    var deviceRank: [UInt64: Int] = [:]
    var rowDevice: [Int] = []
    public var keepSeries = false
    public private(set) var notListed = 0

    public init(keepSeries: Bool = false) { self.keepSeries = keepSeries }

    /// What a result gave the table (the row updates, the readings left out), while no row has
    /// been added since: records repeating a payload share one result (`PluginSet`), so it is
    /// worked out once and replayed.
    struct Replay {
        var result: PluginSet.Result
        var rowCount: Int
        var updates: [(row: Int, value: Double?, decimals: Int?, unit: String?)]
        var notListed: Int
    }
    var replays: [ObjectIdentifier: Replay] = [:]

    /// The advertising messages of one analyzed frame (`vendor.sources` set).
    public mutating func add(_ vendor: PluginSet.Result, us: Int64, frame: Int) {
        let id = vendor.identity
        if let r = replays[id], r.rowCount == rows.count {
            for u in r.updates { update(u.row, u.value, decimals: u.decimals, unit: u.unit, us: us, frame: frame) }
            notListed += r.notListed
            return
        }
        var updates: [(row: Int, value: Double?, decimals: Int?, unit: String?)] = []
        let skipped = notListed
        add(vendor, us: us, frame: frame, updates: &updates)
        // Bounded: the entry holds the result, so its identity is not reused while kept.
        if replays.count >= 4096 { replays.removeAll(keepingCapacity: true) }
        replays[id] = Replay(result: vendor, rowCount: rows.count, updates: updates, notListed: notListed - skipped)
    }

    mutating func add(
        _ vendor: PluginSet.Result, us: Int64, frame: Int,
        updates: inout [(row: Int, value: Double?, decimals: Int?, unit: String?)]
    ) {
        for (m, src) in zip(vendor.messages, vendor.sources) {
            guard let address = src.address else { continue }
            let key = GroupKey(address: address, plugin: m.plugin, message: m.message)
            var fields = groups[key] ?? []
            var changed = false
            for f in m.fields where !f.notReading {
                // A reading is a number with a unit or a scale (decimal places, IEEE): bare
                // integers are flags, versions, counters and ids (BTHome's info bits, packet_id).
                let v: Double?, decimals: Int?, reading: Bool
                switch f.value {
                case .int, .uint: v = f.value.number; decimals = nil; reading = f.unit != nil
                case .decimal(_, let x, let d): v = x; decimals = d; reading = true
                case .real(let x): v = x; decimals = nil; reading = true
                case .null: v = nil; decimals = nil; reading = f.unit != nil
                default: continue // names, strings, bytes: not readings
                }
                if let v, !v.isFinite { continue }
                let row: Int
                if let r = fields.first(where: { $0.field == f.name })?.row {
                    row = r
                } else {
                    guard reading else { continue }
                    guard rows.count < StatsLimits.sensors else { notListed += 1; continue }
                    row = rows.count
                    rows.append(.init(address: BDAddr(address).description, plugin: m.plugin, message: m.message, field: f.name, unit: f.unit))
                    if keepSeries { series.append(SensorSeries()) }
                    if deviceRank[address] == nil { deviceRank[address] = deviceRank.count }
                    rowDevice.append(deviceRank[address]!)
                    fields.append((f.name, row))
                    changed = true
                }
                update(row, v, decimals: decimals, unit: f.unit, us: us, frame: frame)
                updates.append((row, v, decimals, f.unit))
            }
            if changed { groups[key] = fields }
        }
    }

    mutating func update(_ i: Int, _ v: Double?, decimals: Int?, unit: String?, us: Int64, frame: Int) {
        guard let v else { rows[i].na += 1; return }
        var r = rows[i]
        r.count += 1
        if r.first == nil { r.first = v; r.firstUs = us; r.firstFrame = frame }
        r.last = v; r.lastUs = us; r.lastFrame = frame
        r.min = Swift.min(r.min ?? v, v)
        r.max = Swift.max(r.max ?? v, v)
        if let d = decimals { r.decimals = Swift.max(r.decimals ?? 0, d) }
        if r.unit == nil, let unit { r.unit = unit }
        rows[i] = r
        if keepSeries && i < StatsLimits.sensorSeries { series[i].add(v, at: us) }
    }

    /// `v` with `decimals` places: the nearest double to the decimal text, so JSON shows 21.3
    /// where scaling gave 21.299999999999997.
    public static func rounded(_ v: Double, _ decimals: Int?) -> Double {
        guard let d = decimals, d >= 0, d <= 12 else { return v }
        var p = 1.0
        for _ in 0..<d { p *= 10 }
        let s = (v * p).rounded(.toNearestOrAwayFromZero)
        return abs(s) < 9e15 ? s / p : v
    }

    /// The rows device by device (in the order devices first gave a reading), then as first
    /// seen; values rounded. `order[i]` is the index in `rows` (and `series`) of output row i.
    public func finished() -> (rows: [StatsReport.Sensor], order: [Int]) {
        let order = rows.indices.sorted { (rowDevice[$0], $0) < (rowDevice[$1], $1) }
        let out = order.map { i -> StatsReport.Sensor in
            var r = rows[i]
            let d = r.decimals
            r.min = r.min.map { Self.rounded($0, d) }; r.max = r.max.map { Self.rounded($0, d) }
            r.first = r.first.map { Self.rounded($0, d) }; r.last = r.last.map { Self.rounded($0, d) }
            return r
        }
        return (out, order)
    }
}
