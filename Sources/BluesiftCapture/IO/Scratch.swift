/// One reusable buffer per reader for records whose bytes must be rebuilt (monitor user
/// logging text, PPI payloads). Grows to the largest record seen, never shrinks.
final class Scratch {
    private(set) var buffer: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(capacity: Int = 512) {
        buffer = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit { buffer.deallocate() }

    func reset() { count = 0 }

    func reserve(_ n: Int) {
        guard count + n > buffer.count else { return }
        let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(buffer.count * 2, count + n), alignment: 8)
        if count > 0 { bigger.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: count) }
        buffer.deallocate()
        buffer = bigger
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        reserve(bytes.count)
        (buffer.baseAddress! + count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        count += bytes.count
    }

    func append(_ s: StaticString) {
        append(UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: buffer.baseAddress, count: count) }
}

extension UnsafeRawBufferPointer {
    /// The bytes up to the first NUL (C strings inside records).
    func trimmingNUL() -> UnsafeRawBufferPointer {
        var n = 0
        while n < count && self[n] != 0 { n += 1 }
        return UnsafeRawBufferPointer(rebasing: self[0..<n])
    }
    @inline(__always) func dropping(_ n: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[Swift.min(n, count)...])
    }
}
