import Foundation
import Testing
import BluesiftSecurity

/// `bluesift redact` of Bluetooth Mesh key material (issue 40): the NetKey of a Provisioning
/// Data PDU and the keys of Config AppKey Add and Config NetKey Add (DevKey-encrypted,
/// segmented) zeroed and sealed again, so the redacted capture decodes with the same
/// --mesh-keys, MICs valid. A capture made here from bytes: a PB-ADV provisioning session
/// whose provisioner's private key is given, then configuration over the advertising bearer.
@Suite struct MeshRedactTests {
    static func hex(_ s: String) -> [UInt8] {
        let u = Array(s.utf8)
        return stride(from: 0, to: u.count, by: 2).map { UInt8(String(decoding: u[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
    static func text(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    // Mesh Protocol sample data's NetKey and AppKey; the keys sent in configuration messages.
    static let netKey = hex("7dd7364cd842ad18c17c2b820c84c3d6"), appKey = hex("63964771734fbd76e3b40519d1d94a48")
    static let sentAppKey = hex("a1a2a3a4a5a6a7a8a9aaabacadaeafb0"), sentNetKey = hex("5152535455565758595a5b5c5d5e5f60")
    // P-256 private keys of the Core specification's sample data (Vol 3 Part H §2.3.5.6.1).
    static let provisionerKey = hex("3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd")
    static let deviceKey = hex("55188b3d32f6bb9a900afcfbeed4e72a59cb9ac2f19d7cfb6b4fdd49f47fc5fd")
    static let node: UInt16 = 0x0005, provisioner: UInt16 = 0x0001
    static let link: UInt32 = 0x0102_0304

    /// FCS of a Generic Provisioning transaction (§5.3.1.2: CRC-8, polynomial x^8+x^2+x+1, reversed).
    static func fcs(_ b: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0xFF
        for x in b {
            crc ^= x
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xE0 : crc >> 1 }
        }
        return 0xFF &- crc
    }

    /// An HCI LE Advertising Report (H4) holding one AD structure.
    static func report(_ adType: UInt8, _ value: [UInt8]) -> [UInt8] {
        let ad = [UInt8(value.count + 1), adType] + value
        let r: [UInt8] = [0x01, 0x03, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xC6, UInt8(ad.count)] + ad + [0xC4]
        return [0x04, 0x3E, UInt8(r.count + 1), 0x02] + r
    }

    /// The PB-ADV records of one transaction (§5.2.1, §5.3.1): Start with 20 octets, then
    /// continuations of 23.
    static func transaction(_ number: UInt8, _ pdu: [UInt8]) -> [[UInt8]] {
        let head = Array(pdu.prefix(20))
        var rest = Array(pdu.dropFirst(20)), conts: [[UInt8]] = []
        while !rest.isEmpty { conts.append(Array(rest.prefix(23))); rest = Array(rest.dropFirst(23)) }
        let id: [UInt8] = [0x01, 0x02, 0x03, 0x04, number]
        var out = [report(0x29, id + [UInt8(conts.count) << 2, 0, UInt8(pdu.count), fcs(pdu)] + head)]
        for (i, c) in conts.enumerated() { out.append(report(0x29, id + [UInt8(i + 1) << 2 | 0x02] + c)) }
        return out
    }

    struct Built { var records: [[UInt8]], devKey: [UInt8], keyFrames: [Int] }

    /// A provisioning session between the two fixed key pairs: the PDUs' parameters, the
    /// encrypted Provisioning Data (the NetKey, `node`) and the DevKey both ends derive.
    struct Provisioning {
        var invite: [UInt8] = [0x05], caps: [UInt8] = [0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        var start: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x00]
        var pubP: [UInt8] = [], pubD: [UInt8] = []
        var randP = [UInt8](repeating: 0x11, count: 16), randD = [UInt8](repeating: 0x22, count: 16)
        var data: [UInt8] = [], devKey: [UInt8] = []

        static func make() throws -> Provisioning {
            var v = Provisioning()
            let p = try SMPKeyPair(privateKey: provisionerKey), d = try SMPKeyPair(privateKey: deviceKey)
            v.pubP = p.x + p.y
            v.pubD = d.x + d.y
            let ecdh = try p.dhKey(peerX: d.x, peerY: d.y)
            let salt = MeshProvisioningSecurity.confirmationSalt(
                inputs: MeshProvisioningSecurity.confirmationInputs(
                    invite: v.invite, capabilities: v.caps, start: v.start, provisionerPublicKey: v.pubP, devicePublicKey: v.pubD),
                algorithm: .cmacAES128)
            let provSalt = MeshProvisioningSecurity.provisioningSalt(confirmationSalt: salt, randomProvisioner: v.randP, randomDevice: v.randD)
            v.data = try MeshProvisioningSecurity.encryptData(
                MeshProvisioningData(netKey: netKey, keyIndex: 0, flags: 0, ivIndex: 0, unicastAddress: node),
                sessionKey: MeshProvisioningSecurity.sessionKey(ecdhSecret: ecdh, provisioningSalt: provSalt),
                sessionNonce: MeshProvisioningSecurity.sessionNonce(ecdhSecret: ecdh, provisioningSalt: provSalt))
            v.devKey = MeshProvisioningSecurity.deviceKey(ecdhSecret: ecdh, provisioningSalt: provSalt)
            return v
        }
    }

    /// The capture: provisioning (the Data transaction heard twice), Config AppKey Add (its
    /// last segment heard twice), Config NetKey Add, a Generic OnOff Set with the AppKey.
    static func build() throws -> Built {
        let v = try Provisioning.make()
        let (invite, caps, start, pubP, pubD, randP, randD, data, devKey) = (v.invite, v.caps, v.start, v.pubP, v.pubD, v.randP, v.randD, v.data, v.devKey)
        var r: [[UInt8]] = []
        r += transaction(0x00, [0x00] + invite)
        r += transaction(0x80, [0x01] + caps)
        r += transaction(0x01, [0x02] + start)
        r += transaction(0x02, [0x03] + pubP)
        r += transaction(0x81, [0x03] + pubD)
        r += transaction(0x03, [0x06] + randP)
        r += transaction(0x82, [0x06] + randD)
        let dataRecords = transaction(0x04, [0x07] + data)
        r += dataRecords + dataRecords
        r += transaction(0x83, [0x08])

        let c = MeshNetworkCredentials(netKey: netKey)!
        let dk = MeshAccessKey(devKey: devKey)!, ak = MeshAccessKey(appKey: appKey)!
        var seq: UInt32 = 0x10
        var keyFrames: [Int] = []
        func network(_ transport: [UInt8], seq s: UInt32) throws -> [UInt8] {
            let pdu = MeshNetworkPDU(nid: c.nid, ctl: false, ttl: 5, seq: s, src: provisioner, dst: node, transportPDU: transport, ivIndex: 0)
            return report(0x2A, try MeshNetworkSecurity.encrypt(pdu, credentials: c))
        }
        // A DevKey message in segments of 12 (§3.5.2.3), SZMIC 0; `repeatLast` hears the last
        // segment again with the next SEQ.
        func segmented(_ access: [UInt8], repeatLast: Bool) throws {
            let seqAuth = seq
            let upper = try MeshUpperTransport.encrypt(
                accessPayload: access, key: dk, szmic: false, seq: seqAuth, src: provisioner, dst: node, ivIndex: 0)
            let n = (upper.count + 11) / 12
            let zero = seqAuth & 0x1FFF
            var segments = Array(0..<n)
            if repeatLast { segments.append(n - 1) }
            for o in segments {
                let header: [UInt8] = [0x80, UInt8(zero >> 6), UInt8(zero & 0x3F) << 2 | UInt8(o >> 3), UInt8(o & 7) << 5 | UInt8(n - 1)]
                r.append(try network(header + upper[(o * 12)..<min(o * 12 + 12, upper.count)], seq: seq))
                keyFrames.append(r.count)
                seq += 1
            }
        }
        try segmented([0x00, 0x00, 0x00, 0x00] + sentAppKey, repeatLast: true) // Config AppKey Add, indexes 0/0
        try segmented([0x80, 0x40, 0x01, 0x00] + sentNetKey, repeatLast: false) // Config NetKey Add, index 1
        let onoff = try MeshUpperTransport.encrypt(
            accessPayload: [0x82, 0x02, 0x01, 0x07], key: ak, szmic: false, seq: seq, src: provisioner, dst: node, ivIndex: 0)
        r.append(try network([0x40 | ak.aid] + onoff, seq: seq))
        return Built(records: r, devKey: devKey, keyFrames: keyFrames)
    }

    /// btsnoop (datalink 1002, H4), every record received.
    static func btsnoop(_ packets: [[UInt8]]) -> [UInt8] {
        var out = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        for (i, p) in packets.enumerated() {
            let ts: UInt64 = 0x00DC_DDB3_0F2F_8000 + 1_764_115_200_000_000 + UInt64(i) * 1000
            out += be32(UInt32(p.count)) + be32(UInt32(p.count)) + be32(3) + be32(0)
            out += be32(UInt32(ts >> 32)) + be32(UInt32(ts & 0xFFFF_FFFF)) + p
        }
        return out
    }

    /// The records of a btsnoop file.
    static func records(_ b: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = [], o = 16
        while o + 24 <= b.count {
            let n = Int(b[o + 4]) << 24 | Int(b[o + 5]) << 16 | Int(b[o + 6]) << 8 | Int(b[o + 7])
            out.append(Array(b[(o + 24)..<(o + 24 + n)]))
            o += 24 + n
        }
        return out
    }

    /// The value of the one AD structure of a record made by `report`.
    static func adValue(_ record: [UInt8]) -> [UInt8] { Array(record[16..<(record.count - 1)]) }

    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mesh-redact-\(UUID().uuidString)-\(name)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func keyFile(provisioning: Bool) throws -> String {
        let secrets = provisioning ? #", "provisioning_secrets": ["\#(text(provisionerKey))"]"# : ""
        return try write(
            "keys.json", Array(#"{"iv_index": "00000000", "net_keys": ["\#(text(netKey))"], "app_keys": ["\#(text(appKey))"]\#(secrets)}"#.utf8))
    }

    /// Frame → (mesh name, upper transport MIC, access name) from `dump --format jsonl`.
    static func names(_ path: String, keys: String) throws -> [Int: String] {
        let r = try CLI.run(["dump", "--format", "jsonl", "--mesh-keys", keys, path])
        #expect(r.status == 0, "\(r.stderr)")
        var out: [Int: String] = [:]
        for line in r.stdout.split(separator: "\n") {
            let d = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let mesh = d["mesh"] as? [String: Any]
            let upper = mesh?["upper_transport"] as? [String: Any], access = mesh?["access"] as? [String: Any]
            let prov = mesh?["provisioning"] as? [String: Any], net = mesh?["network"] as? [String: Any]
            out[d["frame"] as! Int] = [
                d["name"] as? String ?? "-", net?["mic"] as? String ?? "-", upper?["mic"] as? String ?? "-",
                access?["name"] as? String ?? "-", prov?["name"] as? String ?? "-", "\(mesh?["fcs"] ?? "-")",
                "\(mesh?["notes"] ?? mesh?["errors"] ?? "-")"
            ].joined(separator: " | ")
        }
        return out
    }

    static func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
        guard hay.count >= needle.count else { return false }
        return (0...(hay.count - needle.count)).contains { hay[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test func configurationKeysAndProvisioningDataAreZeroedAndSealedAgain() throws {
        let built = try Self.build()
        let input = try Self.write("in.log", Self.btsnoop(built.records)), output = input + ".redacted.log"
        let keys = try Self.keyFile(provisioning: true)
        defer { for p in [input, output, keys] { try? FileManager.default.removeItem(atPath: p) } }
        let r = try CLI.run(["redact", "--salt", "mesh", "--mesh-keys", keys, input, output])
        #expect(r.status == 0, "\(r.stderr)")
        // 5 network PDUs (AppKey Add: 2 segments and a repeat; NetKey Add: 2), 4 PB-ADV records.
        #expect(r.stderr.contains("Mesh configuration keys (AppKey/NetKey Add/Update) zeroed, sealed again (records): 5"), "\(r.stderr)")
        #expect(r.stderr.contains("Mesh Provisioning Data: NetKey zeroed, sealed again (records): 4"), "\(r.stderr)")

        // The same records, each decoding to the same names with valid MICs.
        let before = try Self.names(input, keys: keys), after = try Self.names(output, keys: keys)
        #expect(before.count == built.records.count && after == before)
        #expect(before[built.keyFrames[0]]?.contains("| ok | - |") == true) // a first segment: held
        #expect(before[built.keyFrames[1]]?.contains("| ok | ok | Config AppKey Add |") == true, "\(before[built.keyFrames[1]] ?? "")")
        #expect(before[built.keyFrames[4]]?.contains("| ok | ok | Config NetKey Add |") == true)
        #expect(before[built.records.count]?.contains("| ok | ok | Generic OnOff Set |") == true)

        // Opened with the same keys, the redacted messages hold zero keys and nothing else changed.
        let out = Self.records(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(out.count == built.records.count)
        let c = MeshNetworkCredentials(netKey: Self.netKey)!, dk = MeshAccessKey(devKey: built.devKey)!
        func access(_ frames: ArraySlice<Int>) throws -> [UInt8] {
            var upper: [UInt8] = [], seqAuth: UInt32?
            for f in frames {
                let p = try MeshNetworkSecurity.decrypt(Self.adValue(out[f - 1]), credentials: c, currentIVIndex: 0)
                seqAuth = seqAuth ?? p.seq
                upper += p.transportPDU[4...]
            }
            return try MeshUpperTransport.decrypt(upper, key: dk, szmic: false, seq: seqAuth!, src: Self.provisioner, dst: Self.node, ivIndex: 0)
        }
        #expect(try access(built.keyFrames[0..<2]) == [0x00, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 16))
        #expect(try access(built.keyFrames[3..<5]) == [0x80, 0x40, 0x01, 0x00] + [UInt8](repeating: 0, count: 16))
        // The repeated last segment was sealed again too: it carries the same ciphertext.
        let last = try MeshNetworkSecurity.decrypt(Self.adValue(out[built.keyFrames[2] - 1]), credentials: c, currentIVIndex: 0)
        let first = try MeshNetworkSecurity.decrypt(Self.adValue(out[built.keyFrames[1] - 1]), credentials: c, currentIVIndex: 0)
        #expect(last.transportPDU == first.transportPDU)
        // No original key's bytes anywhere in the redacted file.
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        for k in [Self.netKey, Self.appKey, Self.sentAppKey, Self.sentNetKey, built.devKey, Self.provisionerKey, Self.deviceKey] {
            #expect(!Self.contains(file, k))
        }
        // Every frame other than the key-carrying ones is unchanged past the advertiser's address.
        let changed = (1...out.count).filter { !Self.adValue(out[$0 - 1]).elementsEqual(Self.adValue(built.records[$0 - 1])) }
        #expect(changed.count == 9 && Set(changed).isSuperset(of: built.keyFrames))
    }

    @Test func withoutTheKeysToOpenThemTheSummarySaysWhatWasLeft() throws {
        let built = try Self.build()
        let input = try Self.write("in.log", Self.btsnoop(built.records)), output = input + ".redacted.log"
        let keys = try Self.keyFile(provisioning: false)
        defer { for p in [input, output, keys] { try? FileManager.default.removeItem(atPath: p) } }
        let r = try CLI.run(["redact", "--salt", "mesh", "--mesh-keys", keys, input, output])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("Mesh Provisioning Data left encrypted as it was (no provisioning secret in --mesh-keys): 1"), "\(r.stderr)")
        #expect(r.stderr.contains("Mesh DevKey messages left encrypted as they were (no DevKey opens them; configuration keys they may carry stay): 2"))
        let out = Self.records(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect((1...out.count).allSatisfy { Self.adValue(out[$0 - 1]) == Self.adValue(built.records[$0 - 1]) })
    }

    /// The WHAD capture with its published keys: its DevKey messages cannot be opened (the
    /// provisioning session's private keys are not published), and the summary says so.
    @Test func theWHADCaptureWithItsKeys() throws {
        let input = CLI.capture("whad_btmesh_provisionning.pcap"), output = try Self.write("whad.pcap", [])
        let keys = try Self.write(
            "whad.json", Array(#"{"iv_index": "00000000", "net_keys": ["\#(MeshCLITests.netKey)"], "app_keys": ["\#(MeshCLITests.appKey)"]}"#.utf8))
        defer { for p in [output, keys] { try? FileManager.default.removeItem(atPath: p) } }
        let r = try CLI.run(["redact", "--salt", "mesh", "--mesh-keys", keys, input, output])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("Mesh Provisioning Data left encrypted as it was (no provisioning secret in --mesh-keys): 1"), "\(r.stderr)")
        #expect(r.stderr.contains("Mesh DevKey messages left encrypted as they were (no DevKey opens them; configuration keys they may carry stay): "))
        let before = try Self.names(input, keys: keys), after = try Self.names(output, keys: keys)
        #expect(before.count == 257 && after == before)
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        for k in [MeshCLITests.netKey, MeshCLITests.appKey] { #expect(!Self.contains(file, Self.hex(k))) }
    }
}
