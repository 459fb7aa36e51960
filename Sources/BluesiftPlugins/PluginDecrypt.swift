import BluesiftWire

extension DecodeRun {
    /// A `decrypt:` field: its bytes (ciphertext and trailer) opened with the advertiser's key
    /// and decoded as the plaintext's type; without a key the bytes stay raw and say why.
    func decrypted(_ preset: String, _ t: Int, _ s: SizeSpec?, _ f: FieldDef) throws(DecodeFailure) -> PluginValue {
        let n = try s.map { x throws(DecodeFailure) in try size(x, f) } ?? (end - pos)
        let bytes = Array(frame[pos..<pos + n])
        pos += n
        rawNote = "decryption not built in"
        return .bytes(bytes)
    }
}

extension EncodeRun {
    func sealField(_ preset: String, key: [UInt8], address: UInt64, header: [UInt8], plaintext: [UInt8], counter: UInt32) throws(PluginEncodeError) -> [UInt8] {
        throw PluginEncodeError("decryption not built in")
    }
}
