import BluesiftWire
import BluesiftSecurity
import Yams

/// Field layouts, cross-checks (cycles, references), rules and examples.
extension PluginCompiler {
    static let fieldKeys: Set<String> = [
        "id", "type", "size", "terminator", "contents", "enum", "bits", "if", "repeat",
        "switch-on", "cases", "hidden", "volatile", "value", "default", "checksum", "doc",
        "scale", "offset", "decimals", "unit", "na", "valid", "compute", "context", "expand",
        "join", "flatten", "decrypt", "encode", "interpolate", "reading", "encoding"
    ]

    static let contextNames: Set<String> = ["_address", "_address_type", "_rssi", "_company", "_pdu", "_rule"]

    mutating func compileFields(_ node: Node, typeName: String) throws(PluginError) -> [FieldDef] {
        var list = node
        if let m = node.mapping {
            try checkKeys(m, ["seq", "doc"], "type '\(typeName)'")
            guard let s = m[k: "seq"] else { throw fail(node, "type '\(typeName)' needs 'seq' (a list of fields)") }
            list = s
        }
        if list.scalar?.string == "" || list.scalar?.string == "~" { return [] }
        guard let seq = list.sequence else { throw fail(list, "type '\(typeName)' must be a list of fields") }
        var out: [FieldDef] = []
        var ids = Set<String>()
        for item in seq {
            let f = try compileField(item)
            // One id may stand several times when each occurrence has a condition (the first
            // whose condition holds is decoded): a scale that depends on a flag.
            let conditional = f.condition != nil && out.allSatisfy { $0.id != f.id || $0.condition != nil }
            if !ids.insert(f.id).inserted && !conditional { throw fail(item, "field '\(f.id)' is defined twice in '\(typeName)'") }
            for b in f.bits where !ids.insert(b.id).inserted { throw fail(item, "bit field '\(b.id)' is defined twice") }
            out.append(f)
        }
        return out
    }

    /// `scale` (a decimal or a ratio, "1/256"), `offset`, `decimals`, `unit`, `na`,
    /// `interpolate`; nil when none is given.
    func numberFormat(_ m: Node.Mapping, _ item: Node) throws(PluginError) -> NumberFormat? {
        guard ["scale", "offset", "decimals", "unit", "na", "interpolate"].contains(where: { m[$0] != nil }) else { return nil }
        var n = NumberFormat()
        var places = 0
        var exact = true
        if let sc = m[k: "scale"] {
            let text = try string(sc, "scale")
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let a = Double(parts[0].filter { $0 != " " }), parts.count == 1 || Double(parts[1].filter { $0 != " " }) != nil,
                a.isFinite
            else { throw fail(sc, "scale must be a number or a ratio such as 1/256") }
            if parts.count == 2 {
                let b = Double(parts[1].filter { $0 != " " })!
                guard b != 0 else { throw fail(sc, "scale divides by zero") }
                n.scale = a / b
                exact = false
            } else {
                n.scale = a
                places = Self.decimalPlaces(String(parts[0]))
            }
        }
        if let o = m[k: "offset"] {
            let text = try string(o, "offset")
            guard let v = Double(text), v.isFinite else { throw fail(o, "offset must be a number") }
            n.offset = v
            places = max(places, Self.decimalPlaces(text))
        }
        if let d = m[k: "decimals"] {
            let v = try integer(d, "decimals")
            guard (0...12).contains(v) else { throw fail(d, "decimals must be 0-12") }
            n.decimals = Int(v)
        } else {
            guard exact else { throw fail(m[k: "scale"], "a ratio scale needs 'decimals' (places to show)") }
            n.decimals = places
        }
        if let u = m[k: "unit"] { n.unit = try string(u, "unit") }
        if let na = m[k: "na"] {
            for x in na.sequence.map(Array.init) ?? [na] { n.na.append(try integer(x, "na")) }
        }
        if let t = m[k: "interpolate"] {
            guard let seq = t.sequence, seq.count >= 2 else { throw fail(t, "interpolate needs a list of at least two [x, y] points") }
            for p in seq {
                guard let xy = p.sequence, xy.count == 2, let x = Double(try string(xy[0], "x")), let y = Double(try string(xy[1], "y")) else {
                    throw fail(p, "an interpolate point is [x, y]")
                }
                if let last = n.interpolate.last, x <= last.0 { throw fail(p, "interpolate points must have increasing x") }
                n.interpolate.append((x, y))
            }
        }
        return n
    }

    /// Places after the point of "0.01" (2), "1e-6" (6), "5" (0).
    static func decimalPlaces(_ text: String) -> Int {
        let t = text.lowercased()
        if let e = t.firstIndex(of: "e") {
            let mant = decimalPlaces(String(t[..<e]))
            let exp = Int(t[t.index(after: e)...]) ?? 0
            return max(0, mant - exp)
        }
        guard let dot = t.firstIndex(of: ".") else { return 0 }
        return t.distance(from: dot, to: t.endIndex) - 1
    }

    func sizeSpec(_ m: Node.Mapping) throws(PluginError) -> SizeSpec? {
        if let t = m[k: "terminator"] {
            let b = try byteList(t, "terminator")
            guard b.count == 1 else { throw fail(t, "terminator must be one byte") }
            return .terminator(b[0])
        }
        guard let s = m[k: "size"] else { return nil }
        let text = try string(s, "size")
        if text == "eos" { return .eos }
        if let v = parseIntegerLiteral(text) {
            guard (0...65536).contains(v) else { throw fail(s, "size \(v) out of range") }
            return .fixed(Int(v))
        }
        return .expr(try expr(s, "size"))
    }

    mutating func compileField(_ item: Node) throws(PluginError) -> FieldDef {
        let m = try mapping(item, "a field")
        try checkKeys(m, Self.fieldKeys, "a field")
        let line = item.mark?.line ?? 0
        let id: String
        if let i = m[k: "id"] {
            id = try string(i, "id")
        } else if m[k: "contents"] != nil {
            id = "_magic\(line)"
        } else {
            throw fail(item, "a field needs 'id'")
        }
        guard !id.isEmpty, id.first.map({ $0.isLetter || $0 == "_" }) == true,
            id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        else {
            throw fail(m[k: "id"] ?? item, "field id '\(id)' must be letters, digits and '_'")
        }
        var f = FieldDef(id: id, line: line, kind: .bytes(.eos))
        let size = try sizeSpec(m)
        if let c = m[k: "contents"] {
            f.kind = .contents(try byteList(c, "contents"))
            f.hidden = true
        } else if let sw = m[k: "switch-on"] {
            let on = try expr(sw, "switch-on")
            guard let casesNode = m[k: "cases"] else { throw fail(item, "switch-on needs 'cases'") }
            var cases: [(Int64, Int)] = []
            var def: Int?
            for (k, v) in try mapping(casesNode, "cases") {
                let t: Int
                if v.mapping != nil {
                    // An inline case: a one-field type named after its field.
                    let inner = try compileField(v)
                    t = types.count
                    types.append(TypeDef(name: inner.id, line: v.mark?.line ?? 0, fields: [inner]))
                } else {
                    let tn = try string(v, "case type")
                    guard let x = typeIndex[tn], tn != "_frame" else { throw fail(v, "unknown type '\(tn)'") }
                    t = x
                }
                if k.scalar?.string == "_" { def = t; continue }
                let key: Int64
                if let ks = k.scalar?.string, let v = parseIntegerLiteral(ks) {
                    key = v
                } else {
                    throw fail(k, "case key must be an integer or '_'")
                }
                cases.append((key, t))
            }
            f.kind = .switchOn(on, cases: cases, default: def, size: size)
        } else if let c = m[k: "context"] {
            let name = try string(c, "context")
            guard Self.contextNames.contains(name) || name == "_name" else {
                throw fail(c, "context must be one of \((Self.contextNames.sorted() + ["_name"]).joined(separator: ", "))")
            }
            f.kind = .context(name)
            if name == "_address" { f.number = nil }
        } else if let c = m[k: "compute"] {
            f.kind = .computed(try expr(c, "compute"))
        } else if let j = m[k: "join"] {
            guard let seq = j.sequence, !seq.isEmpty else { throw fail(j, "join is a list of field ids") }
            var parts: [String] = []
            for x in seq { parts.append(try string(x, "join")) }
            f.kind = .join(parts)
        } else if let tn = m[k: "type"] {
            let t = try string(tn, "type")
            if let k = Self.parseIntType(t, default: endian) {
                f.kind = .integer(k)
            } else if let k = Self.parseOtherType(t, default: endian) {
                f.kind = k
            } else if t == "str" {
                f.kind = .string(size ?? .eos)
            } else if t == "strz" {
                f.kind = .string(.terminator(0))
            } else if t == "bytes" {
                f.kind = .bytes(size ?? .eos)
            } else if let idx = typeIndex[t], t != "_frame" {
                f.kind = .type(idx, size)
            } else {
                throw fail(tn, "unknown type '\(t)' (built-in: u1…u8, s1…s8 with le/be, vlq, str, strz, bytes; or a name under types)")
            }
        } else {
            f.kind = .bytes(size ?? .eos)
        }
        if let c = m[k: "if"] { f.condition = try expr(c, "if") }
        if let r = m[k: "repeat"] {
            f.repeatSpec = r.scalar?.string == "eos" ? .eos : .count(try expr(r, "repeat"))
        }
        if let h = m[k: "hidden"] { f.hidden = try bool(h, "hidden") }
        if let v = m[k: "volatile"] { f.volatile = try bool(v, "volatile") }
        if let v = m[k: "reading"] { f.notReading = !(try bool(v, "reading")) }
        if let v = m[k: "value"] { f.value = try expr(v, "value") }
        if let d = m[k: "default"] {
            let s = try string(d, "default")
            f.defaultValue = parseIntegerLiteral(s).map { .int($0) } ?? .string(s)
        }
        let isInt: Bool
        switch f.kind {
        case .integer, .computed: isInt = true
        case .context(let n): isInt = n != "_name"
        default: isInt = false
        }
        f.number = try numberFormat(m, item)
        // A sentinel written as the bits (0x8000) of a signed field is that field's value.
        if case .integer(.fixed(let size, true, _)) = f.kind, size < 8, var n = f.number {
            let half = Int64(1) << (size * 8 - 1)
            n.na = n.na.map { $0 >= half && $0 < 2 * half ? $0 - 2 * half : $0 }
            f.number = n
        }
        if f.number != nil {
            switch f.kind {
            case .integer, .computed, .real, .context: break
            default: throw fail(item, "scale, offset, unit and na apply to numbers")
            }
            if case .context(let n) = f.kind, n == "_name" || n == "_address" { throw fail(item, "\(n) is not a number") }
        }
        if let v = m[k: "valid"] { f.valid = try expr(v, "valid") }
        if let e = m[k: "encode"] { f.encode = try expr(e, "encode") }
        if let fl = m[k: "flatten"] {
            f.flatten = try bool(fl, "flatten")
            if f.flatten {
                switch f.kind {
                case .type, .switchOn: break
                default: throw fail(fl, "flatten applies to fields of a type")
                }
            }
        }
        if let d = m[k: "decrypt"], let dm = d.mapping {
            // Encrypted in a way no preset opens (AES-ECB with a tag's own key, AES-EAX, AES-GCM):
            // the bytes stay raw and the message says so.
            try checkKeys(dm, ["unsupported"], "decrypt")
            guard let u = dm[k: "unsupported"] else { throw fail(d, "decrypt takes a preset or { unsupported: WHAT }") }
            f.decrypt = "unsupported:" + (try string(u, "unsupported"))
            switch f.kind {
            case .bytes: break
            default: throw fail(d, "decrypt: { unsupported } applies to bytes fields")
            }
        } else if let d = m[k: "decrypt"] {
            let name = try string(d, "decrypt")
            guard Self.decryptPresets.contains(name) else {
                throw fail(d, "unknown decrypt preset '\(name)' (known: \(Self.decryptPresets.sorted().joined(separator: ", ")))")
            }
            guard case .type = f.kind else { throw fail(d, "decrypt needs a type: the plaintext's layout") }
            f.decrypt = name
        }
        if let x = m[k: "encoding"] {
            let name = try string(x, "encoding")
            guard TextEncoding(rawValue: name) != nil else { throw fail(x, "unknown encoding '\(name)' (known: base64, base64url)") }
            guard case .type = f.kind else { throw fail(x, "encoding needs a type: the decoded bytes' layout") }
            guard f.decrypt == nil else { throw fail(x, "a field takes decrypt or encoding, not both") }
            f.encoding = name
        }
        if let x = m[k: "expand"] {
            let name = try string(x, "expand")
            guard let idx = enumIndex[name] else { throw fail(x, "unknown enum '\(name)'") }
            guard case .string = f.kind else { throw fail(x, "expand applies to str fields") }
            f.expand = idx
        }
        if let e = m[k: "enum"] {
            let name = try string(e, "enum")
            guard let idx = enumIndex[name] else { throw fail(e, "unknown enum '\(name)'") }
            guard isInt else { throw fail(e, "enum needs an integer type") }
            f.enumIndex = idx
        }
        if let b = m[k: "bits"] {
            guard isInt, case .integer(.fixed(let size, _, _)) = f.kind else { throw fail(b, "bits need a fixed-size integer type") }
            f.bits = try compileBits(b, totalBits: size * 8)
        }
        if let c = m[k: "checksum"] {
            guard isInt, case .integer(.fixed(let size, _, _)) = f.kind else { throw fail(c, "a checksum needs a fixed-size integer type") }
            let spec = try compileChecksum(c)
            guard spec.algorithm.byteWidth <= size else { throw fail(c, "checksum is wider than its \(size)-byte field") }
            f.checksum = spec
            f.hidden = true
        }
        if f.value != nil { f.hidden = m[k: "hidden"].map { (try? bool($0, "hidden")) ?? true } ?? true }
        return f
    }

    func compileBits(_ n: Node, totalBits: Int) throws(PluginError) -> [BitDef] {
        guard let seq = n.sequence else { throw fail(n, "bits must be a list") }
        var out: [BitDef] = []
        for item in seq {
            let m = try mapping(item, "a bit field")
            try checkKeys(m, ["id", "bit", "bits", "enum", "scale", "offset", "decimals", "unit", "na", "doc"], "a bit field")
            guard let idn = m[k: "id"] else { throw fail(item, "a bit field needs 'id'") }
            var lo = 0, hi = 0
            if let b = m[k: "bit"] {
                lo = Int(try integer(b, "bit")); hi = lo
            } else if let r = m[k: "bits"] {
                let parts = try string(r, "bits").split(separator: "-").map { parseIntegerLiteral(String($0)) }
                guard parts.count == 2, let a = parts[0], let b = parts[1] else { throw fail(r, "bits must look like 4-7") }
                lo = Int(min(a, b)); hi = Int(max(a, b))
            } else {
                throw fail(item, "a bit field needs 'bit' or 'bits'")
            }
            guard lo >= 0, hi < totalBits else { throw fail(item, "bit range \(lo)-\(hi) outside a \(totalBits)-bit field") }
            var e: Int?
            if let en = m[k: "enum"] {
                let name = try string(en, "enum")
                guard let idx = enumIndex[name] else { throw fail(en, "unknown enum '\(name)'") }
                e = idx
            }
            out.append(BitDef(id: try string(idn, "id"), shift: lo, width: hi - lo + 1, enumIndex: e, number: try numberFormat(m, item)))
        }
        return out
    }

    func compileChecksum(_ n: Node) throws(PluginError) -> ChecksumSpec {
        if let s = n.scalar?.string {
            guard let a = ChecksumAlgorithm.named(s) else {
                throw fail(n, "unknown checksum '\(s)' (known: \(ChecksumAlgorithm.names.joined(separator: ", ")))")
            }
            return ChecksumSpec(algorithm: a)
        }
        let m = try mapping(n, "checksum")
        try checkKeys(m, ["algorithm", "from", "to", "width", "poly", "init", "refin", "refout", "xorout"], "checksum")
        guard let an = m[k: "algorithm"] else { throw fail(n, "checksum needs 'algorithm'") }
        let name = try string(an, "algorithm")
        var alg: ChecksumAlgorithm
        if name == "crc" {
            guard let w = m[k: "width"], let p = m[k: "poly"] else { throw fail(n, "a generic crc needs 'width' and 'poly'") }
            let width = Int(try integer(w, "width"))
            guard (3...64).contains(width) else { throw fail(w, "crc width must be 3…64") }
            alg = ChecksumAlgorithm(kind: .crc, width: width, poly: UInt64(bitPattern: try integer(p, "poly")))
        } else {
            guard let a = ChecksumAlgorithm.named(name) else {
                throw fail(an, "unknown checksum '\(name)' (known: \(ChecksumAlgorithm.names.joined(separator: ", ")))")
            }
            alg = a
        }
        if alg.kind == .crc {
            if let v = m[k: "poly"] { alg.poly = UInt64(bitPattern: try integer(v, "poly")) }
            if let v = m[k: "init"] { alg.initial = UInt64(bitPattern: try integer(v, "init")) }
            if let v = m[k: "refin"] { alg.refin = try bool(v, "refin") }
            if let v = m[k: "refout"] { alg.refout = try bool(v, "refout") }
            if let v = m[k: "xorout"] { alg.xorout = UInt64(bitPattern: try integer(v, "xorout")) }
        }
        return ChecksumSpec(
            algorithm: alg, from: try m[k: "from"].map { n throws(PluginError) in try expr(n, "from") },
            to: try m[k: "to"].map { n throws(PluginError) in try expr(n, "to") })
    }

    // MARK: cross-checks

    func usedTypes(_ f: FieldDef) -> [Int] {
        switch f.kind {
        case .type(let t, _): [t]
        case .switchOn(_, let cases, let def, _): cases.map(\.1) + (def.map { [$0] } ?? [])
        default: []
        }
    }

    /// Nested types must form a tree (a DAG): a cycle would recurse forever.
    func checkCycles() throws(PluginError) {
        var state = [UInt8](repeating: 0, count: types.count) // 0 new, 1 on stack, 2 done
        func visit(_ t: Int) throws(PluginError) {
            state[t] = 1
            for f in types[t].fields {
                for u in usedTypes(f) {
                    if state[u] == 1 {
                        throw PluginError(path: path, line: f.line, message: "cycle in nested types: '\(types[t].name)' uses '\(types[u].name)', which contains '\(types[t].name)'")
                    }
                    if state[u] == 0 { try visit(u) }
                }
            }
            state[t] = 2
        }
        for t in types.indices where state[t] == 0 { try visit(t) }
    }

    /// Fields read by a top-level switch are selectors: hidden from the message's fields.
    mutating func markSelectors(frame: Int) throws(PluginError) {
        for f in types[frame].fields {
            guard case .switchOn(let on, _, _, _) = f.kind, case .ref(let name) = on else { continue }
            if let i = types[frame].fields.firstIndex(where: { $0.id == name }) {
                types[frame].fields[i].isSelector = true
                types[frame].fields[i].hidden = true
            }
        }
    }

    static let specials: Set<String> = ["_remaining", "_size", "_offset", "_index", "_address", "_address_type", "_rssi", "_company", "_pdu", "_rule"]

    /// The `decrypt:` presets: the vendor ciphers BluesiftSecurity implements, named there once.
    static let decryptPresets: Set<String> = Set(VendorCipher.allCases.map(\.rawValue))

    /// Advertising context values any expression or field reads.
    func contextUse() -> Set<String> {
        var out = Set<String>()
        for t in types {
            for f in t.fields {
                var exprs: [Expr] = []
                if let c = f.condition { exprs.append(c) }
                if let v = f.valid { exprs.append(v) }
                if case .computed(let e) = f.kind { exprs.append(e) }
                if case .switchOn(let e, _, _, _) = f.kind { exprs.append(e) }
                if case .count(let e) = f.repeatSpec { exprs.append(e) }
                switch f.kind {
                case .bytes(.expr(let e)), .string(.expr(let e)), .type(_, .expr(let e)): exprs.append(e)
                default: break
                }
                for e in exprs { for r in e.references where Self.contextNames.contains(r) { out.insert(r) } }
                if case .context(let n) = f.kind { out.insert(n) }
                if let d = f.decrypt, !d.hasPrefix("unsupported:") { out.insert("_address") }
            }
        }
        return out
    }

    /// `name._length` / `name._count` refer to field `name`.
    static func baseName(_ r: String) -> String {
        if r.hasSuffix("._length") { return String(r.dropLast(8)) }
        if r.hasSuffix("._count") { return String(r.dropLast(7)) }
        return r
    }

    /// Every reference must name an earlier field of the same type or a field of a type that
    /// (transitively) contains it.
    func checkReferences(frame: Int) throws(PluginError) {
        var outer = [Set<String>](repeating: [], count: types.count)
        var order: [Int] = [frame]
        var seen: Set<Int> = [frame]
        var i = 0
        while i < order.count {
            let t = order[i]; i += 1
            var names = outer[t]
            for f in types[t].fields { names.insert(f.id); for b in f.bits { names.insert(b.id) } }
            for f in types[t].fields {
                for u in usedTypes(f) {
                    outer[u].formUnion(names)
                    if seen.insert(u).inserted { order.append(u) }
                }
            }
        }
        // A type reachable through several parents may be visited before all are merged: iterate.
        for _ in 0..<types.count {
            var changed = false
            for t in types.indices {
                var names = outer[t]
                for f in types[t].fields { names.insert(f.id); for b in f.bits { names.insert(b.id) } }
                for f in types[t].fields {
                    for u in usedTypes(f) where !names.isSubset(of: outer[u]) { outer[u].formUnion(names); changed = true }
                }
            }
            if !changed { break }
        }
        // Every field and bit id of the plugin, for expressions evaluated once a type is whole.
        let all = Set(types.flatMap { t in t.fields.flatMap { [$0.id] + $0.bits.map(\.id) } }).union(Self.specials)
        for t in types.indices {
            var visible = outer[t].union(Self.specials)
            for f in types[t].fields {
                var exprs: [(Expr, Bool)] = [] // (expression, may see the field itself)
                if let c = f.condition { exprs.append((c, false)) }
                if case .count(let e) = f.repeatSpec { exprs.append((e, false)) }
                if let v = f.value { exprs.append((v, true)) }
                if case .computed(let e) = f.kind { exprs.append((e, false)) }
                switch f.kind {
                case .bytes(.expr(let e)), .string(.expr(let e)), .type(_, .expr(let e)): exprs.append((e, false))
                case .switchOn(let on, _, _, let size):
                    exprs.append((on, false))
                    if case .expr(let e)? = size { exprs.append((e, false)) }
                default: break
                }
                if let c = f.checksum {
                    if let e = c.from { exprs.append((e, true)) }
                    if let e = c.to { exprs.append((e, true)) }
                }
                // `valid` and `encode` are evaluated once the type is complete: any field of the plugin.
                var late: [Expr] = []
                if let v = f.valid { late.append(v) }
                if let e = f.encode { late.append(e) }
                for e in late {
                    for r in e.references.map(Self.baseName) where !all.contains(r) {
                        throw PluginError(path: path, line: f.line, message: "'\(r)' is not a field of this plugin")
                    }
                }
                if case .join(let parts) = f.kind {
                    for p in parts where !visible.contains(p) {
                        throw PluginError(path: path, line: f.line, message: "join: '\(p)' is not a field defined before '\(f.id)'")
                    }
                }
                for (e, _) in exprs {
                    for r in e.references.map(Self.baseName) where !visible.contains(r) && !(f.value != nil || f.checksum != nil) {
                        throw PluginError(path: path, line: f.line, message: "'\(r)' is not a field defined before '\(f.id)'")
                    }
                    // Computed values and checksum ranges are evaluated once the frame is complete.
                    if f.value != nil || f.checksum != nil {
                        for r in e.references.map(Self.baseName) where !all.contains(r) {
                            throw PluginError(path: path, line: f.line, message: "'\(r)' is not a field of this plugin")
                        }
                    }
                }
                visible.insert(f.id)
                for b in f.bits { visible.insert(b.id) }
            }
        }
    }

    // MARK: rules and examples

    func compileRules(_ n: Node, plugin: Plugin) throws(PluginError) -> [ResponseRule] {
        guard let seq = n.sequence else { throw fail(n, "rules must be a list") }
        var out: [ResponseRule] = []
        let header = Set(types[plugin.frameType].fields.map(\.id))
        for item in seq {
            let m = try mapping(item, "a rule")
            try checkKeys(m, ["request", "response", "match", "within_ms", "messages", "doc"], "a rule")
            func dir(_ key: String, _ def: PluginDirection) throws(PluginError) -> PluginDirection {
                guard let d = m[key] else { return def }
                guard let v = PluginDirection(rawValue: try string(d, key)) else { throw fail(d, "\(key) must be write, notify, indicate or read") }
                return v
            }
            guard let mn = m[k: "match"] else { throw fail(item, "a rule needs 'match'") }
            let e = try expr(mn, "match")
            for r in e.references {
                let parts = r.split(separator: ".", maxSplits: 1).map(String.init)
                guard parts.count == 2, parts[0] == "request" || parts[0] == "response", header.contains(parts[1]) else {
                    throw fail(mn, "'\(r)' must be request.FIELD or response.FIELD with a top-level frame field")
                }
            }
            var names = Set<String>()
            if let ms = m[k: "messages"], let s = ms.sequence { for x in s { names.insert(try string(x, "message")) } }
            let within = try m[k: "within_ms"].map { n throws(PluginError) in try integer(n, "within_ms") } ?? 1000
            out.append(
                ResponseRule(
                    requestDirection: try dir("request", .write), responseDirection: try dir("response", .notify),
                    requests: names, match: e, withinMicroseconds: within * 1000, line: item.mark?.line ?? 0))
        }
        return out
    }

    func exampleValue(_ n: Node) throws(PluginError) -> PluginValue {
        if let seq = n.sequence {
            var l: [PluginValue] = []
            for x in seq { l.append(try exampleValue(x)) }
            return .list(l)
        }
        if let m = n.mapping {
            var fs: [PluginField] = []
            for (k, v) in m { fs.append(PluginField(name: try string(k, "field"), value: try exampleValue(v))) }
            return .object(fs)
        }
        let s = try string(n, "value")
        if n.scalar?.style == .plain, let v = parseIntegerLiteral(s) { return .int(v) }
        if n.scalar?.style == .plain, s == "null" || s == "~" { return .null }
        return .string(s)
    }

    func compileExamples(_ n: Node) throws(PluginError) -> [PluginExample] {
        guard let seq = n.sequence else { throw fail(n, "examples must be a list") }
        var out: [PluginExample] = []
        for item in seq {
            let m = try mapping(item, "an example")
            try checkKeys(
                m,
                [
                    "direction", "hex", "message", "fields", "checksum", "doc", "company", "service_data", "name", "address",
                    "rssi", "key", "mic", "uuids", "also"
                ], "an example")
            guard let h = m[k: "hex"] else { throw fail(item, "an example needs 'hex'") }
            let dir =
                try m[k: "direction"].map { d throws(PluginError) -> PluginDirection in
                    guard let v = PluginDirection(rawValue: try string(d, "direction")) else { throw fail(d, "bad direction") }
                    return v
                } ?? .write
            var fields: [PluginField] = []
            if let f = m[k: "fields"], case .object(let fs) = try exampleValue(f) { fields = fs }
            var verdict: ChecksumVerdict?
            if let c = m[k: "checksum"] {
                guard let v = ChecksumVerdict(rawValue: try string(c, "checksum")) else { throw fail(c, "checksum must be ok or bad") }
                verdict = v
            }
            var ex = PluginExample(
                direction: dir, bytes: try byteList(h, "hex"),
                message: try m[k: "message"].map { n throws(PluginError) in try string(n, "message") },
                fields: fields, checksum: verdict, line: item.mark?.line ?? 0)
            if let c = m[k: "company"] {
                let v = try integer(c, "company")
                guard (0...0xFFFF).contains(v) else { throw fail(c, "company must be 0x0000-0xffff") }
                ex.advertising = .company(UInt16(v))
            } else if let sd = m[k: "service_data"] {
                guard let u = BluetoothUUID(string: try string(sd, "service_data")) else { throw fail(sd, "bad service_data UUID") }
                ex.advertising = .serviceData(u)
            }
            if ex.advertising != nil {
                if m[k: "direction"] != nil { throw fail(m[k: "direction"], "direction does not apply to advertising examples") }
                ex.context.address = 0
                if let a = m[k: "address"] {
                    guard let v = BDAddr(string: try string(a, "address")) else { throw fail(a, "bad address") }
                    ex.context.address = v.value
                }
                if let r = m[k: "rssi"] { ex.context.rssi = try integer(r, "rssi") }
                if let n = m[k: "name"] { ex.context.name = try string(n, "name") }
                if case .company(let c?) = ex.advertising { ex.context.company = Int64(c) }
                if let k = m[k: "key"] { ex.key = try byteList(k, "key") }
                if let an = m[k: "also"] {
                    // The report's other structure: { service_data: fd3d, hex: … } or { company: …, hex: … }.
                    let am = try mapping(an, "also")
                    try checkKeys(am, ["company", "service_data", "hex"], "also")
                    let bytes = try am[k: "hex"].map { h throws(PluginError) in try byteList(h, "hex") } ?? []
                    if let c = am[k: "company"] {
                        let v = UInt16(truncatingIfNeeded: try integer(c, "company"))
                        ex.also = (0xFF, [UInt8(v & 0xFF), UInt8(v >> 8)] + bytes)
                    } else if let sd = am[k: "service_data"], let u = BluetoothUUID(string: try string(sd, "service_data")) {
                        if let v = u.shortValue, v <= 0xFFFF { ex.also = (0x16, [UInt8(v & 0xFF), UInt8(v >> 8)] + bytes) } else { ex.also = (0x21, u.littleEndianBytes + bytes) }
                    } else {
                        throw fail(an, "also names company or service_data")
                    }
                }
                if let us = m[k: "uuids"] {
                    for u in us.sequence.map(Array.init) ?? [us] {
                        guard let v = BluetoothUUID(string: try string(u, "uuids")) else { throw fail(u, "bad UUID in uuids") }
                        ex.serviceUUIDs.append(v)
                    }
                }
                if let mv = m[k: "mic"] {
                    guard let v = MICVerdict(rawValue: try string(mv, "mic")) else { throw fail(mv, "mic must be ok or bad") }
                    ex.mic = v
                }
            } else {
                for k in ["address", "rssi", "name", "key", "mic", "uuids", "also"] where m[k] != nil {
                    throw fail(m[k], "\(k) applies to advertising examples (with company or service_data)")
                }
            }
            out.append(ex)
        }
        return out
    }
}
