import BluesiftWire

// Parameters of the commands that connection tracking and analysis need (events: their
// views, HCIEventViews.swift).
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
}
