import BluesiftWire

extension Plugin {
    /// Builds a frame from field values: `message` picks the top-level switch case (its
    /// selector, e.g. the command byte, follows), `fields` gives the message's fields (the
    /// same names `decode` returns; enum fields take names or numbers). Lengths (`value:`)
    /// and checksums are computed.
    public func encode(
        message: String, fields: [String: PluginValue], ordered: [PluginField] = [],
        context: AdvertisingContext? = nil, key: [UInt8]? = nil, nullRaws: [String: Int64] = [:]
    ) throws(PluginEncodeError) -> [UInt8] {
        var guesses: [String: Int64] = [:]
        // Variable-length computed fields (vlq) may change the frame size: iterate to a fixed point.
        for _ in 0..<4 {
            let run = EncodeRun(plugin: self, message: message, guesses: guesses)
            run.ordered = ordered.isEmpty ? fields.map { PluginField(name: $0.key, value: $0.value) } : ordered
            run.context = context
            run.key = key
            run.nullRaws = nullRaws
            let (bytes, computed) = try run.run(fields)
            if computed == guesses || computed.isEmpty { return bytes }
            guesses = computed
        }
        throw PluginEncodeError("computed fields do not settle (length depends on itself)")
    }

    /// Encodes the fields of a decoded message again (round trip); hidden header fields
    /// (a packed value that computed fields read) are taken as decoded.
    public func encode(_ m: DecodedMessage, context: AdvertisingContext? = nil, key: [UInt8]? = nil) throws(PluginEncodeError) -> [UInt8] {
        var d: [String: PluginValue] = [:]
        for f in m.fields { d[f.name] = f.value }
        for (k, v) in m.header where d[k] == nil { d[k] = .int(v) }
        return try encode(message: m.message, fields: d, ordered: m.fields, context: context, key: key, nullRaws: m.header)
    }
}

final class EncodeRun {
    let plugin: Plugin
    let message: String
    let guesses: [String: Int64]
    var out = ByteWriter(capacity: 64)
    var scopeNames: [String] = []
    var scopeValues: [Int64] = []
    var header: [String: Int64] = [:]
    var preset: [String: Int64] = [:]
    var computed: [(f: FieldDef, offset: Int, size: Int)] = []
    var checksums: [(f: FieldDef, offset: Int)] = []
    var messageSwitchDone = false
    var lengths: [String: Int64] = [:]
    var counts: [String: Int64] = [:]
    var depth = 0
    /// The given fields in their order (flattened lists are rebuilt from it).
    var ordered: [PluginField] = []
    var context: AdvertisingContext?
    var key: [UInt8]?
    /// Raw values of fields a decode made null through `valid:` (they re-encode as read).
    var nullRaws: [String: Int64] = [:]
    /// Types being encoded, outermost first: their own fields are not flattened items.
    var path: [Int] = []

    init(plugin: Plugin, message: String, guesses: [String: Int64]) {
        self.plugin = plugin; self.message = message; self.guesses = guesses
    }

    func fail(_ s: String) -> PluginEncodeError { PluginEncodeError(s) }

    func lookup(_ name: String) -> Int64? {
        switch name {
        case "_size": return Int64(out.count)
        case "_offset": return Int64(out.count)
        case "_remaining": return 1 << 40 // unknown while building: conditions on it ask isGiven
        case "_rssi", "_address", "_address_type", "_company", "_pdu", "_rule": return context?.value(of: name)
        default:
            var i = scopeNames.count - 1
            while i >= 0 { if scopeNames[i] == name { return scopeValues[i] }; i -= 1 }
            if name.hasSuffix("._length") { return lengths[String(name.dropLast(8))] }
            if name.hasSuffix("._count") { return counts[String(name.dropLast(7))] }
            return header[name]
        }
    }

    func eval(_ e: Expr) throws(PluginEncodeError) -> Int64 {
        do { return try e.evaluate(lookup) } catch { throw fail(error.message) }
    }

    func run(_ fields: [String: PluginValue]) throws(PluginEncodeError) -> ([UInt8], [String: Int64]) {
        // The message picks the selector value of the top-level switch.
        let frame = plugin.types[plugin.frameType]
        if let sw = frame.fields.first(where: { if case .switchOn = $0.kind { true } else { false } }),
            case .switchOn(let on, let cases, let def, _) = sw.kind
        {
            if case .ref(let sel) = on {
                if let c = cases.first(where: { plugin.types[$0.1].name == message }) {
                    preset[sel] = c.0
                } else if message != "unknown" && def.map({ plugin.types[$0].name }) != message {
                    throw fail("\(plugin.id) has no message '\(message)' (known: \(plugin.messageNames.joined(separator: ", ")))")
                }
            }
        }
        try encodeType(plugin.frameType, fields, top: true)
        // Computed values, then checksums (which cover them).
        var values: [String: Int64] = [:]
        scopeNames = []; scopeValues = []
        for c in computed {
            let v = try fill(c)
            values[c.f.id] = v
            header[c.f.id] = v
        }
        for c in checksums {
            guard let spec = c.f.checksum, case .integer(.fixed(let size, _, let endian)) = c.f.kind else { continue }
            let from = try spec.from.map { e throws(PluginEncodeError) in try eval(e) } ?? 0
            let to = try spec.to.map { e throws(PluginEncodeError) in try evalAt(e, c.offset) } ?? Int64(c.offset)
            guard from >= 0, from <= to, to <= Int64(out.count) else { throw fail("checksum range \(from)..<\(to) is outside the frame") }
            let v = out.bytes.withUnsafeBytes { spec.algorithm.compute(UnsafeRawBufferPointer(rebasing: $0[Int(from)..<Int(to)])) }
            out.setUInt(v, at: c.offset, size: size, endianness: endian)
        }
        return (out.bytes, values)
    }

    /// Writes a computed field's value in its place.
    @discardableResult
    func fill(_ c: (f: FieldDef, offset: Int, size: Int)) throws(PluginEncodeError) -> Int64 {
        let v = try eval(c.f.value!)
        if case .integer(.fixed(let size, let signed, let endian)) = c.f.kind {
            try checkRange(v, size: size, signed: signed, c.f.id)
            out.setUInt(UInt64(bitPattern: v), at: c.offset, size: size, endianness: endian)
        } else if vlq(v).count == c.size {
            for (i, b) in vlq(v).enumerated() { out.bytes[c.offset + i] = b }
        }
        return v
    }

    func evalAt(_ e: Expr, _ offset: Int) throws(PluginEncodeError) -> Int64 {
        do {
            return try e.evaluate { n in n == "_offset" ? Int64(offset) : self.lookup(n) }
        } catch { throw fail(error.message) }
    }

    func vlq(_ v: Int64) -> [UInt8] {
        var u = UInt64(bitPattern: v)
        var b: [UInt8] = []
        repeat {
            var x = UInt8(u & 0x7F)
            u >>= 7
            if u != 0 { x |= 0x80 }
            b.append(x)
        } while u != 0
        return b
    }

    func checkRange(_ v: Int64, size: Int, signed: Bool, _ id: String) throws(PluginEncodeError) {
        guard size < 8 else { return }
        let bits = Int64(size * 8)
        let ok = signed ? (v >= -(1 << (bits - 1)) && v < (1 << (bits - 1))) : (v >= 0 && v < (1 << bits))
        if !ok { throw fail("\(id): \(v) does not fit in \(size) byte\(size == 1 ? "" : "s")") }
    }

    func push(_ name: String, _ v: Int64, top: Bool) {
        scopeNames.append(name); scopeValues.append(v)
        if top { header[name] = v }
    }

    func encodeType(_ t: Int, _ fields: [String: PluginValue], top: Bool) throws(PluginEncodeError) {
        depth += 1
        defer { depth -= 1 }
        guard depth <= DecodeRun.maxDepth else { throw fail("types nested too deeply") }
        let mark = scopeNames.count
        path.append(t)
        let computedMark = computed.count
        defer { scopeNames.removeSubrange(mark...); scopeValues.removeSubrange(mark...); path.removeLast() }
        // A nested type's lengths are its own (one per list item): filled when it is whole.
        defer {
            if t != plugin.frameType, computed.count > computedMark {
                let nested = Array(computed[computedMark...])
                computed.removeSubrange(computedMark...)
                for c in nested {
                    if c.f.value!.references.contains("_size") { computed.append(c) } else { _ = try? fill(c) }
                }
            }
        }
        var fields = fields
        splitJoins(t, &fields)
        for f in plugin.types[t].fields {
            if let c = f.condition {
                // What is left of a frame is not known while it is built: a field that only
                // a decode's `_remaining` admits is written when it is given.
                if c.references.contains("_remaining") && !isGiven(f, fields) { continue }
                if try eval(c) == 0 { continue }
                if scopeNames[mark...].contains(f.id) { continue } // a repeated id: the first that holds
            }
            let start = out.count
            if f.flatten, case .none = f.repeatSpec, !f.bits.isEmpty || f.decrypt != nil || f.encoding != nil {
                // bits lifted, or a decrypted layout: handled below with the siblings
            } else if f.flatten, case .none = f.repeatSpec {
                switch f.kind {
                case .type(let it, _): try encodeType(it, fields, top: false)
                case .switchOn: try encodeOne(f, .object(fields.map { PluginField(name: $0.key, value: $0.value) }), fields, top: false)
                default: try encodeOne(f, fields[f.id], fields, top: top)
                }
                lengths[f.id] = Int64(out.count - start)
                continue
            }
            if f.flatten, case .type(let it, _) = f.kind {
                try encodeFlattened(f, it)
                lengths[f.id] = Int64(out.count - start)
                continue
            }
            if let e = f.encoding, case .type(let pt, _) = f.kind {
                try encodeText(e, f, pt, fields)
                lengths[f.id] = Int64(out.count - start)
                continue
            }
            if let preset = f.decrypt, case .type(let pt, _) = f.kind {
                try encodeEncrypted(preset, f, pt, fields)
                lengths[f.id] = Int64(out.count - start)
                continue
            }
            if case .none = f.repeatSpec {
                try encodeOne(f, fields[f.id], fields, top: top)
                lengths[f.id] = Int64(out.count - start)
                continue
            }
            guard case .list(let items) = fields[f.id] ?? .list([]) else { throw fail("\(f.id): expected a list") }
            for item in items { try encodeOne(f, item, fields, top: false) }
            lengths[f.id] = Int64(out.count - start)
            counts[f.id] = Int64(items.count)
        }
    }

    /// The raw integer of a number given as a value (decoded: its raw; typed: unscaled).
    func raw(_ v: PluginValue, _ n: NumberFormat?, _ id: String) throws(PluginEncodeError) -> Int64? {
        if case .null = v, let r = nullRaws[id], n.map({ $0.na.isEmpty || $0.na.contains(r) }) ?? true { return r }
        guard let n else { return nil }
        switch v {
        case .null:
            guard let s = n.na.first else { throw fail("\(id): no 'na' value to write for null") }
            return s
        case .decimal(let raw, _, _): return raw
        case .real(let x):
            guard let r = n.raw(x) else { throw fail("\(id): \(x) cannot be turned back into its raw value") }
            return r
        case .string(let s):
            guard let x = Double(s) else { return nil }
            guard let r = n.raw(x) else { throw fail("\(id): \(x) cannot be turned back into its raw value") }
            return r
        case .int(let x):
            guard let r = n.raw(Double(x)) else { throw fail("\(id): \(x) cannot be turned back into its raw value") }
            return r
        default: return nil
        }
    }

    func integer(_ v: PluginValue, _ f: FieldDef, enumIndex: Int?, number: NumberFormat?? = nil) throws(PluginEncodeError) -> Int64 {
        if let r = try raw(v, number ?? f.number, f.id) { return r }
        if case .string(let s) = v {
            if let e = enumIndex, let x = plugin.enums[e].value(of: s) { return x }
            if let x = parseIntegerLiteral(s) { return x }
            throw fail("\(f.id): '\(s)' is not a number" + (enumIndex.map { " nor a name in enum '\(plugin.enums[$0].name)'" } ?? ""))
        }
        guard let x = v.integer else { throw fail("\(f.id): expected an integer, got \(v)") }
        return x
    }

    func encodeOne(_ f: FieldDef, _ given: PluginValue?, _ siblings: [String: PluginValue], top: Bool) throws(PluginEncodeError) {
        switch f.kind {
        case .context, .join:
            return
        case .computed(let e):
            // No bytes; its value is known to later fields (the given raw, else evaluated).
            var v: Int64?
            if let g = given { v = (try? raw(g, f.number, f.id)) ?? nil; if v == nil { v = g.integer } }
            if v == nil { v = try? eval(e) } // it writes nothing: a value it cannot know is no error
            push(f.id, v ?? 0, top: top)
        case .real(let kind, let endian):
            guard let g = given ?? f.defaultValue else { throw fail("missing field '\(f.id)'") }
            let bits: UInt64
            switch (kind, g) {
            case (_, .null):
                if let s = f.number?.na.first {
                    bits = UInt64(bitPattern: s)
                } else {
                    // NaN: IEEE 11073's own (SFLOAT 0x07FF, FLOAT 0x007FFFFF), IEEE 754's quiet NaN.
                    switch kind {
                    case .sfloat: bits = 0x07FF
                    case .float11073: bits = 0x007F_FFFF
                    case .ieee(2): bits = 0x7E00
                    case .ieee(4): bits = UInt64(Float.nan.bitPattern)
                    case .ieee: bits = Double.nan.bitPattern
                    }
                }
            case (_, .decimal(let raw, _, _)): bits = UInt64(bitPattern: raw)
            default:
                guard let x = g.number ?? { if case .string(let s) = g { Double(s) } else { nil } }() else {
                    throw fail("\(f.id): expected a number, got \(g)")
                }
                switch kind {
                case .ieee(2): bits = UInt64(RealCoding.floatToHalf(Float(x)))
                case .ieee(4): bits = UInt64(Float(x).bitPattern)
                case .ieee: bits = x.bitPattern
                case .sfloat, .float11073:
                    let places = { if case .string(let s) = g { PluginCompiler.decimalPlaces(s) } else { 0 } }()
                    guard let b = RealCoding.encode11073(x, decimals: places, sfloat: kind == .sfloat) else {
                        throw fail("\(f.id): \(x) does not fit")
                    }
                    bits = b
                }
            }
            out.writeUInt(bits, size: kind.size, endianness: endian)
            push(f.id, Int64(bitPattern: bits), top: top)
        case .mac(let endian):
            guard case .string(let text)? = given ?? f.defaultValue, let a = BDAddr(string: text) else {
                throw fail("\(f.id): expected an address such as a4:c1:38:8d:18:b2")
            }
            var b = a.littleEndianBytes
            if endian == .big { b.reverse() }
            out.writeBytes(b)
            push(f.id, Int64(a.value), top: top)
        case .uuid(let endian):
            guard case .string(let text)? = given ?? f.defaultValue, let u = BluetoothUUID(string: text) else {
                throw fail("\(f.id): expected a 128-bit UUID")
            }
            var b = u.littleEndianBytes
            if endian == .big { b.reverse() }
            out.writeBytes(b)
        case .contents(let magic):
            out.writeBytes(magic)
        case .integer(let k):
            let offset = out.count
            var given = given
            if f.flatten, !f.bits.isEmpty {
                // Lifted bits: the decoded raw (undeclared bits kept) with the given bits set.
                let parts = f.bits.compactMap { b in siblings[b.id].map { PluginField(name: b.id, value: $0) } }
                if let raw = given?.integer, !parts.isEmpty {
                    var v = raw
                    for b in f.bits {
                        guard let bv = siblings[b.id] else { continue }
                        let x = try integer(bv, f, enumIndex: b.enumIndex, number: .some(b.number))
                        let mask = ((Int64(1) << Int64(b.width)) - 1) << Int64(b.shift)
                        v = (v & ~mask) | ((x << Int64(b.shift)) & mask)
                    }
                    given = .int(v)
                } else if given == nil, !parts.isEmpty {
                    given = .object(parts)
                }
            }
            var v: Int64
            if f.checksum != nil {
                v = 0
                checksums.append((f, offset))
            } else if f.value != nil {
                v = guesses[f.id] ?? 0
            } else if let p = preset[f.id], given == nil {
                v = p
            } else if let given {
                if !f.bits.isEmpty, case .object = given {
                    v = 0
                    for b in f.bits {
                        guard let bv = given[b.id] else { continue }
                        let x = try integer(bv, f, enumIndex: b.enumIndex, number: .some(b.number))
                        guard x >= 0, x < (1 << Int64(b.width)) else { throw fail("\(b.id): \(x) does not fit in \(b.width) bits") }
                        v |= x << Int64(b.shift)
                    }
                } else {
                    v = try integer(given, f, enumIndex: f.enumIndex)
                }
            } else if let d = f.defaultValue {
                v = try integer(d, f, enumIndex: f.enumIndex)
            } else {
                throw fail("missing field '\(f.id)'")
            }
            switch k {
            case .fixed(let size, let signed, let endian):
                if f.checksum == nil { try checkRange(v, size: size, signed: signed, f.id) }
                out.writeUInt(UInt64(bitPattern: v), size: size, endianness: endian)
            case .vlq:
                out.writeBytes(vlq(v))
            }
            if f.value != nil { computed.append((f, offset, out.count - offset)) }
            push(f.id, v, top: top)
            for b in f.bits { push(b.id, (v >> Int64(b.shift)) & ((1 << Int64(b.width)) - 1), top: false) }
        case .bytes(let s):
            var b: [UInt8]
            switch given ?? f.defaultValue {
            case .bytes(let x)?: b = x
            case .string(let h)?:
                guard let x = Hex.parse(h.hasPrefix("0x") ? String(h.dropFirst(2)) : h) else { throw fail("\(f.id): '\(h)' is not hex") }
                b = x
            case .list(let l)?:
                b = []
                for x in l {
                    guard let i = x.integer, (0...255).contains(i) else { throw fail("\(f.id): \(x) is not a byte") }
                    b.append(UInt8(i))
                }
            case nil: throw fail("missing field '\(f.id)'")
            case let other?: throw fail("\(f.id): expected bytes, got \(other)")
            }
            if case .fixed(let n) = s, b.count != n { throw fail("\(f.id): needs \(n) bytes, got \(b.count)") }
            out.writeBytes(b)
            if case .terminator(let t) = s { out.writeUInt8(t) }
        case .string(let s):
            guard case .string(let text)? = given ?? f.defaultValue else { throw fail("missing string field '\(f.id)'") }
            var b = f.expand.map { compress(text, plugin.enums[$0]) } ?? Array(text.utf8)
            if case .fixed(let n) = s {
                guard b.count <= n else { throw fail("\(f.id): \(b.count) bytes do not fit in \(n)") }
                b += [UInt8](repeating: 0, count: n - b.count)
            }
            out.writeBytes(b)
            if case .terminator(let t) = s { out.writeUInt8(t) }
        case .type(let t, _):
            try encodeType(t, try dictionary(given, f), top: false)
        case .switchOn(let on, let cases, let def, _):
            if top && !messageSwitchDone {
                messageSwitchDone = true
                if message == "unknown" && !cases.contains(where: { plugin.types[$0.1].name == "unknown" }) {
                    guard case .bytes(let p)? = siblings["payload"] else { throw fail("an unknown message needs 'payload' bytes") }
                    out.writeBytes(p)
                    return
                }
                guard
                    let t = cases.first(where: { plugin.types[$0.1].name == message })?.1
                        ?? def.flatMap({ plugin.types[$0].name == message ? $0 : nil })
                else {
                    throw fail("no message '\(message)'")
                }
                try encodeType(t, siblings, top: false)
                return
            }
            let key = try eval(on)
            guard let t = cases.first(where: { $0.0 == key })?.1 ?? def else {
                guard case .bytes(let p)? = given else { throw fail("\(f.id): no case for \(key); give bytes") }
                out.writeBytes(p)
                return
            }
            try encodeType(t, try dictionary(given, f), top: false)
        }
    }

    /// A flattened list rebuilt from the given fields in order: each item is the case whose
    /// field has that name (unit and places telling apart two ids of one name).
    func encodeFlattened(_ f: FieldDef, _ it: Int) throws(PluginEncodeError) {
        let defs = plugin.types[it].fields
        guard let sw = defs.first(where: { if case .switchOn = $0.kind { true } else { false } }),
            case .switchOn(.ref(let sel), let cases, _, _) = sw.kind
        else {
            throw fail("\(f.id): a flattened list needs items that switch on an id")
        }
        // Names that belong to the enclosing types, not to items.
        var claimed = Set<String>(["counter", "unknown_objects"])
        for t in path { for d in plugin.types[t].fields { claimed.insert(d.id); for b in d.bits { claimed.insert(b.id) } } }
        var items = ordered.filter { !claimed.contains($0.name) || $0.name == "unknown_objects" }
        var i = 0
        while i < items.count {
            let given = items[i]
            if given.name == "unknown_objects" {
                guard case .bytes(let b) = given.value else { throw fail("unknown_objects: expected bytes") }
                out.writeBytes(b); i += 1; continue
            }
            // The case whose visible fields match the most given fields in a row, each by
            // name, unit and kind of number (two ids of one name differ there).
            func fits(_ d: FieldDef, _ g: PluginField) -> Bool {
                guard d.id == Self.baseName(g.name, in: cases.map { plugin.types[$0.1] }) else { return false }
                if g.value == .null { return d.number?.na.isEmpty == false || d.valid != nil }
                if d.number?.unit != g.unit { return false }
                let scaled = d.number.map { !$0.isPlain } ?? false
                var raw = g.value.integer
                if case .decimal(let r, let v, let places) = g.value {
                    guard scaled, let n = d.number, n.decimals == places,
                        PluginValue.format(n.value(Double(r)), decimals: places) == PluginValue.format(v, decimals: places)
                    else { return false }
                    raw = r
                } else if scaled {
                    return false
                }
                // The raw value must fit the case's integer (u3 and u4 gas, u1 and s1 count).
                if let x = raw, case .integer(.fixed(let size, let signed, _)) = d.kind, size < 8 {
                    let bits = Int64(size * 8)
                    return signed ? (x >= -(1 << (bits - 1)) && x < (1 << (bits - 1))) : (x >= 0 && x < (1 << bits))
                }
                return true
            }
            var best: (Int64, Int, Int)?
            for c in cases {
                if let o = given.origin, c.0 != o { continue }
                let fs = plugin.types[c.1].fields.filter { !$0.hidden }
                guard !fs.isEmpty, i + fs.count <= items.count else { continue }
                guard zip(fs, items[i..<i + fs.count]).allSatisfy({ fits($0, $1) }) else { continue }
                if best == nil || fs.count > best!.2 { best = (c.0, c.1, fs.count) }
            }
            guard let (key, t, _) = best else { throw fail("\(given.name): no object of \(f.id) has this field") }
            let caseFields = plugin.types[t].fields.filter { !$0.hidden }
            var inner: [PluginField] = []
            for cf in caseFields where i < items.count {
                guard Self.baseName(items[i].name, in: [plugin.types[t]]) == cf.id else { break }
                inner.append(PluginField(name: cf.id, value: items[i].value, unit: items[i].unit))
                i += 1
            }
            if inner.isEmpty { i += 1 }
            items[0..<0] = []
            var d: [String: PluginValue] = [sel: .int(key), sw.id: .object(inner)]
            for x in defs where x.id != sel && x.id != sw.id { if d[x.id] == nil, let v = x.defaultValue { d[x.id] = v } }
            try encodeType(it, d, top: false)
        }
    }

    /// An expanded string's bytes: at each place the longest label becomes its code, as
    /// Eddystone encoders compress URLs; other characters are written as they are.
    func compress(_ text: String, _ table: EnumDef) -> [UInt8] {
        let labels = table.values.filter { (0...255).contains($0.0) && !$0.1.isEmpty }.sorted { $0.1.utf8.count > $1.1.utf8.count }
        var out: [UInt8] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            if let (code, label) = labels.first(where: { rest.hasPrefix($0.1) }) {
                out.append(UInt8(code)); rest = rest.dropFirst(label.count)
            } else {
                out.append(contentsOf: Array(String(rest.first!).utf8)); rest = rest.dropFirst()
            }
        }
        return out
    }

    /// A field whose presence a `_remaining` condition decides: given (itself, its bits, or
    /// for a list or nested type, its name), or one that writes no bytes.
    func isGiven(_ f: FieldDef, _ fields: [String: PluginValue]) -> Bool {
        if fields[f.id] != nil { return true }
        if f.bits.contains(where: { fields[$0.id] != nil }) { return true }
        switch f.kind {
        case .computed, .context, .join: return true
        case .type(let t, _):
            return f.flatten && plugin.types[t].fields.contains { fields[$0.id] != nil }
        case .switchOn(_, let cases, _, _):
            return f.flatten && cases.contains { c in plugin.types[c.1].fields.contains { fields[$0.id] != nil } }
        default: return false
        }
    }

    /// A joined string given whole (Eddystone's URL) is split back into its parts: an enum
    /// part takes the longest label the text starts with, the last part takes the rest.
    func splitJoins(_ t: Int, _ fields: inout [String: PluginValue]) {
        for f in plugin.types[t].fields {
            guard case .join(let parts) = f.kind, case .string(var text)? = fields[f.id] else { continue }
            guard parts.contains(where: { fields[$0] == nil }) else { continue }
            for (k, p) in parts.enumerated() {
                guard let d = plugin.types[t].fields.first(where: { $0.id == p }) else { break }
                if k == parts.count - 1 { fields[p] = .string(text); break }
                guard let e = d.enumIndex else { break }
                let best = plugin.enums[e].values.filter { text.hasPrefix($0.1) }.max { $0.1.count < $1.1.count }
                guard let (v, label) = best else { break }
                fields[p] = .int(v)
                text.removeFirst(label.count)
            }
        }
    }

    /// "button_2" → "button" when only the base name is a field.
    static func baseName(_ name: String, in types: [TypeDef]) -> String {
        if types.contains(where: { $0.fields.contains { $0.id == name } }) { return name }
        if let u = name.lastIndex(of: "_"), Int(name[name.index(after: u)...]) != nil { return String(name[..<u]) }
        return name
    }

    /// An encrypted field: its plaintext type encoded from the given fields, then sealed with
    /// the example's key and the given counter.
    func encodeEncrypted(_ preset: String, _ f: FieldDef, _ t: Int, _ fields: [String: PluginValue]) throws(PluginEncodeError) {
        let keyInFrame = Self.keyInFrame(preset)
        guard keyInFrame || (key != nil && context?.address != nil) else { throw fail("\(f.id): encrypting needs a key and the advertiser's address") }
        let key = key ?? [], address = context?.address ?? 0
        let saved = out
        out = ByteWriter(capacity: 32)
        try encodeType(t, fields, top: false)
        let plaintext = out.bytes
        out = saved
        let counter = UInt32(truncatingIfNeeded: fields["counter"]?.integer ?? 0)
        out.writeBytes(try sealField(preset, key: key, address: address, header: out.bytes, plaintext: plaintext, counter: counter))
    }

    func dictionary(_ v: PluginValue?, _ f: FieldDef) throws(PluginEncodeError) -> [String: PluginValue] {
        guard case .object(let fs)? = v else { throw fail("\(f.id): expected an object") }
        var d: [String: PluginValue] = [:]
        for x in fs { d[x.name] = x.value }
        return d
    }
}
