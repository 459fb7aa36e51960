import BluesiftWire

// Parameters of the commands and events that connection tracking and analysis need.
// Field layouts: Core 5.4 Vol 4 Part E §7 (section cited per case).

extension HCIPacket {
    mutating func decodeCommandParameters(_ op: UInt16, _ p: inout ByteReader) throws(DecodeError) {
        switch op {
        case 0x0405: // §7.1.5 Create Connection
            parametersDecoded = true
            peer = try p.readAddress("BD_ADDR")
            peerAddressType = .public
        case 0x0406: // §7.1.6 Disconnect
            parametersDecoded = true
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            reason = HCIStatus(try p.readUInt8("reason"))
        case 0x200D: // §7.8.12 LE Create Connection
            parametersDecoded = true
            try p.skip(5, "scan interval/window, filter policy")
            peerAddressType = AddressType(rawValue: try p.readUInt8("peer address type"))
            peer = try p.readAddress("peer address")
            try p.skip(1, "own address type")
            try readConnectionParameters(&p)
        case 0x2043, 0x2085: // §7.8.66 LE Extended Create Connection [v1], [v2] (advertising handle, subevent first)
            parametersDecoded = true
            if op == 0x2085 { try p.skip(2, "advertising handle, subevent") }
            try p.skip(2, "filter policy, own address type")
            peerAddressType = AddressType(rawValue: try p.readUInt8("peer address type"))
            peer = try p.readAddress("peer address")
            let phys = try p.readUInt8("initiating PHYs")
            if phys != 0 { // the first PHY's parameters stand for all
                try p.skip(4, "scan interval/window")
                try readConnectionParameters(&p)
            }
        case 0x2013: // §7.8.18 LE Connection Update
            parametersDecoded = true
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            try readConnectionParameters(&p)
        case 0x2020, 0x2021: // §7.8.31/32 LE Remote Connection Parameter Request (Negative) Reply
            parametersDecoded = true
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            if op == 0x2021 { reason = HCIStatus(try p.readUInt8("reason")) } else { try readConnectionParameters(&p) }
        case 0x0411, 0x0413, 0x0415, 0x041B, 0x041D, 0x041F, 0x0C08, 0x1403, 0x1405, 0x1406, 0x1408,
            0x2015, 0x2016, 0x2019, 0x201A, 0x201B, 0x2022, 0x2030, 0x2032:
            // Commands whose first parameter is a connection handle (§7.1-§7.8).
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
        default:
            break
        }
    }

    /// Interval min/max, latency, supervision timeout (CE lengths follow, not kept).
    private mutating func readConnectionParameters(_ p: inout ByteReader) throws(DecodeError) {
        intervalMin = try p.readUInt16(.little, "interval min")
        intervalMax = try p.readUInt16(.little, "interval max")
        latency = try p.readUInt16(.little, "latency")
        supervisionTimeout = try p.readUInt16(.little, "supervision timeout")
    }

    mutating func decodeEventParameters(_ code: UInt8, _ p: inout ByteReader) throws(DecodeError) {
        parametersDecoded = true
        switch code {
        case 0x03, 0x2C: // §7.7.3 Connection Complete, §7.7.35 Synchronous Connection Complete
            status = HCIStatus(try p.readUInt8("status"))
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            peer = try p.readAddress("BD_ADDR")
            peerAddressType = .public
            linkType = try p.readUInt8("link type")
            if code == 0x03 { encryption = try p.readUInt8("encryption enabled") }
        case 0x05: // §7.7.5 Disconnection Complete
            status = HCIStatus(try p.readUInt8("status"))
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            reason = HCIStatus(try p.readUInt8("reason"))
        case 0x08, 0x59: // §7.7.8 Encryption Change [v1], [v2] (key size added)
            status = HCIStatus(try p.readUInt8("status"))
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            encryption = try p.readUInt8("encryption enabled")
            if code == 0x59 { keySize = try p.readUInt8("key size") }
        case 0x0E: // §7.7.14 Command Complete
            numPackets = try p.readUInt8("num HCI command packets")
            let op = try p.readUInt16(.little, "command opcode")
            commandOpcode = op
            let ret = p.remaining
            returnParameters = ret
            // Nearly every command returns its status first; NOP (0x0000) returns nothing.
            if op != 0, let s = ret.first { status = HCIStatus(s) }
        case 0x0F: // §7.7.15 Command Status
            status = HCIStatus(try p.readUInt8("status"))
            numPackets = try p.readUInt8("num HCI command packets")
            commandOpcode = try p.readUInt16(.little, "command opcode")
        case 0x12: // §7.7.18 Role Change
            status = HCIStatus(try p.readUInt8("status"))
            peer = try p.readAddress("BD_ADDR")
            role = try p.readUInt8("new role")
        case 0x13: // §7.7.19 Number of Completed Packets: pairs (handle, count), read in describe
            let n = Int(try p.readUInt8("num handles"))
            if p.readableBytes < 4 * n, !truncated {
                throw DecodeError(
                    code: .truncated, offset: p.readerIndex,
                    message: "num handles \(n): need \(4 * n) bytes, \(p.readableBytes) left")
            }
            if n == 1 { handle = try p.readUInt16(.little, "handle") & 0x0FFF }
        case 0x04, 0x06, 0x07, 0x0B, 0x0C, 0x17, 0x18:
            // Events led by a BD_ADDR or a status + handle, kept minimal.
            try decodeMinorEvent(code, &p)
        case 0x3E: // §7.7.65 LE Meta
            let sub = try p.readUInt8("subevent code")
            subevent = sub
            try decodeLEMeta(sub, &p)
        default:
            parametersDecoded = false
        }
    }

    private mutating func decodeMinorEvent(_ code: UInt8, _ p: inout ByteReader) throws(DecodeError) {
        switch code {
        case 0x04, 0x17, 0x18: // §7.7.4 Connection Request, §7.7.23/24 Link Key Request/Notification
            peer = try p.readAddress("BD_ADDR")
            parametersDecoded = code == 0x17
        default: // §7.7.6 Authentication Complete, §7.7.7 Remote Name, §7.7.11/12 remote features/version
            status = HCIStatus(try p.readUInt8("status"))
            if code == 0x07 {
                peer = try p.readAddress("BD_ADDR")
            } else {
                handle = try p.readUInt16(.little, "handle") & 0x0FFF
            }
            parametersDecoded = code == 0x06
        }
    }

    /// Core 5.4 Vol 4 Part E §7.7.65.x
    private mutating func decodeLEMeta(_ sub: UInt8, _ p: inout ByteReader) throws(DecodeError) {
        switch sub {
        case 0x01, 0x0A, 0x29: // .1 LE Connection Complete, .10 Enhanced [v1], [v2]
            status = HCIStatus(try p.readUInt8("status"))
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            role = try p.readUInt8("role")
            peerAddressType = AddressType(rawValue: try p.readUInt8("peer address type"))
            peer = try p.readAddress("peer address")
            if sub != 0x01 { try p.skip(12, "local/peer resolvable private address") }
            interval = try p.readUInt16(.little, "connection interval")
            latency = try p.readUInt16(.little, "peripheral latency")
            supervisionTimeout = try p.readUInt16(.little, "supervision timeout")
        case 0x02, 0x0B, 0x0D: // advertising reports: the `adv` layer decodes them
            break
        case 0x03: // .3 LE Connection Update Complete
            status = HCIStatus(try p.readUInt8("status"))
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            interval = try p.readUInt16(.little, "connection interval")
            latency = try p.readUInt16(.little, "peripheral latency")
            supervisionTimeout = try p.readUInt16(.little, "supervision timeout")
        case 0x04: // .4 LE Read Remote Features Complete
            status = HCIStatus(try p.readUInt8("status"))
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            features = try p.readUInt64(.little, "LE features")
        case 0x05: // .5 LE Long Term Key Request
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            parametersDecoded = false
        case 0x06: // .6 LE Remote Connection Parameter Request
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            intervalMin = try p.readUInt16(.little, "interval min")
            intervalMax = try p.readUInt16(.little, "interval max")
            latency = try p.readUInt16(.little, "latency")
            supervisionTimeout = try p.readUInt16(.little, "timeout")
        case 0x07: // .7 LE Data Length Change
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            maxTxOctets = try p.readUInt16(.little, "max TX octets")
            maxTxTime = try p.readUInt16(.little, "max TX time")
            maxRxOctets = try p.readUInt16(.little, "max RX octets")
            maxRxTime = try p.readUInt16(.little, "max RX time")
        case 0x0C: // .12 LE PHY Update Complete
            status = HCIStatus(try p.readUInt8("status"))
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            txPHY = try p.readUInt8("TX PHY")
            rxPHY = try p.readUInt8("RX PHY")
        case 0x14, 0x23: // .20 Channel Selection Algorithm, .35 Subrate Change: handle first
            if sub == 0x23 { status = HCIStatus(try p.readUInt8("status")) }
            handle = try p.readUInt16(.little, "handle") & 0x0FFF
            parametersDecoded = false
        default:
            parametersDecoded = false
        }
    }
}
