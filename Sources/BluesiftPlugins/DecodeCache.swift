#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decodes of advertising payloads seen before, by plugin, context values and bytes: an open
/// addressing table over entries whose key bytes sit in one pool, so a lookup hashes the
/// payload where it lies and allocates nothing (a dictionary keyed by an array built one per
/// structure, and hashed by SipHash, was a tenth of a dump's time with every plugin).
struct DecodeCache {
    struct Key: Equatable {
        var plugin: Int32
        /// Context values the plugin reads, packed (`PluginSet.decode`).
        var a: Int64, c: Int64
    }
    struct Entry {
        var key: Key
        var hash: UInt64
        /// Key bytes in `pool`: the payload, then the name when the plugin reads it.
        var at: Int32, payloadCount: Int32, nameCount: Int32
        var message: DecodedMessage
        /// The record result last built from this decode, and for which advertiser and target.
        var result: PluginSet.Result?
        var resultAddress: UInt64?
        var resultTarget: AdvertisingTarget?
    }
    var entries: [Entry] = []
    var pool: [UInt8] = []
    /// Entry index + 1 per slot (0: empty); twice the entry limit, a power of two.
    var slots: [Int32] = []
    /// Per process: bytes from the air choose the slot, so a capture cannot aim at one.
    let seed = UInt64.random(in: .min ... .max)

    func hash(_ key: Key, _ payload: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> UInt64 {
        var h = seed ^ UInt64(UInt32(bitPattern: key.plugin)) &* 0x9E37_79B9_7F4A_7C15
        h = Self.mix(h, UInt64(bitPattern: key.a))
        h = Self.mix(h, UInt64(bitPattern: key.c))
        h = Self.mix(h, UInt64(payload.count) << 32 | UInt64(name.count))
        h = Self.mix(h, payload)
        return Self.mix(h, name)
    }

    @inline(__always) static func mix(_ h: UInt64, _ w: UInt64) -> UInt64 {
        let x = (h ^ w) &* 0xFF51_AFD7_ED55_8CCD
        return x ^ (x >> 32)
    }

    /// The bytes in words; a tail as the last eight bytes, overlapping (the callers mix the
    /// count in first), where a byte loop was a third of a report's lookup.
    static func mix(_ h: UInt64, _ p: UnsafeRawBufferPointer) -> UInt64 {
        guard let b = p.baseAddress else { return mix(h, 0) }
        let n = p.count
        var h = h, i = 0
        while i + 8 <= n { h = mix(h, b.loadUnaligned(fromByteOffset: i, as: UInt64.self)); i += 8 }
        var w: UInt64 = 0
        if i < n {
            if n >= 8 {
                w = b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            } else if n >= 4 {
                w = UInt64(b.loadUnaligned(as: UInt32.self)) | UInt64(b.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)) << 32
            } else {
                while i < n { w = w << 8 | UInt64(b.load(fromByteOffset: i, as: UInt8.self)); i += 1 }
            }
        }
        return mix(h, w)
    }

    /// `n` bytes at `a` and `b` are equal: word compares, inline (the reports are short).
    @inline(__always)
    static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
        var i = 0
        while i + 8 <= n {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        if i == n { return true }
        if n >= 8 {
            return a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        }
        while i < n {
            if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
            i += 1
        }
        return true
    }

    /// The entry holding this key (-1: none) and the key's hash, for `insert`.
    func find(_ key: Key, _ payload: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> (entry: Int, hash: UInt64) {
        let h = hash(key, payload, name)
        guard !slots.isEmpty else { return (-1, h) }
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let s = Int(slots[i])
            if s == 0 { return (-1, h) }
            let e = s - 1
            if entries[e].hash == h, entries[e].key == key, same(e, payload, name) { return (e, h) }
            i = (i + 1) & mask
        }
    }

    /// Entry `e`'s key bytes are these (by index: an entry copied holds references).
    func same(_ e: Int, _ payload: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Bool {
        guard Int(entries[e].payloadCount) == payload.count, Int(entries[e].nameCount) == name.count else { return false }
        let at = Int(entries[e].at)
        return pool.withUnsafeBytes { p in
            return (payload.isEmpty || memcmp(p.baseAddress! + at, payload.baseAddress!, payload.count) == 0)
                && (name.isEmpty || memcmp(p.baseAddress! + at + payload.count, name.baseAddress!, name.count) == 0)
        }
    }

    /// Adds a decode; at `limit` entries the cache starts again empty. Returns its entry.
    mutating func insert(
        _ key: Key, _ hash: UInt64, _ payload: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer,
        _ message: DecodedMessage, limit: Int
    ) -> Int {
        if slots.isEmpty { slots = Array(repeating: 0, count: Self.slotCount(limit)) }
        if entries.count >= limit {
            entries.removeAll(keepingCapacity: true)
            pool.removeAll(keepingCapacity: true)
            for i in slots.indices { slots[i] = 0 }
        }
        let e = entries.count
        entries.append(
            Entry(
                key: key, hash: hash, at: Int32(pool.count), payloadCount: Int32(payload.count),
                nameCount: Int32(name.count), message: message))
        pool.append(contentsOf: payload)
        pool.append(contentsOf: name)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = Int32(e + 1)
        return e
    }

    static func slotCount(_ limit: Int) -> Int {
        var n = 16
        while n < 2 * limit { n <<= 1 }
        return n
    }
}
