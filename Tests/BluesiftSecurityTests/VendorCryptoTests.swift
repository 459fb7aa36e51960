import Testing
@testable import BluesiftSecurity

/// The decryption presets against the oracles' own vectors (Tests/VendorOracles/vectors/
/// bthome.json from bthome-ble's tests, MIT; xiaomi.json from xiaomi-ble's tests,
/// Apache-2.0; ids below). Expected plaintexts were decrypted in the oracle venv: xiaomi-ble's
/// own `_decrypt_mibeacon_v4_v5` / `_decrypt_mibeacon_legacy`, and for BTHome python's
/// `cryptography` AESCCM with bthome-ble's nonce and additional data.
@Suite struct VendorCryptoTests {
    struct Vector {
        let id: String, cipher: VendorCipher, key: String, address: String
        let header: String, field: String, plaintext: String, counter: UInt32
    }

    static func address(_ s: String) -> [UInt8] { hex(s.replacingOccurrences(of: ":", with: "")) }

    static let good: [Vector] = [
        // bthome-004/-010 (test_parser_v1.py test_bindkey_correct): UUID 0x181E, the whole
        // service data is the field.
        Vector(
            id: "bthome-010", cipher: .bthomeV1, key: "231d39c1d7cc1ab1aee224cd096db932", address: "54:48:E6:8F:80:A5",
            header: "", field: "fba435e4d3c312fb0011223357d90a99", plaintext: "2302ca090303bf13", counter: 0x3322_1100),
        // test_parser_v2.py test_bindkey_correct: FCD2, info byte 0x41 (encrypted, v2).
        Vector(
            id: "bthome-048", cipher: .bthomeV2, key: "231d39c1d7cc1ab1aee224cd096db932", address: "54:48:E6:8F:80:A5",
            header: "41", field: "a47266c95f730011223378237214", plaintext: "02ca0903bf13", counter: 0x3322_1100),
        // test_bthome_with_mac_encrypted: info 0x43 (MAC included), the MAC in the header.
        Vector(
            id: "bthome-079", cipher: .bthomeV2, key: "231d39c1d7cc1ab1aee224cd096db932", address: "54:48:E6:8F:80:A5",
            header: "43a5808fe64854", field: "f196c06ffb4900112233f08ecbde", plaintext: "02ca0903bf13", counter: 0x3322_1100),
        // test_reset_encryption_counter: counters 0xFFFFFFFF and 0.
        Vector(
            id: "bthome-065", cipher: .bthomeV2, key: "231d39c1d7cc1ab1aee224cd096db932", address: "54:48:E6:8F:80:A5",
            header: "41", field: "ba0db07aeef6ffffffff21fd4600", plaintext: "02cb0903bf13", counter: 0xFFFF_FFFF),
        Vector(
            id: "bthome-066", cipher: .bthomeV2, key: "231d39c1d7cc1ab1aee224cd096db932", address: "54:48:E6:8F:80:A5",
            header: "41", field: "de40b50e676600000000d7cb95de", plaintext: "02cb0903bf13", counter: 0),
        // test_encrypted_shelly_blu_button_event: info 0x45 (sleepy device bit too).
        Vector(
            id: "bthome-108", cipher: .bthomeV2, key: "90bffd73cb6b26ef58a7a8eba9232036", address: "B4:35:22:F5:3D:A4",
            header: "45", field: "0aeb84467f85ba0100003188788c", plaintext: "000701643a01", counter: 442),
        // test_Xiaomi_LYWSD03MMC_encrypted: MiBeacon v5, frame control 0x5858 (MAC included).
        Vector(
            id: "xiaomi-038", cipher: .mibeaconV4, key: "e9ea895fac7cca6d30532432a516f3a8", address: "A4:C1:38:02:83:F4",
            header: "58585b0550f4830238c1a4", field: "95ef58763c26000097e2abb5", plaintext: "061002d301", counter: 0x2650),
        // test_Xiaomi_LYWSD02MMC_v2_temperature: frame control 0x5848, no MAC: the address.
        Vector(
            id: "xiaomi-034", cipher: .mibeaconV4, key: "19b1c678ab0a8bc3dc77765f059188d4", address: "A4:C1:38:0E:FD:78",
            header: "4858422529", field: "202d8c7a76b756a82a0078b8224e", plaintext: "014c04cdccd041", counter: 0x2A_A829),
        // test_Xiaomi_button_object_ignored_for_non_button_device: two objects.
        Vector(
            id: "xiaomi-220", cipher: .mibeaconV4, key: "8bdff7d0f70fa7f5c68f42157b5fd65b", address: "A4:C1:38:A1:FE:E6",
            header: "5859aa01b4e6fea138c1a4", field: "ff47a4daba202c2f090000e761ffec", plaintext: "0d5601010e560101", counter: 0x09B4),
        // test_Xiaomi_YLKG07YL_press (xiaomi-122) and _dimmer (xiaomi-124): MiBeacon v3, frame
        // control 0x3058, 12-octet key.
        Vector(
            id: "xiaomi-122", cipher: .mibeaconLegacy, key: "b853075158487ca39a5b5ea9", address: "F8:24:41:C5:98:8B",
            header: "5830b603d28b98c54124f8", field: "c3491476757e00000099", plaintext: "011003000103", counter: 0xD2),
        Vector(
            id: "xiaomi-124", cipher: .mibeaconLegacy, key: "b853075158487ca39a5b5ea9", address: "F8:24:41:C5:98:8B",
            header: "5830b603368b98c54124f8", field: "8bb8f2661351000000d6", plaintext: "01100300ff04", counter: 0x36)
    ]

    @Test(arguments: good) func openAndSeal(_ v: Vector) throws {
        let key = hex(v.key), address = Self.address(v.address), header = hex(v.header), field = hex(v.field)
        let opened = try v.cipher.open(key: key, address: address, header: header, field: field)
        #expect(opened.plaintext == hex(v.plaintext), "\(v.id)")
        #expect(opened.counter == v.counter, "\(v.id)")
        #expect(opened.verified == true, "\(v.id)")
        let sealed = try v.cipher.seal(key: key, address: address, header: header, plaintext: opened.plaintext, counter: v.counter)
        #expect(sealed == field, "\(v.id): seal(open(x)) == x")
        // One flipped bit anywhere in the ciphertext or tag: a mismatch (the counter too, it is in the nonce).
        for i in 0..<field.count {
            var bad = field; bad[i] ^= 0x01
            #expect(throws: VendorCryptoError.micMismatch, "\(v.id) byte \(i)") {
                try v.cipher.open(key: key, address: address, header: header, field: bad)
            }
        }
    }

    /// The oracles' wrong-key vectors (their test_bindkey_wrong tests).
    static let wrong: [Vector] = [
        Vector(
            id: "bthome-008", cipher: .bthomeV1, key: "814aac74c4f17b6c1581e1ab87816b99", address: "A4:C1:38:8D:18:B2",
            header: "", field: "fba435e4d3c312fb0011223357d90a99", plaintext: "", counter: 0),
        Vector(
            id: "bthome-046", cipher: .bthomeV2, key: "814aac74c4f17b6c1581e1ab87816b99", address: "A4:C1:38:8D:18:B2",
            header: "41", field: "d2fcefe52eb212d600112233bc38c966", plaintext: "", counter: 0),
        Vector(
            id: "xiaomi-011", cipher: .mibeaconV4, key: "814aac74c4f17b6c1581e1ab87816b99", address: "54:EF:44:E0:C4:0F",
            header: "58598d0a170fc4e044ef54", field: "7cc27a5c03a1000000790df258", plaintext: "", counter: 0),
        // test_bindkey_wrong_legacy: the key differs in one octet (7a for 7c); its 1-octet tag is b5, not 99.
        Vector(
            id: "xiaomi-015", cipher: .mibeaconLegacy, key: "b853075158487aa39a5b5ea9", address: "F8:24:41:C5:98:8B",
            header: "5830b603d28b98c54124f8", field: "c3491476757e00000099", plaintext: "", counter: 0)
    ]

    @Test(arguments: wrong) func wrongKey(_ v: Vector) {
        #expect(throws: VendorCryptoError.micMismatch, "\(v.id)") {
            try v.cipher.open(key: hex(v.key), address: Self.address(v.address), header: hex(v.header), field: hex(v.field))
        }
    }

    @Test func legacyWidenedKey() throws {
        // xiaomi-122 with the key xiaomi-ble's set_bindkey builds: key[0..<6] 8d3d3c97 key[6..<12].
        let opened = try VendorCipher.mibeaconLegacy.open(
            key: hex("b853075158488d3d3c977ca39a5b5ea9"), address: Self.address("F8:24:41:C5:98:8B"),
            header: hex("5830b603d28b98c54124f8"), field: hex("c3491476757e00000099"))
        #expect(opened.plaintext == hex("011003000103"))
    }

    @Test func macInHeaderWins() throws {
        // bthome-079 and xiaomi-038 carry the MAC: the nonce takes it, not `address` (as the oracles do).
        let zero = [UInt8](repeating: 0, count: 6)
        #expect(
            try VendorCipher.bthomeV2.open(
                key: hex("231d39c1d7cc1ab1aee224cd096db932"), address: zero,
                header: hex("43a5808fe64854"), field: hex("f196c06ffb4900112233f08ecbde")
            ).plaintext == hex("02ca0903bf13"))
        #expect(
            try VendorCipher.mibeaconV4.open(
                key: hex("e9ea895fac7cca6d30532432a516f3a8"), address: [],
                header: hex("58585b0550f4830238c1a4"), field: hex("95ef58763c26000097e2abb5")
            ).plaintext == hex("061002d301"))
        // Without it the address counts: xiaomi-034 with another address fails.
        #expect(throws: VendorCryptoError.micMismatch) {
            try VendorCipher.mibeaconV4.open(
                key: hex("19b1c678ab0a8bc3dc77765f059188d4"), address: zero,
                header: hex("4858422529"), field: hex("202d8c7a76b756a82a0078b8224e"))
        }
    }

    @Test func typedErrors() {
        let key = hex("231d39c1d7cc1ab1aee224cd096db932"), address = Self.address("54:48:E6:8F:80:A5")
        // bthome-052 (test_incorrect_bindkey_length): a 24-octet key.
        #expect(throws: VendorCryptoError.badKeySize(24)) {
            try VendorCipher.bthomeV2.open(
                key: hex("231d39c1d7cc1ab1aee224cd096db932231d39c1d7cc1ab1"), address: address,
                header: hex("41"), field: hex("a47266c95f730011223378237214"))
        }
        #expect(throws: VendorCryptoError.badKeySize(12)) {
            try VendorCipher.mibeaconV4.seal(key: Array(key[0..<12]), address: address, header: hex("5858000000"), plaintext: [], counter: 0)
        }
        // bthome-067 (test_too_short_encryption_advertisement): 7 octets after the info byte.
        #expect(throws: VendorCryptoError.tooShort(7)) {
            try VendorCipher.bthomeV2.open(key: key, address: address, header: hex("41"), field: hex("ba0db07aeef600"))
        }
        #expect(throws: VendorCryptoError.tooShort(0)) {
            try VendorCipher.bthomeV2.open(key: key, address: address, header: [], field: hex("a47266c95f730011223378237214"))
        }
        #expect(throws: VendorCryptoError.tooShort(4)) {
            try VendorCipher.mibeaconV4.open(key: key, address: address, header: hex("48584225"), field: hex("202d8c7a76b756a82a0078b8224e"))
        }
        #expect(throws: VendorCryptoError.tooShort(3)) {
            try VendorCipher.bthomeV1.open(key: key, address: [1, 2, 3], header: [], field: hex("fba435e4d3c312fb0011223357d90a99"))
        }
        for c in VendorCipher.allCases where !c.keyInFrame && c != .victron { // the AES-CCM presets (a trailer)
            #expect(throws: VendorCryptoError.tooShort(c.trailerSize - 1)) {
                try c.open(
                    key: Array(hex("b853075158487ca39a5b5ea9b8530751")[0..<16]), address: address,
                    header: hex("5830b603d2"), field: [UInt8](repeating: 0, count: c.trailerSize - 1))
            }
        }
        // An empty ciphertext is well formed (the trailer alone).
        for c in VendorCipher.allCases where !c.keyInFrame && c != .victron { // the AES-CCM presets (a trailer)
            let k = [UInt8](repeating: 7, count: 16), h = hex("5830b603d2")
            let field = try? c.seal(key: k, address: address, header: h, plaintext: [], counter: 0x1234_5600)
            #expect(field?.count == c.trailerSize)
            #expect((try? c.open(key: k, address: address, header: h, field: field ?? []))?.counter == 0x1234_5600 | (c.counterSize == 3 ? 0xD2 : 0))
        }
    }

    @Test func sizes() {
        #expect(VendorCipher.allCases.map(\.rawValue) == ["bthome-v1", "bthome-v2", "mibeacon-v4", "mibeacon-legacy", "govee-h512x", "victron"])
        #expect(VendorCipher.allCases.map(\.trailerSize) == [8, 8, 7, 4, 0, 1])
        #expect(VendorCipher.allCases.map(\.keyInFrame) == [false, false, false, false, true, false])
        #expect(VendorCipher.allCases.prefix(4).map(\.keySizes) == [[16], [16], [16], [12, 16]])
    }

    /// govee-ble's vector govee-044: the key is the frame's time; one AES-ECB block each way.
    @Test func goveeH512xKeyInFrame() throws {
        let header = hex("3dec0000de43"), ct = hex("77d55e55f991496e36bdc67f8b2c2706")
        let opened = try VendorCipher.goveeH512x.open(key: [], address: [], header: header, field: ct)
        #expect(Array(opened.plaintext.prefix(6)) == [0x01, 0x05, 0x02, 0x02, 0x64, 0x02])
        #expect(opened.verified == nil && opened.counter == nil)
        #expect(try VendorCipher.goveeH512x.seal(key: [], address: [], header: header, plaintext: opened.plaintext, counter: 0) == ct)
    }

    /// victron-ble's vectors (tests/test_solar_charger.py, test_battery_monitor.py; Unlicense):
    /// AES-CTR from the header's IV; the plaintexts are victron-ble's own `Device.decrypt`
    /// (which pads the ciphertext to a block: only its first bytes are the record).
    @Test func victronCTR() throws {
        let solar = hex("100242a0016207"), key = hex("adeccb947395801a4dd45a2eaa44bf17")
        let field = hex("adceb37b605d7e0ee21b24df5c")
        let opened = try VendorCipher.victron.open(key: key, address: [], header: solar, field: field)
        #expect(opened.plaintext == hex("04006c050e000300130000fe"))
        #expect(opened.verified == nil && opened.counter == nil)
        #expect(try VendorCipher.victron.seal(key: key, address: [], header: solar, plaintext: opened.plaintext, counter: 0) == field)
        // another key, IV and length (15 bytes)
        let bm = try VendorCipher.victron.open(
            key: hex("aff4d0995b7d1e176c0c33ecb9e70dcd"), address: [], header: hex("100289a302b040"),
            field: hex("af925d09a4d89aa0128bdef48c6298a9"))
        #expect(bm.plaintext == hex("ffffe50400000000030000f40140df"))
        // the key check byte: a key whose first byte differs is refused
        #expect(throws: VendorCryptoError.keyCheckMismatch) {
            try VendorCipher.victron.open(key: [UInt8](repeating: 0xFF, count: 16), address: [], header: solar, field: field)
        }
        #expect(throws: VendorCryptoError.badKeySize(12)) {
            try VendorCipher.victron.open(key: [UInt8](repeating: 0xAD, count: 12), address: [], header: solar, field: field)
        }
    }
}
