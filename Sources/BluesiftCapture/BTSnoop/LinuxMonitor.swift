/// Linux monitor opcodes (BlueZ src/shared/btsnoop.h, "BTSNOOP_OPCODE_*"), used by btsnoop
/// datalink 2001 and pcap DLT 254.
public enum LinuxMonitorOpcode {
    public static func name(_ op: UInt16) -> String {
        switch op {
        case 0: "New Index"
        case 1: "Delete Index"
        case 2: "Command"
        case 3: "Event"
        case 4: "ACL TX"
        case 5: "ACL RX"
        case 6: "SCO TX"
        case 7: "SCO RX"
        case 8: "Open Index"
        case 9: "Close Index"
        case 10: "Index Info"
        case 11: "Vendor Diag"
        case 12: "System Note"
        case 13: "User Logging"
        case 14: "Control Open"
        case 15: "Control Close"
        case 16: "Control Command"
        case 17: "Control Event"
        case 18: "ISO TX"
        case 19: "ISO RX"
        default: "Unknown"
        }
    }

    /// Kind and direction of a monitor record. Commands and TX data are host→controller.
    static func classify(_ op: UInt16) -> (PacketKind, Direction?) {
        switch op {
        case 2: (.command, .sent)
        case 3: (.event, .received)
        case 4: (.acl, .sent)
        case 5: (.acl, .received)
        case 6: (.sco, .sent)
        case 7: (.sco, .received)
        case 18: (.iso, .sent)
        case 19: (.iso, .received)
        case 0, 1, 8, 9, 10: (.index, nil)
        case 12, 13: (.note, nil)
        case 14, 15, 16, 17: (.control, nil)
        default: (.unknown, nil)
        }
    }

    /// The opcode that carries `kind` in `direction`, for writers; nil if none does.
    static func opcode(for kind: PacketKind, _ direction: Direction?) -> UInt16? {
        let rx = direction == .received
        switch kind {
        case .command: return 2
        case .event: return 3
        case .acl: return rx ? 5 : 4
        case .sco: return rx ? 7 : 6
        case .iso: return rx ? 19 : 18
        default: return nil
        }
    }

    /// The opcode a writer gives `r` in a monitor file (btsnoop 2001, DLT 254), and whether
    /// its text needs the NUL a System Note carries; nil when no opcode holds it.
    static func forWriting(_ r: CaptureRecord) -> (op: UInt16, nul: Bool)? {
        if let hci = opcode(for: r.kind, r.direction) { return (hci, false) }
        if r.kind == .note { return (12, true) }
        if (r.kind == .index && [0, 1, 8, 9, 10].contains(r.sourceType))
            || (r.kind == .control && (14...17).contains(r.sourceType))
        {
            return (r.sourceType, false)
        }
        return nil
    }

    /// Record bytes for a monitor payload. System notes are NUL-terminated text; user
    /// logging is priority(1) ident_len(1) ident message, rendered as "ident: message".
    static func payload(_ op: UInt16, _ data: UnsafeRawBufferPointer, scratch: Scratch) -> UnsafeRawBufferPointer {
        switch op {
        case 12:
            return data.trimmingNUL()
        case 13:
            guard data.count >= 2 else { return data }
            let identLen = Int(data[1])
            guard 2 + identLen <= data.count else { return data.dropping(2).trimmingNUL() }
            let ident = UnsafeRawBufferPointer(rebasing: data[2..<(2 + identLen)]).trimmingNUL()
            let message = data.dropping(2 + identLen).trimmingNUL()
            scratch.reset()
            if ident.count > 0 { scratch.append(ident); scratch.append(": ") }
            var msg = message
            while msg.count > 0 && msg[msg.count - 1] == 0x0A { msg = UnsafeRawBufferPointer(rebasing: msg[0..<(msg.count - 1)]) }
            scratch.append(msg)
            return scratch.bytes
        default:
            return data
        }
    }
}

/// Builds records from Linux monitor packets (opcode, adapter, payload) as the btsnoop 2001
/// reader does: one meaning for a file and a live monitor socket (`bluesift capture`).
public final class MonitorRecordBuilder {
    let scratch = Scratch()
    public init() {}

    /// The record borrows `data` and this builder's buffer until the next call.
    public func record(
        frame: Int, timestamp: Timestamp, adapter: UInt16, opcode op: UInt16,
        data: UnsafeRawBufferPointer, originalLength: Int? = nil
    ) -> CaptureRecord {
        let (kind, dir) = LinuxMonitorOpcode.classify(op)
        let bytes = kind == .note ? LinuxMonitorOpcode.payload(op, data, scratch: scratch) : data
        return CaptureRecord(
            frame: frame, timestamp: timestamp, direction: dir, adapter: adapter, kind: kind,
            bytes: bytes, originalLength: kind == .note ? bytes.count : max(originalLength ?? data.count, data.count),
            sourceType: op)
    }
}

/// H4 packet indicators (Core 5.4 Vol 4 Part A §2).
enum H4 {
    static func kind(_ indicator: UInt8) -> PacketKind {
        switch indicator {
        case 1: .command
        case 2: .acl
        case 3: .sco
        case 4: .event
        case 5: .iso
        default: .unknown
        }
    }

    /// Commands always go host→controller and events the other way; data needs the file's word.
    static func impliedDirection(_ kind: PacketKind) -> Direction? {
        kind == .command ? .sent : kind == .event ? .received : nil
    }
}
