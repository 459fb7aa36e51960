import BluesiftWire

/// ATT operations a plugin can match: Write Request/Command (host → device), Notification,
/// Indication, Read Response.
public enum PluginDirection: String, Sendable, CaseIterable {
    case write, notify, indicate, read
}

/// Where a plugin applies: a characteristic (by service and characteristic UUID), and for
/// captures without discovery, an optional handle override; or a Classic channel (an RFCOMM
/// server channel or an L2CAP PSM), whose data is matched as `write` when the capture host
/// sent it and `notify` when it received it.
public struct PluginMatch: Sendable, Equatable {
    public var service: BluetoothUUID?
    /// Unused (0000) for channel and advertising matches.
    public var characteristic: BluetoothUUID
    public var handle: UInt16?
    public var directions: Set<PluginDirection>
    public var channel: PluginChannel? = nil
    /// Advertising data: manufacturer-specific data or service data, with its filters.
    public var advertising: AdvertisingMatch? = nil
}

/// An AD structure a plugin decodes (docs/plugin-advertising-design.md §1): Manufacturer
/// Specific Data (AD type 0xFF, CSS Part A §1.4) by company id, or Service Data (AD types
/// 0x16/0x20/0x21, CSS Part A §1.11) by UUID.
public enum AdvertisingTarget: Sendable, Hashable, CustomStringConvertible {
    /// nil: any company id.
    case company(UInt16?)
    case serviceData(BluetoothUUID)
    public var description: String {
        switch self {
        case .company(let c?): "company " + Hex.fixed(UInt64(c), width: 4)
        case .company(nil): "company any"
        case .serviceData(let u): "service data " + u.description
        }
    }
}

/// An advertising match rule: a target and filters that must all hold.
/// `also: { service_data: fd3d, prefix: "34" }` or `also: { company: 0x0969 }`.
public struct AlsoFilter: Sendable, Equatable {
    public var target: AdvertisingTarget
    public var prefix: [UInt8] = []
}

public struct AdvertisingMatch: Sendable, Equatable {
    public var target: AdvertisingTarget
    /// The payload starts with these bytes.
    public var prefix: [UInt8] = []
    /// Per prefix byte, the bits compared (`??` in the YAML: 0x00, any byte); empty when every
    /// byte is fixed. `prefix` holds the bytes already masked.
    public var prefixMask: [UInt8] = []
    public var size: ClosedRange<Int>? = nil
    /// Anchored regular expression over the advertiser's local name.
    public var name: String? = nil
    /// A UUID the advertiser lists in its service UUID AD structures.
    public var uuid: BluetoothUUID? = nil
    /// The payload starts at the company id (with `company`).
    public var withCompany = false
    /// Another AD structure the same report must carry (`also:`): SwitchBot names its model in
    /// service data and puts the readings in manufacturer data.
    public var also: AlsoFilter? = nil

    /// "company 0x004c prefix 0215", "service data fcd2 size 6-20 name GVH.*".
    public var description: String {
        var s = target.description
        if !prefix.isEmpty {
            s +=
                " prefix "
                + (prefixMask.isEmpty
                    ? Hex.string(prefix)
                    : zip(prefix, prefixMask).map { $1 == 0 ? "??" : Hex.string([$0]) }.joined())
        }
        if let z = size { s += " size " + (z.lowerBound == z.upperBound ? "\(z.lowerBound)" : "\(z.lowerBound)-\(z.upperBound)") }
        if let n = name { s += " name " + n }
        if let u = uuid { s += " uuid " + u.description }
        if withCompany { s += " with_company" }
        if let a = also { s += " also " + a.target.description + (a.prefix.isEmpty ? "" : " prefix " + Hex.string(a.prefix)) }
        return s
    }

    /// Selection order among rules for one target: longest prefix, then size, then name or
    /// uuid, then the bare target. A wildcard byte of the prefix says nothing: only fixed bytes count.
    public var fixedPrefixBytes: Int { prefixMask.isEmpty ? prefix.count : prefixMask.filter { $0 != 0 }.count }
    public var specificity: Int {
        fixedPrefixBytes * 8 + (size != nil ? 4 : 0) + (name != nil ? 2 : 0) + (uuid != nil ? 2 : 0) + (also.map { 2 + $0.prefix.count } ?? 0)
    }
}

/// A Classic data channel a plugin can target: an RFCOMM server channel (`rfcomm_channel`, or
/// `rfcomm_dlci` halved), the service SDP advertised on an RFCOMM channel (`rfcomm_service`,
/// as `dump` names it: "Serial Port"), or an L2CAP PSM. Or a Bluetooth Mesh vendor model's
/// access messages (`mesh: { company, opcode }`): the 3-octet vendor opcodes of a company
/// (Mesh Protocol v1.1 §3.7.3.1), one of them (the first octet, 0xC0-0xFF) or all (nil).
public enum PluginChannel: Sendable, Hashable, CustomStringConvertible {
    case rfcomm(UInt8)
    case rfcommService(String)
    case psm(UInt16)
    case mesh(company: UInt16, opcode: UInt8?)
    public var description: String {
        switch self {
        case .rfcomm(let c): "rfcomm \(c)"
        case .rfcommService(let n): "rfcomm service \"\(n)\""
        case .psm(let p): "psm " + Hex.fixed(UInt64(p), width: 4)
        case .mesh(let c, let o): "mesh company " + Hex.fixed(UInt64(c), width: 4) + (o.map { " opcode " + Hex.fixed(UInt64($0), width: 2) } ?? "")
        }
    }
}

/// How frames are cut out of a byte stream spanning several ATT values.
public struct FramingSpec: Sendable, Equatable {
    public enum Length: Sendable, Equatable {
        /// Integer at `offset` (size bytes, or VLQ when size == 0); total frame length = value + adjust.
        case field(offset: Int, size: Int, endian: Endianness, adjust: Int)
    }
    public var length: Length?
    public var terminator: [UInt8]?
    /// Bytes a frame starts with; garbage before it is dropped.
    public var start: [UInt8]?
    public var timeoutMicroseconds: Int64 = 1_000_000
    public var maxSize = 4096
}

/// Request → response pairing: `response` matches `request` when `match` holds within `within`.
public struct ResponseRule: Sendable {
    public var requestDirection: PluginDirection
    public var responseDirection: PluginDirection
    /// Request message names the rule applies to (empty: all).
    public var requests: Set<String>
    /// Expression over `request.FIELD` and `response.FIELD` (top-level frame fields).
    public var match: Expr
    public var withinMicroseconds: Int64
    public var line: Int
}

/// Example frame in the plugin (bytes → expected fields), run by `bluesift plugins test`.
public struct PluginExample: Sendable {
    public var direction: PluginDirection
    public var bytes: [UInt8]
    public var message: String?
    public var fields: [PluginField]
    public var checksum: ChecksumVerdict?
    public var line: Int
    /// Advertising examples: the AD structure's target and the report's context.
    public var advertising: AdvertisingTarget? = nil
    public var context = AdvertisingContext()
    /// Service UUIDs the example's report lists (for `uuid:` filters).
    public var serviceUUIDs: [BluetoothUUID] = []
    /// Another AD structure of the example's report (for `also:` filters): type and value.
    public var also: (type: UInt8, value: [UInt8])? = nil
    /// Key for a `decrypt:` field (test keys from the vendors' documents only).
    public var key: [UInt8]? = nil
    public var mic: MICVerdict? = nil
}

/// What an advertising report says about its payload's sender (expression specials
/// `_address`, `_address_type`, `_rssi`, `_company`, `_pdu`; `context: _name`).
public struct AdvertisingContext: Sendable, Equatable {
    /// 48-bit address, most significant byte first as printed.
    public var address: UInt64? = nil
    public var addressType: Int64 = 0
    public var rssi: Int64 = 127
    public var company: Int64 = -1
    public var pdu: Int64 = 0
    public var name: String? = nil
    /// Which of the plugin's advertising rules took the structure (0-based, file order).
    public var rule: Int64 = 0
    public init() {}

    /// An expression special's value (`_rssi`…); nil for `_address` when the report has none.
    func value(of special: String) -> Int64? {
        switch special {
        case "_rssi": rssi
        case "_address": address.map { Int64($0) }
        case "_address_type": addressType
        case "_company": company
        case "_pdu": pdu
        case "_rule": rule
        default: nil
        }
    }
}

enum SizeSpec: Sendable {
    case fixed(Int)
    case expr(Expr)
    /// The rest of the current stream.
    case eos
    /// Up to and including this byte (not part of the value).
    case terminator(UInt8)
}

enum IntKind: Sendable, Equatable {
    case fixed(size: Int, signed: Bool, endian: Endianness)
    /// Unsigned LEB128 (7 bits a byte, least significant group first), up to 9 bytes.
    case vlq
}

struct BitDef: Sendable {
    var id: String
    var shift: Int
    var width: Int
    var enumIndex: Int?
    var number: NumberFormat? = nil
}

struct ChecksumSpec: Sendable {
    var algorithm: ChecksumAlgorithm
    /// Range of frame bytes covered; defaults: from 0 to the checksum's own offset.
    var from: Expr?
    var to: Expr?
}

/// Number formats beyond integers (docs/plugin-advertising-design.md §4).
enum RealKind: Sendable, Equatable {
    /// IEEE 754 binary16/32/64 (2, 4, 8 bytes).
    case ieee(Int)
    /// IEEE 11073-20601 §A.2: SFLOAT (16 bits: 4-bit exponent, 12-bit mantissa) and FLOAT
    /// (32 bits: 8-bit exponent, 24-bit mantissa).
    case sfloat
    case float11073
    var size: Int {
        switch self {
        case .ieee(let n): n
        case .sfloat: 2
        case .float11073: 4
        }
    }
}

/// value = raw × scale + offset, shown with `decimals` places and `unit`.
struct NumberFormat: Sendable {
    var scale: Double = 1
    var offset: Double = 0
    var decimals: Int = 0
    var unit: String? = nil
    /// Raw values meaning "not available".
    var na: [Int64] = []
    /// Piecewise-linear table over the scaled value, clamped at the ends.
    var interpolate: [(Double, Double)] = []
    var isPlain: Bool { scale == 1 && offset == 0 && interpolate.isEmpty }
}

enum FieldKind: Sendable {
    case integer(IntKind)
    case real(RealKind, Endianness)
    /// 6 bytes shown as an address; little endian = least significant byte first on the wire.
    case mac(Endianness)
    /// 16 bytes shown as a UUID; little endian = reversed on the wire.
    case uuid(Endianness)
    /// A value of the advertising report (no bytes): `_rssi`, `_address`, `_name`...
    case context(String)
    /// An integer from an expression over earlier fields (no bytes).
    case computed(Expr)
    /// Earlier fields' text, concatenated.
    case join([String])
    case contents([UInt8])
    case bytes(SizeSpec)
    case string(SizeSpec)
    case type(Int, SizeSpec?)
    /// Switch on an expression: case value → type index; `default` type when none matches.
    case switchOn(Expr, cases: [(Int64, Int)], default: Int?, size: SizeSpec?)
}

enum RepeatSpec: Sendable {
    case none
    case count(Expr)
    case eos
}

struct FieldDef: Sendable {
    var id: String
    var line: Int
    var kind: FieldKind
    var condition: Expr?
    var repeatSpec: RepeatSpec = .none
    var hidden = false
    var volatile = false
    /// `reading: false`: a number with a unit that is not a sensor reading (a beacon's RSSI,
    /// its calibrated power): stats' sensor table and the report's Sensors view leave it out.
    var notReading = false
    /// Computed on encode (e.g. a length: `_size`).
    var value: Expr?
    var defaultValue: PluginValue?
    var checksum: ChecksumSpec?
    var enumIndex: Int?
    var bits: [BitDef] = []
    /// Scale, offset, unit and sentinels of a number.
    var number: NumberFormat?
    /// 0 makes the value null; evaluated once the enclosing type is decoded.
    var valid: Expr?
    /// Expansion table (an enum) for a string's bytes.
    var expand: Int?
    /// Each item's visible fields become fields of the enclosing message.
    var flatten = false
    /// The field's bytes are encrypted (a preset); its type is the plaintext's layout.
    var decrypt: String?
    /// The field's bytes are text in this encoding (`base64`, `base64url`); its type is the
    /// decoded bytes' layout (RuuviTag formats 2 and 4 in an Eddystone URL).
    var encoding: String?
    /// Inverse of computed fields, evaluated when encoding.
    var encode: Expr?

    var isSelector = false
    /// A decode keeps this field's raw value beside the message (`header`) so that it
    /// re-encodes: hidden and flattened fields, and which of several `na` sentinels was sent.
    var keepsRaw = false
}

struct TypeDef: Sendable {
    var name: String
    var line: Int
    var fields: [FieldDef]
}

struct EnumDef: Sendable {
    var name: String
    var values: [(Int64, String)]
    func name(of v: Int64) -> String? { values.first { $0.0 == v }?.1 }
    func value(of n: String) -> Int64? { values.first { $0.1 == n }?.0 }
}

/// A compiled plugin: the YAML is parsed and checked once at load time into this program.
public struct Plugin: Sendable {
    public var id: String
    public var name: String
    public var path: String
    /// Line of the `id:` key, for errors that name the plugin.
    public var idLine = 0
    public var reference: String?
    public var matches: [PluginMatch]
    public var framing: FramingSpec?
    public var rules: [ResponseRule]
    public var examples: [PluginExample]

    var types: [TypeDef]
    var enums: [EnumDef]
    /// Index of the frame layout in `types`.
    var frameType: Int
    /// Message name when the frame has no top-level switch.
    var defaultMessage: String
    /// Advertising context values the plugin reads (part of what a decode depends on).
    var contextUse: Set<String> = []
    /// Some field is a `join:` (string fields and enum names are then kept for it).
    var joins = false
    /// Some list is flattened (its items' fields then carry their case key).
    var flattens = false
    /// Some field is decrypted with a per-device key (set once when compiled).
    var decrypts = false
    /// Set on a stub loaded for use (`PluginLoader.loadOnUse`): the plugin compiled on first use.
    var pending: PendingPlugin? = nil
    /// A stub: only `id`, `path`, `idLine` and `matches` are known until it is compiled.
    public var isStub: Bool { pending != nil }

    /// Message names (switch case types), in declaration order.
    public var messageNames: [String] {
        guard let sw = types[frameType].fields.first(where: { if case .switchOn = $0.kind { true } else { false } }),
            case .switchOn(_, let cases, let def, _) = sw.kind
        else { return [defaultMessage] }
        var names = cases.map { types[$0.1].name }
        if let def { names.append(types[def].name) }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// Fields marked `volatile` (timestamps, counters) in a message: the diff ignores them.
    public func volatileFields(message: String) -> Set<String> {
        var out = Set<String>()
        func walk(_ t: Int, _ depth: Int) {
            guard depth < 16 else { return }
            for f in types[t].fields {
                if f.volatile { out.insert(f.id) }
                if case .type(let n, _) = f.kind { walk(n, depth + 1) }
            }
        }
        walk(frameType, 0)
        if let t = types.firstIndex(where: { $0.name == message }) { walk(t, 0) }
        return out
    }

    /// Two decoded messages are the same once volatile fields are ignored.
    public func equalIgnoringVolatile(_ a: DecodedMessage, _ b: DecodedMessage) -> Bool {
        guard a.message == b.message else { return false }
        let skip = volatileFields(message: a.message)
        let fa = a.fields.filter { !skip.contains($0.name) }, fb = b.fields.filter { !skip.contains($0.name) }
        return fa == fb
    }
}
