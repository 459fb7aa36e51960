import BluesiftWire
import BluesiftGATT

/// The GATT names and standard-characteristic decoding an ATT record gets in `dump`.
enum FrameNaming {
    /// UUID whose value format applies to this PDU's value: the descriptor's, else the
    /// characteristic's (not for declarations).
    static func valueUUID(_ loc: GATTDatabase.Location) -> BluetoothUUID? {
        if let d = loc.descriptor { return d }
        return loc.isDeclaration ? nil : loc.characteristic
    }

    static func describe<S: FieldSink>(_ a: AnalyzedFrame, into w: inout S) {
        guard let loc = a.location else { return }
        if a.namedBy == .plugin {
            names(loc, a.namedBy, plugin: a.vendor?.plugin, into: &w)
        } else {
            // The names are a function of the location and the naming source, replayed: UUID
            // text and name-table lookups were ~10% of an ATT-heavy dump.
            var key = NamingKey(loc, a.namedBy)
            withUnsafeBytes(of: &key) { k in
                w.replaying(13, k) { w in names(loc, a.namedBy, plugin: nil, into: &w) }
            }
        }
        if let uuid = valueUUID(loc), a.decoded.layers.contains(.att), let value = a.decoded.attStorage.value,
           let short = uuid.shortValue, StandardCharacteristics.supported.contains(short) {
            w.beginObject("decoded")
            _ = StandardCharacteristics.describe(uuid, value, into: &w)
            w.endObject()
        }
    }

    static func names<S: FieldSink>(_ loc: GATTDatabase.Location, _ namedBy: NamingSource?, plugin: String?,
                                    into w: inout S) {
        w.string("service", loc.service.description)
        w.optionalString("service_name", GATTNames.name(loc.service))
        if let c = loc.characteristic {
            w.string("characteristic", c.description)
            w.optionalString("characteristic_name", GATTNames.name(c))
            if loc.instance > 0 { w.int("instance", loc.instance) }
        }
        if let d = loc.descriptor {
            w.string("descriptor", d.description)
            w.optionalString("descriptor_name", GATTNames.name(d))
        }
        if let by = namedBy { w.string("named_by", by == .plugin ? "plugin:" + (plugin ?? "") : by.rawValue) }
    }

    /// Everything `names` shows, as plain bytes (absent UUIDs zero, with a presence bit).
    struct NamingKey {
        var service, characteristic, descriptor: BluetoothUUID
        var instance: Int
        var flags: UInt64
        init(_ loc: GATTDatabase.Location, _ namedBy: NamingSource?) {
            let none = BluetoothUUID(high: 0, low: 0)
            service = loc.service
            characteristic = loc.characteristic ?? none
            descriptor = loc.descriptor ?? none
            instance = loc.instance
            let by: UInt64 = switch namedBy { case nil: 0; case .discovery: 1; case .imported: 2; case .plugin: 3 }
            flags = (loc.characteristic != nil ? 1 : 0) | (loc.descriptor != nil ? 2 : 0) | by << 2
        }
    }

    /// " [Battery / Battery Level] battery 87%"
    /// `short`: a 128-bit UUID without a name as its first 8 digits and "…" (narrow terminals).
    static func summary(_ a: AnalyzedFrame, short: Bool = false) -> String? {
        guard let loc = a.location else { return nil }
        func text(_ u: BluetoothUUID) -> String {
            if let n = GATTNames.name(u) { return n }
            let d = u.description
            return short && d.count > 8 ? String(d.prefix(8)) + "…" : d
        }
        var parts = [text(loc.service)]
        if let c = loc.characteristic { parts.append(text(c)) }
        if let d = loc.descriptor { parts.append(text(d)) }
        var s = "[" + parts.joined(separator: " / ") + "]"
        if let uuid = valueUUID(loc), let value = a.decoded.att?.value {
            var sink = TextFieldWriter()
            if let text = StandardCharacteristics.describe(uuid, value, into: &sink) { s += " " + text }
        }
        return s
    }
}
