import Foundation
import Testing
import BluesiftSecurity
import BluesiftWire
@testable import BluesiftProtocols

/// A real capture: Captures/whad_btmesh_provisionning.pcap (WHAD, MIT; Captures/PROVENANCE.md)
/// with the keys published beside it (NetKey, AppKey, IV index 0), through `MeshDecoder`.
@Suite struct MeshWHADCaptureTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Captures/whad_btmesh_provisionning.pcap").path
    static let keys = try! MeshKeys.decode(
        Array(
            """
            {"iv_index": "00000000", "net_keys": ["99d89627bc96d8e49c62cf0ad76624ca"], "app_keys": ["12121212121212121212121212121212"]}
            """.utf8))

    /// The mesh AD structures (frame number, type, data) of the pcap (DLT 256: 10-octet RF
    /// header, access address, PDU header, AdvA, AD structures, CRC).
    static let ads: [(frame: Int, type: UInt8, data: [UInt8])] = {
        guard let d = FileManager.default.contents(atPath: path) else { return [] }
        let b = [UInt8](d)
        func le32(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24 }
        var out: [(frame: Int, type: UInt8, data: [UInt8])] = []
        var o = 24, frame = 0
        while o + 16 <= b.count {
            let n = le32(o + 8)
            let rec = Array(b[(o + 16)..<min(b.count, o + 16 + n)])
            o += 16 + n; frame += 1
            var i = 22
            while i + 1 < rec.count - 3 {
                let len = Int(rec[i])
                guard len > 0, i + 1 + len <= rec.count - 3 else { break }
                if (0x29...0x2B).contains(rec[i + 1]) { out.append((frame, rec[i + 1], Array(rec[(i + 2)..<(i + 1 + len)]))) }
                i += 1 + len
            }
        }
        return out
    }()

    static let layers: [(frame: Int, layer: MeshLayer)] = {
        var d = MeshDecoder(keys: keys)
        return ads.map { ($0.frame, d.decodeAdvertising(adType: $0.type, data: $0.data)) }
    }()

    @Test func everyNetworkPDUDecrypts() {
        let net = Self.layers.filter { $0.layer.adType == 0x2A }
        #expect(net.count == 65)
        #expect(net.filter { $0.layer.netMIC == "ok" }.count == 65)
        #expect(Self.layers.allSatisfy { $0.layer.notes.isEmpty })
    }

    @Test func beaconsAuthenticate() {
        let b = Self.layers.filter { $0.layer.adType == 0x2B }
        #expect(b.count == 7)
        #expect(b.first?.layer.summary == "Mesh Secure Network beacon net=2373d79ef0cce44c iv_index=0 auth ok")
    }

    @Test func provisioning() {
        let p = Self.layers.compactMap { l in l.layer.provisioning.map { (l.frame, $0, l.layer) } }
        #expect(p.allSatisfy { $0.2.fcsOK == true })
        let firstOnly = p.filter { !$0.2.retransmission }.map(\.1.type.name)
        #expect(
            firstOnly == [
                "Provisioning Invite", "Provisioning Capabilities", "Provisioning Start", "Provisioning Public Key",
                "Provisioning Public Key", "Provisioning Confirmation", "Provisioning Confirmation", "Provisioning Random",
                "Provisioning Random", "Provisioning Data", "Provisioning Complete"
            ])
    }

    @Test func frame181() throws {
        let l = try #require(Self.layers.first { $0.frame == 181 }?.layer)
        #expect(l.network?.src == 0x0001 && l.network?.dst == 0x0005 && l.network?.ttl == 3 && l.network?.seq == 7)
    }
}

@Suite struct MeshNetworkStatsTests {
    /// WHAD's capture: one PB-ADV provisioning session, then the new node 0x0005 talking to
    /// the provisioner 0x0001.
    @Test func whadCapture() {
        var d = MeshDecoder(keys: MeshWHADCaptureTests.keys)
        var s = MeshNetworkStats()
        for a in MeshWHADCaptureTests.ads { s.add(d.decodeAdvertising(adType: a.type, data: a.data), frame: a.frame) }
        #expect(s.networkPDUs == 65 && s.decrypted == 65 && s.beacons == 7)
        #expect(s.networks.keys.sorted() == ["2373d79ef0cce44c"] && s.networks.values.first?.authenticated == true)
        #expect(s.provisioning.map(\.outcome) == ["complete"])
        #expect(s.provisioning.first?.pdus == 11)
        #expect(s.ivIndexes == [0])
        #expect(Set(s.nodes.keys) == [0x0001, 0x0005])
        for l in s.text(incompleteSegmented: d.incompleteSegmentedMessages) { print(l) }
    }

    /// The sample data: message 8 repeats a segment of message 6 (same SEQ not, same
    /// SeqAuth), replays are none; messages 20-24 use the previous IV index.
    @Test func sampleData() {
        var d = MeshDecoder(keys: MeshSample.keys)
        var s = MeshNetworkStats()
        for (i, (_, h)) in MeshSample.messages.enumerated() {
            s.add(d.decodeAdvertising(adType: i == MeshSample.messages.count - 1 ? 0x2B : 0x2A, data: Hex.parse(h)!), frame: i + 1)
        }
        #expect(s.decrypted == 23 && s.netMICBad == 0)
        #expect(s.ivIndexes == [0x12345678, 0x12345677])
        #expect(s.byOpcode["Health Current Status"] == 3 && s.byOpcode["Config AppKey Add"] == 1)
        #expect(s.byOpcode["control Friend Poll"] == 4 && s.segmentAcks == 2)
        #expect(s.replays.isEmpty)
        #expect(s.segmentedStarted == 2 && s.segmentedCompleted == 2)
        #expect(s.bySource[0x1234] == 6)
    }
}

/// ../shared/captures/mesh/meshparser_provisioning.cap (no licence: read when present, never
/// copied): an Android phone provisioning a node over PB-GATT, then talking to it through the
/// GATT proxy. No keys: provisioning PDUs decode, network PDUs stay encrypted and say why.
enum MeshAndroidCapture {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/captures/mesh/meshparser_provisioning.cap").path
    static var present: Bool { FileManager.default.fileExists(atPath: path) }
}

@Suite(.enabled(if: MeshAndroidCapture.present, "../shared/captures/mesh/meshparser_provisioning.cap is not here"))
struct MeshAndroidCaptureTests {
    @Test func pbGATTAndProxy() {
        var d = MeshDecoder()
        let layers = MeshTsharkOracle.bluesiftFrames(MeshAndroidCapture.path, &d).sorted { $0.key < $1.key }.flatMap(\.value)
        let prov = layers.compactMap(\.provisioning)
        let net = layers.filter { $0.networkPDU != nil }
        print("android: \(layers.count) mesh layers, \(prov.count) provisioning PDUs, \(net.count) network PDUs, notes \(layers.flatMap(\.notes).count)")
        print(prov.map(\.type.name))
        #expect(prov.count == 27)
        #expect(net.count == 30 && net.allSatisfy { $0.encrypted == "no --mesh-keys" })
        #expect(layers.allSatisfy { $0.notes.isEmpty })
    }
}
