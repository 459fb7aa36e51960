/// Results of whole advertising reports seen before, by the report's AD data and advertiser
/// (address, address type, PDU type): a device repeats its report many times a second, and
/// the record's result is a function of those while no rule read a name. Walking the
/// structures, choosing a rule and finding the decode per structure was ~1,000 instructions
/// a record; a hit is one hash of the data. Open addressing over one byte pool, as
/// `DecodeCache`; at `limit` entries it starts again empty.
struct ReportCache {
    struct Entry {
        var hash: UInt64
        /// Address (or `UInt64.max`), then address type and PDU type, packed.
        var a: UInt64, c: UInt64
        var at: Int32, count: Int32
        /// The data holds a local name (`observeName` runs on a hit too).
        var hasName: Bool
        /// Some structure went to a plugin that reads `_rssi`: the result holds for this RSSI only.
        var rssiDependent: Bool
        var rssi: Int64
        /// A rule or plugin read the advertiser's name: the result may change with it, so it
        /// is decoded afresh each time.
        var nameDependent: Bool
    }
    /// Plain data (copying one costs no retain); each entry's result in `results`, beside.
    var entries: [Entry] = []
    var results: [PluginSet.Result?] = []
    var pool: [UInt8] = []
    /// Entry index + 1 per slot (0: empty); twice the entry limit, a power of two.
    var slots: [Int32] = []
    /// Per process: bytes from the air choose the slot, so a capture cannot aim at one.
    let seed = UInt64.random(in: .min ... .max)
    static let limit = 4096

    static func key(address: UInt64?, addressType: Int64, pdu: Int64) -> (UInt64, UInt64) {
        (address ?? .max, UInt64(bitPattern: addressType) & 0xFF | (UInt64(bitPattern: pdu) & 0xFFFF) << 8)
    }

    func hash(_ a: UInt64, _ c: UInt64, _ data: UnsafeRawBufferPointer) -> UInt64 {
        var h = DecodeCache.mix(seed, a)
        h = DecodeCache.mix(h, c ^ UInt64(data.count) << 32)
        return DecodeCache.mix(h, data)
    }

    /// The entry for this report (-1: none) and its hash, for `insert`.
    func find(_ a: UInt64, _ c: UInt64, _ data: UnsafeRawBufferPointer) -> (entry: Int, hash: UInt64) {
        let h = hash(a, c, data)
        guard !slots.isEmpty else { return (-1, h) }
        return slots.withUnsafeBufferPointer { slots in
            entries.withUnsafeBufferPointer { entries in
                pool.withUnsafeBytes { pool in
                    let mask = slots.count - 1
                    var i = Int(truncatingIfNeeded: h) & mask
                    while true {
                        let s = Int(slots[i])
                        if s == 0 { return (-1, h) }
                        let x = entries[s - 1]
                        if x.hash == h, x.a == a, x.c == c, Int(x.count) == data.count,
                            data.isEmpty || DecodeCache.equal(pool.baseAddress! + Int(x.at), data.baseAddress!, data.count)
                        {
                            return (s - 1, h)
                        }
                        i = (i + 1) & mask
                    }
                }
            }
        }
    }

    mutating func insert(
        _ a: UInt64, _ c: UInt64, _ hash: UInt64, _ data: UnsafeRawBufferPointer, _ entry: Entry, _ result: PluginSet.Result?
    ) {
        if slots.isEmpty { slots = Array(repeating: 0, count: DecodeCache.slotCount(Self.limit)) }
        if entries.count >= Self.limit { removeAll() }
        var n = entry
        n.hash = hash; n.a = a; n.c = c; n.at = Int32(pool.count); n.count = Int32(data.count)
        let e = entries.count
        entries.append(n)
        results.append(result)
        pool.append(contentsOf: data)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = Int32(e + 1)
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        results.removeAll(keepingCapacity: true)
        pool.removeAll(keepingCapacity: true)
        for i in slots.indices { slots[i] = 0 }
    }
}

extension PluginSet {
    /// The result of one advertising report: `decode` (the structures one by one, through
    /// `advertisingResult`) the first time, else what it gave for the same data from the same
    /// advertiser. `observeName` records the report's local name and says whether it had one
    /// (called only when names are kept). Results that read a name are never reused; those
    /// that read the RSSI only for the same RSSI.
    public func advertisingReport(
        data: UnsafeRawBufferPointer, address: UInt64?, addressType: Int64, pdu: Int64, rssi: Int64,
        observeName: () -> Bool, decode: () -> Result?
    ) -> Result? {
        let (a, c) = ReportCache.key(address: address, addressType: addressType, pdu: pdu)
        let (e, h) = reports.find(a, c, data)
        if e >= 0 {
            let x = reports.entries[e]
            if !x.nameDependent, !x.rssiDependent || x.rssi == rssi {
                if x.hasName, needsNames { _ = observeName() }
                return reports.results[e]
            }
        }
        let hasName = needsNames ? observeName() : false
        reportReads = 0
        let r = decode()
        if reportReads & 32 == 0 { r?.hold() } // reused: writers may keep its rendering
        let entry = ReportCache.Entry(
            hash: h, a: a, c: c, at: 0, count: 0, hasName: hasName,
            rssiDependent: reportReads & 2 != 0, rssi: rssi, nameDependent: reportReads & 32 != 0)
        if e >= 0 {
            let at = reports.entries[e].at, count = reports.entries[e].count
            reports.entries[e] = entry
            reports.entries[e].at = at; reports.entries[e].count = count
            reports.results[e] = r
        } else {
            reports.insert(a, c, h, data, entry, r)
        }
        return r
    }
}
