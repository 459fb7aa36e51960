import Foundation
import Testing
@testable import BluesiftSecurity

/// The key file of issue 40, on the sample keys of Mesh Protocol v1.1 §8.
@Suite struct MeshKeysTests {
    static let text = """
        {"iv_index": "12345678", "net_keys": ["7dd7364cd842ad18c17c2b820c84c3d6"],
         "app_keys": ["63964771734fbd76e3b40519d1d94a48"], "dev_keys": {"0x1201": "9d6dd0e96eb25dc19a40ed9914f8f03f"},
         "label_uuids": ["0073e7e4d8b9440faf8415df4c56c0e1", "f4a002c7fb1e4ca0a469a021de0db875"]}
        """

    @Test func decodesAndPrecomputes() throws {
        let k = try MeshKeys.decode(Array(Self.text.utf8))
        #expect(k.ivIndex == 0x12345678)
        #expect(k.credentials(nid: 0x68).count == 1)
        #expect(k.credentials(nid: 0x5E).isEmpty)
        #expect(k.appKeys(aid: 0x26).count == 1)
        #expect(k.appKeys(aid: 0x25).isEmpty)
        #expect(k.devKeys[0x1201]?.isApplicationKey == false)
        #expect(k.labels[0xB529] == [hex("0073e7e4d8b9440faf8415df4c56c0e1")])
        #expect(k.labels[0x9736] == [hex("f4a002c7fb1e4ca0a469a021de0db875")])
        #expect(k.netKey(networkID: hex("3ecaff672f673370"))?.index == 0)
        #expect(k.netKeys[0].networkID == hex("3ecaff672f673370"))
        // Message 18 through the tables: NID → credentials, AID → AppKey.
        let pdu = hex("6848cba437860e5673728a627fb938535508e21a6baf57")
        let n = try MeshNetworkSecurity.decrypt(pdu, credentials: k.credentials(nid: pdu[0] & 0x7F)[0], currentIVIndex: k.ivIndex)
        let key = k.appKeys(aid: n.transportPDU[0] & 0x3F)[0]
        #expect(
            try MeshUpperTransport.decrypt(
                Array(n.transportPDU[1...]), key: key, szmic: false, seq: n.seq, src: n.src, dst: n.dst,
                ivIndex: n.ivIndex) == hex("0400000000"))
        // Message 4 through the friendship credentials made from the NetKey.
        let f = k.netKeys[0].friendship(lpnAddress: 0x1201, friendAddress: 0x2345, lpnCounter: 0, friendCounter: 0x072F)
        #expect(f.nid == 0x5E)
        #expect(try MeshNetworkSecurity.decrypt(hex("5e84eba092380fb0e5d0ad970d579a4e88051c"), credentials: f, currentIVIndex: k.ivIndex).transportPDU == hex("0100"))
        // Beacons through the NetKey: 8.4.3 authenticates; a private beacon round-trips.
        #expect(k.netKeys[0].authenticates(try MeshSecureNetworkBeacon(decoding: hex("01003ecaff672f673370123456788ea261582f364f6f"))))
        let pb = try k.netKeys[0].privateBeacon(random: hex("435f18f85cf78a3121f58478a5"), flags: 2, ivIndex: 0x12345679)
        let back = try k.netKeys[0].decryptPrivateBeacon(pb)
        #expect(back.ivIndex == 0x12345679 && back.ivUpdate)
    }

    /// Neither the descriptions nor the mirror show a key.
    @Test func neverPrintsKeys() throws {
        let k = try MeshKeys.decode(Array(Self.text.utf8))
        var dumped = ""
        dump(k, to: &dumped)
        for s in [
            "\(k)", String(reflecting: k), dumped, "\(k.netKeys[0])", String(reflecting: k.netKeys[0]), "\(k.netKeys[0].flooding)",
            "\(k.appKeys[0])", String(reflecting: k.devKeys[0x1201]!)
        ] {
            for secret in ["7dd7364c", "63964771", "9d6dd0e9", "0953fa93", "8b84eede", "5423d967"] {
                #expect(!s.lowercased().contains(secret), "\(s)")
            }
        }
        #expect("\(k)" == "MeshKeys(iv_index: 0x12345678, 1 net keys, 1 app keys, 1 dev keys, 2 label UUIDs)")
    }

    /// Each bad member is named, its value never shown.
    @Test(arguments: [
        (#"{"net_keys": []}"#, "iv_index", "missing"),
        (#"{"iv_index": "123456789"}"#, "iv_index", "is not up to 8 hex digits"),
        (#"{"iv_index": "-1"}"#, "iv_index", "is not up to 8 hex digits"),
        (#"{"iv_index": 5}"#, "iv_index", "is not up to 8 hex digits"),
        (#"{"iv_index": "0", "net_keys": ["7dd7364cd842ad18c17c2b820c84c3"]}"#, "net_keys[0]", "is not 32 hex digits"),
        (#"{"iv_index": "0", "net_keys": ["00000000000000000000000000000000", "7dd7364cd842ad18c17c2b820c84c3dX"]}"#, "net_keys[1]", "is not 32 hex digits"),
        (#"{"iv_index": "0", "app_keys": "63964771734fbd76e3b40519d1d94a48"}"#, "app_keys", "is not an array"),
        (#"{"iv_index": "0", "dev_keys": {"1201": "9d6dd0e96eb25dc19a40ed9914f8f03f"}}"#, "dev_keys.1201", "name is not a unicast address (0x0001-0x7fff)"),
        (#"{"iv_index": "0", "dev_keys": {"0x8001": "9d6dd0e96eb25dc19a40ed9914f8f03f"}}"#, "dev_keys.0x8001", "name is not a unicast address (0x0001-0x7fff)"),
        (#"{"iv_index": "0", "dev_keys": {"0x1201": "9d6dd0e9-6eb25dc19a40ed9914f8f03f"}}"#, "dev_keys.0x1201", "is not 32 hex digits"),
        (#"{"iv_index": "0", "label_uuids": [7]}"#, "label_uuids[0]", "is not 32 hex digits"),
        (#"{"iv_index": "0", "provisioning_secrets": ["7dd7364cd842ad18c17c2b820c84c3d6"]}"#, "provisioning_secrets[0]", "is not 64 hex digits"),
        (
            #"{"iv_index": "0", "netkeys": []}"#, "netkeys",
            "unknown member (expected iv_index, net_keys, app_keys, dev_keys, label_uuids, provisioning_secrets)"
        )
    ]) func badMember(_ json: String, _ member: String, _ message: String) {
        do {
            _ = try MeshKeys.decode(Array(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.code == .member)
            #expect(error.member == member)
            #expect(error.message == message)
            #expect(!error.description.contains("7dd7364c") && !error.description.contains("9d6dd0e9"))
        }
    }

    /// Provisioning secrets (redact and decrypt Provisioning Data): 32 octets each.
    @Test func provisioningSecrets() throws {
        let k = try MeshKeys.decode(
            Array(#"{"iv_index": "0", "provisioning_secrets": ["3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd"]}"#.utf8))
        #expect(k.provisioningSecrets == [hex("3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd")])
        #expect(!"\(k)".contains("3f49") && !String(reflecting: k).contains("3f49"))
    }

    @Test func notJSON() {
        #expect(throws: MeshKeysError(code: .syntax, message: "not JSON")) { try MeshKeys.decode(Array("{".utf8)) }
        #expect(throws: MeshKeysError(code: .syntax, message: "top level is not an object")) { try MeshKeys.decode(Array("[]".utf8)) }
        #expect(throws: MeshKeysError(code: .io, message: "cannot read /nonexistent/keys.json")) { try MeshKeys.load(path: "/nonexistent/keys.json") }
    }
}
