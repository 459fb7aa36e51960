import BluesiftWire

extension AdvertisingReport {
    /// Written in two runs around the RSSI, each replayable from the values it shows (a
    /// device repeats its report many times a second; only the RSSI moves).
    public func describe<S: FieldSink>(into sink: inout S, extended: Bool) {
        withKeySpace { k in
            let n = headKey(k, extended: extended)
            sink.replaying(.advertisingHead, UnsafeRawBufferPointer(start: k, count: n)) { sink in describeHead(into: &sink, extended: extended) }
            describeAfterHead(into: &sink, keySpace: k)
        }
    }

    /// Scratch for the replay keys: `headKey` and `describeAfterHead` write into it.
    public func withKeySpace<R>(_ body: (UnsafeMutableRawPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: 24 + data.count, alignment: 8) { body($0.baseAddress!) }
    }

    /// The key of the head run (event type to address type), 12 bytes at `k`: a byte of
    /// presence bits, then each value at a fixed place (absent ones zero).
    public func headKey(_ k: UnsafeMutableRawPointer, extended: Bool) -> Int {
        k.storeBytes(
            of: eventTypeTable.rawValue | (extended ? 0x10 : 0) | Self.bit(address != nil, 5)
                | Self.bit(addressType != nil, 6), as: UInt8.self)
        k.storeBytes(of: addressType?.rawValue ?? 0, toByteOffset: 1, as: UInt8.self)
        k.storeBytes(of: eventType.littleEndian, toByteOffset: 2, as: UInt16.self)
        k.storeBytes(of: (address?.value ?? 0).littleEndian, toByteOffset: 4, as: UInt64.self)
        return 12
    }

    static func bit(_ present: Bool, _ i: Int) -> UInt8 { present ? 1 << i : 0 }

    /// The RSSI, then the replayed tail run (TX power to the AD structures).
    public func describeAfterHead<S: FieldSink>(into sink: inout S, keySpace k: UnsafeMutableRawPointer) {
        if let rssi { sink.int("rssi", Int(rssi)) }
        k.storeBytes(
            of: Self.bit(txPower != nil, 0) | Self.bit(primaryPHY != nil, 1) | Self.bit(secondaryPHY != nil, 2)
                | Self.bit(sid != nil, 3) | Self.bit(periodicInterval != nil, 4) | Self.bit(directAddress != nil, 5)
                | Self.bit(directAddressType != nil, 6), as: UInt8.self)
        k.storeBytes(of: UInt8(bitPattern: txPower ?? 0), toByteOffset: 1, as: UInt8.self)
        k.storeBytes(of: primaryPHY ?? 0, toByteOffset: 2, as: UInt8.self)
        k.storeBytes(of: secondaryPHY ?? 0, toByteOffset: 3, as: UInt8.self)
        k.storeBytes(of: sid ?? 0, toByteOffset: 4, as: UInt8.self)
        k.storeBytes(of: directAddressType?.rawValue ?? 0, toByteOffset: 5, as: UInt8.self)
        k.storeBytes(of: (periodicInterval ?? 0).littleEndian, toByteOffset: 6, as: UInt16.self)
        k.storeBytes(of: (directAddress?.value ?? 0).littleEndian, toByteOffset: 8, as: UInt64.self)
        if let d = data.baseAddress { (k + 16).copyMemory(from: d, byteCount: data.count) }
        sink.replaying(.advertisingTail, UnsafeRawBufferPointer(start: k, count: 16 + data.count)) { sink in describeTail(into: &sink) }
    }

    public func describeHead<S: FieldSink>(into sink: inout S, extended: Bool) {
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
        describeStart(into: &sink)
        forEachReport { r in
            sink.beginObject(""); r.describe(into: &sink, extended: isExtended); sink.endObject()
        }
        sink.endArray()
    }

    /// Opcode and name, then opens the `reports` array.
    public func describeStart<S: FieldSink>(into sink: inout S) {
        if single == nil { // HCI reports: opcode and name are the subevent's, replayed
            withUnsafeBytes(of: opcode) { key in
                sink.replaying(.advertisingOpcode, key) { sink in
                    sink.int("opcode", opcode); sink.string("name", name)
                }
            }
        } else {
            sink.int("opcode", opcode); sink.string("name", name)
        }
        sink.beginArray("reports")
    }

    /// Extended reports carry the data status (§7.7.65.13).
    public var isExtended: Bool { opcode == 0x0D }

    /// HCI reports (not one over the air), whose layer fields are the subevent's alone.
    public var isHCIReport: Bool { single == nil }

    /// e.g. "LE Advertising Report ADV_IND c0:ba:0d:00:00:01 rssi=-60 name=Pongbot (+1 more)"
    public var summary: String {
        var b: [UInt8] = []
        writeSummary(into: &b)
        return String(decoding: b, as: UTF8.self)
    }

    /// `summary`'s bytes, appended to `out` (the text renderer's line, no String per piece).
    public func writeSummary(into out: inout [UInt8]) {
        let name = self.name
        out.appendText(name)
        // First report and count in one pass over the event.
        var first: AdvertisingReport?, count = 0
        forEachReport { r in
            if first == nil { first = r }
            count += 1
        }
        if let r = first {
            // Over the air the layer is named after the PDU type already.
            let n = r.eventTypeName
            if n != name { out.append(0x20); out.appendText(n) }
            if let a = r.address { out.append(0x20); out.appendAddress(a) }
            if let rssi = r.rssi { out.appendText(" rssi="); out.appendDecimal(Int(rssi)) }
            let s = r.structures
            if let l = s.first(.completeLocalName) ?? s.first(.shortenedLocalName) {
                out.appendText(" name="); out.appendDecodingUTF8(l.value)
            }
            if count > 1 { out.appendText(" (+"); out.appendDecimal(count - 1); out.appendText(" more)") }
        }
        if let error { out.appendText(" ["); out.appendText(error.message); out.append(0x5D) }
    }
}
