import BluesiftWire

/// One advertising or scan-response report, legacy or extended.
public struct Advertisement: Sendable, Hashable {
    public var address: BDAddr
    public var addressType: AddressType
    /// Legacy: ADV_IND 0 … SCAN_RSP 4. Extended: the 16-bit event-type bit field.
    public var eventType: UInt16
    public var rssi: Int8
    /// AD structures (Core 5.4 Vol 3 Part C §11).
    public var data: [UInt8]
    public var isExtended: Bool

    /// Complete (0x09) or shortened (0x08) local name from the AD structures.
    public var localName: String? {
        var i = 0, short: String?
        while i < data.count {
            let len = Int(data[i])
            guard len > 0, i + 1 + len <= data.count else { break }
            let type = data[i + 1], value = data[(i + 2)..<(i + 1 + len)]
            if type == 0x09 { return String(decoding: value, as: UTF8.self) }
            if type == 0x08 { short = String(decoding: value, as: UTF8.self) }
            i += 1 + len
        }
        return short
    }
}

/// The link as the controller reported it (LE [Enhanced] Connection Complete).
public struct LEConnection: Sendable, Hashable {
    public var handle: UInt16
    public var peer: BDAddr
    public var peerType: AddressType
    /// 0 central, 1 peripheral.
    public var role: UInt8
    /// Units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
}

/// The events the host acts on; everything else is `.other`.
enum HostEvent {
    case commandComplete(opcode: UInt16, parameters: [UInt8])        // §7.7.14
    case commandStatus(opcode: UInt16, status: UInt8)                // §7.7.15
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)  // §7.7.5
    case numberOfCompletedPackets([(handle: UInt16, count: UInt16)]) // §7.7.19
    case hardwareError(UInt8)                                        // §7.7.16
    /// Encryption Change (§7.7.8) and Encryption Key Refresh Complete (§7.7.39, enabled).
    case encryptionChange(status: UInt8, handle: UInt16, enabled: Bool)
    case leConnectionComplete(status: UInt8, LEConnection)           // §7.7.65.1 / .10
    case advertisingReports([Advertisement])                         // §7.7.65.2 / .13
    case leConnectionUpdateComplete(status: UInt8, handle: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16) // §7.7.65.3
    /// Random number (8 bytes) little-endian, as the event carries it.
    case leLongTermKeyRequest(handle: UInt16, rand: [UInt8], ediv: UInt16)  // §7.7.65.5
    case other(code: UInt8)

    /// Parses an event packet (code, length, parameters); nil when it is malformed.
    static func parse(_ packet: [UInt8]) -> HostEvent? {
        packet.withUnsafeBytes { p -> HostEvent? in
            var r = ByteReader(p)
            return try? parse(&r)
        }
    }

    private static func parse(_ r: inout ByteReader) throws(DecodeError) -> HostEvent {
        let code = try r.readUInt8("event code")
        _ = try r.readUInt8("parameter length")
        switch code {
        case 0x0E:
            _ = try r.readUInt8("num packets")
            let op = try r.readUInt16()
            return .commandComplete(opcode: op, parameters: Array(r.readRemaining()))
        case 0x0F:
            let status = try r.readUInt8()
            _ = try r.readUInt8("num packets")
            return .commandStatus(opcode: try r.readUInt16(), status: status)
        case 0x05:
            let status = try r.readUInt8()
            let handle = try r.readUInt16() & 0x0FFF
            return .disconnectionComplete(status: status, handle: handle, reason: try r.readUInt8())
        case 0x13:
            let n = Int(try r.readUInt8())
            var list: [(handle: UInt16, count: UInt16)] = []
            for _ in 0..<n { list.append((try r.readUInt16() & 0x0FFF, try r.readUInt16())) }
            return .numberOfCompletedPackets(list)
        case 0x10:
            return .hardwareError(try r.readUInt8())
        case 0x08:
            let status = try r.readUInt8()
            let handle = try r.readUInt16() & 0x0FFF
            return .encryptionChange(status: status, handle: handle, enabled: try r.readUInt8() != 0)
        case 0x30:
            let status = try r.readUInt8()
            return .encryptionChange(status: status, handle: try r.readUInt16() & 0x0FFF, enabled: status == 0)
        case 0x3E:
            return try parseLEMeta(&r)
        default:
            return .other(code: code)
        }
    }

    private static func parseLEMeta(_ r: inout ByteReader) throws(DecodeError) -> HostEvent {
        let sub = try r.readUInt8("subevent")
        switch sub {
        case 0x01, 0x0A:
            let status = try r.readUInt8()
            let handle = try r.readUInt16() & 0x0FFF
            let role = try r.readUInt8()
            let type = AddressType(rawValue: try r.readUInt8())
            let peer = try r.readAddress()
            if sub == 0x0A { try r.skip(12, "resolvable private addresses") }
            let c = LEConnection(handle: handle, peer: peer, peerType: type, role: role,
                                 interval: try r.readUInt16(), latency: try r.readUInt16(),
                                 supervisionTimeout: try r.readUInt16())
            return .leConnectionComplete(status: status, c)
        case 0x02:
            // Reports laid out one after another, as BlueZ and Bumble do.
            let n = Int(try r.readUInt8())
            var out: [Advertisement] = []
            for _ in 0..<n {
                let type = try r.readUInt8()
                let at = AddressType(rawValue: try r.readUInt8())
                let a = try r.readAddress()
                let data = Array(try r.readBytes(Int(try r.readUInt8()), "advertising data"))
                let rssi = try r.readInt8()
                out.append(Advertisement(address: a, addressType: at, eventType: UInt16(type), rssi: rssi, data: data, isExtended: false))
            }
            return .advertisingReports(out)
        case 0x0D:
            let n = Int(try r.readUInt8())
            var out: [Advertisement] = []
            for _ in 0..<n {
                let type = try r.readUInt16()
                let at = AddressType(rawValue: try r.readUInt8())
                let a = try r.readAddress()
                try r.skip(4, "phys, sid, tx power")
                let rssi = try r.readInt8()
                try r.skip(9, "periodic interval, direct address")
                let data = Array(try r.readBytes(Int(try r.readUInt8()), "advertising data"))
                out.append(Advertisement(address: a, addressType: at, eventType: type, rssi: rssi, data: data, isExtended: true))
            }
            return .advertisingReports(out)
        case 0x03:
            let status = try r.readUInt8()
            let handle = try r.readUInt16() & 0x0FFF
            return .leConnectionUpdateComplete(status: status, handle: handle, interval: try r.readUInt16(),
                                               latency: try r.readUInt16(), timeout: try r.readUInt16())
        case 0x05:
            let handle = try r.readUInt16() & 0x0FFF
            let rand = Array(try r.readBytes(8, "random number"))
            return .leLongTermKeyRequest(handle: handle, rand: rand, ediv: try r.readUInt16())
        default:
            return .other(code: 0x3E)
        }
    }
}
