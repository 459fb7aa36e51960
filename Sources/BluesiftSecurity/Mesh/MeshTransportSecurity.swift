/// An application key or device key made once (Mesh Protocol v1.1 §3.9.6.1, §3.9.6.2): the
/// AES-CCM state and, for an AppKey, its AID (k4). Never shows key bytes.
public struct MeshAccessKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// True for an AppKey (AKF 1, application nonce), false for a DevKey (AKF 0, device nonce).
    public let isApplicationKey: Bool
    /// k4 of an AppKey; 0 for a DevKey (AID is 0 when AKF is 0).
    public let aid: UInt8
    let ccm: AESCCM

    /// Nil unless `key` is 16 octets.
    public init?(appKey key: [UInt8]) {
        guard key.count == 16 else { return nil }
        isApplicationKey = true; aid = MeshCrypto.k4(key); ccm = AESCCM(key: key)
    }

    public init?(devKey key: [UInt8]) {
        guard key.count == 16 else { return nil }
        isApplicationKey = false; aid = 0; ccm = AESCCM(key: key)
    }

    public var description: String {
        isApplicationKey ? "MeshAccessKey(app, aid: 0x\(String(aid, radix: 16)))" : "MeshAccessKey(device)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["isApplicationKey": isApplicationKey, "aid": aid]) }
}

/// Upper transport layer security (Mesh Protocol v1.1 §3.9.7.1): the access payload encrypted
/// and authenticated with AES-CCM under an AppKey (application nonce) or DevKey (device nonce),
/// TransMIC of 32 bits or 64 (SZMIC 1, segmented messages only), and a virtual destination's
/// Label UUID as additional data.
public enum MeshUpperTransport {
    /// The nonce of §3.9.5.2/§3.9.5.3. `seq`: SeqAuth's low 24 bits (the SEQ of the first
    /// segment of a segmented message). ASZMIC = SZMIC of a segmented message.
    static func nonce(_ key: MeshAccessKey, szmic: Bool, seq: UInt32, src: UInt16, dst: UInt16, ivIndex: UInt32) -> MeshNonceBlock {
        MeshNonceBlock.access(application: key.isApplicationKey, aszmic: szmic, seq: seq, src: src, dst: dst, ivIndex: ivIndex)
    }

    /// EncAccessPayload ‖ TransMIC. `label`: the Label UUID of a virtual `dst` (16 octets),
    /// nil otherwise.
    public static func encrypt(
        accessPayload: [UInt8], key: MeshAccessKey, szmic: Bool, seq: UInt32, src: UInt16, dst: UInt16,
        ivIndex: UInt32, label: [UInt8]? = nil
    ) throws(MeshCryptoError) -> [UInt8] {
        if let label, label.count != 16 {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "Label UUID of \(label.count) octets, needs 16")
        }
        let n = nonce(key, szmic: szmic, seq: seq, src: src, dst: dst, ivIndex: ivIndex)
        let count = accessPayload.count
        var out = accessPayload
        out.append(contentsOf: szmic ? [0, 0, 0, 0, 0, 0, 0, 0] : [0, 0, 0, 0])
        out.withUnsafeMutableBytes { o in
            n.withBytes { n in
                (label ?? []).withUnsafeBytes { aad in
                    key.ccm.seal(
                        UnsafeMutableRawBufferPointer(rebasing: o[0..<count]), nonce: n, aad: aad,
                        tag: UnsafeMutableRawBufferPointer(rebasing: o[count...]))
                }
            }
        }
        return out
    }

    /// The access payload of an upper transport access PDU (EncAccessPayload ‖ TransMIC), or
    /// `micMismatch` when the TransMIC does not verify with `key` (wrong key, IV index, SEQ,
    /// addresses or label).
    public static func decrypt(
        _ pdu: [UInt8], key: MeshAccessKey, szmic: Bool, seq: UInt32, src: UInt16, dst: UInt16,
        ivIndex: UInt32, label: [UInt8]? = nil
    ) throws(MeshCryptoError) -> [UInt8] {
        let mic = szmic ? 8 : 4
        guard pdu.count > mic else { throw .truncated("upper transport PDU", need: mic + 1, got: pdu.count) }
        if let label, label.count != 16 {
            throw MeshCryptoError(code: .invalidValue, offset: 0, message: "Label UUID of \(label.count) octets, needs 16")
        }
        let n = nonce(key, szmic: szmic, seq: seq, src: src, dst: dst, ivIndex: ivIndex)
        let end = pdu.count - mic
        var ok = false
        // Opened straight into the one array returned.
        let plain = [UInt8](unsafeUninitializedCapacity: end) { out, initialized in
            ok = pdu.withUnsafeBytes { b in
                n.withBytes { n in
                    (label ?? []).withUnsafeBytes { aad in
                        key.ccm.open(
                            UnsafeRawBufferPointer(rebasing: b[0..<end]), tag: UnsafeRawBufferPointer(rebasing: b[end...]),
                            nonce: n, aad: aad, into: UnsafeMutableRawBufferPointer(out))
                    }
                }
            }
            initialized = end
        }
        guard ok else { throw MeshCryptoError(code: .micMismatch, offset: end, message: "TransMIC does not verify") }
        return plain
    }
}
