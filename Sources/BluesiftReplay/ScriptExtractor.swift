import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftDissect

/// Builds a ReplayScript from one connection of a capture, streaming.
/// Discovery is not replayed (the replayer discovers the live device itself); MTU exchange,
/// CCCD writes, writes (request/command/signed/prepared) and reads become steps, and every
/// answer until the next step is recorded as what to expect.
public final class ScriptExtractor {
    public let connection: UInt16
    public let adapter: UInt16
    public private(set) var steps: [ReplayScript.Step] = []
    var lastStepTime: Timestamp?
    var currentStepTime: Timestamp?
    /// Prepared writes queued until Execute Write: (target, offset, bytes, frame, truncated).
    var prepared: [(ReplayScript.Target, Int, [UInt8], Int, Bool)] = []
    var clientDirection: Direction?
    public private(set) var mtu: Int?
    /// SMP, LE Enable Encryption or an Encryption Change on this connection.
    public private(set) var secured = false

    public init(adapter: UInt16 = 0, connection: UInt16) {
        self.adapter = adapter
        self.connection = connection
    }

    static func target(_ a: AnalyzedFrame, handle: UInt16) -> ReplayScript.Target {
        var t = ReplayScript.Target(handle: Int(handle))
        if let loc = a.location {
            t.service = loc.service.description
            t.characteristic = loc.characteristic?.description
            t.instance = loc.characteristic == nil ? nil : loc.instance
            t.descriptor = loc.descriptor?.description
        }
        return t
    }

    func newStep(_ a: AnalyzedFrame, kind: String) -> ReplayScript.Step {
        let ts = a.record.timestamp
        let delay = lastStepTime.map { Double(ts.microseconds &- $0.microseconds) / 1000 } ?? 0
        lastStepTime = ts
        currentStepTime = ts
        var s = ReplayScript.Step(kind: kind, delayMs: max(0, delay), frame: a.record.frame, expect: .init())
        if a.record.isTruncated {
            s.refuse = "frame \(a.record.frame) was truncated by the capture (\(a.record.bytes.count) of \(a.record.originalLength) bytes kept)"
        }
        return s
    }

    /// The ATT requests a step sends, for pairing Error Responses.
    static func requestOpcodes(_ s: ReplayScript.Step) -> [ATTOpcode] {
        switch s.kind {
        case "mtu": [.exchangeMTURequest]
        case "read": [.readRequest, .readBlobRequest]
        case "write", "subscribe": s.op == "prepared" ? [.prepareWriteRequest, .executeWriteRequest] : [.writeRequest]
        default: []
        }
    }

    /// Feed every analyzed frame in file order.
    public func observe(_ a: AnalyzedFrame) {
        let f = a.decoded
        if !secured, f.record.adapter == adapter {
            if f.smp != nil, f.connection == connection { secured = true }
            // LE Enable Encryption (Vol 4 Part E §7.8.24) or an Encryption Change (§7.7.8)
            // enabling it, for this handle.
            if let h = f.hci,
                h.kind == .command
                    ? h.opcode == Int(HCILEEnableEncryption.opcode.rawValue)
                    : (h.kind == .event && h.opcode == Int(HCIEncryptionChangeEvent.code.rawValue) && h.encryption == 1)
            {
                let p = h.parameters, at = h.kind == .command ? 0 : 1 // the event starts with its status
                let handle = h.handle ?? (p.count >= at + 2 ? (UInt16(p[at]) | UInt16(p[at + 1]) << 8) & 0x0FFF : 0xFFFF)
                if handle == connection { secured = true }
            }
        }
        guard f.connection == connection, f.record.adapter == adapter, let att = f.att, !att.bytes.isEmpty else { return }
        let op = att.opcode
        let dir = f.record.direction
        switch op {
        case .exchangeMTURequest:
            clientDirection = dir
            var s = newStep(a, kind: "mtu")
            s.mtu = att.mtu.map(Int.init)
            steps.append(s)
        case .exchangeMTUResponse:
            if let i = steps.indices.last, steps[i].kind == "mtu", let server = att.mtu.map(Int.init) {
                steps[i].expect.response = "ok"
                steps[i].expect.mtu = server
                mtu = min(server, steps[i].mtu ?? server)
            }
        case .writeRequest, .writeCommand, .signedWriteCommand:
            clientDirection = dir
            guard let h = att.handle else { return }
            let t = Self.target(a, handle: h)
            let isCCCD = t.descriptor == "2902"
            var s = newStep(a, kind: isCCCD ? "subscribe" : "write")
            s.op = op == .writeRequest ? "request" : op == .writeCommand ? "command" : "signed"
            if op == .signedWriteCommand { s.signed = true }
            s.target = t
            s.value = att.value.map { Hex.string($0) } ?? ""
            steps.append(s)
        case .prepareWriteRequest: // queued until Execute Write
            clientDirection = dir
            guard let h = att.handle, let offset = att.offset else { return }
            prepared.append((Self.target(a, handle: h), Int(offset), att.value.map { Array($0) } ?? [], f.record.frame, f.record.isTruncated))
        case .executeWriteRequest: // flags 1 writes the queue as one logical step
            let flags = att.flags ?? 0
            defer { prepared.removeAll() }
            guard flags == 1, let first = prepared.first else { return }
            var s = newStep(a, kind: "write")
            s.op = "prepared"
            s.frame = first.3
            s.target = first.0
            var value: [UInt8] = []
            for p in prepared where p.0.handle == first.0.handle {
                if p.1 > value.count { value += Array(repeating: 0, count: p.1 - value.count) }
                value.replaceSubrange(p.1..<min(value.count, p.1 + p.2.count), with: p.2)
            }
            if let bad = prepared.first(where: { $0.4 }) {
                s.refuse = "prepared write fragment in frame \(bad.3) was truncated by the capture"
            }
            s.value = Hex.string(value)
            steps.append(s)
        case .readRequest, .readBlobRequest:
            clientDirection = dir
            guard let h = att.handle else { return }
            var s = newStep(a, kind: "read")
            s.target = Self.target(a, handle: h)
            steps.append(s)
        case .writeResponse, .executeWriteResponse:
            if let i = steps.indices.last, steps[i].expect.response == nil,
                steps[i].kind == "write" || steps[i].kind == "subscribe"
            {
                steps[i].expect.response = "ok"
            }
        case .readResponse, .readBlobResponse:
            if let i = steps.indices.last, steps[i].kind == "read" {
                steps[i].expect.response = "ok"
                steps[i].expect.value = (steps[i].expect.value ?? "") + (att.value.map { Hex.string($0) } ?? "")
            }
        case .errorResponse: // answers the last step only when it names that step's request
            // (discovery is not replayed, so its errors belong to no step).
            if let i = steps.indices.last, let code = att.errorCode, let req = att.requestOpcode,
                Self.requestOpcodes(steps[i]).contains(req)
            {
                steps[i].expect.response = "error"
                steps[i].expect.errorCode = Int(code)
                steps[i].expect.errorName = ATTErrorCode(rawValue: code).name
            }
        case .handleValueNotification, .handleValueIndication: // expected after the current step
            guard let i = steps.indices.last, let h = att.handle, let start = currentStepTime else { return }
            let after = Double(f.record.timestamp.microseconds &- start.microseconds) / 1000
            steps[i].expect.notifications.append(
                .init(
                    target: Self.target(a, handle: h), value: att.value.map { Hex.string($0) } ?? "",
                    indication: op == .handleValueIndication ? true : nil, afterMs: after))
        default:
            break
        }
    }
}
