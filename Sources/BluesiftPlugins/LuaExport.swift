import BluesiftWire
import BluesiftProtocols

/// A plugin as a Wireshark Lua dissector (Wireshark ≥ 3.6, Lua 5.2's `bit32`): the compiled
/// model is translated, not interpreted, so the dissector reads the same bytes the same way
/// `Plugin.decode` does — messages by the first top-level switch, nested types as subtrees,
/// checksum verdicts as expert info, reassembly with state keyed by frame number.
/// What Lua cannot express the same way fails with `FILE:LINE: cannot export …`.
extension Plugin {
    public func wiresharkLua(generator: String = "bluesift") throws(PluginError) -> String {
        var g = LuaGen(plugin: self)
        return try g.generate(generator: generator)
    }
}

struct LuaGen {
    let plugin: Plugin
    var fieldDecls: [String] = []
    /// abbrev → (declaration, index, line) so a path reached twice reuses one field.
    var fieldIndex: [String: (decl: String, index: Int, line: Int)] = [:]
    var functions: [String] = []
    /// (type, prefix) → function index.
    var functionIndex: [String: Int] = [:]
    var checksumAlgorithms: [String] = []
    /// abbrev → the declaration's parts (for merging numbers of advertising objects).
    var fieldSpec: [String: FieldSpec] = [:]
    /// Names of several enums, shown as text (their Lua table `STRF`).
    var enumText: Set<String> = []
    typealias FieldSpec = (ctor: String, label: String, extra: String)
    /// Number formats (scale, unit, sentinels) by index, as the Lua table `NF`.
    var numberFormats: [String] = []
    /// String expansion tables (`expand:`), as the Lua table `EXP`.
    var expansions: [Int: Int] = [:]
    /// Notes for the file header: what the export shows differently or not at all.
    var notes: [String] = []
    let advertising: Bool

    init(plugin: Plugin) {
        self.plugin = plugin
        advertising = plugin.matches.contains { $0.advertising != nil }
    }

    /// One numeric type for two declarations of a name: a double when either is one, else
    /// the narrowest integer holding both (value strings must agree); labels lose the unit
    /// when the units differ. nil: not both numbers.
    static func mergeNumeric(_ a: FieldSpec, _ b: FieldSpec) -> FieldSpec? {
        func int(_ c: String) -> (signed: Bool, bits: Int)? {
            if c.hasPrefix("uint"), let n = Int(c.dropFirst(4)) { return (false, n) }
            if c.hasPrefix("int"), let n = Int(c.dropFirst(3)) { return (true, n) }
            return nil
        }
        let label = a.label == b.label ? a.label : String(a.label.prefix { $0 != " " })
        let x = int(a.ctor), y = int(b.ctor)
        if (x != nil || a.ctor == "double") && (y != nil || b.ctor == "double") && (x == nil || y == nil) {
            return ("double", label, "")
        }
        // Two enums (or an enum and a plain integer) on one name (Oral-B's `mode` by model):
        // a string field, each item its own label, or its number as bluesift shows it.
        if a.ctor == "string", a.label == "\u{1}" + label || a.label.hasPrefix("\u{1}"), y != nil { return a }
        guard let x, let y else { return nil }
        if a.extra != b.extra && (a.extra.contains("{") || b.extra.contains("{")) { return ("string", "\u{1}" + label, "") }
        let signed = x.signed || y.signed
        let need = max(x.bits + (signed && !x.signed ? 1 : 0), y.bits + (signed && !y.signed ? 1 : 0))
        let bits = [8, 16, 24, 32, 64].first { $0 >= need } ?? 64
        return ((signed ? "int" : "uint") + String(bits), label, bits == 64 ? ", base.DEC" : a.extra)
    }

    var proto: String { plugin.id }

    func cannot(_ line: Int, _ what: String) -> PluginError {
        PluginError(path: plugin.path, line: line, message: "cannot export to Wireshark Lua: \(what)")
    }

    static func luaString(_ s: String) -> String {
        var o = "\""
        for b in s.utf8 {
            switch b {
            case 0x22: o += "\\\""
            case 0x5C: o += "\\\\"
            case 0x20..<0x7F: o.unicodeScalars.append(Unicode.Scalar(b))
            default: o += "\\" + String(b)
            }
        }
        return o + "\""
    }

    static func luaBytes(_ b: [UInt8]) -> String { "\"" + b.map { "\\" + String($0) }.joined() + "\"" }

    // MARK: fields

    /// Declares (or reuses) a ProtoField; returns its Lua reference `H[n]`.
    mutating func field(_ abbrev: String, _ label: String, _ ctor: String, extra: String = "", line: Int) throws(PluginError) -> String {
        let decl = "ProtoField.\(ctor)(\(Self.luaString(abbrev)), \(Self.luaString(label))\(extra))"
        if let e = fieldIndex[abbrev], e.index <= 4, e.decl != decl, let old = fieldSpec[abbrev] {
            // A plugin field named like a fixed one (Govee's `error` bit): the fixed one moves
            // to PROTO._NAME, the plugin's keeps the name bluesift shows.
            let moved = proto + "._" + abbrev.dropFirst(proto.count + 1)
            fieldDecls[e.index - 1] = "ProtoField.\(old.ctor)(\(Self.luaString(moved)), \(Self.luaString(old.label))\(old.extra))"
            fieldIndex[abbrev] = nil
            fieldIndex[moved] = (fieldDecls[e.index - 1], e.index, 0)
            fieldSpec[moved] = old
            notes.append("The plugin has a field '\(abbrev.dropFirst(proto.count + 1))': the exporter's own \(abbrev) is \(moved).")
        }
        if let e = fieldIndex[abbrev] {
            if e.decl == decl { return "H[\(e.index)]" }
            // Advertising objects give one name several layouts (BTHome's `count` is u1, u2
            // or u4; `mass` in kg or lb): numbers widen to one type, the unit goes to each item.
            guard advertising, let old = fieldSpec[abbrev] else {
                throw cannot(line, "field '\(abbrev)' is declared twice with different types (line \(e.line) and line \(line)); Wireshark needs one type per field name")
            }
            guard let m = Self.mergeNumeric(old, (ctor, label, extra)) else {
                // Not two numbers (Apple's auth_tag: a byte in one message, 3 bytes in another):
                // this occurrence gets a name of its own, said in the header.
                let alt = abbrev + "_" + ctor
                let note = "'\(abbrev.dropFirst(proto.count + 1))' has two types: the \(ctor) one is \(alt.dropFirst(proto.count + 1))."
                if !notes.contains(note) { notes.append(note) }
                return try field(alt, label, ctor, extra: extra, line: line)
            }
            // A label starting with \u{1} marks enums merged into a string (STRF at run time).
            if m.ctor == "string", m.label.hasPrefix("\u{1}") { enumText.insert(abbrev) }
            let merged = "ProtoField.\(m.ctor)(\(Self.luaString(abbrev)), \(Self.luaString(String(m.label.drop { $0 == "\u{1}" })))\(m.extra))"
            fieldDecls[e.index - 1] = merged
            fieldIndex[abbrev] = (merged, e.index, e.line)
            fieldSpec[abbrev] = m
            return "H[\(e.index)]"
        }
        fieldSpec[abbrev] = (ctor, label, extra)
        fieldDecls.append(decl)
        fieldIndex[abbrev] = (decl, fieldDecls.count, line)
        return "H[\(fieldDecls.count)]"
    }

    func valueString(_ e: Int?) -> String {
        guard let e else { return "nil" }
        return "{" + plugin.enums[e].values.map { "[\($0.0)]=\(Self.luaString($0.1))" }.joined(separator: ", ") + "}"
    }

    mutating func intField(_ abbrev: String, _ label: String, _ k: IntKind, enumIndex: Int?, line: Int) throws(PluginError) -> String {
        switch k {
        case .vlq:
            if enumIndex != nil { throw cannot(line, "an enum on a variable-length integer (Lua value strings are 32-bit)") }
            return try field(abbrev, label, "uint64", extra: ", base.DEC", line: line)
        case .fixed(let size, let signed, _):
            let bits = size == 1 ? 8 : size == 2 ? 16 : size == 3 ? 24 : size == 4 ? 32 : 64
            if bits == 64, enumIndex != nil { throw cannot(line, "an enum on a \(size)-byte integer (Lua value strings are 32-bit)") }
            return try field(abbrev, label, (signed ? "int" : "uint") + String(bits), extra: ", base.DEC, \(valueString(enumIndex))", line: line)
        }
    }

    // MARK: expressions

    func expr(_ e: Expr) -> String {
        switch e {
        case .literal(let v): return "(\(v))"
        case .ref(let n): return "X.look(r, \(Self.luaString(n)))"
        case .unary(let op, let a):
            let x = expr(a)
            switch op {
            case .neg: return "(-\(x))"
            case .not: return "((\(x) == 0) and 1 or 0)"
            case .inv: return "X.bnot(\(x))"
            }
        case .binary(let op, let a, let b):
            let x = expr(a), y = expr(b), d = Self.luaString(e.description)
            switch op {
            case .add: return "(\(x) + \(y))"
            case .sub: return "(\(x) - \(y))"
            case .mul: return "(\(x) * \(y))"
            case .div: return "X.div(\(x), \(y), \(d))"
            case .mod: return "X.mod(\(x), \(y), \(d))"
            case .and: return "X.band(\(x), \(y))"
            case .or: return "X.bor(\(x), \(y))"
            case .xor: return "X.bxor(\(x), \(y))"
            case .shl: return "X.shl(\(x), \(y), \(d))"
            case .shr: return "X.shr(\(x), \(y), \(d))"
            case .eq: return "((\(x) == \(y)) and 1 or 0)"
            case .ne: return "((\(x) ~= \(y)) and 1 or 0)"
            case .lt: return "((\(x) < \(y)) and 1 or 0)"
            case .le: return "((\(x) <= \(y)) and 1 or 0)"
            case .gt: return "((\(x) > \(y)) and 1 or 0)"
            case .ge: return "((\(x) >= \(y)) and 1 or 0)"
            case .land: return "((\(x) ~= 0) and ((\(y) ~= 0) and 1 or 0) or 0)"
            case .lor: return "((\(x) ~= 0) and 1 or ((\(y) ~= 0) and 1 or 0))"
            }
        }
    }

    /// Lua expression giving the byte count of a sized value (checked against what is left).
    func size(_ s: SizeSpec, _ id: String) -> (code: String, terminated: Bool) {
        switch s {
        case .fixed(let n): return ("X.sized(r, \(n), \(Self.luaString(id)))", false)
        case .expr(let e): return ("X.sized(r, \(expr(e)), \(Self.luaString(id)))", false)
        case .eos: return ("(r.stop - r.pos)", false)
        case .terminator(let b): return ("X.term(r, \(b), \(Self.luaString(id)))", true)
        }
    }

    // MARK: types

    static func path(_ prefix: String, _ id: String) -> String {
        prefix + "." + (id.hasPrefix("_magic") ? "magic" : id)
    }

    /// The function decoding type `t` whose fields are named under `prefix`.
    /// `flat`: the type is an item of a flattened list, whose fields (and its switch's case
    /// fields) are named as fields of the enclosing message, as bluesift lifts them.
    mutating func typeFunction(_ t: Int, prefix: String, top: Bool, flat: Bool = false) throws(PluginError) -> String {
        let key = "\(t) \(prefix) \(top) \(flat)"
        if let i = functionIndex[key] { return "T[\(i)]" }
        functions.append("")
        let index = functions.count
        functionIndex[key] = index
        var body = "T[\(index)] = function(r, tree) -- \(plugin.types[t].name) (line \(plugin.types[t].line))\n"
        body += "  r.depth = r.depth + 1\n  if r.depth > 16 then X.fail(\"types nested deeper than 16\") end\n  local mark, dmark = r.n, #r.deferred\n"
        for f in plugin.types[t].fields {
            body += try fieldCode(f, prefix: prefix, top: top, isFirstTopSwitch: top && isFirstSwitch(f, in: t), flat: flat)
        }
        // `valid:` is judged once the type is whole (it may name later fields).
        body += "  X.flush(r, dmark)\n  r.n = mark\n  r.depth = r.depth - 1\nend\n"
        functions[index - 1] = body
        return "T[\(index)]"
    }

    func isFirstSwitch(_ f: FieldDef, in t: Int) -> Bool {
        let first = plugin.types[t].fields.first { if case .switchOn = $0.kind { true } else { false } }
        return first?.id == f.id && first?.line == f.line
    }

    mutating func fieldCode(_ f: FieldDef, prefix: String, top: Bool, isFirstTopSwitch: Bool, flat: Bool = false) throws(PluginError) -> String {
        var c = "  -- \(f.id) (line \(f.line))\n"
        c += f.condition.map { "  if \(expr($0)) ~= 0 then\n" } ?? "  do\n"
        c += "  local start = r.pos\n"
        let id = Self.luaString(f.id)
        switch f.repeatSpec {
        case .none:
            if isFirstTopSwitch, f.condition != nil {
                throw cannot(f.line, "the message switch '\(f.id)' has an 'if' (the message would depend on it)")
            }
            c += try one(f, prefix: prefix, top: top, message: isFirstTopSwitch, flat: flat)
        case .count(let e):
            c += "  local count = \(expr(e))\n"
            c += "  if count < 0 or count > 65536 then X.fail(\(Self.luaString(f.id + ": repeat count ")) .. count .. \" out of range\") end\n"
            c += "  for i = 0, count - 1 do\n  r.index = i\n"
            c += try one(f, prefix: prefix, top: false, message: false, flat: flat)
            c += "  end\n  r.counts[\(id)] = count\n"
        case .eos:
            c += "  local i = 0\n  while r.pos < r.stop do\n  r.index = i; i = i + 1\n  local before = r.pos\n"
            c += try one(f, prefix: prefix, top: false, message: false, flat: flat)
            c += "  if r.pos == before then break end\n  end\n  r.counts[\(id)] = i\n"
        }
        c += "  r.lengths[\(id)] = r.pos - start\n  end\n"
        return c
    }

    /// One element of a field: reads it, adds it to `tree`, pushes integers into scope.
    mutating func one(_ f: FieldDef, prefix: String, top: Bool, message: Bool, flat: Bool = false) throws(PluginError) -> String {
        let abbrev = Self.path(prefix, f.id)
        let label = f.id.hasPrefix("_magic") ? "magic" : f.id
        let id = Self.luaString(f.id)
        var c = "  X.element(r)\n"
        let nf = numberFormat(f.number, label: label, valid: f.valid != nil)
        let valid = f.valid.map { "function(r) return \(expr($0)) end" } ?? "nil"
        let unitLabel = Self.label(label, f.number?.unit)
        switch f.kind {
        case .integer(let k) where f.number.map({ !$0.isPlain }) == true && f.bits.isEmpty && f.enumIndex == nil:
            // A scaled number: a double with its decimals and unit; the raw integer is in scope.
            let hf = try field(abbrev, unitLabel, "double", line: f.line)
            guard case .fixed(let size, let signed, let endian) = k else { throw cannot(f.line, "scale on a variable-length integer") }
            c += "  local at = r.pos\n  local v = X.read(r, \(size), \(signed), \(endian == .little), \(id))\n  X.push(r, \(id), v)\n"
            if top { c += "  r.header[\(id)] = v\n" }
            c += "  X.num(r, tree, \(hf), X.rng(r, at, \(size)), v, v, \(nf), \(valid))\n"
        case .integer(let k):
            let hf = try intField(abbrev, unitLabel, k, enumIndex: f.bits.isEmpty ? f.enumIndex : nil, line: f.line)
            // An integer field holds the raw value (its bits or enum name are what bluesift shows).
            let nf =
                f.number.map { n in
                    var x = n; x.scale = 1; x.offset = 0; x.interpolate = []; return x
                }
                .map { numberFormat($0, label: label, valid: f.valid != nil) } ?? nf
            c += "  local at = r.pos\n"
            switch k {
            case .vlq: c += "  local v, item = X.vlq(r, tree, \(hf), \(id))\n"
            case .fixed(let size, let signed, let endian):
                let vs = advertising && f.bits.isEmpty ? f.enumIndex.map { valueString($0) } ?? "nil" : "nil"
                c += "  local v, item = X.int(r, tree, \(hf), \(size), \(signed), \(endian == .little), \(id), \(nf), \(valid), \(vs))\n"
            }
            c += "  X.push(r, \(id), v)\n"
            if plugin.joins, let e = f.enumIndex { c += "  r.joined[\(id)] = (\(valueString(e)))[v]\n" }
            if top { c += "  r.header[\(id)] = v\n" }
            if let cs = f.checksum {
                let alg = try checksum(cs.algorithm, line: f.line)
                let from = cs.from.map { "function(r) return \(expr($0)) end" } ?? "nil"
                let to = cs.to.map { "function(r) return \(expr($0)) end" } ?? "nil"
                c += "  r.sums[#r.sums + 1] = {alg = \(alg), from = \(from), to = \(to), offset = at, found = v, item = item}\n"
            }
            for b in f.bits {
                let bits = b.width <= 8 ? 8 : b.width <= 16 ? 16 : b.width <= 32 ? 32 : 64
                if bits == 64, b.enumIndex != nil { throw cannot(f.line, "an enum on a bit field wider than 32 bits") }
                // Advertising plugins lift bit fields into the message (`battery`, not `status.battery`).
                let babbrev = f.flatten ? Self.path(prefix, b.id) : abbrev + "." + b.id
                let blabel = Self.label(b.id, b.number?.unit)
                let scaled = b.number.map { !$0.isPlain } == true && b.enumIndex == nil
                let bhf =
                    scaled
                    ? try field(babbrev, blabel, "double", line: f.line)
                    : try field(babbrev, blabel, "uint\(bits)", extra: ", base.DEC, \(valueString(b.enumIndex))", line: f.line)
                let bnf = numberFormat(b.number, label: b.id, valid: false)
                c += "  do local x = X.bits(v, \(b.shift), \(b.width)); X.push(r, \(Self.luaString(b.id)), x); X.num(r, item or tree, \(bhf), X.rng(r, at, r.pos - at), x, x, \(bnf), nil) end\n"
            }
        case .real(let kind, let endian):
            let hf = try field(abbrev, unitLabel, "double", line: f.line)
            let code: String
            switch kind {
            case .ieee(let w): code = "\"f\(w)\""
            case .sfloat: code = "\"sfloat\""
            case .float11073: code = "\"float\""
            }
            let rnf = nf == "nil" ? numberFormat(NumberFormat(), label: label, valid: true) : nf
            c += "  local at = r.pos\n  local v, bits = X.real(r, \(code), \(kind.size), \(endian == .little), \(id), \(rnf))\n  X.push(r, \(id), bits)\n"
            c += "  X.num(r, tree, \(hf), X.rng(r, at, \(kind.size)), v, v, \(rnf), \(valid))\n"
        case .mac(let endian):
            let hf = try field(abbrev, label, "string", line: f.line)
            c += "  local v = X.mac(r, tree, \(hf), \(endian == .little), \(id))\n  X.push(r, \(id), v)\n"
        case .uuid(let endian):
            let hf = try field(abbrev, label, "string", line: f.line)
            c += "  X.uuid(r, tree, \(hf), \(endian == .little), \(id))\n"
        case .context(let name):
            // A value of the advertising report: generated items, no bytes.
            if name == "_name" || name == "_address" {
                let hf = try field(abbrev, label, "string", line: f.line)
                c += "  X.ctxtext(r, tree, \(hf), \(Self.luaString(name)), \(Self.luaString(label)), \(id))\n"
            } else {
                let scaled = f.number.map { !$0.isPlain } == true
                let hf =
                    scaled
                    ? try field(abbrev, unitLabel, "double", line: f.line)
                    : try field(abbrev, unitLabel, "int32", extra: ", base.DEC, nil", line: f.line)
                let cnf = nf == "nil" ? numberFormat(NumberFormat(), label: label, valid: true) : nf
                c += "  local v = X.ctx(r, \(Self.luaString(name)))\n  if v ~= nil then X.push(r, \(id), v) end\n"
                c += "  X.num(r, tree, \(hf), X.rng(r, r.pos, 0), v, v, \(cnf), \(valid), true)\n"
            }
        case .computed(let e):
            let hf: String
            if let en = f.enumIndex {
                hf = try field(abbrev, unitLabel, "int32", extra: ", base.DEC, \(valueString(en))", line: f.line)
            } else if f.number.map({ !$0.isPlain }) == true {
                hf = try field(abbrev, unitLabel, "double", line: f.line)
            } else {
                hf = try field(abbrev, unitLabel, "int64", extra: ", base.DEC, nil", line: f.line)
            }
            c += "  local v = \(expr(e))\n  X.push(r, \(id), v)\n"
            if top { c += "  r.header[\(id)] = v\n" }
            if plugin.joins, let e = f.enumIndex { c += "  r.joined[\(id)] = (\(valueString(e)))[v]\n" }
            c += "  X.num(r, tree, \(hf), X.rng(r, r.pos, 0), v, v, \(nf), \(valid), true)\n"
        case .join(let parts):
            let hf = try field(abbrev, label, "string", line: f.line)
            let cat = parts.map { "(r.joined[\(Self.luaString($0))] or \"\")" }.joined(separator: " .. ")
            c += "  local s = \(parts.isEmpty ? "\"\"" : cat)\n  r.joined[\(id)] = s\n  tree:add(\(hf), X.rng(r, r.pos, 0), s):set_generated()\n"
        case .contents(let magic):
            let hf = try field(abbrev, label, "bytes", line: f.line)
            c += "  X.magic(r, tree, \(hf), \(Self.luaBytes(magic)), \(id))\n"
        case .bytes(let s):
            let hf = try field(abbrev, label, "bytes", line: f.line)
            let (n, term) = size(s, f.id)
            // `decrypt: { unsupported: WHAT }`: raw, with bluesift's reason.
            let why = f.decrypt.flatMap { $0.hasPrefix("unsupported:") ? ":append_text(\(Self.luaString(" (raw: unsupported encryption: " + $0.dropFirst(12) + ")")))" : nil } ?? ""
            c += "  local n = \(n)\n  tree:add(\(hf), X.rng(r, r.pos, n))\(why)\n  r.pos = r.pos + n\(term ? " + 1" : "")\n"
        case .string(let s):
            let hf = try field(abbrev, label, "string", line: f.line)
            let (n, term) = size(s, f.id)
            let exp = f.expand.map { "(\(valueString($0)))" } ?? "nil"
            c += "  local n = \(n)\n  X.str(r, tree, \(hf), n, \(term), \(id), \(exp))\n"
        case .type(_, let s) where f.decrypt != nil:
            // Stock Wireshark Lua has no AES-CCM: the ciphertext is shown as it is.
            let hf = try field(abbrev, label, "bytes", line: f.line)
            let (n, _) = s.map { size($0, f.id) } ?? ("(r.stop - r.pos)", false)
            c += "  local n = \(n)\n  tree:add(\(hf), X.rng(r, r.pos, n)):append_text(\" (raw: decryption not exported)\")\n  r.pos = r.pos + n\n"
            let note = "'\(f.id)' (decrypt: \(f.decrypt!)) is shown raw: decryption not exported (stock Wireshark Lua has no AES-CCM)."
            if !notes.contains(note) { notes.append(note) }
        case .type(_, let s) where f.encoding != nil:
            // Base64 text: shown as the text it is (its layout is not laid out in Lua).
            let hf = try field(abbrev, label, "bytes", line: f.line)
            let (n, _) = s.map { size($0, f.id) } ?? ("(r.stop - r.pos)", false)
            c += "  local n = \(n)\n  tree:add(\(hf), X.rng(r, r.pos, n)):append_text(\" (raw: \(f.encoding!) not decoded in the export)\")\n  r.pos = r.pos + n\n"
            let note = "'\(f.id)' (encoding: \(f.encoding!)) is shown raw: its decoded layout is not exported."
            if !notes.contains(note) { notes.append(note) }
        case .type(let t, let s) where f.flatten:
            // Each item a subtree; its fields named as the message's (bluesift lifts them).
            let hf = try field(abbrev, label, "bytes", line: f.line)
            let fn = try typeFunction(t, prefix: prefix, top: false, flat: true)
            c += "  r.item_start = r.pos\n"
            if case .eos = f.repeatSpec {
                // An item that does not fit (a trailing byte) ends the list, its bytes kept as
                // unknown_objects, as bluesift does: tried first against a tree that keeps nothing.
                let unknown = try field(Self.path(prefix, "unknown_objects"), "unknown_objects", "bytes", line: f.line)
                c += "  if not X.fits(r, function(tree)\n" + sub(fn, hf: hf, s, f.id) + "  end) then\n"
                c += "  X.unknown_objects(r, tree, \(unknown))\n  else\n" + sub(fn, hf: hf, s, f.id) + "  end\n"
            } else {
                c += sub(fn, hf: hf, s, f.id)
            }
        case .type(let t, let s):
            let hf = try field(abbrev, label, "bytes", line: f.line)
            let fn = try typeFunction(t, prefix: abbrev, top: false)
            c += sub(fn, hf: hf, s, f.id)
        case .switchOn(let on, let cases, let def, let s):
            c += "  local key = \(expr(on))\n"
            var first = true
            for (value, t) in cases {
                c += "  \(first ? "if" : "elseif") key == \(value) then\n"
                first = false
                c += try switchCase(t, f, on: on, prefix: prefix, abbrev: abbrev, label: label, s, message: message, flat: flat)
            }
            c += first ? "  do\n" : "  else\n"
            if let def {
                c += try switchCase(def, f, on: on, prefix: prefix, abbrev: abbrev, label: label, s, message: message, flat: flat)
            } else if flat && !message {
                // An id without a case ends a flattened list: the rest as unknown_objects.
                let hf = try field(Self.path(prefix, "unknown_objects"), "unknown_objects", "bytes", line: f.line)
                c += "  X.unknown_objects(r, tree, \(hf))\n"
            } else if message {
                let (n, _) = s.map { size($0, f.id) } ?? ("(r.stop - r.pos)", false)
                var selector = "nil"
                if case .ref(let sel) = on {
                    let selField = plugin.types[plugin.frameType].fields.first { $0.id == sel }
                    if let sf = selField, case .integer(let k) = sf.kind {
                        selector = try intField("\(proto).unknown.\(sel)", sel, k, enumIndex: nil, line: f.line)
                    } else {
                        selector = try field("\(proto).unknown.\(sel)", sel, "int64", extra: ", base.DEC", line: f.line)
                    }
                }
                let payload = try field("\(proto).unknown.payload", "payload", "bytes", line: f.line)
                c += "  local n = \(n)\n  X.unknown(r, \(selector), key, \(payload), n)\n"
            } else {
                let hf = try field(abbrev, label, "bytes", line: f.line)
                let (n, _) = s.map { size($0, f.id) } ?? ("(r.stop - r.pos)", false)
                c += "  local n = \(n)\n  tree:add(\(hf), X.rng(r, r.pos, n))\n  r.pos = r.pos + n\n"
            }
            c += "  end\n"
        }
        return c
    }

    mutating func switchCase(_ t: Int, _ f: FieldDef, on: Expr, prefix: String, abbrev: String, label: String, _ s: SizeSpec?, message: Bool, flat: Bool = false) throws(PluginError) -> String {
        if message {
            let name = plugin.types[t].name
            let fn = try typeFunction(t, prefix: "\(proto).\(name)", top: false)
            var c = "  r.message = \(Self.luaString(name)); X.message(r)\n"
            if let s {
                c += "  local n = \(size(s, f.id).code)\n  local saved = r.stop\n  r.stop = r.pos + n\n  \(fn)(r, r.root)\n  r.pos = r.stop\n  r.stop = saved\n"
            } else {
                c += "  \(fn)(r, r.root)\n"
            }
            return c
        }
        if flat {
            // The case of a flattened item: its fields are the message's, in the item's subtree.
            let fn = try typeFunction(t, prefix: prefix, top: false)
            if let s {
                return "  local n = \(size(s, f.id).code)\n  local saved = r.stop\n  r.stop = r.pos + n\n  \(fn)(r, tree)\n  r.pos = r.stop\n  r.stop = saved\n"
            }
            return "  \(fn)(r, tree)\n"
        }
        let hf = try field(abbrev, label, "bytes", line: f.line)
        let fn = try typeFunction(t, prefix: abbrev, top: false)
        return sub(fn, hf: hf, s, f.id)
    }

    static func label(_ id: String, _ unit: String?) -> String { unit.map { "\(id) (\($0))" } ?? id }

    static func luaNumber(_ d: Double) -> String {
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// The Lua `NF[i]` of a number format (nil when plain, unitless and without sentinels,
    /// unless `valid` asks for a label to show "n/a" with).
    mutating func numberFormat(_ n: NumberFormat?, label: String, valid: Bool) -> String {
        guard n != nil || valid else { return "nil" }
        let n = n ?? NumberFormat()
        var parts = ["label = \(Self.luaString(label))"]
        if !n.isPlain {
            parts.append("double = true, scale = \(Self.luaNumber(n.scale)), offset = \(Self.luaNumber(n.offset)), decimals = \(n.decimals)")
        }
        if let u = n.unit { parts.append("unit = \(Self.luaString(u))") }
        parts.append("na = {" + n.na.map { "[\($0)] = true" }.joined(separator: ", ") + "}")
        if !n.interpolate.isEmpty {
            parts.append("interp = {" + n.interpolate.map { "{\(Self.luaNumber($0.0)), \(Self.luaNumber($0.1))}" }.joined(separator: ", ") + "}")
        }
        let code = "{" + parts.joined(separator: ", ") + "}"
        if let i = numberFormats.firstIndex(of: code) { return "NF[\(i + 1)]" }
        numberFormats.append(code)
        return "NF[\(numberFormats.count)]"
    }

    /// A nested type as a subtree, limited to `s` bytes when sized.
    func sub(_ fn: String, hf: String, _ s: SizeSpec?, _ id: String) -> String {
        if let s {
            return "  local n = \(size(s, id).code)\n  local item = tree:add(\(hf), X.rng(r, r.pos, n))\n  local saved = r.stop\n  r.stop = r.pos + n\n  \(fn)(r, item)\n  r.pos = r.stop\n  r.stop = saved\n"
        }
        return "  local at = r.pos\n  local item = tree:add(\(hf), X.rng(r, r.pos, r.stop - r.pos))\n  \(fn)(r, item)\n  item:set_len(r.pos - at)\n"
    }

    mutating func checksum(_ a: ChecksumAlgorithm, line: Int) throws(PluginError) -> String {
        let code: String
        switch a.kind {
        case .xor: code = "{kind = \"xor\"}"
        case .sum8: code = "{kind = \"sum8\"}"
        case .crc:
            guard a.width <= 32 else { throw cannot(line, "a \(a.width)-bit CRC (Lua 5.2's bit32 holds 32 bits)") }
            code = "{kind = \"crc\", width = \(a.width), poly = \(a.poly), init = \(a.initial), refin = \(a.refin), refout = \(a.refout), xorout = \(a.xorout)}"
        }
        if let i = checksumAlgorithms.firstIndex(of: code) { return "C[\(i + 1)]" }
        checksumAlgorithms.append(code)
        return "C[\(checksumAlgorithms.count)]"
    }

    // MARK: the file

    static func uuidKeys(_ u: BluetoothUUID) -> [String] {
        if let s = u.shortValue, s <= 0xFFFF {
            let h = String(s, radix: 16)
            return [String(repeating: "0", count: 4 - h.count) + h]
        }
        let d = u.description.lowercased()
        return [d, d.replacingOccurrences(of: "-", with: "")]
    }

    mutating func generate(generator: String) throws(PluginError) -> String {
        // Fixed fields first: their names are the dissector's interface.
        _ = try field("\(proto).message", "Message", "string", line: 0)
        _ = try field("\(proto).checksum.status", "Checksum status", "string", line: 0)
        _ = try field("\(proto).error", "Error", "string", line: 0)
        _ = try field("\(proto).fragment", "Fragment", "string", line: 0)
        let frameFn = try typeFunction(plugin.frameType, prefix: proto, top: true)
        let hasTopSwitch = plugin.types[plugin.frameType].fields.contains { if case .switchOn = $0.kind { true } else { false } }

        let attMatches = plugin.matches.filter { $0.advertising == nil }
        // Wireshark's btmesh dissector decrypts access messages but hands vendor ones to no table.
        if plugin.matches.contains(where: { if case .mesh = $0.channel { true } else { false } }) {
            throw cannot(plugin.idLine, "a Mesh vendor model plugin (Wireshark has no table for vendor access messages)")
        }
        if advertising, !attMatches.isEmpty {
            throw cannot(plugin.idLine, "a plugin matching both advertising data and characteristics or channels (export them as two plugins)")
        }
        let adv = advertising ? try advertisingTables() : nil
        var matchRows: [String] = []
        var handleRows: [String] = []
        var uuidKeys: [String] = []
        for m in attMatches {
            let dirs = "{" + PluginDirection.allCases.filter { m.directions.contains($0) }.map { "\($0.rawValue) = true" }.joined(separator: ", ") + "}"
            let service = m.service.map { Self.luaString(Self.uuidKeys($0)[0]) } ?? "nil"
            let ch = Self.uuidKeys(m.characteristic)
            matchRows.append("  {characteristic = \(Self.luaString(ch[0])), service = \(service), dirs = \(dirs), handle = \(m.handle.map(String.init) ?? "nil")},")
            for k in ch where !uuidKeys.contains(k) { uuidKeys.append(k) }
            if let h = m.handle { handleRows.append(String(h)) }
        }

        var framing = "nil"
        if let fr = plugin.framing {
            var parts: [String] = []
            if case .field(let offset, let size, let endian, let adjust)? = fr.length {
                parts.append("length = {offset = \(offset), size = \(size), le = \(endian == .little), adjust = \(adjust)}")
            }
            if let t = fr.terminator, !t.isEmpty { parts.append("terminator = \(Self.luaBytes(t))") }
            if let s = fr.start, !s.isEmpty { parts.append("start = \(Self.luaBytes(s))") }
            parts.append("timeout = \(fr.timeoutMicroseconds)")
            parts.append("max_size = \(fr.maxSize)")
            framing = "{" + parts.joined(separator: ", ") + "}"
        }

        var o = """
            -- \(proto).lua: Wireshark dissector for the bluesift plugin '\(plugin.id)' (\(plugin.name)).
            -- Generated by `\(generator) plugins export --wireshark \(plugin.id)` from \(plugin.path).
            -- Regenerate rather than edit. Load with `wireshark -X lua_script:\(proto).lua` or copy it to
            -- ~/.local/lib/wireshark/plugins/. Needs Wireshark 3.6 or later (Lua 5.2 or later, bit32).
            --

            """
        if let adv {
            o += adv.header.map { "-- " + $0 + "\n" }.joined()
        } else {
            o += """
                -- Fields: \(proto).message (message name), \(proto).checksum.status (ok/bad, bad also as expert
                -- info), \(proto).error (why a frame is malformed), \(proto).fragment (a value that only starts a
                -- frame); top-level frame fields as \(proto).FIELD, a message's fields as \(proto).MESSAGE.FIELD,
                -- nested fields as PARENT.FIELD (bit fields likewise).
                -- Reassembly: frames spanning several ATT values are joined per (connection, handle,
                -- direction) on the first pass in frame order; results are kept by frame number, so later
                -- passes (and the GUI) show the same frames. Limitations: integers are Lua numbers (exact up to
                -- 2^53; 64-bit fields are shown exactly, but an expression over them is not), and a capture
                -- opened with a display filter that drops frames still reassembles from every frame.

                """
        }
        if let r = plugin.reference { o += "-- Reference: \(r)\n" }
        if advertising {
            // Wireshark 4.0 has its own `ibeacon` (and alt_beacon...): then the names move aside.
            o += "\n-- If Wireshark already has a protocol named \(proto), this one is bluesift-\(proto).\n"
            o += "local PROTO = \(Self.luaString(proto))\nif pcall(Field.new, PROTO) then PROTO = \"bluesift-\" .. PROTO end\n"
            o += "local P = Proto(PROTO, \(Self.luaString(plugin.name)))\n"
            let quoted = "(" + Self.luaString(proto + ".").dropLast()
            o += "local H = {\n" + fieldDecls.map { "  " + $0.replacingOccurrences(of: quoted, with: "(PROTO .. \".") + "," }.joined(separator: "\n") + "\n}\nP.fields = H\n"
        } else {
            o += "\nlocal P = Proto(\(Self.luaString(proto)), \(Self.luaString(plugin.name)))\n"
            o += "local H = {\n" + fieldDecls.map { "  " + $0 + "," }.joined(separator: "\n") + "\n}\nP.fields = H\n"
        }
        let protoName = advertising ? "PROTO" : Self.luaString(proto)
        o += "local C = {\n" + checksumAlgorithms.map { "  " + $0 + "," }.joined(separator: "\n") + "\n}\n"
        o += """
            local E = {
              bad_checksum = ProtoExpert.new(\(protoName) .. ".checksum.bad", "Bad checksum", expert.group.CHECKSUM, expert.severity.WARN),
              malformed = ProtoExpert.new(\(protoName) .. ".malformed", "Malformed frame", expert.group.MALFORMED, expert.severity.ERROR),
              dropped = ProtoExpert.new(\(protoName) .. ".dropped", "Bytes dropped by reassembly", expert.group.SEQUENCE, expert.severity.NOTE),
            }
            P.experts = {E.bad_checksum, E.malformed, E.dropped}
            local PROTO = \(protoName)
            local DEFAULT_MESSAGE = \(Self.luaString(plugin.defaultMessage))
            local HAS_TOP_SWITCH = \(hasTopSwitch)
            local FRAMING = \(framing)
            local MATCHES = {
            \(matchRows.joined(separator: "\n"))
            }
            local UUID_KEYS = {\(uuidKeys.map(Self.luaString).joined(separator: ", "))}
            local HANDLES = {\(handleRows.joined(separator: ", "))}
            -- Context specials of advertising plugins → keys of the report's context.
            local CONTEXT = {_rssi = "rssi", _address = "address", _address_type = "address_type", _company = "company", _pdu = "pdu", _rule = "rule"}

            """
        o += "local NF = {\n" + numberFormats.map { "  " + $0 + "," }.joined(separator: "\n") + "\n}\n"
        var wide: [String] = []
        for (i, d) in fieldDecls.enumerated() {
            if d.hasPrefix("ProtoField.uint64(") { wide.append("[H[\(i + 1)]] = \"u\"") }
            if d.hasPrefix("ProtoField.int64(") { wide.append("[H[\(i + 1)]] = \"i\"") }
        }
        o += "local WIDE = {" + wide.joined(separator: ", ") + "}\n"
        o += "local STRF = {" + enumText.sorted().compactMap { fieldIndex[$0].map { "[H[\($0.index)]] = true" } }.joined(separator: ", ") + "}\n"
        o += Self.runtime
        o += "local T = {}\n"
        o += functions.joined(separator: "\n")
        o += "\nlocal FRAME = \(frameFn)\n"
        o += Self.decoder
        if let adv {
            o += adv.tables + Self.advertisingDissector
        } else {
            o += Self.dissector
        }
        return o
    }

    /// Helpers: scope, integer reads, bit operations on Lua numbers, checksums.
    static let runtime = #"""
        local X = {}
        local Fail = {}
        function X.fail(msg) error(setmetatable({msg = msg}, Fail), 0) end
        function X.look(r, name)
          if name == "_remaining" then return r.stop - r.pos end
          if name == "_size" then return r.size end
          if name == "_offset" then return r.pos end
          if name == "_index" then return r.index end
          if CONTEXT[name] then
            local v = r.ctx[CONTEXT[name]]
            if v == nil then X.fail("'" .. name .. "' is not known for this report") end
            return v
          end
          for i = r.n, 1, -1 do if r.names[i] == name then return r.vals[i] end end
          local base = name:match("^(.*)%._length$")
          if base and r.lengths[base] then return r.lengths[base] end
          base = name:match("^(.*)%._count$")
          if base and r.counts[base] then return r.counts[base] end
          X.fail("'" .. name .. "' is not defined here")
        end
        function X.push(r, name, v) r.n = r.n + 1; r.names[r.n] = name; r.vals[r.n] = v end
        function X.element(r)
          r.elements = r.elements + 1
          if r.elements > 65536 then X.fail("more than 65536 elements") end
        end
        local function trunc(q) if q >= 0 then return math.floor(q) else return math.ceil(q) end end
        function X.div(x, y, d) if y == 0 then X.fail("division by zero in '" .. d .. "'") end return trunc(x / y) end
        function X.mod(x, y, d) if y == 0 then X.fail("division by zero in '" .. d .. "'") end return x - y * trunc(x / y) end
        -- 64-bit two's complement bit operations on numbers exact to 2^53: high and low 32 bits apart.
        local TWO32 = 4294967296
        local function split(x) local hi = math.floor(x / TWO32); return hi, x - hi * TWO32 end
        local function join(hi, lo) if hi >= 2147483648 then hi = hi - TWO32 end return hi * TWO32 + lo end
        function X.band(a, b) local ah, al = split(a); local bh, bl = split(b); return join(bit32.band(ah, bh), bit32.band(al, bl)) end
        function X.bor(a, b) local ah, al = split(a); local bh, bl = split(b); return join(bit32.bor(ah, bh), bit32.bor(al, bl)) end
        function X.bxor(a, b) local ah, al = split(a); local bh, bl = split(b); return join(bit32.bxor(ah, bh), bit32.bxor(al, bl)) end
        function X.bnot(a) local ah, al = split(a); return join(bit32.bnot(ah), bit32.bnot(al)) end
        function X.shl(x, y, d) if y < 0 or y >= 64 then X.fail("shift by " .. y .. " in '" .. d .. "'") end return x * 2 ^ y end
        function X.shr(x, y, d) if y < 0 or y >= 64 then X.fail("shift by " .. y .. " in '" .. d .. "'") end return math.floor(x / 2 ^ y) end
        function X.bits(v, shift, width) return math.floor(v / 2 ^ shift) % 2 ^ width end
        function X.rng(r, at, n)
          if n == 0 then return r.tvb(0, 0) end
          return r.tvb(at, n)
        end
        function X.add(tree, hf, range, v, wide)
          if wide then return tree:add(hf, range, UInt64.new(v)) end
          return tree:add(hf, range, X.val(hf, v))
        end
        -- 64-bit fields take Int64/UInt64 values (a name merged from several layouts may be one).
        function X.val(hf, v)
          if type(v) ~= "number" then return v end
          if STRF[hf] then return tostring(v) end
          local w = WIDE[hf]
          if w == "u" then return UInt64.new(v) elseif w == "i" then return Int64.new(v) end
          return v
        end
        -- A number as bluesift shows it: a sentinel (na) or NaN as "n/a"; a scaled value as a
        -- double with its decimals and unit. With `valid`, shown when the type is whole.
        function X.num(r, tree, hf, range, v, shown, nf, valid, generated)
          if valid then
            r.deferred[#r.deferred + 1] = {tree = tree, hf = hf, range = range, v = v, shown = shown, nf = nf, valid = valid, generated = generated}
            return nil
          end
          return X.show(tree, hf, range, v, shown, nf, generated)
        end
        function X.interp(t, x)
          if x <= t[1][1] then return t[1][2] end
          if x >= t[#t][1] then return t[#t][2] end
          for i = 2, #t do
            if x <= t[i][1] then return t[i - 1][2] + (t[i][2] - t[i - 1][2]) * (x - t[i - 1][1]) / (t[i][1] - t[i - 1][1]) end
          end
          return t[#t][2]
        end
        function X.show(tree, hf, range, v, shown, nf, generated)
          local item
          if nf == nil then
            item = tree:add(hf, range, X.val(hf, shown))
          elseif v == nil or v ~= v or nf.na[v] then
            item = tree:add(range, nf.label .. ": n/a")
          elseif nf.double then
            local x = v * nf.scale + nf.offset
            if nf.interp then x = X.interp(nf.interp, x) end
            local text = string.format("%." .. nf.decimals .. "f", x)
            item = tree:add(hf, range, tonumber(text), nf.label .. ": " .. text .. (nf.unit and " " .. nf.unit or ""))
          else
            item = tree:add(hf, range, X.val(hf, shown))
          end
          if generated then item:set_generated() end
          return item
        end
        function X.flush(r, mark)
          for i = mark + 1, #r.deferred do
            local d = r.deferred[i]
            local ok, keep = pcall(d.valid, r)
            if ok and keep == 0 then
              local item = d.tree:add(d.range, d.nf.label .. ": n/a")
              if d.generated then item:set_generated() end
            else
              X.show(d.tree, d.hf, d.range, d.v, d.shown, d.nf, d.generated)
            end
          end
          for i = #r.deferred, mark + 1, -1 do r.deferred[i] = nil end
        end
        function X.read(r, size, signed, le, name)
          if r.stop - r.pos < size then
            X.fail(name .. ": needs " .. size .. " bytes at offset " .. r.pos .. ", " .. (r.stop - r.pos) .. " left")
          end
          local range = r.tvb(r.pos, size)
          local v
          if size <= 4 then
            v = le and range:le_uint() or range:uint()
            if signed and v >= 2 ^ (8 * size - 1) then v = v - 2 ^ (8 * size) end
          elseif signed then
            v = (le and range:le_int64() or range:int64()):tonumber()
          else
            v = (le and range:le_uint64() or range:uint64()):tonumber()
          end
          r.pos = r.pos + size
          return v
        end
        -- IEEE 754 binary16/32/64 and IEEE 11073-20601 §A.2 SFLOAT/FLOAT; nil for NaN,
        -- infinities, the 11073 specials and `na` bit patterns. Also returns the raw bits.
        function X.real(r, kind, size, le, name, nf)
          if r.stop - r.pos < size then
            X.fail(name .. ": needs " .. size .. " bytes at offset " .. r.pos .. ", " .. (r.stop - r.pos) .. " left")
          end
          local range = r.tvb(r.pos, size)
          local bits
          if size <= 4 then bits = le and range:le_uint() or range:uint() else bits = (le and range:le_uint64() or range:uint64()):tonumber() end
          r.pos = r.pos + size
          if nf and nf.na[bits] then return nil, bits end
          local v
          if kind == "f4" then
            v = le and range:le_float() or range:float()
            if v == v and v ~= math.huge and v ~= -math.huge then v = tonumber(string.format("%.7g", v)) end
          elseif kind == "f8" then
            v = le and range:le_float() or range:float()
          elseif kind == "f2" then
            local sign, e, m = math.floor(bits / 32768), math.floor(bits / 1024) % 32, bits % 1024
            if e == 31 then return nil, bits end
            if e == 0 then v = m / 1024 / 16384 else v = (1 + m / 1024) * 2 ^ (e - 15) end
            if sign == 1 then v = -v end
            v = tonumber(string.format("%.7g", v))
          else
            local m, e
            if kind == "sfloat" then
              m, e = bits % 4096, math.floor(bits / 4096)
              if m >= 0x07FE and m <= 0x0802 then return nil, bits end
              if m >= 0x0800 then m = m - 0x1000 end
              if e >= 8 then e = e - 16 end
            else
              m, e = bits % 16777216, math.floor(bits / 16777216)
              if m >= 0x7FFFFE and m <= 0x800002 then return nil, bits end
              if m >= 0x800000 then m = m - 0x1000000 end
              if e >= 128 then e = e - 256 end
            end
            v = m * 10 ^ e
            if e < 0 then v = tonumber(string.format("%." .. (-e) .. "f", v)) end
          end
          if v ~= v or v == math.huge or v == -math.huge then return nil, bits end
          return v, bits
        end
        function X.mac(r, tree, hf, le, name)
          if r.stop - r.pos < 6 then X.fail(name .. ": needs 6 bytes at offset " .. r.pos .. ", " .. (r.stop - r.pos) .. " left") end
          local v, parts = 0, {}
          for i = 0, 5 do
            local b = r.tvb(r.pos + (le and 5 - i or i), 1):uint()
            v = v * 256 + b
            parts[#parts + 1] = string.format("%02x", b)
          end
          tree:add(hf, r.tvb(r.pos, 6), table.concat(parts, ":"))
          r.pos = r.pos + 6
          return v
        end
        function X.mactext(v)
          local parts = {}
          for i = 5, 0, -1 do parts[#parts + 1] = string.format("%02x", math.floor(v / 2 ^ (8 * i)) % 256) end
          return table.concat(parts, ":")
        end
        function X.uuid(r, tree, hf, le, name)
          if r.stop - r.pos < 16 then X.fail(name .. ": needs 16 bytes at offset " .. r.pos .. ", " .. (r.stop - r.pos) .. " left") end
          local h = {}
          for i = 0, 15 do h[#h + 1] = string.format("%02x", r.tvb(r.pos + (le and 15 - i or i), 1):uint()) end
          local s = table.concat(h)
          tree:add(hf, r.tvb(r.pos, 16), s:sub(1, 8) .. "-" .. s:sub(9, 12) .. "-" .. s:sub(13, 16) .. "-" .. s:sub(17, 20) .. "-" .. s:sub(21, 32))
          r.pos = r.pos + 16
        end
        function X.ctx(r, name) return r.ctx[CONTEXT[name]] end
        function X.ctxtext(r, tree, hf, name, label, id)
          local v = r.ctx[name == "_name" and "name" or "address"]
          if v == nil then tree:add(r.tvb(0, 0), label .. ": n/a"):set_generated(); return end
          if name == "_address" then X.push(r, id, v); v = X.mactext(v) end
          r.joined[id] = v
          tree:add(hf, r.tvb(0, 0), v):set_generated()
        end
        -- A tree that keeps nothing, for trying an item before showing it.
        local null_tree = setmetatable({}, {__index = function() return function(self) return self end end})
        function X.fits(r, fn)
          local s = {pos = r.pos, stop = r.stop, n = r.n, depth = r.depth, d = #r.deferred, sums = #r.sums, elements = r.elements, index = r.index}
          local ok = pcall(fn, null_tree)
          r.pos, r.stop, r.n, r.depth, r.elements, r.index = s.pos, s.stop, s.n, s.depth, s.elements, s.index
          for i = #r.deferred, s.d + 1, -1 do r.deferred[i] = nil end
          for i = #r.sums, s.sums + 1, -1 do r.sums[i] = nil end
          return ok
        end
        function X.unknown_objects(r, tree, hf)
          tree:add(hf, X.rng(r, r.item_start, r.stop - r.item_start))
          r.pos = r.stop
        end
        function X.int(r, tree, hf, size, signed, le, name, nf, valid, vs)
          if r.stop - r.pos < size then
            X.fail(name .. ": needs " .. size .. " bytes at offset " .. r.pos .. ", " .. (r.stop - r.pos) .. " left")
          end
          local range = r.tvb(r.pos, size)
          local v, shown
          if size <= 4 then
            v = le and range:le_uint() or range:uint()
            if signed and v >= 2 ^ (8 * size - 1) then v = v - 2 ^ (8 * size) end
            shown = v
          elseif signed then
            shown = le and range:le_int64() or range:int64()
            v = shown:tonumber()
          else
            shown = le and range:le_uint64() or range:uint64()
            v = shown:tonumber()
          end
          r.pos = r.pos + size
          if vs and STRF[hf] then shown = vs[v] or tostring(v) end   -- enums merged into text
          if nf then return v, X.num(r, tree, hf, range, v, shown, nf, valid) end
          return v, tree:add(hf, range, X.val(hf, shown))
        end
        function X.vlq(r, tree, hf, name)
          local v, mul, at = 0, 1, r.pos
          while true do
            if r.pos >= r.stop then X.fail(name .. ": truncated variable-length integer") end
            local b = r.tvb(r.pos, 1):uint()
            r.pos = r.pos + 1
            v = v + (b % 128) * mul
            if b < 128 then break end
            mul = mul * 128
            if mul >= 2 ^ 63 then X.fail(name .. ": variable-length integer too long") end
          end
          return v, tree:add(hf, r.tvb(at, r.pos - at), UInt64.new(v))
        end
        function X.sized(r, n, name)
          if n < 0 or n > r.stop - r.pos then
            X.fail(name .. ": size " .. n .. " at offset " .. r.pos .. " but " .. (r.stop - r.pos) .. " bytes left")
          end
          return n
        end
        function X.term(r, byte, name)
          for i = r.pos, r.stop - 1 do
            if r.tvb(i, 1):uint() == byte then return i - r.pos end
          end
          X.fail(string.format("%s: no terminator 0x%02x before offset %d", name, byte, r.stop))
        end
        function X.str(r, tree, hf, n, terminated, name, expand)
          local s = n > 0 and r.tvb(r.pos, n):raw() or ""
          local range = X.rng(r, r.pos, n)
          r.pos = r.pos + n
          if terminated then r.pos = r.pos + 1 else s = s:gsub("%z+$", "") end
          if expand then
            local out = {}
            for i = 1, #s do out[i] = expand[s:byte(i)] or s:sub(i, i) end
            s = table.concat(out)
          end
          r.joined[name] = s
          tree:add(hf, range, s)
        end
        function X.magic(r, tree, hf, magic, name)
          if r.stop - r.pos < #magic then X.fail(name .. ": truncated magic at offset " .. r.pos) end
          for i = 1, #magic do
            local b = r.tvb(r.pos + i - 1, 1):uint()
            if b ~= magic:byte(i) then
              X.fail(string.format("bad magic at offset %d: 0x%02x, expected 0x%02x", r.pos + i - 1, b, magic:byte(i)))
            end
          end
          tree:add(hf, r.tvb(r.pos, #magic))
          r.pos = r.pos + #magic
        end
        function X.message(r)
          r.root:add(H[1], r.tvb(0, 0), r.message)
        end
        function X.unknown(r, selector, key, payload, n)
          r.message = "unknown"
          X.message(r)
          if selector then r.root:add(selector, r.tvb(0, 0), key) end
          r.root:add(payload, X.rng(r, r.pos, n))
          r.pos = r.pos + n
        end
        local function reflect(v, bits)
          local out = 0
          for i = 0, bits - 1 do
            if math.floor(v / 2 ^ i) % 2 == 1 then out = out + 2 ^ (bits - 1 - i) end
          end
          return out
        end
        function X.checksum(alg, bytes)
          if alg.kind == "xor" then
            local x = 0
            for i = 1, #bytes do x = bit32.bxor(x, bytes:byte(i)) end
            return x
          elseif alg.kind == "sum8" then
            local s = 0
            for i = 1, #bytes do s = (s + bytes:byte(i)) % 256 end
            return s
          end
          local w = alg.width
          local mask = 2 ^ w - 1
          local crc = bit32.band(alg.init, mask)
          for i = 1, #bytes do
            local b = bytes:byte(i)
            if alg.refin then b = reflect(b, 8) end
            for j = 7, 0, -1 do
              local bit = math.floor(b / 2 ^ j) % 2
              local top = math.floor(crc / 2 ^ (w - 1)) % 2
              crc = (crc * 2) % 2 ^ w
              if top ~= bit then crc = bit32.bxor(crc, bit32.band(alg.poly, mask)) end
            end
          end
          if alg.refout then crc = reflect(crc, w) end
          return bit32.band(bit32.bxor(crc, alg.xorout), mask)
        end

        """#

    /// The frame decoder, reassembly and registration.
    /// The ATT PDUs that carry a value, by opcode, as a Lua table (ATTOpcode's names).
    static let luaDirections: String = {
        let d: [(ATTOpcode, String)] = [
            (.writeRequest, "write"), (.writeCommand, "write"), (.signedWriteCommand, "write"),
            (.handleValueNotification, "notify"), (.handleValueIndication, "indicate"), (.readResponse, "read")
        ]
        return "{" + d.map { "[0x" + Hex.string([$0.0.rawValue]) + "] = \"" + $0.1 + "\"" }.joined(separator: ", ") + "}"
    }()

    static let decoder = #"""
        -- One complete frame: fields, message, checksum verdicts, error.
        local function decode(tvb, root, ctx)
          local r = {tvb = tvb, pos = 0, stop = tvb:len(), size = tvb:len(), names = {}, vals = {}, n = 0,
                     lengths = {}, counts = {}, index = 0, header = {}, sums = {}, depth = 0, elements = 0, root = root,
                     ctx = ctx or {}, deferred = {}, joined = {}, item_start = 0}
          local err
          local ok, e = pcall(FRAME, r, root)
          -- Values whose `valid:` was not reached (a malformed payload) are shown as read.
          for _, d in ipairs(r.deferred) do X.show(d.tree, d.hf, d.range, d.v, d.shown, d.nf, d.generated) end
          if not ok then
            if getmetatable(e) == Fail then err = e.msg else err = tostring(e) end
          elseif r.pos < r.size then
            err = (r.size - r.pos) .. " bytes after the end of the frame"
          end
          local verdict
          for _, c in ipairs(r.sums) do
            r.names, r.vals, r.n = {}, {}, 0
            for k, v in pairs(r.header) do X.push(r, k, v) end
            r.pos, r.stop = c.offset, r.size
            local ok2, e2 = pcall(function()
              local from, to = 0, c.offset
              if c.from then from = c.from(r) end
              if c.to then to = c.to(r) end
              if from < 0 or from > to or to > r.size then
                X.fail("checksum range " .. from .. "..<" .. to .. " is outside the frame")
              end
              local v = X.checksum(c.alg, to > from and tvb(from, to - from):raw() or "")
              if v == c.found then
                if verdict == nil then verdict = "ok" end
              else
                verdict = "bad"
                c.item:add_proto_expert_info(E.bad_checksum, string.format("Bad checksum: 0x%x, computed 0x%x", c.found, v))
              end
            end)
            if not ok2 and err == nil then err = getmetatable(e2) == Fail and e2.msg or tostring(e2) end
          end
          local msg = r.message
          if msg == nil then
            msg = err == nil and DEFAULT_MESSAGE or "malformed"
            if err == nil and HAS_TOP_SWITCH then msg = "unknown" end
            root:add(H[1], tvb(0, 0), msg)
          end
          if verdict then root:add(H[2], tvb(0, 0), verdict) end
          if err then
            local item = root:add(H[3], tvb(0, 0), err)
            item:add_proto_expert_info(E.malformed, err)
          end
          root:append_text(": " .. msg .. (verdict == "bad" and " [bad checksum]" or "") .. (err and " [malformed]" or ""))
          return msg
        end

        """#

    static let dissector = #"""
        -- Reassembly (as bluesift's FrameAssembler): one buffer per (connection, handle, direction).
        local streams, results = {}, {}
        local last_frame, call_index = -1, 0

        local function read_length(buf, spec)
          if spec.size == 0 then
            local v = 0
            for i = 0, 3 do
              local b = buf:byte(spec.offset + i + 1)
              if b == nil then return nil end
              v = v + (b % 128) * 128 ^ i
              if b < 128 then return v, i + 1 end
            end
            return nil
          end
          if #buf < spec.offset + spec.size then return nil end
          local v = 0
          for i = 0, spec.size - 1 do
            local k = spec.le and (spec.size - 1 - i) or i
            v = v * 256 + buf:byte(spec.offset + k + 1)
          end
          return v, spec.size
        end

        local function cut(s, out)
          while #s.buf > 0 do
            if FRAMING.start then
              local start, i = FRAMING.start, 1
              while i <= #s.buf do
                local n = math.min(#start, #s.buf - i + 1)
                if s.buf:sub(i, i + n - 1) == start:sub(1, n) then break end
                i = i + 1
              end
              if i > 1 then
                out.dropped[#out.dropped + 1] = "dropped " .. (i - 1) .. " bytes before the frame start"
                s.buf = s.buf:sub(i)
              end
              if #s.buf < #start then return end
            end
            if FRAMING.length then
              local value, width = read_length(s.buf, FRAMING.length)
              if value == nil then return end
              local total = value + FRAMING.length.adjust
              if total < FRAMING.length.offset + width or total > FRAMING.max_size then
                out.dropped[#out.dropped + 1] = "dropped " .. #s.buf .. " bytes: frame length " .. total .. " is impossible"
                s.buf = ""
                return
              end
              if #s.buf < total then out.need = total; return end
              out.frames[#out.frames + 1] = s.buf:sub(1, total)
              s.buf = s.buf:sub(total + 1)
            elseif FRAMING.terminator then
              local _, e = s.buf:find(FRAMING.terminator, 1, true)
              if e == nil then
                if #s.buf > FRAMING.max_size then
                  out.dropped[#out.dropped + 1] = "dropped " .. #s.buf .. " bytes: no terminator within " .. FRAMING.max_size .. " bytes"
                  s.buf = ""
                end
                return
              end
              out.frames[#out.frames + 1] = s.buf:sub(1, e)
              s.buf = s.buf:sub(e + 1)
            else
              out.frames[#out.frames + 1] = s.buf
              s.buf = ""
            end
          end
        end

        local function push(key, bytes, now)
          local out = {frames = {}, dropped = {}, pending = 0}
          local s = streams[key] or {buf = "", last = 0}
          if #s.buf > 0 and now - s.last > FRAMING.timeout then
            out.dropped[#out.dropped + 1] = "dropped " .. #s.buf .. " bytes of an incomplete frame after " .. math.floor(FRAMING.timeout / 1000) .. " ms"
            s.buf = ""
          end
          s.buf = s.buf .. bytes
          s.last = now
          cut(s, out)
          out.pending = #s.buf
          if #s.buf == 0 then streams[key] = nil else streams[key] = s end
          return out
        end

        function P.init()
          streams, results = {}, {}
          last_frame, call_index = -1, 0
        end

        local f_opcode = Field.new("btatt.opcode")
        local f_handle = Field.new("btatt.handle")
        local f_uuid16 = Field.new("btatt.uuid16")
        local f_uuid128 = Field.new("btatt.uuid128")
        local f_service16 = Field.new("btatt.service_uuid16")
        local f_service128 = Field.new("btatt.service_uuid128")
        local f_chandle = Field.new("bthci_acl.chandle")
        -- Core 5.4 Vol 3 Part F §3.4.5-3.4.7, §3.4.4.4: the PDUs that carry a characteristic value.
        local DIRECTIONS = \#(luaDirections)

        local function last(f) local all = {f()}; return all[#all] end
        local function uuid_text(fi)
          if fi == nil then return nil end
          if fi.type == ftypes.UINT16 then return string.format("%04x", fi.value) end
          -- btatt's 128-bit UUID fields hold the UUID most significant byte first.
          local s = tostring(fi.value):lower():gsub("[^0-9a-f]", "")
          if #s ~= 32 then return s end
          return s:sub(1, 8) .. "-" .. s:sub(9, 12) .. "-" .. s:sub(13, 16) .. "-" .. s:sub(17, 20) .. "-" .. s:sub(21, 32)
        end

        local function find_match(dir)
          local ch = uuid_text(last(f_uuid16)) or uuid_text(last(f_uuid128))
          local service = uuid_text(last(f_service16)) or uuid_text(last(f_service128))
          local handle = last(f_handle)
          for _, m in ipairs(MATCHES) do
            if m.dirs[dir] then
              if ch then
                if (ch == m.characteristic or ch:gsub("-", "") == m.characteristic) and (m.service == nil or m.service == service) then return m end
              elseif m.handle and handle and handle.value == m.handle then
                return m
              end
            end
          end
          return nil
        end

        function P.dissector(tvb, pinfo, tree)
          local op = last(f_opcode)
          local dir = op and DIRECTIONS[op.value]
          if dir == nil or find_match(dir) == nil then return 0 end
          pinfo.cols.protocol:append("/" .. PROTO)
          local frames, pending, need, dropped
          if FRAMING == nil then
            frames = {false}
          else
            if pinfo.number ~= last_frame then last_frame, call_index = pinfo.number, 0 end
            call_index = call_index + 1
            results[pinfo.number] = results[pinfo.number] or {}
            local out = results[pinfo.number][call_index]
            if out == nil then
              local chandle = last(f_chandle)
              local handle = last(f_handle)
              local key = (chandle and chandle.value or 0) .. ":" .. (handle and handle.value or 0) .. ":" .. dir
              local now = math.floor(pinfo.abs_ts * 1000000 + 0.5)
              out = push(key, tvb:raw(), now)
              results[pinfo.number][call_index] = out
            end
            frames, pending, need, dropped = out.frames, out.pending, out.need, out.dropped
          end
          local names = {}
          for _, f in ipairs(frames) do
            local ftvb = tvb
            if f and f ~= tvb:raw() then ftvb = ByteArray.new(f, true):tvb(PROTO .. " frame") end
            local root = tree:add(P, ftvb())
            names[#names + 1] = decode(ftvb, root)
          end
          if pending and pending > 0 then
            local text = need and (pending .. " of " .. need .. " bytes") or (pending .. " bytes")
            local root = tree:add(P, tvb())
            root:append_text(" (fragment: " .. text .. ")")
            root:add(H[4], tvb(0, 0), text)
            if #frames == 0 then names[#names + 1] = "fragment" end
          end
          for _, d in ipairs(dropped or {}) do tree:add_proto_expert_info(E.dropped, d) end
          if #names > 0 then pinfo.cols.info:append(" " .. PROTO .. " " .. table.concat(names, ", ")) end
          return tvb:len()
        end

        -- Registration: characteristic UUIDs (known when the capture holds the discovery), and
        -- handle overrides for captures without it.
        local function table_named(name)
          local ok, t = pcall(DissectorTable.get, name)
          if ok then return t end
          return nil
        end
        local by_uuid = table_named("bluetooth.uuid")
        if by_uuid then
          for _, k in ipairs(UUID_KEYS) do by_uuid:add(k, P) end
        else
          local t16, t128 = table_named("btatt.uuid16"), table_named("btatt.uuid128")
          for _, k in ipairs(UUID_KEYS) do
            if #k == 4 and t16 then t16:add(tonumber(k, 16), P) elseif #k > 4 and t128 then t128:add(k, P) end
          end
        end
        local by_handle = table_named("btatt.handle")
        if by_handle then for _, h in ipairs(HANDLES) do by_handle:add(h, P) end end

        """#
}
