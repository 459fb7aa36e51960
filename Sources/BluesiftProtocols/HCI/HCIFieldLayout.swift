import BluesiftWire

/// Where HCI packets carry device addresses and key material: offsets in the packet's bytes
/// as a capture holds them (a command from its opcode, an event from its event code), for
/// `redact` and anything else that must find or rewrite them in place. Layouts: Core 5.4
/// Vol 4 Part E §7 (section per case). `HCIParameters` decodes the same fields;
/// `HCIFieldLayoutTests` checks over the corpus that both find each peer address at one offset.
public enum HCIFieldLayout {
    /// Offsets of 6-byte BD_ADDRs in a command.
    public static func addresses(command b: UnsafeRawBufferPointer) -> [Int] {
        guard b.count >= 3 else { return [] }
        let op = UInt16(b[0]) | UInt16(b[1]) << 8
        let p = 3
        switch op {
        // §7.1: Link Control commands whose first parameter is BD_ADDR.
        case 0x0405, 0x0408, 0x0409, 0x040A, 0x040B, 0x040C, 0x040D, 0x040E, 0x0419, 0x041A,
            0x042B, 0x042C, 0x042D, 0x042E, 0x042F, 0x0434, 0x0C12:
            return [p]
        // §7.3.9 Write Stored Link Key: Num_Keys, BD_ADDR[i], Link_Key[i].
        case 0x0C11:
            guard b.count > p else { return [] }
            return (0..<Int(b[p])).map { p + 1 + 6 * $0 }
        case 0x2005: return [p] // §7.8.4 LE Set Random Address
        case 0x2006: return [p + 7] // §7.8.5 LE Set Advertising Parameters
        case 0x200D: return [p + 6] // §7.8.12 LE Create Connection
        case 0x2011, 0x2012, 0x2027, 0x2028, 0x202B, 0x202C, 0x204E: return [p + 1] // accept/resolving lists, privacy mode
        case 0x2035: return [p + 1] // §7.8.52 LE Set Advertising Set Random Address
        case 0x2036: return [p + 12] // §7.8.53 LE Set Extended Advertising Parameters
        case 0x2043: return [p + 3] // §7.8.66 LE Extended Create Connection
        case 0x2085: return [p + 5] // §7.8.66 LE Extended Create Connection [v2]
        case 0x2044: return [p + 3] // §7.8.67 LE Periodic Advertising Create Sync
        default: return []
        }
    }

    /// Offsets of 6-byte addresses in an event: BD_ADDRs, advertisers' and direct addresses of
    /// advertising reports, and the LE addresses inside their AD structures.
    public static func addresses(event b: UnsafeRawBufferPointer) -> [Int] {
        guard b.count >= 2 else { return [] }
        let p = 2
        switch b[0] {
        case 0x03, 0x2C: return [p + 3] // §7.7.3 / §7.7.35 (Synchronous) Connection Complete
        case 0x04, 0x16, 0x17, 0x18, 0x31, 0x32, 0x33, 0x34, 0x35, 0x3B, 0x3D: return [p] // §7.7.4, .22-.24, .40-.45
        case 0x07, 0x12, 0x36: return [p + 1] // name, role change, SSP complete
        case 0x02, 0x22: // §7.7.2/.33 Inquiry Result (arrays)
            guard b.count > p else { return [] }
            return (0..<Int(b[p])).map { p + 1 + 6 * $0 }
        case 0x2F: return [p + 1] // §7.7.38 Extended Inquiry Result
        case 0x15: // §7.7.21 Return Link Keys
            guard b.count > p else { return [] }
            return (0..<Int(b[p])).map { p + 1 + 22 * $0 }
        case 0x0E: // §7.7.14 Command Complete
            guard b.count >= 5 else { return [] }
            switch UInt16(b[3]) | UInt16(b[4]) << 8 {
            case 0x1009, 0x0408, 0x040B, 0x040C, 0x040D, 0x040E, 0x041A, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F, 0x0434:
                return [6]
            default: return []
            }
        case 0x3E:
            guard b.count > p else { return [] }
            switch b[p] {
            case 0x01: return [p + 6] // §7.7.65.1
            case 0x0A, 0x29: return [p + 6, p + 12, p + 18] // §7.7.65.10
            case 0x02: return advertisingReports(b).flatMap { [$0.address] + adAddresses(b, from: $0.data.lowerBound, to: $0.data.upperBound) } // §7.7.65.2
            case 0x0B: // §7.7.65.11
                guard b.count > p + 1 else { return [] }
                var out: [Int] = []
                for i in 0..<Int(b[p + 1]) { let o: Int = p + 2 + 16 * i; out.append(o + 2); out.append(o + 9) }
                return out
            case 0x0D: return advertisingReports(b).flatMap { [$0.address, $0.address + 14] + adAddresses(b, from: $0.data.lowerBound, to: $0.data.upperBound) } // §7.7.65.13
            case 0x0E: return [p + 6] // §7.7.65.14
            case 0x13: return [p + 3] // §7.7.65.19
            default: return []
            }
        default: return []
        }
    }

    /// A completed connection's status, handle and peer address offsets: §7.7.3 Connection
    /// Complete, §7.7.65.1 LE Connection Complete, §7.7.65.10/.29 LE Enhanced Connection Complete.
    public static func connectionComplete(_ b: UnsafeRawBufferPointer) -> (status: Int, handle: Int, address: Int)? {
        guard b.count > 2 else { return nil }
        switch b[0] {
        case 0x03: return (2, 3, 5)
        case 0x3E where b[2] == 0x01 || b[2] == 0x0A || b[2] == 0x29: return (3, 4, 8)
        default: return nil
        }
    }

    /// An LE (Extended) Advertising Report event (§7.7.65.2, §7.7.65.13).
    public static func isAdvertisingReport(_ b: UnsafeRawBufferPointer) -> Bool {
        b.count > 3 && b[0] == HCIEventCode.leMeta.rawValue
            && (b[2] == HCILESubeventCode.advertisingReport.rawValue || b[2] == HCILESubeventCode.extendedAdvertisingReport.rawValue)
    }

    /// Remote Name Request Complete (§7.7.7) with status success: the address offset and the
    /// name's bytes (up to its NUL), nil when the name is empty.
    public static func remoteName(_ b: UnsafeRawBufferPointer) -> (address: Int, name: Range<Int>)? {
        guard b.count > 9, b[0] == HCIEventCode.remoteNameRequestComplete.rawValue, b[2] == HCIStatus.success.rawValue else { return nil }
        let end = b[9...].firstIndex(of: 0) ?? b.count
        return end > 9 ? (3, 9..<end) : nil
    }

    /// LE Advertising Report (§7.7.65.2) and LE Extended Advertising Report (§7.7.65.13): each
    /// report's address offset and data range, reports one after another (as controllers send
    /// them and Wireshark reads them).
    public static func advertisingReports(_ b: UnsafeRawBufferPointer) -> [(address: Int, data: Range<Int>)] {
        guard isAdvertisingReport(b) else { return [] }
        let extended = b[2] == HCILESubeventCode.extendedAdvertisingReport.rawValue
        // Legacy: event type, address type, address, data length, data, RSSI.
        // Extended: 24 fixed bytes (address at 3, data length at 23), then data.
        let fixed = extended ? 24 : 9, addressAt = extended ? 3 : 2, trailer = extended ? 0 : 1
        var out: [(Int, Range<Int>)] = []
        var o = 4
        for _ in 0..<Int(b[3]) {
            guard o + fixed <= b.count else { break }
            let len = Int(b[o + fixed - 1])
            out.append((o + addressAt, o + fixed..<o + fixed + len))
            o += fixed + len + trailer
        }
        return out
    }

    /// Core 5.4 Supplement Part A §1.16 LE Bluetooth Device Address (address + type byte) and
    /// §1.13 Public/Random Target Address (a list of addresses): AD structures in `from..<to`.
    public static func adAddresses(_ b: UnsafeRawBufferPointer, from: Int, to: Int) -> [Int] {
        var out: [Int] = []
        var o = from
        let end = min(to, b.count)
        while o + 1 < end {
            let len = Int(b[o])
            guard len > 0, o + 1 + len <= end else { break }
            switch b[o + 1] {
            case 0x1B where len >= 7: out.append(o + 2)
            case 0x17, 0x18: out += stride(from: o + 2, through: o + 1 + len - 6, by: 6).map { $0 }
            default: break
            }
            o += 1 + len
        }
        return out
    }

    /// Key material in a command: (byte range, what it is).
    public static func keys(command b: UnsafeRawBufferPointer) -> [(Range<Int>, String)] {
        guard b.count >= 3 else { return [] }
        switch UInt16(b[0]) | UInt16(b[1]) << 8 {
        case 0x201A: return [(5..<21, "LE Long Term Key Request Reply LTK")] // §7.8.25
        case 0x2019: return [(15..<31, "LE Enable Encryption LTK")] // §7.8.24
        case 0x040B: return [(9..<25, "Link Key Request Reply key")] // §7.1.10
        case 0x040D: return [(10..<26, "PIN Code Request Reply PIN")] // §7.1.12
        case 0x2027: return [(10..<42, "LE Add Device To Resolving List IRKs")] // §7.8.38
        // §7.8.22 LE Encrypt: hosts compute c1/s1/ah with it, so key and plaintext are
        // TK, confirm and random values.
        case 0x2017: return [(3..<35, "LE Encrypt key and plaintext")]
        case 0x0C11: // §7.3.9
            guard b.count > 3 else { return [] }
            let n = Int(b[3])
            return (0..<n).map { (4 + 6 * n + 16 * $0..<4 + 6 * n + 16 * ($0 + 1), "Write Stored Link Key key") }
        default: return []
        }
    }

    /// Key material in an event: (byte range, what it is).
    public static func keys(event b: UnsafeRawBufferPointer) -> [(Range<Int>, String)] {
        guard b.count >= 2 else { return [] }
        switch b[0] {
        case 0x18: return [(8..<24, "Link Key Notification key")] // §7.7.24
        case 0x0E where b.count >= 6: // §7.7.14 Command Complete
            switch UInt16(b[3]) | UInt16(b[4]) << 8 {
            case 0x2017: return [(6..<22, "LE Encrypt result")] // §7.8.22: a confirm value or key
            case 0x2018: return [(6..<14, "LE Rand result")] // §7.8.23: pairing randoms, EDIV/Rand
            default: return []
            }
        case 0x3E where b.count > 2 && b[2] == 0x09: // §7.7.65.9 LE Generate DHKey Complete
            return [(4..<36, "LE DHKey")]
        case 0x15: // §7.7.21
            guard b.count > 2 else { return [] }
            return (0..<Int(b[2])).map { (3 + 22 * $0 + 6..<3 + 22 * $0 + 22, "Return Link Keys key") }
        default: return []
        }
    }
}
