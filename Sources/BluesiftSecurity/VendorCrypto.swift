/// Advertising payload encryption of vendor formats (BTHome, Xiaomi MiBeacon): the
/// `decrypt:` presets of advertising plugins (docs/plugin-advertising-design.md §8). All are
/// AES-CCM (RFC 3610) with a per-device 128-bit key; they differ in nonce, additional data
/// and trailer (what follows the ciphertext in the service data):
///
/// - `bthome-v1` (service data UUID 0x181E). bthome.io/encryption (v1) and bthome-ble's
///   parser.py (MIT): nonce = address (6 octets as printed, most significant first) | 1E 18 |
///   counter (4); additional data 0x11; trailer = counter (4, little endian) | MIC (4).
/// - `bthome-v2` (UUID 0xFCD2). bthome.io/encryption and bthome-ble parser.py: nonce =
///   address as printed (the one in the payload when the device info byte has bit 1, "MAC
///   included") | D2 FC | device info byte | counter (4); no additional data; trailer as v1.
/// - `mibeacon-v4` (MiBeacon v4 and v5, UUID 0xFE95). xiaomi-ble's parser.py (Apache-2.0),
///   `_decrypt_mibeacon_v4_v5`: nonce (12 octets, L = 3) = address as sent on air (least
///   significant first) | product id (2) | frame counter (1) | ext counter (3); additional
///   data 0x11; trailer = ext counter (3) | MIC (4).
/// - `mibeacon-legacy` (MiBeacon v2/v3). xiaomi-ble `set_bindkey` and
///   `_decrypt_mibeacon_legacy`: the 12-octet key widened to key[0..<6] 8D3D3C97 key[6..<12];
///   nonce (13 octets) = frame control (2) | product id (2) | frame counter (1) | ext counter
///   (3) | the first 5 octets of the address as sent on air; additional data 0x11; trailer =
///   ext counter (3) | one more octet. The oracle ignores that octet and cannot verify; it is
///   the first octet of the encrypted CCM authentication value with M = 16 (found on both
///   oracle vectors, xiaomi-122 and xiaomi-124, and not with their wrong key): a 1-octet tag.
///
/// - `govee-h512x` (Govee H5121–H5126/H5130 event frames, manufacturer data 0xEF88, 24
///   octets). govee-ble's parser.py (Apache-2.0), `decrypt_data` and the 24-octet branch:
///   one AES-128-ECB block whose key is in the frame: `header` = 2 octets, then the 4-octet
///   time; key = reverse(time | 12 zero octets); plaintext = reverse(decrypt(reverse(ct))).
///   No key file and no MIC (the frame's CRC-16, a plugin checksum, covers the ciphertext).
///
/// - `victron` (Victron Energy "Instant Readout", manufacturer data 0x02E1). Victron's
///   "Extra Manufacturer Data" document and victron-ble's devices/base.py (Unlicense),
///   `Device.decrypt`: AES-128-CTR with the device's advertisement key; the initial counter
///   block is the 16-bit IV of the header (octets 5–6 after the company id, little endian)
///   as a 128-bit little-endian integer, incremented per block. The field's first octet is
///   the key's first octet (a key check, not a MIC: 1 in 256 wrong keys pass it).
public enum VendorCipher: String, Sendable, CaseIterable {
    case bthomeV1 = "bthome-v1", bthomeV2 = "bthome-v2", mibeaconV4 = "mibeacon-v4", mibeaconLegacy = "mibeacon-legacy"
    case goveeH512x = "govee-h512x"
    case victron

    /// The key is in the frame (no `--vendor-keys` entry needed).
    public var keyInFrame: Bool { self == .goveeH512x }

    /// Key sizes accepted (16; legacy MiBeacon: 12, widened as the preset says, or the
    /// widened 16, as xiaomi-ble accepts).
    public var keySizes: [Int] { self == .mibeaconLegacy ? [12, 16] : [16] }

    /// Bytes after the ciphertext (counter + MIC), what `open` needs at least.
    public var trailerSize: Int { counterSize + tagSent }

    /// Octets of the counter in the trailer (BTHome: the whole 4-octet counter; MiBeacon:
    /// the ext counter, the counter's upper 3 octets).
    var counterSize: Int {
        switch self {
        case .bthomeV1, .bthomeV2: 4
        case .mibeaconV4, .mibeaconLegacy: 3
        case .goveeH512x, .victron: 0
        }
    }

    /// Octets of the tag sent after the counter.
    var tagSent: Int { self == .mibeaconLegacy || self == .victron ? 1 : self == .goveeH512x ? 0 : 4 }

    /// CCM's M (the authentication value's length in B0's flags).
    var tagLength: Int { self == .mibeaconLegacy ? 16 : 4 }

    /// Additional data: 0x11 except for BTHome v2, which has none.
    var aad: UInt8? { self == .bthomeV2 ? nil : 0x11 }

    /// Octets of `header` the preset reads (BTHome v2: the device info byte; MiBeacon:
    /// frame control, product id, frame counter).
    var headerNeeded: Int {
        switch self {
        case .bthomeV1: 0
        case .bthomeV2: 1
        case .mibeaconV4, .mibeaconLegacy: 5
        case .goveeH512x: 6
        case .victron: 7
        }
    }
}

/// What `open` recovered.
public struct VendorOpened: Sendable {
    public var plaintext: [UInt8]
    /// Replay counter read from the trailer. BTHome: the 4-octet counter (little endian).
    /// MiBeacon (v4/v5 and legacy): the 32-bit counter of the nonce, frame counter (header
    /// octet 4) in the low octet and the 3-octet ext counter above it (little endian), as
    /// Xiaomi's firmware splits its sequence number. nil when none (no preset today).
    public var counter: UInt32?
    /// true: MIC checked ok (legacy MiBeacon: a 1-octet tag, so 1 in 256 wrong keys pass);
    /// nil: the format has no MIC (no preset today). A mismatch throws `micMismatch`.
    public var verified: Bool?

    public init(plaintext: [UInt8], counter: UInt32?, verified: Bool?) {
        self.plaintext = plaintext; self.counter = counter; self.verified = verified
    }
}

public enum VendorCryptoError: Error, Sendable, Equatable {
    /// The key's size in octets is not one of `keySizes`.
    case badKeySize(Int)
    /// Fewer octets than the preset needs: `field` shorter than `trailerSize`, `header`
    /// shorter than the octets the nonce takes from it, or `address` not 6 octets; the
    /// count is that of the short input.
    case tooShort(Int)
    /// The MIC does not verify: wrong key, wrong address, damaged data.
    case micMismatch
    /// A key check octet (Victron: the key's first octet) differs from the key's: wrong key.
    case keyCheckMismatch
}

extension VendorCipher {
    /// `address`: the advertiser's address, 6 bytes as printed (A4:C1:.. → [0xA4, 0xC1, ...]).
    /// `header`: the service-data payload bytes before the encrypted field (BTHome v2: the device
    ///   info byte, then the 6 MAC bytes when it has them; BTHome v1: empty; MiBeacon: frame
    ///   control, product id, frame counter, optional MAC, capability...).
    /// `field`: the encrypted field's bytes: ciphertext then trailer.
    public func open(key: [UInt8], address: [UInt8], header: [UInt8], field: [UInt8]) throws(VendorCryptoError) -> VendorOpened {
        if self == .goveeH512x {
            guard header.count >= headerNeeded else { throw .tooShort(header.count) }
            guard field.count == 16 else { throw .tooShort(field.count) }
            let plain = AES128.decrypt(key: goveeKey(header), block: field.reversed())
            return VendorOpened(plaintext: plain.reversed(), counter: nil, verified: nil)
        }
        if self == .victron {
            guard key.count == 16 else { throw .badKeySize(key.count) }
            guard header.count >= headerNeeded else { throw .tooShort(header.count) }
            guard field.count >= 1 else { throw .tooShort(field.count) }
            guard field[0] == key[0] else { throw .keyCheckMismatch }
            return VendorOpened(plaintext: victronCTR(key: key, header: header, Array(field.dropFirst())), counter: nil, verified: nil)
        }
        let ccm = try cipher(key)
        guard field.count >= trailerSize else { throw .tooShort(field.count) }
        let n = field.count - trailerSize
        let counterBytes = Array(field[n..<(n + counterSize)])
        let nonce = try self.nonce(address: address, header: header, counter: counterBytes)
        var plaintext: [UInt8] = []
        let ok = field.withUnsafeBytes { f in
            ccm.open(
                UnsafeRawBufferPointer(rebasing: f[0..<n]), tag: UnsafeRawBufferPointer(rebasing: f[(n + counterSize)...]),
                nonce: nonce, aad: aad, tagLength: tagLength, into: &plaintext)
        }
        guard ok else { throw .micMismatch }
        return VendorOpened(plaintext: plaintext, counter: counter(header: header, bytes: counterBytes), verified: true)
    }

    /// The inverse: field bytes (ciphertext + trailer) for `plaintext` with `counter`.
    /// MiBeacon: the trailer carries `counter >> 8` (the ext counter); the nonce's frame
    /// counter is header octet 4, so `counter`'s low octet is not used.
    public func seal(key: [UInt8], address: [UInt8], header: [UInt8], plaintext: [UInt8], counter: UInt32) throws(VendorCryptoError) -> [UInt8] {
        if self == .goveeH512x {
            guard header.count >= headerNeeded else { throw .tooShort(header.count) }
            guard plaintext.count == 16 else { throw .tooShort(plaintext.count) }
            return AES128.encrypt(key: goveeKey(header), block: plaintext.reversed()).reversed()
        }
        if self == .victron {
            guard key.count == 16 else { throw .badKeySize(key.count) }
            guard header.count >= headerNeeded else { throw .tooShort(header.count) }
            return [key[0]] + victronCTR(key: key, header: header, plaintext)
        }
        let ccm = try cipher(key)
        let value = counterSize == 4 ? counter : counter >> 8
        let counterBytes = (0..<counterSize).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
        let nonce = try self.nonce(address: address, header: header, counter: counterBytes)
        var out = plaintext
        let tag = ccm.sealTag(&out, nonce: nonce, aad: aad, tagLength: tagLength, sent: tagSent)
        return out + counterBytes + tag
    }

    /// Victron: AES-CTR from the header's IV (octets 5–6, little endian), the counter block a
    /// 128-bit little-endian integer; the same both ways.
    func victronCTR(key: [UInt8], header: [UInt8], _ input: [UInt8]) -> [UInt8] {
        var counter = [UInt8](repeating: 0, count: 16)
        counter[0] = header[5]; counter[1] = header[6]
        var out = [UInt8](); out.reserveCapacity(input.count)
        var i = 0
        while i < input.count {
            let stream = AES128.encrypt(key: key, block: counter)
            for k in 0..<min(16, input.count - i) { out.append(input[i + k] ^ stream[k]) }
            i += 16
            for k in 0..<16 { counter[k] &+= 1; if counter[k] != 0 { break } }
        }
        return out
    }

    /// Govee: the time (header octets 2–5) then 12 zero octets, reversed.
    func goveeKey(_ header: [UInt8]) -> [UInt8] { (Array(header[2..<6]) + [UInt8](repeating: 0, count: 12)).reversed() }

    /// The CCM instance for `key` (legacy MiBeacon: 12 octets widened).
    func cipher(_ key: [UInt8]) throws(VendorCryptoError) -> AESCCM {
        guard keySizes.contains(key.count) else { throw .badKeySize(key.count) }
        if key.count == 12 { return AESCCM(key: Array(key[0..<6]) + [0x8D, 0x3D, 0x3C, 0x97] + Array(key[6..<12])) }
        return AESCCM(key: key)
    }

    /// The advertiser's address as printed: the one in the header when the format says it
    /// carries one (BTHome v2 info bit 1; MiBeacon frame control bit 4, after the frame
    /// counter), else `address`.
    func mac(address: [UInt8], header: [UInt8]) throws(VendorCryptoError) -> [UInt8] {
        switch self {
        case .bthomeV2 where header[0] & 0x02 != 0 && header.count >= 7:
            return header[1..<7].reversed()
        case .mibeaconV4 where header[0] & 0x10 != 0 && header.count >= 11,
            .mibeaconLegacy where header[0] & 0x10 != 0 && header.count >= 11:
            return header[5..<11].reversed()
        default:
            guard address.count == 6 else { throw .tooShort(address.count) }
            return address
        }
    }

    func nonce(address: [UInt8], header: [UInt8], counter: [UInt8]) throws(VendorCryptoError) -> [UInt8] {
        guard header.count >= headerNeeded else { throw .tooShort(header.count) }
        let mac = try self.mac(address: address, header: header)
        let onAir: [UInt8] = mac.reversed()
        switch self {
        case .bthomeV1: return mac + [0x1E, 0x18] + counter
        case .bthomeV2: return mac + [0xD2, 0xFC, header[0]] + counter
        case .mibeaconV4: return onAir + header[2..<5] + counter
        case .mibeaconLegacy: return Array(header[0..<5]) + counter + onAir[0..<5]
        case .goveeH512x, .victron: return []
        }
    }

    func counter(header: [UInt8], bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0
        for (i, b) in bytes.enumerated() { c |= UInt32(b) << (8 * UInt32(i)) }
        switch self {
        case .bthomeV1, .bthomeV2: return c
        case .mibeaconV4, .mibeaconLegacy: return c << 8 | UInt32(header[4])
        case .goveeH512x, .victron: return 0
        }
    }
}
