import BluesiftSecurity
import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Over-the-air captures: crackle's own test suite (Tests/Fixtures/crackle, BSD-2-Clause).
@Suite struct AirLinkTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func path(_ p: String) -> String { root.appendingPathComponent("Tests/Fixtures/crackle/" + p).path }

    /// Decodes a capture; returns, per frame, the plaintext of each decrypted PDU.
    static func decrypt(_ file: String, keys: [KnownLTK] = []) throws -> (ProtocolDecoder, [Int: [UInt8]], [Int: DecodedFrame.Layers]) {
        let reader = try CaptureFile.open(path: path(file))
        let d = ProtocolDecoder()
        d.knownKeys = keys
        var plain: [Int: [UInt8]] = [:], layers: [Int: DecodedFrame.Layers] = [:]
        var f = DecodedFrame(record: .empty)
        while let r = reader.next() {
            d.decode(r, into: &f)
            if let ll = f.ll, ll.decrypted, !ll.retransmission { plain[r.frame] = Array(ll.payload) }
            layers[r.frame] = f.layers
        }
        return (d, plain, layers)
    }

    /// LL payloads of crackle's expected decrypted capture, for the frames it changed.
    static func expected(_ input: String, _ output: String) throws -> [Int: [UInt8]] {
        let a = try CaptureFile.open(path: path(input)), b = try CaptureFile.open(path: path(output))
        var out: [Int: [UInt8]] = [:]
        while let x = a.next() {
            let xb = Array(x.bytes)
            guard let y = b.next() else { break }
            let yb = Array(y.bytes)
            if xb != yb, yb.count >= 6 { out[y.frame] = Array(yb[6..<min(yb.count, 6 + Int(yb[5]))]) }
        }
        return out
    }

    @Test func crackJustWorksAndDecrypt() throws {
        let (d, plain, layers) = try Self.decrypt("01_crack/pairing_and_ltk_exchange.pcap")
        let want = try Self.expected("01_crack/pairing_and_ltk_exchange.pcap", "01_crack/out/expected_output.pcap")
        #expect(want.count == 3)
        #expect(plain == want)
        let tk = d.recoveredKeys.first { $0.tk != nil }
        #expect(tk?.tk == 0)
        let ltk = d.recoveredKeys.first { $0.ltk != nil }
        #expect(ltk.map { Hex.string($0.ltk!) } == "7f62c053f104a5bbe68b1d896a2ed49c")
        // The decrypted key distribution went through L2CAP to SMP.
        #expect(plain.keys.contains { layers[$0]?.contains(.smp) == true })
        let air = try #require(d.connections.first?.air)
        #expect(air.central == BDAddr(string: "08:3e:8e:e1:0b:3e") && air.peripheral == BDAddr(string: "78:c5:e5:6e:dd:e8"))
    }

    @Test func knownLTKDecrypts() throws {
        let ltk = KnownLTK(ltk: Hex.parse("7f62c053f104a5bbe68b1d896a2ed49c")!, source: "--ltk")
        let (d, plain, _) = try Self.decrypt("02_ltk_decrypt/known_ltk.pcap", keys: [ltk])
        let want = try Self.expected("02_ltk_decrypt/known_ltk.pcap", "02_ltk_decrypt/out/expected_output.pcap")
        #expect(want.count == 7)
        #expect(plain == want)
        #expect(d.decryptedPackets == 7)
    }

    @Test func secureConnectionsUnrecoverable() throws {
        let (d, plain, layers) = try Self.decrypt("04_le_secure_connections/le_secure_connections.pcapng")
        #expect(plain.isEmpty)
        let air = try #require(d.connections.first?.air)
        #expect(air.security.contains { $0.contains("LE Secure Connections") && $0.contains("give --ltk") })
        // Encrypted PDUs are never read as L2CAP.
        #expect(d.encryptedPackets == 71)
        #expect(air.central == BDAddr(string: "5c:f3:70:73:3e:f4") && air.peripheral == BDAddr(string: "7d:43:82:42:23:16"))
        _ = layers
    }
}

extension AirLinkTests {
    /// Passkey Entry: the TK is searched over 000000-999999 (crackle finds 461140).
    @Test func crackPasskeyAndDecrypt() throws {
        let (d, plain, _) = try Self.decrypt("05_numeric_pin/numeric_pin.pcap")
        let want = try Self.expected("05_numeric_pin/numeric_pin.pcap", "05_numeric_pin/out/expected_output.pcap")
        #expect(d.recoveredKeys.first { $0.tk != nil }?.tk == 461140)
        #expect(d.recoveredKeys.contains { $0.ltk.map { Hex.string($0) } == "9c0469262e521d1d40e095e7c542c5ec" })
        #expect(want.count == 55)
        #expect(plain == want)
    }
}

extension AirLinkTests {
    /// The link-layer CRC recomputed over header and payload equals the one captured, on
    /// advertising (CRCInit 0x555555) and data channels (CONNECT_IND's CRCInit).
    @Test func crcRecomputedEqualsCaptured() throws {
        let reader = try CaptureFile.open(path: Self.path("05_numeric_pin/numeric_pin.pcap"))
        var crcInit: [UInt32: UInt32] = [:]
        var equal = 0, total = 0
        while let r = reader.next() {
            let ll = LLPacket(bytes: r.bytes, sniffer: r.sniffer)
            guard ll.error == nil, let crc = ll.crc else { continue }
            if let c = ll.connectInd { crcInit[c.accessAddress] = c.crcInit }
            guard let i = ll.isAdvertising ? 0x55_5555 : crcInit[ll.accessAddress] else { continue }
            total += 1
            let pdu = UnsafeRawBufferPointer(rebasing: r.bytes[4..<(6 + ll.length)])
            if LLCRC.compute(pdu, crcInit: i) == crc { equal += 1 }
        }
        #expect(total == 307)
        // Ubertooth does not check CRCs: 2 packets arrived with bit errors.
        #expect(equal == 305)
    }
}
