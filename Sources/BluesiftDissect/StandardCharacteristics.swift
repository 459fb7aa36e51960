import BluesiftWire

/// Decoders for the values of common standard characteristics and descriptors
/// (GATT Specification Supplement; Core 5.4 Vol 3 Part G §3.3.3, §7).
/// Each writes fields into a sink and returns a one-line summary; nil when the UUID is not
/// one of these or the value does not fit its format (the raw hex is shown instead).
public enum StandardCharacteristics {
    /// UUIDs decoded here, for documentation and tests.
    public static let supported: [UInt32] = [
        0x2A00, 0x2A01, 0x2A04, 0x2A05, 0x2A07, 0x2A08, 0x2A19, 0x2A1C, 0x2A23, 0x2A24, 0x2A25, 0x2A26,
        0x2A27, 0x2A28, 0x2A29, 0x2A2B, 0x2A37, 0x2A38, 0x2A50, 0x2AA6, 0x2B29, 0x2B2A, 0x2B3A,
        0x2900, 0x2901, 0x2902, 0x2904
    ]

    static let strings: Set<UInt32> = [0x2A00, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29, 0x2901]

    public static func describe<S: FieldSink>(_ uuid: BluetoothUUID, _ v: UnsafeRawBufferPointer, into sink: inout S) -> String? {
        guard let u = uuid.shortValue else { return nil }
        var r = ByteReader(v)
        if strings.contains(u) {
            let text = String(decoding: v.prefix(while: { $0 != 0 }), as: UTF8.self)
            sink.string("text", text)
            return "\"\(text)\""
        }
        do {
            switch u {
            case 0x2A01: // Appearance
                let a = try r.readUInt16()
                sink.int("appearance", Int(a))
                let name = AssignedNumbers.appearanceName(a)
                sink.optionalString("appearance_name", name)
                return "appearance \(name ?? Hex.fixed(UInt64(a), width: 4))"
            case 0x2A04: // Peripheral Preferred Connection Parameters
                let minI = try r.readUInt16(), maxI = try r.readUInt16(), lat = try r.readUInt16(), to = try r.readUInt16()
                sink.int("min_interval", Int(minI)); sink.int("max_interval", Int(maxI))
                sink.int("latency", Int(lat)); sink.int("supervision_timeout", Int(to))
                return "interval \(Double(minI) * 1.25)–\(Double(maxI) * 1.25) ms, latency \(lat), timeout \(Int(to) * 10) ms"
            case 0x2A05: // Service Changed
                let s = try r.readUInt16(), e = try r.readUInt16()
                sink.int("start_handle", Int(s)); sink.int("end_handle", Int(e))
                return "service changed \(Hex.fixed(UInt64(s), width: 4))–\(Hex.fixed(UInt64(e), width: 4))"
            case 0x2A07: // Tx Power Level
                let p = try r.readInt8()
                sink.int("tx_power_dbm", Int(p))
                return "tx power \(p) dBm"
            case 0x2A08: // Date Time
                let t = try dateTime(&r, into: &sink)
                return t
            case 0x2A19: // Battery Level
                let l = try r.readUInt8()
                sink.int("level", Int(l))
                return "battery \(l)%"
            case 0x2A1C: // Temperature Measurement
                let flags = try r.readUInt8()
                let t = try float32(&r)
                let unit = flags & 1 == 0 ? "°C" : "°F"
                sink.string("temperature", t); sink.string("unit", unit == "°C" ? "celsius" : "fahrenheit")
                var s = "temperature \(t) \(unit)"
                if flags & 2 != 0 { s += " at " + (try dateTime(&r, into: &sink)) }
                if flags & 4 != 0 { let ty = try r.readUInt8(); sink.int("type", Int(ty)) }
                return s
            case 0x2A23: // System ID
                let id = try r.readUInt64()
                sink.uint("system_id", id)
                return "system id \(Hex.fixed(id, width: 16))"
            case 0x2A2B: // Current Time
                let t = try dateTime(&r, into: &sink)
                let dow = try r.readUInt8(), frac = try r.readUInt8(), reason = try r.readUInt8()
                sink.int("day_of_week", Int(dow)); sink.int("fractions256", Int(frac)); sink.int("adjust_reason", Int(reason))
                return "current time \(t)"
            case 0x2A37: // Heart Rate Measurement
                let flags = try r.readUInt8()
                let bpm = flags & 1 == 0 ? Int(try r.readUInt8()) : Int(try r.readUInt16())
                sink.int("heart_rate", bpm)
                if flags & 0x06 == 0x06 { sink.bool("sensor_contact", true) } else if flags & 0x04 != 0 { sink.bool("sensor_contact", false) }
                if flags & 0x08 != 0 { sink.int("energy_expended", Int(try r.readUInt16())) }
                if flags & 0x10 != 0 {
                    sink.beginArray("rr_intervals_ms")
                    while r.readableBytes >= 2 { sink.int("", Int(try r.readUInt16()) * 1000 / 1024) }
                    sink.endArray()
                }
                return "heart rate \(bpm) bpm"
            case 0x2A38: // Body Sensor Location
                let l = try r.readUInt8()
                let names = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]
                let n = Int(l) < names.count ? names[Int(l)] : "Unknown"
                sink.int("location", Int(l)); sink.string("location_name", n)
                return "sensor location \(n)"
            case 0x2A50: // PnP ID
                let src = try r.readUInt8(), vid = try r.readUInt16(), pid = try r.readUInt16(), ver = try r.readUInt16()
                sink.int("vendor_id_source", Int(src)); sink.int("vendor_id", Int(vid))
                let vendor = src == 1 ? AssignedNumbers.companyName(vid) : nil
                sink.optionalString("vendor", vendor)
                sink.int("product_id", Int(pid)); sink.int("product_version", Int(ver))
                return "PnP \(src == 1 ? "SIG" : src == 2 ? "USB" : "?") vendor \(vendor ?? Hex.fixed(UInt64(vid), width: 4)) product \(Hex.fixed(UInt64(pid), width: 4)) version \(Hex.fixed(UInt64(ver), width: 4))"
            case 0x2AA6: // Central Address Resolution
                let s = try r.readUInt8()
                sink.bool("supported", s != 0)
                return "central address resolution \(s != 0 ? "supported" : "not supported")"
            case 0x2B29: // Client Supported Features
                let f = try r.readUInt8()
                var names: [String] = []
                if f & 1 != 0 { names.append("robust_caching") }
                if f & 2 != 0 { names.append("eatt") }
                if f & 4 != 0 { names.append("multiple_handle_value_notifications") }
                sink.int("features", Int(f))
                sink.beginArray("feature_names"); for n in names { sink.string("", n) }; sink.endArray()
                return "client features: " + (names.isEmpty ? "none" : names.joined(separator: ", "))
            case 0x2B3A: // Server Supported Features
                let f = try r.readUInt8()
                sink.int("features", Int(f)); sink.bool("eatt", f & 1 != 0)
                return "server features: " + (f & 1 != 0 ? "eatt" : "none")
            case 0x2B2A: // Database Hash
                guard v.count == 16 else { return nil }
                sink.hex("hash", v)
                return "database hash " + Hex.string(v)
            case 0x2900: // Characteristic Extended Properties
                let p = try r.readUInt16()
                sink.bool("reliable_write", p & 1 != 0); sink.bool("writable_auxiliaries", p & 2 != 0)
                return "extended properties \(Hex.fixed(UInt64(p), width: 4))"
            case 0x2902: // Client Characteristic Configuration (Core 5.4 Vol 3 Part G §3.3.3.3)
                let c = try r.readUInt16()
                sink.bool("notifications", c & 1 != 0); sink.bool("indications", c & 2 != 0)
                let s =
                    c & 3 == 0
                    ? "notifications and indications off"
                    : [c & 1 != 0 ? "notifications on" : nil, c & 2 != 0 ? "indications on" : nil].compactMap { $0 }.joined(separator: ", ")
                return s
            case 0x2904: // Characteristic Presentation Format
                let fmt = try r.readUInt8(), exp = try r.readInt8(), unit = try r.readUInt16()
                sink.int("format", Int(fmt)); sink.int("exponent", Int(exp)); sink.int("unit", Int(unit))
                let unitName = AssignedNumbers.uuidName(BluetoothUUID(UInt32(unit)))
                sink.optionalString("unit_name", unitName)
                return "format \(fmt) exponent \(exp) unit \(unitName ?? Hex.fixed(UInt64(unit), width: 4))"
            default:
                return nil
            }
        } catch {
            return nil
        }
    }

    static func dateTime<S: FieldSink>(_ r: inout ByteReader, into sink: inout S) throws(DecodeError) -> String {
        let y = try r.readUInt16(), mo = try r.readUInt8(), d = try r.readUInt8()
        let h = try r.readUInt8(), mi = try r.readUInt8(), s = try r.readUInt8()
        func p(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let text = "\(y)-\(p(mo))-\(p(d)) \(p(h)):\(p(mi)):\(p(s))"
        sink.string("date_time", text)
        return text
    }

    /// IEEE 11073 32-bit FLOAT: 8-bit signed exponent, 24-bit signed mantissa.
    static func float32(_ r: inout ByteReader) throws(DecodeError) -> String {
        let raw = try r.readUInt32()
        var mantissa = Int32(bitPattern: raw << 8) >> 8
        let exponent = Int8(truncatingIfNeeded: raw >> 24)
        switch raw & 0xFFFFFF {
        case 0x7FFFFF: return "NaN"
        case 0x800000: return "NRes"
        case 0x7FFFFE: return "+INF"
        case 0x800002: return "-INF"
        default: break
        }
        if exponent >= 0 {
            var v = Int64(mantissa)
            for _ in 0..<exponent { v *= 10 }
            return String(v)
        }
        let neg = mantissa < 0
        if neg { mantissa = -mantissa }
        var digits = String(mantissa)
        let places = Int(-exponent)
        if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
        let i = digits.index(digits.endIndex, offsetBy: -places)
        return (neg ? "-" : "") + digits[..<i] + "." + digits[i...]
    }
}
