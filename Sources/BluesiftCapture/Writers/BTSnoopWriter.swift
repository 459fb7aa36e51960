import BluesiftWire

/// btsnoop v1 writer: datalink 1002 (H4 indicator + HCI packet) or 2001 (Linux monitor,
/// flags = adapter << 16 | opcode). Timestamps in µs since year 0.
public final class BTSnoopWriter: CaptureWriter {
    public private(set) var skipped = 0
    public private(set) var written = 0
    private let file: AtomicFile
    /// Records dated before year 0 (btsnoop's epoch), written as year 0.
    public private(set) var clamped = 0
    private let monitor: Bool
    private let keepUnknownH4: Bool

    /// `keepUnknownH4`: the source is H4 (btsnoop 1002, DLT 187/201), so an unnamed
    /// record's `sourceType` is its H4 indicator and may be written back.
    public init(path: String, monitor: Bool, keepUnknownH4: Bool = false) throws(CaptureError) {
        file = try AtomicFile(path: path)
        self.monitor = monitor
        self.keepUnknownH4 = keepUnknownH4
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
            guard let (op, nul) = LinuxMonitorOpcode.forWriting(r) else { skipped += 1; return }
            if nul { extra = 1 }
            flags = UInt32(r.adapter) << 16 | UInt32(op)
        } else {
            // HCI kinds, and (from an H4 source) indicators this tool does not name: 1002 holds any.
            guard r.kind.isHCI || (keepUnknownH4 && r.kind == .unknown && r.sourceType > 0 && r.sourceType < 0x80) else { skipped += 1; return }
            prefix = r.kind.isHCI ? r.kind.rawValue : UInt8(r.sourceType)
            extra = 1
            let rx = r.direction == .received || (r.direction == nil && r.kind == .event)
            flags = (rx ? 1 : 0) | (r.kind == .command || r.kind == .event ? 2 : 0)
        }
        if r.timestamp.seconds < -BTSnoopReader.epochOffsetMicroseconds / 1_000_000 { clamped += 1 }
        let included = payload.count + extra
        let original = (r.kind == .note ? payload.count : max(r.originalLength, payload.count)) + extra
        file.out.writeUInt32(UInt32(clamping: original), .big)
        file.out.writeUInt32(UInt32(clamping: included), .big)
        file.out.writeUInt32(flags, .big)
        file.out.writeUInt32(0, .big)
        file.out.writeUInt64(UInt64(bitPattern: max(0, r.timestamp.microseconds &+ BTSnoopReader.epochOffsetMicroseconds)), .big)
        if let prefix { file.out.writeUInt8(prefix) }
        file.out.writeBytes(payload)
        if monitor && extra == 1 { file.out.writeUInt8(0) }
        written += 1
        try file.flushIfNeeded()
    }

    /// A monitor packet as the kernel gave it (what `btmon -w` writes): flags adapter << 16 |
    /// opcode, the payload unchanged. Only in a monitor file.
    public func writeMonitor(adapter: UInt16, opcode: UInt16, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws(CaptureError) {
        precondition(monitor, "writeMonitor on a datalink 1002 writer")
        file.out.writeUInt32(UInt32(payload.count), .big)
        file.out.writeUInt32(UInt32(payload.count), .big)
        file.out.writeUInt32(UInt32(adapter) << 16 | UInt32(opcode), .big)
        file.out.writeUInt32(0, .big)
        file.out.writeUInt64(UInt64(bitPattern: max(0, timestamp.microseconds &+ BTSnoopReader.epochOffsetMicroseconds)), .big)
        file.out.writeBytes(payload)
        written += 1
        try file.flushIfNeeded()
    }

    public func finish() throws(CaptureError) { try file.commit() }
}
