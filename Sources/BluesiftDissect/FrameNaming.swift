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
        if let by = a.namedBy { w.string("named_by", by == .plugin ? "plugin:" + (a.vendor?.plugin ?? "") : by.rawValue) }
        if let uuid = valueUUID(loc), let value = a.decoded.att?.value,
           let short = uuid.shortValue, StandardCharacteristics.supported.contains(short) {
            w.beginObject("decoded")
            _ = StandardCharacteristics.describe(uuid, value, into: &w)
            w.endObject()
        }
    }

    /// " [Battery / Battery Level] battery 87%"
    static func summary(_ a: AnalyzedFrame) -> String? {
        guard let loc = a.location else { return nil }
        var parts = [GATTNames.name(loc.service) ?? loc.service.description]
        if let c = loc.characteristic { parts.append(GATTNames.name(c) ?? c.description) }
        if let d = loc.descriptor { parts.append(GATTNames.name(d) ?? d.description) }
        var s = "[" + parts.joined(separator: " / ") + "]"
        if let uuid = valueUUID(loc), let value = a.decoded.att?.value {
            var sink = TextFieldWriter()
            if let text = StandardCharacteristics.describe(uuid, value, into: &sink) { s += " " + text }
        }
        return s
    }
}
