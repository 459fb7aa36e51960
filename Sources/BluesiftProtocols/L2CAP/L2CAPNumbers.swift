import BluesiftWire

/// Fixed channel identifiers (Core 6.0 Vol 3 Part A §2.1 Table 2.1, Table 2.3). Every layer
/// names a CID through these (scripts/check_literals.py keeps literals out of other folders).
public enum L2CAPCID {
    /// BR/EDR signalling channel.
    public static let signalling: UInt16 = 0x0001
    public static let connectionless: UInt16 = 0x0002
    public static let ampManager: UInt16 = 0x0003
    public static let att: UInt16 = 0x0004
    /// LE signalling channel.
    public static let leSignalling: UInt16 = 0x0005
    public static let smp: UInt16 = 0x0006
    /// Security Manager over BR/EDR.
    public static let smpBREDR: UInt16 = 0x0007
    /// First dynamically allocated CID (§2.1).
    public static let firstDynamic: UInt16 = 0x0040
}

/// Protocol/Service Multiplexers the decoder follows (Assigned Numbers §5.4).
public enum L2CAPPSM {
    public static let sdp: UInt16 = 0x0001
    public static let rfcomm: UInt16 = 0x0003
    public static let avctp: UInt16 = 0x0017
    public static let avdtp: UInt16 = 0x0019
    public static let avctpBrowsing: UInt16 = 0x001B
    public static let att: UInt16 = 0x001F
    /// Enhanced ATT (ATT over an enhanced credit-based channel).
    public static let eatt: UInt16 = 0x0027
}

/// Signalling command code (Core 6.0 Vol 3 Part A §4 Table 4.2). Open.
public struct L2CAPSignalCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let commandReject = L2CAPSignalCode(rawValue: 0x01)
    public static let connectionRequest = L2CAPSignalCode(rawValue: 0x02)
    public static let connectionResponse = L2CAPSignalCode(rawValue: 0x03)
    public static let configurationRequest = L2CAPSignalCode(rawValue: 0x04)
    public static let configurationResponse = L2CAPSignalCode(rawValue: 0x05)
    public static let disconnectionRequest = L2CAPSignalCode(rawValue: 0x06)
    public static let disconnectionResponse = L2CAPSignalCode(rawValue: 0x07)
    public static let informationRequest = L2CAPSignalCode(rawValue: 0x0A)
    public static let informationResponse = L2CAPSignalCode(rawValue: 0x0B)
    public static let connectionParameterUpdateRequest = L2CAPSignalCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = L2CAPSignalCode(rawValue: 0x13)
    public static let leCreditBasedConnectionRequest = L2CAPSignalCode(rawValue: 0x14)
    public static let leCreditBasedConnectionResponse = L2CAPSignalCode(rawValue: 0x15)
    public static let flowControlCreditIndication = L2CAPSignalCode(rawValue: 0x16)
    public static let creditBasedConnectionRequest = L2CAPSignalCode(rawValue: 0x17)
    public static let creditBasedConnectionResponse = L2CAPSignalCode(rawValue: 0x18)
    public static let creditBasedReconfigureRequest = L2CAPSignalCode(rawValue: 0x19)
    public static let creditBasedReconfigureResponse = L2CAPSignalCode(rawValue: 0x1A)
    /// A code of §4 Table 4.2 (0x01-0x1A); anything else is not a signalling command.
    public var isDefined: Bool { (Self.commandReject.rawValue...Self.creditBasedReconfigureResponse.rawValue).contains(rawValue) }

    public var name: String { L2CAPSignal.name(rawValue) }
    public var description: String { name }
    /// Responses and indications a host need not answer (§4: only requests are answered).
    public var needsNoAnswer: Bool {
        [
            .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse, .leCreditBasedConnectionResponse,
            .flowControlCreditIndication, .creditBasedConnectionResponse, .creditBasedReconfigureResponse
        ].contains(self)
    }
}

/// A signalling command a host sends or answers: its code, header and data (Vol 3 Part A §4).
/// Decoded from the analyzer's borrowed ``L2CAPSignal`` (one reading of the layout), encoded
/// with its 4-octet command header.
public protocol L2CAPSignalCommand: Sendable, Hashable {
    static var code: L2CAPSignalCode { get }
    var identifier: UInt8 { get }
    func encodeData(into w: inout ByteWriter)
    /// From the decoded command; nil when its code is another one or a field is missing.
    init?(_ s: L2CAPSignal)
}

extension L2CAPSignalCommand {
    /// Code, identifier, length, data: the bytes for the signalling channel.
    public func encode() -> [UInt8] {
        var d = ByteWriter(capacity: 16)
        encodeData(into: &d)
        var w = ByteWriter(capacity: 4 + d.bytes.count)
        w.writeUInt8(Self.code.rawValue); w.writeUInt8(identifier)
        w.writeUInt16(UInt16(d.bytes.count)); w.writeBytes(d.bytes)
        return w.bytes
    }

    /// Strict decode of one whole command (no bytes after it).
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Self {
        let r = bytes.withUnsafeBytes { p in
            Result { () throws(DecodeError) -> Self in
                var r = ByteReader(p)
                let s = try L2CAPSignal(&r)
                if let e = s.error { throw e }
                guard r.isAtEnd else {
                    throw DecodeError(layer: "l2cap", code: .invalidLength, offset: r.readerIndex, message: "\(r.readableBytes) bytes after the command")
                }
                guard let c = Self(s) else {
                    throw DecodeError(
                        layer: "l2cap", code: .unexpected, offset: 0,
                        message: "\(L2CAPSignal.name(s.code)) is not \(Self.code.name)")
                }
                return c
            }
        }
        return try r.get()
    }
}

/// Command Reject (§4.1). The host sends it with reason 0x0000, Command Not Understood.
public struct L2CAPCommandReject: L2CAPSignalCommand {
    public static let code = L2CAPSignalCode.commandReject
    public static let commandNotUnderstood: UInt16 = 0x0000
    public var identifier: UInt8
    public var reason: UInt16
    /// Reason data (§4.1 Table 4.4): the MTU or the rejected CIDs, as sent.
    public var data: [UInt8]
    public init(identifier: UInt8, reason: UInt16 = Self.commandNotUnderstood, data: [UInt8] = []) {
        self.identifier = identifier; self.reason = reason; self.data = data
    }
    public func encodeData(into w: inout ByteWriter) { w.writeUInt16(reason); w.writeBytes(data) }
    public init?(_ s: L2CAPSignal) {
        guard s.code == Self.code.rawValue, let reason = s.result, let o = s.listOffset else { return nil }
        self.init(identifier: s.identifier, reason: reason, data: Array(s.data[o...]))
    }
}

/// Connection Parameter Update Request (§4.20): the peripheral asks for new parameters.
public struct L2CAPConnectionParameterUpdateRequest: L2CAPSignalCommand {
    public static let code = L2CAPSignalCode.connectionParameterUpdateRequest
    public var identifier: UInt8
    /// Units of 1.25 ms.
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var timeout: UInt16
    public init(identifier: UInt8, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        self.identifier = identifier; self.intervalMin = intervalMin; self.intervalMax = intervalMax
        self.latency = latency; self.timeout = timeout
    }
    public func encodeData(into w: inout ByteWriter) {
        w.writeUInt16(intervalMin); w.writeUInt16(intervalMax); w.writeUInt16(latency); w.writeUInt16(timeout)
    }
    public init?(_ s: L2CAPSignal) {
        guard s.code == Self.code.rawValue, let a = s.intervalMin, let b = s.intervalMax, let l = s.latency, let t = s.timeout else { return nil }
        self.init(identifier: s.identifier, intervalMin: a, intervalMax: b, latency: l, timeout: t)
    }
}

/// Connection Parameter Update Response (§4.21).
public struct L2CAPConnectionParameterUpdateResponse: L2CAPSignalCommand {
    public static let code = L2CAPSignalCode.connectionParameterUpdateResponse
    public static let accepted: UInt16 = 0x0000
    public static let rejected: UInt16 = 0x0001
    public var identifier: UInt8
    public var result: UInt16
    public init(identifier: UInt8, result: UInt16) { self.identifier = identifier; self.result = result }
    public func encodeData(into w: inout ByteWriter) { w.writeUInt16(result) }
    public init?(_ s: L2CAPSignal) {
        guard s.code == Self.code.rawValue, let r = s.result else { return nil }
        self.init(identifier: s.identifier, result: r)
    }
}

/// The signalling commands the tool sends or answers, registered by code (one row each).
public enum L2CAPSignalling {
    public static let commands: [L2CAPSignalCode: any L2CAPSignalCommand.Type] = [
        L2CAPCommandReject.code: L2CAPCommandReject.self,
        L2CAPConnectionParameterUpdateRequest.code: L2CAPConnectionParameterUpdateRequest.self,
        L2CAPConnectionParameterUpdateResponse.code: L2CAPConnectionParameterUpdateResponse.self
    ]

    /// The command at the start of `bytes` (at least its 4-octet header): code, identifier,
    /// and the typed command when the table has the code and the command decodes whole.
    public static func decode(_ bytes: [UInt8]) -> (code: L2CAPSignalCode, identifier: UInt8, command: (any L2CAPSignalCommand)?)? {
        guard bytes.count >= 4 else { return nil }
        let code = L2CAPSignalCode(rawValue: bytes[0])
        let command: (any L2CAPSignalCommand)? = bytes.withUnsafeBytes { p in
            var r = ByteReader(p)
            guard let s = try? L2CAPSignal(&r), s.error == nil, let t = commands[code] else { return nil }
            return t.init(s)
        }
        return (code, bytes[1], command)
    }
}
