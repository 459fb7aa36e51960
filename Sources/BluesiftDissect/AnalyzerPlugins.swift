import BluesiftWire
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins

/// Per-capture state of vendor decoding: the handle of each connection's pending Read
/// Request (a Read Response does not repeat it) and the locations plugins named.
struct VendorState {
    var lastRead: [UInt32: UInt16] = [:]
    var pluginLocations: [UInt16: GATTDatabase.Location] = [:]
}

extension Analyzer {
    /// Runs the plugins over an ATT value: Write Request/Command and Signed Write (write),
    /// Notification (notify), Indication (indicate), Read Response (read). Uses the GATT
    /// location already set on `a`; without one, a plugin's handle override may name it.
    public func applyPlugins(_ a: inout AnalyzedFrame) {
        guard let plugins, a.decoded.layers.contains(.att), let conn = a.decoded.connection else { return }
        let op = a.decoded.attStorage.opcode
        let key = UInt32(a.record.adapter) << 16 | UInt32(conn)
        let handle: UInt16
        let value: UnsafeRawBufferPointer
        let direction: PluginDirection
        switch op {
        case .writeRequest, .writeCommand, .handleValueNotification, .handleValueIndication, .signedWriteCommand:
            // the ATT decoder already split off handle and value (signature too)
            guard let h = a.decoded.attStorage.handle, let v = a.decoded.attStorage.value else { return }
            handle = h
            value = v
            direction = op == .handleValueNotification ? .notify : op == .handleValueIndication ? .indicate : .write
        case .readRequest:
            if let h = a.decoded.attStorage.handle { pluginState.lastRead[key] = h }
            return
        case .readResponse:
            guard let h = pluginState.lastRead.removeValue(forKey: key), let v = a.decoded.attStorage.value else { return }
            handle = h
            value = v
            direction = .read
        default:
            return
        }
        let loc = a.location
        if let loc, loc.descriptor != nil || loc.isDeclaration { return }
        guard
            let r = plugins.process(
                service: loc?.service, characteristic: loc?.characteristic, handle: handle,
                direction: direction, device: UInt64(key), value: value,
                timeMicroseconds: a.record.timestamp.microseconds)
        else { return }
        if r.namedByHandle, a.location == nil, let service = r.match.service {
            a.location = pluginLocation(handle: handle, service: service, characteristic: r.match.characteristic)
            a.namedBy = .plugin
        }
        a.vendor = r
    }

    /// Plugins on advertising data: each report's Manufacturer Specific Data and Service Data
    /// structures (HCI LE Advertising Reports, legacy and extended, and sniffed LL advertising
    /// PDUs), each decoded on its own; the record's `vendor` holds them all.
    func applyAdvertisingPlugins(_ a: inout AnalyzedFrame, _ plugins: PluginSet) {
        var result: PluginSet.Result?
        let extended = a.decoded.advStorage.isExtended
        // The keys at the offsets decoding found (no report built); the report only on a miss.
        a.decoded.advStorage.forEachReportKey { k in
            let address = k.address
            let addressType = Int64(k.addressType)
            let rssi = Int64(k.rssi)
            let pdu = extended ? 5 : Int64(k.eventType)
            let data = k.data
            // The set keeps the name per address; a rule or plugin that reads it looks it up.
            let r = plugins.advertisingReport(
                data: data, address: address, addressType: addressType, pdu: pdu, rssi: rssi,
                observeName: {
                    guard let address, let n = Self.localName(data) else { return false }
                    plugins.observeName(n, address: address)
                    return true
                },
                decode: { Self.decodeStructures(data, plugins, address: address, addressType: addressType, pdu: pdu, rssi: rssi) })
            guard let r else { return }
            // The record takes a report's result as it is (shared, usually the one an earlier
            // record with the same report took); more are added to a copy.
            if result == nil {
                result = r
            } else {
                result!.messages.append(contentsOf: r.messages)
                result!.sources.append(contentsOf: r.sources)
            }
        }
        a.vendor = result
    }

    /// One report's Manufacturer Specific Data and Service Data structures, each decoded on its own.
    static func decodeStructures(
        _ data: UnsafeRawBufferPointer, _ plugins: PluginSet, address: UInt64?, addressType: Int64, pdu: Int64, rssi: Int64
    ) -> PluginSet.Result? {
        var ctx = AdvertisingContext()
        ctx.address = address
        ctx.addressType = addressType
        ctx.rssi = rssi
        ctx.pdu = pdu
        let rep = AdvertisingReport(eventType: 0, table: .legacy, data: data) // its structures and UUIDs
        var result: PluginSet.Result?
        for s in rep.structures {
            let t = s.type.rawValue
            guard t == 0xFF || t == 0x16 || t == 0x20 || t == 0x21 else { continue }
            guard
                let r = plugins.advertisingResult(
                    type: t, value: s.value, context: ctx, serviceUUIDs: { rep.serviceUUIDs },
                    report: rep.data)
            else { continue }
            if result == nil {
                result = r
            } else {
                result!.messages.append(contentsOf: r.messages)
                result!.sources.append(contentsOf: r.sources)
            }
        }
        return result
    }

    /// Complete Local Name, else Shortened Local Name, as bytes (one pass over the structures).
    static func localName(_ data: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var short: UnsafeRawBufferPointer?
        for s in ADStructures(data) {
            if s.type == .completeLocalName { return s.value }
            if s.type == .shortenedLocalName, short == nil { short = s.value }
        }
        return short
    }

    /// Plugins on Classic channels: RFCOMM data (UIH on a data DLCI, not AT lines) by server
    /// channel, else by the service SDP named on it; else the payload of a dynamic L2CAP
    /// channel by PSM. Sent by the host = write.
    func applyChannelPlugins(_ a: inout AnalyzedFrame, _ plugins: PluginSet) {
        guard let conn = a.decoded.connection else { return }
        let direction: PluginDirection = a.record.direction == .sent ? .write : .notify
        let device = UInt64(a.record.adapter) << 16 | UInt64(conn)
        var result: PluginSet.Result?
        if a.decoded.layers.contains(RFCOMM.layer), let f = a.decoded.moduleLayer(RFCOMMFrame.self) {
            guard f.dlci != 0, f.frameType == .uih, f.at.isEmpty, !f.information.isEmpty else { return }
            let t = a.record.timestamp.microseconds
            result = plugins.process(channel: .rfcomm(f.channel), direction: direction, device: device, value: f.information, timeMicroseconds: t)
            if result == nil, plugins.targetsServices, let name = f.serviceName {
                result = plugins.process(
                    channel: .rfcommService(name), direction: direction, device: device, value: f.information,
                    timeMicroseconds: t, stream: 0x8000 | UInt16(f.channel))
            }
        } else if let psm = a.decoded.l2capStorage.psm, !a.decoded.l2capStorage.payload.isEmpty {
            result = plugins.process(
                channel: .psm(psm), direction: direction, device: device,
                value: a.decoded.l2capStorage.payload, timeMicroseconds: a.record.timestamp.microseconds)
        }
        a.vendor = result
    }

    /// Plugins on Bluetooth Mesh vendor models (`mesh:` targets): a decrypted access message
    /// with a 3-octet opcode (Mesh Protocol v1.1 §3.7.3.1), from the advertising bearer or a
    /// GATT proxy, goes to the plugin of its company and opcode; its messages join the record's.
    func applyMeshPlugins(_ a: inout AnalyzedFrame, _ plugins: PluginSet) {
        guard a.decoded.layers.contains(Mesh.layer), let m = a.decoded.moduleLayer(MeshPDU.self)?.mesh, let access = m.access,
            access.opcode.size == 3
        else { return }
        let bytes = access.encode()
        let device = UInt64(m.network?.src ?? 0)
        guard
            let r = bytes.withUnsafeBytes({
                plugins.process(meshAccess: $0, device: device, timeMicroseconds: a.record.timestamp.microseconds)
            })
        else { return }
        if a.vendor == nil {
            a.vendor = r
        } else {
            a.vendor!.messages.append(contentsOf: r.messages)
        }
    }

    /// A one-characteristic database answers `locate` the way discovery would have.
    func pluginLocation(handle: UInt16, service: BluetoothUUID, characteristic: BluetoothUUID) -> GATTDatabase.Location? {
        if let l = pluginState.pluginLocations[handle] { return l }
        guard handle > 0 else { return nil }
        var s = GATTDatabase.Service(start: handle - 1, end: handle, uuid: service, primary: true)
        s.characteristics = [GATTDatabase.Characteristic(handle: handle - 1, valueHandle: handle, uuid: characteristic, properties: 0)]
        let l = GATTDatabase(services: [s]).locate(handle)
        pluginState.pluginLocations[handle] = l
        return l
    }
}
