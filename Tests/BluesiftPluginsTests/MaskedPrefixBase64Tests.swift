import Testing
import Foundation
import BluesiftWire
@testable import BluesiftPlugins

/// Issue 37, RuuviTag formats 2 and 4: a rule prefix with `??` bytes (Eddystone-URL's tx
/// power varies) and `encoding: base64url` (the URL's tail is the data), both symmetric.
@Suite struct MaskedPrefixBase64Tests {
    static func compile(_ yaml: String) throws -> Plugin { try PluginLoader.compile(yaml: yaml, path: "t.yaml") }
    static func decode(_ set: PluginSet, _ hex: String) -> (plugin: String, message: DecodedMessage)? {
        AdvertisingPluginTests.decode(set, type: 0x16, hex)
    }

    static let eddystone = """
        id: eddy
        endian: be
        match: [ { service_data: feaa } ]
        frame: [ { id: frame_type, type: u1 }, { id: rest, type: bytes } ]
        """
    static let ruuviURL = """
        id: ruuvi-url
        endian: be
        message: url
        match:
          - service_data: feaa
            prefix: "10 ?? 03 72 75 75 2e 76 69 2f 23"
        frame:
          - contents: 10
          - { id: tx_power, type: s1, unit: dBm }
          - contents: 03 72 75 75 2e 76 69 2f 23
          - { id: data, type: d, size: 8, encoding: base64url }
          - { id: tag_id, type: str, size: 1, if: _remaining > 0 }
        types:
          d:
            - { id: data_format, type: u1 }
            - { id: humidity, type: u1, scale: 0.5, unit: "%" }
            - { id: temperature_int, type: u1 }
            - { id: temperature_frac, type: u1 }
            - { id: pressure, type: u2, scale: 0.01, offset: 500, unit: hPa }
        """

    /// Any tx power, either file order: the 10 fixed bytes outweigh the bare UUID rule; a URL
    /// differing in one fixed byte stays the generic plugin's.
    @Test func wildcardByteMatchesAnyValueAndFixedBytesStillDecide() throws {
        let eddy = try Self.compile(Self.eddystone), ruuvi = try Self.compile(Self.ruuviURL)
        let rule = try #require(ruuvi.matches.first?.advertising)
        #expect(rule.prefixMask == [0xFF, 0x00] + Array(repeating: 0xFF, count: 9))
        #expect(rule.fixedPrefixBytes == 10 && rule.specificity == 80)
        #expect(rule.description == "service data feaa prefix 10??037275752e76692f23")
        for set in [PluginSet([eddy, ruuvi]), PluginSet([ruuvi, eddy])] {
            for tx in ["ee", "00", "7f", "80", "ff"] {
                let r = try #require(Self.decode(set, "aafe 10 \(tx) 03 7275752e76692f23 416a7759414d4666"))
                #expect(r.plugin == "ruuvi-url", "tx \(tx)")
            }
            // https://goo.gl/S6zT6P (the Eddystone-URL document's example) and "ruu.vi/$" (one fixed byte off).
            #expect(Self.decode(set, "aafe 10 ee 03 676f6f2e676c2f53367a543650")?.plugin == "eddy")
            #expect(Self.decode(set, "aafe 10 ee 03 7275752e76692f24 416a7759414d4666")?.plugin == "eddy")
            #expect(Self.decode(set, "aafe 10 ee 03 7275752e7669")?.plugin == "eddy") // shorter than the prefix
        }
    }

    /// bleparser's two vectors (bleparser-121 test_ruuvitag_v2, bleparser-123 test_ruuvitag_v4),
    /// through the shipped plugins: bleparser reads 30 %, 24.0 °C, 995.03 hPa and 50 %,
    /// 24.0 °C, 1019.0 hPa; each re-encodes to its bytes.
    @Test func bleparserFormat2And4VectorsThroughTheShippedPlugins() throws {
        let loaded = PluginLoader.load(directories: [Fixtures.pluginsDir])
        #expect(loaded.errors.isEmpty, "\(loaded.errors)")
        let set = PluginSet(loaded.plugins)
        let v2 = try #require(Self.decode(set, "aafe 10ee03 7275752e76692f23 416a7759414d4666"))
        #expect(v2.plugin == "ruuvitag")
        #expect(v2.message.summary == "url tx_power=-18 dBm data_format=2 humidity=30.0 % temperature_int=24 temperature_frac=0 temperature=24.00 °C pressure=995.03 hPa")
        let v4 = try #require(Self.decode(set, "aafe 10f603 7275752e76692f23 42475159414d713877"))
        #expect(v4.plugin == "ruuvitag")
        #expect(v4.message.summary == "url tx_power=-10 dBm data_format=4 humidity=50.0 % temperature_int=24 temperature_frac=0 temperature=24.00 °C pressure=1019.00 hPa tag_id=\"w\"")
        let p = try #require(loaded.plugins.first { $0.id == "ruuvitag" })
        #expect(try p.encode(v2.message) == Hex.parse("10ee037275752e76692f23416a7759414d4666"))
        #expect(try p.encode(v4.message) == Hex.parse("10f6037275752e76692f2342475159414d713877"))
        // Any other Eddystone URL stays eddystone's.
        #expect(Self.decode(set, "aafe 10ee03 676f6f2e676c2f53367a543650")?.plugin == "eddystone")
    }

    /// Text that is not base64 stays raw with the reason; standard base64 (`+/`, padded)
    /// round-trips too; the URL-safe alphabet refuses `+`.
    @Test func base64AlphabetsAndBadText() throws {
        let set = PluginSet([try Self.compile(Self.ruuviURL)])
        let bad = try #require(Self.decode(set, "aafe 10ee03 7275752e76692f23 416a77592b4d4666")) // "AjwY+MFf"
        #expect(bad.message.raw == "data: not base64url text")
        #expect(bad.message["data"] == .bytes(Array("AjwY+MFf".utf8)))
        #expect(try set.plugins[0].encode(bad.message) == Hex.parse("10ee037275752e76692f23416a77592b4d4666"))
        #expect(TextEncoding.base64.decode(Array("+/8=".utf8)) == [0xFB, 0xFF])
        #expect(TextEncoding.base64.decode(Array("+/8".utf8)) == [0xFB, 0xFF])
        #expect(TextEncoding.base64url.decode(Array("-_8".utf8)) == [0xFB, 0xFF])
        #expect(TextEncoding.base64url.decode(Array("+/8".utf8)) == nil)
        #expect(TextEncoding.base64.encode([0xFB, 0xFF]) == Array("+/8=".utf8))
        #expect(TextEncoding.base64url.encode([0xFB, 0xFF]) == Array("-_8".utf8))
    }

    @Test func loadErrors() {
        let frame = "frame: [ { id: a, type: u1 } ]"
        #expect(throws: PluginError.self) { try Self.compile("id: x\nmatch: [ { service_data: feaa, prefix: \"?? ??\" } ]\n" + frame) }
        #expect(throws: PluginError.self) { try Self.compile("id: x\nmatch: [ { service_data: feaa, prefix: \"10 ?\" } ]\n" + frame) }
        #expect(throws: PluginError.self) { try Self.compile("id: x\nmatch: [ { service_data: feaa, prefix: \"10 g1\" } ]\n" + frame) }
        #expect(throws: PluginError.self) {
            try Self.compile("id: x\nmatch: [ { service_data: feaa } ]\nframe: [ { id: a, type: bytes, size: 4, encoding: base64 } ]")
        }
        #expect(throws: PluginError.self) {
            try Self.compile("id: x\nmatch: [ { service_data: feaa } ]\nframe: [ { id: a, type: t, encoding: base32 } ]\ntypes: { t: [ { id: b, type: u1 } ] }")
        }
    }
}
