import Foundation
import BluesiftWire

/// The `gatt --format json` schema, also accepted by `--gatt FILE`:
/// {"devices": [{"address", "services": [{"uuid","name","start","end","primary",
///   "characteristics": [{"uuid","name","handle","value_handle","properties",
///     "descriptors": [{"handle","uuid","name"}]}]}],
///   "undiscovered": [characteristics as above]}]}   (`undiscovered` only when there are
///   characteristics outside every discovered service)
/// A device whose database changed during the capture (docs/gatt-json.md) also has
/// "generation" (the number of the database above: the last), "first_frame", "reason" and
/// "earlier_generations": [{"generation", "first_frame", "reason", "services",
/// "undiscovered"}], oldest first; readers that know none of these read the last database.
public enum GATTJSON {
    public struct Device: Sendable, Equatable {
        /// "c0:ba:0d:00:00:01", or "connection 0x0040" when the capture never said.
        public var address: String
        /// The database in force at the end (the last generation).
        public var database: GATTDatabase
        /// Every generation, oldest first, when there were several (else empty).
        public var generations: [Generation] = []
        public init(address: String, database: GATTDatabase) { self.address = address; self.database = database }

        /// Generation `n` (1-based); a device that never changed has only generation 1.
        public func generation(_ n: Int) -> GATTDatabase? {
            generations.isEmpty ? (n == 1 ? database : nil) : (1...generations.count).contains(n) ? generations[n - 1].database : nil
        }
        public var generationCount: Int { max(1, generations.count) }
    }

    /// One database of a device, from the frame that began it.
    public struct Generation: Sendable, Equatable {
        public var firstFrame: Int?
        public var reason: String?
        public var database: GATTDatabase
        public init(firstFrame: Int?, reason: String?, database: GATTDatabase) {
            self.firstFrame = firstFrame; self.reason = reason; self.database = database
        }
    }

    public static func encode(_ devices: [Device]) -> String {
        var s = "{\"devices\": ["
        for (di, d) in devices.enumerated() {
            s += di == 0 ? "\n" : ",\n"
            s += "  {\"address\": \(quote(d.address)), "
            if let last = d.generations.last { s += generationKeys(d.generations.count, last) }
            database(d.database, indent: "  ", into: &s)
            if d.generations.count > 1 {
                s += ",\n   \"earlier_generations\": ["
                for (gi, g) in d.generations.dropLast().enumerated() {
                    s += gi == 0 ? "\n" : ",\n"
                    s += "   {" + generationKeys(gi + 1, g)
                    database(g.database, indent: "   ", into: &s)
                    s += "}"
                }
                s += "\n   ]"
            }
            s += "}"
        }
        s += devices.isEmpty ? "]}\n" : "\n]}\n"
        return s
    }

    static func generationKeys(_ n: Int, _ g: Generation) -> String {
        "\"generation\": \(n), " + (g.firstFrame.map { "\"first_frame\": \($0), " } ?? "") + (g.reason.map { "\"reason\": \(quote($0)), " } ?? "")
    }

    /// "services": [...] and "undiscovered" when there are any; `indent` is the device's.
    static func database(_ db: GATTDatabase, indent i: String, into s: inout String) {
        s += "\"services\": ["
        for (si, svc) in db.services.enumerated() {
            s += si == 0 ? "\n" : ",\n"
            s += i + "  {\"uuid\": \(quote(svc.uuid.description)), \"name\": \(name(svc.uuid)), \"start\": \(svc.start), \"end\": \(svc.end), \"primary\": \(svc.primary)"
            if !svc.includes.isEmpty { s += ", \"includes\": [\(svc.includes.map(String.init).joined(separator: ", "))]" }
            s += ",\n" + i + "   \"characteristics\": ["
            characteristics(svc.characteristics, indent: i + "    ", into: &s)
            s += svc.characteristics.isEmpty ? "]}" : "\n" + i + "   ]}"
        }
        s += db.services.isEmpty ? "]" : "\n" + i + "]"
        if !db.undiscovered.isEmpty {
            s += ",\n" + i + " \"undiscovered\": ["
            characteristics(db.undiscovered, indent: i + "  ", into: &s)
            s += "\n" + i + " ]"
        }
    }

    static func characteristics(_ list: [GATTDatabase.Characteristic], indent: String, into s: inout String) {
        for (ci, c) in list.enumerated() {
            s += ci == 0 ? "\n" : ",\n"
            let props = GATTDatabase.propertyNames.filter { c.properties & $0.bit != 0 }.map { quote($0.name) }
            s += indent + "{\"uuid\": \(quote(c.uuid.description)), \"name\": \(name(c.uuid)), \"handle\": \(c.handle), \"value_handle\": \(c.valueHandle), \"properties\": [\(props.joined(separator: ", "))]"
            s += ", \"descriptors\": ["
            s += c.descriptors.map { "{\"handle\": \($0.handle), \"uuid\": \(quote($0.uuid.description)), \"name\": \(name($0.uuid))}" }.joined(separator: ", ")
            s += "]}"
        }
    }

    static func quote(_ s: String) -> String {
        let w = JSONFieldWriter(capacity: s.utf8.count + 2)
        w.appendRaw("\""); w.appendEscaped(s); w.appendRaw("\"")
        return String(decoding: w.out, as: UTF8.self)
    }

    static func name(_ uuid: BluetoothUUID) -> String {
        GATTNames.name(uuid).map(quote) ?? "null"
    }

    public struct ImportError: Error, CustomStringConvertible {
        public var message: String
        /// Where in the document (empty: the top level or a syntax error).
        public var path: [JSONLocator.Key] = []
        /// Byte offset of a syntax error.
        public var offset: Int?
        public init(message: String, path: [JSONLocator.Key] = [], offset: Int? = nil) {
            self.message = message; self.path = path; self.offset = offset
        }
        public var description: String { path.isEmpty ? message : JSONLocator.text(path) + ": " + message }
    }

    /// Parses the schema above; handles may be integers or "0x…" strings, names are ignored.
    public static func decode(_ data: Data) throws -> [Device] {
        let root: Any
        if let e = JSONLocator.syntaxError([UInt8](data)) { throw ImportError(message: e.message, offset: e.offset) }
        do { root = try JSONSerialization.jsonObject(with: data) } catch {
            throw ImportError(message: "not valid JSON")
        }
        guard let top = root as? [String: Any], let devs = top["devices"] as? [[String: Any]] else {
            throw ImportError(message: "expected {\"devices\": [...]} at the top level")
        }
        var out: [Device] = []
        for (di, d) in devs.enumerated() {
            let address = d["address"] as? String ?? "device \(di)"
            let here: [JSONLocator.Key] = [.key("devices"), .index(di)]
            var device = Device(address: address, database: try database(d, here))
            if d["generation"] != nil {
                var gens: [Generation] = []
                for (gi, g) in ((d["earlier_generations"] as? [[String: Any]]) ?? []).enumerated() {
                    let ghere = here + [.key("earlier_generations"), .index(gi)]
                    guard g["generation"] as? Int == gi + 1 else {
                        throw ImportError(message: "expected generation \(gi + 1) (earlier generations oldest first)", path: ghere + [.key("generation")])
                    }
                    gens.append(.init(firstFrame: g["first_frame"] as? Int, reason: g["reason"] as? String, database: try database(g, ghere)))
                }
                guard d["generation"] as? Int == gens.count + 1 else {
                    throw ImportError(message: "expected generation \(gens.count + 1) (one after the earlier generations)", path: here + [.key("generation")])
                }
                gens.append(.init(firstFrame: d["first_frame"] as? Int, reason: d["reason"] as? String, database: device.database))
                if gens.count > 1 { device.generations = gens }
            }
            out.append(device)
        }
        return out
    }

    /// "services" and "undiscovered" of a device or of one of its generations.
    static func database(_ d: [String: Any], _ here: [JSONLocator.Key]) throws -> GATTDatabase {
        var db = GATTDatabase()
        for (si, s) in ((d["services"] as? [[String: Any]]) ?? []).enumerated() {
            let shere = here + [.key("services"), .index(si)]
            let uuid = try uuidField(s, "uuid", shere)
            let start = try handleField(s, "start", shere)
            let end = try handleField(s, "end", shere)
            var svc = GATTDatabase.Service(start: start, end: end, uuid: uuid, primary: s["primary"] as? Bool ?? true)
            for (ci, c) in ((s["characteristics"] as? [[String: Any]]) ?? []).enumerated() {
                svc.characteristics.append(try characteristic(c, shere + [.key("characteristics"), .index(ci)]))
            }
            db.services.append(svc)
        }
        db.services.sort { $0.start < $1.start }
        for (ci, c) in ((d["undiscovered"] as? [[String: Any]]) ?? []).enumerated() {
            db.undiscovered.append(try characteristic(c, here + [.key("undiscovered"), .index(ci)]))
        }
        db.undiscovered.sort { $0.handle < $1.handle }
        return db
    }

    static func characteristic(_ c: [String: Any], _ chere: [JSONLocator.Key]) throws -> GATTDatabase.Characteristic {
        let handle = try handleField(c, "handle", chere)
        let valueHandle = (try? handleField(c, "value_handle", chere)) ?? handle &+ 1
        var props: UInt8 = 0
        for p in (c["properties"] as? [String]) ?? [] {
            guard let bit = GATTDatabase.propertyNames.first(where: { $0.name == p })?.bit else {
                throw ImportError(message: "unknown property \"\(p)\"", path: chere + [.key("properties")])
            }
            props |= bit
        }
        var ch = GATTDatabase.Characteristic(
            handle: handle, valueHandle: valueHandle,
            uuid: try uuidField(c, "uuid", chere), properties: props)
        for (xi, x) in ((c["descriptors"] as? [[String: Any]]) ?? []).enumerated() {
            let xhere = chere + [.key("descriptors"), .index(xi)]
            ch.descriptors.append(.init(handle: try handleField(x, "handle", xhere), uuid: try uuidField(x, "uuid", xhere)))
        }
        return ch
    }

    static func handleField(_ o: [String: Any], _ key: String, _ here: [JSONLocator.Key]) throws -> UInt16 {
        if let n = o[key] as? Int, n >= 0, n <= 0xFFFF { return UInt16(n) }
        if let s = o[key] as? String, s.hasPrefix("0x"), let n = UInt16(s.dropFirst(2), radix: 16) { return n }
        throw ImportError(message: "expected a handle (0…65535)", path: here + [.key(key)])
    }

    static func uuidField(_ o: [String: Any], _ key: String, _ here: [JSONLocator.Key]) throws -> BluetoothUUID {
        guard let s = o[key] as? String, let u = BluetoothUUID(string: s) else {
            throw ImportError(message: "expected a UUID string such as \"180f\"", path: here + [.key(key)])
        }
        return u
    }
}

/// Names for UUIDs: assigned numbers first.
public enum GATTNames {
    public static func name(_ uuid: BluetoothUUID) -> String? {
        AssignedNumbers.uuidName(uuid)
    }

    /// How text names an attribute: its name, except that a 16-bit UUID from 0xF000 up (member
    /// and SDO UUIDs) names the organisation that holds it, not the attribute, so the UUID
    /// stays with it: "fee7 (Tencent Holdings Limited.)", not "Tencent Holdings Limited.".
    public static func label(_ uuid: String, name: String?) -> String {
        guard let name else { return uuid }
        if uuid.count == 4, let v = UInt16(uuid, radix: 16), v >= 0xF000 { return uuid + " (" + name + ")" }
        return name
    }
}
