import BluesiftWire

extension AdvertisingReport {
    /// Written in two runs around the RSSI, each replayable from the values it shows (a
    /// device repeats its report many times a second; only the RSSI moves).
    public func describe<S: FieldSink>(into sink: inout S, extended: Bool) {
        withUnsafeTemporaryAllocation(byteCount: 40 + data.count, alignment: 8) { key in
            var n = 0
            func put(_ b: UInt8) { key[n] = b; n += 1 }
            func put(_ v: UInt16?) { put(v == nil ? 0 : 1); put(UInt8(truncatingIfNeeded: v ?? 0)); put(UInt8(truncatingIfNeeded: (v ?? 0) >> 8)) }
            func put(_ a: BDAddr?) {   // presence, then the 48-bit value (stored as 8 bytes, 6 kept)
                put(a == nil ? 0 : 1)
                key.baseAddress!.storeBytes(of: (a?.value ?? 0).littleEndian, toByteOffset: n, as: UInt64.self)
                n += 6
            }
            put(eventTypeTable.rawValue); put(extended ? 1 : 0); put(eventType)
            put(address); put(addressType.map { UInt16($0.rawValue) })
            sink.replaying(1, UnsafeRawBufferPointer(rebasing: key[..<n])) { sink in describeHead(into: &sink, extended: extended) }

            if let rssi { sink.int("rssi", Int(rssi)) }

            n = 0
            put(txPower.map { UInt16(UInt8(bitPattern: $0)) }); put(primaryPHY.map(UInt16.init))
            put(secondaryPHY.map(UInt16.init)); put(sid.map(UInt16.init)); put(periodicInterval)
            put(directAddress); put(directAddressType.map { UInt16($0.rawValue) })
            if let d = data.baseAddress { (key.baseAddress! + n).copyMemory(from: d, byteCount: data.count) }
            n += data.count
            sink.replaying(2, UnsafeRawBufferPointer(rebasing: key[..<n])) { sink in describeTail(into: &sink) }
        }
    }

    private func describeHead<S: FieldSink>(into sink: inout S, extended: Bool) {
        sink.int("event_type", Int(eventType)); sink.string("event_type_name", eventTypeName)
        if extended {
            let status = (eventType >> 5) & 0x3
            sink.int("data_status", Int(status)); sink.string("data_status_name", AdvertisingLayer.dataStatusName(status))
        }
        if let address { sink.address("address", address) }
        if let addressType { sink.string("address_type", addressType.name) }
    }

    private func describeTail<S: FieldSink>(into sink: inout S) {
        if let txPower { sink.int("tx_power", Int(txPower)) }
        if let primaryPHY { sink.string("primary_phy", AdvertisingLayer.phyName(primaryPHY)) }
        if let secondaryPHY { sink.string("secondary_phy", AdvertisingLayer.phyName(secondaryPHY)) }
        if let sid { sink.int("sid", Int(sid)) }
        if let periodicInterval { sink.int("periodic_interval", Int(periodicInterval)) }
        if let directAddress { sink.address("direct_address", directAddress) }
        if let directAddressType { sink.string("direct_address_type", directAddressType.name) }
        sink.beginArray("data")
        for s in structures { sink.beginObject(""); s.describe(into: &sink); sink.endObject() }
        sink.endArray()
    }
}

extension AdvertisingLayer {
    public func describe<S: FieldSink>(into sink: inout S) {
        if single == nil {   // HCI reports: opcode and name are the subevent's, replayed
            withUnsafeBytes(of: opcode) { key in
                sink.replaying(4, key) { sink in sink.int("opcode", opcode); sink.string("name", name) }
            }
        } else {
            sink.int("opcode", opcode); sink.string("name", name)
        }
        let extended = opcode == 0x0D
        sink.beginArray("reports")
        forEachReport { r in sink.beginObject(""); r.describe(into: &sink, extended: extended); sink.endObject() }
        sink.endArray()
    }

    /// e.g. "LE Advertising Report ADV_IND c0:ba:0d:00:00:01 rssi=-60 name=Pongbot (+1 more)"
    public var summary: String {
        var s = name
        // First report and count in one pass over the event.
        var first: AdvertisingReport?, count = 0
        forEachReport { r in
            if first == nil { first = r }
            count += 1
        }
        if let r = first {
            // Over the air the layer is named after the PDU type already.
            let n = r.eventTypeName
            if n != name { s += " " + n }
            if let a = r.address { s += " " + a.description }
            if let rssi = r.rssi { s += " rssi=\(rssi)" }
            if let n = r.localName { s += " name=" + n }
            if count > 1 { s += " (+\(count - 1) more)" }
        }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}
