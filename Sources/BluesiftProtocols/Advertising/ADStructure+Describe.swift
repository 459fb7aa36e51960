import BluesiftWire

extension ADStructure {
    /// `{type, name, …decoded fields}`; formats from CSS Part A §1.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("type", Int(type.rawValue)); sink.string("name", type.name)
        let v = value
        switch type.rawValue {
        case 0x01 where v.count >= 1: // §1.3
            sink.int("flags", Int(v[0]))
            sink.beginArray("flag_names")
            for bit in 0..<5 where v[0] & (1 << bit) != 0 { sink.string("", ADFlags.bitName(bit)) }
            sink.endArray()
        case 0x02, 0x03, 0x14: uuidList(v, size: 2, into: &sink) // §1.1, §1.10
        case 0x04, 0x05, 0x1F: uuidList(v, size: 4, into: &sink)
        case 0x06, 0x07, 0x15: uuidList(v, size: 16, into: &sink)
        case 0x08, 0x09, 0x30: // §1.2
            sink.string("local_name", String(decoding: v, as: UTF8.self))
        case 0x0A where v.count == 1: // §1.5
            sink.int("tx_power", Int(Int8(bitPattern: v[0])))
        case 0x12 where v.count == 4: // §1.9, units of 1.25 ms
            sink.int("interval_min", Int(le16(v, 0))); sink.int("interval_max", Int(le16(v, 2)))
        case 0x16, 0x20, 0x21: // §1.11
            if let n = type.serviceDataUUIDSize, v.count >= n { serviceData(v, size: n, into: &sink) }
        case 0x17, 0x18: // §1.13-14
            sink.beginArray("addresses")
            var i = 0
            while i + 6 <= v.count { sink.string("", BDAddr(littleEndian: slice(v, i, i + 6)).description); i += 6 }
            sink.endArray()
        case 0x19 where v.count == 2: // §1.12
            let a = le16(v, 0)
            sink.int("appearance", Int(a)); sink.optionalString("appearance_name", AssignedNumbers.appearanceName(a))
        case 0x1A where v.count == 2: // §1.15, units of 0.625 ms
            sink.int("interval", Int(le16(v, 0)))
        case 0x2F where v.count == 3 || v.count == 4:
            var x = 0
            for i in (0..<v.count).reversed() { x = x << 8 | Int(v[i]) }
            sink.int("interval", x)
        case 0x1B where v.count == 7: // §1.16
            sink.string("address", BDAddr(littleEndian: slice(v, 0, 6)).description)
            sink.string("address_type", v[6] & 1 == 0 ? "public" : "random")
        case 0x1C where v.count == 1: // §1.17
            sink.int("role", Int(v[0])); sink.string("role_name", Self.roleName(v[0]))
        case 0x0D where v.count == 3:
            sink.int("class_of_device", Int(v[0]) | Int(v[1]) << 8 | Int(v[2]) << 16)
        case 0x24 where v.count >= 1: // §1.18: first code point names the scheme
            uri(v, into: &sink)
        case 0xFF where v.count >= 2: // §1.4
            let c = le16(v, 0)
            sink.int("company_id", Int(c)); sink.optionalString("company_name", AssignedNumbers.companyName(c))
            sink.hex("data", slice(v, 2, v.count))
        default:
            sink.hex("value", v)
        }
    }

    static func roleName(_ r: UInt8) -> String {
        switch r {
        case 0: "Only Peripheral Role supported"
        case 1: "Only Central Role supported"
        case 2: "Peripheral and Central Role supported, Peripheral preferred"
        case 3: "Peripheral and Central Role supported, Central preferred"
        default: "Unknown"
        }
    }

    private func uuidList<S: FieldSink>(_ v: UnsafeRawBufferPointer, size: Int, into sink: inout S) {
        sink.beginArray("uuids")
        var i = 0
        while i + size <= v.count {
            let u = BluetoothUUID(littleEndian: slice(v, i, i + size))!
            sink.beginObject("")
            sink.string("uuid", u.description); sink.optionalString("uuid_name", AssignedNumbers.uuidName(u))
            sink.endObject()
            i += size
        }
        sink.endArray()
        if i < v.count { sink.hex("trailing", slice(v, i, v.count)) }
    }

    private func serviceData<S: FieldSink>(_ v: UnsafeRawBufferPointer, size: Int, into sink: inout S) {
        let u = BluetoothUUID(littleEndian: slice(v, 0, size))!
        sink.string("uuid", u.description); sink.optionalString("uuid_name", AssignedNumbers.uuidName(u))
        sink.hex("data", slice(v, size, v.count))
    }

    private func uri<S: FieldSink>(_ v: UnsafeRawBufferPointer, into sink: inout S) {
        // Assigned Numbers "URI Schemes": 0x01 none, 0x16 "http:", 0x17 "https:" (common ones).
        let rest = String(decoding: slice(v, 1, v.count), as: UTF8.self)
        switch v[0] {
        case 0x01: sink.string("uri", rest)
        case 0x16: sink.string("uri", "http:" + rest)
        case 0x17: sink.string("uri", "https:" + rest)
        default: sink.int("scheme", Int(v[0])); sink.string("uri", rest)
        }
    }
}
