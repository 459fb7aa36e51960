import Testing
import BluesiftCapture
import BluesiftProtocols
import BluesiftSecurity
import BluesiftTransport
import BluesiftWire
@testable import BluesiftHost

/// The peripheral's SMP responder driven PDU by PDU by an initiator written here from the
/// spec's functions (Core 5.4 Vol 3 Part H §2.2, §2.3.5.6): every value it sends is checked.
@Suite struct SMPResponderTests {
    final class NoTransport: HCITransport {
        var tap: ((HCITapEvent) -> Void)?
        let name = "none"
        func send(_ kind: PacketKind, _ bytes: [UInt8]) throws(TransportError) {}
        func receive(timeout: Duration) throws(TransportError) -> H4Packet? { nil }
        func close() {}
    }
    final class NoResponder: GATTServerResponder {
        func read(handle: UInt16, first: Bool, link: ServerLinkState) -> ServerReadAnswer { .error(.readNotPermitted) }
        func write(handle: UInt16, value: [UInt8], op: ATTOpcode, link: ServerLinkState) -> ServerWriteAnswer { .init() }
        func mtuExchanged(client: UInt16, agreed: UInt16) {}
    }

    static let central = BDAddr(string: "d0:5e:55:10:00:02")!
    static let own = BDAddr(string: "c0:ba:0d:00:00:01")!

    /// A peripheral with a link from `central` (random), advertising as `own` (random).
    func peripheral() -> LEPeripheral {
        let p = LEPeripheral(transport: NoTransport(), attributes: [], responder: NoResponder())
        p.connection = LEConnection(handle: 0x0040, peer: Self.central, peerType: .random, role: 1, interval: 24, latency: 0, supervisionTimeout: 72)
        p.ownAddress = Self.own; p.ownAddressType = .random
        return p
    }

    static func value(_ pdu: [UInt8]) -> [UInt8] { SMPCrypto.swapped(Array(pdu[1..<17])) }
    static func pdu(_ code: SMPCode, _ msbFirst: [UInt8]) -> [UInt8] { SMP.value(code, msbFirst) }

    @Test func secureConnectionsJustWorksEndToEnd() throws {
        let p = peripheral()
        let smp = SMPResponder() // NoInputNoOutput, bonding, Secure Connections
        // Pairing Request: NoInputNoOutput, bonding | SC, key size 16, no keys asked.
        let preq: [UInt8] = [0x01, 0x03, 0x00, 0x09, 0x10, 0x00, 0x00]
        let pres = try smp.handle(preq, peripheral: p)
        #expect(pres == [[0x02, 0x03, 0x00, 0x09, 0x10, 0x00, 0x00]])

        let ours = SMPKeyPair()
        let out = try smp.handle(SMP.publicKey(ours), peripheral: p)
        #expect(out.count == 2 && out[0].count == 65 && out[0][0] == 0x0C && out[1][0] == 0x03)
        let pkbX = SMPCrypto.swapped(Array(out[0][1..<33])), pkbY = SMPCrypto.swapped(Array(out[0][33..<65]))
        let cb = Self.value(out[1])
        let dhKey = try ours.dhKey(peerX: pkbX, peerY: pkbY)

        let na = SMP.random(16)
        let random = try smp.handle(Self.pdu(.pairingRandom, na), peripheral: p)
        #expect(random.count == 1 && random[0][0] == 0x04)
        let nb = Self.value(random[0])
        #expect(cb == SMPCrypto.f4(u: pkbX, v: ours.x, x: nb, z: 0)) // the responder's commitment holds

        let a = [UInt8(1)] + SMPCrypto.swapped(Self.central.littleEndianBytes)
        let b = [UInt8(1)] + SMPCrypto.swapped(Self.own.littleEndianBytes)
        let (macKey, ltk) = SMPCrypto.f5(w: dhKey, n1: na, n2: nb, a1: a, a2: b)
        let zero = [UInt8](repeating: 0, count: 16)
        let ea = SMPCrypto.f6(w: macKey, n1: na, n2: nb, r: zero, ioCap: [0x09, 0x00, 0x03], a1: a, a2: b)
        let check = try smp.handle(Self.pdu(.pairingDHKeyCheck, ea), peripheral: p)
        #expect(check.count == 1 && check[0][0] == 0x0D)
        #expect(Self.value(check[0]) == SMPCrypto.f6(w: macKey, n1: nb, n2: na, r: zero, ioCap: [0x09, 0x00, 0x03], a1: b, a2: a))
        #expect(smp.ltk == SMPCrypto.swapped(ltk) && !smp.authenticated)
        // The controller asks for it with EDIV 0 and Rand 0 (§2.4.4.1); anything else: no key.
        #expect(smp.longTermKey(rand: [UInt8](repeating: 0, count: 8), ediv: 0) == SMPCrypto.swapped(ltk))
        #expect(smp.longTermKey(rand: [UInt8](repeating: 0, count: 8), ediv: 0x1234) == nil)
    }

    @Test func aWrongDHKeyCheckFailsThePairing() throws {
        let p = peripheral()
        let smp = SMPResponder()
        _ = try smp.handle([0x01, 0x03, 0x00, 0x09, 0x10, 0x00, 0x00], peripheral: p)
        let ours = SMPKeyPair()
        _ = try smp.handle(SMP.publicKey(ours), peripheral: p)
        _ = try smp.handle(Self.pdu(.pairingRandom, SMP.random(16)), peripheral: p)
        #expect(try smp.handle(Self.pdu(.pairingDHKeyCheck, [UInt8](repeating: 0xAA, count: 16)), peripheral: p) == [[0x05, 0x0B]])
        #expect(smp.ltk == nil)
    }

    @Test func refusalsCarryTheirReason() throws {
        let p = peripheral()
        let smp = SMPResponder()
        // Key size 6 (< 7): Encryption Key Size (0x06).
        #expect(try smp.handle([0x01, 0x03, 0x00, 0x09, 0x06, 0x00, 0x00], peripheral: p) == [[0x05, 0x06]])
        // A public key off the curve (CVE-2018-5383): DHKey Check Failed (0x0B).
        _ = try smp.handle([0x01, 0x03, 0x00, 0x09, 0x10, 0x00, 0x00], peripheral: p)
        #expect(try smp.handle([0x0C] + [UInt8](repeating: 0x01, count: 64), peripheral: p) == [[0x05, 0x0B]])
        // Out of order: a Pairing Confirm while the public key is due is Unspecified Reason (0x08).
        _ = try smp.handle([0x01, 0x03, 0x00, 0x09, 0x10, 0x00, 0x00], peripheral: p)
        #expect(try smp.handle(Self.pdu(.pairingConfirm, [UInt8](repeating: 0, count: 16)), peripheral: p) == [[0x05, 0x08]])
        // A short PDU: Invalid Parameters (0x0A). Nothing pending: ignored.
        #expect(try smp.handle([0x03, 0x00], peripheral: p) == [[0x05, 0x0A]])
        #expect(try smp.handle(Self.pdu(.pairingRandom, [UInt8](repeating: 0, count: 16)), peripheral: p) == [])
        // A passkey this side must type but does not have: Passkey Entry Failed (0x01). The
        // central displays (DisplayOnly), this side has the keyboard, MITM asked.
        var policy = PairingPolicy()
        policy.ioCapability = .keyboardOnly
        let typing = SMPResponder(policy: policy)
        #expect(try typing.handle([0x01, 0x00, 0x00, 0x05, 0x10, 0x00, 0x00], peripheral: p) == [[0x05, 0x01]])
    }
}
