import Testing
import Foundation
import BluesiftWire
@testable import BluesiftPlugins

/// The advertising side of the plugin engine (docs/plugin-advertising-design.md): match
/// selection, context, numbers, types, flattened object lists, decryption.
@Suite struct AdvertisingPluginTests {
    static func compile(_ yaml: String) throws -> Plugin { try PluginLoader.compile(yaml: yaml, path: "t.yaml") }

    /// Decodes one AD structure (type, value = company id or UUID, then payload) through a set.
    static func decode(
        _ set: PluginSet, type: UInt8, _ hex: String, address: UInt64 = 0xA4C1_38DD_DBF8, rssi: Int64 = -60,
        name: String? = nil
    ) -> (plugin: String, message: DecodedMessage)? {
        var ctx = AdvertisingContext()
        ctx.address = address; ctx.rssi = rssi; ctx.name = name
        let bytes = Hex.parse(hex.replacingOccurrences(of: " ", with: ""))!
        return bytes.withUnsafeBytes { v in
            set.decodeAdvertising(type: type, value: v, context: ctx, serviceUUIDs: { [] }).map { (set.plugins[$0.plugin].id, $0.message) }
        }
    }

    static let govee = """
        id: govee
        endian: be
        message: h5075
        match:
          - { company: 0xEC88, size: 6 }
        frame:
          - { id: reserved, type: u1 }
          - { id: packed, type: u3, hidden: true }
          - { id: temperature, compute: ((packed & 0x7FFFFF) / 1000) * (1 - 2 * ((packed >> 23) & 1)), scale: 0.1, unit: °C,
              valid: temperature >= -400 && temperature <= 1000 && error == 0 }
          - { id: humidity, compute: (packed & 0x7FFFFF) % 1000, scale: 0.1, unit: "%" }
          - id: status
            type: u1
            bits:
              - { id: battery, bits: 0-6, unit: "%" }
              - { id: error, bit: 7 }
          - { id: tail, type: u1 }
        """

    /// govee-ble's test_gvh5075 bytes (govee-016): 21.6 °C, 49.8 %, battery 100; the sign bit
    /// with |t| = 393.2 °C out of range (govee-017) is null through `valid:`.
    @Test func computedScaledAndValid() throws {
        let set = PluginSet([try Self.compile(Self.govee)])
        let r = try #require(Self.decode(set, type: 0xFF, "88ec 00 03 4d b2 64 00"))
        #expect(r.message.summary == "h5075 reserved=0 temperature=21.6 °C humidity=49.8 % battery=100 % error=0 tail=0")
        #expect(r.message["temperature"] == .decimal(raw: 216, value: 21.6, decimals: 1))
        let bad = try #require(Self.decode(set, type: 0xFF, "88ec 00 bc 00 04 3e 27"))
        #expect(bad.message["temperature"] == .null)
        #expect(bad.message["battery"] == .int(62))
        // Wrong size: no plugin takes it.
        #expect(Self.decode(set, type: 0xFF, "88ec 00 03 4d b2 64") == nil)
        // Re-encoded from the decoded message, byte for byte.
        let p = set.plugins[0]
        #expect(try p.encode(r.message) == [0x00, 0x03, 0x4D, 0xB2, 0x64, 0x00])
    }

    /// The longest prefix wins over a shorter one and over a bare company rule, whatever the file order.
    @Test func mostSpecificRuleWins() throws {
        let apple = try Self.compile(
            """
            id: apple
            match: [ { company: 0x004C } ]
            frame: [ { id: type, type: u1 } ]
            """)
        let ibeacon = try Self.compile(
            """
            id: ibeacon
            match: [ { company: 0x004C, prefix: 0215 } ]
            frame: [ { id: head, type: u2 }, { id: uuid, type: uuidbe }, { id: major, type: u2be }, { id: minor, type: u2be },
                     { id: power, type: s1, unit: dBm }, { id: rssi, context: _rssi, unit: dBm } ]
            """)
        let tilt = try Self.compile(
            """
            id: tilt
            match: [ { company: 0x004C, prefix: 0215a495bb10c5b14b44b5121370f02d74de } ]
            frame: [ { id: rest, type: bytes } ]
            """)
        let set = PluginSet([apple, ibeacon, tilt])
        // ibeacon-ble's test vector (ibeacon-001): UUID e2c56db5-dffb-48d2-b060-d0f5a71096e0, major 0, minor 0, power -59.
        let b = try #require(Self.decode(set, type: 0xFF, "4c00 0215 e2c56db5dffb48d2b060d0f5a71096e0 0000 0000 c5", rssi: -71))
        #expect(b.plugin == "ibeacon")
        #expect(b.message.summary == "frame head=5378 uuid=\"e2c56db5-dffb-48d2-b060-d0f5a71096e0\" major=0 minor=0 power=-59 dBm rssi=-71 dBm")
        #expect(Self.decode(set, type: 0xFF, "4c00 0215 a495bb10c5b14b44b5121370f02d74de 0044 03f8 c5")?.plugin == "tilt")
        #expect(Self.decode(set, type: 0xFF, "4c00 1005 1b18")?.plugin == "apple")
        // rssi is read from the report: a second decode of the same bytes with another RSSI is not a stale cache hit.
        let again = try #require(Self.decode(set, type: 0xFF, "4c00 0215 e2c56db5dffb48d2b060d0f5a71096e0 0000 0000 c5", rssi: -40))
        #expect(again.message["rssi"] == .int(-40))
    }

    /// A name filter reads the report's local name, whole (anchored).
    @Test func nameFilter() throws {
        let p = try Self.compile(
            """
            id: named
            match: [ { company: any, name: "GVH50(72|75)_.*" } ]
            frame: [ { id: x, type: u1 } ]
            """)
        let set = PluginSet([p])
        #expect(Self.decode(set, type: 0xFF, "0100 07", name: "GVH5075_DBF8")?.message["x"] == .int(7))
        #expect(Self.decode(set, type: 0xFF, "0100 07", name: "xGVH5075_DBF8") == nil)
        #expect(Self.decode(set, type: 0xFF, "0100 07") == nil)
        // The last name an address advertised (often only in its scan response).
        set.observeName("GVH5072_0001", address: 0x11)
        #expect(Self.decode(set, type: 0xFF, "0100 07", address: 0x11)?.message["x"] == .int(7))
    }

    static let bthome = """
        id: bthome
        match: [ { service_data: fcd2 } ]
        frame:
          - { id: info, type: u1, bits: [ { id: encrypted, bit: 0 }, { id: version, bits: 5-7 } ] }
          - { id: body, switch-on: encrypted, cases: { 0: plain, 1: sealed } }
        types:
          plain:
            - { id: objects, type: object, repeat: eos, flatten: true }
          sealed:
            - { id: objects, type: plain, decrypt: bthome-v2 }
          object:
            - { id: id, type: u1 }
            - id: value
              switch-on: id
              cases:
                0x01: { id: battery, type: u1, unit: "%" }
                0x02: { id: temperature, type: s2le, scale: 0.01, unit: °C }
                0x03: { id: humidity, type: u2le, scale: 0.01, unit: "%" }
                0x2E: { id: humidity, type: u1, unit: "%" }
                0x3A: { id: button, type: u1 }
                0x45: { id: temperature, type: s2le, scale: 0.1, unit: °C }
        """

    /// BTHome v2 objects, flattened; two of one name are numbered; an unknown id ends the
    /// list; the same name with another scale re-encodes to its own id (bthome-ble vectors).
    @Test func flattenedObjects() throws {
        let set = PluginSet([try Self.compile(Self.bthome)])
        let r = try #require(Self.decode(set, type: 0x16, "d2fc 40 02 ca09 03 bf13"))
        #expect(r.message.summary == "plain encrypted=0 version=2 temperature=25.06 °C humidity=50.55 %")
        let buttons = try #require(Self.decode(set, type: 0x16, "d2fc 40 3a 01 3a 04"))
        #expect(buttons.message.fields.map(\.name) == ["encrypted", "version", "button_1", "button_2"])
        let unknown = try #require(Self.decode(set, type: 0x16, "d2fc 40 01 64 f0 0102"))
        #expect(unknown.message["unknown_objects"] == .bytes([0xF0, 0x01, 0x02]))
        let mixed = try #require(Self.decode(set, type: 0x16, "d2fc 40 2e 34 45 1601"))
        #expect(mixed.message["humidity"] == .int(52))
        #expect(mixed.message["temperature"] == .decimal(raw: 278, value: 27.8, decimals: 1))
        #expect(try set.plugins[0].encode(mixed.message) == [0x40, 0x2E, 0x34, 0x45, 0x16, 0x01])
    }

    /// bthome-ble's test_bindkey_correct (bthome-048): address 54:48:E6:8F:80:A5, key
    /// 231d39c1d7cc1ab1aee224cd096db932 → temperature 25.06 °C, humidity 50.55 % (as bthome-ble).
    @Test func decryptsWithTheKeyOfTheAddress() throws {
        let set = PluginSet([try Self.compile(Self.bthome)])
        let frame = "d2fc 41 a47266c95f73 00112233 78237214"
        let noKey = try #require(Self.decode(set, type: 0x16, frame, address: 0x5448_E68F_80A5))
        #expect(noKey.message.raw == "no key for 54:48:e6:8f:80:a5")
        #expect(noKey.message.mic == nil)
        set.vendorKeys[0x5448_E68F_80A5] = Hex.parse("231d39c1d7cc1ab1aee224cd096db932")!
        let r = try #require(Self.decode(set, type: 0x16, frame, address: 0x5448_E68F_80A5))
        #expect(r.message.mic == .ok)
        #expect(r.message["temperature"] == .decimal(raw: 2506, value: 25.06, decimals: 2))
        #expect(r.message["humidity"] == .decimal(raw: 5055, value: 50.55, decimals: 2))
        #expect(r.message.summary == "sealed encrypted=1 version=2 temperature=25.06 °C humidity=50.55 % counter=857870592 mic ok")
        var ctx = AdvertisingContext(); ctx.address = 0x5448_E68F_80A5
        #expect(
            try set.plugins[0].encode(r.message, context: ctx, key: set.vendorKeys[0x5448_E68F_80A5])
                == Hex.parse("41a47266c95f730011223378237214"))
        #expect(r.message["counter"] == .int(0x3322_1100))
        set.vendorKeys[0x5448_E68F_80A5] = Hex.parse("00000000000000000000000000000000")!
        let wrong = try #require(Self.decode(set, type: 0x16, frame, address: 0x5448_E68F_80A5))
        #expect(wrong.message.mic == .bad)
        #expect(wrong.message.raw == "MIC mismatch (wrong key?)")
        #expect(wrong.message["temperature"] == nil)
    }

    /// IEEE 754 half and single, IEEE 11073 SFLOAT (36.4 = 0xF16C; NaN 0x07FF), sentinels on a signed field.
    @Test func numberTypes() throws {
        let p = try Self.compile(
            """
            id: nums
            match: [ { company: 0xFFFF } ]
            frame:
              - { id: half, type: f2le }
              - { id: single, type: f4le }
              - { id: body_temp, type: sfloatle, unit: °C }
              - { id: missing, type: sfloatle }
              - { id: accel, type: s2be, na: 0x8000 }
              - { id: mac, type: macle }
            """)
        let set = PluginSet([p])
        // half 1.5 = 0x3E00; single 21.5 = 0x41AC0000; sfloat 0xF16C; 0x07FF; 0x8000; mac a4:c1:38:8d:18:b2 least significant first.
        let r = try #require(Self.decode(set, type: 0xFF, "ffff 003e 0000ac41 6cf1 ff07 8000 b2188d38c1a4"))
        #expect(r.message.summary == "frame half=1.5 single=21.5 body_temp=36.4 °C missing=n/a accel=n/a mac=\"a4:c1:38:8d:18:b2\"")
        #expect(try p.encode(r.message) == Hex.parse("003e0000ac416cf1ff078000b2188d38c1a4"))
    }

    /// Eddystone-URL: a scheme enum and an expanded string joined into one URL (Eddystone
    /// spec's example https://goo.gl/S6zT6P).
    @Test func expandAndJoin() throws {
        let p = try Self.compile(
            """
            id: url
            match: [ { service_data: feaa, prefix: "10" } ]
            frame:
              - { id: frame_type, type: u1, hidden: true }
              - { id: tx_power, type: s1, unit: dBm }
              - { id: scheme, type: u1, enum: schemes, hidden: true }
              - { id: rest, type: str, expand: codes, hidden: true }
              - { id: url, join: [scheme, rest] }
            enums:
              schemes: { 0: "http://www.", 1: "https://www.", 2: "http://", 3: "https://" }
              codes: { 0: ".com/", 7: ".com" }
            """)
        let set = PluginSet([p])
        let r = try #require(Self.decode(set, type: 0x16, "aafe 10 eb 03 676f6f2e676c2f53367a543650"))
        #expect(r.message["url"] == .string("https://goo.gl/S6zT6P"))
        #expect(r.message["tx_power"] == .int(-21))
    }

    /// `also:` asks for another structure of the same report (SwitchBot: the model letter in
    /// service data FD3D, the readings in manufacturer data 0x0969); `_rule` says which rule took it.
    @Test func alsoFilterAndRuleIndex() throws {
        let p = try Self.compile(
            """
            id: mfr
            match:
              - { company: 0x0969, also: { service_data: fd3d, prefix: "34" } }
              - { company: 0x0969, also: { service_data: fd3d, prefix: "77" } }
            frame:
              - { id: model, compute: _rule }
              - { id: rest, type: bytes }
            """)
        let set = PluginSet([p])
        func decode(_ report: String) -> DecodedMessage? {
            let r = Hex.parse(report)!
            // The manufacturer structure is the first: 0b ff 6909 …
            return r.withUnsafeBytes { all in
                set.decodeAdvertising(
                    type: 0xFF, value: UnsafeRawBufferPointer(rebasing: all[2..<12]), context: AdvertisingContext(),
                    serviceUUIDs: { [] }, report: all)?.message
            }
        }
        // switchbot-037's two structures: 0969 b0e9fe52dd84 0664 …, fd3d 34 00 64.
        #expect(decode("0bff6909b0e9fe52dd840664" + "05163dfd340064")?["model"] == .int(0))
        #expect(decode("0bff6909b0e9fe52dd840664" + "05163dfd770064")?["model"] == .int(1))
        #expect(decode("0bff6909b0e9fe52dd840664" + "05163dfd550064") == nil)
        #expect(decode("0bff6909b0e9fe52dd840664") == nil)
    }

    /// Govee H5121 (govee-ble's vector govee-038): one AES-ECB block keyed by the frame's own
    /// time → model 3, battery 100 %, event 1 (motion); no key file, and it re-encrypts.
    @Test func goveeKeyInTheFrame() throws {
        let p = try Self.compile(
            """
            id: h512x
            endian: be
            match: [ { company: 0xEF88, size: 24 } ]
            frame:
              - { id: head, type: u2 }
              - { id: time, type: u4 }
              - { id: event, type: plain, size: 16, decrypt: govee-h512x }
              - { id: crc, type: u2 }
            types:
              plain:
                - { id: kind, type: u1 }
                - { id: length, type: u1 }
                - { id: model, type: u1 }
                - { id: x, type: u1 }
                - { id: battery, type: u1, unit: "%" }
                - { id: event_code, type: u1 }
                - { id: rest, size: 10 }
            """)
        let set = PluginSet([p])
        let frame = "88ef 5994 0000f0b9 1937ae50b6372c866ac2f3d061e717c0 2cef"
        let r = try #require(Self.decode(set, type: 0xFF, frame))
        #expect(r.message["model"] == .int(3) && r.message["battery"] == .int(100) && r.message["event_code"] == .int(1))
        #expect(r.message.raw == nil && r.message.mic == nil)
        #expect(try p.encode(r.message) == Hex.parse(String(frame.dropFirst(4)).replacingOccurrences(of: " ", with: "")))
    }

    /// Bytes no preset opens stay raw and say why (MikroTik's AES-ECB secret block).
    @Test func unsupportedEncryptionSaysSo() throws {
        let p = try Self.compile(
            """
            id: mt
            match: [ { company: 0x094F } ]
            frame:
              - { id: version, type: u1 }
              - { id: secret, type: bytes, decrypt: { unsupported: "AES-ECB (MikroTik)" } }
            """)
        let r = try #require(Self.decode(PluginSet([p]), type: 0xFF, "4f09 01 5b3e9a0c"))
        #expect(r.message.raw == "unsupported encryption: AES-ECB (MikroTik)")
        #expect(r.message["secret"] == .bytes([0x5B, 0x3E, 0x9A, 0x0C]))
        #expect(!p.decrypts)
    }

    /// Keys file: addresses in either case, 16-byte keys; anything else is a one-line reason.
    @Test func vendorKeysFile() throws {
        let k = try VendorKeys.parse(#"{"A4:C1:38:8D:18:B2": "231d39c1d7cc1ab1aee224cd096db932"}"#)
        #expect(k[0xA4C1_388D_18B2] == Hex.parse("231d39c1d7cc1ab1aee224cd096db932"))
        #expect(throws: VendorKeys.Failure.self) { try VendorKeys.parse(#"{"nope": "00"}"#) }
        #expect(throws: VendorKeys.Failure.self) { try VendorKeys.parse("[1]") }
    }

    /// Load-time errors name the line.
    @Test func loadErrors() {
        #expect(throws: PluginError.self) {
            try Self.compile("id: x\nmatch: [ { company: 0x1, service_data: fcd2 } ]\nframe: [ { id: a, type: u1 } ]")
        }
        #expect(throws: PluginError.self) {
            try Self.compile("id: x\nmatch: [ { characteristic: 2a37 } ]\nframe: [ { id: a, context: _rssi } ]")
        }
        #expect(throws: PluginError.self) {
            try Self.compile("id: x\nmatch: [ { company: 1 } ]\nframe: [ { id: a, type: u2, scale: 1/256 } ]")
        }
    }
}
