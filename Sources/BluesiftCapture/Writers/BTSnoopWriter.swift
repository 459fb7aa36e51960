import BluesiftWire

/// btsnoop v1 writer: datalink 1002 (H4 indicator + HCI packet) or 2001 (Linux monitor,
/// flags = adapter << 16 | opcode). Timestamps in µs since year 0.
public final class BTSnoopWriter: CaptureWriter {
    public private(set) var skipped = 0
    public private(set) var written = 0
    private let file: AtomicFile
    private let monitor: Bool

    public init(path: String, monitor: Bool) throws(CaptureError) {
        file = try AtomicFile(path: path)
        self.monitor = monitor
        file.out.writeBytes(CaptureFile.btsnoopMagic)
        file.out.writeUInt32(1, .big)
        file.out.writeUInt32(monitor ? 2001 : 1002, .big)
    }

    public func write(_ r: CaptureRecord) throws(CaptureError) {
        var flags: UInt32
        var prefix: UInt8? = nil
        let payload = r.bytes
        var extra = 0 // bytes added to the original length
        if monitor {
            let op: UInt16
            if let hci = LinuxMonitorOpcode.opcode(for: r.kind, r.direction) {
                op = hci
            } else if r.kind == .note {
                op = 12 // System Note, NUL-terminated
                extra = 1
            } else if (r.kind == .index && [0, 1, 8, 9, 10].contains(r.sourceType))
                        || (r.kind == .control && (14...17).contains(r.sourceType)) {
                op = r.sourceType
            } else { skipped += 1; return }
            flags = UInt32(r.adapter) << 16 | UInt32(op)
        } else {
            guard r.kind.isHCI else { skipped += 1; return }
            prefix = r.kind.rawValue
            extra = 1
            let rx = r.direction == .received || (r.direction == nil && r.kind == .event)
            flags = (rx ? 1 : 0) | (r.kind == .command || r.kind == .event ? 2 : 0)
        }
        let included = payload.count + extra
        let original = (r.kind == .note ? payload.count : max(r.originalLength, payload.count)) + extra
        file.out.writeUInt32(UInt32(clamping: original), .big)
        file.out.writeUInt32(UInt32(clamping: included), .big)
        file.out.writeUInt32(flags, .big)
        file.out.writeUInt32(0, .big)
        file.out.writeUInt64(UInt64(bitPattern: r.timestamp.microseconds &+ BTSnoopReader.epochOffsetMicroseconds), .big)
        if let prefix { file.out.writeUInt8(prefix) }
        file.out.writeBytes(payload)
        if monitor && r.kind == .note { file.out.writeUInt8(0) }
        written += 1
        try file.flushIfNeeded()
    }

    public func finish() throws(CaptureError) { try file.commit() }
}
