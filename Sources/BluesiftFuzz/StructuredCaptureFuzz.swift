#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BluesiftWire
import BluesiftCapture

/// Structure-aware mutation of every capture reader's format (CaptureImage): records dropped,
/// duplicated, swapped, cut at a record boundary or inside one; pcapng sections turned to the
/// other byte order, duplicated, given a second interface, bogus options and unknown blocks;
/// length and header fields set to edge values; the whole wrapped in gzip/xz/zstd/bzip2 (and
/// that stream damaged). Where the mutation keeps every record, the records read must be
/// exactly the ones the mutated file holds (each unit's records are known from reading it
/// alone); a cut must be noted in a warning; any input: no trap, the reader contract
/// (CaptureFuzz.drain's), bounded time. Deterministic for a given seed (SplitMix64).
public enum StructuredCaptureFuzz {
    /// What a record is, for comparing: kind, direction, bytes, original length, time.
    public struct Rec: Equatable, Sendable {
        var kind: UInt8, dir: Int8, bytes: [UInt8], original: Int, us: Int64?
    }

    public struct Seed: Sendable {
        public var name: String
        public var image: CaptureImage
        /// Records each unit gives on its own (by unit id); nil when a unit's records depend on
        /// the others (then only the no-trap oracles apply).
        public var perUnit: [[Rec]]?
    }

    public struct Failure: Sendable, CustomStringConvertible {
        public var seed: String, mutation: String, message: String, input: [UInt8]
        public var description: String { "\(seed) after \(mutation): \(message)" }
    }

    public struct Stats: Sendable {
        public var inputs = 0, records = 0, predictable = 0, warned = 0
        public var byMutation: [String: Int] = [:]
        public var slowest = 0.0
    }

    // MARK: reading

    public struct Read { public var records: [Rec]; public var warnings: [String]; public var opened: Bool; public var contract: String? }

    /// Reads `bytes` as the CLI does (CaptureFile.open on a file), checking the reader contract.
    /// `plain`: the size before any compression (bounds a record's size).
    public static func read(_ bytes: [UInt8], plain: Int = 0, times: Bool = true, pipeline: StackFuzz.Pipeline? = nil) -> Read {
        // Its own file per thread: tests run in parallel, and a file rewritten under a
        // reader's mapping is a SIGBUS.
        let dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        let path = "\(dir)/bluesift-structured-\(getpid())-\(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(bitPattern: UInt(pthread_self()))))).bin"
        guard writeFile(path, bytes) else { return Read(records: [], warnings: [], opened: false, contract: "cannot write \(path)") }
        defer { unlink(path) }
        let reader: any CaptureReader
        do { reader = try CaptureFile.open(path: path) } catch { return Read(records: [], warnings: [], opened: false, contract: nil) }
        var out: [Rec] = [], last = 0, contract: String?
        while let r = reader.next() {
            if out.count > bytes.count { contract = "more records than bytes"; break }
            if r.frame <= last { contract = "frame \(r.frame) after \(last)" }
            last = r.frame
            if r.timestamp.nanoseconds < 0 || r.timestamp.nanoseconds >= 1_000_000_000 { contract = "nanoseconds \(r.timestamp.nanoseconds)" }
            if r.bytes.count > max(bytes.count, plain, reader.fileSize) { contract = "record of \(r.bytes.count) bytes in a file of \(bytes.count)" }
            out.append(
                Rec(
                    kind: r.kind.rawValue, dir: r.direction.map { $0 == .sent ? 0 : 1 } ?? -1, bytes: Array(r.bytes),
                    original: r.originalLength, us: times ? r.timestamp.microseconds : nil))
            pipeline?.add(r)
        }
        pipeline?.finish()
        if reader.bytesRead > reader.fileSize { contract = "bytesRead \(reader.bytesRead) > fileSize \(reader.fileSize)" }
        return Read(records: out, warnings: reader.warnings, opened: true, contract: contract)
    }

    /// Parses a seed file and learns each unit's records by reading it alone (with the blocks
    /// before it that are not records, for pcapng's section and interfaces).
    public static func seed(name: String, bytes: [UInt8]) -> Seed? {
        guard let image = CaptureImage.parse(bytes), image.recordCount > 0 else { return nil }
        return seed(name: name, image: image)
    }

    public static func seed(name: String, image: CaptureImage) -> Seed {
        let times = image.format != .btsnooz
        var perUnit: [[Rec]] = []
        for (i, u) in image.units.enumerated() {
            guard u.isRecord else { perUnit.append([]); continue }
            var alone = image
            alone.units = image.format == .pcapng ? image.units[..<i].filter { !$0.isRecord } + [u] : [u]
            perUnit.append(read(alone.serialized(), times: times).records)
        }
        let whole = read(image.serialized(), times: times).records
        return Seed(name: name, image: image, perUnit: perUnit.flatMap { $0 } == whole ? perUnit : nil)
    }

    // MARK: mutating

    public struct Mutant: Sendable {
        public var name: String
        public var bytes: [UInt8]
        /// The records it must give, when predictable.
        public var expected: [Rec]?
        /// A cut inside a unit: a warning must say so.
        public var mustWarn = false
        /// Size before the compressed wrapper, if any.
        public var plain = 0
    }

    static func pick<T>(_ a: [T], _ rng: inout SplitMix64) -> T { a[Int(rng.next() % UInt64(a.count))] }
    static func below(_ n: Int, _ rng: inout SplitMix64) -> Int { n <= 0 ? 0 : Int(rng.next() % UInt64(n)) }

    /// One to three structural mutations of the seed, then perhaps a compressed wrapper.
    public static func mutate(_ seed: Seed, _ rng: inout SplitMix64) -> Mutant {
        var image = seed.image
        var names: [String] = []
        var predictable = seed.perUnit != nil
        var cutAt: Int? // bytes kept of the serialised file (a cut inside a unit)
        var cutUnit = false // btsnooz: the last unit cut inside the compressed section
        for _ in 0..<(1 + below(3, &rng)) {
            let (name, keeps) = mutateOnce(&image, &rng, cut: &cutAt, cutUnit: &cutUnit)
            names.append(name)
            predictable = predictable && keeps
            if cutAt != nil || cutUnit { break }
        }
        var bytes = image.serialized()
        let plain = bytes.count
        var expected: [Rec]? = nil
        if predictable, let per = seed.perUnit {
            var units = image.units
            if let c = cutAt {
                // Records of the units wholly before the cut (a cut inside the header: none).
                var o = image.header.count, whole = 0
                for u in units { if o + u.bytes.count <= c { o += u.bytes.count; whole += 1 } else { break } }
                units = Array(units.prefix(whole))
                bytes = Array(bytes.prefix(c))
            }
            expected = units.flatMap { u in u.id.map { per[$0] } ?? [] }
        } else if let c = cutAt {
            bytes = Array(bytes.prefix(c))
        }
        // A compressed wrapper (the readers then stream): the same records. Not around a bug
        // report's text: only a capture is read through a decompressor.
        if image.format != .btsnooz && below(4, &rng) == 0 {
            let codec = below(4, &rng)
            let wrapped = [Wrap.gzip, Wrap.xz, Wrap.zstd, Wrap.bzip2][codec](bytes)
            if !wrapped.isEmpty {
                bytes = wrapped
                names.append(["gzip", "xz", "zstd", "bzip2"][codec])
                // Damage in the compressed stream: only the no-trap oracles.
                if below(3, &rng) == 0 {
                    if below(2, &rng) == 0 { bytes = Array(bytes.prefix(below(bytes.count, &rng))); names.append("cut-compressed") } else { let i = below(bytes.count, &rng); bytes[i] ^= UInt8(1 + below(255, &rng)); names.append("flip-compressed") }
                    expected = nil
                }
            }
        }
        return Mutant(
            name: names.joined(separator: "+"), bytes: bytes, expected: expected,
            mustWarn: (cutAt != nil || cutUnit) && expected != nil, plain: plain)
    }

    /// Applies one mutation; returns its name and whether the records stay predictable.
    static func mutateOnce(_ im: inout CaptureImage, _ rng: inout SplitMix64, cut: inout Int?, cutUnit: inout Bool) -> (String, Bool) {
        if im.units.isEmpty { return ("nothing-left", true) }
        let records = im.units.indices.filter { im.units[$0].isRecord }
        var options = ["drop", "duplicate", "swap", "truncate-at-record", "cut-inside", "length", "header"]
        if im.format == .pcapng { options += ["flip-byte-order", "bogus-option", "unknown-block", "duplicate-section", "second-interface"] }
        let what = pick(options, &rng)
        switch what {
        case "drop" where !records.isEmpty:
            im.units.remove(at: pick(records, &rng))
        case "duplicate" where !records.isEmpty:
            let i = pick(records, &rng)
            im.units.insert(im.units[i], at: i + 1)
        case "swap" where records.count >= 2:
            let i = pick(records, &rng)
            let same = records.filter { im.units[$0].section == im.units[i].section }
            im.units.swapAt(i, pick(same, &rng))
        case "truncate-at-record":
            im.units = Array(im.units.prefix(below(im.units.count + 1, &rng)))
        case "cut-inside" where im.format == .btsnooz:
            // Inside the zlib stream: the section's records end mid-record.
            let i = below(im.units.count, &rng)
            var u = im.units[i]
            u.bytes = Array(u.bytes.prefix(1 + below(u.bytes.count - 1, &rng)))
            u.id = nil; u.isRecord = false
            im.units = Array(im.units.prefix(i)) + [u]
            cutUnit = true
        case "cut-inside":
            let i = below(im.units.count, &rng)
            let start = im.header.count + im.units[..<i].reduce(0) { $0 + $1.bytes.count }
            cut = start + 1 + below(im.units[i].bytes.count - 1, &rng)
        case "length" where !im.units.isEmpty:
            setLength(&im, below(im.units.count, &rng), &rng)
            return (what, false)
        case "header":
            corruptHeader(&im, &rng)
            return (what, false)
        case "flip-byte-order":
            let s = im.units[below(im.units.count, &rng)].section
            for i in im.units.indices where im.units[i].section == s {
                guard let f = Pcapng.flipped(im.units[i]) else { return ("flip-byte-order-unknown-block", false) }
                im.units[i] = f
            }
        case "bogus-option":
            let candidates = im.units.indices.filter { [0x0A0D_0D0A, 1, 6].contains(im.units[$0].type) }
            guard !candidates.isEmpty else { return ("bogus-option-none", true) }
            let i = pick(candidates, &rng)
            im.units[i] = Pcapng.withOption(im.units[i], code: UInt16(0x7A00 | below(256, &rng)), value: (0..<below(9, &rng)).map { UInt8($0) })
        case "unknown-block" where !im.units.isEmpty:
            let i = 1 + below(im.units.count, &rng)
            let model = im.units[i - 1]
            im.units.insert(Pcapng.block(type: 0x8000_0BAD, body: [UInt8](repeating: 0xAB, count: 4 * below(5, &rng)), like: model), at: i)
        case "duplicate-section":
            let s = im.units[below(im.units.count, &rng)].section
            let next = (im.units.map(\.section).max() ?? 0) + 1
            im.units += im.units.filter { $0.section == s }.map {
                var u = $0; u.section = next; return u
            }
        case "second-interface":
            // A copy of the section's first interface, and some of its packets moved onto it.
            guard let first = im.units.firstIndex(where: { $0.type == 1 }) else { return (what, true) }
            let s = im.units[first].section
            let lastIDB = im.units.lastIndex { $0.type == 1 && $0.section == s }!
            let count = im.units.filter { $0.type == 1 && $0.section == s }.count
            var copy = im.units[first]; copy.id = im.units[first].id
            im.units.insert(copy, at: lastIDB + 1)
            for i in im.units.indices where im.units[i].type == 6 && im.units[i].section == s && i > lastIDB + 1 && below(2, &rng) == 0 {
                // Only packets on the copied interface (id of `first` among the section's IDBs).
                let idOfFirst = im.units[..<first].filter { $0.type == 1 && $0.section == s }.count
                if Pcapng.interfaceID(im.units[i]) == idOfFirst { Pcapng.setInterfaceID(&im.units[i], count) }
            }
        default:
            return (what + "-skipped", true)
        }
        return (what, true)
    }

    static let edgeLengths: [Int] = [0, 1, 3, 4, 8, 11, 12, 15, 16, 23, 24, 0x7FFF, 0xFFFF, 0x10000, 0x7FFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFF0]

    /// Sets one length field of unit `i` to an edge value or ±1/±4 of itself.
    static func setLength(_ im: inout CaptureImage, _ i: Int, _ rng: inout SplitMix64) {
        var u = im.units[i]
        let offsets: [Int]
        switch im.format {
        case .btsnoop: offsets = [0, 4]
        case .pcap: offsets = [8, 12]
        case .pcapng: offsets = [4, u.bytes.count - 4] + (u.type == 6 && u.bytes.count >= 32 ? [20, 24] : [])
        case .packetLogger: offsets = [0]
        case .btsnooz:
            let v = below(2, &rng) == 0 ? 0 : 2
            let n = below(3, &rng) == 0 ? pick(edgeLengths, &rng) : Int(u.bytes[v]) + below(9, &rng) - 4
            u.bytes[v] = UInt8(truncatingIfNeeded: n); u.bytes[v + 1] = UInt8(truncatingIfNeeded: n >> 8)
            im.units[i] = u
            return
        }
        let o = pick(offsets.filter { $0 + 4 <= u.bytes.count }, &rng)
        let little = im.format == .pcapng ? u.little : im.little
        let old = CaptureImage.u32(u.bytes, o, little: little)
        let n = below(2, &rng) == 0 ? pick(edgeLengths, &rng) : old + below(9, &rng) - 4
        u.bytes.replaceSubrange(o..<o + 4, with: CaptureImage.put32(n, little: little))
        im.units[i] = u
    }

    static func corruptHeader(_ im: inout CaptureImage, _ rng: inout SplitMix64) {
        switch im.format {
        case .btsnoop:
            let o = below(2, &rng) == 0 ? 8 : 12
            im.header.replaceSubrange(o..<o + 4, with: CaptureImage.put32(pick([0, 1, 2, 1001, 1002, 1003, 2001, 2002, 0xFFFF_FFFF], &rng), little: false))
        case .pcap:
            let o = pick([4, 16, 20], &rng) // version, snaplen, linktype
            im.header.replaceSubrange(o..<o + 4, with: CaptureImage.put32(pick([0, 1, 187, 201, 251, 256, 272, 0xFFFF, 0xFFFF_FFFF], &rng), little: im.little))
        case .pcapng:
            guard let i = im.units.indices.filter({ im.units[$0].type == 1 }).randomElement(using: &rng) else { return }
            var u = im.units[i]
            let dlt = pick([0, 1, 187, 201, 251, 254, 256, 272, 0xFFFF], &rng)
            u.bytes.replaceSubrange(8..<10, with: u.little ? [UInt8(dlt & 0xFF), UInt8(dlt >> 8)] : [UInt8(dlt >> 8), UInt8(dlt & 0xFF)])
            im.units[i] = Pcapng.withOption(u, code: 9, value: [pick([0, 6, 9, 63, 0x80, 0x8A, 0xFF], &rng)]) // if_tsresol
        case .packetLogger:
            guard !im.units.isEmpty else { return }
            let i = below(im.units.count, &rng)
            if im.units[i].bytes.count > 12 { im.units[i].bytes[12] = pick([0x00, 0x01, 0x02, 0x03, 0xFB, 0xFC, 0xFF], &rng) }
        case .btsnooz:
            im.header[0] = pick([0, 1, 2, 3, 0xFF], &rng)
        }
    }

    // MARK: the campaign

    /// Runs `iterations` mutants spread over the seeds; every failure is handed to `failed`.
    /// `lastInput`, when given, holds each input before it runs (a trap leaves it there).
    public static func campaign(
        seeds: [Seed], iterations: Int, seed: UInt64, pipelineEvery: Int = 8,
        lastInput: String? = nil, failed: (Failure) -> Void
    ) -> Stats {
        var rng = SplitMix64(seed: seed)
        var stats = Stats()
        guard !seeds.isEmpty else { return stats }
        for n in 0..<iterations {
            let s = seeds[n % seeds.count]
            let m = mutate(s, &rng)
            if let p = lastInput { _ = writeFile(p, m.bytes) }
            let t0 = monotonicSeconds()
            let r = read(m.bytes, plain: m.plain, times: s.image.format != .btsnooz, pipeline: n % pipelineEvery == 0 ? StackFuzz.Pipeline() : nil)
            let took = monotonicSeconds() - t0
            stats.inputs += 1; stats.records += r.records.count
            stats.byMutation[m.name.split(separator: "+").first.map(String.init) ?? m.name, default: 0] += 1
            stats.slowest = max(stats.slowest, took)
            func fail(_ why: String) { failed(Failure(seed: s.name, mutation: m.name, message: why, input: m.bytes)) }
            if let c = r.contract { fail("reader contract: \(c)") }
            // 16 KiB inputs: anything near a second is a loop, not work.
            if took > 2 { fail("took \(took) s") }
            if let e = m.expected {
                stats.predictable += 1
                if !r.opened && !e.isEmpty {
                    fail("not opened, \(e.count) records expected")
                } else if r.records != e {
                    let at = Array(zip(r.records, e)).firstIndex { $0.0 != $0.1 } ?? min(r.records.count, e.count)
                    fail("\(r.records.count) records read, \(e.count) expected; first difference at record \(at + 1)")
                }
                if m.mustWarn && r.opened {
                    if r.warnings.isEmpty { fail("cut inside a record, no warning") } else { stats.warned += 1 }
                }
            }
        }
        return stats
    }

    static func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    public static func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let f = fopen(path, "wb") else { return false }
        defer { fclose(f) }
        return bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) } == bytes.count
    }
}

/// pcapng blocks: build, flip byte order, add options, re-point packets (pcapng spec §4).
enum Pcapng {
    static func pad4(_ n: Int) -> Int { (n + 3) & ~3 }

    static func block(type: UInt32, body: [UInt8], like u: CaptureImage.Unit) -> CaptureImage.Unit {
        let n = 12 + body.count
        let b = CaptureImage.put32(Int(type), little: u.little) + CaptureImage.put32(n, little: u.little) + body + CaptureImage.put32(n, little: u.little)
        return CaptureImage.Unit(bytes: b, id: nil, section: u.section, little: u.little, isRecord: false, type: type)
    }

    /// Length of the fixed part of a block's body (before options); nil for unknown types.
    static func fixed(_ u: CaptureImage.Unit) -> Int? {
        switch u.type {
        case 0x0A0D_0D0A: return 16
        case 1: return 8
        case 5: return 12
        case 3: return u.bytes.count - 12 // SPB: no options
        case 2, 6:
            guard u.bytes.count >= 32 else { return nil }
            return 20 + pad4(CaptureImage.u32(u.bytes, 20, little: u.little))
        default: return nil
        }
    }

    /// Fields of the fixed part, as (offset in body, width): what changes with byte order.
    static func fields(_ u: CaptureImage.Unit) -> [(Int, Int)]? {
        switch u.type {
        case 0x0A0D_0D0A: return [(0, 4), (4, 2), (6, 2), (8, 8)]
        case 1: return [(0, 2), (2, 2), (4, 4)]
        case 6: return [(0, 4), (4, 4), (8, 4), (12, 4), (16, 4)]
        case 2: return [(0, 2), (2, 2), (4, 4), (8, 4), (12, 4), (16, 4)]
        case 3: return [(0, 4)]
        case 5: return [(0, 4), (4, 4), (8, 4)]
        default: return nil
        }
    }

    /// Numeric option values that change with byte order: (block type, code) → width.
    static func numericOption(_ type: UInt32, _ code: Int, _ len: Int) -> Bool {
        switch (type, code) {
        case (1, 8), (1, 14): return len == 8 // if_speed, if_tsoffset
        case (6, 2), (6, 6): return len == 4 // epb_flags, epb_queue
        case (6, 4), (6, 5): return len == 8 // epb_dropcount, epb_packetid
        case (5, 2), (5, 3), (5, 4), (5, 5), (5, 6), (5, 7), (5, 8): return len == 8 || len == 4
        default: return false
        }
    }

    /// The block in the other byte order; nil when a part of it is not understood.
    static func flipped(_ u: CaptureImage.Unit) -> CaptureImage.Unit? {
        guard let fixed = fixed(u), let fields = fields(u), 12 + fixed <= u.bytes.count else { return nil }
        var b = u.bytes
        func rev(_ o: Int, _ w: Int) { b.replaceSubrange(o..<o + w, with: b[o..<o + w].reversed()) }
        rev(0, 4); rev(4, 4); rev(b.count - 4, 4)
        for (o, w) in fields where 8 + o + w <= b.count - 4 { rev(8 + o, w) }
        if u.type != 3 {
            var o = 8 + fixed
            while o + 4 <= b.count - 4 {
                let len = u.little ? Int(u.bytes[o + 2]) | Int(u.bytes[o + 3]) << 8 : Int(u.bytes[o + 2]) << 8 | Int(u.bytes[o + 3])
                let c = u.little ? Int(u.bytes[o]) | Int(u.bytes[o + 1]) << 8 : Int(u.bytes[o]) << 8 | Int(u.bytes[o + 1])
                guard o + 4 + len <= b.count - 4 else { return nil }
                rev(o, 2); rev(o + 2, 2)
                if numericOption(u.type, c, len) { rev(o + 4, len) }
                if c == 0 { break }
                o += 4 + pad4(len)
            }
        }
        var f = u
        f.bytes = b
        f.little.toggle()
        return f
    }

    /// The block with one more option, before opt_endofopt (or at the end, then one added).
    static func withOption(_ u: CaptureImage.Unit, code: UInt16, value: [UInt8]) -> CaptureImage.Unit {
        guard let fixed = fixed(u), 8 + fixed <= u.bytes.count - 4, u.type != 3 else { return u }
        func h16(_ v: Int) -> [UInt8] { u.little ? [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] : [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let opt = h16(Int(code)) + h16(value.count) + value + [UInt8](repeating: 0, count: pad4(value.count) - value.count)
        var body = Array(u.bytes[8..<u.bytes.count - 4])
        // Walk the options to find opt_endofopt; a damaged list gets the option at its start.
        var o = fixed, end: Int?
        while o + 4 <= body.count {
            let c = u.little ? Int(body[o]) | Int(body[o + 1]) << 8 : Int(body[o]) << 8 | Int(body[o + 1])
            let len = u.little ? Int(body[o + 2]) | Int(body[o + 3]) << 8 : Int(body[o + 2]) << 8 | Int(body[o + 3])
            if c == 0 { end = o; break }
            if o + 4 + pad4(len) > body.count { break }
            o += 4 + pad4(len)
        }
        if let e = end { body.insert(contentsOf: opt, at: e) } else if o == body.count { body += opt + [0, 0, 0, 0] } else { body.insert(contentsOf: opt, at: fixed) }
        var f = block(type: u.type, body: body, like: u)
        f.id = u.id; f.isRecord = u.isRecord
        return f
    }

    static func interfaceID(_ u: CaptureImage.Unit) -> Int { u.bytes.count >= 12 ? CaptureImage.u32(u.bytes, 8, little: u.little) : -1 }
    static func setInterfaceID(_ u: inout CaptureImage.Unit, _ id: Int) { u.bytes.replaceSubrange(8..<12, with: CaptureImage.put32(id, little: u.little)) }
}

/// Seed variants: the same records in another layout.
extension CaptureImage {
    /// The first units, up to about `bytes` (at least one record).
    public func limited(bytes: Int) -> CaptureImage {
        var out = self, total = 0, n = 0
        for u in units { if total + u.bytes.count > bytes && n > 0 && units[..<n].contains(where: \.isRecord) { break }; total += u.bytes.count; n += 1 }
        out.units = Array(units.prefix(n))
        return out
    }

    /// pcap in the other byte order (header and record headers; the data as it is).
    public func pcapOtherByteOrder() -> CaptureImage {
        guard format == .pcap else { return self }
        var out = self
        func rev(_ b: inout [UInt8], _ o: Int, _ w: Int) { b.replaceSubrange(o..<o + w, with: b[o..<o + w].reversed()) }
        for (o, w) in [(0, 4), (4, 2), (6, 2), (8, 4), (12, 4), (16, 4), (20, 4)] { rev(&out.header, o, w) }
        for i in out.units.indices { for o in [0, 4, 8, 12] { rev(&out.units[i].bytes, o, 4) } }
        out.little.toggle()
        return out
    }

    /// pcapng with section `section` (every section when nil) in the other byte order.
    public func pcapngOtherByteOrder(section: Int? = nil) -> CaptureImage? {
        guard format == .pcapng else { return nil }
        var out = self
        for i in out.units.indices where section == nil || out.units[i].section == section {
            guard let f = Pcapng.flipped(out.units[i]) else { return nil }
            out.units[i] = f
        }
        return out
    }

    /// pcapng followed by a copy of itself as a second section in the other byte order.
    public func pcapngTwoSections() -> CaptureImage? {
        guard let other = pcapngOtherByteOrder() else { return nil }
        var out = self
        out.units += other.units.map {
            var u = $0; u.section += 1; u.id = u.id.map { $0 + units.count }; return u
        }
        return out
    }
}
