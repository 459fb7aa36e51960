import BluesiftWire
import BluesiftCapture
import BluesiftProtocols

/// Where a handle's name came from.
public enum NamingSource: String, Sendable {
    case discovery   // discovery traffic in this capture
    case imported    // --gatt FILE
    case plugin      // a plugin's match rule named the handle
}

/// Rebuilds each peer's GATT database from the discovery traffic it sees (Core 5.4 Vol 3
/// Part G §4.4–4.7), keeps it across reconnections, and names handles.
/// Memory: one database per device and one pending request per connection and direction.
public final class GATTTracker {
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

    /// Feed every decoded frame, in order. `peer` is the connection's peer address if known.
    public func observe(_ f: DecodedFrame, peer: BDAddr?) {
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
            var db = databases[key] ?? GATTDatabase()
            Self.apply(response: op, reader: &r, pending: p, to: &db)
            databases[key] = db
        case .errorResponse:
            pending[conn]?[dir.map { $0 == .sent ? .received : .sent }] = nil
        case .handleValueIndication:  // Service Changed invalidates the range it names
            guard let h = f.attStorage.handle, let v = f.attStorage.value, v.count >= 4,
                  databases[key]?.locate(h)?.characteristic == BluetoothUUID(0x2A05) else { return }
            let start = UInt16(v[0]) | UInt16(v[1]) << 8, end = UInt16(v[2]) | UInt16(v[3]) << 8
            databases[key]?.invalidate(from: start, to: end)
        case .readResponse:  // a changed Database Hash means the cached database is stale
            guard let v = f.attStorage.value, v.count == 16 else { return }
            let hashHandle = pendingReadHandle[conn]
            guard let h = hashHandle, databases[key]?.locate(h)?.characteristic == BluetoothUUID(0x2B2A) else { return }
            let new = Array(v)
            if let old = databaseHash[key], old != new { databases[key] = GATTDatabase() }
            databaseHash[key] = new
        default:
            break
        }
        if op == .readRequest, let h = f.attStorage.handle { pendingReadHandle[conn] = h }
    }

    var pendingReadHandle: [ConnKey: UInt16] = [:]

    static func apply(response op: ATTOpcode, reader r: inout ByteReader, pending p: Pending, to db: inout GATTDatabase) {
        switch op {
        case .readByGroupTypeResponse:  // §3.4.4.10
            guard let len = try? r.readUInt8(), len >= 6 else { return }
            let primary = p.type != BluetoothUUID(0x2801)
            while let e = try? r.readBytes(Int(len)) {
                var er = ByteReader(e)
                guard let h = try? er.readUInt16(), let end = try? er.readUInt16(),
                      let uuid = BluetoothUUID(littleEndian: er.remaining) else { return }
                db.addService(.init(start: h, end: end, uuid: uuid, primary: primary))
            }
        case .findByTypeValueResponse:  // §3.4.3.4
            guard p.type == BluetoothUUID(0x2800) || p.type == BluetoothUUID(0x2801), let uuid = p.value else { return }
            while let h = try? r.readUInt16(), let end = try? r.readUInt16() {
                db.addService(.init(start: h, end: end, uuid: uuid, primary: p.type == BluetoothUUID(0x2800)))
            }
        case .readByTypeResponse:  // §3.4.4.2
            guard let len = try? r.readUInt8(), len >= 2 else { return }
            while let e = try? r.readBytes(Int(len)) {
                var er = ByteReader(e)
                guard let h = try? er.readUInt16() else { return }
                if p.type == BluetoothUUID(0x2803) {
                    guard let props = try? er.readUInt8(), let vh = try? er.readUInt16(),
                          let uuid = BluetoothUUID(littleEndian: er.remaining) else { return }
                    db.addCharacteristic(.init(handle: h, valueHandle: vh, uuid: uuid, properties: props))
                } else if p.type == BluetoothUUID(0x2802), let start = try? er.readUInt16() {
                    db.addInclude(serviceHandle: h, includedStart: start)
                }
            }
        case .findInformationResponse:  // §3.4.3.2: format 1 = 16-bit, 2 = 128-bit UUIDs
            guard let format = try? r.readUInt8() else { return }
            let size = format == 2 ? 16 : 2
            while let h = try? r.readUInt16(), let u = try? r.readBytes(size) {
                if let uuid = BluetoothUUID(littleEndian: u) { db.addAttribute(handle: h, uuid: uuid) }
            }
        default: break
        }
    }

    /// Names a handle on a connection: the server's rebuilt database (the peer's, or this
    /// host's own with `serverIsPeer: false`), else the imported one.
    public func locate(adapter: UInt16, connection: UInt16, handle: UInt16, serverIsPeer: Bool = true) -> (GATTDatabase.Location, NamingSource)? {
        let conn = ConnKey(adapter: adapter, handle: connection)
        let k = !serverIsPeer ? (centralKeys[conn] ?? localKeys[adapter])
              : lastDevice?.conn == conn ? lastDevice!.key : deviceOfConnection[conn]
        if let k, let loc = databases[k]?.locate(handle) {
            return (loc, .discovery)
        }
        if serverIsPeer, let loc = imported?.locate(handle) { return (loc, .imported) }
        return nil
    }

    /// Every device with a non-empty database, in order of appearance.
    public var devices: [GATTJSON.Device] {
        deviceOrder.compactMap { k in
            guard let db = databases[k], !db.isEmpty else { return nil }
            return GATTJSON.Device(address: k.text, database: db)
        }
    }
}
