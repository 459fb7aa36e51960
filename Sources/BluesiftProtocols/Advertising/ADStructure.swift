import BluesiftWire

/// AD type (Core 5.4 Vol 3 Part C §11; Assigned Numbers §2.3). Open.
public struct ADType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let flags = ADType(rawValue: 0x01)
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    public static let completeLocalName = ADType(rawValue: 0x09)
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    /// Service Data - 16-bit UUID (CSS Part A §1.11).
    public static let serviceData16 = ADType(rawValue: 0x16)
    public static let appearance = ADType(rawValue: 0x19)
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)
    public var name: String { AssignedNumbers.adTypeName(rawValue) ?? "Unknown" }

    /// Service Data (CSS Part A §1.11): octets of the UUID before the data (16-, 32-, 128-bit).
    public var serviceDataUUIDSize: Int? {
        switch rawValue {
        case 0x16: 2
        case 0x20: 4
        case 0x21: 16
        default: nil
        }
    }

    /// Incomplete and complete lists of service UUIDs (CSS Part A §1.1): octets of each UUID.
    public var serviceUUIDListSize: Int? {
        switch rawValue {
        case 0x02, 0x03: 2
        case 0x04, 0x05: 4
        case 0x06, 0x07: 16
        default: nil
        }
    }
}

/// One AD structure: Length, AD Type, AD Data (Core 5.4 Vol 3 Part C §11 Figure 11.1).
public struct ADStructure {
    public var type: ADType
    /// AD Data, without length and type.
    public var value: UnsafeRawBufferPointer

    public init(type: ADType, value: UnsafeRawBufferPointer) { self.type = type; self.value = value }

    /// Manufacturer Specific Data (CSS Part A §1.4): the company identifier, then the data.
    public var manufacturerData: (company: UInt16, data: UnsafeRawBufferPointer)? {
        guard type == .manufacturerSpecificData, value.count >= 2 else { return nil }
        return (UInt16(value[0]) | UInt16(value[1]) << 8, UnsafeRawBufferPointer(rebasing: value[2...]))
    }

    /// Service Data (CSS Part A §1.11): the UUID, then the data.
    public var serviceData: (uuid: BluetoothUUID, data: UnsafeRawBufferPointer)? {
        guard let n = type.serviceDataUUIDSize, value.count >= n,
            let u = BluetoothUUID(littleEndian: UnsafeRawBufferPointer(rebasing: value[0..<n]))
        else { return nil }
        return (u, UnsafeRawBufferPointer(rebasing: value[n...]))
    }
}

/// The AD structures of advertising or scan response data, decoded lazily.
/// Stops at a zero Length (early termination, §11) or at a structure that does not fit.
public struct ADStructures: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    var index = 0
    public init(_ data: UnsafeRawBufferPointer) { self.data = data }

    public mutating func next() -> ADStructure? {
        guard index < data.count else { return nil }
        let n = Int(data[index])
        guard n > 0, index + 1 + n <= data.count else { index = data.count; return nil }
        defer { index += 1 + n }
        return ADStructure(
            type: ADType(rawValue: data[index + 1]),
            value: UnsafeRawBufferPointer(rebasing: data[index + 2..<index + 1 + n]))
    }

    /// The first structure of `type`.
    public func first(_ type: ADType) -> ADStructure? {
        var it = ADStructures(data)
        while let s = it.next() { if s.type == type { return s } }
        return nil
    }

    /// `validate` finds nothing: each structure's length stays inside the data.
    @inline(__always)
    static func isWellFormed(_ p: UnsafeRawPointer, count: Int) -> Bool {
        var i = 0
        while i < count {
            let n = Int(p.load(fromByteOffset: i, as: UInt8.self))
            if n == 0 { return true }
            i += 1 + n
        }
        return i == count
    }

    /// A structure whose Length runs past the data (trailing zero padding is fine).
    public static func validate(_ data: UnsafeRawBufferPointer) -> DecodeError? {
        var i = 0
        while i < data.count {
            let n = Int(data[i])
            if n == 0 { return nil }
            if i + 1 + n > data.count {
                return DecodeError(
                    layer: "adv", code: .truncated, offset: i,
                    message: "AD structure length \(n) runs past the data (\(data.count - i - 1) left)")
            }
            i += 1 + n
        }
        return nil
    }
}

/// Flags AD bits (CSS Part A §1.3).
public struct ADFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let leLimitedDiscoverable = ADFlags(rawValue: 0x01)
    public static let leGeneralDiscoverable = ADFlags(rawValue: 0x02)
    public static let brEdrNotSupported = ADFlags(rawValue: 0x04)
    public static let simultaneousLEBrEdrController = ADFlags(rawValue: 0x08)
    public static let simultaneousLEBrEdrHost = ADFlags(rawValue: 0x10)

    static func bitName(_ bit: Int) -> String {
        switch bit {
        case 0: "LE Limited Discoverable Mode"
        case 1: "LE General Discoverable Mode"
        case 2: "BR/EDR Not Supported"
        case 3: "Simultaneous LE and BR/EDR (Controller)"
        case 4: "Simultaneous LE and BR/EDR (Host)"
        default: "Reserved"
        }
    }
}

extension AdvertisingReport {
    /// The AD structures of `data`.
    public var structures: ADStructures { ADStructures(data) }

    /// Complete Local Name, else Shortened Local Name (UTF-8, invalid bytes replaced).
    public var localName: String? {
        guard let s = structures.first(.completeLocalName) ?? structures.first(.shortenedLocalName) else { return nil }
        return String(decoding: s.value, as: UTF8.self)
    }
}

extension AdvertisingReport {
    /// The service UUIDs the report lists: AD types 0x02–0x07 (incomplete and complete lists
    /// of 16-, 32- and 128-bit UUIDs, CSS Part A §1.1).
    public var serviceUUIDs: [BluetoothUUID] {
        var out: [BluetoothUUID] = []
        for s in structures {
            guard let width = s.type.serviceUUIDListSize else { continue }
            var i = 0
            while i + width <= s.value.count {
                if let u = BluetoothUUID(littleEndian: UnsafeRawBufferPointer(rebasing: s.value[i..<i + width])) { out.append(u) }
                i += width
            }
        }
        return out
    }
}
