import BluesiftWire

/// SDP PDU identifier (Core 5.4 Vol 3 Part B §4.2, Table 4.1). Open: unknown ids print "Unknown".
public struct SDPPDUID: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let errorResponse = SDPPDUID(rawValue: 0x01)
    public static let serviceSearchRequest = SDPPDUID(rawValue: 0x02)
    public static let serviceSearchResponse = SDPPDUID(rawValue: 0x03)
    public static let serviceAttributeRequest = SDPPDUID(rawValue: 0x04)
    public static let serviceAttributeResponse = SDPPDUID(rawValue: 0x05)
    public static let serviceSearchAttributeRequest = SDPPDUID(rawValue: 0x06)
    public static let serviceSearchAttributeResponse = SDPPDUID(rawValue: 0x07)
    public var name: String {
        switch rawValue {
        case 0x01: "Error Response"
        case 0x02: "Service Search Request"
        case 0x03: "Service Search Response"
        case 0x04: "Service Attribute Request"
        case 0x05: "Service Attribute Response"
        case 0x06: "Service Search Attribute Request"
        case 0x07: "Service Search Attribute Response"
        default: "Unknown"
        }
    }
    /// Responses carrying attribute lists that continuation state may split (§4.6, §4.7).
    public var carriesAttributeLists: Bool { rawValue == 0x05 || rawValue == 0x07 }
}

/// SDP error codes (Vol 3 Part B §4.4.1).
public struct SDPErrorCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0x0001: "Invalid/unsupported SDP version"
        case 0x0002: "Invalid Service Record Handle"
        case 0x0003: "Invalid request syntax"
        case 0x0004: "Invalid PDU Size"
        case 0x0005: "Invalid Continuation State"
        case 0x0006: "Insufficient Resources to satisfy Request"
        default: "Unknown"
        }
    }
}

/// One SDP PDU (Core 5.4 Vol 3 Part B §4.2-§4.7): header, parameters, continuation state.
/// Borrows its bytes. Attribute lists split by continuation state are joined by the decoder
/// (`complete`), and only a whole list is walked as data elements.
public struct SDPPDU: FieldDescribable {
    public var pduID: SDPPDUID
    public var transactionID: UInt16
    public var parameterLength: Int
    /// Everything after the 5-byte header.
    public var parameters: UnsafeRawBufferPointer
    public var errorCode: SDPErrorCode?
    /// Requests: MaximumServiceRecordCount / MaximumAttributeByteCount.
    public var maximum: Int?
    public var serviceRecordHandle: UInt32?
    public var totalRecordCount: Int?
    public var currentRecordCount: Int?
    /// Service Search Request/Attribute requests: the search pattern and attribute id list.
    public var searchPattern: UnsafeRawBufferPointer?
    public var attributeIDList: UnsafeRawBufferPointer?
    /// Attribute response: the byte count and bytes in this PDU.
    public var attributeBytes: UnsafeRawBufferPointer?
    public var continuation: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The whole attribute list(s) once the last continuation arrived (borrowed from the
    /// decoder's buffer), or this PDU's own list when it was not split.
    public var complete: UnsafeRawBufferPointer?
    /// The response is a part whose list continues in the next response.
    public var isFragment: Bool { !continuation.isEmpty && pduID.carriesAttributeLists }
    public var error: DecodeError?

    public init(bytes: UnsafeRawBufferPointer) {
        pduID = SDPPDUID(rawValue: 0); transactionID = 0; parameterLength = 0
        parameters = UnsafeRawBufferPointer(start: nil, count: 0)
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            pduID = SDPPDUID(rawValue: try r.readUInt8("PDU ID"))
            transactionID = try r.readUInt16(.big, "transaction ID")
            parameterLength = Int(try r.readUInt16(.big, "parameter length"))
            parameters = r.readRemaining()
            if parameters.count != parameterLength {
                error = DecodeError(
                    layer: "sdp", code: parameters.count < parameterLength ? .truncated : .invalidLength, offset: 3,
                    message: "parameter length \(parameterLength), \(parameters.count) bytes present")
            }
            var p = ByteReader(parameters)
            try decodeParameters(&p)
        } catch {
            self.error = error.inLayer("sdp")
        }
    }

    private mutating func decodeParameters(_ p: inout ByteReader) throws(DecodeError) {
        func element(_ what: StaticString) throws(DecodeError) -> UnsafeRawBufferPointer {
            let start = p.readerIndex
            _ = try SDPDataElement.skip(&p)
            return UnsafeRawBufferPointer(rebasing: p.bytes[start..<p.readerIndex])
        }
        do throws(DecodeError) {
            switch pduID.rawValue {
            case 0x01: // §4.4.1
                errorCode = SDPErrorCode(rawValue: try p.readUInt16(.big, "error code"))
                return
            case 0x02: // §4.5.1
                searchPattern = try element("service search pattern")
                maximum = Int(try p.readUInt16(.big, "maximum service record count"))
            case 0x03: // §4.5.2
                totalRecordCount = Int(try p.readUInt16(.big, "total service record count"))
                let n = Int(try p.readUInt16(.big, "current service record count"))
                currentRecordCount = n
                try p.skip(4 * n, "service record handles")
            case 0x04: // §4.6.1
                serviceRecordHandle = try p.readUInt32(.big, "service record handle")
                maximum = Int(try p.readUInt16(.big, "maximum attribute byte count"))
                attributeIDList = try element("attribute ID list")
            case 0x05, 0x07: // §4.6.2, §4.7.2
                let n = Int(try p.readUInt16(.big, "attribute list byte count"))
                attributeBytes = try p.readBytes(n, "attribute list")
            case 0x06: // §4.7.1
                searchPattern = try element("service search pattern")
                maximum = Int(try p.readUInt16(.big, "maximum attribute byte count"))
                attributeIDList = try element("attribute ID list")
            default:
                return
            }
            let n = Int(try p.readUInt8("continuation state length"))
            guard n <= 16 else {
                throw DecodeError(code: .invalidLength, offset: p.readerIndex - 1, message: "continuation state of \(n) bytes (at most 16)")
            }
            continuation = try p.readBytes(n, "continuation state")
        } catch {
            var e = error; e.offset += 5; throw e
        }
    }

    /// The service record handles of a Service Search Response.
    public func recordHandles() -> [UInt32] {
        guard let n = currentRecordCount, parameters.count >= 4 + 4 * n else { return [] }
        return (0..<n).map { i in
            var v: UInt32 = 0
            for k in 0..<4 { v = v << 8 | UInt32(parameters[4 + 4 * i + k]) }
            return v
        }
    }

    /// Encodes the PDU (header + parameters) as sent: symmetric with `init(bytes:)`.
    public static func encode(pduID: SDPPDUID, transactionID: UInt16, parameters: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.writeUInt8(pduID.rawValue)
        w.writeUInt16(transactionID, .big)
        w.writeUInt16(UInt16(parameters.count), .big)
        w.writeBytes(parameters)
        return w.bytes
    }

    public var name: String { pduID.name }

    /// "SDP Service Search Attribute Request tid=0x0001 Handsfree", "… Response tid=1 (fragment)".
    public var summary: String {
        var s = "SDP " + pduID.name + " tid=\(transactionID)"
        if let p = searchPattern {
            let names = SDPDataElement.uuids(p).map(SDPDataElement.uuidName)
            if !names.isEmpty { s += " " + names.joined(separator: ",") }
        }
        if let h = serviceRecordHandle { s += " handle=" + Hex.fixed(UInt64(h), width: 8) }
        if let e = errorCode { s += " " + e.name }
        if let n = currentRecordCount { s += " records=\(n)" }
        if isFragment { s += " (fragment)" }
        if let c = complete {
            let recs = SDPServiceRecord.records(c)
            if !recs.isEmpty { s += ": " + recs.map(\.summary).joined(separator: "; ") }
        }
        return s
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(pduID.rawValue)); sink.string("name", pduID.name)
        sink.int("tid", Int(transactionID))
        sink.int("parameter_length", parameterLength)
        if let e = errorCode { sink.int("error_code", Int(e.rawValue)); sink.string("error_name", e.name) }
        if let p = searchPattern {
            sink.beginArray("search_pattern")
            for u in SDPDataElement.uuids(p) { sink.string("", u.description) }
            sink.endArray()
        }
        if let h = serviceRecordHandle { sink.uint("service_record_handle", UInt64(h)) }
        if let m = maximum { sink.int("maximum", m) }
        if let l = attributeIDList {
            // The list's own sequence is the array; ranges (uint32) print as one number.
            var r = ByteReader(l)
            sink.beginArray("attribute_ids")
            if let (t, d) = try? SDPDataElement.read(&r), t == 6 { SDPDataElement.describeValue(d, into: &sink, depth: 1) }
            sink.endArray()
        }
        if let t = totalRecordCount { sink.int("total_records", t) }
        if currentRecordCount != nil {
            sink.beginArray("record_handles")
            for h in recordHandles() { sink.uint("", UInt64(h)) }
            sink.endArray()
        }
        if let a = attributeBytes { sink.int("attribute_byte_count", a.count) }
        if !continuation.isEmpty { sink.hex("continuation", continuation) }
        if let c = complete {
            sink.beginArray("records")
            SDPServiceRecord.describeLists(c, into: &sink)
            sink.endArray()
        }
    }
}

/// SDP data elements (Vol 3 Part B §3): a type/size header then the data, big-endian.
public enum SDPDataElement {
    /// Type descriptors (§3.2, Table 3.1).
    public static func typeName(_ t: UInt8) -> String {
        switch t {
        case 0: "nil"
        case 1: "uint"
        case 2: "int"
        case 3: "uuid"
        case 4: "text"
        case 5: "bool"
        case 6: "sequence"
        case 7: "alternative"
        case 8: "url"
        default: "unknown"
        }
    }

    /// Reads one element header: type and the data that follows (not walked).
    public static func read(_ r: inout ByteReader) throws(DecodeError) -> (type: UInt8, data: UnsafeRawBufferPointer) {
        let h = try r.readUInt8("data element header")
        let type = h >> 3, size = h & 7
        let n: Int
        switch size {
        case 0: n = type == 0 ? 0 : 1
        case 1: n = 2
        case 2: n = 4
        case 3: n = 8
        case 4: n = 16
        case 5: n = Int(try r.readUInt8("data element size"))
        case 6: n = Int(try r.readUInt16(.big, "data element size"))
        default: n = Int(try r.readUInt32(.big, "data element size"))
        }
        return (type, try r.readBytes(n, "data element"))
    }

    @discardableResult
    static func skip(_ r: inout ByteReader) throws(DecodeError) -> UInt8 { try read(&r).type }

    static func uint(_ d: UnsafeRawBufferPointer) -> UInt64 {
        var v: UInt64 = 0
        for b in d.prefix(8) { v = v << 8 | UInt64(b) }
        return v
    }

    static func uuid(_ d: UnsafeRawBufferPointer) -> BluetoothUUID? {
        switch d.count {
        case 2, 4: return BluetoothUUID(UInt32(uint(d)))
        case 16:
            var hi: UInt64 = 0, lo: UInt64 = 0
            for i in 0..<8 { hi = hi << 8 | UInt64(d[i]); lo = lo << 8 | UInt64(d[8 + i]) }
            return BluetoothUUID(high: hi, low: lo)
        default: return nil
        }
    }

    public static func uuidName(_ u: BluetoothUUID) -> String { AssignedNumbers.uuidName(u) ?? u.description }

    /// The UUIDs of a sequence of UUIDs (a service search pattern).
    static func uuids(_ e: UnsafeRawBufferPointer) -> [BluetoothUUID] {
        var r = ByteReader(e)
        guard let (t, d) = try? read(&r), t == 6 else { return [] }
        var s = ByteReader(d)
        var out: [BluetoothUUID] = []
        while !s.isAtEnd, let (ut, ud) = try? read(&s) {
            if ut == 3, let u = uuid(ud) { out.append(u) }
        }
        return out
    }

    /// Writes the elements in `bytes` as array items: numbers, strings, nested arrays.
    public static func describeValue<S: FieldSink>(_ bytes: UnsafeRawBufferPointer, into sink: inout S, depth: Int) {
        var r = ByteReader(bytes)
        while !r.isAtEnd {
            guard let (t, d) = try? read(&r) else { sink.string("", "malformed"); return }
            describeElement(t, d, into: &sink, key: "", depth: depth)
        }
    }

    static func describeElement<S: FieldSink>(_ t: UInt8, _ d: UnsafeRawBufferPointer, into sink: inout S, key: FieldKey, depth: Int) {
        switch t {
        case 0: sink.null(key)
        case 1: sink.uint(key, uint(d))
        case 2:
            // Two's complement of 1-8 bytes, sign-extended.
            let n = min(d.count, 8), v = uint(d)
            let shift = UInt64(64 - 8 * max(n, 1))
            sink.int(key, Int(truncatingIfNeeded: Int64(bitPattern: v << shift) >> Int64(shift)))
        case 3: sink.string(key, uuid(d).map { u in AssignedNumbers.uuidName(u).map { "\(u) \($0)" } ?? u.description } ?? "malformed")
        case 4, 8: sink.string(key, String(decoding: d.prefix { $0 != 0 }, as: UTF8.self))
        case 5: sink.bool(key, d.first.map { $0 != 0 } ?? false)
        case 6, 7:
            guard depth < 12 else { sink.hex(key, d); return }
            sink.beginArray(key); describeValue(d, into: &sink, depth: depth + 1); sink.endArray()
        default: sink.hex(key, d)
        }
    }
}

/// A service record read from an attribute list (Vol 3 Part B §5): the attributes a person
/// looks for first.
public struct SDPServiceRecord: Sendable {
    public var handle: UInt32?
    public var serviceClasses: [BluetoothUUID] = []
    public var psm: UInt16?
    public var rfcommChannel: UInt8?
    public var profiles: [(uuid: BluetoothUUID, version: UInt16)] = []
    public var serviceName: String?

    /// "Handsfree (RFCOMM 3) HFP 1.6 \"Hands-Free unit\"".
    public var summary: String {
        var s = serviceClasses.first.map(SDPDataElement.uuidName) ?? "record"
        if let c = rfcommChannel { s += " (RFCOMM \(c))" } else if let p = psm { s += " (PSM " + Hex.fixed(UInt64(p), width: 4) + ")" }
        for p in profiles { s += " " + SDPDataElement.uuidName(p.uuid) + " \(p.version >> 8).\(p.version & 0xFF)" }
        if let n = serviceName { s += " \"" + n + "\"" }
        return s
    }

    /// The records of an attribute list (Service Attribute Response: one record) or of
    /// attribute lists (Service Search Attribute Response: a sequence of records).
    public static func records(_ lists: UnsafeRawBufferPointer) -> [SDPServiceRecord] {
        var r = ByteReader(lists)
        guard let (t, d) = try? SDPDataElement.read(&r), t == 6 else { return [] }
        // A list of lists starts with a sequence; a single record with a uint attribute id.
        var probe = ByteReader(d)
        if let (ft, _) = try? SDPDataElement.read(&probe), ft == 6 {
            var s = ByteReader(d)
            var out: [SDPServiceRecord] = []
            while !s.isAtEnd, out.count < 64, let (rt, rd) = try? SDPDataElement.read(&s) {
                if rt == 6 { out.append(SDPServiceRecord(attributes: rd)) }
            }
            return out
        }
        return [SDPServiceRecord(attributes: d)]
    }

    /// Parses the (id, value) pairs of one record's attribute sequence.
    public init(attributes d: UnsafeRawBufferPointer) {
        Self.forEachAttribute(d) { id, t, v in
            switch id {
            case 0x0000 where t == 1: handle = UInt32(truncatingIfNeeded: SDPDataElement.uint(v))
            case 0x0001 where t == 6:
                var s = ByteReader(v)
                while !s.isAtEnd, let (ut, ud) = try? SDPDataElement.read(&s) {
                    if ut == 3, let u = SDPDataElement.uuid(ud) { serviceClasses.append(u) }
                }
            case 0x0004 where t == 6:
                // Protocol descriptor list: ((L2CAP, PSM), (RFCOMM, channel), …) (§5.1.5).
                var s = ByteReader(v)
                while !s.isAtEnd, let (pt, pd) = try? SDPDataElement.read(&s), pt == 6 {
                    var q = ByteReader(pd)
                    guard let (ut, ud) = try? SDPDataElement.read(&q), ut == 3, let u = SDPDataElement.uuid(ud) else { continue }
                    let param = q.isAtEnd ? nil : try? SDPDataElement.read(&q)
                    if u == BluetoothUUID(0x0100), let p = param, p.type == 1 { psm = UInt16(truncatingIfNeeded: SDPDataElement.uint(p.data)) }
                    if u == BluetoothUUID(0x0003), let p = param, p.type == 1 { rfcommChannel = UInt8(truncatingIfNeeded: SDPDataElement.uint(p.data)) }
                }
            case 0x0009 where t == 6:
                var s = ByteReader(v)
                while !s.isAtEnd, let (pt, pd) = try? SDPDataElement.read(&s), pt == 6 {
                    var q = ByteReader(pd)
                    if let (ut, ud) = try? SDPDataElement.read(&q), ut == 3, let u = SDPDataElement.uuid(ud),
                        let (vt, vd) = try? SDPDataElement.read(&q), vt == 1
                    {
                        profiles.append((u, UInt16(truncatingIfNeeded: SDPDataElement.uint(vd))))
                    }
                }
            case 0x0100 where t == 4:
                serviceName = String(decoding: v.prefix { $0 != 0 }, as: UTF8.self)
            default: break
            }
        }
    }

    static func forEachAttribute(_ d: UnsafeRawBufferPointer, _ body: (UInt16, UInt8, UnsafeRawBufferPointer) -> Void) {
        var r = ByteReader(d)
        while !r.isAtEnd {
            guard let (it, id) = try? SDPDataElement.read(&r), it == 1, let (t, v) = try? SDPDataElement.read(&r) else { return }
            body(UInt16(truncatingIfNeeded: SDPDataElement.uint(id)), t, v)
        }
    }

    /// Universal attribute names (Vol 3 Part B §5.1).
    public static func attributeName(_ id: UInt16) -> String? {
        switch id {
        case 0x0000: "Service Record Handle"
        case 0x0001: "Service Class ID List"
        case 0x0002: "Service Record State"
        case 0x0003: "Service ID"
        case 0x0004: "Protocol Descriptor List"
        case 0x0005: "Browse Group List"
        case 0x0006: "Language Base Attribute ID List"
        case 0x0007: "Service Info Time To Live"
        case 0x0008: "Service Availability"
        case 0x0009: "Bluetooth Profile Descriptor List"
        case 0x000A: "Documentation URL"
        case 0x000B: "Client Executable URL"
        case 0x000C: "Icon URL"
        case 0x000D: "Additional Protocol Descriptor Lists"
        case 0x0100: "Service Name"
        case 0x0101: "Service Description"
        case 0x0102: "Provider Name"
        case 0x0200: "GOEP L2CAP PSM / Version Number List"
        case 0x0311: "Supported Features"
        default: nil
        }
    }

    /// Each record as {"handle", "classes", "psm"/"rfcomm_channel", "profiles", "name", "attributes"}.
    static func describeLists<S: FieldSink>(_ lists: UnsafeRawBufferPointer, into sink: inout S) {
        var r = ByteReader(lists)
        guard let (t, d) = try? SDPDataElement.read(&r), t == 6 else { return }
        var probe = ByteReader(d)
        var recs: [UnsafeRawBufferPointer] = []
        if let (ft, _) = try? SDPDataElement.read(&probe), ft == 6 {
            var s = ByteReader(d)
            while !s.isAtEnd, recs.count < 64, let (rt, rd) = try? SDPDataElement.read(&s) { if rt == 6 { recs.append(rd) } }
        } else {
            recs = [d]
        }
        for rd in recs {
            let rec = SDPServiceRecord(attributes: rd)
            sink.beginObject("")
            if let h = rec.handle { sink.uint("handle", UInt64(h)) }
            sink.beginArray("classes"); for c in rec.serviceClasses { sink.string("", SDPDataElement.uuidName(c)) }; sink.endArray()
            if let p = rec.psm { sink.int("psm", Int(p)) }
            if let c = rec.rfcommChannel { sink.int("rfcomm_channel", Int(c)) }
            if !rec.profiles.isEmpty {
                sink.beginArray("profiles")
                for p in rec.profiles {
                    sink.beginObject(""); sink.string("profile", SDPDataElement.uuidName(p.uuid))
                    sink.string("version", "\(p.version >> 8).\(p.version & 0xFF)"); sink.endObject()
                }
                sink.endArray()
            }
            if let n = rec.serviceName { sink.string("service_name", n) }
            sink.beginArray("attributes")
            forEachAttribute(rd) { id, t, v in
                sink.beginObject("")
                sink.int("id", Int(id))
                if let n = attributeName(id) { sink.string("name", n) }
                SDPDataElement.describeElement(t, v, into: &sink, key: "value", depth: 0)
                sink.endObject()
            }
            sink.endArray()
            sink.endObject()
        }
    }
}
