import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// SMP PDUs from btstack_sm_pairing.pklg and crackle_le_secure_connections.pcapng (public corpus).
@Suite struct SMPTests {
    @Test func names() {
        #expect(SMPCode(rawValue: 0x07).name == "Central Identification")
        #expect(SMPCode(rawValue: 0x0E).name == "Pairing Keypress Notification")
        #expect(SMPCode(rawValue: 0x0F).name == "Unknown")
        #expect(SMPIOCapability(rawValue: 4).name == "KeyboardDisplay")
        #expect(SMPFailureReason(rawValue: 0x0B).name == "DHKey Check Failed")
        #expect(SMPFailureReason(rawValue: 0x0F).name == "Key Rejected")
        #expect(SMPFailureReason(rawValue: 0x40).name == "Unknown")
        #expect(SMPKeypressType(rawValue: 4).name == "Passkey Entry Completed")
    }

    @Test func pairingRequestBtstackFrame134() {
        withBytes("01 04 00 01 10 07 07") { p in
            let s = SMPPDU(bytes: p)
            let f = s.pairingFeatures!
            #expect(s.error == nil && f.ioCapability == .keyboardDisplay && f.oobDataFlag == 0)
            #expect(f.authReq.bondingFlags == 1 && !f.authReq.contains(.mitm) && f.maxEncryptionKeySize == 16)
            #expect(f.initiatorKeys == [.encKey, .idKey, .signKey] && f.responderKeys.rawValue == 7)
            #expect(SMPPairingRequest(f).encode() == Array(p) && SMPPairingRequest(s)?.features == f)
            #expect(
                json(s)
                    == #"{"opcode":1,"name":"Pairing Request","io_capability":4,"io_capability_name":"KeyboardDisplay","oob":0,"auth_req":1,"bonding":true,"mitm":false,"sc":false,"keypress":false,"ct2":false,"max_key_size":16,"initiator_key_distribution":7,"initiator_keys":["EncKey","IdKey","SignKey"],"responder_key_distribution":7,"responder_keys":["EncKey","IdKey","SignKey"]}"#
            )
            #expect(s.summary == "SMP Pairing Request io=KeyboardDisplay auth=0x01 keysize=16")
        }
    }

    @Test func secureConnectionsPairingRequestCrackleFrame57() {
        withBytes("01 03 00 09 10 0d 0f") { p in
            let f = SMPPDU(bytes: p).pairingFeatures!
            #expect(f.ioCapability == .noInputNoOutput && f.authReq.contains(.secureConnections) && f.authReq.contains(.bonding))
            #expect(f.initiatorKeys == [.encKey, .signKey, .linkKey] && f.responderKeys.contains(.linkKey))
        }
    }

    @Test func keyDistributionBtstackFrames176To179() {
        withBytes("06 ef 2f d9 0b 04 7a e9 a1 cf c3 a3 83 b7 38 30 73") { p in
            let s = SMPPDU(bytes: p)
            #expect(s.value128!.first == 0xEF && s.value128!.count == 16)
            #expect(json(s) == #"{"opcode":6,"name":"Encryption Information","ltk":"ef2fd90b047ae9a1cfc3a383b7383073"}"#)
        }
        withBytes("07 5b b4 cf 10 70 5f 3c 2d e3 b3") { p in
            let s = SMPPDU(bytes: p)
            #expect(s.ediv == 0xB45B && Array(s.rand!) == [0xCF, 0x10, 0x70, 0x5F, 0x3C, 0x2D, 0xE3, 0xB3])
        }
        withBytes("09 00 ef 32 07 dc 1b 00") { p in
            let s = SMPPDU(bytes: p)
            #expect(s.identityAddress?.type == .public && s.identityAddress?.address.description == "00:1b:dc:07:32:ef")
            #expect(s.summary == "SMP Identity Address Information 00:1b:dc:07:32:ef (public)")
        }
        withBytes("0b 01") { p in // frame 133
            #expect(SMPPDU(bytes: p).authReq == .bonding)
            #expect(SMPSecurityRequest(.bonding).encode() == Array(p))
        }
    }

    @Test func publicKeyCrackleFrame75() {
        let x = "440ed0f2bcb429aa389228a83cf340bc8f196c942bbeaa30e1b1fbf83abb5be7"
        let y = "01d0854bd9b1834c2a89716b6cfbd4f60956835b664fc8534378cb71afd2a759"
        withBytes("0c" + x + y) { p in
            let s = SMPPDU(bytes: p)
            #expect(s.error == nil && Hex.string(s.publicKeyX!) == x && Hex.string(s.publicKeyY!) == y)
        }
    }

    @Test func failedKeypressAndMalformed() {
        withBytes("05 08") { p in
            let s = SMPPDU(bytes: p)
            #expect(s.reason == .unspecifiedReason && s.summary == "SMP Pairing Failed reason=Unspecified Reason")
            #expect(SMPPairingFailed(.unspecifiedReason).encode() == Array(p))
        }
        withBytes("0e 01") { p in #expect(SMPPDU(bytes: p).keypressType?.name == "Passkey Digit Entered") }
        withBytes("01 04 00 01") { p in
            let s = SMPPDU(bytes: p)
            #expect(s.error?.code == .truncated && s.error?.layer == "smp" && s.pairingFeatures == nil)
        }
        withBytes("05 08 00") { p in
            let s = SMPPDU(bytes: p)
            #expect(s.error?.code == .invalidLength && s.reason == .unspecifiedReason)
        }
        withBytes("20 01") { p in #expect(SMPPDU(bytes: p).error == nil && SMPPDU(bytes: p).name == "Unknown") }
    }
}

/// Every SMP command type: encode, decode through SMPPDU and the table, same bytes back.
@Suite struct SMPEncodeRoundTripTests {
    func decode(_ b: [UInt8], _ check: (SMPPDU) -> Void) { b.withUnsafeBytes { check(SMPPDU(bytes: $0)) } }

    /// Decodes by the registry and encodes again: the same bytes, the same type.
    func roundTrip<C: SMPCommand>(_ c: C, _ hex: String? = nil) throws {
        let b = c.encode()
        if let hex { #expect(Hex.string(b) == hex) }
        #expect(try C.decode(b) == c)
        let viaTable = b.withUnsafeBytes { SMPCommands.decode(SMPPDU(bytes: $0)) }
        #expect(viaTable?.encode() == b && (viaTable as? C) == c)
    }

    @Test func value128() throws {
        let v: [UInt8] = Array(0x10...0x1F)
        try roundTrip(SMPPairingConfirm(value: v), "03" + Hex.string(v))
        try roundTrip(SMPPairingRandom(value: v), "04" + Hex.string(v))
        try roundTrip(SMPEncryptionInformation(value: v), "06" + Hex.string(v))
        try roundTrip(SMPIdentityInformation(value: v), "08" + Hex.string(v))
        try roundTrip(SMPSigningInformation(value: v), "0a" + Hex.string(v))
        try roundTrip(SMPPairingDHKeyCheck(value: v), "0d" + Hex.string(v))
    }

    @Test func centralIdentification() throws {
        let c = SMPCentralIdentification(ediv: 0xBEEF, rand: [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(c.encode() == [0x07, 0xEF, 0xBE, 1, 2, 3, 4, 5, 6, 7, 8])
        try roundTrip(c)
    }

    @Test func identityAddressPublicKeyKeypressAndFailure() throws {
        let a = BDAddr(string: "c0:ba:0d:00:00:02")!
        try roundTrip(SMPIdentityAddressInformation(addressType: .random, address: a), "09010200000dbac0")
        decode(SMPIdentityAddressInformation(addressType: .random, address: a).encode()) { s in
            #expect(s.summary == "SMP Identity Address Information c0:ba:0d:00:00:02 (random)")
        }
        let x = [UInt8](repeating: 0xAA, count: 32), y = [UInt8](repeating: 0x55, count: 32)
        try roundTrip(SMPPairingPublicKey(x: x, y: y))
        try roundTrip(SMPPairingKeypressNotification(SMPKeypressType(rawValue: 4)), "0e04")
        try roundTrip(SMPPairingFailed(.confirmValueFailed), "0504")
        try roundTrip(SMPSecurityRequest([.bonding, .mitm]), "0b05")
        let f = SMPPairingFeatures(
            ioCapability: .keyboardDisplay, authReq: [.bonding, .mitm, .secureConnections],
            initiatorKeys: [], responderKeys: [.encKey, .idKey, .signKey])
        try roundTrip(SMPPairingRequest(f), "0104000d100007")
        try roundTrip(SMPPairingResponse(f), "0204000d100007")
    }

    /// Real PDUs of the corpus (btstack_sm_pairing.pklg frames 134, 176-179; crackle frame 57)
    /// decode by the table and encode back to the same bytes.
    @Test func corpusPDUsRoundTrip() {
        for hex in [
            "01 04 00 01 10 07 07", "01 03 00 09 10 0d 0f", "06 ef 2f d9 0b 04 7a e9 a1 cf c3 a3 83 b7 38 30 73",
            "07 5b b4 cf 10 70 5f 3c 2d e3 b3", "09 00 ef 32 07 dc 1b 00", "0b 01", "05 08"
        ] {
            withBytes(hex) { p in
                let c = SMPCommands.decode(SMPPDU(bytes: p))
                #expect(c != nil && c?.encode() == Array(p), "\(hex)")
            }
        }
    }

    /// A wrong length or another code is a typed error, never a trap; unknown codes are no command.
    @Test func malformedIsAnError() {
        #expect(throws: DecodeError.self) { try SMPPairingFailed.decode([0x05]) }
        #expect(throws: DecodeError.self) { try SMPPairingFailed.decode([0x05, 0x08, 0x00]) }
        #expect(throws: DecodeError.self) { try SMPPairingFailed.decode([0x0B, 0x01]) }
        #expect(throws: DecodeError.self) { try SMPPairingPublicKey.decode([0x0C] + [UInt8](repeating: 0, count: 40)) }
        #expect((try? SMPPairingFailed.decode([0x0B, 0x01])) == nil)
        withBytes("20 01") { p in #expect(SMPCommands.decode(SMPPDU(bytes: p)) == nil) }
        withBytes("04 01 02") { p in #expect(SMPCommands.decode(SMPPDU(bytes: p)) == nil) }
        #expect(SMPCommands.types.count == 14)
        #expect(SMPCommands.secret(.encryptionInformation)?.label == "SMP Encryption Information LTK")
        #expect(SMPCommands.secret(.pairingRequest) == nil)
    }
}
