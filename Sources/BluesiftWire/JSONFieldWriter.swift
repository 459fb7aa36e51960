/// Writes fields as compact JSON straight into a byte buffer: no dictionaries, no Foundation.
///
/// It is on the per-record path of `dump --format jsonl`, so bytes go through a raw pointer
/// with one capacity check per field, strings without characters to escape are copied whole,
/// and the container stack lives in two bit registers: no per-byte `Array.append` and no
/// allocation per object. A class, like an output stream: a struct with copy-on-write storage
/// paid a uniqueness check (a runtime call) on every write, 6% of `dump --format jsonl`.
public final class JSONFieldWriter: FieldSink {
    // Touched several times per field; the writer is single-threaded and never overlaps
    // accesses, so the runtime exclusivity checks (45% of instructions when inlined across
    // modules) are turned off here.
    @exclusivity(unchecked) @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) @usableFromInline var used = 0
    @exclusivity(unchecked) @usableFromInline var capacity: Int
    /// Bit 0: the innermost open container; bit i: the container i levels out.
    @exclusivity(unchecked) var hasMember: UInt64 = 0
    @exclusivity(unchecked) var inArray: UInt64 = 0
    @exclusivity(unchecked) var depth = 0
    /// The registers' bit 63 for containers nested deeper than 64 (plugin values can nest).
    @exclusivity(unchecked) var spilled: [UInt8] = []
    /// Arrays already rendered, by source bytes (advertisers repeat the same AD data).
    @exclusivity(unchecked) var fragments: FragmentCache?

    public init(capacity: Int = 1 << 16) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The bytes written so far (a copy; ``withBytes(_:)`` reads them in place).
    public var out: [UInt8] {
        get { Array(UnsafeBufferPointer(start: base, count: used)) }
        set {
            removeAll()
            newValue.withUnsafeBytes { appendRaw($0) }
        }
    }

    /// Number of bytes written so far.
    public var count: Int { used }

    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// Forgets the bytes written, keeping the capacity (for chunked output).
    public func removeAll() { used = 0 }
    /// Drops the last `n` bytes written (a closing `}` and newline, to add a key after them).
    public func removeLast(_ n: Int) { used = max(0, used - n) }

    /// Room for `n` more bytes; returns where they go.
    @inline(__always)
    func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - used < n { grow(minimumCapacity: used + n) }
        return base + used
    }

    func grow(minimumCapacity: Int) {
        let newCapacity = max(minimumCapacity, capacity * 2)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        p.update(from: base, count: used)
        base.deallocate()
        base = p
        capacity = newCapacity
    }

    /// Lets `body` write at most `maxCount` bytes in place; it returns how many it wrote.
    public func withUnsafeSpace(_ maxCount: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        let p = reserve(maxCount)
        let n = body(p)
        precondition(n >= 0 && n <= maxCount, "wrote past the reserved space")
        used += n
    }

    @inline(__always)
    func appendByte(_ b: UInt8) {
        reserve(1).pointee = b
        used += 1
    }

    /// Starts a top-level object; pair with ``endTopLevel()``.
    public func beginTopLevel() {
        appendByte(UInt8(ascii: "{"))
        push(array: false)
    }

    public func endTopLevel() {
        appendByte(UInt8(ascii: "}"))
        pop()
    }

    /// Appends a line feed (ends one JSON Lines record).
    public func newline() { appendByte(0x0A) }

    @inline(__always)
    func push(array: Bool) {
        if depth >= 64 { spilled.append(UInt8(hasMember >> 63) | UInt8(inArray >> 63) << 1) }
        hasMember <<= 1
        inArray = inArray << 1 | (array ? 1 : 0)
        depth += 1
    }

    @inline(__always)
    func pop() {
        hasMember >>= 1; inArray >>= 1
        depth -= 1
        if depth >= 64, let e = spilled.popLast() {
            hasMember |= UInt64(e & 1) << 63
            inArray |= UInt64(e >> 1 & 1) << 63
        }
    }

    /// The separator and key before a value: `,"key":`, just `,` inside arrays.
    @inline(__always)
    func prefix(_ key: FieldKey) {
        var comma = false
        if depth > 0 {
            comma = hasMember & 1 != 0
            hasMember |= 1
            if inArray & 1 != 0 {
                if comma { appendByte(UInt8(ascii: ",")) }
                return
            }
        }
        switch key {
        case .literal(let s) where s.hasPointerRepresentation: // every multi-character literal
            let n = s.utf8CodeUnitCount
            let p = reserve(n &+ 4)
            let i = comma ? 1 : 0
            p[0] = UInt8(ascii: ",") // overwritten by the quote when no comma is due
            p[i] = UInt8(ascii: "\"")
            Self.copyShort(p + i + 1, s.utf8Start, n)
            p[i &+ 1 &+ n] = UInt8(ascii: "\""); p[i &+ 2 &+ n] = UInt8(ascii: ":")
            used &+= i &+ 3 &+ n
        case .literal(let s):
            s.withUTF8Buffer { k in
                let n = k.count
                let p = reserve(n + 4)
                var i = 0
                if comma { p[0] = UInt8(ascii: ","); i = 1 }
                p[i] = UInt8(ascii: "\"")
                if let kb = k.baseAddress { Self.copyShort(p + i + 1, kb, n) }
                p[i + 1 + n] = UInt8(ascii: "\""); p[i + 2 + n] = UInt8(ascii: ":")
                used += i + 3 + n
            }
        case .dynamic(let s):
            if comma { appendByte(UInt8(ascii: ",")) }
            appendByte(UInt8(ascii: "\"")); appendEscaped(s)
            appendByte(UInt8(ascii: "\"")); appendByte(UInt8(ascii: ":"))
        }
    }

    public func appendRaw(_ s: StaticString) {
        s.withUTF8Buffer { appendRaw(UnsafeRawBufferPointer($0)) }
    }

    public func appendRaw(_ bytes: UnsafeRawBufferPointer) {
        guard let src = bytes.baseAddress, !bytes.isEmpty else { return }
        let p = reserve(bytes.count)
        UnsafeMutableRawPointer(p).copyMemory(from: src, byteCount: bytes.count)
        used += bytes.count
    }

    /// `s` without its quotes, escaped; copied whole when nothing needs escaping (the usual case).
    public func appendEscaped(_ s: String) {
        withUTF8(s) { buf in
            if Self.needsEscaping(buf) { appendEscapedSlow(buf) } else { appendRaw(UnsafeRawBufferPointer(buf)) }
        }
    }

    /// The string's UTF-8 in place (native and small strings), without copying the String.
    @inline(__always)
    func withUTF8(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if s.utf8.withContiguousStorageIfAvailable(body) == nil {
            var s = s
            s.withUTF8(body)
        }
    }

    /// Whether any byte is `"`, `\` or a control character; eight bytes per step (SWAR), as
    /// names and values are scanned for every field. Exact: the classic "has zero byte" and
    /// "has byte less than" word tests only answer whether such a byte exists.
    @inline(__always)
    static func needsEscaping(_ buf: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let raw = UnsafeRawBufferPointer(buf)
        while i + 8 <= buf.count {
            if hasSpecialByte(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return true }
            i += 8
        }
        while i < buf.count {
            let c = buf[i]
            if c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { return true }
            i += 1
        }
        return false
    }

    func appendEscapedSlow(_ buf: UnsafeBufferPointer<UInt8>) {
        let p = reserve(buf.count * 6)
        var n = 0
        for c in buf {
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): p[n] = 0x5C; p[n + 1] = c; n += 2
            case 0x0A: p[n] = 0x5C; p[n + 1] = UInt8(ascii: "n"); n += 2
            case 0x0D: p[n] = 0x5C; p[n + 1] = UInt8(ascii: "r"); n += 2
            case 0x09: p[n] = 0x5C; p[n + 1] = UInt8(ascii: "t"); n += 2
            case 0..<0x20:
                p[n] = 0x5C; p[n + 1] = UInt8(ascii: "u"); p[n + 2] = 0x30; p[n + 3] = 0x30
                p[n + 4] = Hex.ascii(c >> 4); p[n + 5] = Hex.ascii(c & 0xF); n += 6
            default: p[n] = c; n += 1
            }
        }
        used += n
    }

    public func appendDecimal(_ v: Int) {
        if v < 0 { appendByte(UInt8(ascii: "-")); appendDecimal(UInt64(v.magnitude)) } else { appendDecimal(UInt64(v)) }
    }

    /// "00" to "99", for writing two digits per division.
    static let digitPairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    public func appendDecimal(_ v: UInt64) {
        let p = reserve(20)
        // Most values on the air are one or two digits.
        if v < 10 { p[0] = 0x30 &+ UInt8(v); used &+= 1; return }
        let pairs = Self.digitPairs.utf8Start
        if v < 100 { p[0] = pairs[Int(v) &* 2]; p[1] = pairs[Int(v) &* 2 &+ 1]; used &+= 2; return }
        var len = 3
        var t = v / 1000
        while t > 0 { len &+= 1; t /= 10 }
        var x = v, i = len
        while x >= 100 {
            let q = x / 100, r = Int(x &- q &* 100) &* 2
            i &-= 2; p[i] = pairs[r]; p[i &+ 1] = pairs[r &+ 1]
            x = q
        }
        if x >= 10 { p[0] = pairs[Int(x) &* 2]; p[1] = pairs[Int(x) &* 2 &+ 1] } else { p[0] = 0x30 &+ UInt8(x) }
        used &+= len
    }

    public func int(_ key: FieldKey, _ value: Int) { prefix(key); appendDecimal(value) }
    public func uint(_ key: FieldKey, _ value: UInt64) { prefix(key); appendDecimal(value) }
    public func bool(_ key: FieldKey, _ value: Bool) { prefix(key); appendRaw(value ? "true" : "false") }
    public func null(_ key: FieldKey) { prefix(key); appendRaw("null") }
    public func number(_ key: FieldKey, _ text: String) { prefix(key); withUTF8(text) { appendRaw(UnsafeRawBufferPointer($0)) } }

    public func string(_ key: FieldKey, _ value: String) {
        prefix(key)
        withUTF8(value) { buf in
            if !writeQuotedIfPlain(buf) {
                appendByte(UInt8(ascii: "\"")); appendEscapedSlow(buf); appendByte(UInt8(ascii: "\""))
            }
        }
    }

    /// Writes `"buf"` when no byte needs escaping, checking and copying eight bytes per step;
    /// returns false (having written nothing) otherwise.
    @inline(__always)
    func writeQuotedIfPlain(_ buf: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = buf.count
        let p = reserve(n + 2)
        if let src = buf.baseAddress {
            let s = UnsafeRawPointer(src), d = UnsafeMutableRawPointer(p + 1)
            if n >= 8 {
                var i = 0
                while i + 8 <= n {
                    let x = s.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    if Self.hasSpecialByte(x) { return false }
                    d.storeBytes(of: x, toByteOffset: i, as: UInt64.self)
                    i += 8
                }
                if i < n { // the last eight bytes, overlapping what was copied
                    let x = s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                    if Self.hasSpecialByte(x) { return false }
                    d.storeBytes(of: x, toByteOffset: n - 8, as: UInt64.self)
                }
            } else {
                for i in 0..<n {
                    let c = src[i]
                    if c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { return false }
                    p[1 + i] = c
                }
            }
        }
        p[0] = UInt8(ascii: "\"")
        p[n + 1] = UInt8(ascii: "\"")
        used += n + 2
        return true
    }

    /// Whether any of the eight bytes is `"`, `\` or a control character (exact).
    @inline(__always)
    static func hasSpecialByte(_ x: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = x ^ (ones &* 0x22), backslash = x ^ (ones &* 0x5C)
        let hit = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((x &- ones &* 0x20) & ~x)
        return hit & highs != 0
    }

    /// Copies a short run (keys, names) with word moves instead of a memcpy call.
    @inline(__always)
    static func copyShort(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>, _ n: Int) {
        let s = UnsafeRawPointer(src), d = UnsafeMutableRawPointer(dst)
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                d.storeBytes(of: s.loadUnaligned(fromByteOffset: i, as: UInt64.self), toByteOffset: i, as: UInt64.self)
                i += 8
            }
            if i < n {
                d.storeBytes(of: s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self), toByteOffset: n - 8, as: UInt64.self)
            }
        } else if n >= 4 { // two overlapping four-byte moves
            d.storeBytes(of: s.loadUnaligned(as: UInt32.self), as: UInt32.self)
            d.storeBytes(of: s.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self), toByteOffset: n - 4, as: UInt32.self)
        } else {
            for i in 0..<n { dst[i] = src[i] }
        }
    }

    public func hex(_ key: FieldKey, _ bytes: UnsafeRawBufferPointer) {
        prefix(key)
        let p = reserve(bytes.count * 2 + 2)
        p[0] = UInt8(ascii: "\"")
        var n = 1
        for b in bytes { p[n] = Hex.ascii(b >> 4); p[n + 1] = Hex.ascii(b & 0xF); n += 2 }
        p[n] = UInt8(ascii: "\"")
        used += n + 1
    }

    public func address(_ key: FieldKey, _ value: BDAddr) {
        prefix(key)
        let p = reserve(BDAddr.textLength + 2)
        p[0] = UInt8(ascii: "\"")
        value.write(to: p + 1)
        p[BDAddr.textLength + 1] = UInt8(ascii: "\"")
        used += BDAddr.textLength + 2
    }

    public func beginObject(_ key: FieldKey) {
        prefix(key); appendByte(UInt8(ascii: "{"))
        push(array: false)
    }

    public func endObject() {
        appendByte(UInt8(ascii: "}")); pop()
    }

    public func beginArray(_ key: FieldKey) {
        prefix(key); appendByte(UInt8(ascii: "["))
        push(array: true)
    }

    /// Replays the bytes `body` wrote for the same tag, source and container state (whether
    /// a comma is due, whether keys are written); they are the same bytes. `body` may leave
    /// up to eight containers open (a record's fixed first part); the replay reopens them.
    public func replaying(_ tag: ReplayTag, _ source: UnsafeRawBufferPointer, _ body: (inout JSONFieldWriter) -> Void) {
        _ = replay(tag, source, body)
    }

    /// As `replaying`, keeping the bytes in `held` too: the next time (`appendHeld`) they are
    /// one append, with no key built or hashed.
    public func replaying(
        _ tag: ReplayTag, _ source: UnsafeRawBufferPointer, held: HeldRendering?, _ body: (inout JSONFieldWriter) -> Void
    ) {
        guard let held else { _ = replay(tag, source, body); return }
        let salt = replaySalt(tag), start = used
        guard let effect = replay(tag, source, body) else { return }
        held.jsonState = UInt32(salt)
        held.jsonEffect = effect
        held.json.removeAll(keepingCapacity: true)
        held.json.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: used - start))
    }

    /// Appends what `held` kept for `tag` in this container state; false when it kept none.
    public func appendHeld(_ tag: ReplayTag, _ held: HeldRendering) -> Bool {
        guard held.jsonState == UInt32(replaySalt(tag)) else { return false }
        held.json.withUnsafeBytes { appendRaw($0) }
        apply(effect: held.jsonEffect)
        return true
    }

    /// The call site and container state a replayed rendering depends on.
    @inline(__always)
    func replaySalt(_ tag: ReplayTag) -> UInt16 {
        let state = depth == 0 ? 0 : UInt16(hasMember & 1) | UInt16(inArray & 1) << 1 | 4
        return UInt16(tag.rawValue) << 8 | state
    }

    /// Reopens what a replayed rendering left open. `effect`: bits 0-3 containers left open
    /// (k), 4-12 the k+1 innermost member bits, 13-20 the k innermost array bits.
    @inline(__always)
    func apply(effect: UInt32) {
        let k = Int(effect & 0xF)
        for i in stride(from: k - 1, through: 0, by: -1) { push(array: effect >> (13 + i) & 1 == 1) }
        if depth > 0 {
            let mask: UInt64 = (1 << (k + 1)) - 1
            hasMember = hasMember & ~mask | UInt64(effect >> 4) & mask
        }
    }

    /// `replaying`: the rendering's effect, nil when it was not kept.
    func replay(_ tag: ReplayTag, _ source: UnsafeRawBufferPointer, _ body: (inout JSONFieldWriter) -> Void) -> UInt32? {
        let salt = replaySalt(tag)
        if fragments == nil { fragments = FragmentCache() }
        if let hit = fragments!.lookup(source, salt: salt) {
            appendRaw(hit.bytes)
            apply(effect: hit.effect)
            return hit.effect
        }
        let start = used, startDepth = depth
        var me = self
        body(&me)
        let k = depth - startDepth
        guard k >= 0, k <= 8 else { return nil } // closed what it did not open: not kept
        let effect =
            UInt32(k) | UInt32(truncatingIfNeeded: hasMember & ((1 << (k + 1)) - 1)) << 4
            | UInt32(truncatingIfNeeded: inArray & ((1 << k) - 1)) << 13
        fragments!.insert(
            source, salt: salt, rendered: UnsafeRawBufferPointer(start: base + start, count: used - start),
            effect: effect)
        return effect
    }

    public func endArray() {
        appendByte(UInt8(ascii: "]")); pop()
    }
}
