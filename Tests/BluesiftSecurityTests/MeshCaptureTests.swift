import Foundation
import Testing
@testable import BluesiftSecurity

/// A real capture: Captures/whad_btmesh_provisionning.pcap (WHAD, MIT; Captures/PROVENANCE.md)
/// with the keys published beside it (btmesh_provisionning_keys.txt): NetKey, AppKey, IV
/// index 0. Expected fields are tshark 4.0's, decrypting with the same NetKey.
@Suite struct MeshCaptureTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Captures/whad_btmesh_provisionning.pcap").path
    static let keys = try! MeshKeys.decode(
        Array(
            """
            {"iv_index": "00000000", "net_keys": ["99d89627bc96d8e49c62cf0ad76624ca"], "app_keys": ["12121212121212121212121212121212"]}
            """.utf8))

    /// The AD structures (type, data) of each frame: pcap records of DLT 256 (10-octet RF
    /// header, access address, 2-octet PDU header, AdvA, AD structures, 3-octet CRC).
    /// Written here because the security tests do not link the capture readers.
    static let frames: [[(type: UInt8, data: [UInt8])]] = {
        guard let d = FileManager.default.contents(atPath: path) else { return [] }
        let b = [UInt8](d)
        func le32(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24 }
        var out: [[(type: UInt8, data: [UInt8])]] = []
        var o = 24
        while o + 16 <= b.count {
            let n = le32(o + 8)
            let rec = Array(b[(o + 16)..<min(b.count, o + 16 + n)])
            o += 16 + n
            var ads: [(type: UInt8, data: [UInt8])] = []
            var i = 22
            while i + 1 < rec.count - 3 {
                let len = Int(rec[i])
                guard len > 0, i + 1 + len <= rec.count - 3 else { break }
                ads.append((type: rec[i + 1], data: Array(rec[(i + 2)..<(i + 1 + len)])))
                i += 1 + len
            }
            out.append(ads)
        }
        return out
    }()

    static func ad(frame: Int, type: UInt8) -> [UInt8]? { frames[frame - 1].first { $0.type == type }?.data }

    @Test func captureIsThere() {
        #expect(Self.frames.count == 257)
        #expect("\(Self.keys)" == "MeshKeys(iv_index: 0x0, 1 net keys, 1 app keys, 0 dev keys, 0 label UUIDs)")
    }

    /// Frame 181: a Mesh Message AD (0x2A) decrypted with the NetKey, as tshark shows it.
    @Test func networkPDUOfFrame181() throws {
        let pdu = try #require(Self.ad(frame: 181, type: 0x2A))
        #expect(pdu == hex("54499938739447ede14b414b54d4bdc5cecdf10ad4"))
        let creds = Self.keys.credentials(nid: pdu[0] & 0x7F)
        #expect(creds.count == 1 && creds[0].nid == 0x54)
        let p = try MeshNetworkSecurity.decrypt(pdu, credentials: creds[0], currentIVIndex: Self.keys.ivIndex)
        #expect(!p.ctl && p.ttl == 3 && p.seq == 7 && p.src == 0x0001 && p.dst == 0x0005)
        #expect(p.transportPDU == hex("007af13dc7bd4ce0"))
        #expect(try MeshNetworkSecurity.encrypt(p, credentials: creds[0]) == pdu)
        // Frame 185: the first segment of a segmented access message from the new node.
        let s = try MeshNetworkSecurity.decrypt(try #require(Self.ad(frame: 185, type: 0x2A)), credentials: creds[0], currentIVIndex: 0)
        #expect(!s.ctl && s.ttl == 7 && s.seq == 0 && s.src == 0x0005 && s.dst == 0x0001)
        #expect(s.transportPDU == hex("8000000234767dd6acc154716824c29a"))
    }

    /// Every Mesh Message AD in the capture decrypts (tshark: 65 network PDUs, 65 decrypted).
    @Test func everyNetworkPDUDecrypts() throws {
        var n = 0, ok = 0
        for f in Self.frames {
            for a in f where a.type == 0x2A {
                n += 1
                for c in Self.keys.credentials(nid: a.data.first.map { $0 & 0x7F } ?? 0xFF) {
                    if (try? MeshNetworkSecurity.decrypt(a.data, credentials: c, currentIVIndex: Self.keys.ivIndex)) != nil { ok += 1 }
                }
            }
        }
        #expect(n == 65)
        #expect(ok == 65)
    }

    /// Frame 1: a secure network beacon (Mesh Beacon AD 0x2B) of this network, authenticated
    /// with the BeaconKey of the NetKey.
    @Test func secureNetworkBeaconOfFrame1() throws {
        let bytes = try #require(Self.ad(frame: 1, type: 0x2B))
        let b = try MeshSecureNetworkBeacon(decoding: bytes)
        #expect(b.networkID == hex("2373d79ef0cce44c"))
        #expect(b.ivIndex == 0 && b.flags == 0)
        #expect(b.authenticationValue == hex("7f4fd497179be776"))
        let net = try #require(Self.keys.netKey(networkID: b.networkID))
        #expect(net.authenticates(b))
        #expect(net.secureNetworkBeacon(flags: 0, ivIndex: 0).encode() == bytes)
        var other = b
        other.ivIndex = 1
        #expect(!net.authenticates(other))
    }
}
