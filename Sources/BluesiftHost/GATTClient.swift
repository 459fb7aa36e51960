import BluesiftProtocols
import BluesiftWire

/// A descriptor found by Find Information.
public struct DiscoveredDescriptor: Sendable, Hashable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
}

/// A characteristic declaration (Core 5.4 Vol 3 Part G §3.3.1) and its descriptors.
public struct DiscoveredCharacteristic: Sendable, Hashable {
    public var declarationHandle: UInt16
    /// Broadcast 0x01, Read 0x02, Write Without Response 0x04, Write 0x08, Notify 0x10, Indicate 0x20…
    public var properties: UInt8
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID
    /// Last handle belonging to this characteristic.
    public var endHandle: UInt16
    public var descriptors: [DiscoveredDescriptor] = []

    /// Client Characteristic Configuration (0x2902), where present.
    public var cccdHandle: UInt16? { descriptors.first { $0.uuid == BluetoothUUID(0x2902) }?.handle }
}

/// A primary service and its characteristics.
public struct DiscoveredService: Sendable, Hashable {
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var uuid: BluetoothUUID
    public var characteristics: [DiscoveredCharacteristic] = []
}

extension ATTClient {
    // MARK: procedures (Core 5.4 Vol 3 Part G §4)

    /// Exchange MTU (§4.3.1); returns the MTU in force.
    @discardableResult
    public func exchangeMTU(_ preferred: UInt16? = nil) throws(HostError) -> UInt16 {
        let want = max(23, preferred ?? preferredMTU)
        do throws(HostError) {
            guard case .exchangeMTUResponse(let r) = try transact(ATTExchangeMTURequest(clientRxMTU: want)) else {
                throw HostError.protocolError("bad answer to Exchange MTU")
            }
            mtu = max(23, min(want, r.serverRxMTU))
        } catch {
            guard case .attError(_, _, let code) = error, code == .requestNotSupported else { throw error }
            mtu = 23
        }
        return mtu
    }

    /// Primary services, their characteristics and descriptors (§4.4.1, §4.6.1, §4.7.1).
    public func discoverAll() throws(HostError) -> [DiscoveredService] {
        var services = try discoverPrimaryServices()
        for i in services.indices {
            services[i].characteristics = try discoverCharacteristics(of: services[i])
            for j in services[i].characteristics.indices {
                let c = services[i].characteristics[j]
                if c.valueHandle < c.endHandle {
                    services[i].characteristics[j].descriptors = try discoverDescriptors(from: c.valueHandle + 1, to: c.endHandle)
                }
            }
        }
        return services
    }

    /// Read By Group Type over 0x2800 until Attribute Not Found.
    public func discoverPrimaryServices() throws(HostError) -> [DiscoveredService] {
        var out: [DiscoveredService] = []
        var start: UInt16 = 0x0001
        while true {
            let m: ATTMessage
            do { m = try transact(ATTReadByGroupTypeRequest(startHandle: start, endHandle: 0xFFFF, type: BluetoothUUID(0x2800))) } catch { if Self.isNotFound(error) { break }; throw error }
            guard case .readByGroupTypeResponse(let r) = m else { throw unexpected(m, to: "Read By Group Type") }
            for e in r.entries {
                guard let uuid = BluetoothUUID(littleEndian: e.value) else { throw .protocolError("service UUID of \(e.value.count) bytes") }
                out.append(DiscoveredService(startHandle: e.start, endHandle: e.end, uuid: uuid))
            }
            guard let last = r.entries.last, last.end >= start, last.end < 0xFFFF else { break }
            start = last.end + 1
        }
        return out
    }

    /// Read By Type over 0x2803 within the service.
    public func discoverCharacteristics(of service: DiscoveredService) throws(HostError) -> [DiscoveredCharacteristic] {
        var out: [DiscoveredCharacteristic] = []
        var start = service.startHandle
        while start <= service.endHandle {
            let m: ATTMessage
            do { m = try transact(ATTReadByTypeRequest(startHandle: start, endHandle: service.endHandle, type: BluetoothUUID(0x2803))) } catch { if Self.isNotFound(error) { break }; throw error }
            guard case .readByTypeResponse(let r) = m else { throw unexpected(m, to: "Read By Type") }
            for e in r.entries {
                let v = e.value
                guard v.count == 5 || v.count == 19, let uuid = BluetoothUUID(littleEndian: Array(v[3...])) else {
                    throw .protocolError("characteristic declaration of \(v.count) bytes at \(Hex.fixed(UInt64(e.handle), width: 4))")
                }
                out.append(
                    DiscoveredCharacteristic(
                        declarationHandle: e.handle, properties: v[0],
                        valueHandle: UInt16(v[1]) | UInt16(v[2]) << 8, uuid: uuid,
                        endHandle: service.endHandle))
            }
            guard let last = r.entries.last, last.handle >= start, last.handle < service.endHandle else { break }
            start = last.handle + 1
        }
        for i in out.indices.dropLast() { out[i].endHandle = out[i + 1].declarationHandle - 1 }
        return out
    }

    /// Find Information over a handle range.
    public func discoverDescriptors(from first: UInt16, to last: UInt16) throws(HostError) -> [DiscoveredDescriptor] {
        var out: [DiscoveredDescriptor] = []
        var start = first
        while start <= last {
            let m: ATTMessage
            do { m = try transact(ATTFindInformationRequest(startHandle: start, endHandle: last)) } catch { if Self.isNotFound(error) { break }; throw error }
            guard case .findInformationResponse(let r) = m else { throw unexpected(m, to: "Find Information") }
            out += r.entries.map { DiscoveredDescriptor(handle: $0.handle, uuid: $0.uuid) }
            guard let h = r.entries.last?.handle, h >= start, h < last else { break }
            start = h + 1
        }
        return out
    }

    static func isNotFound(_ e: HostError) -> Bool {
        if case .attError(_, _, let code) = e, code == .attributeNotFound { return true }
        return false
    }

    /// Read (§4.8.1), continued with Read Blob while answers fill the MTU (§4.8.3).
    public func read(_ handle: UInt16) throws(HostError) -> [UInt8] {
        let m = try transact(ATTReadRequest(handle: handle))
        guard case .readResponse(let r) = m else { throw unexpected(m, to: "Read") }
        var value = r.value
        var chunk = value.count
        while chunk == Int(mtu) - 1 && value.count < 512 {
            let b: ATTMessage
            do { b = try transact(ATTReadBlobRequest(handle: handle, offset: UInt16(value.count))) } catch {
                if case .attError(_, _, let code) = error, code == .attributeNotLong || code == .invalidOffset { break }
                throw error
            }
            guard case .readBlobResponse(let blob) = b else { throw unexpected(b, to: "Read Blob") }
            value += blob.value
            chunk = blob.value.count
        }
        return value
    }

    /// Write Request (§4.9.3), or prepared writes when the value exceeds MTU-3 (§4.9.4).
    /// `withResponse: false` sends a Write Command (§4.9.1), which must fit MTU-3.
    public func write(_ handle: UInt16, _ value: [UInt8], withResponse: Bool = true) throws(HostError) {
        if !withResponse {
            guard value.count <= Int(mtu) - 3 else {
                throw .protocolError("\(value.count) bytes do not fit a Write Command at MTU \(mtu)")
            }
            try send(ATTWriteCommand(handle: handle, value: value).encode())
            return
        }
        if value.count > Int(mtu) - 3 { return try writeLong(handle, value) }
        let m = try transact(ATTWriteRequest(handle: handle, value: value))
        guard case .writeResponse = m else { throw unexpected(m, to: "Write Request") }
    }

    /// Prepare Write Requests of MTU-5 bytes, checked against their echoes, then Execute Write.
    public func writeLong(_ handle: UInt16, _ value: [UInt8]) throws(HostError) {
        let step = Int(mtu) - 5
        var offset = 0
        repeat {
            let part = Array(value[offset..<min(offset + step, value.count)])
            let m = try transact(ATTPrepareWriteRequest(handle: handle, offset: UInt16(offset), value: part))
            guard case .prepareWriteResponse(let echo) = m, echo.handle == handle, echo.offset == UInt16(offset), echo.value == part else {
                _ = try? transact(ATTExecuteWriteRequest(commit: false))
                throw .protocolError("Prepare Write echo differs at offset \(offset); write cancelled")
            }
            offset += part.count
        } while offset < value.count
        let m = try transact(ATTExecuteWriteRequest(commit: true))
        guard case .executeWriteResponse = m else { throw unexpected(m, to: "Execute Write") }
    }

    /// Writes the CCCD (§4.12.3): notifications 0x0001, indications 0x0002.
    public func subscribe(_ c: DiscoveredCharacteristic, indications: Bool = false) throws(HostError) {
        guard let cccd = c.cccdHandle else {
            throw .protocolError("characteristic \(c.uuid) at \(Hex.fixed(UInt64(c.valueHandle), width: 4)) has no CCCD")
        }
        try write(cccd, [indications ? 0x02 : 0x01, 0x00])
    }

    public func unsubscribe(_ c: DiscoveredCharacteristic) throws(HostError) {
        guard let cccd = c.cccdHandle else { return }
        try write(cccd, [0x00, 0x00])
    }
}
