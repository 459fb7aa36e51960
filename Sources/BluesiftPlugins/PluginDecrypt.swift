import BluesiftWire
import BluesiftSecurity
import Foundation

extension DecodeRun {
    /// A `decrypt:` field (docs/plugin-advertising-design.md §8): its bytes (ciphertext, then
    /// the preset's trailer) opened with the advertiser's key and decoded as the plaintext's
    /// type, with the replay counter as `counter`. Without a key, or when the MIC fails, the
    /// bytes stay raw and `raw` says why; a bad MIC is the message's `mic: bad`.
    func decrypted(_ preset: String, _ t: Int, _ s: SizeSpec?, _ f: FieldDef) throws(DecodeFailure) -> PluginValue {
        let n = try s.map { x throws(DecodeFailure) in try size(x, f) } ?? (end - pos)
        let bytes = Array(frame[pos..<pos + n])
        let header = Array(frame[0..<pos])
        pos += n
        guard let cipher = VendorCipher(rawValue: preset) else { rawNote = "unknown encryption \(preset)"; return .bytes(bytes) }
        let address = context?.address ?? 0
        var key: [UInt8] = []
        if !cipher.keyInFrame {
            guard context?.address != nil else { rawNote = "encrypted: no advertiser address"; return .bytes(bytes) }
            guard let k = keys[address] else { rawNote = "no key for " + BDAddr(address).description; return .bytes(bytes) }
            key = k
        }
        let opened: VendorOpened
        do {
            opened = try cipher.open(key: key, address: Self.addressBytes(address), header: header, field: bytes)
        } catch {
            switch error {
            case .micMismatch: mic = .bad; rawNote = "MIC mismatch (wrong key?)"
            case .keyCheckMismatch: mic = .bad; rawNote = "key check mismatch (wrong key?)"
            case .badKeySize(let k): rawNote = "key for \(BDAddr(address)) has \(k) bytes, \(preset) takes \(cipher.keySizes.map(String.init).joined(separator: " or "))"
            case .tooShort(let k): rawNote = "encrypted payload too short (\(k) bytes)"
            }
            return .bytes(bytes)
        }
        mic = opened.verified == true ? .ok : nil
        if opened.verified == nil, !cipher.keyInFrame { rawNote = "decrypted, not verifiable (\(preset) has no MIC)" }
        // The plaintext is decoded in place of the ciphertext: a buffer of its own for the run.
        let plain = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, opened.plaintext.count), alignment: 1)
        defer { plain.deallocate() }
        plain.copyBytes(from: opened.plaintext)
        let saved = (frame, pos, end)
        frame = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(plain)[0..<opened.plaintext.count])
        pos = 0; end = opened.plaintext.count
        defer { (frame, pos, end) = saved }
        var fields = try decodeType(t, top: false)
        if let c = opened.counter {
            push("counter", Int64(c))
            fields.append(PluginField(name: "counter", value: .int(Int64(c))))
        }
        return .object(fields)
    }

    /// "a4:c1:38:8d:18:b2" → [0xA4, 0xC1, 0x38, 0x8D, 0x18, 0xB2].
    static func addressBytes(_ a: UInt64) -> [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: a >> (8 * UInt64(5 - $0))) } }
}

extension EncodeRun {
    static func keyInFrame(_ preset: String) -> Bool { VendorCipher(rawValue: preset)?.keyInFrame ?? false }

    func sealField(_ preset: String, key: [UInt8], address: UInt64, header: [UInt8], plaintext: [UInt8], counter: UInt32) throws(PluginEncodeError) -> [UInt8] {
        guard let cipher = VendorCipher(rawValue: preset) else { throw PluginEncodeError("unknown encryption \(preset)") }
        do {
            return try cipher.seal(key: key, address: DecodeRun.addressBytes(address), header: header, plaintext: plaintext, counter: counter)
        } catch {
            throw PluginEncodeError("\(preset): \(error)")
        }
    }
}

/// `--vendor-keys FILE`: a JSON object mapping advertiser addresses to their keys in hex,
/// `{"a4:c1:38:8d:18:b2": "231d39c1d7cc1ab1aee224cd096db932"}`. Keys are never printed.
public enum VendorKeys {
    public struct Failure: Error, Sendable { public var message: String }

    public static func parse(_ text: String) throws(Failure) -> [UInt64: [UInt8]] {
        guard let data = text.data(using: .utf8),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else {
            throw Failure(message: "not a JSON object of address: key")
        }
        var out: [UInt64: [UInt8]] = [:]
        for (k, v) in object {
            guard let a = BDAddr(string: k) else { throw Failure(message: "'\(k)' is not an address such as a4:c1:38:8d:18:b2") }
            guard let hex = v as? String, let key = Hex.parse(hex), [12, 16].contains(key.count) else {
                throw Failure(message: "the key of \(k) is not 12 or 16 bytes of hex")
            }
            out[a.value] = key
        }
        return out
    }
}
