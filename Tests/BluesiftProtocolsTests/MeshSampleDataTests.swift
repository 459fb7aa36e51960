import Testing
import BluesiftSecurity
import BluesiftWire
@testable import BluesiftProtocols

/// Mesh Protocol v1.1 chapter 8 "Sample data" (as reproduced in BlueZ
/// unit/test-mesh-crypto.c and BTstack test/mesh/mesh_message_test.cpp) fed through
/// `MeshDecoder` as Mesh Message AD data, in the specification's order: friendship
/// credentials are learnt from messages 1-2, the IV index from the key file.
enum MeshSample {
    static let netKey = "7dd7364cd842ad18c17c2b820c84c3d6"
    static let appKey = "63964771734fbd76e3b40519d1d94a48"
    static let devKey = "9d6dd0e96eb25dc19a40ed9914f8f03f"
    static let labels = ["0073e7e4d8b9440faf8415df4c56c0e1", "f4a002c7fb1e4ca0a469a021de0db875"]
    static var keysJSON: String {
        """
        {"iv_index": "12345678", "net_keys": ["\(netKey)"], "app_keys": ["\(appKey)"], "dev_keys": {"0x1201": "\(devKey)"},
         "label_uuids": ["\(labels[0])", "\(labels[1])"]}
        """
    }
    static var keys: MeshKeys { try! MeshKeys.decode(Array(keysJSON.utf8)) }

    /// (number, network PDU) of messages 1-12, 14, 16, 18-24.
    static let messages: [(String, String)] = [
        ("1", "68eca487516765b5e5bfdacbaf6cb7fb6bff871f035444ce83a670df"),
        ("2", "68d4c826296d7979d7dbc0c9b4d43eebec129d20a620d01e"),
        ("3", "68da062bc96df253273086b8c5ee00bdd9cfcc62a2ddf572"),
        ("4", "5e84eba092380fb0e5d0ad970d579a4e88051c"),
        ("5", "5eafd6f53c43db5c39da1792b1fee9ec74b786c56d3a9dee"),
        ("6.0", "68cab5c5348a230afba8c63d4e686364979deaf4fd40961145939cda0e"),
        ("6.1", "681615b5dd4a846cae0c032bf0746f44f1b8cc8ce5edc57e55beed49c0"),
        ("7", "68e476b5579c980d0d730f94d7f3509df987bb417eb7c05f"),
        ("8", "684daa6267c2cf0e2f91add6f06e66006844cec97f973105ae2534f958"),
        ("9", "68aec467ed4901d85d806bbed248614f938067b0d983bb7b"),
        ("10", "5e7b786568759f7777ed355afaf66d899c1e3d"),
        ("11", "5e6ebfc021edf5d5e748a20ecfd98ddfd32de80befb400213d113813b5"),
        ("12", "5e8a18fc6e4d05ae21466087599c2426ce9a35"),
        ("14", "5e0bbaf92b5c8f7d3ae62a3c75dff683dce24e"),
        ("16", "68e80e5da5af0e6b9be7f5a642f2f98680e61c3a8b47f228"),
        ("18", "6848cba437860e5673728a627fb938535508e21a6baf57"),
        ("19", "68110edeecd83c3010a05e1b23a926023da75d25ba91793736"),
        ("20", "e85cca51e2e8998c3dc87344a16c787f6b08cc897c941a5368"),
        ("21", "e84e8fbe003f58a4d61157bb76352ea6307eebfe0f30b83500e9"),
        ("22", "e8d85caecef1e3ed31f3fdcf88a411135fea55df730b6b28e255"),
        ("23", "e877a48dd5fe2d7a9d696d3dd16a75489696f0b70c711b881385"),
        ("24.0", "e8624e65bb8c1794e998b4081f47a35251fdd3896d99e4db489b918599"),
        ("24.1", "e8a7d0f0a2ea42dc2f4dd6fb4db33a6c088d023b47"),
        ("beacon", "01003ecaff672f673370123456788ea261582f364f6f")
    ]

    /// Every message decoded by one decoder, in order.
    static func decodeAll(keys: MeshKeys? = MeshSample.keys) -> [String: MeshLayer] {
        var d = MeshDecoder(keys: keys)
        var out: [String: MeshLayer] = [:]
        for (n, h) in messages { out[n] = d.decodeAdvertising(adType: n == "beacon" ? 0x2B : 0x2A, data: Hex.parse(h)!) }
        return out
    }
}

@Suite struct MeshSampleDataTests {
    static let layers = MeshSample.decodeAll()

    @Test func everyNetworkPDUDecrypts() {
        let nets = Self.layers.filter { $0.key != "beacon" }
        #expect(nets.count == 23)
        #expect(nets.values.filter { $0.netMIC == "ok" }.count == 23)
        #expect(nets.values.allSatisfy { $0.notes.isEmpty })
        // 4, 5, 10, 11, 12, 14: friendship credentials learnt from messages 1 and 2.
        #expect(nets.filter { $0.value.network?.friendship == true }.keys.sorted() == ["10", "11", "12", "14", "4", "5"])
    }

    @Test func friendRequestAndOffer() throws {
        let m1 = try #require(Self.layers["1"])
        #expect(
            json(m1)
                == #"{"bearer":"adv","ad_type":42,"network":{"ivi":0,"nid":104,"ctl":1,"ttl":0,"seq":1,"src":4609,"dst":65533,"iv_index":305419896,"mic":"ok"},"lower_transport":{"seg":0,"opcode":3,"opcode_name":"Friend Request"},"control":{"opcode":3,"name":"Friend Request","criteria":75,"rssi_factor":2,"receive_window_factor":1,"min_queue_size_log":3,"receive_delay":80,"poll_timeout":360000,"previous_address":0,"num_elements":1,"lpn_counter":0}}"#
        )
        #expect(m1.summary == "Mesh Friend Request 0x1201→0xfffd ttl=0 seq=1")
        let m2 = try #require(Self.layers["2"]?.control)
        #expect(json(m2) == #"{"opcode":4,"name":"Friend Offer","receive_window":50,"queue_size":3,"subscription_list_size":8,"rssi":-70,"friend_counter":1839}"#)
        let m5 = try #require(Self.layers["5"]?.control)
        #expect(json(m5) == #"{"opcode":2,"name":"Friend Update","flags":0,"key_refresh":false,"iv_update":false,"iv_index":305419896,"md":0}"#)
        #expect(Self.layers["4"]?.summary == "Mesh Friend Poll fsn=0 0x1201→0x2345 ttl=0 seq=2")
        #expect(Self.layers["10"]?.control?.parameters == [0x01])
    }

    /// Message 6: Config AppKey Add in two segments under the DevKey of 0x1201; message 7
    /// acknowledges it; message 8 repeats segment 0.
    @Test func segmentedAppKeyAdd() throws {
        let s0 = try #require(Self.layers["6.0"]), s1 = try #require(Self.layers["6.1"])
        #expect(s0.access == nil && s0.segmentsHeld! == (1, 2))
        #expect(s0.summary == "Mesh segment 0/1 seq_zero=2475 0x0003→0x1201 ttl=4 seq=3221931 [reassembling]")
        #expect(s1.segmentsHeld! == (2, 2))
        let a = try #require(s1.access)
        #expect(a.opcode.rawValue == 0x00 && a.opcode.name == "Config AppKey Add")
        #expect(s1.upper?.mic == "ok" && s1.upper?.key == "dev 0x1201" && s1.upper?.seqAuth == 0x3129AB)
        // The AppKey is a secret: hidden unless asked.
        #expect(json(a) == #"{"opcode":0,"name":"Config AppKey Add","net_key_index":1110,"app_key_index":291,"app_key":"(hidden; --mesh-keys-shown to print)"}"#)
        var shown = a
        shown.showKeys = true
        #expect(json(shown).contains(#""app_key":"63964771734fbd76e3b40519d1d94a48""#))
        let m7 = try #require(Self.layers["7"])
        #expect(json(try #require(m7.lower)) == #"{"seg":0,"opcode":0,"opcode_name":"Segment Acknowledgment","obo":1,"seq_zero":2475,"block_ack":2}"#)
        #expect(Self.layers["8"]?.upper?.encrypted == "segment of a message already reassembled")
    }

    /// Message 16: Config AppKey Status from the node; 18-20: Health Current Status; 21-24
    /// vendor messages to a group and to virtual addresses (labels).
    @Test func accessMessages() throws {
        let m16 = try #require(Self.layers["16"])
        #expect(json(try #require(m16.access)) == #"{"opcode":32771,"name":"Config AppKey Status","status":0,"status_name":"Success","net_key_index":1110,"app_key_index":291}"#)
        #expect(m16.upper?.key == "dev 0x1201")
        let m19 = try #require(Self.layers["19"])
        #expect(json(try #require(m19.access)) == #"{"opcode":4,"name":"Health Current Status","test_id":0,"company_id":0,"fault_array":"010703"}"#)
        #expect(m19.summary == "Mesh Health Current Status test_id=0 company_id=0 0x1201→0xffff ttl=3 seq=9")
        #expect(Self.layers["18"]?.access?.parameters == [0, 0, 0, 0])
        #expect(Self.layers["20"]?.network?.ivIndex == 0x12345677)
        for (n, word) in [("21", "48656c6c6f"), ("22", "48656c6c6f"), ("23", "48656c6c6f"), ("24.1", "576f726c64")] {
            let a = try #require(Self.layers[n]?.access, "message \(n)")
            #expect(a.opcode.size == 3 && a.opcode.companyID == 0x000A, "message \(n)")
            #expect(a.parameters == Hex.parse(word)!, "message \(n)")
        }
        #expect(Self.layers["22"]?.upper?.label == Hex.parse(MeshSample.labels[0]))
        #expect(Self.layers["24.1"]?.upper?.label == Hex.parse(MeshSample.labels[1]))
        #expect(Self.layers["24.1"]?.upper?.segments == 2)
    }

    @Test func secureNetworkBeaconAuthenticates() throws {
        let b = try #require(Self.layers["beacon"])
        #expect(json(try #require(b.beacon)) == #"{"type":1,"name":"Secure Network","flags":0,"key_refresh":false,"iv_update":false,"network_id":"3ecaff672f673370","iv_index":305419896,"authentication_value":"8ea261582f364f6f","auth":"ok"}"#)
        #expect(b.summary == "Mesh Secure Network beacon net=3ecaff672f673370 iv_index=305419896 auth ok")
    }

    /// Without keys nothing opens and the reason is given; with a wrong AppKey the
    /// TransMIC is reported bad.
    @Test func whyItStaysEncrypted() throws {
        let none = MeshSample.decodeAll(keys: nil)
        #expect(none["18"]?.encrypted == "no --mesh-keys" && none["18"]?.network == nil)
        #expect(none["18"]?.summary == "Mesh Network PDU nid=0x68 [no --mesh-keys]")
        #expect(none["beacon"]?.beacon.map { json($0) }?.contains(#""auth":"no NetKey for this Network ID""#) == true)
        let noApp = try MeshKeys.decode(Array(#"{"iv_index": "12345678", "net_keys": ["\#(MeshSample.netKey)"]}"#.utf8))
        let l = MeshSample.decodeAll(keys: noApp)
        #expect(l["18"]?.netMIC == "ok" && l["18"]?.upper?.encrypted == "no AppKey with AID 0x26")
        #expect(l["16"]?.upper?.encrypted == "no DevKey of 0x1201 or 0x0003")
        #expect(l["22"]?.upper?.encrypted == "no AppKey with AID 0x26")
        let wrongNet = try MeshKeys.decode(Array(#"{"iv_index": "1234567a", "net_keys": ["\#(MeshSample.netKey)"]}"#.utf8))
        #expect(MeshSample.decodeAll(keys: wrongNet)["18"]?.netMIC == "bad")
    }
}

/// §8.7: the provisioning data of the sample session decrypted with the session's ECDH
/// secret, or with the provisioner's or the device's private key; the IV index and the new
/// node's DevKey are learnt from it.
/// The captures are Tests/Fixtures/mesh (scripts/mesh_fixtures.py).
@Suite struct MeshProvisioningDataTests {
    static let ecdh = "ab85843a2f6d883f62e5684b38e307335fe6e1945ecd19604105c6f23221eb69"
    static let provisionerPrivate = "06a516693c9aa31a6084545d0c5db641b48572b97203ddffb7ac73f7d0457663"
    static let devicePrivate = "529aa0670d72cd6497502ed473502b037e8803b5c60829a5a3caa219505530ba"

    static func run(_ secret: String?, file: String = "mesh_sample_adv.btsnoop") -> (MeshLayer?, MeshDecoder) {
        var d = MeshDecoder()
        if let secret { d.provisioningSecrets = [Hex.parse(secret)!] }
        let frames = MeshTsharkOracle.bluesiftFrames(MeshTsharkOracle.fixtures.appendingPathComponent(file).path, &d)
        return (frames.values.flatMap { $0 }.first { $0.provisioning?.type == .data }, d)
    }

    @Test(arguments: [ecdh, provisionerPrivate, devicePrivate])
    func decrypted(_ secret: String) throws {
        let (l, d) = Self.run(secret)
        let data = try #require(l?.provisioningData)
        #expect(
            data
                == MeshProvisioningData(
                    netKey: Hex.parse("efb2255e6422d330088e09bb015ed707")!, keyIndex: 0x0567, flags: 0,
                    ivIndex: 0x01020304, unicastAddress: 0x0B0C))
        #expect(d.ivIndex == 0x01020304)
        #expect(l?.summary == "Mesh Provisioning Data unicast=0x0b0c iv_index=16909060")
        let j = json(try #require(l))
        #expect(j.contains(#""provisioning_data":{"key_index":1383,"flags":0,"key_refresh":false,"iv_update":false,"iv_index":16909060,"unicast_address":2828},"mic":"ok""#))
        #expect(!j.contains("efb2255e"))
    }

    @Test func overGATT() throws {
        let (l, _) = Self.run(Self.ecdh, file: "mesh_sample_gatt.btsnoop")
        #expect(l?.bearer == .gatt && l?.provisioningData?.unicastAddress == 0x0B0C)
    }

    @Test func withoutSecret() throws {
        let (l, _) = Self.run(nil)
        #expect(l?.provisioningData == nil)
        #expect(json(try #require(l)).contains(#""encrypted":"needs the session's ECDH secret or a private key""#))
        let (w, _) = Self.run("00" + String(repeating: "11", count: 31))
        #expect(w?.notes.map(\.message) == ["provisioning data: no given secret opens it"])
    }
}
