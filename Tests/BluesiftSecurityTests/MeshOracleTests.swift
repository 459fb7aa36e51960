import Foundation
import Testing
@testable import BluesiftSecurity

/// Cross-check on random inputs against Silvair's bluetooth-mesh-network 0.9.5 (PyPI, GPL-2.0,
/// run as a separate process): scripts/mesh_oracle.py makes keys, network PDUs (access,
/// control, proxy configuration, solicitation), upper transport PDUs (with a Label UUID as
/// additional data, 32- and 64-bit TransMIC) and both beacons; each is decrypted here, every
/// field compared, and encrypted again to the package's bytes.
@Suite(.enabled(if: MeshOracle.available, MeshOracle.skipMessage))
struct MeshOracleTests {
    @Test func randomCasesAgree() throws {
        let cases = try MeshOracle.run(count: 200, seed: 40)
        #expect(cases.count == 200)
        var fields = 0, agree = 0
        func check<T: Equatable>(_ a: T, _ b: T, _ what: String, _ i: Int) {
            fields += 1
            if a == b { agree += 1 } else { Issue.record("case \(i) \(what): \(a) != \(b)") }
        }
        for (i, c) in cases.enumerated() {
            func h(_ k: String) -> [UInt8] { hex(c[k] as! String) }
            func u(_ k: String) -> UInt32 { UInt32((c[k] as! NSNumber).uint64Value) }
            let net = h("net_key"), iv = u("iv_index")
            let src = UInt16(u("src")), dst = UInt16(u("dst")), ttl = UInt8(u("ttl"))
            let k2 = MeshCrypto.k2(n: net, p: [0])
            check(k2.nid, UInt8(u("nid")), "nid", i)
            check(k2.encryptionKey, h("encryption_key"), "EncryptionKey", i)
            check(k2.privacyKey, h("privacy_key"), "PrivacyKey", i)
            check(MeshCrypto.k3(net), h("network_id"), "network ID", i)
            check(MeshCrypto.k4(h("app_key")), UInt8(u("aid")), "aid", i)
            check(MeshCrypto.beaconKey(netKey: net), h("beacon_key"), "BeaconKey", i)
            check(MeshCrypto.identityKey(netKey: net), h("identity_key"), "IdentityKey", i)
            check(MeshCrypto.privateBeaconKey(netKey: net), h("private_beacon_key"), "PrivateBeaconKey", i)
            let p = MeshCrypto.friendshipP(
                lpnAddress: UInt16(u("lpn")), friendAddress: UInt16(u("friend")),
                lpnCounter: UInt16(u("lpn_counter")), friendCounter: UInt16(u("friend_counter")))
            let f = MeshCrypto.k2(n: net, p: p)
            check(f.nid, UInt8(u("friend_nid")), "friendship nid", i)
            check(f.encryptionKey, h("friend_encryption_key"), "friendship EncryptionKey", i)
            check(f.privacyKey, h("friend_privacy_key"), "friendship PrivacyKey", i)

            let creds = MeshNetworkCredentials(netKey: net)!
            // Access message: network layer, then upper transport with the AppKey or DevKey.
            let a = try MeshNetworkSecurity.decrypt(h("access_network_pdu"), credentials: creds, currentIVIndex: iv)
            check(a.ctl, false, "ctl", i); check(a.ttl, ttl, "ttl", i); check(a.seq, u("seq"), "seq", i)
            check(a.src, src, "src", i); check(a.dst, dst, "dst", i); check(a.transportPDU, h("access_lower_pdu"), "lower PDU", i)
            check(try MeshNetworkSecurity.encrypt(a, credentials: creds), h("access_network_pdu"), "access network PDU", i)
            let useDev = (c["use_dev_key"] as! NSNumber).boolValue
            let key = useDev ? MeshAccessKey(devKey: h("dev_key"))! : MeshAccessKey(appKey: h("app_key"))!
            check(a.transportPDU[0], useDev ? 0 : 0x40 | key.aid, "akf/aid", i)
            let upper = Array(a.transportPDU[1...])
            let access = try MeshUpperTransport.decrypt(upper, key: key, szmic: false, seq: a.seq, src: src, dst: dst, ivIndex: iv)
            check(access, h("access_payload"), "access payload", i)
            check(
                try MeshUpperTransport.encrypt(accessPayload: access, key: key, szmic: false, seq: a.seq, src: src, dst: dst, ivIndex: iv),
                upper, "upper transport PDU", i)
            // Virtual destination: Label UUID as additional data, 32- and 64-bit TransMIC.
            let app = MeshAccessKey(appKey: h("app_key"))!
            let vdst = UInt16(u("virtual_dst")), vseq = u("virtual_seq"), label = h("label")
            for (szmic, name) in [(false, "virtual_upper_pdu"), (true, "virtual_upper_pdu_64")] {
                let v = try MeshUpperTransport.decrypt(h(name), key: app, szmic: szmic, seq: vseq, src: src, dst: vdst, ivIndex: iv, label: label)
                check(v, h("access_payload"), name + " payload", i)
                check(
                    try MeshUpperTransport.encrypt(accessPayload: v, key: app, szmic: szmic, seq: vseq, src: src, dst: vdst, ivIndex: iv, label: label),
                    h(name), name, i)
            }
            // Control message: 64-bit NetMIC.
            let ctl = try MeshNetworkSecurity.decrypt(h("control_network_pdu"), credentials: creds, currentIVIndex: iv)
            check(ctl.ctl, true, "control ctl", i); check(ctl.seq, u("control_seq"), "control seq", i)
            check(ctl.src, src, "control src", i); check(ctl.dst, dst, "control dst", i); check(ctl.ttl, ttl, "control ttl", i)
            check(ctl.transportPDU, h("control_lower_pdu"), "control lower PDU", i)
            check(try MeshNetworkSecurity.encrypt(ctl, credentials: creds), h("control_network_pdu"), "control network PDU", i)
            // Proxy configuration message: proxy nonce.
            let px = try MeshNetworkSecurity.decrypt(h("proxy_network_pdu"), credentials: creds, currentIVIndex: iv, nonce: .proxy)
            check(px.ctl, true, "proxy ctl", i); check(px.ttl, 0, "proxy ttl", i); check(px.seq, u("proxy_seq"), "proxy seq", i)
            check(px.src, src, "proxy src", i); check(px.dst, 0, "proxy dst", i)
            check(px.transportPDU, h("proxy_lower_pdu"), "proxy lower PDU", i)
            check(try MeshNetworkSecurity.encrypt(px, credentials: creds, nonce: .proxy), h("proxy_network_pdu"), "proxy network PDU", i)
            // Solicitation PDU: proxy solicitation nonce, IV index 0, empty transport PDU.
            let so = try MeshNetworkSecurity.decrypt(h("solicitation_network_pdu"), credentials: creds, currentIVIndex: 0, nonce: .proxySolicitation)
            check(so.seq, u("solicitation_seq"), "solicitation seq", i); check(so.src, src, "solicitation src", i)
            check(so.dst, 0, "solicitation dst", i); check(so.transportPDU, [], "solicitation transport PDU", i)
            check(try MeshNetworkSecurity.encrypt(so, credentials: creds, nonce: .proxySolicitation), h("solicitation_network_pdu"), "solicitation PDU", i)
            // Beacons.
            let flags = UInt8(u("flags"))
            let sb = try MeshSecureNetworkBeacon(decoding: h("secure_beacon"))
            check(sb.flags, flags, "beacon flags", i); check(sb.ivIndex, iv, "beacon IV index", i)
            check(sb.authenticates(beaconKey: MeshCrypto.beaconKey(netKey: net)), true, "beacon authentication", i)
            check(
                MeshSecureNetworkBeacon(flags: flags, networkID: MeshCrypto.k3(net), ivIndex: iv, beaconKey: MeshCrypto.beaconKey(netKey: net)).encode(),
                h("secure_beacon"), "secure network beacon", i)
            let pbk = MeshCrypto.privateBeaconKey(netKey: net)
            let pb = try MeshPrivateBeacon(decrypting: h("private_beacon"), privateBeaconKey: pbk)
            check(pb.flags, flags, "private beacon flags", i); check(pb.ivIndex, iv, "private beacon IV index", i)
            check(try pb.encrypt(privateBeaconKey: pbk), h("private_beacon"), "private beacon", i)
        }
        print("mesh oracle: \(cases.count) cases, \(fields) fields, \(agree) agree")
        #expect(fields == 200 * 51)
        #expect(agree == fields)
    }
}

enum MeshOracle {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent(".venv-mesh/bin/python").path
    static let script = root.appendingPathComponent("scripts/mesh_oracle.py").path
    static let skipMessage: Comment = "needs .venv-mesh with bluetooth-mesh-network (make mesh-venv)"

    static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", "import bluetooth_mesh.network.mesh"]
        p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    static func run(count: Int, seed: Int) throws -> [[String: Any]] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script, String(count), String(seed)]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}
