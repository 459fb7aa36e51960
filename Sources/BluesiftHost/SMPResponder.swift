import BluesiftProtocols
import BluesiftSecurity
import BluesiftWire

/// The Security Manager as responder (Core 5.4 Vol 3 Part H §2.3, §3.5): answers a central's
/// pairing, LE Secure Connections (§2.3.5.6: Just Works, Numeric Comparison, Passkey Entry) or
/// legacy (§2.3.5.5: Just Works, Passkey Entry), and hands the controller the key when the
/// central starts encryption. Event-driven: each PDU from the central moves the state on and
/// returns the PDUs to answer with. No keys are distributed either way (§3.6.1): an LE SC link
/// needs none, a legacy STK lasts the link.
public final class SMPResponder {
    /// How this peripheral pairs: IO capability, MITM, LE Secure Connections or legacy only, passkey.
    public var policy: PairingPolicy
    /// The key the link is (to be) encrypted with, little-endian; nil before pairing ends.
    public internal(set) var ltk: [UInt8]?
    /// The association model was not Just Works.
    public internal(set) var authenticated = false
    /// One line per step worth saying: "passkey 123456: type it on the central", "paired …".
    public var onEvent: ((String) -> Void)?

    enum Stage { case idle, publicKey, confirm, random, dhKeyCheck, done }
    var stage = Stage.idle
    var preqPDU: [UInt8] = [], presPDU: [UInt8] = []
    var preq: SMPPairingFeatures?, pres: SMPPairingFeatures?
    var sc = false
    var model = AssociationModel.justWorks
    var keySize = 16
    var passkey: UInt32 = 0
    var round = 0
    // LE SC state, MSB-first as SMPCrypto takes them.
    var keys: SMPKeyPair?
    var pkaX: [UInt8] = [], pkbX: [UInt8] = []
    var dhKey: [UInt8] = []
    var na: [UInt8] = [], nb: [UInt8] = [], ca: [UInt8] = []
    // Legacy: TK, Mconfirm, Srand.
    var tk = [UInt8](repeating: 0, count: 16)
    var mconfirm: [UInt8] = [], srand: [UInt8] = []
    var a: [UInt8] = [], b: [UInt8] = [] // initiator and responder: type, then address MSB-first

    public init(policy: PairingPolicy = PairingPolicy()) { self.policy = policy }

    /// A new link.
    func reset() { ltk = nil; authenticated = false; stage = .idle; round = 0 }

    /// Description of the pairing for the caller's line: "just_works, LE Secure Connections".
    var summary: String { "\(model.name), \(sc ? "LE Secure Connections" : "legacy"), key size \(keySize)" }

    func fail(_ reason: SMPFailureReason) -> [[UInt8]] {
        stage = .idle
        onEvent?("pairing failed: \(reason.name) (sent to the central)")
        return [SMPPairingFailed(reason).encode()]
    }

    static func value(_ code: SMPCode, _ msbFirst: [UInt8]) -> [UInt8] { SMP.value(code, msbFirst) }

    /// The link's two ends as SMP's functions take them: address type (0 public, 1 random),
    /// then the address.
    public struct Addresses: Sendable, Hashable {
        public var initiator: BDAddr, initiatorType: AddressType
        public var responder: BDAddr, responderType: AddressType
        public init(initiator: BDAddr, initiatorType: AddressType, responder: BDAddr, responderType: AddressType) {
            self.initiator = initiator; self.initiatorType = initiatorType
            self.responder = responder; self.responderType = responderType
        }
    }

    /// One SMP PDU from the central on a link between `addresses` (nil: no link); the PDUs to
    /// answer with.
    func handle(_ pdu: [UInt8], addresses: Addresses?) throws(HostError) -> [[UInt8]] {
        guard !pdu.isEmpty else { return [] }
        let (code, reason, damaged) = SMP.read(pdu) { ($0.smpCode, $0.reason, $0.error != nil || $0.smpCode.pduLength == nil) }
        if code == .pairingFailed {
            stage = .idle
            onEvent?("the central ended pairing: \((reason ?? SMPFailureReason(rawValue: 0)).name)")
            return []
        }
        if code == .pairingKeypressNotification { return [] }
        guard !damaged else { return fail(.invalidParameters) }
        func v() -> [UInt8] { SMPCrypto.swapped((SMP.command(pdu) as? any SMPValue128Command)?.value ?? []) }
        switch (stage, code) {
        case (_, .pairingRequest):
            guard let addresses else { return [] }
            return pairingRequest(pdu, addresses: addresses)
        case (.publicKey, .pairingPublicKey): // §2.3.5.6.1
            let key = SMP.command(pdu) as? SMPPairingPublicKey
            let x = SMPCrypto.swapped(key?.x ?? []), y = SMPCrypto.swapped(key?.y ?? [])
            let ours = SMPKeyPair()
            // The central's key must be a point of P-256 (CVE-2018-5383) and not ours reflected.
            guard x != ours.x, let dh = try? ours.dhKey(peerX: x, peerY: y) else { return fail(.dhKeyCheckFailed) }
            keys = ours; pkaX = x; pkbX = ours.x; dhKey = dh
            var out = [SMP.publicKey(ours)]
            switch model {
            case .justWorks, .numericComparison: // §2.3.5.6.2: the responder commits first
                nb = SMP.random(16)
                out.append(Self.value(.pairingConfirm, SMPCrypto.f4(u: pkbX, v: pkaX, x: nb, z: 0)))
                stage = .random
            case .passkeyHostInputs, .passkeyHostDisplays: // §2.3.5.6.3
                guard let p = passkeyFor() else { return fail(.passkeyEntryFailed) }
                passkey = p; round = 0
                stage = .confirm
            }
            return out
        case (.confirm, .pairingConfirm):
            if sc { // passkey round `round`: the initiator's commitment, then ours
                ca = v()
                nb = SMP.random(16)
                let ri: UInt8 = 0x80 | UInt8((passkey >> UInt32(round)) & 1)
                stage = .random
                return [Self.value(.pairingConfirm, SMPCrypto.f4(u: pkbX, v: pkaX, x: nb, z: ri))]
            }
            mconfirm = v() // legacy §2.3.5.5: Sconfirm = c1(TK, Srand, …)
            srand = SMP.random(16)
            stage = .random
            return [Self.value(.pairingConfirm, c1(srand))]
        case (.random, .pairingRandom):
            let r = v()
            if !sc {
                guard mconfirm == c1(r) else { return fail(.confirmValueFailed) }
                var stk = SMPCrypto.s1(k: tk, r1: srand, r2: r)
                for i in 0..<(16 - keySize) { stk[i] = 0 } // a shorter key keeps its low octets (§2.3.4)
                ltk = SMPCrypto.swapped(stk)
                stage = .done
                return [Self.value(.pairingRandom, srand)]
            }
            switch model {
            case .justWorks, .numericComparison:
                na = r
                if model == .numericComparison {
                    let digits = SMPCrypto.g2(u: pkaX, v: pkbX, x: na, y: nb) % 1_000_000
                    onEvent?("numeric comparison: \(SMP.sixDigits(digits)) (the central shows the same six digits)")
                    guard policy.confirmNumber?(digits) ?? true else { return fail(.numericComparisonFailed) }
                }
                stage = .dhKeyCheck
                return [Self.value(.pairingRandom, nb)]
            case .passkeyHostInputs, .passkeyHostDisplays:
                let ri: UInt8 = 0x80 | UInt8((passkey >> UInt32(round)) & 1)
                guard ca == SMPCrypto.f4(u: pkaX, v: pkbX, x: r, z: ri) else { return fail(.confirmValueFailed) }
                na = r
                round += 1
                stage = round == 20 ? .dhKeyCheck : .confirm
                return [Self.value(.pairingRandom, nb)]
            }
        case (.dhKeyCheck, .pairingDHKeyCheck): // §2.3.5.6.5
            guard let preq, let pres else { return fail(.unspecifiedReason) }
            let (macKey, key) = SMPCrypto.f5(w: dhKey, n1: na, n2: nb, a1: a, a2: b)
            let r = model == .justWorks || model == .numericComparison ? [UInt8](repeating: 0, count: 16) : SMP.passkeyBytes(passkey)
            let ioA = [preq.authReq.rawValue, preq.oobDataFlag, preq.ioCapability.rawValue]
            let ioB = [pres.authReq.rawValue, pres.oobDataFlag, pres.ioCapability.rawValue]
            guard v() == SMPCrypto.f6(w: macKey, n1: na, n2: nb, r: r, ioCap: ioA, a1: a, a2: b) else { return fail(.dhKeyCheckFailed) }
            var k = key
            for i in 0..<(16 - keySize) { k[i] = 0 }
            ltk = SMPCrypto.swapped(k)
            stage = .done
            return [Self.value(.pairingDHKeyCheck, SMPCrypto.f6(w: macKey, n1: nb, n2: na, r: r, ioCap: ioB, a1: b, a2: a))]
        default:
            return stage == .idle || stage == .done ? [] : fail(.unspecifiedReason) // out of order
        }
    }

    /// §3.5.1-3.5.2: answer with this peripheral's features; choose SC or legacy and the model.
    func pairingRequest(_ pdu: [UInt8], addresses x: Addresses) -> [[UInt8]] {
        guard let q = (SMP.command(pdu) as? SMPPairingRequest)?.features else { return fail(.invalidParameters) }
        let mitm = policy.mitm ?? (policy.ioCapability != .noInputNoOutput)
        var auth: SMPAuthReq = policy.bonding && q.authReq.bondingFlags == 1 ? .bonding : []
        if mitm { auth.insert(.mitm) }
        if policy.secureConnections { auth.insert(.secureConnections) }
        let p = SMPPairingFeatures(
            ioCapability: policy.ioCapability, authReq: auth, maxEncryptionKeySize: policy.maxKeySize,
            initiatorKeys: [], responderKeys: [])
        keySize = Int(min(q.maxEncryptionKeySize, p.maxEncryptionKeySize))
        guard keySize >= 7 else { return fail(.encryptionKeySize) }
        preq = q; pres = p
        preqPDU = pdu; presPDU = SMPPairingResponse(p).encode()
        sc = q.authReq.contains(.secureConnections) && p.authReq.contains(.secureConnections)
        model = AssociationModel.choose(
            initiator: q.ioCapability, responder: p.ioCapability,
            mitm: q.authReq.contains(.mitm) || p.authReq.contains(.mitm), sc: sc)
        authenticated = model != .justWorks
        a = [x.initiatorType.rawValue & 1] + SMPCrypto.swapped(x.initiator.littleEndianBytes)
        b = [x.responderType == .public ? 0 : 1] + SMPCrypto.swapped(x.responder.littleEndianBytes)
        ltk = nil
        onEvent?("pairing requested: \(summary)")
        if sc {
            stage = .publicKey
        } else {
            tk = [UInt8](repeating: 0, count: 16)
            if model != .justWorks {
                guard let pk = passkeyFor() else { return fail(.passkeyEntryFailed) }
                tk = SMP.passkeyBytes(pk)
            }
            stage = .confirm
        }
        return [presPDU]
    }

    /// Legacy c1 with this link's Pairing Request/Response and addresses (§2.2.3).
    func c1(_ r: [UInt8]) -> [UInt8] {
        SMPCrypto.c1(
            k: tk, r: r, preq: SMPCrypto.swapped(preqPDU), pres: SMPCrypto.swapped(presPDU),
            iat: a[0], ia: Array(a[1...]), rat: b[0], ra: Array(b[1...]))
    }

    /// The model names roles from the initiator: `passkeyHostInputs` means the central types,
    /// so this peripheral displays; `passkeyHostDisplays`, the central displays and this types.
    func passkeyFor() -> UInt32? {
        if model == .passkeyHostInputs {
            let p = policy.passkey ?? UInt32.random(in: 0..<1_000_000)
            onEvent?("passkey \(SMP.sixDigits(p)): type it on the central")
            return p
        }
        guard let p = policy.passkey ?? policy.askPasskey?(), p < 1_000_000 else { return nil }
        return p
    }

    /// The key for an LE Long Term Key Request (§7.7.65.5): the pairing's, with EDIV and Rand
    /// zero as LE SC and an STK have them (§2.4.4.1, §2.4.2.3); nil: negative reply.
    func longTermKey(rand: [UInt8], ediv: UInt16) -> [UInt8]? {
        guard ediv == 0, rand.allSatisfy({ $0 == 0 }) else { return nil }
        return ltk
    }

    func encryptionChanged(status: UInt8, enabled: Bool) {
        if status == 0 && enabled && ltk != nil { onEvent?("paired and encrypted: \(summary)") } else if status != 0 { onEvent?("encryption failed (status \(Hex.fixed(UInt64(status), width: 2)))") }
    }
}
