import BluesiftProtocols
import BluesiftWire

/// One attribute of a server's database (Core 5.4 Vol 3 Part F §3.2): declarations carry
/// their value here; characteristic values and descriptors are asked of the responder.
public struct ServerAttribute: Sendable, Hashable {
    public var handle: UInt16
    public var type: BluetoothUUID
    /// Set for declarations (service, include, characteristic): fixed by the database.
    public var value: [UInt8]?
    /// A service declaration's End Group Handle as the device gave it; nil: the handle of the
    /// last attribute before the next service.
    public var groupEnd: UInt16?
    public init(handle: UInt16, type: BluetoothUUID, value: [UInt8]? = nil, groupEnd: UInt16? = nil) {
        self.handle = handle; self.type = type; self.value = value; self.groupEnd = groupEnd
    }

    public static let primaryService = BluetoothUUID(0x2800)
    public static let secondaryService = BluetoothUUID(0x2801)
    public static let include = BluetoothUUID(0x2802)
    public static let characteristic = BluetoothUUID(0x2803)
    public static let cccd = BluetoothUUID(0x2902)
}

/// A notification or indication the server is to send `delay` after the request that caused it.
public struct ServerNotification: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public var isIndication: Bool
    public var delay: Duration
    /// The caller's own mark (the emulator's report step), handed back in the send event.
    public var tag: Int
    public init(handle: UInt16, value: [UInt8], isIndication: Bool, delay: Duration, tag: Int = 0) {
        self.handle = handle; self.value = value; self.isIndication = isIndication; self.delay = delay; self.tag = tag
    }
}

/// What the responder answers to a read: the whole value, or an error.
public enum ServerReadAnswer: Sendable, Equatable {
    case value([UInt8])
    case error(ATTErrorCode)
}

/// What the responder answers to a write: nil error is success (Write Response for a request).
public struct ServerWriteAnswer: Sendable {
    public var error: ATTErrorCode?
    public var then: [ServerNotification]
    public init(error: ATTErrorCode? = nil, then: [ServerNotification] = []) { self.error = error; self.then = then }
}

/// The link as the server sees it when a request arrives.
public struct ServerLinkState: Sendable {
    public var mtu: UInt16
    public var encrypted: Bool
    public var authenticated: Bool
    public init(mtu: UInt16, encrypted: Bool, authenticated: Bool) {
        self.mtu = mtu; self.encrypted = encrypted; self.authenticated = authenticated
    }
}

/// Whoever decides what a characteristic value or descriptor holds (the emulator answers
/// from a recording). Declarations and CCCD state are the server's own.
public protocol GATTServerResponder: AnyObject {
    /// A Read (`first`: a Read Request, which may move on to the next recorded value) or a Read
    /// Blob (`first` false: the same value as the Read before it) of `handle`.
    func read(handle: UInt16, first: Bool, link: ServerLinkState) -> ServerReadAnswer
    /// A write of a whole value (Write Request, Command, Signed Write, or an executed queue of
    /// prepared writes), CCCDs included (after the server stored their configuration).
    func write(handle: UInt16, value: [UInt8], op: ATTOpcode, link: ServerLinkState) -> ServerWriteAnswer
    /// The client's MTU request and the MTU in force after it.
    func mtuExchanged(client: UInt16, agreed: UInt16)
}

/// The ATT server of a peripheral (Core 5.4 Vol 3 Part F §3.4, Part G §4): discovery answered
/// from the attribute table, reads and writes through the responder, CCCDs kept per handle,
/// prepared writes queued until Execute Write. Pure: one PDU in, at most one PDU out.
public struct ATTServer {
    public private(set) var attributes: [ServerAttribute]
    public var preferredMTU: UInt16
    public private(set) var mtu: UInt16 = 23
    /// Client Characteristic Configuration per CCCD handle (bit 0 notify, bit 1 indicate).
    public private(set) var cccd: [UInt16: UInt16] = [:]
    var prepared: [(handle: UInt16, offset: Int, value: [UInt8])] = []
    /// Notifications to schedule, filled by `handle` and taken by the link.
    public var scheduled: [ServerNotification] = []

    public init(attributes: [ServerAttribute], preferredMTU: UInt16 = 517) {
        self.attributes = attributes.sorted { $0.handle < $1.handle }
        self.preferredMTU = max(23, preferredMTU)
    }

    /// A new link: MTU back to 23, CCCDs cleared (no bond keeps them here), queue emptied.
    public mutating func reset() { mtu = 23; cccd = [:]; prepared = []; scheduled = [] }

    func index(of handle: UInt16) -> Int? { attributes.firstIndex { $0.handle == handle } }

    /// The CCCD of the characteristic whose value is `valueHandle`: the first 0x2902 after it
    /// before the next declaration.
    public func cccdHandle(forValue valueHandle: UInt16) -> UInt16? {
        guard let i = index(of: valueHandle) else { return nil }
        for a in attributes[(i + 1)...] {
            if a.value != nil { return nil }
            if a.type == ServerAttribute.cccd { return a.handle }
        }
        return nil
    }

    /// Whether the client enabled notifications (or indications) of `valueHandle`. A
    /// characteristic without a CCCD cannot be enabled: false.
    public func enabled(_ valueHandle: UInt16, indication: Bool) -> Bool {
        guard let c = cccdHandle(forValue: valueHandle) else { return false }
        return (cccd[c] ?? 0) & (indication ? 0x0002 : 0x0001) != 0
    }

    /// End of the group a service declaration at index `i` starts.
    func groupEnd(_ i: Int) -> UInt16 {
        if let e = attributes[i].groupEnd { return e }
        var last = attributes[i].handle
        for a in attributes[(i + 1)...] {
            if a.type == ServerAttribute.primaryService || a.type == ServerAttribute.secondaryService { break }
            last = a.handle
        }
        return last
    }

    func errorPDU(_ op: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> [UInt8] {
        ATTErrorResponse(requestOpcode: op, handle: handle, error: code).encode()
    }

    func value(of a: ServerAttribute, first: Bool, responder: GATTServerResponder, link: ServerLinkState) -> ServerReadAnswer {
        if let v = a.value { return .value(v) }
        if a.type == ServerAttribute.cccd {
            let c = cccd[a.handle] ?? 0
            return .value([UInt8(c & 0xFF), UInt8(c >> 8)])
        }
        return responder.read(handle: a.handle, first: first, link: link)
    }

    /// Answers one PDU from the client; nil when none is due (commands, confirmations).
    public mutating func handle(
        _ pdu: [UInt8], responder: GATTServerResponder, encrypted: Bool = false,
        authenticated: Bool = false
    ) -> [UInt8]? {
        guard let raw = pdu.first else { return nil }
        let op = ATTOpcode(rawValue: raw)
        let message: ATTMessage
        do { message = try ATTMessage.decode(pdu) } catch {
            return op.expectsAnswer ? errorPDU(op, 0, .invalidPDU) : nil
        }
        let link = ServerLinkState(mtu: mtu, encrypted: encrypted, authenticated: authenticated)
        let room = Int(mtu)
        switch message {
        case .exchangeMTURequest(let m): // §3.4.2
            mtu = max(23, min(m.clientRxMTU, preferredMTU))
            responder.mtuExchanged(client: m.clientRxMTU, agreed: mtu)
            return ATTExchangeMTUResponse(serverRxMTU: preferredMTU).encode()
        case .findInformationRequest(let m): // §3.4.3.1
            guard m.startHandle != 0, m.startHandle <= m.endHandle else { return errorPDU(op, m.startHandle, .invalidHandle) }
            var entries: [ATTHandleUUID] = []
            var long: Bool?
            for a in attributes where a.handle >= m.startHandle && a.handle <= m.endHandle {
                let isLong = (a.type.shortValue ?? .max) > 0xFFFF
                if long == nil { long = isLong } else if long != isLong { break }
                if 2 + (entries.count + 1) * (isLong ? 18 : 4) > room { break }
                entries.append(ATTHandleUUID(handle: a.handle, uuid: a.type))
            }
            guard !entries.isEmpty else { return errorPDU(op, m.startHandle, .attributeNotFound) }
            return ATTFindInformationResponse(entries: entries, long: long == true).encode()
        case .findByTypeValueRequest(let m): // §3.4.3.3: services by UUID
            guard m.startHandle != 0, m.startHandle <= m.endHandle else { return errorPDU(op, m.startHandle, .invalidHandle) }
            var ranges: [ATTHandleRange] = []
            for (i, a) in attributes.enumerated() where a.handle >= m.startHandle && a.handle <= m.endHandle {
                guard a.type == BluetoothUUID(UInt32(m.type)), a.value == m.value else { continue }
                if 1 + (ranges.count + 1) * 4 > room { break }
                let grouping = a.type == ServerAttribute.primaryService || a.type == ServerAttribute.secondaryService
                ranges.append(ATTHandleRange(start: a.handle, end: grouping ? groupEnd(i) : a.handle))
            }
            guard !ranges.isEmpty else { return errorPDU(op, m.startHandle, .attributeNotFound) }
            return ATTFindByTypeValueResponse(ranges: ranges).encode()
        case .readByGroupTypeRequest(let m): // §3.4.4.9
            guard m.startHandle != 0, m.startHandle <= m.endHandle else { return errorPDU(op, m.startHandle, .invalidHandle) }
            guard m.type == ServerAttribute.primaryService || m.type == ServerAttribute.secondaryService else {
                return errorPDU(op, m.startHandle, .unsupportedGroupType)
            }
            var entries: [ATTGroupValue] = []
            for (i, a) in attributes.enumerated() where a.handle >= m.startHandle && a.handle <= m.endHandle && a.type == m.type {
                let v = a.value ?? []
                if let first = entries.first, first.value.count != v.count { break }
                if 2 + (entries.count + 1) * (4 + v.count) > room { break }
                entries.append(ATTGroupValue(start: a.handle, end: groupEnd(i), value: v))
            }
            guard !entries.isEmpty else { return errorPDU(op, m.startHandle, .attributeNotFound) }
            return ATTReadByGroupTypeResponse(entries: entries).encode()
        case .readByTypeRequest(let m): // §3.4.4.1: declarations listed; a value read once
            guard m.startHandle != 0, m.startHandle <= m.endHandle else { return errorPDU(op, m.startHandle, .invalidHandle) }
            var entries: [ATTHandleValue] = []
            for a in attributes where a.handle >= m.startHandle && a.handle <= m.endHandle && a.type == m.type {
                switch value(of: a, first: true, responder: responder, link: link) {
                case .error(let e):
                    if entries.isEmpty { return errorPDU(op, a.handle, e) }
                case .value(let v):
                    let v = Array(v.prefix(min(253, room - 4)))
                    if let first = entries.first, first.value.count != v.count { break }
                    if 2 + (entries.count + 1) * (2 + v.count) > room { break }
                    entries.append(ATTHandleValue(handle: a.handle, value: v))
                }
                if a.value == nil { break } // a value: one entry per response
            }
            guard !entries.isEmpty else { return errorPDU(op, m.startHandle, .attributeNotFound) }
            return ATTReadByTypeResponse(entries: entries).encode()
        case .readRequest(let m): // §3.4.4.3
            guard let i = index(of: m.handle) else { return errorPDU(op, m.handle, .invalidHandle) }
            switch value(of: attributes[i], first: true, responder: responder, link: link) {
            case .error(let e): return errorPDU(op, m.handle, e)
            case .value(let v): return ATTReadResponse(value: Array(v.prefix(room - 1))).encode()
            }
        case .readBlobRequest(let m): // §3.4.4.5
            guard let i = index(of: m.handle) else { return errorPDU(op, m.handle, .invalidHandle) }
            switch value(of: attributes[i], first: false, responder: responder, link: link) {
            case .error(let e): return errorPDU(op, m.handle, e)
            case .value(let v):
                guard Int(m.offset) <= v.count else { return errorPDU(op, m.handle, .invalidOffset) }
                return ATTReadBlobResponse(value: Array(v[Int(m.offset)...].prefix(room - 1))).encode()
            }
        case .readMultipleRequest(let m): // §3.4.4.7
            var out: [UInt8] = []
            for h in m.handles {
                guard let i = index(of: h) else { return errorPDU(op, h, .invalidHandle) }
                switch value(of: attributes[i], first: true, responder: responder, link: link) {
                case .error(let e): return errorPDU(op, h, e)
                case .value(let v): out += v
                }
            }
            return ATTReadMultipleResponse(values: Array(out.prefix(room - 1))).encode()
        case .writeRequest(let m): // §3.4.5.1
            guard index(of: m.handle) != nil else { return errorPDU(op, m.handle, .invalidHandle) }
            let answer = write(m.handle, m.value, op: op, responder: responder, link: link)
            if let e = answer { return errorPDU(op, m.handle, e) }
            return ATTWriteResponse().encode()
        case .writeCommand(let m): // §3.4.5.3: no answer, even to a bad handle
            if index(of: m.handle) != nil { _ = write(m.handle, m.value, op: op, responder: responder, link: link) }
            return nil
        case .signedWriteCommand(let m): // §3.4.5.4: the signature is not checked here
            if index(of: m.handle) != nil { _ = write(m.handle, m.value, op: op, responder: responder, link: link) }
            return nil
        case .prepareWriteRequest(let m): // §3.4.6.1
            guard index(of: m.handle) != nil else { return errorPDU(op, m.handle, .invalidHandle) }
            guard prepared.count < 64 else { return errorPDU(op, m.handle, .prepareQueueFull) }
            prepared.append((m.handle, Int(m.offset), m.value))
            return ATTPrepareWriteResponse(handle: m.handle, offset: m.offset, value: m.value).encode()
        case .executeWriteRequest(let m): // §3.4.6.3
            defer { prepared = [] }
            if m.flags == 0x01 {
                var handles: [UInt16] = []
                for p in prepared where !handles.contains(p.handle) { handles.append(p.handle) }
                for h in handles {
                    var value: [UInt8] = []
                    for p in prepared where p.handle == h {
                        if p.offset > value.count { return errorPDU(op, h, .invalidOffset) }
                        value.replaceSubrange(p.offset..<min(value.count, p.offset + p.value.count), with: p.value)
                    }
                    if let e = write(h, value, op: .prepareWriteRequest, responder: responder, link: link) { return errorPDU(op, h, e) }
                }
            }
            return ATTExecuteWriteResponse().encode()
        case .handleValueConfirmation:
            return nil
        default:
            // Requests this server does not implement; anything else a client should not send.
            return op.expectsAnswer ? errorPDU(op, 0, .requestNotSupported) : nil
        }
    }

    /// A CCCD keeps its configuration here (§3.3.3.3 Part G), then the responder answers.
    mutating func write(
        _ handle: UInt16, _ value: [UInt8], op: ATTOpcode, responder: GATTServerResponder,
        link: ServerLinkState
    ) -> ATTErrorCode? {
        if let i = index(of: handle), attributes[i].type == ServerAttribute.cccd {
            guard value.count == 2 else { return .invalidAttributeValueLength }
            cccd[handle] = UInt16(value[0]) | UInt16(value[1]) << 8
        } else if let i = index(of: handle), attributes[i].value != nil {
            return .writeNotPermitted // declarations are read-only (Part G §3)
        }
        let answer = responder.write(handle: handle, value: value, op: op, link: link)
        if answer.error == nil || op == .writeCommand || op == .signedWriteCommand { scheduled += answer.then }
        return answer.error
    }
}
