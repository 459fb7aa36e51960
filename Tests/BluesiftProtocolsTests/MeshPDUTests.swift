import Testing
import BluesiftSecurity
import BluesiftWire
@testable import BluesiftProtocols

private func mhx(_ s: String) -> [UInt8] { Hex.parse(s)! }

/// Each mesh PDU type decodes to its fields and encodes back to the same octets.
@Suite struct MeshPDUTests {
    /// The sample data's lower transport PDUs (Mesh Protocol v1.1 §8.3).
    @Test(arguments: [
        ("034b50057e400000010000", true), ("04320308ba072f", true), ("0100", true), ("00a6ac00000002", true),
        ("8026ac01ee9dddfd2169326d23f3afdf", false), ("8026ac21cfdc18c52fdef772e0e17308", false),
        ("c026ac01ee9dddfd2169326d23f3afdf", false), ("665a8bde6d9106ea078a", false), ("e6a034211c01cea6", false)
    ])
    func lowerTransportRoundTrip(_ c: (String, Bool)) throws {
        let b = mhx(c.0)
        let l = try MeshLowerTransportPDU(decoding: b, ctl: c.1)
        #expect(l.encode() == b)
    }

    @Test func lowerTransportFields() throws {
        let s = try MeshLowerTransportPDU(decoding: mhx("8026ac21cfdc18c52fdef772e0e17308"), ctl: false)
        #expect(s == .segmentedAccess(akf: false, aid: 0, szmic: false, seqZero: 0x9AB, segO: 1, segN: 1, segment: mhx("cfdc18c52fdef772e0e17308")))
        let v = try MeshLowerTransportPDU(decoding: mhx("e6a034211c01cea6"), ctl: false)
        #expect(v == .segmentedAccess(akf: true, aid: 0x26, szmic: true, seqZero: 0x080D, segO: 1, segN: 1, segment: mhx("1c01cea6")))
        let c = MeshLowerTransportPDU.segmentedControl(opcode: .friendSubscriptionListAdd, seqZero: 0x1FFF, segO: 31, segN: 31, segment: [1, 2])
        #expect(try MeshLowerTransportPDU(decoding: c.encode(), ctl: true) == c)
        #expect(MeshLowerTransportPDU.seqAuth(seq: 0x3129AD, seqZero: 0x9AB) == 0x3129AB)
        #expect(MeshLowerTransportPDU.seqAuth(seq: 0x002001, seqZero: 0x1FFF) == 0x001FFF)
        // SegO after SegN: a typed error, not a trap.
        #expect(throws: DecodeError.self) { try MeshLowerTransportPDU(decoding: mhx("8026ac41ee"), ctl: false) }
    }

    /// 8.7 PB-ADV provisioning sample: every provisioning PDU and its generic provisioning
    /// and PB-ADV framing.
    @Test func provisioningPDUs() throws {
        let invite = try MeshProvisioningPDU(decoding: mhx("0000"))
        #expect(json(invite) == #"{"type":0,"name":"Provisioning Invite","attention_duration":0}"#)
        let caps = try MeshProvisioningPDU(decoding: mhx("010100010000000000000000"))
        #expect(json(caps) == #"{"type":1,"name":"Provisioning Capabilities","number_of_elements":1,"algorithms":1,"public_key_type":0,"oob_type":0,"output_oob_size":0,"output_oob_action":0,"input_oob_size":0,"input_oob_action":0}"#)
        #expect(caps.summary == "Mesh Provisioning Capabilities elements=1")
        let failed = try MeshProvisioningPDU(decoding: mhx("0904"))
        #expect(json(failed) == #"{"type":9,"name":"Provisioning Failed","error_code":4,"error_name":"Confirmation Failed"}"#)
        #expect(failed.summary == "Mesh Provisioning Failed error=Confirmation Failed")
        for h in [
            "0000", "010100010000000000000000", "020000000000", "04", "05" + String(repeating: "ab", count: 16), "06" + String(repeating: "cd", count: 32),
            "07" + String(repeating: "11", count: 33), "08", "0901", "0a000100020003", "0d00010002", "3f01"
        ] {
            #expect(try MeshProvisioningPDU(decoding: mhx(h)).encode() == mhx(h), "\(h)")
        }
        #expect(throws: DecodeError.self) { try MeshProvisioningPDU(decoding: mhx("0100")) }
        #expect(throws: DecodeError.self) { try MeshProvisioningPDU(decoding: mhx("4000")) }
        #expect(MeshProvisioningError(rawValue: 0x42).name == "Unknown")
    }

    @Test func genericProvisioningAndPBADV() throws {
        // Link Open with a device UUID; Link ACK; Link Close (Fail); transaction start and ack.
        let open = try MeshPBADVPDU(decoding: mhx("ea57a6c1000370cfa5e8c3bd4fb5a4d8f3c8e06f9b24"))
        #expect(open.linkID == 0xEA57A6C1 && open.transactionNumber == 0)
        #expect(open.pdu == .linkOpen(deviceUUID: mhx("70cfa5e8c3bd4fb5a4d8f3c8e06f9b24")))
        #expect(json(open) == #"{"link_id":3931612865,"transaction_number":0,"gpcf":3,"name":"Link Open","bearer_opcode":0,"device_uuid":"70cfa5e8c3bd4fb5a4d8f3c8e06f9b24"}"#)
        let close = try MeshPBADVPDU(decoding: mhx("ea57a6c1000b02"))
        #expect(close.pdu == .linkClose(reason: .fail))
        #expect(json(close).hasSuffix(#""gpcf":3,"name":"Link Close","bearer_opcode":2,"reason":2,"reason_name":"Fail"}"#))
        let start = MeshGenericProvisioningPDU.transactionStart(segN: 2, totalLength: 65, fcs: 0x11, data: [3, 1, 2])
        let cont = MeshGenericProvisioningPDU.transactionContinuation(segmentIndex: 2, data: [9])
        for p in [start, cont, .transactionAck, .linkAck, .linkClose(reason: .success), .bearerControl(opcode: MeshBearerOpcode(rawValue: 9), parameters: [1])] {
            #expect(try MeshGenericProvisioningPDU(decoding: p.encode()) == p)
            let a = MeshPBADVPDU(linkID: 7, transactionNumber: 0x80, pdu: p)
            #expect(try MeshPBADVPDU(decoding: a.encode()) == a)
        }
        #expect(throws: DecodeError.self) { try MeshPBADVPDU(decoding: mhx("0000000100")) }
        #expect(throws: DecodeError.self) { try MeshGenericProvisioningPDU(decoding: mhx("03aa")) }
    }

    /// FCS of 3GPP TS 27.010 over the provisioning PDU (the Invite of the sample, 0x00 0x00).
    @Test func fcs() {
        #expect(MeshFCS.compute([0x00, 0x00]) == 0x14)
        #expect(MeshFCS.compute(mhx("0100010000000000000000")) != MeshFCS.compute(mhx("0100010000000000000001")))
    }

    @Test func beaconsRoundTrip() throws {
        let u = try MeshBeacon(decoding: mhx("0070cfa5e8c3bd4fb5a4d8f3c8e06f9b244020d97478b3"))
        guard case .unprovisioned(let ub) = u else { Issue.record("not unprovisioned"); return }
        #expect(ub.oobInformation == 0x4020 && ub.uriHash == 0xD97478B3)
        #expect(MeshUnprovisionedBeacon.oobNames(0x4020) == ["Number", "Inside manual"])
        #expect(json(u) == #"{"type":0,"name":"Unprovisioned Device","device_uuid":"70cfa5e8c3bd4fb5a4d8f3c8e06f9b24","oob_information":16416,"oob_names":["Number","Inside manual"],"uri_hash":3648288947}"#)
        for h in [
            "0070cfa5e8c3bd4fb5a4d8f3c8e06f9b244020d97478b3", "0070cfa5e8c3bd4fb5a4d8f3c8e06f9b244020",
            "01003ecaff672f673370123456788ea261582f364f6f", "02" + String(repeating: "5a", count: 26), "0399"
        ] {
            #expect(try MeshBeacon(decoding: mhx(h)).encode() == mhx(h))
        }
        #expect(throws: DecodeError.self) { try MeshBeacon(decoding: mhx("0100")) }
    }

    /// Mesh Protocol v1.1 §8.4.6: private beacons decrypt with the PrivateBeaconKey of the
    /// sample NetKey (8.4.6.1, IV update in progress).
    @Test func privateBeaconDecrypts() throws {
        let keys = try MeshKeys.decode(Array(#"{"iv_index": "1010abcd", "net_keys": ["f7a2a44f8e8a8029064f173ddc1e2b00"]}"#.utf8))
        var d = MeshDecoder(keys: keys)
        let l = d.decodeAdvertising(adType: 0x2B, data: mhx("02435f18f85cf78a3121f58478a561e488e7cbf3174f022a514741"))
        let b = try #require(l.beacon)
        #expect(json(b) == #"{"type":2,"name":"Mesh Private","random":"435f18f85cf78a3121f58478a5","flags":2,"key_refresh":false,"iv_update":true,"iv_index":269528013,"auth":"ok","authentication_tag":"f3174f022a514741"}"#)
        #expect(d.ivIndex == 0x1010ABCD)
    }

    @Test func proxyPDUsAndConfiguration() throws {
        for h in ["00aabb", "41cc", "82dd", "c3ee", "3f"] {
            #expect(try MeshProxyPDU(decoding: mhx(h)).encode() == mhx(h))
        }
        let f = try MeshProxyConfigMessage(decoding: mhx("0000"))
        #expect(json(f) == #"{"opcode":0,"name":"Set Filter Type","filter_type":0,"filter_type_name":"accept list"}"#)
        let add = try MeshProxyConfigMessage(decoding: mhx("010001c105"))
        #expect(json(add) == #"{"opcode":1,"name":"Add Addresses to Filter","address_list":[1,49413]}"#)
        #expect(add.encode() == mhx("010001c105"))
    }

    /// Proxy SAR (§6.3.2): a beacon split over three proxy PDUs is joined; a continuation
    /// without a first segment is a note.
    @Test func proxySegmentation() throws {
        var d = MeshDecoder(keys: MeshSample.keys)
        let beacon = mhx("01003ecaff672f673370123456788ea261582f364f6f")
        let a = d.decodeProxy([0x41] + beacon[0..<8], stream: 1)
        #expect(a.proxyReassembling && a.beacon == nil)
        #expect(a.summary == "Mesh Proxy Mesh Beacon segment (First Segment)")
        let b = d.decodeProxy([0x81] + beacon[8..<16], stream: 1)
        #expect(b.proxyReassembling)
        let other = d.decodeProxy([0x81] + beacon[8..<16], stream: 2)
        #expect(other.notes.map(\.message) == ["Continuation Segment without a first segment"])
        let c = d.decodeProxy([0xC1] + beacon[16...], stream: 1)
        #expect(!c.proxyReassembling)
        guard case .secureNetwork(_, _, _, _, let ok)? = c.beacon else { Issue.record("no beacon"); return }
        #expect(ok == true)
        // A network PDU in one proxy PDU (message 18).
        let n = d.decodeProxy([0x00] + mhx("6848cba437860e5673728a627fb938535508e21a6baf57"), stream: 1)
        #expect(n.bearer == .gatt && n.access?.opcode.name == "Health Current Status")
    }

    @Test func serviceData() throws {
        let p = try MeshServiceData(uuid: 0x1827, data: mhx("70cfa5e8c3bd4fb5a4d8f3c8e06f9b240000"))
        #expect(json(p) == #"{"uuid":6183,"device_uuid":"70cfa5e8c3bd4fb5a4d8f3c8e06f9b24","oob_information":0}"#)
        var d = MeshDecoder(keys: MeshSample.keys)
        let n = d.decodeServiceData(uuid: 0x1828, data: mhx("003ecaff672f673370"))
        #expect(json(try #require(n.serviceData)) == #"{"uuid":6184,"identification_type":0,"identification_name":"Network ID","network_id":"3ecaff672f673370","network_known":true}"#)
        // 8.6.2: Node Identity service data.
        let i = try MeshServiceData(uuid: 0x1828, data: mhx("0100861765aefcc57b34ae608fbbc1f2c6"))
        #expect(i == .identity(type: 1, hash: mhx("00861765aefcc57b"), random: mhx("34ae608fbbc1f2c6")))
        for s in [p, i] { #expect(try MeshServiceData(uuid: s == p ? 0x1827 : 0x1828, data: s.encode()) == s) }
    }

    /// Access messages: opcodes of 1, 2 and 3 octets, catalogued fields, and the inverse.
    @Test func accessMessagesRoundTrip() throws {
        let cases: [(String, String)] = [
            ("82020100", #"{"opcode":33282,"name":"Generic OnOff Set","onoff":1,"tid":0}"#),
            ("8202010a1e05", #"{"opcode":33282,"name":"Generic OnOff Set","onoff":1,"tid":10,"transition_time":30,"delay":5}"#),
            ("820400", #"{"opcode":33284,"name":"Generic OnOff Status","present_onoff":0}"#),
            ("8206008007", #"{"opcode":33286,"name":"Generic Level Set","level":-32768,"tid":7}"#),
            ("82246410270000000002", #"{"opcode":33316,"name":"Generic Battery Status","battery_level":100,"time_to_discharge":10000,"time_to_charge":0,"flags":2}"#),
            ("803d0500010000100", ""),
            ("803e00050001000010", #"{"opcode":32830,"name":"Config Model App Status","status":0,"status_name":"Success","element_address":5,"app_key_index":1,"model_id":4096}"#),
            ("801b050001c0e50f0100", #"{"opcode":32795,"name":"Config Model Subscription Add","element_address":5,"address":49153,"company_id":4069,"model_id":1}"#),
            (
                "0305000cc0010005550200" + "10",
                #"{"opcode":3,"name":"Config Model Publication Set","element_address":5,"publish_address":49164,"app_key_index":1,"credential_flag":0,"rfu":0,"publish_ttl":5,"publish_period":85,"publish_retransmit_count":2,"publish_retransmit_interval_steps":0,"model_id":4096}"#
            ),
            ("8043010020", #"{"opcode":32835,"name":"Config NetKey List","net_key_indexes":[512,1]}"#),
            ("824c3412aa", #"{"opcode":33356,"name":"Light Lightness Set","lightness":4660,"tid":170}"#),
            ("8049", #"{"opcode":32841,"name":"Config Node Reset"}"#),
            ("5d0000000000", #"{"opcode":93,"name":"Time Status","tai_seconds":0}"#),
            ("d50a0048656c6c6f", #"{"opcode":13961728,"name":"Vendor","company_id":10,"company_name":"Qualcomm Technologies International, Ltd. (QTIL)","parameters":"48656c6c6f"}"#)
        ]
        for (h, expected) in cases where !expected.isEmpty {
            let m = try MeshAccessMessage(decoding: mhx(h))
            #expect(m.encode() == mhx(h))
            #expect(json(m) == expected, "\(h)")
            if let f = try m.fields() { #expect(MeshAccessMessage.encode(opcode: m.opcode, fields: f) == mhx(h), "\(h)") }
        }
        // A short message is a note with its parameters, never a trap.
        let short = try MeshAccessMessage(decoding: mhx("8206ff"))
        #expect(json(short) == #"{"opcode":33286,"name":"Generic Level Set","parameters":"ff","error":"level: 1 octets left, needs 2"}"#)
        #expect(throws: DecodeError.self) { try MeshAccessMessage(decoding: mhx("7f")) }
        #expect(throws: DecodeError.self) { try MeshAccessMessage(decoding: mhx("c0")) }
    }

    /// Composition Data page 0 (§4.2.2.1), element by element.
    @Test func compositionData() throws {
        let m = try MeshAccessMessage(
            decoding: mhx(
                "02" + "00" + "5900" + "0100" + "0200" + "0a00" + "0300" + "0000" + "0200" + "0000" + "0010"
                    + "0100" + "0001" + "5900" + "3412"))
        #expect(
            json(m)
                == #"{"opcode":2,"name":"Config Composition Data Status","page":0,"cid":89,"company_name":"Nordic Semiconductor ASA","pid":1,"vid":2,"crpl":10,"features":3,"feature_names":["relay","proxy"],"elements":[{"loc":0,"sig_models":[{"model_id":0,"name":"Configuration Server"},{"model_id":4096,"name":"Generic OnOff Server"}],"vendor_models":[]},{"loc":1,"sig_models":[],"vendor_models":[{"company_id":89,"model_id":4660}]}]}"#
        )
    }

    /// Every truncation of every sample message: a result or notes, never a trap.
    @Test func truncationsNeverTrap() {
        var d = MeshDecoder(keys: MeshSample.keys)
        for (_, h) in MeshSample.messages {
            let b = mhx(h)
            for n in 0...b.count {
                for t: UInt8 in [0x29, 0x2A, 0x2B] { _ = d.decodeAdvertising(adType: t, data: Array(b[0..<n])) }
                _ = d.decodeProxy(Array(b[0..<n]), stream: n % 3)
            }
        }
        for t: UInt32 in MeshAccessCatalog.entries.keys.sorted() {
            let op = MeshOpcode(rawValue: t).encode()
            for n in 0..<12 { _ = json(MeshAccessMessage(opcode: MeshOpcode(rawValue: t), parameters: [UInt8](repeating: 0xA5, count: n))); _ = op }
        }
    }
}
