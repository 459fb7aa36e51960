/// Cuts vendor frames out of the byte stream of one (device, characteristic, direction):
/// frames spanning several writes/notifications are joined, several frames in one are split,
/// by a length field or a terminator. A partial frame older than the timeout is dropped.
/// Memory: one buffer per stream, never more than `maxSize` bytes.
public final class FrameAssembler {
    public struct StreamKey: Hashable, Sendable {
        /// Caller-chosen device identity (adapter and connection handle, or address).
        public var device: UInt64
        public var handle: UInt16
        public var direction: PluginDirection
        public init(device: UInt64, handle: UInt16, direction: PluginDirection) {
            self.device = device; self.handle = handle; self.direction = direction
        }
    }

    public struct Output: Sendable {
        public var frames: [[UInt8]] = []
        /// Bytes buffered, waiting for the rest of a frame.
        public var pending = 0
        /// Expected size of the pending frame, when the length field has been seen.
        public var pendingNeed: Int?
        /// Why bytes were thrown away (timeout, garbage before the start bytes, bad length).
        public var dropped: [String] = []
    }

    struct Stream {
        var buffer: [UInt8] = []
        var last: Int64 = 0
    }

    public let framing: FramingSpec
    var streams: [StreamKey: Stream] = [:]

    public init(framing: FramingSpec) { self.framing = framing }

    public func push(_ key: StreamKey, _ bytes: UnsafeRawBufferPointer, atMicroseconds now: Int64) -> Output {
        var out = Output()
        var s = streams[key] ?? Stream()
        if !s.buffer.isEmpty && now - s.last > framing.timeoutMicroseconds {
            out.dropped.append("dropped \(s.buffer.count) bytes of an incomplete frame after \(framing.timeoutMicroseconds / 1000) ms")
            s.buffer.removeAll(keepingCapacity: true)
        }
        s.buffer.append(contentsOf: bytes)
        s.last = now
        cut(&s.buffer, &out)
        out.pending = s.buffer.count
        if s.buffer.isEmpty { streams[key] = nil } else { streams[key] = s }
        return out
    }

    public func push(_ key: StreamKey, _ bytes: [UInt8], atMicroseconds now: Int64) -> Output {
        bytes.withUnsafeBytes { push(key, $0, atMicroseconds: now) }
    }

    /// Drops every partial frame (e.g. on disconnection).
    public func reset() { streams.removeAll() }

    func cut(_ buf: inout [UInt8], _ out: inout Output) {
        while !buf.isEmpty {
            if let start = framing.start, !start.isEmpty {
                // Resynchronise on the start bytes.
                var i = 0
                while i < buf.count {
                    let n = min(start.count, buf.count - i)
                    if buf[i..<i + n].elementsEqual(start[0..<n]) { break }
                    i += 1
                }
                if i > 0 {
                    out.dropped.append("dropped \(i) bytes before the frame start")
                    buf.removeFirst(i)
                }
                if buf.count < start.count { return }
            }
            if case .field(let offset, let size, let endian, let adjust)? = framing.length {
                guard let (value, width) = readLength(buf, offset: offset, size: size, endian: endian) else { return }
                let total = Int(clamping: value) &+ adjust
                guard total >= offset + width, total <= framing.maxSize else {
                    out.dropped.append("dropped \(buf.count) bytes: frame length \(total) is impossible")
                    buf.removeAll(keepingCapacity: true)
                    return
                }
                guard buf.count >= total else { out.pendingNeed = total; return }
                out.frames.append(Array(buf[0..<total]))
                buf.removeFirst(total)
            } else if let term = framing.terminator, !term.isEmpty {
                guard let end = find(term, in: buf) else {
                    if buf.count > framing.maxSize {
                        out.dropped.append("dropped \(buf.count) bytes: no terminator within \(framing.maxSize) bytes")
                        buf.removeAll(keepingCapacity: true)
                    }
                    return
                }
                out.frames.append(Array(buf[0..<end]))
                buf.removeFirst(end)
            } else {
                out.frames.append(buf)
                buf.removeAll()
            }
        }
    }

    /// (value, bytes it took); nil while too few bytes are in.
    func readLength(_ b: [UInt8], offset: Int, size: Int, endian: Endianness) -> (Int64, Int)? {
        if size == 0 { // LEB128-style variable length
            var v: Int64 = 0
            var i = offset
            while i < b.count && i - offset < 4 {
                v |= Int64(b[i] & 0x7F) << Int64(7 * (i - offset))
                if b[i] & 0x80 == 0 { return (v, i - offset + 1) }
                i += 1
            }
            return nil
        }
        guard b.count >= offset + size else { return nil }
        var v: UInt64 = 0
        for i in 0..<size {
            let byte = UInt64(b[offset + (endian == .little ? size - 1 - i : i)])
            v = v << 8 | byte
        }
        return (Int64(clamping: v), size)
    }

    /// Index just past the first occurrence of `term`.
    func find(_ term: [UInt8], in b: [UInt8]) -> Int? {
        guard b.count >= term.count else { return nil }
        for i in 0...(b.count - term.count) where b[i..<i + term.count].elementsEqual(term) { return i + term.count }
        return nil
    }
}

import BluesiftWire
