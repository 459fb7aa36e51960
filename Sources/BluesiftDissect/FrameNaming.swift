import BluesiftWire
import BluesiftProtocols
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
                w.replaying(.gattNames, k) { w in names(loc, a.namedBy, plugin: nil, into: &w) }
            }
        }
        guard let uuid = valueUUID(loc), a.decoded.layers.contains(.att), let value = a.decoded.attStorage.value else { return }
        let op = a.decoded.attStorage.opcode.rawValue, blob = a.decoded.attStorage.opcode == .readBlobResponse
        if let short = uuid.shortValue, StandardCharacteristics.supported.contains(short),
            !blob || StandardCharacteristics.strings.contains(short)
        {
            w.beginObject("decoded")
            _ = StandardCharacteristics.describe(uuid, value, into: &w)
            w.endObject()
        } else if isRead(op), a.vendor == nil, let text = printableText(value) {
            w.beginObject("decoded"); w.string("text", text); w.endObject()
        }
    }

    /// Read Response, Read Blob Response (Core 5.4 Vol 3 Part F §3.4.4.4, §3.4.4.6).
    @inline(__always) static func isRead(_ op: UInt8) -> Bool { ATTOpcode(rawValue: op).isReadResponse }

    /// A value of no known format that is readable UTF-8 text (at least 3 bytes, no control
    /// characters but tab/newline; one trailing NUL allowed): shown as text.
    static func printableText(_ v: UnsafeRawBufferPointer) -> String? {
        var bytes = v[...]
        if bytes.last == 0 { bytes = bytes.dropLast() }
        guard bytes.count >= 3 else { return nil }
        for b in bytes where b < 0x20 && b != 0x09 && b != 0x0A || b == 0x7F { return nil }
        guard let s = String(validating: bytes, as: UTF8.self) else { return nil }
        return s
    }

    static func names<S: FieldSink>(
        _ loc: GATTDatabase.Location, _ namedBy: NamingSource?, plugin: String?,
        into w: inout S
    ) {
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
            let by: UInt64 =
                switch namedBy {
                case nil: 0;
                case .discovery: 1;
                case .imported: 2;
                case .plugin: 3
                }
            flags = (loc.characteristic != nil ? 1 : 0) | (loc.descriptor != nil ? 2 : 0) | by << 2
        }
    }

    /// " [Battery / Battery Level] battery 87%"
    /// `short`: a 128-bit UUID without a name as its first 8 digits and "…" (narrow terminals);
    /// a name says it all, so a named UUID is only its name.
    /// `service: false`: without the service when a characteristic says more (narrow lines).
    static func summary(_ a: AnalyzedFrame, short: Bool = false, service: Bool = true) -> String? {
        guard let loc = a.location else { return nil }
        func text(_ u: BluetoothUUID) -> String {
            if let n = GATTNames.name(u) { return GATTNames.label(u.description, name: n) }
            return short ? shortText(u, loc) : u.description
        }
        var parts = service || loc.characteristic == nil ? [text(loc.service)] : []
        if let c = loc.characteristic { parts.append(text(c)) }
        if let d = loc.descriptor { parts.append(text(d)) }
        var s = "[" + parts.joined(separator: " / ") + "]"
        if let text = valueText(a, loc) { s += " " + text }
        return s
    }

    /// A 128-bit UUID without a name as its first 8 digits and "…". One vendor's UUIDs often
    /// share those (21c50462-…-9aeb service, 21c50462-…-9af0 characteristic): then the last 4
    /// tell them apart.
    static func shortText(_ u: BluetoothUUID, _ loc: GATTDatabase.Location) -> String {
        let d = u.description
        guard d.count > 8 else { return d }
        let others = [loc.service, loc.characteristic, loc.descriptor].compactMap { $0 }.filter { $0 != u }.map(\.description)
        let head = d.prefix(8), tail = d.suffix(4)
        if !others.contains(where: { $0.prefix(8) == head }) { return head + "…" }
        if !others.contains(where: { $0.prefix(8) == head && $0.suffix(4) == tail }) { return head + "…" + tail }
        return d
    }

    /// The decoded value: a standard characteristic's ("battery 87%", "\"1.4.2\""), or a
    /// read value of unknown format that is UTF-8 text.
    static func valueText(_ a: AnalyzedFrame, _ loc: GATTDatabase.Location) -> String? {
        guard let uuid = valueUUID(loc), let att = a.decoded.att, let value = att.value else { return nil }
        var sink = TextFieldWriter()
        let op = att.opcode.rawValue
        if att.opcode != .readBlobResponse || uuid.shortValue.map({ StandardCharacteristics.strings.contains($0) }) == true,
            let text = StandardCharacteristics.describe(uuid, value, into: &sink)
        {
            return text
        } else if isRead(op), a.vendor == nil, uuid.shortValue.map({ StandardCharacteristics.supported.contains($0) }) != true,
            let text = printableText(value)
        {
            return "\"" + text + "\""
        }
        return nil
    }
}

extension AnalyzedFrame {
    /// What a view shows for the value: the vendor message, else the standard value.
    public var valueText: String? {
        if let v = vendor {
            let s = VendorRendering.summary(v)
            return s.hasPrefix(" ") ? String(s.dropFirst()) : s
        }
        guard let loc = location else { return nil }
        return FrameNaming.valueText(self, loc)
    }
}
