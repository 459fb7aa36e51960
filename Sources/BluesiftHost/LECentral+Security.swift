import BluesiftProtocols
import BluesiftSecurity
import BluesiftWire

extension LECentral {
    // MARK: public entry points

    /// Encrypts the link: with `bond`'s key when given (LE Enable Encryption, Vol 4 Part E
    /// §7.8.24), falling back to pairing when the device answers PIN or Key Missing; else pairs.
    public func secure(bond: Bond?) throws(HostError) -> SecureOutcome {
        securityRequest = nil
        if let bond {
            do {
                try startEncryption(ltk: bond.ltk, ediv: bond.ediv, rand: bond.rand)
                let s = LinkSecurity(
                    authenticated: bond.authenticated, secureConnections: bond.secureConnections,
                    keySize: bond.keySize, method: "stored_key")
                security = s
                return SecureOutcome(security: s, bond: nil, paired: false)
            } catch {
                guard case .encryptionFailed(let status) = error, status == HCIStatus.pinOrKeyMissing.rawValue else { throw error }
                var out = try pair()
                out.bondForgotten = true
                return out
            }
        }
        return try pair()
    }

    /// Runs SMP as initiator, encrypts the link, and takes the distributed keys.
    public func pair() throws(HostError) -> SecureOutcome {
        guard let c = connection, let info = controller else { throw lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }
        pairingActive = true; smpInbox.removeAll()
        defer { pairingActive = false; smpInbox.removeAll() }
        let policy = pairing
        let mitm = policy.mitm ?? (policy.ioCapability != .noInputNoOutput)
        var auth: SMPAuthReq = policy.bonding ? .bonding : []
        if mitm { auth.insert(.mitm) }
        if policy.secureConnections { auth.insert(.secureConnections) }
        // §3.5.1: this host distributes no keys; it asks for the device's LTK, IRK and CSRK.
        let preq = SMPPairingFeatures(
            ioCapability: policy.ioCapability, authReq: auth, maxEncryptionKeySize: policy.maxKeySize,
            initiatorKeys: [], responderKeys: policy.bonding ? [.encKey, .idKey, .signKey] : [])
        let preqPDU = SMPPairingRequest(preq).encode()
        try sendL2CAP(cid: L2CAPCID.smp, preqPDU)
        let presPDU = try receiveSMP(.pairingResponse)
        guard let pres = (SMP.command(presPDU) as? SMPPairingResponse)?.features else { throw fail(.invalidParameters) }
        let keySize = Int(min(preq.maxEncryptionKeySize, pres.maxEncryptionKeySize))
        guard keySize >= 7 else { throw fail(.encryptionKeySize) }
        let sc = preq.authReq.contains(.secureConnections) && pres.authReq.contains(.secureConnections)
        let model = AssociationModel.choose(
            initiator: preq.ioCapability, responder: pres.ioCapability,
            mitm: preq.authReq.contains(.mitm) || pres.authReq.contains(.mitm), sc: sc)
        // Addresses as c1/f5 take them: type, then the address MSB-first.
        let ia = SMPCrypto.swapped(info.randomAddress.littleEndianBytes), iat: UInt8 = 1
        let ra = SMPCrypto.swapped(c.peer.littleEndianBytes), rat: UInt8 = c.peerType.rawValue & 1

        var key: [UInt8] // MSB-first: LTK (SC) or STK (legacy)
        if sc {
            key = try pairSecureConnections(model: model, preq: preq, pres: pres, a: [iat] + ia, b: [rat] + ra)
        } else {
            key = try pairLegacy(model: model, preqPDU: preqPDU, presPDU: presPDU, ia: ia, iat: iat, ra: ra, rat: rat)
        }
        // A shorter key keeps its least significant octets (Vol 3 Part H §2.3.4).
        for i in 0..<(16 - keySize) { key[i] = 0 }
        try startEncryption(ltk: SMPCrypto.swapped(key), ediv: 0, rand: [UInt8](repeating: 0, count: 8))
        let authenticated = model != .justWorks
        let s = LinkSecurity(authenticated: authenticated, secureConnections: sc, keySize: keySize, method: model.name)
        security = s

        // Key distribution (§3.6.1): the responder's keys as negotiated, over the encrypted link.
        var keys = pres.responderKeys
        if sc { keys.remove(.encKey) } // LE SC: the LTK is f5's, never sent
        var bond = Bond(
            address: c.peer, addressType: rat == 0 ? "public" : "random",
            ltk: SMPCrypto.swapped(key), keySize: keySize, authenticated: authenticated,
            secureConnections: sc, localAddress: info.randomAddress)
        var gotLTK = sc
        var pending: [SMPCode] = []
        if keys.contains(.encKey) { pending += [.encryptionInformation, .centralIdentification] }
        if keys.contains(.idKey) { pending += [.identityInformation, .identityAddressInformation] }
        if keys.contains(.signKey) { pending += [.signingInformation] }
        while !pending.isEmpty {
            let p = try receiveSMP(nil)
            // receiveSMP checked the length: every field of its code is there.
            let m = SMP.command(p)
            guard let m, let i = pending.firstIndex(of: type(of: m).code) else { throw fail(.unspecifiedReason) }
            pending.remove(at: i)
            switch m {
            case let k as SMPEncryptionInformation: bond.ltk = k.value; gotLTK = true
            case let k as SMPCentralIdentification: bond.ediv = k.ediv; bond.rand = k.rand
            case let k as SMPIdentityInformation: bond.irk = k.value
            case let k as SMPIdentityAddressInformation:
                bond.identityAddressType = k.addressType == .public ? "public" : "random"
                bond.identityAddress = k.address
            case let k as SMPSigningInformation: bond.csrk = k.value
            default: break
            }
        }
        // Legacy with no LTK distributed: the STK lasts this link only, nothing to bond.
        let bonded = policy.bonding && pres.authReq.bondingFlags == 1 && gotLTK
        return SecureOutcome(security: s, bond: bonded ? bond : nil, paired: true)
    }

    // MARK: LE Secure Connections (§2.3.5.6)

    func pairSecureConnections(
        model: AssociationModel, preq: SMPPairingFeatures, pres: SMPPairingFeatures,
        a: [UInt8], b: [UInt8]
    ) throws(HostError) -> [UInt8] {
        let ours = SMPKeyPair()
        try sendL2CAP(cid: L2CAPCID.smp, SMP.publicKey(ours))
        let pk = try receiveSMP(.pairingPublicKey)
        let peerKey = SMP.command(pk) as? SMPPairingPublicKey
        let pkbX = SMPCrypto.swapped(peerKey?.x ?? []), pkbY = SMPCrypto.swapped(peerKey?.y ?? [])
        // The peer's key must be a point of P-256 (CVE-2018-5383) and not our own reflected.
        guard pkbX != ours.x, let dhKey = try? ours.dhKey(peerX: pkbX, peerY: pkbY) else { throw fail(.dhKeyCheckFailed) }
        let pkaX = ours.x
        var na: [UInt8], nb: [UInt8]
        var r = [UInt8](repeating: 0, count: 16)
        switch model {
        case .justWorks, .numericComparison: // §2.3.5.6.2
            let cb = try receiveValue(.pairingConfirm)
            na = SMP.random(16)
            try sendValue(.pairingRandom, na)
            nb = try receiveValue(.pairingRandom)
            guard cb == SMPCrypto.f4(u: pkbX, v: pkaX, x: nb, z: 0) else { throw fail(.confirmValueFailed) }
            if model == .numericComparison {
                let digits = SMPCrypto.g2(u: pkaX, v: pkbX, x: na, y: nb) % 1_000_000
                pairing.display?("numeric comparison: \(SMP.sixDigits(digits)) (the device shows the same six digits)")
                guard pairing.confirmNumber?(digits) == true else { throw fail(.numericComparisonFailed) }
            }
        case .passkeyHostInputs, .passkeyHostDisplays: // §2.3.5.6.3: 20 rounds, one passkey bit each
            let passkey = try passkeyFor(model)
            na = []; nb = []
            for i in 0..<20 {
                let ri: UInt8 = 0x80 | UInt8((passkey >> UInt32(i)) & 1)
                let nai = SMP.random(16)
                try sendValue(.pairingConfirm, SMPCrypto.f4(u: pkaX, v: pkbX, x: nai, z: ri))
                let cbi = try receiveValue(.pairingConfirm)
                try sendValue(.pairingRandom, nai)
                let nbi = try receiveValue(.pairingRandom)
                guard cbi == SMPCrypto.f4(u: pkbX, v: pkaX, x: nbi, z: ri) else { throw fail(.confirmValueFailed) }
                na = nai; nb = nbi
            }
            r = SMP.passkeyBytes(passkey)
        }
        // §2.3.5.6.5: keys, then the DHKey checks both ways.
        let (macKey, ltk) = SMPCrypto.f5(w: dhKey, n1: na, n2: nb, a1: a, a2: b)
        let ioA = [preq.authReq.rawValue, preq.oobDataFlag, preq.ioCapability.rawValue]
        let ioB = [pres.authReq.rawValue, pres.oobDataFlag, pres.ioCapability.rawValue]
        try sendValue(.pairingDHKeyCheck, SMPCrypto.f6(w: macKey, n1: na, n2: nb, r: r, ioCap: ioA, a1: a, a2: b))
        let eb = try receiveValue(.pairingDHKeyCheck)
        guard eb == SMPCrypto.f6(w: macKey, n1: nb, n2: na, r: r, ioCap: ioB, a1: b, a2: a) else { throw fail(.dhKeyCheckFailed) }
        return ltk
    }

    // MARK: legacy pairing (§2.3.5.5)

    func pairLegacy(
        model: AssociationModel, preqPDU: [UInt8], presPDU: [UInt8],
        ia: [UInt8], iat: UInt8, ra: [UInt8], rat: UInt8
    ) throws(HostError) -> [UInt8] {
        var tk = [UInt8](repeating: 0, count: 16)
        if model != .justWorks {
            let passkey = try passkeyFor(model)
            tk = SMP.passkeyBytes(passkey)
        }
        let preq = SMPCrypto.swapped(preqPDU), pres = SMPCrypto.swapped(presPDU)
        func c1(_ r: [UInt8]) -> [UInt8] { SMPCrypto.c1(k: tk, r: r, preq: preq, pres: pres, iat: iat, ia: ia, rat: rat, ra: ra) }
        let mrand = SMP.random(16)
        try sendValue(.pairingConfirm, c1(mrand))
        let sconfirm = try receiveValue(.pairingConfirm)
        try sendValue(.pairingRandom, mrand)
        let srand = try receiveValue(.pairingRandom)
        guard sconfirm == c1(srand) else { throw fail(.confirmValueFailed) }
        return SMPCrypto.s1(k: tk, r1: srand, r2: mrand)
    }

    // MARK: helpers

    func passkeyFor(_ model: AssociationModel) throws(HostError) -> UInt32 {
        if model == .passkeyHostDisplays {
            let p = pairing.passkey ?? UInt32.random(in: 0..<1_000_000)
            pairing.display?("passkey \(SMP.sixDigits(p)): type it on the device")
            return p
        }
        guard let p = pairing.passkey ?? pairing.askPasskey?(), p < 1_000_000 else {
            throw fail(.passkeyEntryFailed)
        }
        return p
    }

    /// Sends Pairing Failed and returns the error to throw.
    func fail(_ reason: SMPFailureReason) -> HostError {
        try? sendL2CAP(cid: L2CAPCID.smp, SMPPairingFailed(reason).encode())
        return .pairingFailed(reason: reason.rawValue, byPeer: false)
    }

    func sendValue(_ code: SMPCode, _ msbFirst: [UInt8]) throws(HostError) {
        try sendL2CAP(cid: L2CAPCID.smp, SMP.value(code, msbFirst))
    }

    /// A 16-octet value PDU, returned MSB-first.
    func receiveValue(_ code: SMPCode) throws(HostError) -> [UInt8] {
        SMPCrypto.swapped((SMP.command(try receiveSMP(code)) as? any SMPValue128Command)?.value ?? [])
    }

    /// The next SMP PDU (of `code`, when given), within SMP's 30 s. Pairing Failed from the
    /// peer throws with its reason; a PDU of another code or length fails the pairing.
    func receiveSMP(_ code: SMPCode?) throws(HostError) -> [UInt8] {
        while true {
            let p = try wait("SMP \(code?.name ?? "key distribution")", timeout: pairing.timeout, linkRequired: true) {
                () throws(HostError) -> [UInt8]? in smpInbox.isEmpty ? nil : smpInbox.removeFirst()
            }
            let (c, reason, damaged) = SMP.read(p) { ($0.smpCode, $0.reason, $0.error != nil || $0.smpCode.pduLength == nil) }
            if c == .pairingFailed { throw .pairingFailed(reason: reason?.rawValue ?? 0, byPeer: true) }
            if c == .securityRequest || c == .pairingKeypressNotification { continue } // nothing to do mid-pairing
            guard !damaged else { throw fail(.invalidParameters) }
            if let code, c != code { throw fail(.unspecifiedReason) }
            return p
        }
    }

    /// LE Enable Encryption and its Encryption Change. `ltk`, `rand` little-endian.
    func startEncryption(ltk: [UInt8], ediv: UInt16, rand: [UInt8]) throws(HostError) {
        guard let c = connection else { throw lostReason.map { .connectionLost(reason: $0) } ?? .notConnected }
        encryptionResult = nil
        try command(HCILEEnableEncryption(handle: c.handle, rand: rand, ediv: ediv, ltk: ltk))
        let r = try wait("Encryption Change", timeout: pairing.timeout, linkRequired: true) {
            () throws(HostError) -> (status: UInt8, enabled: Bool)? in encryptionResult
        }
        guard r.status == 0, r.enabled else { throw .encryptionFailed(status: r.status == 0 ? 0x1F : r.status) }
    }

    /// SMP from the peer. During pairing it queues for `receiveSMP`; otherwise a Security
    /// Request is remembered for the next `secure` (§3.6.7) and a Pairing Request, which
    /// only a central may send, is refused with Command Not Supported.
    func handleSMP(_ p: [UInt8]) throws(HostError) {
        guard !p.isEmpty else { return }
        if pairingActive { smpInbox.append(p); return }
        let (code, authReq) = SMP.read(p) { ($0.smpCode, $0.authReq) }
        switch code {
        case .securityRequest: securityRequest = authReq ?? SMPAuthReq(rawValue: 0)
        case .pairingRequest: try sendL2CAP(cid: L2CAPCID.smp, SMPPairingFailed(.commandNotSupported).encode())
        default: break
        }
    }
}
