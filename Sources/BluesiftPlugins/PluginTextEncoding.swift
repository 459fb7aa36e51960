import Foundation
import BluesiftWire

/// `encoding:` on a field of a type: its bytes are text (RFC 4648 base64, standard or URL-safe
/// alphabet) whose decoded bytes the type lays out. Symmetric: encoding writes the text back.
enum TextEncoding: String {
    case base64, base64url

    /// The bytes the text stands for; padding optional; nil when it is not this encoding.
    func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var s = String(decoding: text, as: UTF8.self)
        if self == .base64url {
            guard !s.contains("+"), !s.contains("/") else { return nil }
            s = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        }
        if s.count % 4 != 0 { s += String(repeating: "=", count: 4 - s.count % 4) }
        return Data(base64Encoded: s).map { Array($0) }
    }

    /// RFC 4648 §4 (padded) or §5 (URL-safe, unpadded as in URLs).
    func encode(_ bytes: [UInt8]) -> [UInt8] {
        var s = Data(bytes).base64EncodedString()
        if self == .base64url {
            s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            while s.hasSuffix("=") { s.removeLast() }
        }
        return Array(s.utf8)
    }
}

extension DecodeRun {
    /// An `encoding:` field: its text decoded and laid out by its type, whose fields join the
    /// message (as a decrypted one's). Text that is not the encoding stays raw, `raw` says so.
    func textDecoded(_ name: String, _ t: Int, _ s: SizeSpec?, _ f: FieldDef) throws(DecodeFailure) -> PluginValue {
        let n = try s.map { x throws(DecodeFailure) in try size(x, f) } ?? (end - pos)
        let text = frame[pos..<pos + n]
        pos += n
        guard let bytes = TextEncoding(rawValue: name)?.decode(text) else {
            rawNote = "\(f.id): not \(name) text"
            return .bytes(Array(text))
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        let saved = (frame, pos, end)
        frame = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<bytes.count])
        pos = 0; end = bytes.count
        defer { (frame, pos, end) = saved }
        return .object(try decodeType(t, top: false))
    }
}

extension EncodeRun {
    /// The type's bytes from the message's fields, written as text (raw bytes kept as they came).
    func encodeText(_ name: String, _ f: FieldDef, _ t: Int, _ fields: [String: PluginValue]) throws(PluginEncodeError) {
        if case .bytes(let raw)? = fields[f.id] { out.writeBytes(raw); return }
        guard let encoding = TextEncoding(rawValue: name) else { throw fail("\(f.id): unknown encoding \(name)") }
        let saved = out
        out = ByteWriter(capacity: 16)
        try encodeType(t, fields, top: false)
        let bytes = out.bytes
        out = saved
        out.writeBytes(encoding.encode(bytes))
    }
}
