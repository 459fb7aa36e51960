import Foundation
import Testing
import BluesiftSecurity

/// `redact` of Mesh key material carried over the GATT bearer (issue 40): a Provisioning Data
/// PDU on Mesh Provisioning Data In and a Config AppKey Add on Mesh Proxy Data In, each split
/// in proxy SAR segments (Mesh Protocol v1.1 §6.3.2) written in records of their own. Each
/// segment's bytes are sealed again in its own record; the capture decodes as before with
/// valid MICs. A capture made here from bytes: a phone provisioning a node over PB-GATT, then
/// configuring it through the node's proxy.
@Suite struct MeshProxyRedactTests {
    typealias R = MeshRedactTests
    static let connection: UInt16 = 0x0040, proxyConnection: UInt16 = 0x0041

    struct Record { var h4: [UInt8], received: Bool }

    /// LE Connection Complete (central, the phone), then discovery of `service` at handles
    /// 1..7: Data In value 3 (write without response), Data Out value 5 (notify), its CCCD 6.
    static func connect(_ h: UInt16, service: UInt16, dataIn: UInt16, dataOut: UInt16) -> [Record] {
        func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let event: [UInt8] = [0x3E, 19, 0x01, 0x00] + le(h) + [0x00, 0x01, 0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0] + le(24) + le(0) + le(400) + [0]
        var out = [Record(h4: [0x04] + event, received: true)]
        let pdus: [([UInt8], Bool)] = [
            ([0x10] + le(1) + le(0xFFFF) + le(0x2800), false), ([0x11, 6] + le(1) + le(7) + le(service), true),
            ([0x08] + le(1) + le(7) + le(0x2803), false),
            ([0x09, 7] + le(2) + [0x04] + le(3) + le(dataIn) + le(4) + [0x10] + le(5) + le(dataOut), true),
            ([0x12] + le(6) + le(1), false), ([0x13], true)
        ]
        for (p, rx) in pdus { out.append(acl(h, p, received: rx)) }
        return out
    }

    /// An ATT PDU in an ACL packet (L2CAP CID 0x0004).
    static func acl(_ h: UInt16, _ att: [UInt8], received: Bool) -> Record {
        let l2 = [UInt8(att.count & 0xFF), UInt8(att.count >> 8), 0x04, 0x00] + att
        return Record(h4: [0x02, UInt8(h & 0xFF), UInt8(h >> 8) | 0x20, UInt8(l2.count & 0xFF), UInt8(l2.count >> 8)] + l2, received: received)
    }

    /// A message as Proxy PDUs of at most 20 octets (§6.3.1: SAR, message type, data):
    /// written by the phone (Write Command on handle 3) or notified by the node (handle 5).
    static func proxy(_ h: UInt16, _ type: UInt8, _ data: [UInt8], fromPhone: Bool) -> [Record] {
        let parts = stride(from: 0, to: data.count, by: 19).map { Array(data[$0..<min($0 + 19, data.count)]) }
        return parts.enumerated().map { i, p in
            let sar: UInt8 = parts.count == 1 ? 0 : i == 0 ? 1 : i == parts.count - 1 ? 3 : 2
            let pdu = [sar << 6 | type] + p
            return acl(h, fromPhone ? [0x52, 0x03, 0x00] + pdu : [0x1B, 0x05, 0x00] + pdu, received: !fromPhone)
        }
    }

    struct Built { var records: [Record], devKey: [UInt8], dataFrames: [Int], keyFrames: [Int] }

    static func build() throws -> Built {
        let v = try R.Provisioning.make()
        let (invite, caps, start, pubP, pubD, randP, randD, data, devKey) = (v.invite, v.caps, v.start, v.pubP, v.pubD, v.randP, v.randD, v.data, v.devKey)

        var r = connect(connection, service: 0x1827, dataIn: 0x2ADB, dataOut: 0x2ADC)
        for (pdu, phone) in [
            ([0x00] + invite, true), ([0x01] + caps, false), ([0x02] + start, true), ([0x03] + pubP, true), ([0x03] + pubD, false),
            ([0x06] + randP, true), ([0x06] + randD, false)
        ] {
            r += proxy(connection, 0x03, pdu, fromPhone: phone)
        }
        let dataRecords = proxy(connection, 0x03, [0x07] + data, fromPhone: true)
        r += dataRecords
        let dataFrames = Array((r.count - dataRecords.count + 1)...r.count)
        r += proxy(connection, 0x03, [0x08], fromPhone: false)

        // Through the node's proxy: Config AppKey Add (DevKey, two segments of the lower
        // transport, each network PDU in two proxy segments), then a Generic OnOff Set.
        r += connect(proxyConnection, service: 0x1828, dataIn: 0x2ADD, dataOut: 0x2ADE)
        let c = MeshNetworkCredentials(netKey: R.netKey)!
        let dk = MeshAccessKey(devKey: devKey)!, ak = MeshAccessKey(appKey: R.appKey)!
        var seq: UInt32 = 0x20
        func network(_ transport: [UInt8], seq s: UInt32) throws -> [UInt8] {
            let pdu = MeshNetworkPDU(nid: c.nid, ctl: false, ttl: 5, seq: s, src: R.provisioner, dst: R.node, transportPDU: transport, ivIndex: 0)
            return try MeshNetworkSecurity.encrypt(pdu, credentials: c)
        }
        let upper = try MeshUpperTransport.encrypt(
            accessPayload: [0x00, 0x00, 0x00, 0x00] + R.sentAppKey, key: dk, szmic: false, seq: seq, src: R.provisioner, dst: R.node, ivIndex: 0)
        let n = (upper.count + 11) / 12, zero = seq & 0x1FFF
        var keyFrames: [Int] = []
        for o in 0..<n {
            let header: [UInt8] = [0x80, UInt8(zero >> 6), UInt8(zero & 0x3F) << 2 | UInt8(o >> 3), UInt8(o & 7) << 5 | UInt8(n - 1)]
            let segs = proxy(proxyConnection, 0x00, try network(header + upper[(o * 12)..<min(o * 12 + 12, upper.count)], seq: seq), fromPhone: true)
            r += segs
            keyFrames += ((r.count - segs.count + 1)...r.count)
            seq += 1
        }
        let onoff = try MeshUpperTransport.encrypt(
            accessPayload: [0x82, 0x02, 0x01, 0x07], key: ak, szmic: false, seq: seq, src: R.provisioner, dst: R.node, ivIndex: 0)
        r += proxy(proxyConnection, 0x00, try network([0x40 | ak.aid] + onoff, seq: seq), fromPhone: true)
        return Built(records: r, devKey: devKey, dataFrames: dataFrames, keyFrames: keyFrames)
    }

    /// btsnoop (datalink 1002, H4): flags say received or sent, event or data.
    static func btsnoop(_ records: [Record]) -> [UInt8] {
        var out = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        for (i, rec) in records.enumerated() {
            let ts: UInt64 = 0x00DC_DDB3_0F2F_8000 + 1_764_115_200_000_000 + UInt64(i) * 1000
            let flags: UInt32 = (rec.received ? 1 : 0) | (rec.h4[0] == 0x04 ? 2 : 0)
            out += be32(UInt32(rec.h4.count)) + be32(UInt32(rec.h4.count)) + be32(flags) + be32(0)
            out += be32(UInt32(ts >> 32)) + be32(UInt32(ts & 0xFFFF_FFFF)) + rec.h4
        }
        return out
    }

    /// The proxy PDU's data of an ATT Write Command / Notification record (after ACL, L2CAP,
    /// opcode, handle and the proxy header).
    static func proxyData(_ record: [UInt8]) -> [UInt8] { Array(record[13...]) }

    @Test func keysInProxySegmentsAreZeroedAndSealedAgainSegmentBySegment() throws {
        let built = try Self.build()
        let input = try R.write("proxy-in.log", Self.btsnoop(built.records)), output = input + ".redacted.log"
        let keys = try R.keyFile(provisioning: true)
        defer { for p in [input, output, keys] { try? FileManager.default.removeItem(atPath: p) } }
        let r = try CLI.run(["redact", "--salt", "mesh", "--mesh-keys", keys, input, output])
        #expect(r.status == 0, "\(r.stderr)")
        // AppKey Add: 2 network PDUs in 2 proxy segments each; Provisioning Data: 2 proxy segments.
        #expect(r.stderr.contains("Mesh configuration keys (AppKey/NetKey Add/Update) zeroed, sealed again (records): 4"), "\(r.stderr)")
        #expect(r.stderr.contains("Mesh Provisioning Data: NetKey zeroed, sealed again (records): 2"), "\(r.stderr)")
        #expect(!r.stderr.contains("left encrypted"), "\(r.stderr)")
        #expect(built.dataFrames.count == 2 && built.keyFrames.count == 4)

        // The same records, each decoding to the same names with valid MICs.
        let before = try R.names(input, keys: keys), after = try R.names(output, keys: keys)
        #expect(before.count == built.records.count && after == before)
        #expect(before[built.keyFrames[3]]?.contains("| ok | ok | Config AppKey Add |") == true, "\(before[built.keyFrames[3]] ?? "")")
        #expect(before[built.records.count]?.contains("| ok | ok | Generic OnOff Set |") == true, "\(before[built.records.count] ?? "")")
        #expect(before[built.dataFrames[1]]?.contains("Data") == true, "\(before[built.dataFrames[1]] ?? "")")

        // Joined again and opened with the same keys, the redacted messages hold zero keys.
        let out = R.records(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(out.count == built.records.count)
        let c = MeshNetworkCredentials(netKey: R.netKey)!, dk = MeshAccessKey(devKey: built.devKey)!
        var upper: [UInt8] = [], seqAuth: UInt32?
        for pair in stride(from: 0, to: 4, by: 2) {
            let pdu = Self.proxyData(out[built.keyFrames[pair] - 1]) + Self.proxyData(out[built.keyFrames[pair + 1] - 1])
            let p = try MeshNetworkSecurity.decrypt(pdu, credentials: c, currentIVIndex: 0)
            seqAuth = seqAuth ?? p.seq
            upper += p.transportPDU[4...]
        }
        let access = try MeshUpperTransport.decrypt(upper, key: dk, szmic: false, seq: seqAuth!, src: R.provisioner, dst: R.node, ivIndex: 0)
        #expect(access == [0x00, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 16))
        // No key's bytes anywhere in the redacted file.
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        for k in [R.netKey, R.appKey, R.sentAppKey, built.devKey, R.provisionerKey, R.deviceKey] { #expect(!R.contains(file, k)) }
        // Of the ATT records only the key-carrying ones changed, and only in their proxy data
        // (the connection events' peer addresses are replaced, as redact does everywhere).
        let changed = (1...out.count).filter { built.records[$0 - 1].h4[0] == 0x02 && out[$0 - 1] != built.records[$0 - 1].h4 }
        #expect(changed == (built.dataFrames + built.keyFrames).sorted())
        for f in changed { #expect(out[f - 1].prefix(13).elementsEqual(built.records[f - 1].h4.prefix(13))) }
    }
}
