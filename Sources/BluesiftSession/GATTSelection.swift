import BluesiftWire
import BluesiftProtocols
import BluesiftGATT
import BluesiftDissect

/// `gatt`'s filters: the databases are always rebuilt from the whole capture; --service,
/// --characteristic and --handle narrow each database, the other filters choose the devices
/// that the records they pass belong to.
public enum GATTSelection {
    /// The filter that chooses devices by their records (the attribute options removed).
    public static func byRecord(_ full: FrameFilter) -> FrameFilter {
        var f = full
        f.characteristic = nil; f.service = nil; f.handles = []
        return f
    }

    /// Reads `session` (opened with `byRecord(full)`) and returns its devices, those the
    /// records it passed belong to when `full` chooses by record.
    public static func chosen(_ session: AnalysisSession, filter full: FrameFilter) -> [GATTJSON.Device] {
        let choosing = !byRecord(full).isEmpty
        let analyzer = session.analyzer
        var chosen: Set<String> = []
        session.forEach { frame in
            if choosing { chosen.formUnion(Self.devices(of: frame.decoded, analyzer.decoder)) }
        }
        let devices = analyzer.gatt.devices
        return choosing ? devices.filter { chosen.contains($0.address) } : devices
    }

    /// Each device's database narrowed by --service, --characteristic and --handle; devices
    /// left with nothing are dropped.
    public static func narrowed(_ devices: [GATTJSON.Device], filter full: FrameFilter) -> [GATTJSON.Device] {
        guard !full.handles.isEmpty || full.characteristic != nil || full.service != nil else { return devices }
        return devices.compactMap { d in
            let db = narrow(d.database, full)
            return db.isEmpty ? nil : GATTJSON.Device(address: d.address, database: db)
        }
    }

    /// The GATT devices a record belongs to, as `GATTTracker` names them: the connection's
    /// peer (or "connection 0x0040" when its address is unknown), a sniffed connection's
    /// central, and this host's own database when the peer used it as a server.
    public static func devices(of f: DecodedFrame, _ d: ProtocolDecoder) -> [String] {
        guard let c = f.connection else { return [] }
        let info = d.connection(adapter: f.record.adapter, handle: c)
        var out = [GATTTracker.peerName(info?.peer, handle: c)]
        if let central = info?.air?.central { out.append(central.description) }
        if let peripheral = info?.air?.peripheral { out.append(peripheral.description) }
        if let att = f.att, !GATTTracker.serverIsPeer(opcode: att.opcode, direction: GATTTracker.direction(of: f)) {
            out.append(GATTTracker.hostName(adapter: f.record.adapter))
        }
        return out
    }

    /// The services and characteristics that --service, --characteristic and --handle match
    /// (a service matched by itself keeps all its characteristics).
    public static func narrow(_ db: GATTDatabase, _ f: FrameFilter) -> GATTDatabase {
        var out = GATTDatabase()
        func keep(_ c: GATTDatabase.Characteristic) -> Bool {
            if let want = f.characteristic, !want.matches(c.uuid) { return false }
            if !f.handles.isEmpty {
                let mine = [c.handle, c.valueHandle] + c.descriptors.map(\.handle)
                if !mine.contains(where: f.handles.contains) { return false }
            }
            return true
        }
        for var s in db.services {
            if let want = f.service, !want.matches(s.uuid) { continue }
            if f.characteristic != nil || !f.handles.isEmpty {
                s.characteristics = s.characteristics.filter(keep)
                if s.characteristics.isEmpty { continue }
            }
            out.services.append(s)
        }
        // No service to match --service against.
        if f.service == nil { out.undiscovered = db.undiscovered.filter(keep) }
        return out
    }
}
