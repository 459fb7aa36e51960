import BluesiftWire

/// A decoded (or to-be-encoded) plugin field value. Integers compare by value whatever their
/// signedness, so `.uint(6) == .int(6)`.
public enum PluginValue: Sendable, CustomStringConvertible {
    case int(Int64)
    case uint(UInt64)
    /// An enum value with a known name (the raw value is kept for expressions and encoding).
    case named(Int64, String)
    case string(String)
    case bytes([UInt8])
    case list([PluginValue])
    case object([PluginField])
    /// A scaled number: the raw integer (expressions, encoding) and its value shown with
    /// `decimals` places.
    case decimal(raw: Int64, value: Double, decimals: Int)
    /// An IEEE 754 value, kept at its own precision (a binary32 as its shortest text).
    case real(Double)
    /// Not available: a sentinel, an invalid reading, an IEEE 11073 special.
    case null

    /// The integer behind `.int`, `.uint` and `.named` (u8 values above Int64.max wrap).
    public var integer: Int64? {
        switch self {
        case .int(let v): v
        case .uint(let v): Int64(bitPattern: v)
        case .named(let v, _): v
        case .decimal(let raw, _, _): raw
        default: nil
        }
    }

    /// The number behind numeric values (scaled, IEEE, integers).
    public var number: Double? {
        switch self {
        case .decimal(_, let v, _), .real(let v): v
        case .int(let v), .named(let v, _): Double(v)
        case .uint(let v): Double(v)
        default: nil
        }
    }

    /// `value` with `decimals` places, rounded half away from zero: "21.6", "-0.05", "100".
    public static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : value < 0 ? "-INF" : "+INF" }
        let d = max(0, min(decimals, 12))
        var m: Double = 1
        for _ in 0..<d { m *= 10 }
        let scaled = (abs(value) * m).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e18 else { return String(value) }
        let n = UInt64(scaled)
        let whole = n / UInt64(m), frac = n % UInt64(m)
        var s = (value < 0 && n != 0 ? "-" : "") + String(whole)
        if d > 0 {
            let f = String(frac)
            s += "." + String(repeating: "0", count: d - f.count) + f
        }
        return s
    }

    /// Shortest text of a double ("21.5", "1e-05" as "0.00001" is not needed here).
    static func realText(_ v: Double) -> String {
        guard v.isFinite else { return v.isNaN ? "NaN" : v < 0 ? "-INF" : "+INF" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }

    /// A field value as a user typed it (`month=6`, `day=0x14`, `payload=0102`, `name="Ada"`):
    /// kept as text, which the encoder reads as the field's type needs (number, enum name,
    /// hex bytes, string). Surrounding double quotes are dropped.
    public init(fieldText t: String) {
        self = .string(t.count >= 2 && t.hasPrefix("\"") && t.hasSuffix("\"") ? String(t.dropFirst().dropLast()) : t)
    }

    /// A field of an `.object` value.
    public subscript(_ name: String) -> PluginValue? {
        if case .object(let fs) = self { return fs.first { $0.name == name }?.value }
        return nil
    }

    /// Compact one-line form used by the text dump: `6`, `"bob"`, `a5ff`, `[1,2]`, `{a=1 b=2}`.
    public var description: String {
        switch self {
        case .int(let v): String(v)
        case .uint(let v): String(v)
        case .named(_, let n): n
        case .string(let s): "\"" + s + "\""
        case .bytes(let b): b.isEmpty ? "\"\"" : Hex.string(b)
        case .list(let l): "[" + l.map(\.description).joined(separator: ",") + "]"
        case .object(let fs): "{" + fs.map { $0.name + "=" + $0.text }.joined(separator: " ") + "}"
        case .decimal(_, let v, let d): Self.format(v, decimals: d)
        case .real(let v): Self.realText(v)
        case .null: "n/a"
        }
    }

    /// Writes the value under `key` (JSON Lines, `-v` tree).
    public func describe<S: FieldSink>(_ key: FieldKey, into w: inout S) {
        switch self {
        case .int(let v): w.int(key, Int(v))
        case .uint(let v): w.uint(key, v)
        case .named(_, let n): w.string(key, n)
        case .string(let s): w.string(key, s)
        case .bytes(let b): w.hex(key, b)
        case .list(let l):
            w.beginArray(key)
            for v in l { v.describe("", into: &w) }
            w.endArray()
        case .object(let fs):
            w.beginObject(key)
            for f in fs { f.value.describe(.dynamic(f.name), into: &w) }
            w.endObject()
        case .decimal(_, let v, let d):
            if v.isFinite { w.number(key, Self.format(v, decimals: d)) } else { w.null(key) }
        case .real(let v):
            if v.isFinite { w.number(key, Self.realText(v)) } else { w.null(key) }
        case .null: w.null(key)
        }
    }
}

extension PluginValue: Equatable {
    public static func == (a: PluginValue, b: PluginValue) -> Bool {
        if let x = a.integer, let y = b.integer {
            // A name matches its raw value or its name.
            if case .named(_, let n) = a, case .string(let s) = b { return n == s }
            if case .named(_, let n) = b, case .string(let s) = a { return n == s }
            return x == y
        }
        switch (a, b) {
        case (.named(_, let n), .string(let s)), (.string(let s), .named(_, let n)): return n == s
        case (.string(let x), .string(let y)): return x == y
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.list(let x), .list(let y)): return x == y
        case (.object(let x), .object(let y)): return x == y
        case (.null, .null): return true
        case (.real(let x), .real(let y)): return x == y || (x.isNaN && y.isNaN)
        case (.decimal(_, let x, let d), .real(let y)), (.real(let y), .decimal(_, let x, let d)):
            return Self.format(x, decimals: d) == Self.format(y, decimals: d)
        default: return false
        }
    }
}

extension PluginValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(integerLiteral v: Int64) { self = .int(v) }
    public init(stringLiteral v: String) { self = .string(v) }
    public init(arrayLiteral elements: PluginValue...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, PluginValue)...) {
        self = .object(elements.map { PluginField(name: $0.0, value: $0.1) })
    }
}

/// One named field, in frame order.
public struct PluginField: Sendable, Equatable {
    public var name: String
    public var value: PluginValue
    /// The unit of a number ("°C", "%"), shown after it.
    public var unit: String?
    /// The case key of the switch that chose the field (a flattened object's id), so that two
    /// ids of one name and layout encode back to their own id.
    public var origin: Int64?
    /// Declared `reading: false` by its plugin: a number that is no sensor reading (stats'
    /// sensor table leaves it out).
    public var notReading: Bool
    public init(name: String, value: PluginValue, unit: String? = nil, origin: Int64? = nil, notReading: Bool = false) {
        self.name = name; self.value = value; self.unit = unit; self.origin = origin; self.notReading = notReading
    }

    public static func == (a: PluginField, b: PluginField) -> Bool { a.name == b.name && a.value == b.value && a.unit == b.unit }

    /// "21.6 °C", "n/a", "6".
    public var text: String {
        if let unit, case .null = value { return value.description } else if let unit { return value.description + " " + unit }
        return value.description
    }
}

/// Verdict of an encrypted payload's message integrity check.
public enum MICVerdict: String, Sendable {
    case ok, bad
}

/// Checksum verdict of a decoded frame.
public enum ChecksumVerdict: String, Sendable {
    case ok, bad
}

/// A vendor message decoded by a plugin. Its members live in one shared box (copy on write):
/// a cached decode is copied into every record repeating its payload, and a copy of ten
/// separately counted members cost ten retains and ten releases per record.
public struct DecodedMessage: Sendable {
    final class Storage: @unchecked Sendable {
        var plugin: String
        var message: String
        var fields: [PluginField]
        var checksum: ChecksumVerdict?
        var checksumExpected: UInt64?
        var checksumFound: UInt64?
        var header: [String: Int64]
        var error: String?
        var bytes: [UInt8]
        var mic: MICVerdict?
        var raw: String?
        var replayID: UInt64
        init(
            plugin: String, message: String, fields: [PluginField], checksum: ChecksumVerdict?, checksumExpected: UInt64?,
            checksumFound: UInt64?, header: [String: Int64], error: String?, bytes: [UInt8], mic: MICVerdict?, raw: String?,
            replayID: UInt64
        ) {
            self.plugin = plugin; self.message = message; self.fields = fields; self.checksum = checksum
            self.checksumExpected = checksumExpected; self.checksumFound = checksumFound; self.header = header
            self.error = error; self.bytes = bytes; self.mic = mic; self.raw = raw; self.replayID = replayID
        }
        func copy() -> Storage {
            Storage(
                plugin: plugin, message: message, fields: fields, checksum: checksum, checksumExpected: checksumExpected,
                checksumFound: checksumFound, header: header, error: error, bytes: bytes, mic: mic, raw: raw, replayID: replayID)
        }
    }
    var storage: Storage

    init(
        plugin: String, message: String, fields: [PluginField], checksum: ChecksumVerdict?, checksumExpected: UInt64?,
        checksumFound: UInt64?, header: [String: Int64], error: String?, bytes: [UInt8], mic: MICVerdict? = nil,
        raw: String? = nil, replayID: UInt64 = 0
    ) {
        storage = Storage(
            plugin: plugin, message: message, fields: fields, checksum: checksum, checksumExpected: checksumExpected,
            checksumFound: checksumFound, header: header, error: error, bytes: bytes, mic: mic, raw: raw,
            replayID: replayID)
    }

    mutating func unique() { if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() } }

    public var plugin: String {
        get { storage.plugin }
        _modify { unique(); yield &storage.plugin }
    }
    /// The switch case chosen (e.g. "sport_count"), "unknown" for unlisted commands.
    public var message: String {
        get { storage.message }
        _modify { unique(); yield &storage.message }
    }
    /// Visible fields, payload flattened.
    public var fields: [PluginField] {
        get { storage.fields }
        _modify { unique(); yield &storage.fields }
    }
    /// nil when the plugin declares no checksum (or decoding stopped before it).
    public var checksum: ChecksumVerdict? {
        get { storage.checksum }
        _modify { unique(); yield &storage.checksum }
    }
    /// Expected/found checksum when `checksum == .bad`.
    public var checksumExpected: UInt64? {
        get { storage.checksumExpected }
        _modify { unique(); yield &storage.checksumExpected }
    }
    public var checksumFound: UInt64? {
        get { storage.checksumFound }
        _modify { unique(); yield &storage.checksumFound }
    }
    /// Integer values of the top-level frame fields (hidden ones too): what rules compare.
    public var header: [String: Int64] {
        get { storage.header }
        _modify { unique(); yield &storage.header }
    }
    /// Set when the frame is malformed; fields decoded so far stay.
    public var error: String? {
        get { storage.error }
        _modify { unique(); yield &storage.error }
    }
    /// Frame bytes.
    public var bytes: [UInt8] {
        get { storage.bytes }
        _modify { unique(); yield &storage.bytes }
    }
    /// Encrypted payloads: the MIC verdict (nil: nothing was decrypted, or no MIC).
    public var mic: MICVerdict? {
        get { storage.mic }
        _modify { unique(); yield &storage.mic }
    }
    /// Why an encrypted payload stays raw ("no key for a4:c1:38:8d:18:b2").
    public var raw: String? {
        get { storage.raw }
        _modify { unique(); yield &storage.raw }
    }
    /// Not 0: this decode is shared by every payload equal to it (a `PluginSet` cache entry),
    /// so a writer may replay what it wrote for it. Unique for the life of the process.
    public var replayID: UInt64 {
        get { storage.replayID }
        _modify { unique(); yield &storage.replayID }
    }

    public subscript(_ name: String) -> PluginValue? { fields.first { $0.name == name }?.value }

    /// "sport_count month=6 day=20 checksum ok"
    public var summary: String {
        var s = message
        for f in fields { s += " " + f.name + "=" + f.text }
        if let c = checksum { s += " checksum " + c.rawValue }
        if let m = mic { s += " mic " + m.rawValue }
        if let r = raw { s += " (raw: " + r + ")" }
        if let e = error { s += " [" + e + "]" }
        return s
    }

    /// `{"plugin","message","fields","checksum"}` (the `vendor` JSON object's members).
    public func describe<S: FieldSink>(into w: inout S) {
        w.string("plugin", plugin)
        w.string("message", message)
        w.beginObject("fields")
        for f in fields { f.value.describe(.dynamic(f.name), into: &w) }
        w.endObject()
        if fields.contains(where: { $0.unit != nil }) {
            w.beginObject("units")
            for f in fields { if let u = f.unit { w.string(.dynamic(f.name), u) } }
            w.endObject()
        }
        if let c = checksum { w.string("checksum", c.rawValue) } else { w.null("checksum") }
        if let m = mic { w.string("mic", m.rawValue) }
        if let r = raw { w.string("raw", r) }
        if let e = error { w.string("error", e) }
    }
}
