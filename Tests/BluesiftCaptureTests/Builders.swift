/// Hand-built capture bytes for malformed-input and byte-order tests.
enum Build {
    static func btsnoopHeader(datalink: UInt32 = 1002) -> [UInt8] {
        var b = Array("btsnoop\0".utf8)
        b.be32(1); b.be32(datalink)
        return b
    }

    /// One btsnoop record; `us` is µs since the Unix epoch.
    static func btsnoopRecord(_ data: [UInt8], flags: UInt32, us: Int64 = 1_000_000, original: UInt32? = nil, included: UInt32? = nil) -> [UInt8] {
        var b: [UInt8] = []
        b.be32(original ?? UInt32(data.count)); b.be32(included ?? UInt32(data.count)); b.be32(flags); b.be32(0)
        b.be64(UInt64(us + BTSnoopReaderOffset.value))
        return b + data
    }

    /// One PacketLogger record, big- or little-endian.
    static func pklg(_ type: UInt8?, _ payload: [UInt8], secs: UInt32, usecs: UInt32, big: Bool) -> [UInt8] {
        var b: [UInt8] = []
        let len = UInt32(8 + (type == nil ? 0 : 1) + payload.count)
        for v in [len, secs, usecs] { if big { b.be32(v) } else { b.le32(v) } }
        if let type { b.append(type) }
        return b + payload
    }

    static func pcapHeader(linktype: UInt32 = 201) -> [UInt8] {
        var b: [UInt8] = []
        b.le32(0xA1B2_C3D4); b.le16(2); b.le16(4); b.le32(0); b.le32(0); b.le32(65535); b.le32(linktype)
        return b
    }

    static func pcapRecord(_ data: [UInt8], secs: UInt32 = 10, usecs: UInt32 = 5, original: UInt32? = nil, included: UInt32? = nil) -> [UInt8] {
        var b: [UInt8] = []
        b.le32(secs); b.le32(usecs); b.le32(included ?? UInt32(data.count)); b.le32(original ?? UInt32(data.count))
        return b + data
    }
}

import BluesiftCapture
enum BTSnoopReaderOffset { static let value = BTSnoopReader.epochOffsetMicroseconds }

/// pcapng blocks, little- or big-endian.
struct NG {
    var big = false
    func u16(_ v: UInt16) -> [UInt8] { big ? [UInt8(v >> 8), UInt8(v & 0xff)] : [UInt8(v & 0xff), UInt8(v >> 8)] }
    func u32(_ v: UInt32) -> [UInt8] { var b: [UInt8] = []; if big { b.be32(v) } else { b.le32(v) }; return b }
    func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
        let padded = body + Array(repeating: 0, count: (4 - body.count % 4) % 4)
        let len = UInt32(12 + padded.count)
        return u32(type) + u32(len) + padded + u32(len)
    }
    func shb() -> [UInt8] { block(0x0A0D_0D0A, u32(0x1A2B_3C4D) + u16(1) + u16(0) + Array(repeating: 0xFF, count: 8)) }
    func idb(_ linktype: UInt16, tsresol: UInt8? = nil) -> [UInt8] {
        var body = u16(linktype) + u16(0) + u32(65535)
        if let tsresol { body += u16(9) + u16(1) + [tsresol, 0, 0, 0] + u16(0) + u16(0) }
        return block(1, body)
    }
    func epb(_ iface: UInt32, _ ts: UInt64, _ data: [UInt8], original: UInt32? = nil) -> [UInt8] {
        block(
            6,
            u32(iface) + u32(UInt32(ts >> 32)) + u32(UInt32(ts & 0xffff_ffff)) + u32(UInt32(data.count))
                + u32(original ?? UInt32(data.count)) + data)
    }
    func spb(_ data: [UInt8]) -> [UInt8] { block(3, u32(UInt32(data.count)) + data) }
}
