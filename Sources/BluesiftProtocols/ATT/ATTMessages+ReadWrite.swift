import BluesiftWire

/// Core 5.4 Vol 3 Part F §3.4.4.3
public struct ATTReadRequest: ATTMessageType {
    public static let opcode = ATTOpcode.readRequest
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(handle) }
    public init(_ v: ATTPDU) { handle = v.handle ?? 0 }
}

/// Core 5.4 Vol 3 Part F §3.4.4.4
public struct ATTReadResponse: ATTMessageType {
    public static let opcode = ATTOpcode.readResponse
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
    public func encodeParameters(into w: inout ByteWriter) { w.writeBytes(value) }
    public init(_ v: ATTPDU) { value = v.value.map(Array.init) ?? [] }
}

/// Core 5.4 Vol 3 Part F §3.4.4.5
public struct ATTReadBlobRequest: ATTMessageType {
    public static let opcode = ATTOpcode.readBlobRequest
    public var handle: UInt16
    public var offset: UInt16
    public init(handle: UInt16, offset: UInt16) { self.handle = handle; self.offset = offset }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(handle); w.writeUInt16(offset) }
    public init(_ v: ATTPDU) { handle = v.handle ?? 0; offset = v.offset ?? 0 }
}

/// Core 5.4 Vol 3 Part F §3.4.4.6
public struct ATTReadBlobResponse: ATTMessageType {
    public static let opcode = ATTOpcode.readBlobResponse
    public var value: [UInt8]
    public init(value: [UInt8]) { self.value = value }
    public func encodeParameters(into w: inout ByteWriter) { w.writeBytes(value) }
    public init(_ v: ATTPDU) { value = v.value.map(Array.init) ?? [] }
}

/// Core 5.4 Vol 3 Part F §3.4.4.7
public struct ATTReadMultipleRequest: ATTMessageType {
    public static let opcode = ATTOpcode.readMultipleRequest
    public var handles: [UInt16]
    public init(handles: [UInt16]) { self.handles = handles }
    public func encodeParameters(into w: inout ByteWriter) { for h in handles { w.writeUInt16(h) } }
    public init(_ v: ATTPDU) { handles = v.handles.map(Array.init) ?? [] }
}

/// Core 5.4 Vol 3 Part F §3.4.4.8: the values concatenated (the client knows their lengths).
public struct ATTReadMultipleResponse: ATTMessageType {
    public static let opcode = ATTOpcode.readMultipleResponse
    public var values: [UInt8]
    public init(values: [UInt8]) { self.values = values }
    public func encodeParameters(into w: inout ByteWriter) { w.writeBytes(values) }
    public init(_ v: ATTPDU) { values = v.value.map(Array.init) ?? [] }
}

/// Core 5.4 Vol 3 Part F §3.4.4.11
public struct ATTReadMultipleVariableRequest: ATTMessageType {
    public static let opcode = ATTOpcode.readMultipleVariableRequest
    public var handles: [UInt16]
    public init(handles: [UInt16]) { self.handles = handles }
    public func encodeParameters(into w: inout ByteWriter) { for h in handles { w.writeUInt16(h) } }
    public init(_ v: ATTPDU) { handles = v.handles.map(Array.init) ?? [] }
}

/// Core 5.4 Vol 3 Part F §3.4.4.12: length-value tuples. The decoded last value may be
/// shorter than its length field (truncated to the MTU); `lengths` keeps the fields.
public struct ATTReadMultipleVariableResponse: ATTMessageType {
    public static let opcode = ATTOpcode.readMultipleVariableResponse
    public var values: [[UInt8]]
    /// The value lengths as sent; defaults to each value's count.
    public var lengths: [UInt16]
    public init(values: [[UInt8]], lengths: [UInt16]? = nil) {
        self.values = values
        self.lengths = lengths ?? values.map { UInt16(truncatingIfNeeded: $0.count) }
    }
    public func encodeParameters(into w: inout ByteWriter) {
        for (i, v) in values.enumerated() {
            w.writeUInt16(i < lengths.count ? lengths[i] : UInt16(truncatingIfNeeded: v.count)); w.writeBytes(v)
        }
    }
    public init(_ v: ATTPDU) {
        let tuples = v.lengthValues.map(Array.init) ?? []
        values = tuples.map { Array($0.value) }; lengths = tuples.map(\.length)
    }
}

/// Core 5.4 Vol 3 Part F §3.4.5.1
public struct ATTWriteRequest: ATTHandleValueMessage {
    public static let opcode = ATTOpcode.writeRequest
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) { self.handle = handle; self.value = value }
}

/// Core 5.4 Vol 3 Part F §3.4.5.2
public struct ATTWriteResponse: ATTEmptyMessage {
    public static let opcode = ATTOpcode.writeResponse
    public init() {}
}

/// Core 5.4 Vol 3 Part F §3.4.5.3
public struct ATTWriteCommand: ATTHandleValueMessage {
    public static let opcode = ATTOpcode.writeCommand
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) { self.handle = handle; self.value = value }
}

/// Core 5.4 Vol 3 Part F §3.4.5.4. `signature` is the 12-byte Authentication Signature
/// (Vol 3 Part H §2.4.5); computing it is the caller's job.
public struct ATTSignedWriteCommand: ATTMessageType {
    public static let opcode = ATTOpcode.signedWriteCommand
    public var handle: UInt16
    public var value: [UInt8]
    public var signature: [UInt8]
    public init(handle: UInt16, value: [UInt8], signature: [UInt8]) {
        self.handle = handle; self.value = value; self.signature = signature
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt16(handle); w.writeBytes(value); w.writeBytes(signature)
    }
    public init(_ v: ATTPDU) {
        handle = v.handle ?? 0; value = v.value.map(Array.init) ?? []; signature = v.signature.map(Array.init) ?? []
    }
}

/// Prepare Write Request and its echo: handle, offset, part of the value.
public protocol ATTPreparedWriteMessage: ATTMessageType {
    var handle: UInt16 { get }
    var offset: UInt16 { get }
    var value: [UInt8] { get }
    init(handle: UInt16, offset: UInt16, value: [UInt8])
}

extension ATTPreparedWriteMessage {
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt16(handle); w.writeUInt16(offset); w.writeBytes(value) }
    public init(_ v: ATTPDU) { self.init(handle: v.handle ?? 0, offset: v.offset ?? 0, value: v.value.map(Array.init) ?? []) }
}

/// Core 5.4 Vol 3 Part F §3.4.6.1
public struct ATTPrepareWriteRequest: ATTPreparedWriteMessage {
    public static let opcode = ATTOpcode.prepareWriteRequest
    public var handle: UInt16
    public var offset: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, offset: UInt16, value: [UInt8]) { self.handle = handle; self.offset = offset; self.value = value }
}

/// Core 5.4 Vol 3 Part F §3.4.6.2: echoes the request.
public struct ATTPrepareWriteResponse: ATTPreparedWriteMessage {
    public static let opcode = ATTOpcode.prepareWriteResponse
    public var handle: UInt16
    public var offset: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, offset: UInt16, value: [UInt8]) { self.handle = handle; self.offset = offset; self.value = value }
}

/// Core 5.4 Vol 3 Part F §3.4.6.3. Flags: 0x00 cancel all prepared writes, 0x01 write them.
public struct ATTExecuteWriteRequest: ATTMessageType {
    public static let opcode = ATTOpcode.executeWriteRequest
    public var flags: UInt8
    public init(flags: UInt8) { self.flags = flags }
    public init(commit: Bool) { self.flags = commit ? 0x01 : 0x00 }
    public var commit: Bool { flags == 0x01 }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(flags) }
    public init(_ v: ATTPDU) { flags = v.flags ?? 0 }
}

/// Core 5.4 Vol 3 Part F §3.4.6.4
public struct ATTExecuteWriteResponse: ATTEmptyMessage {
    public static let opcode = ATTOpcode.executeWriteResponse
    public init() {}
}

/// Core 5.4 Vol 3 Part F §3.4.7.1
public struct ATTHandleValueNotification: ATTHandleValueMessage {
    public static let opcode = ATTOpcode.handleValueNotification
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) { self.handle = handle; self.value = value }
}

/// Core 5.4 Vol 3 Part F §3.4.7.2
public struct ATTHandleValueIndication: ATTHandleValueMessage {
    public static let opcode = ATTOpcode.handleValueIndication
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) { self.handle = handle; self.value = value }
}

/// Core 5.4 Vol 3 Part F §3.4.7.3
public struct ATTHandleValueConfirmation: ATTEmptyMessage {
    public static let opcode = ATTOpcode.handleValueConfirmation
    public init() {}
}

/// Core 5.4 Vol 3 Part F §3.4.7.4
public struct ATTMultipleHandleValueNotification: ATTMessageType {
    public static let opcode = ATTOpcode.multipleHandleValueNotification
    public var entries: [ATTHandleValue]
    public init(entries: [ATTHandleValue]) { self.entries = entries }
    public func encodeParameters(into w: inout ByteWriter) {
        for e in entries {
            w.writeUInt16(e.handle); w.writeUInt16(UInt16(truncatingIfNeeded: e.value.count)); w.writeBytes(e.value)
        }
    }
    public init(_ v: ATTPDU) { entries = v.handleValues.map { $0.map { ATTHandleValue(handle: $0.handle, value: Array($0.value)) } } ?? [] }
}
