import BluesiftWire

/// The HCI commands this host sends (Core 5.4 Vol 4 Part E §7). Names for display come from
/// the HCI layer's tables; only the opcodes live here.
public enum HCIOpcode {
    public static let disconnect: UInt16 = 0x0406                    // §7.1.6
    public static let setEventMask: UInt16 = 0x0C01                  // §7.3.1
    public static let reset: UInt16 = 0x0C03                         // §7.3.2
    public static let readLocalVersion: UInt16 = 0x1001              // §7.4.1
    public static let readLocalSupportedCommands: UInt16 = 0x1002    // §7.4.2
    public static let readBufferSize: UInt16 = 0x1005                // §7.4.5
    public static let readBDAddr: UInt16 = 0x1009                    // §7.4.6
    public static let leSetEventMask: UInt16 = 0x2001                // §7.8.1
    public static let leReadBufferSize: UInt16 = 0x2002              // §7.8.2
    public static let leReadLocalFeatures: UInt16 = 0x2003           // §7.8.3
    public static let leSetRandomAddress: UInt16 = 0x2005            // §7.8.4
    public static let leSetAdvertisingParameters: UInt16 = 0x2006    // §7.8.5
    public static let leSetAdvertisingData: UInt16 = 0x2008          // §7.8.7
    public static let leSetScanResponseData: UInt16 = 0x2009         // §7.8.8
    public static let leSetAdvertisingEnable: UInt16 = 0x200A        // §7.8.9
    public static let leSetScanParameters: UInt16 = 0x200B           // §7.8.10
    public static let leSetScanEnable: UInt16 = 0x200C               // §7.8.11
    public static let leCreateConnection: UInt16 = 0x200D            // §7.8.12
    public static let leCreateConnectionCancel: UInt16 = 0x200E      // §7.8.13
    public static let leConnectionUpdate: UInt16 = 0x2013            // §7.8.18
    public static let leEnableEncryption: UInt16 = 0x2019            // §7.8.24
    public static let leLongTermKeyRequestReply: UInt16 = 0x201A     // §7.8.25
    public static let leLongTermKeyRequestNegativeReply: UInt16 = 0x201B  // §7.8.26
}

/// Builders for command packets (opcode, length, parameters), without the H4 indicator.
enum HCICommand {
    /// Core 5.4 Vol 4 Part E §5.4.1
    static func packet(_ opcode: UInt16, _ build: (inout ByteWriter) -> Void = { _ in }) -> [UInt8] {
        var w = ByteWriter(capacity: 32)
        w.writeUInt16(opcode)
        w.writeUInt8(0)
        build(&w)
        w.bytes[2] = UInt8(truncatingIfNeeded: w.count - 3)
        return w.bytes
    }

    /// Disconnection Complete, Encryption Change, Hardware Error, Data Buffer Overflow,
    /// Encryption Key Refresh Complete, LE Meta (Core 5.4 Vol 4 Part E §7.3.1).
    static let eventMask: UInt64 = 1 << 4 | 1 << 7 | 1 << 15 | 1 << 25 | 1 << 47 | 1 << 61

    /// LE Connection Complete, Advertising Report, Connection Update Complete, Read Remote
    /// Features Complete, LTK Request, Data Length Change, Enhanced Connection Complete,
    /// Extended Advertising Report (Core 5.4 Vol 4 Part E §7.8.1: bit n = subevent n+1).
    static let leEventMask: UInt64 = 1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 6 | 1 << 9 | 1 << 12

    static func setEventMask(_ mask: UInt64) -> [UInt8] { packet(HCIOpcode.setEventMask) { $0.writeUInt64(mask) } }
    static func leSetEventMask(_ mask: UInt64) -> [UInt8] { packet(HCIOpcode.leSetEventMask) { $0.writeUInt64(mask) } }
    static func leSetRandomAddress(_ a: BDAddr) -> [UInt8] { packet(HCIOpcode.leSetRandomAddress) { $0.writeAddress(a) } }

    /// Active scan, own address random (the virtual controller routes by it).
    static func leSetScanParameters(active: Bool, interval: UInt16, window: UInt16, ownAddressType: UInt8) -> [UInt8] {
        packet(HCIOpcode.leSetScanParameters) {
            $0.writeUInt8(active ? 1 : 0); $0.writeUInt16(interval); $0.writeUInt16(window)
            $0.writeUInt8(ownAddressType); $0.writeUInt8(0)  // accept all advertisers
        }
    }

    static func leSetScanEnable(_ on: Bool) -> [UInt8] {
        packet(HCIOpcode.leSetScanEnable) { $0.writeUInt8(on ? 1 : 0); $0.writeUInt8(0) }  // keep duplicates
    }

    static func leCreateConnection(peer: BDAddr, peerType: UInt8, ownAddressType: UInt8,
                                   params: ConnectionParameters) -> [UInt8] {
        packet(HCIOpcode.leCreateConnection) {
            $0.writeUInt16(0x0060); $0.writeUInt16(0x0030)  // scan interval/window: 60 ms / 30 ms
            $0.writeUInt8(0)  // no filter accept list: use the peer address
            $0.writeUInt8(peerType); $0.writeAddress(peer); $0.writeUInt8(ownAddressType)
            $0.writeUInt16(params.intervalMin); $0.writeUInt16(params.intervalMax)
            $0.writeUInt16(params.latency); $0.writeUInt16(params.supervisionTimeout)
            $0.writeUInt16(0); $0.writeUInt16(0)  // CE length
        }
    }

    static func leConnectionUpdate(handle: UInt16, params: ConnectionParameters) -> [UInt8] {
        packet(HCIOpcode.leConnectionUpdate) {
            $0.writeUInt16(handle)
            $0.writeUInt16(params.intervalMin); $0.writeUInt16(params.intervalMax)
            $0.writeUInt16(params.latency); $0.writeUInt16(params.supervisionTimeout)
            $0.writeUInt16(0); $0.writeUInt16(0)
        }
    }

    /// Rand (8) and LTK (16) little-endian, as SMP and the bond store carry them.
    static func leEnableEncryption(handle: UInt16, rand: [UInt8], ediv: UInt16, ltk: [UInt8]) -> [UInt8] {
        packet(HCIOpcode.leEnableEncryption) {
            $0.writeUInt16(handle); $0.writeBytes(rand); $0.writeUInt16(ediv); $0.writeBytes(ltk)
        }
    }

    /// Core 5.4 Vol 4 Part E §7.8.5: connectable undirected (ADV_IND) on all three channels,
    /// interval in units of 0.625 ms, no filter.
    static func leSetAdvertisingParameters(interval: UInt16, ownAddressType: UInt8) -> [UInt8] {
        packet(HCIOpcode.leSetAdvertisingParameters) {
            $0.writeUInt16(interval); $0.writeUInt16(interval)
            $0.writeUInt8(0x00)  // ADV_IND
            $0.writeUInt8(ownAddressType)
            $0.writeUInt8(0); $0.writeAddress(BDAddr(0))  // peer (directed only)
            $0.writeUInt8(0x07)  // channels 37, 38, 39
            $0.writeUInt8(0x00)  // any scanner, any initiator
        }
    }

    /// §7.8.7 / §7.8.8: length, then 31 bytes (zero-padded; longer data is cut to 31).
    static func leSetAdvertisingData(_ data: [UInt8], scanResponse: Bool = false) -> [UInt8] {
        packet(scanResponse ? HCIOpcode.leSetScanResponseData : HCIOpcode.leSetAdvertisingData) {
            let d = data.prefix(31)
            $0.writeUInt8(UInt8(d.count)); $0.writeBytes(d)
            $0.writeBytes(Array(repeating: 0, count: 31 - d.count))
        }
    }

    /// §7.8.9
    static func leSetAdvertisingEnable(_ on: Bool) -> [UInt8] {
        packet(HCIOpcode.leSetAdvertisingEnable) { $0.writeUInt8(on ? 1 : 0) }
    }

    /// §7.8.25: the LTK little-endian, as SMP carries it.
    static func leLongTermKeyRequestReply(handle: UInt16, ltk: [UInt8]) -> [UInt8] {
        packet(HCIOpcode.leLongTermKeyRequestReply) { $0.writeUInt16(handle); $0.writeBytes(ltk) }
    }

    /// §7.8.26
    static func leLongTermKeyRequestNegativeReply(handle: UInt16) -> [UInt8] {
        packet(HCIOpcode.leLongTermKeyRequestNegativeReply) { $0.writeUInt16(handle) }
    }

    static func disconnect(handle: UInt16, reason: UInt8) -> [UInt8] {
        packet(HCIOpcode.disconnect) { $0.writeUInt16(handle); $0.writeUInt8(reason) }
    }
}

/// Connection parameters in controller units: interval 1.25 ms, supervision timeout 10 ms.
public struct ConnectionParameters: Sendable, Hashable {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(intervalMin: UInt16 = 0x0018, intervalMax: UInt16 = 0x0028, latency: UInt16 = 0,
                supervisionTimeout: UInt16 = 0x01F4) {
        self.intervalMin = intervalMin; self.intervalMax = intervalMax
        self.latency = latency; self.supervisionTimeout = supervisionTimeout
    }
}
