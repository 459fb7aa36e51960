import Testing
@testable import BluesiftSecurity

// Mesh Protocol v1.1 chapter 8 "Sample data", as reproduced in BlueZ unit/test-mesh-crypto.c
// (8.1, 8.2, 8.3.1-8.3.11, 8.3.22, 8.4.3, 8.4.6) and BTstack test/mesh/mesh_message_test.cpp
// (the network and lower transport PDUs of messages 12, 14-16, 18-24), and the PB-ADV
// provisioning sample (8.7) with its HMAC-SHA256 variant as reproduced by mesh-link-js and
// Silvair's python-bluetooth-mesh tests.

let netKey = hex("7dd7364cd842ad18c17c2b820c84c3d6")
let appKey = hex("63964771734fbd76e3b40519d1d94a48")
let devKey = hex("9d6dd0e96eb25dc19a40ed9914f8f03f")
/// 8.2.3: LPN 0x1201, Friend 0x2345, LPNCounter 0x0000, FriendCounter 0x072f.
let friendP = MeshCrypto.friendshipP(lpnAddress: 0x1201, friendAddress: 0x2345, lpnCounter: 0, friendCounter: 0x072F)

@Suite struct MeshToolboxTests {
    /// 8.1.1-8.1.6.
    @Test func toolboxFunctions() {
        #expect(MeshCrypto.s1("test") == hex("b73cefbd641ef2ea598c2b6efb62f79c"))
        // 8.1.2: SALT = s1("salt"), P = s1("info").
        #expect(MeshCrypto.s1("salt") == hex("2ba14ffa0df84a2831938d57d276cab4"))
        #expect(MeshCrypto.s1("info") == hex("5a09d60797eeb4478aada59db3352a0d"))
        #expect(
            MeshCrypto.k1(n: hex("3216d1509884b533248541792b877f98"), salt: MeshCrypto.s1("salt"), p: MeshCrypto.s1("info"))
                == hex("f6ed15a8934afbe7d83e8dcb57fcf5d7"))
        let n = hex("f7a2a44f8e8a8029064f173ddc1e2b00")
        let m = MeshCrypto.k2(n: n, p: [0x00])
        #expect(m.nid == 0x7F)
        #expect(m.encryptionKey == hex("9f589181a0f50de73c8070c7a6d27f46"))
        #expect(m.privacyKey == hex("4c715bd4a64b938f99b453351653124f"))
        let f = MeshCrypto.k2(n: n, p: hex("010203040506070809"))
        #expect(f.nid == 0x73)
        #expect(f.encryptionKey == hex("11efec0642774992510fb5929646df49"))
        #expect(f.privacyKey == hex("d4d7cc0dfa772d836a8df9df5510d7a7"))
        #expect(MeshCrypto.k3(n) == hex("ff046958233db014"))
        #expect(MeshCrypto.k4(hex("3216d1509884b533248541792b877f98")) == 0x38)
    }

    /// 8.2.1-8.2.6, the private beacon keys of 8.4.6, virtual addresses of messages 22-24.
    @Test func derivedKeys() {
        #expect(MeshCrypto.k4(appKey) == 0x26)
        let m = MeshCrypto.k2(n: netKey, p: [0x00])
        #expect(m.nid == 0x68)
        #expect(m.encryptionKey == hex("0953fa93e7caac9638f58820220a398e"))
        #expect(m.privacyKey == hex("8b84eedec100067d670971dd2aa700cf"))
        #expect(friendP == hex("01120123450000072f"))
        let f = MeshCrypto.k2(n: netKey, p: friendP)
        #expect(f.nid == 0x5E)
        #expect(f.encryptionKey == hex("be635105434859f484fc798e043ce40e"))
        #expect(f.privacyKey == hex("5d396d4b54d3cbafe943e051fe9a4eb8"))
        #expect(MeshCrypto.k3(netKey) == hex("3ecaff672f673370"))
        #expect(MeshCrypto.identityKey(netKey: netKey) == hex("84396c435ac48560b5965385253e210c"))
        #expect(MeshCrypto.beaconKey(netKey: netKey) == hex("5423d967da639a99cb02231a83f7d254"))
        #expect(MeshCrypto.privateBeaconKey(netKey: hex("f7a2a44f8e8a8029064f173ddc1e2b00")) == hex("6be76842460b2d3a5850d4698409f1bb"))
        #expect(MeshCrypto.privateBeaconKey(netKey: hex("3bbb6f1fbd53e157417f308ce7aec58f")) == hex("ca478cdac626b7a8522d7272dd124f26"))
        #expect(MeshCrypto.virtualAddress(label: hex("0073e7e4d8b9440faf8415df4c56c0e1")) == 0xB529)
        #expect(MeshCrypto.virtualAddress(label: hex("f4a002c7fb1e4ca0a469a021de0db875")) == 0x9736)
        #expect(MeshCrypto.virtualAddress(label: [1, 2, 3]) == nil)
    }

    /// The nonces of messages 1, 6, 16, 18, 22 (§3.9.5.1-3); proxy and solicitation nonces
    /// are checked against the package in MeshOracleTests and against BTstack's proxy
    /// configuration PDU below.
    @Test func nonces() {
        #expect(MeshNonce.network(ctl: true, ttl: 0, seq: 1, src: 0x1201, ivIndex: 0x12345678) == hex("00800000011201000012345678"))
        #expect(MeshNonce.network(ctl: false, ttl: 4, seq: 0x3129AB, src: 0x0003, ivIndex: 0x12345678) == hex("00043129ab0003000012345678"))
        #expect(MeshNonce.device(aszmic: false, seq: 0x3129AB, src: 0x0003, dst: 0x1201, ivIndex: 0x12345678) == hex("02003129ab0003120112345678"))
        #expect(MeshNonce.device(aszmic: false, seq: 6, src: 0x1201, dst: 0x0003, ivIndex: 0x12345678) == hex("02000000061201000312345678"))
        #expect(MeshNonce.application(aszmic: false, seq: 7, src: 0x1201, dst: 0xFFFF, ivIndex: 0x12345678) == hex("01000000071201ffff12345678"))
        #expect(MeshNonce.application(aszmic: false, seq: 0x07080B, src: 0x1234, dst: 0xB529, ivIndex: 0x12345677) == hex("010007080b1234b52912345677"))
        #expect(MeshNonce.application(aszmic: true, seq: 0x07080D, src: 0x1234, dst: 0x9736, ivIndex: 0x12345677) == hex("018007080d1234973612345677"))
        #expect(MeshNonce.proxy(seq: 1, src: 0x0001, ivIndex: 0x12345678) == hex("03000000010001000012345678"))
        #expect(MeshNonce.proxySolicitation(sseq: 0x010203, ssrc: 0x1234) == hex("04000102031234000000000000"))
    }

    /// The in-place CCM the network and upper transport layers use (nonce on the stack, output
    /// written where the caller says) gives the octets of the array form: payloads of 0-40
    /// octets, 32- and 64-bit MICs, with and without a 16-octet Label UUID as additional data.
    @Test func inPlaceCCMMatchesArrays() {
        let ccm = AESCCM(key: appKey)
        let nonce = MeshNonce.application(aszmic: true, seq: 0x07080D, src: 0x1234, dst: 0x9736, ivIndex: 0x12345677)
        let block = MeshNonceBlock.access(application: true, aszmic: true, seq: 0x07080D, src: 0x1234, dst: 0x9736, ivIndex: 0x12345677)
        for length in 0...40 {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) }
            for micSize in [4, 8] {
                for label in [[UInt8](), hex("0073e7e4d8b9440faf8415df4c56c0e1")] {
                    var expected = payload
                    let mic = ccm.sealTag(&expected, nonce: nonce, aadBytes: label, tagLength: micSize)
                    expected += mic
                    var sealed = payload + [UInt8](repeating: 0, count: micSize)
                    sealed.withUnsafeMutableBytes { o in
                        block.withBytes { n in
                            label.withUnsafeBytes { aad in
                                ccm.seal(
                                    UnsafeMutableRawBufferPointer(rebasing: o[0..<length]), nonce: n, aad: aad,
                                    tag: UnsafeMutableRawBufferPointer(rebasing: o[length...]))
                            }
                        }
                    }
                    #expect(sealed == expected, "length \(length), MIC \(micSize), label \(label.count)")
                    var opened = [UInt8](repeating: 0xEE, count: length)
                    var damaged = sealed
                    damaged[damaged.count - 1] ^= 1
                    for (input, verifies) in [(sealed, true), (damaged, false)] {
                        let ok = input.withUnsafeBytes { b in
                            opened.withUnsafeMutableBytes { out in
                                block.withBytes { n in
                                    label.withUnsafeBytes { aad in
                                        ccm.open(
                                            UnsafeRawBufferPointer(rebasing: b[0..<length]), tag: UnsafeRawBufferPointer(rebasing: b[length...]),
                                            nonce: n, aad: aad, into: out)
                                    }
                                }
                            }
                        }
                        #expect(ok == verifies, "length \(length), MIC \(micSize), label \(label.count)")
                        #expect(opened == payload, "length \(length), MIC \(micSize), label \(label.count)")
                    }
                }
            }
        }
    }
}

/// One of the sample messages: its network PDU and what it carries.
struct SampleMessage: Sendable, CustomStringConvertible {
    var number: String
    var friendship = false
    var pdu: String
    var ctl: Bool
    var ttl: UInt8
    var seq: UInt32
    var src: UInt16
    var dst: UInt16
    var lower: String
    var ivIndex: UInt32 = 0x12345678
    var description: String { "message \(number)" }
}

let sampleMessages: [SampleMessage] = [
    .init(number: "1", pdu: "68eca487516765b5e5bfdacbaf6cb7fb6bff871f035444ce83a670df", ctl: true, ttl: 0, seq: 1, src: 0x1201, dst: 0xFFFD, lower: "034b50057e400000010000"),
    .init(number: "2", pdu: "68d4c826296d7979d7dbc0c9b4d43eebec129d20a620d01e", ctl: true, ttl: 0, seq: 0x014820, src: 0x2345, dst: 0x1201, lower: "04320308ba072f"),
    .init(number: "3", pdu: "68da062bc96df253273086b8c5ee00bdd9cfcc62a2ddf572", ctl: true, ttl: 0, seq: 0x2B3832, src: 0x2FE3, dst: 0x1201, lower: "04fa0205a6000a"),
    .init(number: "4", friendship: true, pdu: "5e84eba092380fb0e5d0ad970d579a4e88051c", ctl: true, ttl: 0, seq: 2, src: 0x1201, dst: 0x2345, lower: "0100"),
    .init(number: "5", friendship: true, pdu: "5eafd6f53c43db5c39da1792b1fee9ec74b786c56d3a9dee", ctl: true, ttl: 0, seq: 0x014834, src: 0x2345, dst: 0x1201, lower: "02001234567800"),
    .init(number: "6 segment 0", pdu: "68cab5c5348a230afba8c63d4e686364979deaf4fd40961145939cda0e", ctl: false, ttl: 4, seq: 0x3129AB, src: 0x0003, dst: 0x1201, lower: "8026ac01ee9dddfd2169326d23f3afdf"),
    .init(number: "6 segment 1", pdu: "681615b5dd4a846cae0c032bf0746f44f1b8cc8ce5edc57e55beed49c0", ctl: false, ttl: 4, seq: 0x3129AC, src: 0x0003, dst: 0x1201, lower: "8026ac21cfdc18c52fdef772e0e17308"),
    .init(number: "7", pdu: "68e476b5579c980d0d730f94d7f3509df987bb417eb7c05f", ctl: true, ttl: 0x0B, seq: 0x014835, src: 0x2345, dst: 0x0003, lower: "00a6ac00000002"),
    .init(number: "8", pdu: "684daa6267c2cf0e2f91add6f06e66006844cec97f973105ae2534f958", ctl: false, ttl: 4, seq: 0x3129AD, src: 0x0003, dst: 0x1201, lower: "8026ac01ee9dddfd2169326d23f3afdf"),
    .init(number: "9", pdu: "68aec467ed4901d85d806bbed248614f938067b0d983bb7b", ctl: true, ttl: 0x0B, seq: 0x014836, src: 0x2345, dst: 0x0003, lower: "00a6ac00000003"),
    .init(number: "10", friendship: true, pdu: "5e7b786568759f7777ed355afaf66d899c1e3d", ctl: true, ttl: 0, seq: 3, src: 0x1201, dst: 0x2345, lower: "0101"),
    .init(number: "11", friendship: true, pdu: "5e6ebfc021edf5d5e748a20ecfd98ddfd32de80befb400213d113813b5", ctl: false, ttl: 3, seq: 0x3129AD, src: 0x0003, dst: 0x1201, lower: "c026ac01ee9dddfd2169326d23f3afdf"),
    .init(number: "12", friendship: true, pdu: "5e8a18fc6e4d05ae21466087599c2426ce9a35", ctl: true, ttl: 0, seq: 4, src: 0x1201, dst: 0x2345, lower: "0101"),
    .init(number: "14", friendship: true, pdu: "5e0bbaf92b5c8f7d3ae62a3c75dff683dce24e", ctl: true, ttl: 0, seq: 5, src: 0x1201, dst: 0x2345, lower: "0100"),
    .init(number: "16", pdu: "68e80e5da5af0e6b9be7f5a642f2f98680e61c3a8b47f228", ctl: false, ttl: 0x0B, seq: 6, src: 0x1201, dst: 0x0003, lower: "0089511bf1d1a81c11dcef"),
    .init(number: "18", pdu: "6848cba437860e5673728a627fb938535508e21a6baf57", ctl: false, ttl: 3, seq: 7, src: 0x1201, dst: 0xFFFF, lower: "665a8bde6d9106ea078a"),
    .init(number: "19", pdu: "68110edeecd83c3010a05e1b23a926023da75d25ba91793736", ctl: false, ttl: 3, seq: 9, src: 0x1201, dst: 0xFFFF, lower: "66ca6cd88e698d1265f43fc5"),
    .init(number: "20", pdu: "e85cca51e2e8998c3dc87344a16c787f6b08cc897c941a5368", ctl: false, ttl: 3, seq: 0x070809, src: 0x1234, dst: 0xFFFF, lower: "669c9803e110fea929e9542d", ivIndex: 0x12345677),
    .init(number: "21", pdu: "e84e8fbe003f58a4d61157bb76352ea6307eebfe0f30b83500e9", ctl: false, ttl: 3, seq: 0x07080A, src: 0x1234, dst: 0xC105, lower: "664d92e9dfcf3ab85b6e8fcf03", ivIndex: 0x12345677),
    .init(number: "22", pdu: "e8d85caecef1e3ed31f3fdcf88a411135fea55df730b6b28e255", ctl: false, ttl: 3, seq: 0x07080B, src: 0x1234, dst: 0xB529, lower: "663871b904d431526316ca48a0", ivIndex: 0x12345677),
    .init(number: "23", pdu: "e877a48dd5fe2d7a9d696d3dd16a75489696f0b70c711b881385", ctl: false, ttl: 3, seq: 0x07080C, src: 0x1234, dst: 0x9736, lower: "662456db5e3100eef65daa7a38", ivIndex: 0x12345677),
    .init(number: "24 segment 0", pdu: "e8624e65bb8c1794e998b4081f47a35251fdd3896d99e4db489b918599", ctl: false, ttl: 3, seq: 0x07080D, src: 0x1234, dst: 0x9736, lower: "e6a03401c3c51d8e476b28e3aa5001f3", ivIndex: 0x12345677),
    .init(number: "24 segment 1", pdu: "e8a7d0f0a2ea42dc2f4dd6fb4db33a6c088d023b47", ctl: false, ttl: 3, seq: 0x07080E, src: 0x1234, dst: 0x9736, lower: "e6a034211c01cea6", ivIndex: 0x12345677)
]

@Suite struct MeshNetworkSampleTests {
    static let flooding = MeshNetworkCredentials(netKey: netKey)!
    static let friendship = MeshNetworkCredentials(netKey: netKey, p: friendP)!

    /// Every sample network PDU decrypts to its fields with the IV index its IVI selects
    /// (messages 20-24 use 0x12345677 while the node is at 0x12345678), and encrypting those
    /// fields gives the sample's bytes back.
    @Test(arguments: sampleMessages) func decryptAndEncrypt(_ m: SampleMessage) throws {
        let c = m.friendship ? Self.friendship : Self.flooding
        let p = try MeshNetworkSecurity.decrypt(hex(m.pdu), credentials: c, currentIVIndex: 0x12345678)
        #expect(p.nid == (m.friendship ? 0x5E : 0x68))
        #expect(p.ctl == m.ctl)
        #expect(p.ttl == m.ttl)
        #expect(p.seq == m.seq)
        #expect(p.src == m.src)
        #expect(p.dst == m.dst)
        #expect(p.transportPDU == hex(m.lower))
        #expect(p.ivIndex == m.ivIndex)
        #expect(p.ivi == UInt8(m.ivIndex & 1))
        #expect(try MeshNetworkSecurity.encrypt(p, credentials: c) == hex(m.pdu))
    }

    /// Privacy obfuscation alone (§3.9.7.3), message 1: the deobfuscated header.
    @Test func deobfuscateMessage1() throws {
        let h = try MeshNetworkSecurity.deobfuscate(hex(sampleMessages[0].pdu), credentials: Self.flooding, ivIndex: 0x12345678)
        #expect(h == MeshNetworkHeader(ivi: 0, nid: 0x68, ctl: true, ttl: 0, seq: 1, src: 0x1201))
        // Obfuscating twice is the identity.
        let pdu = hex(sampleMessages[0].pdu)
        #expect(
            try MeshNetworkSecurity.obfuscate(
                MeshNetworkSecurity.obfuscate(pdu, credentials: Self.flooding, ivIndex: 7),
                credentials: Self.flooding, ivIndex: 7) == pdu)
    }

    @Test func wrongKeyOrIVIndex() {
        let pdu = hex(sampleMessages[0].pdu)
        #expect(throws: MeshCryptoError.self) { try MeshNetworkSecurity.decrypt(pdu, credentials: Self.friendship, currentIVIndex: 0x12345678) }
        do {
            _ = try MeshNetworkSecurity.decrypt(pdu, credentials: Self.flooding, currentIVIndex: 0x12345676)
            Issue.record("decrypted with the wrong IV index")
        } catch { #expect(error.code == .micMismatch) }
        do {
            _ = try MeshNetworkSecurity.decrypt(pdu, credentials: Self.friendship, currentIVIndex: 0x12345678)
        } catch { #expect(error.code == .nidMismatch) }
        var damaged = pdu
        damaged[12] ^= 1
        do {
            _ = try MeshNetworkSecurity.decrypt(damaged, credentials: Self.flooding, currentIVIndex: 0x12345678)
            Issue.record("damaged PDU decrypted")
        } catch { #expect(error.code == .micMismatch) }
    }

    /// BTstack's proxy configuration test (Set Filter Type over the proxy nonce, §3.9.5.4):
    /// NID 0x10 with its EncryptionKey/PrivacyKey, SEQ 1, SRC 0x0001, DST 0, IV 0x12345678.
    @Test func proxyConfiguration() throws {
        let c = MeshNetworkCredentials(
            nid: 0x10, encryptionKey: hex("3a4fe84a6cc2c6a766ea93f1084d4039"),
            privacyKey: hex("f695fcce709ccface4d8b7a1e6e39d25"))
        let pdu = hex("10386bd60efbbb8b8c28512e792d3711f4b526")
        let p = try MeshNetworkSecurity.decrypt(pdu, credentials: c, currentIVIndex: 0x12345678, nonce: .proxy)
        #expect(p.ctl && p.ttl == 0 && p.seq == 1 && p.src == 0x0001 && p.dst == 0x0000)
        #expect(p.transportPDU == hex("0000"))
        #expect(try MeshNetworkSecurity.encrypt(p, credentials: c, nonce: .proxy) == pdu)
        // The network nonce does not open it.
        #expect(throws: MeshCryptoError.self) { try MeshNetworkSecurity.decrypt(pdu, credentials: c, currentIVIndex: 0x12345678) }
    }

    /// No input traps: every prefix of every sample is a typed error or a result.
    @Test func shortInputs() {
        for m in sampleMessages {
            let pdu = hex(m.pdu)
            let c = m.friendship ? Self.friendship : Self.flooding
            for n in 0..<pdu.count {
                do {
                    _ = try MeshNetworkSecurity.decrypt(Array(pdu[0..<n]), credentials: c, currentIVIndex: 0x12345678)
                    Issue.record("\(m) prefix \(n) decrypted")
                } catch {
                    // Shorter than header and Privacy Random, or than DST and NetMIC: truncated;
                    // otherwise the shortened PDU fails its NetMIC.
                    #expect(error.code == (n < 9 + (m.ctl ? 8 : 4) || n < 14 ? .truncated : .micMismatch), "\(m) prefix \(n)")
                }
            }
        }
        #expect(throws: MeshCryptoError.self) { try MeshUpperTransport.decrypt([1, 2, 3, 4], key: MeshAccessKey(appKey: appKey)!, szmic: false, seq: 0, src: 1, dst: 2, ivIndex: 0) }
        #expect(throws: MeshCryptoError.self) { try MeshSecureNetworkBeacon(decoding: [0x01, 0x00]) }
        #expect(throws: MeshCryptoError.self) { try MeshPrivateBeacon(decrypting: [0x02], privateBeaconKey: appKey) }
        #expect(throws: MeshCryptoError.self) { try MeshProvisioningSecurity.decryptData([0], sessionKey: appKey, sessionNonce: [UInt8](repeating: 0, count: 13)) }
        #expect(throws: MeshCryptoError.self) { try MeshProvisioningData(decoding: [0, 1]) }
    }
}

@Suite struct MeshUpperTransportSampleTests {
    static let app = MeshAccessKey(appKey: appKey)!
    static let dev = MeshAccessKey(devKey: devKey)!

    struct Case: Sendable, CustomStringConvertible {
        var number: String
        var application: Bool
        var upper: String
        var access: String
        var szmic = false
        var seq: UInt32
        var src: UInt16
        var dst: UInt16
        var ivIndex: UInt32 = 0x12345678
        var label: String? = nil
        var description: String { "message \(number)" }
    }

    /// Upper transport PDUs: the lower transport PDUs above without their 1-octet
    /// (unsegmented) or 4-octet (segmented) header, segments joined.
    static let cases: [Case] = [
        .init(
            number: "6", application: false, upper: "ee9dddfd2169326d23f3afdf" + "cfdc18c52fdef772e0e17308",
            access: "0056341263964771734fbd76e3b40519d1d94a48", seq: 0x3129AB, src: 0x0003, dst: 0x1201),
        .init(number: "16", application: false, upper: "89511bf1d1a81c11dcef", access: "800300563412", seq: 6, src: 0x1201, dst: 0x0003),
        .init(number: "18", application: true, upper: "5a8bde6d9106ea078a", access: "0400000000", seq: 7, src: 0x1201, dst: 0xFFFF),
        .init(number: "19", application: true, upper: "ca6cd88e698d1265f43fc5", access: "04000000010703", seq: 9, src: 0x1201, dst: 0xFFFF),
        .init(number: "20", application: true, upper: "9c9803e110fea929e9542d", access: "04000000010703", seq: 0x070809, src: 0x1234, dst: 0xFFFF, ivIndex: 0x12345677),
        .init(number: "21", application: true, upper: "4d92e9dfcf3ab85b6e8fcf03", access: "d50a0048656c6c6f", seq: 0x07080A, src: 0x1234, dst: 0xC105, ivIndex: 0x12345677),
        .init(
            number: "22", application: true, upper: "3871b904d431526316ca48a0", access: "d50a0048656c6c6f", seq: 0x07080B, src: 0x1234, dst: 0xB529,
            ivIndex: 0x12345677, label: "0073e7e4d8b9440faf8415df4c56c0e1"),
        .init(
            number: "23", application: true, upper: "2456db5e3100eef65daa7a38", access: "d50a0048656c6c6f", seq: 0x07080C, src: 0x1234, dst: 0x9736,
            ivIndex: 0x12345677, label: "f4a002c7fb1e4ca0a469a021de0db875"),
        .init(
            number: "24", application: true, upper: "c3c51d8e476b28e3aa5001f3" + "1c01cea6", access: "ea0a00576f726c64", szmic: true, seq: 0x07080D,
            src: 0x1234, dst: 0x9736, ivIndex: 0x12345677, label: "f4a002c7fb1e4ca0a469a021de0db875")
    ]

    @Test(arguments: cases) func decryptAndEncrypt(_ c: Case) throws {
        let key = c.application ? Self.app : Self.dev
        let label = c.label.map(hex)
        let access = try MeshUpperTransport.decrypt(
            hex(c.upper), key: key, szmic: c.szmic, seq: c.seq, src: c.src, dst: c.dst,
            ivIndex: c.ivIndex, label: label)
        #expect(access == hex(c.access))
        #expect(
            try MeshUpperTransport.encrypt(
                accessPayload: access, key: key, szmic: c.szmic, seq: c.seq, src: c.src, dst: c.dst,
                ivIndex: c.ivIndex, label: label) == hex(c.upper))
        if label != nil {
            // Without the Label UUID as additional data the TransMIC fails.
            #expect(throws: MeshCryptoError.self) {
                try MeshUpperTransport.decrypt(hex(c.upper), key: key, szmic: c.szmic, seq: c.seq, src: c.src, dst: c.dst, ivIndex: c.ivIndex)
            }
        }
    }

    @Test func aid() {
        #expect(Self.app.aid == 0x26 && Self.app.isApplicationKey)
        #expect(Self.dev.aid == 0 && !Self.dev.isApplicationKey)
        #expect(!"\(Self.app)".contains("63964771"))
    }
}

@Suite struct MeshBeaconSampleTests {
    /// 8.4.3, and the IV Update variant of Silvair's tests.
    @Test func secureNetworkBeacon() throws {
        let bytes = hex("01003ecaff672f673370123456788ea261582f364f6f")
        let b = try MeshSecureNetworkBeacon(decoding: bytes)
        #expect(b.flags == 0 && !b.keyRefresh && !b.ivUpdate)
        #expect(b.networkID == hex("3ecaff672f673370"))
        #expect(b.ivIndex == 0x12345678)
        #expect(b.authenticationValue == hex("8ea261582f364f6f"))
        let bk = MeshCrypto.beaconKey(netKey: netKey)
        #expect(b.authenticates(beaconKey: bk))
        #expect(b.encode() == bytes)
        #expect(MeshSecureNetworkBeacon(flags: 0, networkID: b.networkID, ivIndex: 0x12345678, beaconKey: bk).encode() == bytes)
        let u = try MeshSecureNetworkBeacon(decoding: hex("01023ecaff672f67337012345679c2af80ad072a135c"))
        #expect(u.ivUpdate && u.ivIndex == 0x12345679 && u.authenticates(beaconKey: bk))
        var bad = bytes
        bad[13] ^= 1 // IV index changed: the authentication value no longer matches
        #expect(try !MeshSecureNetworkBeacon(decoding: bad).authenticates(beaconKey: bk))
        #expect(throws: MeshCryptoError.self) { try MeshSecureNetworkBeacon(decoding: hex("02") + Array(bytes[1...])) }
    }

    /// 8.4.6.1 (IV Update in progress) and 8.4.6.2 (IV Update complete).
    @Test func privateBeacons() throws {
        let k1 = MeshCrypto.privateBeaconKey(netKey: hex("f7a2a44f8e8a8029064f173ddc1e2b00"))
        let b1 = hex("02435f18f85cf78a3121f58478a561e488e7cbf3174f022a514741")
        let p1 = try MeshPrivateBeacon(decrypting: b1, privateBeaconKey: k1)
        #expect(p1.flags == 0x02 && p1.ivUpdate && !p1.keyRefresh && p1.ivIndex == 0x1010ABCD)
        #expect(p1.random == hex("435f18f85cf78a3121f58478a5"))
        #expect(try p1.encrypt(privateBeaconKey: k1) == b1)
        let k2 = MeshCrypto.privateBeaconKey(netKey: hex("3bbb6f1fbd53e157417f308ce7aec58f"))
        let b2 = hex("021b998f82927535ea6f3076f422ce827408ab2f0ffb94cf97f881")
        let p2 = try MeshPrivateBeacon(decrypting: b2, privateBeaconKey: k2)
        #expect(p2.flags == 0 && p2.ivIndex == 0)
        #expect(try p2.encrypt(privateBeaconKey: k2) == b2)
        do {
            _ = try MeshPrivateBeacon(decrypting: b2, privateBeaconKey: k1)
            Issue.record("another network's private beacon authenticated")
        } catch { #expect(error.code == .micMismatch && error.offset == 19) }
    }
}

@Suite struct MeshProvisioningSampleTests {
    static let provisionerKey = hex("2c31a47b5779809ef44cb5eaaf5c3e43d5f8faad4a8794cb987e9b03745c78dd919512183898dfbecd52e2408e43871fd021109117bd3ed4eaf8437743715d4f")
    static let deviceKey = hex("f465e43ff23d3f1b9dc7dfc04da8758184dbc966204796eccf0d6cf5e16500cc0201d048bcbbd899eeefc424164e33c201c2b010ca6b4d43a8a155cad8ecb279")
    static let ecdh = hex("ab85843a2f6d883f62e5684b38e307335fe6e1945ecd19604105c6f23221eb69")
    static let data = MeshProvisioningData(netKey: hex("efb2255e6422d330088e09bb015ed707"), keyIndex: 0x0567, flags: 0, ivIndex: 0x01020304, unicastAddress: 0x0B0C)

    /// 8.7 PB-ADV provisioning sample: BTM_ECDH_P256_CMAC_AES128_AES_CCM, no OOB.
    @Test func cmacAES128() throws {
        let inputs = MeshProvisioningSecurity.confirmationInputs(
            invite: [0x00], capabilities: hex("0100010000000000000000"), start: hex("0000000000"),
            provisionerPublicKey: Self.provisionerKey, devicePublicKey: Self.deviceKey)
        #expect(inputs.count == 145)
        let salt = MeshProvisioningSecurity.confirmationSalt(inputs: inputs, algorithm: .cmacAES128)
        #expect(salt == hex("5faabe187337c71cc6c973369dcaa79a"))
        let auth = [UInt8](repeating: 0, count: 16)
        let key = MeshProvisioningSecurity.confirmationKey(ecdhSecret: Self.ecdh, salt: salt, authValue: auth, algorithm: .cmacAES128)
        #expect(key == hex("e31fe046c68ec339c425fc6629f0336f"))
        let rp = hex("8b19ac31d58b124c946209b5db1021b9"), rd = hex("55a2a2bca04cd32ff6f346bd0a0c1a3a")
        #expect(MeshProvisioningSecurity.confirmation(key: key, random: rp, authValue: auth, algorithm: .cmacAES128) == hex("b38a114dfdca1fe153bd2c1e0dc46ac2"))
        #expect(MeshProvisioningSecurity.verifyConfirmation(hex("eeba521c196b52cc2e37aa40329f554e"), key: key, random: rd, authValue: auth, algorithm: .cmacAES128))
        #expect(!MeshProvisioningSecurity.verifyConfirmation(hex("eeba521c196b52cc2e37aa40329f554e"), key: key, random: rp, authValue: auth, algorithm: .cmacAES128))
        let ps = MeshProvisioningSecurity.provisioningSalt(confirmationSalt: salt, randomProvisioner: rp, randomDevice: rd)
        #expect(ps == hex("a21c7d45f201cf9489a2fb57145015b4"))
        let sk = MeshProvisioningSecurity.sessionKey(ecdhSecret: Self.ecdh, provisioningSalt: ps)
        let sn = MeshProvisioningSecurity.sessionNonce(ecdhSecret: Self.ecdh, provisioningSalt: ps)
        #expect(sk == hex("c80253af86b33dfa450bbdb2a191fea3"))
        #expect(sn == hex("da7ddbe78b5f62b81d6847487e"))
        #expect(MeshProvisioningSecurity.deviceKey(ecdhSecret: Self.ecdh, provisioningSalt: ps) == hex("0520adad5e0142aa3e325087b4ec16d8"))
        let pdu = hex("d0bd7f4a89a2ff6222af59a90a60ad58acfe3123356f5cec29" + "73e0ec50783b10c7")
        let d = try MeshProvisioningSecurity.decryptData(pdu, sessionKey: sk, sessionNonce: sn)
        #expect(d == Self.data)
        #expect(d.encode() == hex("efb2255e6422d330088e09bb015ed707056700010203040b0c"))
        #expect(try MeshProvisioningSecurity.encryptData(d, sessionKey: sk, sessionNonce: sn) == pdu)
        #expect(!"\(d)".contains("efb2255e"))
        var bad = pdu
        bad[30] ^= 0x80
        do {
            _ = try MeshProvisioningSecurity.decryptData(bad, sessionKey: sk, sessionNonce: sn)
            Issue.record("damaged provisioning data decrypted")
        } catch { #expect(error.code == .micMismatch) }
    }

    /// The HMAC-SHA256 sample of v1.1 (BTM_ECDH_P256_HMAC_SHA256_AES_CCM, static OOB).
    @Test func hmacSHA256() throws {
        let inputs = MeshProvisioningSecurity.confirmationInputs(
            invite: [0x00], capabilities: hex("0100030001000000000000"), start: hex("0100010000"),
            provisionerPublicKey: Self.provisionerKey, devicePublicKey: Self.deviceKey)
        let salt = MeshProvisioningSecurity.confirmationSalt(inputs: inputs, algorithm: .hmacSHA256)
        #expect(salt.count == 32)
        let auth = hex("906d73a3c7a7cb3ff730dca68a46b9c18d673f50e078202311473ebbe253669f")
        let key = MeshProvisioningSecurity.confirmationKey(ecdhSecret: Self.ecdh, salt: salt, authValue: auth, algorithm: .hmacSHA256)
        let rp = hex("36f968b94a13000e64b223576390db6bcc6d62f02617c369ee3f5b3e89df7e1f")
        let rd = hex("5b9b1fc6a64b2de8bece53187ee989c6566db1fc7dc8580a73dafdd6211d56a5")
        #expect(
            MeshProvisioningSecurity.confirmation(key: key, random: rp, authValue: auth, algorithm: .hmacSHA256)
                == hex("c99b54617ae646f5f32cf7e1ea6fcc49fd69066078eba9580fa6c7031833e6c8"))
        #expect(
            MeshProvisioningSecurity.confirmation(key: key, random: rd, authValue: auth, algorithm: .hmacSHA256)
                == hex("56e3722d291373d38c995d6f942c02928c96abb015c233557d7974b6e2df662b"))
        let ps = MeshProvisioningSecurity.provisioningSalt(confirmationSalt: salt, randomProvisioner: rp, randomDevice: rd)
        let sk = MeshProvisioningSecurity.sessionKey(ecdhSecret: Self.ecdh, provisioningSalt: ps)
        let sn = MeshProvisioningSecurity.sessionNonce(ecdhSecret: Self.ecdh, provisioningSalt: ps)
        #expect(sk == hex("df4a494da3d45405e402f1d6a6cea338"))
        #expect(sn == hex("11b987db2ae41fbb9e96b80446"))
        #expect(MeshProvisioningSecurity.deviceKey(ecdhSecret: Self.ecdh, provisioningSalt: ps) == hex("2770852a737cf05d8813768f22af3a2d"))
        let pdu = hex("f9df98cbb736be1f600659ac4c37821a82db31e410a03de769" + "3a2a0428fbdaf321")
        #expect(try MeshProvisioningSecurity.encryptData(Self.data, sessionKey: sk, sessionNonce: sn) == pdu)
        #expect(try MeshProvisioningSecurity.decryptData(pdu, sessionKey: sk, sessionNonce: sn) == Self.data)
        #expect(MeshProvisioningAlgorithm.hmacSHA256.valueSize == 32)
        #expect("\(MeshProvisioningAlgorithm(rawValue: 7))" == "unknown (0x7)")
    }
}
