import BluesiftWire

extension AdvertisingReport {
    public func describe<S: FieldSink>(into sink: inout S, extended: Bool) {
        sink.int("event_type", Int(eventType)); sink.string("event_type_name", eventTypeName)
        if extended {
            let status = (eventType >> 5) & 0x3
            sink.int("data_status", Int(status)); sink.string("data_status_name", AdvertisingLayer.dataStatusName(status))
        }
        if let address { sink.address("address", address) }
        if let addressType { sink.string("address_type", addressType.name) }
        if let rssi { sink.int("rssi", Int(rssi)) }
        if let txPower { sink.int("tx_power", Int(txPower)) }
        if let primaryPHY { sink.string("primary_phy", AdvertisingLayer.phyName(primaryPHY)) }
        if let secondaryPHY { sink.string("secondary_phy", AdvertisingLayer.phyName(secondaryPHY)) }
        if let sid { sink.int("sid", Int(sid)) }
        if let periodicInterval { sink.int("periodic_interval", Int(periodicInterval)) }
        if let directAddress { sink.address("direct_address", directAddress) }
        if let directAddressType { sink.string("direct_address_type", directAddressType.name) }
        sink.array("data", renderedFrom: data) { sink in
            for s in structures { sink.beginObject(""); s.describe(into: &sink); sink.endObject() }
        }
    }
}

extension AdvertisingLayer {
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", opcode); sink.string("name", name)
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
