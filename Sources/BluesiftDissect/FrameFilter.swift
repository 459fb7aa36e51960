import BluesiftProtocols

/// `dump` filters. All given conditions must hold.
public struct FrameFilter: Sendable {
    public var connection: UInt16?
    /// Layer names: hci, l2cap, att, smp, adv, ll, note.
    public var protocols: Set<String> = []
    public var attOpcodes: Set<UInt8> = []
    public var handles: Set<UInt16> = []
    public var frames: ClosedRange<Int>?

    public init() {}

    public var isEmpty: Bool {
        connection == nil && protocols.isEmpty && attOpcodes.isEmpty && handles.isEmpty && frames == nil
    }

    /// True once no later frame can match (frame range passed): lets dump stop reading.
    public func isExhausted(after frame: Int) -> Bool {
        if let r = frames { return frame >= r.upperBound }
        return false
    }

    public func matches(_ f: DecodedFrame) -> Bool {
        if let r = frames, !r.contains(f.record.frame) { return false }
        if let c = connection, f.connection != c { return false }
        if !protocols.isEmpty {
            var any = false
            for p in protocols {
                switch p {
                case "hci": any = any || f.hci != nil
                case "l2cap": any = any || f.l2cap != nil
                case "att": any = any || f.att != nil
                case "smp": any = any || f.smp != nil
                case "adv": any = any || f.adv != nil
                case "ll": any = any || f.ll != nil
                case "note": any = any || f.note != nil
                default: break
                }
            }
            if !any { return false }
        }
        if !attOpcodes.isEmpty {
            guard let att = f.att, attOpcodes.contains(att.opcode.rawValue) else { return false }
        }
        if !handles.isEmpty {
            guard let att = f.att, let h = att.handle ?? att.errorHandle, handles.contains(h) else { return false }
        }
        return true
    }

    public static let protocolNames: Set<String> = ["hci", "l2cap", "att", "smp", "adv", "ll", "note"]
}
