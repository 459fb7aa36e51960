import BluesiftWire

/// An access layer opcode (Mesh Protocol v1.1 §3.7.3.1, Table 3.58): 1 octet 0b0xxxxxxx
/// (0x7F reserved), 2 octets 0b10xxxxxx xxxxxxxx, 3 octets 0b11xxxxxx + a 16-bit company
/// identifier (little-endian). `rawValue` holds the octets as sent, big-endian (0x8202).
public struct MeshOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Config Composition Data Status (§4.3.2.5): the node describes itself.
    public static let configCompositionDataStatus = Self(rawValue: 0x02)

    public var size: Int { rawValue > 0xFFFF ? 3 : rawValue > 0xFF ? 2 : 1 }
    /// The company of a vendor (3-octet) opcode.
    public var companyID: UInt16? { size == 3 ? UInt16(rawValue & 0xFF) << 8 | UInt16(rawValue >> 8 & 0xFF) : nil }

    /// The opcode at the start of an access payload and its size.
    public static func decode(_ b: [UInt8]) throws(DecodeError) -> MeshOpcode {
        try meshNeed(b, 1, "access opcode")
        switch b[0] >> 6 {
        case 0, 1:
            guard b[0] != 0x7F else { throw meshError(.invalidValue, 0, "opcode 0x7f is reserved") }
            return MeshOpcode(rawValue: UInt32(b[0]))
        case 2:
            try meshNeed(b, 2, "2-octet access opcode")
            return MeshOpcode(rawValue: meshBE(b, 0, 2))
        default:
            try meshNeed(b, 3, "3-octet access opcode")
            return MeshOpcode(rawValue: meshBE(b, 0, 3))
        }
    }

    public func encode() -> [UInt8] { meshPutBE(rawValue, size) }

    /// A vendor opcode's first octet (0b11xxxxxx) from that octet or from its six bits alone
    /// (the form Zephyr's `BT_MESH_MODEL_OP_3` takes); nil for anything else.
    public static func vendorFirstOctet(_ v: Int) -> UInt8? {
        switch v {
        case 0x00...0x3F: 0xC0 | UInt8(v)
        case 0xC0...0xFF: UInt8(v)
        default: nil
        }
    }

    public var name: String {
        if let e = MeshAccessCatalog.entries[rawValue] { return e.name }
        if size == 3 { return "Vendor" }
        return "Unknown"
    }
    public var description: String { name }
}

/// How one field of a model message is laid out (access parameters are little-endian,
/// Mesh Protocol v1.1 §3.7.3). Names are the specification's field names in snake case.
public indirect enum MeshField: Sendable {
    case u8(StaticString), u16(StaticString), s16(StaticString), u24(StaticString), u32(StaticString), s32(StaticString), u40(StaticString)
    case bytes(StaticString, Int)
    /// A key: shown only when asked (`MeshAccessMessage.showKeys`).
    case secret(StaticString, Int)
    /// Whatever is left, as hex.
    case rest(StaticString)
    /// SIG (2 octets) or vendor (company ‖ model, 4 octets) Model Identifier, whatever is left.
    case model
    /// NetKeyIndex and AppKeyIndex packed in 3 octets (§4.3.1.1).
    case keyPair
    /// Key indexes packed two in 3 octets, the first in the upper 12 bits, an odd last one
    /// in 2 (§4.3.1.1), to the end.
    case keyIndexes(StaticString)
    /// A 12-bit NetKey or AppKey index in 2 octets; RFU bits, when set, follow as `rfu`.
    case keyIndex(StaticString)
    /// 16-bit values to the end.
    case u16s(StaticString)
    /// An integer of `size` octets split into bit fields (name, shift, width).
    case bits(Int, [BitField])
    /// Fields present together or not at all, at the end (transition time and delay).
    case optional([MeshField])
    /// A configuration status code with its name (Table 4.296).
    case status
    /// Composition Data (§4.2.2): Page, then page 0 read element by element.
    case composition
    /// Marshalled sensor data (Mesh Model v1.1 §4.2.14).
    case sensorData
    /// Sensor descriptors of 8 octets (Mesh Model v1.1 §4.2.2).
    case sensorDescriptors

    public struct BitField: Sendable {
        public var name: StaticString, shift: Int, width: Int
        public init(_ name: StaticString, _ shift: Int, _ width: Int) { self.name = name; self.shift = shift; self.width = width }
    }
}

/// One decoded field value.
public enum MeshFieldValue: Sendable, Hashable {
    case int(Int)
    case bytes([UInt8])
    case secret([UInt8])
    case list([Int])
    case status(UInt8)
    case composition([UInt8])
    case sensorData([UInt8])
    case sensorDescriptors([UInt8])
}

/// An access message (Mesh Protocol v1.1 §3.7.3): Opcode ‖ Parameters, decoded field by
/// field from the catalogue of SIG model messages.
public struct MeshAccessMessage: Sendable, Hashable {
    public var opcode: MeshOpcode
    public var parameters: [UInt8]
    /// Key fields (AppKey Add, NetKey Add, ...) shown only when set, like `--vendor-keys`.
    public var showKeys = false

    public init(opcode: MeshOpcode, parameters: [UInt8]) { self.opcode = opcode; self.parameters = parameters }

    public init(decoding b: [UInt8]) throws(DecodeError) {
        opcode = try MeshOpcode.decode(b)
        parameters = Array(b[opcode.size...])
    }

    public func encode() -> [UInt8] { opcode.encode() + parameters }

    /// Where its key fields lie in the access payload (Opcode ‖ Parameters): AppKey and NetKey
    /// Add/Update (§4.3.2.37, §4.3.2.38, §4.3.2.31, §4.3.2.32), which `redact` zeroes. Keys
    /// follow fixed-size fields only; none for a message too short to hold them.
    public var secretRanges: [Range<Int>] {
        guard let e = MeshAccessCatalog.entries[opcode.rawValue] else { return [] }
        var out: [Range<Int>] = []
        var i = opcode.size
        for f in e.fields {
            let n: Int
            switch f {
            case .u8: n = 1
            case .u16, .s16, .keyIndex: n = 2
            case .u24, .keyPair: n = 3
            case .u32, .s32: n = 4
            case .u40: n = 5
            case .bytes(_, let size): n = size
            case .secret(_, let size): n = size; out.append(i..<i + size)
            default: return out.filter { $0.upperBound <= opcode.size + parameters.count }
            }
            i += n
        }
        return out.filter { $0.upperBound <= opcode.size + parameters.count }
    }

    /// The fields of a catalogued message, in order; nil for an opcode not in the catalogue.
    public func fields() throws(DecodeError) -> [(name: StaticString, value: MeshFieldValue)]? {
        guard let e = MeshAccessCatalog.entries[opcode.rawValue] else { return nil }
        var out: [(name: StaticString, value: MeshFieldValue)] = []
        out.reserveCapacity(e.fields.count) // one allocation, not one per doubling
        var i = 0
        try Self.read(e.fields, parameters, &i, &out)
        guard i == parameters.count else {
            throw meshError(.invalidLength, opcode.size + i, "\(opcode.name): \(parameters.count - i) octets left over")
        }
        return out
    }

    static func le(_ b: [UInt8], _ at: Int, _ n: Int) -> Int {
        var v = 0
        for k in (0..<n).reversed() { v = v << 8 | Int(b[at + k]) }
        return v
    }

    static func read(_ layout: [MeshField], _ b: [UInt8], _ i: inout Int, _ out: inout [(name: StaticString, value: MeshFieldValue)]) throws(DecodeError) {
        func need(_ n: Int, _ what: StaticString) throws(DecodeError) {
            guard b.count - i >= n else { throw meshError(.truncated, i, "\(what): \(b.count - i) octets left, needs \(n)") }
        }
        func int(_ name: StaticString, _ n: Int, signed: Bool = false) throws(DecodeError) {
            try need(n, name)
            var v = le(b, i, n)
            if signed, v >= 1 << (8 * n - 1) { v -= 1 << (8 * n) }
            out.append((name, .int(v))); i += n
        }
        for f in layout {
            switch f {
            case .u8(let n): try int(n, 1)
            case .u16(let n): try int(n, 2)
            case .s16(let n): try int(n, 2, signed: true)
            case .u24(let n): try int(n, 3)
            case .u32(let n): try int(n, 4)
            case .s32(let n): try int(n, 4, signed: true)
            case .u40(let n): try int(n, 5)
            case .bytes(let n, let size): try need(size, n); out.append((n, .bytes(Array(b[i..<(i + size)])))); i += size
            case .secret(let n, let size): try need(size, n); out.append((n, .secret(Array(b[i..<(i + size)])))); i += size
            case .rest(let n): out.append((n, .bytes(Array(b[i...])))); i = b.count
            case .model:
                switch b.count - i {
                case 2: try int("model_id", 2)
                case 4: try int("company_id", 2); try int("model_id", 2)
                default: throw meshError(.invalidLength, i, "model identifier: \(b.count - i) octets, needs 2 or 4")
                }
            case .keyPair:
                try need(3, "key indexes")
                let v = le(b, i, 3)
                out.append(("net_key_index", .int(v & 0xFFF))); out.append(("app_key_index", .int(v >> 12))); i += 3
            case .keyIndexes(let n):
                var l: [Int] = []
                while b.count - i >= 3 { let v = le(b, i, 3); l += [v >> 12, v & 0xFFF]; i += 3 }
                if b.count - i == 2 { l.append(le(b, i, 2) & 0xFFF); i += 2 }
                guard i == b.count else { throw meshError(.invalidLength, i, "key index list: 1 octet left over") }
                out.append((n, .list(l)))
            case .keyIndex(let n):
                try need(2, n)
                let v = le(b, i, 2)
                out.append((n, .int(v & 0xFFF)))
                if v >> 12 != 0 { out.append(("rfu", .int(v >> 12))) }
                i += 2
            case .u16s(let n):
                guard (b.count - i) % 2 == 0 else { throw meshError(.invalidLength, i, "address list: odd length") }
                var l: [Int] = []
                while i < b.count { l.append(le(b, i, 2)); i += 2 }
                out.append((n, .list(l)))
            case .bits(let size, let parts):
                try need(size, "bit field")
                let v = le(b, i, size)
                for p in parts { out.append((p.name, .int(v >> p.shift & (1 << p.width - 1)))) }
                i += size
            case .optional(let group):
                if i < b.count { try read(group, b, &i, &out) }
            case .status: try need(1, "status"); out.append(("status", .status(b[i]))); i += 1
            case .composition: out.append(("data", .composition(Array(b[i...])))); i = b.count
            case .sensorData: out.append(("sensor_data", .sensorData(Array(b[i...])))); i = b.count
            case .sensorDescriptors: out.append(("descriptors", .sensorDescriptors(Array(b[i...])))); i = b.count
            }
        }
    }

    /// The inverse of `fields()`: the parameters of `opcode` from its field values in order.
    public static func encode(opcode: MeshOpcode, fields values: [(name: StaticString, value: MeshFieldValue)]) -> [UInt8]? {
        guard let e = MeshAccessCatalog.entries[opcode.rawValue] else { return nil }
        var out: [UInt8] = []
        var k = 0
        write(e.fields, values, &k, &out)
        return k == values.count ? opcode.encode() + out : nil
    }

    static func write(_ layout: [MeshField], _ v: [(name: StaticString, value: MeshFieldValue)], _ k: inout Int, _ out: inout [UInt8]) {
        func next() -> MeshFieldValue? { k < v.count ? v[k].value : nil }
        func int(_ n: Int) {
            guard case .int(let x)? = next() else { return }
            for s in 0..<n { out.append(UInt8(truncatingIfNeeded: x >> (8 * s))) }
            k += 1
        }
        for f in layout {
            switch f {
            case .u8: int(1)
            case .u16, .s16: int(2)
            case .u24: int(3)
            case .u32, .s32: int(4)
            case .u40: int(5)
            case .bytes, .secret, .rest, .composition, .sensorData, .sensorDescriptors:
                switch next() {
                case .bytes(let b)?, .secret(let b)?, .composition(let b)?, .sensorData(let b)?, .sensorDescriptors(let b)?: out += b; k += 1
                default: break
                }
            case .model:
                if k < v.count, v[k].name.description == "company_id" { int(2) }
                int(2)
            case .keyPair:
                guard k + 1 < v.count, case .int(let a) = v[k].value, case .int(let b) = v[k + 1].value else { return }
                let x = a & 0xFFF | (b & 0xFFF) << 12
                out += [UInt8(x & 0xFF), UInt8(x >> 8 & 0xFF), UInt8(x >> 16 & 0xFF)]; k += 2
            case .keyIndexes:
                guard case .list(let l)? = next() else { return }
                var j = 0
                while j + 1 < l.count { let x = l[j + 1] & 0xFFF | (l[j] & 0xFFF) << 12; out += [UInt8(x & 0xFF), UInt8(x >> 8 & 0xFF), UInt8(x >> 16 & 0xFF)]; j += 2 }
                if j < l.count { out += [UInt8(l[j] & 0xFF), UInt8(l[j] >> 8 & 0x0F)] }
                k += 1
            case .keyIndex:
                guard case .int(let x)? = next() else { return }
                k += 1
                var rfu = 0
                if k < v.count, v[k].name.description == "rfu", case .int(let r) = v[k].value { rfu = r; k += 1 }
                out += [UInt8(x & 0xFF), UInt8(x >> 8 & 0x0F) | UInt8(rfu & 0x0F) << 4]
            case .u16s:
                guard case .list(let l)? = next() else { return }
                for x in l { out += [UInt8(x & 0xFF), UInt8(x >> 8 & 0xFF)] }
                k += 1
            case .bits(let size, let parts):
                var x = 0
                for p in parts { if case .int(let y)? = next() { x |= (y & (1 << p.width - 1)) << p.shift; k += 1 } }
                for s in 0..<size { out.append(UInt8(truncatingIfNeeded: x >> (8 * s))) }
            case .optional(let group):
                if k < v.count { write(group, v, &k, &out) }
            case .status:
                if case .status(let s)? = next() { out.append(s); k += 1 }
            }
        }
    }

    // MARK: description

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(opcode.rawValue)); sink.string("name", opcode.name)
        if let c = opcode.companyID { sink.int("company_id", Int(c)); sink.optionalString("company_name", AssignedNumbers.companyName(c)) }
        let decoded: [(name: StaticString, value: MeshFieldValue)]?
        do { decoded = try fields() } catch {
            sink.hex("parameters", parameters); sink.string("error", error.message); return
        }
        guard let decoded else { if !parameters.isEmpty { sink.hex("parameters", parameters) }; return }
        // Generic Property and Sensor messages (1-octet opcodes 0x43-0x5B) carry values of a
        // Mesh Device Property; the last *property_id names the value after it.
        let carriesProperties = (0x43...0x5B).contains(opcode.rawValue)
        var propertyID = -1
        for (name, v) in decoded {
            let key = FieldKey.literal(name)
            switch v {
            case .int(let x):
                sink.int(key, x)
                if carriesProperties, name.description.hasSuffix("property_id") { propertyID = x }
            case .bytes(let b):
                sink.hex(key, b)
                guard carriesProperties else { break }
                switch name.description {
                case "columns", "series", "cadence": MeshSensor.describeSensorBlock(name.description, propertyID, b, into: &sink)
                case let n where n.hasSuffix("property_value") || n == "setting_raw": MeshSensor.describePropertyValue(propertyID, b, into: &sink)
                default: break
                }
            case .secret(let b): if showKeys { sink.hex(key, b) } else { sink.string(key, "(hidden; --mesh-keys-shown to print)") }
            case .list(let l): sink.array(key) { s in for x in l { s.int("", x) } }
            case .status(let s): sink.int("status", Int(s)); sink.string("status_name", MeshStatusCode(rawValue: s).name)
            case .composition(let b): MeshComposition.describe(b, into: &sink)
            case .sensorData(let b): MeshSensor.describeData(b, into: &sink)
            case .sensorDescriptors(let b): MeshSensor.describeDescriptors(b, into: &sink)
            }
        }
    }

    /// "Generic OnOff Set onoff=1 tid=0": the name and the first few integer fields.
    public var summaryText: String {
        var s = opcode.name
        if opcode.size == 3 { s += " " + Hex.fixed(UInt64(opcode.rawValue), width: 6) }
        if let f = try? fields() {
            for (name, v) in f.prefix(4) {
                switch v {
                case .int(let x): s += " \(name)=\(x)"
                case .status(let x): s += " status=" + MeshStatusCode(rawValue: x).name
                default: break
                }
            }
        }
        return s
    }
}

/// Composition Data (Mesh Protocol v1.1 §4.2.2): page 0 and 128 (§4.2.2.1, §4.2.2.4) element
/// by element, page 1 and 129 (§4.2.2.2, §4.2.2.5) model relationships, page 2 and 130
/// (§4.2.2.3, §4.2.2.6) mesh profiles; other pages as hex.
enum MeshComposition {
    static func describe<S: FieldSink>(_ b: [UInt8], into sink: inout S) {
        guard let page = b.first else { return }
        sink.int("page", Int(page))
        switch page {
        case 1, 129: describePage1(b, into: &sink); return
        case 2, 130: describePage2(b, into: &sink); return
        default: break
        }
        guard page == 0 || page == 128, b.count >= 11 else { sink.hex("data", Array(b.dropFirst())); return }
        func le(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
        sink.int("cid", le(1)); sink.optionalString("company_name", AssignedNumbers.companyName(UInt16(le(1))))
        sink.int("pid", le(3)); sink.int("vid", le(5)); sink.int("crpl", le(7)); sink.int("features", le(9))
        sink.array("feature_names") { s in
            for (bit, n) in ["relay", "proxy", "friend", "low_power"].enumerated() where le(9) & (1 << bit) != 0 { s.string("", n) }
        }
        var i = 11
        sink.array("elements") { s in
            while i + 4 <= b.count {
                let loc = le(i), ns = Int(b[i + 2]), nv = Int(b[i + 3])
                guard i + 4 + 2 * ns + 4 * nv <= b.count else { break }
                s.object("") { e in
                    e.int("loc", loc)
                    e.array("sig_models") { m in
                        for k in 0..<ns {
                            let id = le(i + 4 + 2 * k)
                            m.object("") { o in
                                o.int("model_id", id); o.optionalString("name", MeshModels.name(UInt16(id)))
                            }
                        }
                    }
                    e.array("vendor_models") { m in
                        for k in 0..<nv {
                            let at = i + 4 + 2 * ns + 4 * k
                            m.object("") { o in
                                o.int("company_id", le(at)); o.int("model_id", le(at + 2))
                            }
                        }
                    }
                }
                i += 4 + 2 * ns + 4 * nv
            }
        }
        if i < b.count { sink.hex("trailing", Array(b[i...])) }
    }

    /// Page 1 (§4.2.2.2): per element Num_S ‖ Num_V ‖ a Model Item per model, each a header
    /// (Corresponding_Group_ID_Present bit 0, Format bit 1, Extended_Items_Count bits 2-7),
    /// the Corresponding_Group_ID when present, then its Extended Model Items: short (1 octet,
    /// Element_Offset signed bits 0-2, Model_Item_Index bits 3-7) or long (2 octets, signed
    /// Element_Offset ‖ Model_Item_Index).
    static func describePage1<S: FieldSink>(_ b: [UInt8], into sink: inout S) {
        // The size of one model item at `at`, nil when it runs past the end.
        func itemSize(_ at: Int) -> Int? {
            guard at < b.count else { return nil }
            let h = b[at], n = 1 + Int(h & 1) + Int(h >> 2) * (h & 2 != 0 ? 2 : 1)
            return at + n <= b.count ? n : nil
        }
        func item<T: FieldSink>(_ at: Int, into s: inout T) {
            let h = b[at], long = h & 2 != 0, count = Int(h >> 2)
            s.object("") { o in
                o.int("corresponding_group_id_present", Int(h & 1)); o.int("format", long ? 1 : 0)
                o.int("extended_items_count", count)
                var k = at + 1
                if h & 1 != 0 { o.int("corresponding_group_id", Int(b[k])); k += 1 }
                o.array("extended_model_items") { e in
                    for _ in 0..<count {
                        e.object("") { x in
                            if long {
                                x.int("element_offset", Int(Int8(bitPattern: b[k]))); x.int("model_item_index", Int(b[k + 1])); k += 2
                            } else {
                                let v = Int(b[k] & 7)
                                x.int("element_offset", v >= 4 ? v - 8 : v); x.int("model_item_index", Int(b[k] >> 3)); k += 1
                            }
                        }
                    }
                }
            }
        }
        var i = 1
        sink.array("elements") { s in
            while i + 2 <= b.count {
                let ns = Int(b[i]), nv = Int(b[i + 1])
                // The element's items must all fit before any is written.
                var sizes: [Int] = []
                var at = i + 2
                for _ in 0..<(ns + nv) {
                    guard let n = itemSize(at) else { break }
                    sizes.append(n); at += n
                }
                guard sizes.count == ns + nv else { break }
                s.object("") { e in
                    e.int("num_s", ns); e.int("num_v", nv)
                    var k = i + 2
                    e.array("sig_models") { m in for j in 0..<ns { item(k, into: &m); k += sizes[j] } }
                    e.array("vendor_models") { m in for j in ns..<(ns + nv) { item(k, into: &m); k += sizes[j] } }
                }
                i = at
            }
        }
        if i < b.count { sink.hex("trailing", Array(b[i...])) }
    }

    /// Page 2 (§4.2.2.3): Mesh Profile records, each Mesh_Profile_Identifier (2) ‖ Version
    /// X, Y, Z (1 each) ‖ Num_Element_Offsets (1) ‖ Element_Offset_List ‖ Additional_Data_Len (2)
    /// ‖ Additional_Data, little-endian.
    static func describePage2<S: FieldSink>(_ b: [UInt8], into sink: inout S) {
        var i = 1
        sink.array("mesh_profiles") { s in
            while i + 6 <= b.count {
                let ne = Int(b[i + 5])
                guard i + 6 + ne + 2 <= b.count else { break }
                let al = Int(b[i + 6 + ne]) | Int(b[i + 7 + ne]) << 8
                guard i + 8 + ne + al <= b.count else { break }
                s.object("") { o in
                    o.int("mesh_profile_identifier", Int(b[i]) | Int(b[i + 1]) << 8)
                    o.int("version_x", Int(b[i + 2])); o.int("version_y", Int(b[i + 3])); o.int("version_z", Int(b[i + 4]))
                    o.int("num_element_offsets", ne)
                    o.array("element_offset_list") { l in for k in 0..<ne { l.int("", Int(b[i + 6 + k])) } }
                    o.int("additional_data_len", al); o.hex("additional_data", Array(b[(i + 8 + ne)..<(i + 8 + ne + al)]))
                }
                i += 8 + ne + al
            }
        }
        if i < b.count { sink.hex("trailing", Array(b[i...])) }
    }
}

/// Sensor messages' marshalled data and descriptors (Mesh Model v1.1 §4.2.14, §4.2.2).
enum MeshSensor {
    static func describeData<S: FieldSink>(_ b: [UInt8], into sink: inout S) {
        var i = 0
        sink.array("sensor_data") { s in
            while i < b.count {
                let formatB = b[i] & 1 != 0
                var len: Int, id: Int
                if formatB {
                    guard i + 3 <= b.count else { break }
                    len = Int(b[i] >> 1) == 0x7F ? 0 : Int(b[i] >> 1) + 1; id = Int(b[i + 1]) | Int(b[i + 2]) << 8; i += 3
                } else {
                    guard i + 2 <= b.count else { break }
                    len = Int(b[i] >> 1 & 0x0F) + 1; id = Int(b[i] >> 5) | Int(b[i + 1]) << 3; i += 2
                }
                guard i + len <= b.count else { i = b.count; break }
                let raw = Array(b[i..<(i + len)])
                s.object("") { o in
                    o.int("format", formatB ? 1 : 0); o.int("length", len); o.int("property_id", id); o.hex("raw_value", raw)
                    _ = MeshDeviceProperty.describeValue(id, raw, into: &o)
                }
                i += len
            }
        }
        if i < b.count { sink.hex("trailing", Array(b[i...])) }
    }

    static func describeDescriptors<S: FieldSink>(_ b: [UInt8], into sink: inout S) {
        if b.count == 2 { sink.int("property_id", Int(b[0]) | Int(b[1]) << 8); return } // property not found
        sink.array("descriptors") { s in
            var i = 0
            while i + 8 <= b.count {
                let tol = Int(b[i + 2]) | Int(b[i + 3]) << 8 | Int(b[i + 4]) << 16
                let id = Int(b[i]) | Int(b[i + 1]) << 8
                s.object("") { o in
                    o.int("property_id", id)
                    if let p = MeshDeviceProperty.lookup(id) { o.string("property_name", p.name.description) }
                    o.int("positive_tolerance", tol & 0xFFF); o.int("negative_tolerance", tol >> 12)
                    // §4.1.1.2-§4.1.1.3: 12-bit tolerances in units of 100/4095 percent, 0 unspecified.
                    if tol & 0xFFF != 0 { o.number("positive_tolerance_percent", MeshDeviceProperty.decimalText(tol & 0xFFF, 100, 4095, 2)) }
                    if tol >> 12 != 0 { o.number("negative_tolerance_percent", MeshDeviceProperty.decimalText(tol >> 12, 100, 4095, 2)) }
                    o.int("sampling_function", Int(b[i + 5])); o.int("measurement_period", Int(b[i + 6]))
                    o.int("update_interval", Int(b[i + 7]))
                    // §4.1.1.5-§4.1.1.6: 1.1^(n-64) seconds, 0 not applicable.
                    for (key, n) in [("measurement_period_seconds", b[i + 6]), ("update_interval_seconds", b[i + 7])] as [(StaticString, UInt8)] where n != 0 {
                        o.number(.literal(key), exponentialSeconds(n))
                    }
                }
                i += 8
            }
        }
    }
}

extension MeshSensor {
    /// 1.1^(n-64) seconds (Mesh Model v1.1 §4.1.1.5), four significant decimals.
    static func exponentialSeconds(_ n: UInt8) -> String {
        var v = 1.0
        let e = Int(n) - 64
        for _ in 0..<abs(e) { v = e < 0 ? v / 1.1 : v * 1.1 }
        return MeshDeviceProperty.decimalText(Int((v * 10000).rounded()), 1, 10000, 4)
    }

    /// A property value (Generic Property, Sensor Setting) in its characteristic's unit, as
    /// `value`; nothing for a property not listed or a value of another size.
    static func describePropertyValue<S: FieldSink>(_ id: Int, _ raw: [UInt8], into sink: inout S) {
        guard let p = MeshDeviceProperty.lookup(id), raw.count == p.format.size else { return }
        sink.object("value") { o in _ = MeshDeviceProperty.describeValue(id, raw, into: &o) }
    }

    /// Sensor Column Status (Mesh Model v1.1 §4.2.13: Raw Value X ‖ Column Width ‖ Raw Value Y)
    /// and Sensor Series Status (§4.2.15: that triple repeated), each value as wide as the
    /// property's characteristic; Sensor Cadence (§4.2.3: Fast Cadence Period Divisor (7) ‖
    /// Status Trigger Type (1) ‖ Status Trigger Delta Down ‖ Delta Up ‖ Status Min Interval (1)
    /// ‖ Fast Cadence Low ‖ Fast Cadence High). Nothing for an unlisted property or a length
    /// that does not fit.
    static func describeSensorBlock<S: FieldSink>(_ name: String, _ id: Int, _ b: [UInt8], into sink: inout S) {
        guard let p = MeshDeviceProperty.lookup(id) else { return }
        let n = p.format.size
        func value<T: FieldSink>(_ key: StaticString, _ at: Int, into o: inout T) {
            o.object(.literal(key)) { v in _ = MeshDeviceProperty.describeValue(id, Array(b[at..<(at + n)]), into: &v) }
        }
        switch name {
        case "columns" where b.count == n || b.count == 3 * n:
            sink.object("column") { o in
                value("raw_value_x", 0, into: &o)
                if b.count == 3 * n { value("column_width", n, into: &o); value("raw_value_y", 2 * n, into: &o) }
            }
        case "series" where b.count % (3 * n) == 0:
            sink.array("series_columns") { s in
                var i = 0
                while i < b.count {
                    s.object("") { o in
                        value("raw_value_x", i, into: &o); value("column_width", i + n, into: &o); value("raw_value_y", i + 2 * n, into: &o)
                    }
                    i += 3 * n
                }
            }
        case "cadence" where b.count >= 1:
            let trigger = Int(b[0] >> 7), dn = trigger == 0 ? n : 2
            guard b.count == 1 + 2 * dn + 1 + 2 * n else { return }
            sink.object("cadence_fields") { o in
                o.int("fast_cadence_period_divisor", Int(b[0] & 0x7F)); o.int("status_trigger_type", trigger)
                for (k, key) in [("status_trigger_delta_down", 0), ("status_trigger_delta_up", 1)] as [(StaticString, Int)] {
                    let at = 1 + key * dn
                    if trigger == 0 {
                        value(k, at, into: &o)
                    } else { // §4.1.3.3: unitless, 0.01 percent
                        o.object(.literal(k)) { v in v.number("percentage", MeshDeviceProperty.decimalText(Int(b[at]) | Int(b[at + 1]) << 8, 1, 100, 2)) }
                    }
                }
                o.int("status_min_interval", Int(b[1 + 2 * dn]))
                value("fast_cadence_low", 2 + 2 * dn, into: &o); value("fast_cadence_high", 2 + 2 * dn + n, into: &o)
            }
        default: break
        }
    }
}

/// SIG model identifiers (Mesh Protocol v1.1 §4.4; Mesh Model v1.1 §7.3, Table 7.3).
public enum MeshModels {
    public static func name(_ id: UInt16) -> String? {
        switch id {
        case 0x0000: "Configuration Server"
        case 0x0001: "Configuration Client"
        case 0x0002: "Health Server"
        case 0x0003: "Health Client"
        case 0x1000: "Generic OnOff Server"
        case 0x1001: "Generic OnOff Client"
        case 0x1002: "Generic Level Server"
        case 0x1003: "Generic Level Client"
        case 0x1004: "Generic Default Transition Time Server"
        case 0x1005: "Generic Default Transition Time Client"
        case 0x1006: "Generic Power OnOff Server"
        case 0x1007: "Generic Power OnOff Setup Server"
        case 0x1008: "Generic Power OnOff Client"
        case 0x1009: "Generic Power Level Server"
        case 0x100A: "Generic Power Level Setup Server"
        case 0x100B: "Generic Power Level Client"
        case 0x100C: "Generic Battery Server"
        case 0x100D: "Generic Battery Client"
        case 0x100E: "Generic Location Server"
        case 0x100F: "Generic Location Setup Server"
        case 0x1010: "Generic Location Client"
        case 0x1100: "Sensor Server"
        case 0x1101: "Sensor Setup Server"
        case 0x1102: "Sensor Client"
        case 0x1200: "Time Server"
        case 0x1201: "Time Setup Server"
        case 0x1202: "Time Client"
        case 0x1203: "Scene Server"
        case 0x1204: "Scene Setup Server"
        case 0x1205: "Scene Client"
        case 0x1206: "Scheduler Server"
        case 0x1207: "Scheduler Setup Server"
        case 0x1208: "Scheduler Client"
        case 0x1300: "Light Lightness Server"
        case 0x1301: "Light Lightness Setup Server"
        case 0x1302: "Light Lightness Client"
        case 0x1303: "Light CTL Server"
        case 0x1304: "Light CTL Setup Server"
        case 0x1305: "Light CTL Client"
        case 0x1306: "Light CTL Temperature Server"
        case 0x1307: "Light HSL Server"
        case 0x1308: "Light HSL Setup Server"
        case 0x1309: "Light HSL Client"
        case 0x130A: "Light HSL Hue Server"
        case 0x130B: "Light HSL Saturation Server"
        case 0x130C: "Light xyL Server"
        case 0x130D: "Light xyL Setup Server"
        case 0x130E: "Light xyL Client"
        case 0x130F: "Light LC Server"
        case 0x1310: "Light LC Setup Server"
        case 0x1311: "Light LC Client"
        default: nil
        }
    }
}
