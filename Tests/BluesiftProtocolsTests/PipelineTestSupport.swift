import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Owns record bytes for the length of a test (records borrow their bytes).
final class RecordStore {
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    deinit { for b in buffers { b.deallocate() } }

    func bytes(_ b: [UInt8]) -> UnsafeRawBufferPointer {
        let m = UnsafeMutableRawBufferPointer.allocate(byteCount: max(b.count, 1), alignment: 1)
        m.copyBytes(from: b)
        buffers.append(m)
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(m)[0..<b.count])
    }

    func record(
        _ frame: Int, _ kind: PacketKind, _ dir: Direction?, _ b: [UInt8], us: Int64 = 0,
        adapter: UInt16 = 0, originalLength: Int? = nil, sniffer: SnifferInfo? = nil
    ) -> CaptureRecord {
        CaptureRecord(
            frame: frame, timestamp: Timestamp(microseconds: us), direction: dir, adapter: adapter,
            kind: kind, bytes: bytes(b), originalLength: originalLength, sniffer: sniffer)
    }

    /// `hexString` is tshark's H4 dump: first byte the packet indicator.
    func h4(_ frame: Int, _ dir: Direction?, _ hexString: String, us: Int64 = 0) -> CaptureRecord {
        let all = Hex.parse(hexString)!
        return record(frame, PacketKind(rawValue: all[0]), dir, Array(all.dropFirst()), us: us)
    }
}

func hx(_ s: String) -> [UInt8] { Hex.parse(s)! }

/// The public corpus, when present next to the repository.
enum Corpus {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/captures/public")
    /// For `.enabled(if:)`: the corpus capture is there.
    static func has(_ name: String) -> Bool { path(name) != nil }
    static func path(_ name: String) -> String? {
        let p = dir.appendingPathComponent(name).path
        return FileManager.default.fileExists(atPath: p) ? p : nil
    }
}

/// A minimal btsnoop reader for tests (the real readers live in BluesiftCapture):
/// 16-byte file header, then 24-byte big-endian record headers (RFC 1761 style).
struct TestBTSnoop {
    struct Rec { var frame: Int; var received: Bool; var us: Int64; var bytes: [UInt8]; var originalLength: Int }
    static func read(_ path: String) -> [Rec] {
        guard let d = FileManager.default.contents(atPath: path), d.count >= 16 else { return [] }
        let b = [UInt8](d)
        func u32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        var out: [Rec] = []
        var i = 16
        while i + 24 <= b.count {
            let orig = u32(i), incl = u32(i + 4), flags = u32(i + 8)
            let ts = Int64(u32(i + 16)) << 32 | Int64(u32(i + 20))
            guard i + 24 + incl <= b.count else { break }
            out.append(
                Rec(
                    frame: out.count + 1, received: flags & 1 == 1, us: ts - 0x00dc_ddb3_0f2f_8000,
                    bytes: Array(b[(i + 24)..<(i + 24 + incl)]), originalLength: orig))
            i += 24 + incl
        }
        return out
    }

    /// Feeds the whole file through a decoder; `body` sees each frame.
    /// Decodes into one reused frame, as the CLI does.
    static func decode(_ path: String, _ decoder: ProtocolDecoder, _ body: (DecodedFrame) -> Void) {
        var frame = DecodedFrame(record: .empty)
        for r in read(path) where !r.bytes.isEmpty {
            r.bytes.withUnsafeBytes { p in
                let rec = CaptureRecord(
                    frame: r.frame, timestamp: Timestamp(microseconds: r.us),
                    direction: r.received ? .received : .sent,
                    kind: PacketKind(rawValue: p[0]),
                    bytes: UnsafeRawBufferPointer(rebasing: p[1...]),
                    originalLength: r.originalLength - 1)
                decoder.decode(rec, into: &frame)
                body(frame)
            }
        }
    }
}

/// ACL packet bytes (without H4 indicator): handle, PB flag, data.
func acl(_ handle: UInt16, pb: UInt8, _ data: [UInt8]) -> [UInt8] {
    [UInt8(handle & 0xFF), UInt8(handle >> 8) | pb << 4, UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data
}

/// L2CAP basic frame: length, CID, payload.
func l2(_ cid: UInt16, _ payload: [UInt8]) -> [UInt8] {
    [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
}

/// Splits an L2CAP PDU into ACL packets of at most `size` data bytes (PB 0b10 then 0b01).
func fragments(_ handle: UInt16, _ pdu: [UInt8], size: Int) -> [[UInt8]] {
    stride(from: 0, to: pdu.count, by: size).map { i in
        acl(handle, pb: i == 0 ? 0b10 : 0b01, Array(pdu[i..<min(i + size, pdu.count)]))
    }
}
