import BluesiftWire

extension Plugin {
    /// Builds a frame from field values: `message` picks the top-level switch case (its
    /// selector, e.g. the command byte, follows), `fields` gives the message's fields (the
    /// same names `decode` returns; enum fields take names or numbers). Lengths (`value:`)
    /// and checksums are computed.
    public func encode(message: String, fields: [String: PluginValue]) throws(PluginEncodeError) -> [UInt8] {
        var guesses: [String: Int64] = [:]
        // Variable-length computed fields (vlq) may change the frame size: iterate to a fixed point.
        for _ in 0..<4 {
            let run = EncodeRun(plugin: self, message: message, guesses: guesses)
            let (bytes, computed) = try run.run(fields)
            if computed == guesses || computed.isEmpty { return bytes }
            guesses = computed
        }
        throw PluginEncodeError("computed fields do not settle (length depends on itself)")
    }

    /// Encodes the fields of a decoded message again (round trip).
    public func encode(_ m: DecodedMessage) throws(PluginEncodeError) -> [UInt8] {
        var d: [String: PluginValue] = [:]
        for f in m.fields { d[f.name] = f.value }
        if m.message == "unknown" { for (k, v) in m.header where d[k] == nil { d[k] = .int(v) } }
        return try encode(message: m.message, fields: d)
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

    init(plugin: Plugin, message: String, guesses: [String: Int64]) {
        self.plugin = plugin; self.message = message; self.guesses = guesses
    }

    func fail(_ s: String) -> PluginEncodeError { PluginEncodeError(s) }

    func lookup(_ name: String) -> Int64? {
        switch name {
        case "_size": return Int64(out.count)
        case "_offset": return Int64(out.count)
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
           case .switchOn(let on, let cases, let def, _) = sw.kind {
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
            let v = try eval(c.f.value!)
            values[c.f.id] = v
            header[c.f.id] = v
            if case .integer(.fixed(let size, let signed, let endian)) = c.f.kind {
                try checkRange(v, size: size, signed: signed, c.f.id)
                out.setUInt(UInt64(bitPattern: v), at: c.offset, size: size, endianness: endian)
            } else if vlq(v).count == c.size {
                for (i, b) in vlq(v).enumerated() { out.bytes[c.offset + i] = b }
            }
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
        defer { scopeNames.removeSubrange(mark...); scopeValues.removeSubrange(mark...) }
        for f in plugin.types[t].fields {
            if let c = f.condition, try eval(c) == 0 { continue }
            let start = out.count
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

    func integer(_ v: PluginValue, _ f: FieldDef, enumIndex: Int?) throws(PluginEncodeError) -> Int64 {
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
        case .contents(let magic):
            out.writeBytes(magic)
        case .integer(let k):
            let offset = out.count
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
                        let x = try integer(bv, f, enumIndex: b.enumIndex)
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
            var b = Array(text.utf8)
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
                guard let t = cases.first(where: { plugin.types[$0.1].name == message })?.1
                        ?? def.flatMap({ plugin.types[$0].name == message ? $0 : nil }) else {
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

    func dictionary(_ v: PluginValue?, _ f: FieldDef) throws(PluginEncodeError) -> [String: PluginValue] {
        guard case .object(let fs)? = v else { throw fail("\(f.id): expected an object") }
        var d: [String: PluginValue] = [:]
        for x in fs { d[x.name] = x.value }
        return d
    }
}
