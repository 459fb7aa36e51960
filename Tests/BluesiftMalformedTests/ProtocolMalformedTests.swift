import Testing
import BluesiftWire
import BluesiftFuzz

/// Damaged PDUs in otherwise good captures: each error lands on the record with its layer,
/// code and offset, the layers below still decode, and the next frame decodes cleanly.
@Suite struct ProtocolMalformedTests {
    typealias B = Bytes
    /// Handle 0x0040 connected first, so reassembly and ATT pairing have a connection.
    static let connect: [UInt8] = [
        0x04, 0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00,
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00
    ]
    /// ATT Read Request for handle 0x0003: the well-formed frame after each damaged one.
    static let goodRead = B.acl(B.l2cap(0x0004, [0x0A, 0x03, 0x00]))

    func run(_ packets: [[UInt8]]) -> [Seen] {
        analyze([(true, Self.connect)] + packets.map { (false, $0) } + [(false, Self.goodRead)])
    }

    func expectGoodTail(_ seen: [Seen]) {
        guard let last = seen.last else { Issue.record("no frames"); return }
        #expect(last.errors.isEmpty, "frame after the damage: \(last.json)")
        #expect(last.attOpcode == 0x0A && last.layers.isSuperset(of: ["hci", "l2cap", "att"]))
    }

    @Test func l2capLengthLongerThanTheACLPayloadWaitsThenReports() {
        // L2CAP says 10 bytes, the only fragment brings 5; the next start replaces it.
        let seen = run([B.acl(B.l2cap(0x0004, [0x0A, 0x03, 0x00, 0x00, 0x00], length: 10))])
        #expect(seen.count == 3)
        #expect(seen[1].layers.contains("hci") && !seen[1].layers.contains("att"))
        #expect(seen[2].hasError(layer: "l2cap", code: .reassembly), "\(seen[2].json)")
        #expect(seen[2].json.contains("new start fragment before the previous PDU completed (9 of 14 bytes)"))
        #expect(seen[2].attOpcode == 0x0A)
    }

    @Test func l2capLengthShorterThanTheACLPayload() {
        // L2CAP says 3 bytes, the ACL carries 3 more after them.
        let seen = run([B.acl(B.l2cap(0x0004, [0x0A, 0x03, 0x00, 0xEE, 0xEE, 0xEE], length: 3))])
        let e = seen[1].errors.first { $0.layer == "l2cap" }
        #expect(e?.code == .invalidLength && e?.offset == 7, "\(seen[1].json)")
        #expect(e?.message == "3 bytes after the L2CAP PDU")
        #expect(seen[1].attOpcode == 0x0A) // the PDU itself still decodes
        expectGoodTail(seen)
    }

    @Test func aclContinuationWithoutStart() {
        let seen = run([B.acl([0x01, 0x02, 0x03, 0x04], pb: 0b01)])
        let e = seen[1].errors.first
        #expect(e?.layer == "l2cap" && e?.code == .reassembly && e?.offset == 0, "\(seen[1].json)")
        #expect(e?.message == "continuation fragment without a start (4 bytes dropped)")
        #expect(seen[1].layers == ["hci"])
        #expect(seen[1].json.contains(#""errors":[{"layer":"l2cap","code":"reassembly","offset":0,"#))
        expectGoodTail(seen)
    }

    @Test func shortATTPDUs() {
        let seen = run([
            B.acl(B.l2cap(0x0004, [0x0A, 0x03])), // Read Request, handle cut
            B.acl(B.l2cap(0x0004, [0x12, 0x05])), // Write Request, handle cut
            B.acl(B.l2cap(0x0004, [0x01, 0x0A, 0x03])), // Error Response, 3 of 5 bytes
            B.acl(B.l2cap(0x0004, [])) // no opcode at all
        ])
        for i in 1...4 {
            #expect(seen[i].hasError(layer: "att", code: .truncated), "frame \(i + 1): \(seen[i].json)")
            #expect(seen[i].layers.contains("l2cap"))
        }
        expectGoodTail(seen)
    }

    @Test func shortSMPPDUs() {
        let seen = run([
            B.acl(B.l2cap(0x0006, [0x01, 0x03, 0x00])), // Pairing Request: 3 of 7 bytes
            B.acl(B.l2cap(0x0006, [0x03] + [UInt8](repeating: 0x11, count: 8))), // Confirm: 9 of 17
            B.acl(B.l2cap(0x0006, [])) // no code at all
        ])
        let e = seen[1].errors.first { $0.layer == "smp" }
        #expect(e?.code == .truncated && e?.offset == 3, "\(seen[1].json)")
        #expect(e?.message == "Pairing Request: need 7 bytes, have 3")
        #expect(seen[2].hasError(layer: "smp", code: .truncated))
        #expect(seen[3].hasError(layer: "smp", code: .truncated))
        for i in 1...3 { #expect(seen[i].layers.contains("smp")) }
        expectGoodTail(seen)
    }

    @Test func hciLengthFieldsThatLie() {
        let seen = run([
            [0x04, 0x0E, 0x0A, 0x01, 0x03, 0x0C], // event claims 10 parameter bytes, has 3
            [0x01, 0x03, 0x0C, 0x05], // command claims 5, has 0
            [0x02, 0x40, 0x20, 0xFF, 0x00, 0x01, 0x00] // ACL claims 255, has 2
        ])
        for i in 1...3 {
            #expect(!seen[i].errors.isEmpty, "frame \(i + 1): \(seen[i].json)")
            #expect(seen[i].errors.allSatisfy { $0.layer == "hci" || $0.layer == "l2cap" })
            #expect(seen[i].layers.contains("hci"))
        }
        expectGoodTail(seen)
    }

    /// Every rendered line stays valid JSON whatever was damaged.
    @Test func damagedFramesRenderValidJSON() {
        let seen = run([B.acl([0x01], pb: 0b01), B.acl(B.l2cap(0x0004, [0x0A])), [0x04, 0xFF, 0x02, 0x00]])
        for s in seen { #expect(JSONCheck.firstError(Array(s.json.utf8)) == nil, "\(s.json)") }
    }
}
