import BluesiftWire

// Lazy, allocation-free views over the list parameters of ATT responses. Each stops at the
// first entry that does not fit; ATTPDU.init reports such leftovers in `error`.

@inline(__always)
func le16(_ p: UnsafeRawBufferPointer, _ i: Int) -> UInt16 { UInt16(p[i]) | UInt16(p[i + 1]) << 8 }

@inline(__always)
func slice(_ p: UnsafeRawBufferPointer, _ from: Int, _ to: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: p[from..<to])
}

/// Find Information Response data (Core 5.4 Vol 3 Part F §3.4.3.2): handle + 16- or 128-bit UUID.
public struct ATTHandleUUIDList: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    /// 2 for format 0x01, 16 for format 0x02.
    public let uuidSize: Int
    var index = 0
    public init(data: UnsafeRawBufferPointer, uuidSize: Int) { self.data = data; self.uuidSize = uuidSize }
    public mutating func next() -> (handle: UInt16, uuid: BluetoothUUID)? {
        guard uuidSize > 0, index + 2 + uuidSize <= data.count else { return nil }
        defer { index += 2 + uuidSize }
        return (le16(data, index), BluetoothUUID(littleEndian: slice(data, index + 2, index + 2 + uuidSize))!)
    }
}

/// Find By Type Value Response (§3.4.3.4): Found Attribute Handle + Group End Handle.
public struct ATTHandleRangeList: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    var index = 0
    public init(data: UnsafeRawBufferPointer) { self.data = data }
    public mutating func next() -> (start: UInt16, end: UInt16)? {
        guard index + 4 <= data.count else { return nil }
        defer { index += 4 }
        return (le16(data, index), le16(data, index + 2))
    }
}

/// Read By Type Response (§3.4.4.2): `length`-byte entries of handle + value.
public struct ATTHandleValueList: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    public let length: Int
    var index = 0
    public init(data: UnsafeRawBufferPointer, length: Int) { self.data = data; self.length = length }
    public mutating func next() -> (handle: UInt16, value: UnsafeRawBufferPointer)? {
        guard length >= 2, index + length <= data.count else { return nil }
        defer { index += length }
        return (le16(data, index), slice(data, index + 2, index + length))
    }
}

/// Read By Group Type Response (§3.4.4.10): `length`-byte entries of start, end, value.
public struct ATTGroupValueList: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    public let length: Int
    var index = 0
    public init(data: UnsafeRawBufferPointer, length: Int) { self.data = data; self.length = length }
    public mutating func next() -> (start: UInt16, end: UInt16, value: UnsafeRawBufferPointer)? {
        guard length >= 4, index + length <= data.count else { return nil }
        defer { index += length }
        return (le16(data, index), le16(data, index + 2), slice(data, index + 4, index + length))
    }
}

/// Read Multiple (Variable) Request (§3.4.4.7, §3.4.4.11): a set of handles.
public struct ATTHandleList: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    var index = 0
    public init(data: UnsafeRawBufferPointer) { self.data = data }
    public mutating func next() -> UInt16? {
        guard index + 2 <= data.count else { return nil }
        defer { index += 2 }
        return le16(data, index)
    }
}

/// Read Multiple Variable Response (§3.4.4.12): Length Value Tuples. The last value may be
/// shorter than its length (truncated to the MTU); the view returns what is there.
public struct ATTLengthValueList: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    var index = 0
    public init(data: UnsafeRawBufferPointer) { self.data = data }
    public mutating func next() -> (length: UInt16, value: UnsafeRawBufferPointer)? {
        guard index + 2 <= data.count else { return nil }
        let n = le16(data, index)
        let end = Swift.min(index + 2 + Int(n), data.count)
        defer { index = end }
        return (n, slice(data, index + 2, end))
    }
}

/// Multiple Handle Value Notification (§3.4.7.4): Handle Length Value Tuples.
public struct ATTHandleLengthValueList: Sequence, IteratorProtocol {
    public let data: UnsafeRawBufferPointer
    var index = 0
    public init(data: UnsafeRawBufferPointer) { self.data = data }
    public mutating func next() -> (handle: UInt16, value: UnsafeRawBufferPointer)? {
        guard index + 4 <= data.count else { return nil }
        let h = le16(data, index), n = Int(le16(data, index + 2))
        guard index + 4 + n <= data.count else { return nil }
        defer { index += 4 + n }
        return (h, slice(data, index + 4, index + 4 + n))
    }
}
