import Testing
import BluesiftSecurity
import BluesiftWire
@testable import BluesiftProtocols

private func mhx(_ s: String) -> [UInt8] { Hex.parse(s)! }

/// Issue 40's field gaps: Composition Data pages 1/2/128-130, sensor and property values in
/// their characteristic's unit, node identities resolved with the key file.
@Suite struct MeshFieldsTests {
    /// Page 1 (§4.2.2.2): one element, two SIG model items (a short extended item at offset -1,
    /// a corresponding group 5) and a vendor model item with two long extended items.
    @Test func compositionPage1() throws {
        let m = try MeshAccessMessage(decoding: mhx("02" + "01" + "0201" + "041f" + "0105" + "0afe010100"))
        #expect(
            json(m)
                == #"{"opcode":2,"name":"Config Composition Data Status","page":1,"elements":[{"num_s":2,"num_v":1,"sig_models":[{"corresponding_group_id_present":0,"format":0,"extended_items_count":1,"extended_model_items":[{"element_offset":-1,"model_item_index":3}]},{"corresponding_group_id_present":1,"format":0,"extended_items_count":0,"corresponding_group_id":5,"extended_model_items":[]}],"vendor_models":[{"corresponding_group_id_present":0,"format":1,"extended_items_count":2,"extended_model_items":[{"element_offset":-2,"model_item_index":1},{"element_offset":1,"model_item_index":0}]}]}]}"#
        )
        // An item running past the end: the element stays out, its octets trail as hex.
        let cut = try MeshAccessMessage(decoding: mhx("02" + "81" + "0100" + "08ff"))
        #expect(json(cut) == #"{"opcode":2,"name":"Config Composition Data Status","page":129,"elements":[],"trailing":"010008ff"}"#)
    }

    /// Page 2 (§4.2.2.3) and 130 (§4.2.2.6): a mesh profile record; page 128 reads as page 0.
    @Test func compositionPages2And128() throws {
        let m = try MeshAccessMessage(decoding: mhx("02" + "82" + "0100" + "010203" + "02" + "0001" + "0300" + "aabbcc"))
        #expect(
            json(m)
                == #"{"opcode":2,"name":"Config Composition Data Status","page":130,"mesh_profiles":[{"mesh_profile_identifier":1,"version_x":1,"version_y":2,"version_z":3,"num_element_offsets":2,"element_offset_list":[0,1],"additional_data_len":3,"additional_data":"aabbcc"}]}"#
        )
        let p128 = try MeshAccessMessage(decoding: mhx("02" + "80" + "5900" + "0100" + "0200" + "0a00" + "0300" + "0000" + "0100" + "0000"))
        #expect(
            json(p128)
                == #"{"opcode":2,"name":"Config Composition Data Status","page":128,"cid":89,"company_name":"Nordic Semiconductor ASA","pid":1,"vid":2,"crpl":10,"features":3,"feature_names":["relay","proxy"],"elements":[{"loc":0,"sig_models":[{"model_id":0,"name":"Configuration Server"}],"vendor_models":[]}]}"#
        )
    }

    /// Sensor Status (Mesh Model v1.1 §4.2.14): Present Ambient Temperature 0x2b is 21.5 °C,
    /// Present Ambient Light Level 10000 is 100 lux; an unlisted property stays hex with its length.
    @Test func sensorStatusInUnits() throws {
        let m = try MeshAccessMessage(decoding: mhx("52" + "e0092b" + "c409102700" + "03000faabb"))
        #expect(
            json(m)
                == #"{"opcode":82,"name":"Sensor Status","sensor_data":[{"format":0,"length":1,"property_id":79,"raw_value":"2b","property_name":"Present Ambient Temperature","temperature_celsius":21.5},{"format":0,"length":3,"property_id":78,"raw_value":"102700","property_name":"Present Ambient Light Level","illuminance_lux":100},{"format":1,"length":2,"property_id":3840,"raw_value":"aabb"}]}"#
        )
        // "Value is not known" (GATT Specification Supplement): null, not a number.
        let unknown = try MeshAccessMessage(decoding: mhx("52" + "e0097f"))
        #expect(json(unknown).hasSuffix(#""property_name":"Present Ambient Temperature","temperature_celsius":null}]}"#))
        // Negative, and a value of the wrong size stays hex only.
        #expect(json(try MeshAccessMessage(decoding: mhx("52" + "e009fb"))).contains(#""temperature_celsius":-2.5"#))
        #expect(!json(try MeshAccessMessage(decoding: mhx("52" + "e2092b00"))).contains("celsius"))
    }

    /// Descriptors (§4.1.1): tolerances in percent, periods in seconds (1.1^(n-64)).
    @Test func sensorDescriptorsInUnits() throws {
        let m = try MeshAccessMessage(decoding: mhx("51" + "4f00" + "ff0f00" + "01" + "40" + "00"))
        #expect(
            json(m)
                == #"{"opcode":81,"name":"Sensor Descriptor Status","descriptors":[{"property_id":79,"property_name":"Present Ambient Temperature","positive_tolerance":4095,"negative_tolerance":0,"positive_tolerance_percent":100,"sampling_function":1,"measurement_period":64,"update_interval":0,"measurement_period_seconds":1}]}"#
        )
    }

    /// Cadence (§4.2.3-§4.2.6) and Column (§4.2.13) by the property's characteristic.
    @Test func sensorCadenceAndColumn() throws {
        let c = try MeshAccessMessage(decoding: mhx("57" + "4f00" + "02" + "02" + "04" + "03" + "28" + "32"))
        #expect(
            json(c)
                == #"{"opcode":87,"name":"Sensor Cadence Status","property_id":79,"cadence":"020204032832","cadence_fields":{"fast_cadence_period_divisor":2,"status_trigger_type":0,"status_trigger_delta_down":{"property_name":"Present Ambient Temperature","temperature_celsius":1},"status_trigger_delta_up":{"property_name":"Present Ambient Temperature","temperature_celsius":2},"status_min_interval":3,"fast_cadence_low":{"property_name":"Present Ambient Temperature","temperature_celsius":20},"fast_cadence_high":{"property_name":"Present Ambient Temperature","temperature_celsius":25}}}"#
        )
        let col = try MeshAccessMessage(decoding: mhx("53" + "5500" + "640000" + "c80000" + "e80300"))
        #expect(
            json(col)
                == #"{"opcode":83,"name":"Sensor Column Status","property_id":85,"columns":"640000c80000e80300","column":{"raw_value_x":{"property_name":"Present Illuminance","illuminance_lux":1},"column_width":{"property_name":"Present Illuminance","illuminance_lux":2},"raw_value_y":{"property_name":"Present Illuminance","illuminance_lux":10}}}"#
        )
    }

    /// Generic User Property Status (Mesh Model v1.1 §3.2.8.5): the value in lux.
    @Test func propertyValueInUnits() throws {
        let m = try MeshAccessMessage(decoding: mhx("4e" + "5500" + "03" + "40e201"))
        #expect(
            json(m)
                == #"{"opcode":78,"name":"Generic User Property Status","user_property_id":85,"user_access":3,"user_property_value":"40e201","value":{"property_name":"Present Illuminance","illuminance_lux":1234.56}}"#
        )
        // An unlisted property: the hex alone.
        #expect(json(try MeshAccessMessage(decoding: mhx("4e" + "ff0f" + "03" + "40e201"))).hasSuffix(#""user_property_value":"40e201"}"#))
    }

    static let netKey = MeshKeys(ivIndex: 0x1234_5678, netKeys: [mhx("7dd7364cd842ad18c17c2b820c84c3d6")])

    /// Node Identity (Mesh Protocol v1.1 §7.2.2.2.2), the sample data chapter's proxy node identity:
    /// address 0x1201 heard as the SRC of sample message #1 gives hash 00861765aefcc57b.
    @Test func nodeIdentityResolvedFromHeardSource() throws {
        var d = MeshDecoder(keys: Self.netKey)
        let id = mhx("01" + "00861765aefcc57b" + "34ae608fbbc1f2c6")
        #expect(d.decodeServiceData(uuid: 0x1828, data: id).identity == MeshIdentityMatch(resolved: false, candidates: 0))
        let m1 = d.decodeAdvertising(adType: 0x2A, data: mhx("68eca487516765b5e5bfdacbaf6cb7fb6bff871f035444ce83a670df"))
        #expect(m1.network?.src == 0x1201)
        let l = d.decodeServiceData(uuid: 0x1828, data: id)
        #expect(l.identity == MeshIdentityMatch(resolved: true, netKeyIndex: 0, nodeAddress: 0x1201, candidates: 1))
        #expect(
            json(l)
                == #"{"bearer":"adv","service_data":{"uuid":6184,"identification_type":1,"identification_name":"Node Identity","hash":"00861765aefcc57b","random":"34ae608fbbc1f2c6","identity_resolved":true,"net_key_index":0,"node_address":4609}}"#
        )
        #expect(l.summary == "Mesh Proxy service Node Identity node=0x1201")
        #expect(!json(l).contains("7dd7"))
        // `stats`: the node is listed, heard on its proxy identity, with no message sent.
        var stats = MeshNetworkStats()
        stats.add(l, frame: 7)
        #expect(stats.nodes[0x1201] == MeshNetworkStats.Node(address: 0x1201, messages: 0, firstFrame: 7, bearers: ["proxy-identity"]))
    }

    /// Private Node Identity (§7.2.2.2.4) from a device key address, Private Network Identity
    /// (§7.2.2.2.3); hashes computed apart with Python's cryptography from the IdentityKey
    /// 84396c435ac48560b5965385253e210c (spec sample).
    @Test func privateIdentities() throws {
        let keys = MeshKeys(ivIndex: 0, netKeys: [mhx("7dd7364cd842ad18c17c2b820c84c3d6")], devKeys: [0x1201: mhx("9d6dd0e96eb25dc19a40ed9914f8f03f")])
        var d = MeshDecoder(keys: keys)
        let node = d.decodeServiceData(uuid: 0x1828, data: mhx("03" + "2c64a8cbca65bfe1" + "34ae608fbbc1f2c6"))
        #expect(node.identity == MeshIdentityMatch(resolved: true, netKeyIndex: 0, nodeAddress: 0x1201, candidates: 1))
        let net = d.decodeServiceData(uuid: 0x1828, data: mhx("02" + "d30f7229ef045435" + "34ae608fbbc1f2c6"))
        #expect(net.identity == MeshIdentityMatch(resolved: true, netKeyIndex: 0, candidates: 0))
        let wrong = d.decodeServiceData(uuid: 0x1828, data: mhx("03" + "2c64a8cbca65bfe0" + "34ae608fbbc1f2c6"))
        #expect(wrong.identity?.resolved == false)
        #expect(json(wrong).hasSuffix(#""identity_resolved":false,"addresses_tried":1}}"#))
        // Without keys nothing is tried.
        var bare = MeshDecoder()
        #expect(bare.decodeServiceData(uuid: 0x1828, data: mhx("03" + "2c64a8cbca65bfe1" + "34ae608fbbc1f2c6")).identity == nil)
    }
}
