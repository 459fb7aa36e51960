/// Rendered bytes by source bytes and a salt (call site and writer state), in fixed memory:
/// an open-addressed table over one arena, emptied whole when either fills (memory stays
/// flat however long the capture). `JSONFieldWriter` keeps advertising reports here: a
/// device repeats the same report many times a second, and rendering them was a third of
/// `dump --format jsonl`.
final class FragmentCache {
    struct Entry {
        var hash: UInt64 = 0
        var offset: Int32 = -1 // -1: empty slot
        var sourceCount: Int32 = 0
        var renderedCount: Int32 = 0
        var salt: UInt16 = 0
        /// What the rendering leaves open, for the writer to restore (`JSONFieldWriter.replaying`).
        var effect: UInt32 = 0
    }

    static let slots = 2048 // a power of two, kept at most half full
    static let arenaCapacity = 1 << 20
    static let largestEntry = 16 << 10 // bigger renderings are not kept

    private let table: UnsafeMutablePointer<Entry>
    private let arena: UnsafeMutableRawPointer
    private var used = 0
    private var count = 0

    init() {
        table = .allocate(capacity: Self.slots)
        table.initialize(repeating: Entry(), count: Self.slots)
        arena = .allocate(byteCount: Self.arenaCapacity, alignment: 8)
    }

    deinit { table.deallocate(); arena.deallocate() }

    @inline(__always)
    static func hash(_ p: UnsafeRawBufferPointer, _ salt: UInt16) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(p.count) ^ UInt64(salt) << 32
        guard let b = p.baseAddress else { return h }
        var i = 0
        while i + 8 <= p.count {
            h = (h ^ b.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 32
            i += 8
        }
        var tail: UInt64 = 0
        if i < p.count {
            if p.count >= 8 { // the last eight bytes, overlapping (the count is in the seed)
                tail = b.loadUnaligned(fromByteOffset: p.count - 8, as: UInt64.self)
            } else {
                while i < p.count { tail = tail << 8 | UInt64(b.load(fromByteOffset: i, as: UInt8.self)); i += 1 }
            }
        }
        h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        return h ^ (h >> 29)
    }

    @inline(__always)
    static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard let q = b.baseAddress else { return true }
        var i = 0
        while i + 8 <= b.count {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != q.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        if i < b.count, b.count >= 8 {
            let k = b.count - 8
            return a.loadUnaligned(fromByteOffset: k, as: UInt64.self) == q.loadUnaligned(fromByteOffset: k, as: UInt64.self)
        }
        while i < b.count {
            if a.load(fromByteOffset: i, as: UInt8.self) != q.load(fromByteOffset: i, as: UInt8.self) { return false }
            i += 1
        }
        return true
    }

    /// The slot holding `source`, or the empty slot where it would go.
    @inline(__always)
    private func slot(_ source: UnsafeRawBufferPointer, _ salt: UInt16, _ h: UInt64) -> Int {
        let mask = Self.slots - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let e = table[i]
            if e.offset < 0 { return i }
            if e.hash == h, e.salt == salt, Int(e.sourceCount) == source.count,
                Self.equal(UnsafeRawPointer(arena + Int(e.offset)), source)
            {
                return i
            }
            i = (i + 1) & mask
        }
    }

    /// What was rendered for `source` (valid until the next insert).
    @inline(__always)
    func lookup(_ source: UnsafeRawBufferPointer, salt: UInt16) -> (bytes: UnsafeRawBufferPointer, effect: UInt32)? {
        let e = table[slot(source, salt, Self.hash(source, salt))]
        if e.offset < 0 { return nil }
        return (UnsafeRawBufferPointer(start: arena + Int(e.offset) + Int(e.sourceCount), count: Int(e.renderedCount)), e.effect)
    }

    func insert(_ source: UnsafeRawBufferPointer, salt: UInt16, rendered: UnsafeRawBufferPointer, effect: UInt32) {
        let need = source.count + rendered.count
        guard need <= Self.largestEntry else { return }
        if used + need > Self.arenaCapacity || count >= Self.slots / 2 {
            table.update(repeating: Entry(), count: Self.slots)
            used = 0; count = 0
        }
        let h = Self.hash(source, salt)
        let i = slot(source, salt, h)
        guard table[i].offset < 0 else { return }
        if let s = source.baseAddress { (arena + used).copyMemory(from: s, byteCount: source.count) }
        if let r = rendered.baseAddress { (arena + used + source.count).copyMemory(from: r, byteCount: rendered.count) }
        table[i] = Entry(
            hash: h, offset: Int32(used), sourceCount: Int32(source.count),
            renderedCount: Int32(rendered.count), salt: salt, effect: effect)
        used += (need + 7) & ~7
        count += 1
    }
}
