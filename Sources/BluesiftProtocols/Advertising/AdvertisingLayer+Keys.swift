import BluesiftWire

extension AdvertisingLayer {
    /// What the plugins read of a report before they know whether they have seen it: the
    /// advertiser, the event type, the RSSI and the AD data (borrowed from the event).
    public struct ReportKey {
        public var address: UInt64?
        /// 0 when the report has none.
        public var addressType: UInt8
        public var eventType: UInt16
        /// As carried: 127 is "not available" (Core 6.0 Vol 4 Part E §7.7.65.2).
        public var rssi: Int8
        public var data: UnsafeRawBufferPointer
    }

    /// Calls `body` with each report's key, in order. An HCI event found whole when decoded
    /// is read at the offsets that proved it (no ByteReader, no report built: walking it
    /// through `forEachReport` was ~260 instructions a record for the plugins); anything
    /// else goes through `forEachReport`, which stops at damage.
    public func forEachReportKey(_ body: (ReportKey) -> Void) {
        guard single == nil, !damaged, let base = parameters.baseAddress, parameters.count > 0,
            opcode == 0x02 || opcode == 0x0B || opcode == 0x0D
        else {
            forEachReport { rep in
                body(
                    ReportKey(
                        address: rep.address?.value, addressType: rep.addressType?.rawValue ?? 0, eventType: rep.eventType,
                        rssi: rep.rssi ?? 127, data: rep.data))
            }
            return
        }
        let end = parameters.count
        let n = Int(base.load(as: UInt8.self))
        var i = 1
        // The bounds are checked again: `init(opcode:parameters:)` (tests) does not validate.
        for _ in 0..<n {
            let key: ReportKey
            switch opcode {
            case 0x02: // §7.7.65.2: type, address type, address, length, data, RSSI
                guard end - i >= 10 else { return }
                let len = Int(base.load(fromByteOffset: i + 8, as: UInt8.self))
                guard end - i - 10 >= len else { return }
                key = ReportKey(
                    address: Self.address(base + i + 2), addressType: base.load(fromByteOffset: i + 1, as: UInt8.self),
                    eventType: UInt16(base.load(fromByteOffset: i, as: UInt8.self)),
                    rssi: base.load(fromByteOffset: i + 9 + len, as: Int8.self),
                    data: UnsafeRawBufferPointer(start: base + i + 9, count: len))
                i += 10 + len
            case 0x0B: // §7.7.65.11: 16 bytes, RSSI last, no data
                guard end - i >= 16 else { return }
                key = ReportKey(
                    address: Self.address(base + i + 2), addressType: base.load(fromByteOffset: i + 1, as: UInt8.self),
                    eventType: UInt16(base.load(fromByteOffset: i, as: UInt8.self)),
                    rssi: base.load(fromByteOffset: i + 15, as: Int8.self), data: UnsafeRawBufferPointer(start: nil, count: 0))
                i += 16
            default: // 0x0D, §7.7.65.13: 24 bytes before the data, its length the last of them
                guard end - i >= 24 else { return }
                let len = Int(base.load(fromByteOffset: i + 23, as: UInt8.self))
                guard end - i - 24 >= len else { return }
                key = ReportKey(
                    address: Self.address(base + i + 3), addressType: base.load(fromByteOffset: i + 2, as: UInt8.self),
                    eventType: UInt16(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt16.self)),
                    rssi: base.load(fromByteOffset: i + 13, as: Int8.self),
                    data: UnsafeRawBufferPointer(start: base + i + 24, count: len))
                i += 24 + len
            }
            body(key)
        }
    }

    /// A six-byte little-endian address, as `BDAddr(littleEndian:)` reads it.
    @inline(__always)
    static func address(_ p: UnsafeRawPointer) -> UInt64 {
        UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
            | UInt64(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt16.self))) << 32
    }
}
