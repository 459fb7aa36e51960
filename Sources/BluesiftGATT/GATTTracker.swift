import BluesiftWire
import BluesiftCapture
import BluesiftProtocols

/// Where a handle's name came from.
public enum NamingSource: String, Sendable {
    case discovery // discovery traffic in this capture
    case imported // --gatt FILE
    case plugin // a plugin's match rule named the handle
}

/// Rebuilds each peer's GATT database from the discovery traffic it sees (Core 5.4 Vol 3
/// Part G §4.4–4.7), keeps it across reconnections, and names handles.
/// A server's database may change (§2.5.2): a Service Changed indication (§7.1), a changed
/// Database Hash (§7.3) or discovery that contradicts what was learnt starts a new
/// generation, and each PDU is named by the generation in force when it passed.
/// Memory: a database per device and generation (at most `maxGenerations` kept) and one
/// pending request per connection and direction.
public final class GATTTracker {
    /// Why a generation of a device's database began.
    public enum GenerationReason: String, Sendable {
        case first = "first discovery"
        case discovery = "a connection's discovery contradicts the previous database"
        case serviceChanged = "Service Changed indication"
        case databaseHash = "Database Hash changed"
    }

    /// A device's database as it stood from one change to the next.
    public struct Generation: Sendable, Equatable {
        public var firstFrame: Int?
        public var reason: GenerationReason
        public var database: GATTDatabase
    }

    /// Earlier generations kept per device (a server changing its database on every
    /// connection would otherwise grow without bound); the oldest go first.
    public static let maxGenerations = 64

    public struct DeviceKey: Hashable, Sendable, CustomStringConvertible {
        public var text: String
        public var description: String { text }
    }

    struct Pending {
        var opcode: ATTOpcode
        var start: UInt16
        var end: UInt16
        var type: BluetoothUUID?
        var value: BluetoothUUID?
    }

    struct ConnKey: Hashable { var adapter: UInt16; var handle: UInt16 }

    public private(set) var databases: [DeviceKey: GATTDatabase] = [:]
    /// Devices in order of first appearance, for stable output.
    public private(set) var deviceOrder: [DeviceKey] = []
    var imported: GATTDatabase?
    var deviceOfConnection: [ConnKey: DeviceKey] = [:]
    var pending: [ConnKey: [Direction?: Pending]] = [:]
    var databaseHash: [DeviceKey: [UInt8]] = [:]
    /// Per device: the generations before the one in `databases`, oldest first, and how the
    /// one in force began.
    var earlier: [DeviceKey: [Generation]] = [:]
    var current: [DeviceKey: (firstFrame: Int?, reason: GenerationReason)] = [:]
    /// Per device: what the connection discovering it now has learnt since it began (or since
    /// the generation began), for a new generation that this connection's discovery starts.
    /// A connection is its handle and the frame that opened it (handles are reused).
    var fresh: [DeviceKey: (link: Link, database: GATTDatabase)] = [:]
    struct Link: Equatable { var conn: ConnKey; var start: Int? }

    public init() {}

    /// A database from `--gatt FILE`, used for any device whose discovery was not captured.
    public func importDatabase(_ db: GATTDatabase) { imported = db }

    /// Whose database a PDU's handles belong to: the peer's when this host is the client,
    /// this host's own when the peer is (phones are GATT servers too). Unknown direction: the peer.
    public static func serverIsPeer(opcode op: ATTOpcode, direction: Direction?) -> Bool {
        guard let d = direction else { return true }
        return (op.sender == .client) == (d == .sent)
    }

    /// Who sent an ATT PDU, as the host view names it: a sniffed packet has no host, so the
    /// central stands for "this host" (sent) and the peripheral for the peer (received).
    @inline(__always)
    public static func direction(of f: DecodedFrame) -> Direction? {
        if let d = f.record.direction { return d }
        guard f.record.kind == .ll, let c = f.ll?.fromCentral else { return nil }
        return c ? .sent : .received
    }

    /// A peer's name in `devices`: its address, or its connection when the capture never said it.
    public static func peerName(_ peer: BDAddr?, handle: UInt16) -> String {
        peer?.description ?? "connection " + Hex.fixed(UInt64(handle), width: 4)
    }

    /// This host's own database's name in `devices` (phones are GATT servers too).
    public static func hostName(adapter: UInt16) -> String { "this host (hci\(adapter))" }

    /// This host's own database on each adapter, made on first use.
    var localKeys: [UInt16: DeviceKey] = [:]
    /// Sniffed connections: the central's own database (a phone is a GATT server too).
    var centralKeys: [ConnKey: DeviceKey] = [:]

    func centralKey(_ conn: ConnKey, _ central: BDAddr) -> DeviceKey {
        if let k = centralKeys[conn], k.text == central.description { return k }
        let k = DeviceKey(text: central.description)
        centralKeys[conn] = k
        if databases[k] == nil { databases[k] = GATTDatabase(); deviceOrder.append(k) }
        return k
    }

    func localKey(_ adapter: UInt16) -> DeviceKey {
        if let k = localKeys[adapter] { return k }
        let k = DeviceKey(text: Self.hostName(adapter: adapter))
        localKeys[adapter] = k
        if databases[k] == nil { databases[k] = GATTDatabase(); deviceOrder.append(k) }
        return k
    }

    /// The device of the last ATT record's connection and peer: records come in runs on one
    /// connection, and finding it costs a lookup and an address turned into text. Only
    /// `deviceKey` changes `deviceOfConnection`, so the answer stands for the same pair.
    var lastDevice: (conn: ConnKey, peer: BDAddr?, key: DeviceKey)?

    func deviceKey(_ f: DecodedFrame, _ conn: ConnKey, peer: BDAddr?) -> DeviceKey {
        if let last = lastDevice, last.conn == conn, last.peer == peer { return last.key }
        let k = findDeviceKey(conn, peer: peer)
        lastDevice = (conn, peer, k)
        return k
    }

    private func findDeviceKey(_ conn: ConnKey, peer: BDAddr?) -> DeviceKey {
        if let k = deviceOfConnection[conn], peer == nil || k.text == peer!.description { return k }
        let k = DeviceKey(text: Self.peerName(peer, handle: conn.handle))
        deviceOfConnection[conn] = k
        if databases[k] == nil { databases[k] = GATTDatabase(); deviceOrder.append(k) }
        return k
    }

    /// Feed every decoded frame, in order. `peer` is the connection's peer address if known;
    /// `connectionStart` the frame that opened the connection (tells a reused handle apart).
    public func observe(_ f: DecodedFrame, peer: BDAddr?, connectionStart: Int? = nil) {
        // The PDU is read where the frame holds it (`attStorage`): no copy per record.
        guard f.layers.contains(.att), let handle = f.connection, !f.attStorage.bytes.isEmpty else { return }
        let op = f.attStorage.opcode
        let conn = ConnKey(adapter: f.record.adapter, handle: handle)
        let dir = Self.direction(of: f)
        let peerKey = deviceKey(f, conn, peer: peer)
        let key: DeviceKey
        if Self.serverIsPeer(opcode: op, direction: dir) {
            key = peerKey
        } else if f.record.kind == .ll, let c = f.ll?.central {
            key = centralKey(conn, c)
        } else {
            key = localKey(conn.adapter)
        }
        var r = ByteReader(f.attStorage.bytes, at: 1)
        switch op {
        case .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest:
            guard let start = try? r.readUInt16(), let end = try? r.readUInt16() else { return }
            var p = Pending(opcode: op, start: start, end: end)
            if op == .readByTypeRequest || op == .readByGroupTypeRequest { p.type = BluetoothUUID(littleEndian: r.remaining) }
            if op == .findByTypeValueRequest {
                p.type = (try? r.readBytes(2)).flatMap { BluetoothUUID(littleEndian: $0) }
                p.value = BluetoothUUID(littleEndian: r.remaining)
            }
            pending[conn, default: [:]][dir] = p
        case .findInformationResponse, .findByTypeValueResponse, .readByTypeResponse, .readByGroupTypeResponse:
            let reqDir: Direction? = dir.map { $0 == .sent ? .received : .sent }
            guard let p = pending[conn]?[reqDir], op.answers == p.opcode else { return }
            pending[conn]?[reqDir] = nil
            let entries = Self.entries(response: op, reader: &r, pending: p)
            guard !entries.isEmpty else { return }
            let link = Link(conn: conn, start: connectionStart)
            var mine = fresh[key].flatMap { $0.link == link ? $0.database : nil } ?? GATTDatabase()
            var db = databases[key] ?? GATTDatabase()
            if current[key] == nil { current[key] = (f.record.frame, .first) }
            if Self.contradicts(entries, db) {
                // The server's database changed: a new generation, from what this connection
                // learnt so far when that agrees with the response.
                if Self.contradicts(entries, mine) { mine = GATTDatabase() }
                Self.apply(entries, to: &mine)
                newGeneration(key, mine, frame: f.record.frame, reason: .discovery)
            } else {
                Self.apply(entries, to: &db)
                databases[key] = db
                Self.apply(entries, to: &mine)
            }
            fresh[key] = (link, mine)
        case .errorResponse:
            pending[conn]?[dir.map { $0 == .sent ? .received : .sent }] = nil
        case .handleValueIndication: // Service Changed invalidates the range it names
            guard let h = f.attStorage.handle, let v = f.attStorage.value, v.count >= 4,
                databases[key]?.locate(h)?.characteristic == BluetoothUUID(0x2A05)
            else { return }
            let start = UInt16(v[0]) | UInt16(v[1]) << 8, end = UInt16(v[2]) | UInt16(v[3]) << 8
            var db = databases[key]!
            db.invalidate(from: start, to: end)
            newGeneration(key, db, frame: f.record.frame, reason: .serviceChanged)
            fresh[key] = nil
        case .readResponse: // a changed Database Hash means the cached database is stale
            guard let v = f.attStorage.value, v.count == 16 else { return }
            let hashHandle = pendingReadHandle[conn]
            guard let h = hashHandle, databases[key]?.locate(h)?.characteristic == BluetoothUUID(0x2B2A) else { return }
            let new = Array(v)
            if let old = databaseHash[key], old != new {
                newGeneration(key, GATTDatabase(), frame: f.record.frame, reason: .databaseHash)
                fresh[key] = nil
            }
            databaseHash[key] = new
        default:
            break
        }
        if op == .readRequest, let h = f.attStorage.handle { pendingReadHandle[conn] = h }
    }

    var pendingReadHandle: [ConnKey: UInt16] = [:]

    /// The one in force becomes an earlier generation; `db` is in force from `frame` on.
    func newGeneration(_ key: DeviceKey, _ db: GATTDatabase, frame: Int, reason: GenerationReason) {
        let was = current[key] ?? (nil, .first)
        var list = earlier[key] ?? []
        list.append(Generation(firstFrame: was.firstFrame, reason: was.reason, database: databases[key] ?? GATTDatabase()))
        if list.count > Self.maxGenerations { list.removeFirst() }
        earlier[key] = list
        databases[key] = db
        current[key] = (frame, reason)
    }

    /// What one discovery response says (Core 5.4 Vol 3 Part F §3.4).
    enum Entry {
        case service(GATTDatabase.Service)
        case characteristic(GATTDatabase.Characteristic)
        case include(serviceHandle: UInt16, includedStart: UInt16)
        case attribute(handle: UInt16, uuid: BluetoothUUID)
    }

    static func entries(response op: ATTOpcode, reader r: inout ByteReader, pending p: Pending) -> [Entry] {
        var out: [Entry] = []
        switch op {
        case .readByGroupTypeResponse: // §3.4.4.10
            guard let len = try? r.readUInt8(), len >= 6 else { break }
            let primary = p.type != BluetoothUUID(0x2801)
            while let e = try? r.readBytes(Int(len)) {
                var er = ByteReader(e)
                guard let h = try? er.readUInt16(), let end = try? er.readUInt16(),
                    let uuid = BluetoothUUID(littleEndian: er.remaining)
                else { break }
                out.append(.service(.init(start: h, end: end, uuid: uuid, primary: primary)))
            }
        case .findByTypeValueResponse: // §3.4.3.4
            guard p.type == BluetoothUUID(0x2800) || p.type == BluetoothUUID(0x2801), let uuid = p.value else { break }
            while let h = try? r.readUInt16(), let end = try? r.readUInt16() {
                out.append(.service(.init(start: h, end: end, uuid: uuid, primary: p.type == BluetoothUUID(0x2800))))
            }
        case .readByTypeResponse: // §3.4.4.2
            guard let len = try? r.readUInt8(), len >= 2 else { break }
            while let e = try? r.readBytes(Int(len)) {
                var er = ByteReader(e)
                guard let h = try? er.readUInt16() else { break }
                if p.type == BluetoothUUID(0x2803) {
                    guard let props = try? er.readUInt8(), let vh = try? er.readUInt16(),
                        let uuid = BluetoothUUID(littleEndian: er.remaining)
                    else { break }
                    out.append(.characteristic(.init(handle: h, valueHandle: vh, uuid: uuid, properties: props)))
                } else if p.type == BluetoothUUID(0x2802), let start = try? er.readUInt16() {
                    out.append(.include(serviceHandle: h, includedStart: start))
                }
            }
        case .findInformationResponse: // §3.4.3.2: format 1 = 16-bit, 2 = 128-bit UUIDs
            guard let format = try? r.readUInt8() else { break }
            let size = format == 2 ? 16 : 2
            while let h = try? r.readUInt16(), let u = try? r.readBytes(size) {
                if let uuid = BluetoothUUID(littleEndian: u) { out.append(.attribute(handle: h, uuid: uuid)) }
            }
        default: break
        }
        return out
    }

    static func apply(_ entries: [Entry], to db: inout GATTDatabase) {
        for e in entries {
            switch e {
            case .service(let s): db.addService(s)
            case .characteristic(let c): db.addCharacteristic(c)
            case .include(let h, let start): db.addInclude(serviceHandle: h, includedStart: start)
            case .attribute(let h, let uuid): db.addAttribute(handle: h, uuid: uuid)
            }
        }
    }

    /// A response the database cannot hold as it is: a service over a range another service
    /// holds, a characteristic declared where another is (or where one's value or
    /// descriptor is), a descriptor of another type where one was found.
    static func contradicts(_ entries: [Entry], _ db: GATTDatabase) -> Bool {
        guard !db.isEmpty else { return false }
        for e in entries {
            switch e {
            case .service(let n):
                if db.services.contains(where: { $0.start <= n.end && n.start <= $0.end && ($0.start != n.start || $0.end != n.end || $0.uuid != n.uuid) }) { return true }
            case .characteristic(let n):
                if db.services.contains(where: { $0.start == n.handle }) { return true }
                for c in db.services.flatMap(\.characteristics) + db.undiscovered {
                    if c.handle == n.handle
                        ? (c.uuid != n.uuid || c.valueHandle != n.valueHandle)
                        : (c.valueHandle == n.handle || c.descriptors.contains { $0.handle == n.handle })
                    {
                        return true
                    }
                }
            case .attribute(let h, let uuid):
                if let s = uuid.shortValue, (0x2800...0x2803).contains(s) { continue }
                for c in db.services.flatMap(\.characteristics) + db.undiscovered {
                    if c.descriptors.contains(where: { $0.handle == h && $0.uuid != uuid }) { return true }
                }
            case .include: break
            }
        }
        return false
    }

    /// Names a handle on a connection: the server's rebuilt database (the peer's, or this
    /// host's own with `serverIsPeer: false`), else the imported one.
    public func locate(adapter: UInt16, connection: UInt16, handle: UInt16, serverIsPeer: Bool = true) -> (GATTDatabase.Location, NamingSource)? {
        let conn = ConnKey(adapter: adapter, handle: connection)
        let k =
            !serverIsPeer
            ? (centralKeys[conn] ?? localKeys[adapter])
            : lastDevice?.conn == conn ? lastDevice!.key : deviceOfConnection[conn]
        if let k, let loc = databases[k]?.locate(handle) {
            return (loc, .discovery)
        }
        if serverIsPeer, let loc = imported?.locate(handle) { return (loc, .imported) }
        return nil
    }

    /// A device's generations, oldest first, the one in force last. Consecutive ones that do
    /// not contradict each other are one (a Service Changed, a new hash, after which the
    /// same database was found again); empty ones are left out.
    public func generations(_ k: DeviceKey) -> [Generation] {
        guard let db = databases[k] else { return [] }
        let now = current[k] ?? (nil, .first)
        var out: [Generation] = []
        for g in (earlier[k] ?? []) + [Generation(firstFrame: now.firstFrame, reason: now.reason, database: db)] where !g.database.isEmpty {
            if let last = out.last, !Self.contradicts(Self.entries(of: g.database), last.database),
                !Self.contradicts(Self.entries(of: last.database), g.database)
            {
                var merged = last.database
                Self.apply(Self.entries(of: g.database), to: &merged)
                out[out.count - 1].database = merged
            } else {
                out.append(g)
            }
        }
        return out
    }

    /// A database as discovery entries (to merge or compare two).
    static func entries(of db: GATTDatabase) -> [Entry] {
        var out: [Entry] = []
        for s in db.services {
            var plain = s
            plain.characteristics = []; plain.includes = []
            out.append(.service(plain))
            for i in s.includes { out.append(.include(serviceHandle: s.start, includedStart: i)) }
        }
        for c in db.services.flatMap(\.characteristics) + db.undiscovered {
            var plain = c
            plain.descriptors = []
            out.append(.characteristic(plain))
            for d in c.descriptors { out.append(.attribute(handle: d.handle, uuid: d.uuid)) }
        }
        return out
    }

    /// Every device with a non-empty database, in order of appearance: the database in force
    /// at the end, and the earlier generations when it changed.
    public var devices: [GATTJSON.Device] {
        deviceOrder.compactMap { k in
            let gens = generations(k)
            guard let last = gens.last else { return nil }
            var d = GATTJSON.Device(address: k.text, database: last.database)
            if gens.count > 1 {
                d.generations = gens.map { .init(firstFrame: $0.firstFrame, reason: $0.reason.rawValue, database: $0.database) }
            }
            return d
        }
    }
}
