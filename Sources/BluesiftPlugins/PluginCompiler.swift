import BluesiftProtocols
import BluesiftWire
import Yams

/// YAML → `Plugin`. Everything is checked here, once: unknown keys and types, undefined
/// field references, cycles between types. Errors carry the YAML line (Yams node marks).
struct PluginCompiler {
    let path: String
    var endian: Endianness = .little
    var typeIndex: [String: Int] = [:]
    var typeNodes: [(String, Node)] = []
    var types: [TypeDef] = []
    var enums: [EnumDef] = []
    var enumIndex: [String: Int] = [:]

    init(path: String) { self.path = path }

    func fail(_ node: Node?, _ message: String) -> PluginError {
        PluginError(path: path, line: node?.mark?.line ?? 0, message: message)
    }

    static func yamlError(_ error: Error, path: String) -> PluginError {
        if let y = error as? YamlError {
            switch y {
            case .scanner(let ctx, let problem, let mark, _), .parser(let ctx, let problem, let mark, _),
                .composer(let ctx, let problem, let mark, _):
                let c = ctx.map { "\($0.text) " } ?? ""
                return PluginError(path: path, line: mark.line, message: "malformed YAML: \(c)\(problem)")
            case .reader(let problem, _, _, _):
                return PluginError(path: path, line: 0, message: "malformed YAML: \(problem)")
            default: break
            }
        }
        return PluginError(path: path, line: 0, message: "malformed YAML: \(error)")
    }

    // MARK: scalar helpers

    func mapping(_ n: Node, _ what: String) throws(PluginError) -> Node.Mapping {
        guard let m = n.mapping else { throw fail(n, "\(what) must be a mapping") }
        return m
    }

    func string(_ n: Node, _ what: String) throws(PluginError) -> String {
        guard let s = n.scalar?.string else { throw fail(n, "\(what) must be a scalar") }
        return s
    }

    func integer(_ n: Node, _ what: String) throws(PluginError) -> Int64 {
        guard let s = n.scalar?.string, let v = parseIntegerLiteral(s) else { throw fail(n, "\(what) must be an integer") }
        return v
    }

    func bool(_ n: Node, _ what: String) throws(PluginError) -> Bool {
        switch n.scalar?.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail(n, "\(what) must be true or false")
        }
    }

    func expr(_ n: Node, _ what: String) throws(PluginError) -> Expr {
        let s = try string(n, what)
        do { return try Expr.parse(s) } catch { throw fail(n, "\(what): \(error.message)") }
    }

    /// "a5 06", "a506", or a list of integers.
    func byteList(_ n: Node, _ what: String) throws(PluginError) -> [UInt8] {
        if let seq = n.sequence {
            var out: [UInt8] = []
            for item in seq {
                let v = try integer(item, what)
                guard (0...255).contains(v) else { throw fail(item, "\(what): \(v) is not a byte") }
                out.append(UInt8(v))
            }
            return out
        }
        let s = try string(n, what)
        guard let b = Hex.parse(s.hasPrefix("0x") ? String(s.dropFirst(2)) : s) else { throw fail(n, "\(what): bad hex '\(s)'") }
        return b
    }

    /// A rule's `prefix`: hex bytes where `??` stands for any byte (a byte the format varies,
    /// such as Eddystone-URL's tx power). Returns the bytes (0 at wildcards) and the mask,
    /// empty when every byte is fixed.
    func maskedPrefix(_ n: Node) throws(PluginError) -> ([UInt8], [UInt8]) {
        guard let s = n.scalar?.string, s.contains("?") else { return (try byteList(n, "prefix"), []) }
        let digits = Array((s.hasPrefix("0x") ? String(s.dropFirst(2)) : s).filter { !$0.isWhitespace })
        guard digits.count % 2 == 0, !digits.isEmpty else { throw fail(n, "prefix: bad hex '\(s)'") }
        var bytes: [UInt8] = [], mask: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            let pair = String(digits[i...i + 1])
            if pair == "??" { bytes.append(0); mask.append(0); continue }
            guard pair.allSatisfy(\.isHexDigit), let b = UInt8(pair, radix: 16) else { throw fail(n, "prefix: bad byte '\(pair)' (hex, or ?? for any byte)") }
            bytes.append(b); mask.append(0xFF)
        }
        guard mask.contains(0xFF) else { throw fail(n, "prefix: every byte is ??") }
        return (bytes, mask)
    }

    func checkKeys(_ m: Node.Mapping, _ allowed: Set<String>, _ what: String) throws(PluginError) {
        for (k, _) in m {
            let key = k.scalar?.string ?? ""
            if !allowed.contains(key) {
                throw fail(k, "unknown key '\(key)' in \(what) (expected one of: \(allowed.sorted().joined(separator: ", ")))")
            }
        }
    }

    // MARK: top level

    static let topKeys: Set<String> = [
        "id", "name", "doc", "reference", "endian", "match", "framing", "frame",
        "types", "enums", "rules", "examples", "message"
    ]

    /// Yams parses recursively: nesting deep enough overflows the stack, so it is refused first.
    static let maxNesting = 128

    func checkNesting(_ yaml: String) throws(PluginError) {
        var depth = 0, line = 1, quote: UInt8? = nil, comment = false, atLineStart = true, indent = 0
        for c in yaml.utf8 {
            if c == 0x0A { line += 1; comment = false; atLineStart = true; indent = 0; continue }
            if atLineStart {
                if c == 0x20 { indent += 1; if indent > Self.maxNesting * 8 { break }; continue }
                atLineStart = false
            }
            if comment { continue }
            if let q = quote { if c == q { quote = nil }; continue }
            switch c {
            case 0x22, 0x27: quote = c
            case 0x23: comment = true
            case 0x5B, 0x7B: depth += 1
            case 0x5D, 0x7D: depth -= 1
            default: break
            }
            if depth > Self.maxNesting { break }
        }
        if depth > Self.maxNesting || indent > Self.maxNesting * 8 {
            throw PluginError(path: path, line: line, message: "nesting deeper than \(Self.maxNesting) levels")
        }
    }

    /// YAML nodes a plugin may hold once aliases are expanded: an alias bomb (billion laughs)
    /// composes into a small shared tree, but anything walking it would visit every copy.
    static let maxNodes = 200_000

    /// Every mapping's keys are distinct (a second `0x01:` among `cases` used to shadow the
    /// first silently; `1` and `0x01` are the same key), and the document, aliases expanded,
    /// stays under `maxNodes`. Iterative, so depth costs no stack.
    func checkDocument(_ root: Node) throws(PluginError) {
        var budget = Self.maxNodes
        var stack: [Node] = [root]
        while let n = stack.popLast() {
            budget -= 1
            if budget < 0 {
                throw fail(n, "the YAML expands to more than \(Self.maxNodes) nodes (nested aliases?)")
            }
            switch n {
            case .mapping(let m):
                var seen: [String: Int] = [:]
                for (k, v) in m {
                    let text = k.scalar?.string ?? ""
                    let key = k.scalar == nil ? "\(k)" : parseIntegerLiteral(text).map { "integer \($0)" } ?? text
                    if let first = seen[key] {
                        throw fail(k, "duplicate key '\(text)' (first at line \(first))")
                    }
                    seen[key] = k.mark?.line ?? 0
                    stack.append(v)
                }
            case .sequence(let items):
                stack.append(contentsOf: items)
            default:
                break
            }
        }
    }

    mutating func compile(yaml: String) throws(PluginError) -> Plugin {
        try checkNesting(yaml)
        let root: Node
        do {
            // No implicit tag resolution: every scalar is read as its text (resolving each by
            // regular expressions was most of a plugin's compile time).
            guard let r = try Yams.compose(yaml: yaml, .basic) else { throw fail(nil, "empty plugin file") }
            root = r
        } catch let e as PluginError { throw e } catch { throw Self.yamlError(error, path: path) }
        try checkDocument(root)
        let top = try mapping(root, "a plugin")
        try checkKeys(top, Self.topKeys, "the plugin")
        guard let idNode = top[k: "id"] else { throw fail(root, "missing 'id'") }
        let id = try string(idNode, "id")
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) else {
            throw fail(idNode, "id must be letters, digits, '_', '-' or '.'")
        }
        if let e = top[k: "endian"] {
            switch try string(e, "endian") {
            case "le": endian = .little
            case "be": endian = .big
            default: throw fail(e, "endian must be le or be")
            }
        }
        if let en = top[k: "enums"] { try compileEnums(en) }
        guard let matchNode = top[k: "match"] else { throw fail(root, "missing 'match'") }
        let matches = try compileMatches(matchNode)

        // Types: names first (so fields may reference types declared later), then bodies.
        if let tn = top[k: "types"] {
            for (k, v) in try mapping(tn, "types") {
                let name = try string(k, "type name")
                if typeIndex[name] != nil || Self.builtinType(name) { throw fail(k, "type '\(name)' is defined twice or shadows a built-in type") }
                typeIndex[name] = typeNodes.count
                typeNodes.append((name, v))
            }
        }
        guard let frameNode = top[k: "frame"] else { throw fail(root, "missing 'frame' (the frame layout)") }
        let frameIndex = typeNodes.count
        typeIndex["_frame"] = frameIndex
        typeNodes.append(("_frame", frameNode))
        types = typeNodes.map { TypeDef(name: $0.0, line: $0.1.mark?.line ?? 0, fields: []) }
        for (i, (name, node)) in typeNodes.enumerated() {
            let fields = try compileFields(node, typeName: name)
            types[i].fields = fields
        }
        try checkCycles()
        try markSelectors(frame: frameIndex)
        try checkReferences(frame: frameIndex)
        // In advertising plugins bit fields read as fields of the message (`battery`, not
        // `status.battery`), as Home Assistant names them.
        if matches.contains(where: { $0.advertising != nil }) {
            for t in types.indices { for i in types[t].fields.indices where !types[t].fields[i].bits.isEmpty { types[t].fields[i].flatten = true } }
        }
        // Decided once: which fields a decode keeps the raw value of for re-encoding.
        for t in types.indices {
            for i in types[t].fields.indices {
                let f = types[t].fields[i]
                types[t].fields[i].keepsRaw = (f.hidden || f.flatten || (f.number?.na.count ?? 0) > 1) && !f.isSelector
            }
        }
        let contextUse = self.contextUse()
        if !matches.contains(where: { $0.advertising != nil }), let c = contextUse.first {
            throw fail(root, "'\(c)' is advertising context, and this plugin matches no advertising data")
        }

        var plugin = Plugin(
            id: id, name: try top[k: "name"].map { n throws(PluginError) in try string(n, "name") } ?? id,
            path: path, reference: try top[k: "reference"].map { n throws(PluginError) in try string(n, "reference") },
            matches: matches, framing: nil, rules: [], examples: [], types: types, enums: enums,
            frameType: frameIndex,
            defaultMessage: try top[k: "message"].map { n throws(PluginError) in try string(n, "message") } ?? "frame")
        plugin.idLine = idNode.mark?.line ?? 0
        plugin.contextUse = contextUse
        plugin.decrypts = types.contains { $0.fields.contains { $0.decrypt.map { !$0.hasPrefix("unsupported:") } ?? false } }
        plugin.flattens = types.contains { $0.fields.contains { $0.flatten && $0.bits.isEmpty } }
        plugin.joins = types.contains { $0.fields.contains { if case .join = $0.kind { true } else { false } } }
        if let f = top[k: "framing"] { plugin.framing = try compileFraming(f) }
        if let r = top[k: "rules"] { plugin.rules = try compileRules(r, plugin: plugin) }
        if let e = top[k: "examples"] { plugin.examples = try compileExamples(e) }
        return plugin
    }

    static func builtinType(_ name: String) -> Bool {
        parseIntType(name, default: .little) != nil || parseOtherType(name, default: .little) != nil
            || ["str", "strz", "bytes", "vlq"].contains(name)
    }

    /// f2/f4/f8, sfloat, float (IEEE 11073), mac, uuid, each with an optional le/be suffix.
    static func parseOtherType(_ name: String, default e: Endianness) -> FieldKind? {
        var base = Substring(name), endian = e
        if name.hasSuffix("le") { base = base.dropLast(2); endian = .little } else if name.hasSuffix("be") { base = base.dropLast(2); endian = .big }
        switch base {
        case "f2": return .real(.ieee(2), endian)
        case "f4": return .real(.ieee(4), endian)
        case "f8": return .real(.ieee(8), endian)
        case "sfloat": return .real(.sfloat, endian)
        case "float": return .real(.float11073, endian)
        case "mac": return .mac(endian)
        case "uuid": return .uuid(endian)
        default: return nil
        }
    }

    /// u1…u8 / s1…s8 with optional le/be suffix.
    static func parseIntType(_ name: String, default e: Endianness) -> IntKind? {
        if name == "vlq" { return .vlq }
        let c = Array(name.utf8)
        guard c.count >= 2, c[0] == 0x75 || c[0] == 0x73, (0x31...0x38).contains(c[1]) else { return nil }
        var endian = e
        if c.count == 4 {
            switch name.suffix(2) {
            case "le": endian = .little
            case "be": endian = .big
            default: return nil
            }
        } else if c.count != 2 {
            return nil
        }
        return .fixed(size: Int(c[1] - 0x30), signed: c[0] == 0x73, endian: endian)
    }

    mutating func compileEnums(_ n: Node) throws(PluginError) {
        for (k, v) in try mapping(n, "enums") {
            let name = try string(k, "enum name")
            var values: [(Int64, String)] = []
            for (vk, vv) in try mapping(v, "enum '\(name)'") {
                values.append((try integer(vk, "enum value"), try string(vv, "enum label")))
            }
            enumIndex[name] = enums.count
            enums.append(EnumDef(name: name, values: values))
        }
    }

    func compileMatches(_ n: Node) throws(PluginError) -> [PluginMatch] {
        guard let seq = n.sequence else { throw fail(n, "match must be a list") }
        var out: [PluginMatch] = []
        for item in seq {
            let m = try mapping(item, "a match rule")
            if m[k: "company"] != nil || m[k: "service_data"] != nil {
                out.append(try compileAdvertisingMatch(m, item))
                continue
            }
            if let mesh = m[k: "mesh"] {
                out.append(try compileMeshMatch(m, mesh))
                continue
            }
            try checkKeys(
                m,
                [
                    "service", "characteristic", "handle", "direction", "directions", "rfcomm_channel", "rfcomm_dlci",
                    "rfcomm_service", "psm"
                ], "a match rule")
            // One target per rule: a characteristic, or a Classic channel named one of four ways.
            let targets = ["characteristic", "rfcomm_channel", "rfcomm_dlci", "rfcomm_service", "psm"].filter { m[$0] != nil }
            if targets.count > 1, let second = m[targets[1]] {
                throw fail(second, "a match rule names one of characteristic, rfcomm_channel, rfcomm_dlci, rfcomm_service, psm")
            }
            var channel: PluginChannel?
            if let n = m[k: "rfcomm_channel"] {
                let v = try integer(n, "rfcomm_channel")
                guard (1...30).contains(v) else { throw fail(n, "rfcomm_channel must be 1-30") }
                channel = .rfcomm(UInt8(v))
            }
            if let n = m[k: "rfcomm_dlci"] {
                // RFCOMM 1.2 §5.4 / TS 07.10 §5.6: DLCI = server channel << 1 | direction bit.
                let v = try integer(n, "rfcomm_dlci")
                guard (2...61).contains(v) else { throw fail(n, "rfcomm_dlci must be 2-61 (0 is the multiplexer)") }
                channel = .rfcomm(UInt8(v >> 1))
            }
            if let n = m[k: "rfcomm_service"] {
                let v = try string(n, "rfcomm_service")
                guard !v.isEmpty else { throw fail(n, "rfcomm_service must name a service") }
                channel = .rfcommService(v)
            }
            if let n = m[k: "psm"] {
                let v = try integer(n, "psm")
                guard (1...0xFFFF).contains(v), v & 1 == 1 else { throw fail(n, "psm must be odd, 0x0001-0xffff") }
                channel = .psm(UInt16(v))
            }
            var service: BluetoothUUID?
            if let s = m[k: "service"] {
                guard let u = BluetoothUUID(string: try string(s, "service")) else { throw fail(s, "bad service UUID") }
                service = u
            }
            var c = BluetoothUUID(0)
            if let cn = m[k: "characteristic"] {
                guard let u = BluetoothUUID(string: try string(cn, "characteristic")) else { throw fail(cn, "bad characteristic UUID") }
                c = u
            } else if channel == nil {
                throw fail(item, "a match rule needs 'characteristic' (or 'rfcomm_channel', 'rfcomm_dlci', 'rfcomm_service', 'psm', 'company', 'service_data', 'mesh')")
            }
            var handle: UInt16?
            if let h = m[k: "handle"] {
                let v = try integer(h, "handle")
                guard (1...0xFFFF).contains(v) else { throw fail(h, "handle out of range") }
                handle = UInt16(v)
                guard service != nil else { throw fail(h, "a handle override needs 'service' too (it names the handle)") }
            }
            var dirs = Set<PluginDirection>()
            for dn in [m[k: "direction"], m[k: "directions"]].compactMap({ $0 }) {
                for d in dn.sequence.map(Array.init) ?? [dn] {
                    guard let dir = PluginDirection(rawValue: try string(d, "direction")) else {
                        throw fail(d, "direction must be write, notify, indicate or read")
                    }
                    dirs.insert(dir)
                }
            }
            if dirs.isEmpty { dirs = Set(PluginDirection.allCases) }
            if channel != nil, handle != nil || service != nil { throw fail(item, "service and handle apply to characteristics, not channels") }
            out.append(PluginMatch(service: service, characteristic: c, handle: handle, directions: dirs, channel: channel))
        }
        if out.isEmpty { throw fail(n, "match is empty") }
        return out
    }

    /// `mesh: { company: 0x0059, opcode: 0xCA }`: a vendor model's access messages (Mesh
    /// Protocol v1.1 §3.7.3.1: a 3-octet opcode is 0b11xxxxxx, then the company identifier,
    /// little-endian). `opcode` is that first octet (0xC0-0xFF) or its six bits (0x00-0x3F);
    /// without it, every vendor opcode of the company. The plugin decodes the whole access
    /// message, opcode first.
    func compileMeshMatch(_ m: Node.Mapping, _ n: Node) throws(PluginError) -> PluginMatch {
        try checkKeys(m, ["mesh", "doc"], "a mesh match rule")
        let t = try mapping(n, "mesh")
        try checkKeys(t, ["company", "opcode"], "mesh")
        guard let c = t[k: "company"] else { throw fail(n, "mesh needs 'company' (the vendor's company identifier)") }
        let company = try integer(c, "company")
        guard (0...0xFFFF).contains(company) else { throw fail(c, "mesh company must be 0x0000-0xffff") }
        var opcode: UInt8?
        if let o = t[k: "opcode"] {
            guard let v = MeshOpcode.vendorFirstOctet(Int(clamping: try integer(o, "opcode"))) else {
                throw fail(o, "mesh opcode must be a vendor opcode's first octet, 0xc0-0xff (or its six bits, 0x00-0x3f)")
            }
            opcode = v
        }
        return PluginMatch(
            service: nil, characteristic: BluetoothUUID(0), handle: nil, directions: Set(PluginDirection.allCases),
            channel: .mesh(company: UInt16(company), opcode: opcode))
    }

    /// `company: 0xEC88 | any` or `service_data: UUID`, with `prefix`, `size`, `name`, `uuid`,
    /// `with_company` (docs/plugin-advertising-design.md §1).
    func compileAdvertisingMatch(_ m: Node.Mapping, _ item: Node) throws(PluginError) -> PluginMatch {
        try checkKeys(m, ["company", "service_data", "prefix", "size", "name", "uuid", "with_company", "also", "doc"], "an advertising match rule")
        if m[k: "company"] != nil && m[k: "service_data"] != nil {
            throw fail(item, "a match rule names one of company, service_data")
        }
        var a: AdvertisingMatch
        if let c = m[k: "company"] {
            if c.scalar?.string == "any" {
                a = AdvertisingMatch(target: .company(nil))
            } else {
                let v = try integer(c, "company")
                guard (0...0xFFFF).contains(v) else { throw fail(c, "company must be 0x0000-0xffff or any") }
                a = AdvertisingMatch(target: .company(UInt16(v)))
            }
        } else {
            let n = m[k: "service_data"]!
            guard let u = BluetoothUUID(string: try string(n, "service_data")) else { throw fail(n, "bad service_data UUID") }
            a = AdvertisingMatch(target: .serviceData(u))
        }
        if let p = m[k: "prefix"] { (a.prefix, a.prefixMask) = try maskedPrefix(p) }
        if let sz = m[k: "size"] {
            if let seq = sz.sequence {
                guard seq.count == 2 else { throw fail(sz, "size must be N or [MIN, MAX]") }
                let lo = try integer(seq[0], "size"), hi = try integer(seq[1], "size")
                guard lo >= 0, lo <= hi, hi <= 65535 else { throw fail(sz, "size range out of order") }
                a.size = Int(lo)...Int(hi)
            } else {
                let v = try integer(sz, "size")
                guard (0...65535).contains(v) else { throw fail(sz, "size out of range") }
                a.size = Int(v)...Int(v)
            }
        }
        if let n = m[k: "name"] {
            let pattern = try string(n, "name")
            do { _ = try Regex(pattern) } catch { throw fail(n, "name: bad regular expression '\(pattern)'") }
            a.name = pattern
        }
        if let u = m[k: "uuid"] {
            guard let v = BluetoothUUID(string: try string(u, "uuid")) else { throw fail(u, "bad uuid") }
            a.uuid = v
        }
        if let an = m[k: "also"] {
            let am = try mapping(an, "also")
            try checkKeys(am, ["company", "service_data", "prefix"], "also")
            var f: AlsoFilter
            if let c = am[k: "company"] {
                let v = try integer(c, "company")
                guard (0...0xFFFF).contains(v) else { throw fail(c, "company must be 0x0000-0xffff") }
                f = AlsoFilter(target: .company(UInt16(v)))
            } else if let sd = am[k: "service_data"] {
                guard let u = BluetoothUUID(string: try string(sd, "service_data")) else { throw fail(sd, "bad service_data UUID") }
                f = AlsoFilter(target: .serviceData(u))
            } else {
                throw fail(an, "also names company or service_data")
            }
            if let p = am[k: "prefix"] { f.prefix = try byteList(p, "prefix") }
            a.also = f
        }
        if let w = m[k: "with_company"] {
            a.withCompany = try bool(w, "with_company")
            guard case .company = a.target else { throw fail(w, "with_company applies to company rules") }
        }
        return PluginMatch(service: nil, characteristic: BluetoothUUID(0), handle: nil, directions: [.notify], advertising: a)
    }

    func compileFraming(_ n: Node) throws(PluginError) -> FramingSpec {
        let m = try mapping(n, "framing")
        try checkKeys(m, ["length", "terminator", "start", "timeout_ms", "max_size"], "framing")
        var f = FramingSpec()
        if let l = m[k: "length"] {
            let lm = try mapping(l, "framing.length")
            try checkKeys(lm, ["offset", "type", "adjust"], "framing.length")
            let offset = try lm[k: "offset"].map { n throws(PluginError) in try integer(n, "offset") } ?? 0
            let typeName = try lm[k: "type"].map { n throws(PluginError) in try string(n, "type") } ?? "u1"
            guard let k = Self.parseIntType(typeName, default: endian), case let kind = k else { throw fail(lm[k: "type"], "framing.length.type must be an integer type") }
            let adjust = try lm[k: "adjust"].map { n throws(PluginError) in try integer(n, "adjust") } ?? 0
            guard (0...64).contains(offset) else { throw fail(l, "framing.length.offset out of range") }
            switch kind {
            case .vlq: f.length = .field(offset: Int(offset), size: 0, endian: .little, adjust: Int(adjust))
            case .fixed(let size, _, let e): f.length = .field(offset: Int(offset), size: size, endian: e, adjust: Int(adjust))
            }
        }
        if let t = m[k: "terminator"] { f.terminator = try byteList(t, "terminator") }
        if let s = m[k: "start"] { f.start = try byteList(s, "start") }
        if let t = m[k: "timeout_ms"] { f.timeoutMicroseconds = try integer(t, "timeout_ms") * 1000 }
        if let s = m[k: "max_size"] { f.maxSize = Int(max(1, min(1 << 20, try integer(s, "max_size")))) }
        if f.length == nil && f.terminator == nil { throw fail(n, "framing needs 'length' or 'terminator'") }
        return f
    }
}

extension Node.Mapping {
    /// A key's value by its text: Yams' String subscript builds a node and compares whole
    /// nodes, a fifth of compiling the shipped plugins at every start.
    subscript(k key: String) -> Node? {
        for (k, v) in self where k.scalar?.string == key { return v }
        return nil
    }
}
