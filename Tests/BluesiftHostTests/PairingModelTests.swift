import Testing
import BluesiftProtocols
@testable import BluesiftHost

/// Core 5.4 Vol 3 Part H §2.3.5.1 Table 2.8 (this host is the initiator).
@Suite struct PairingModelTests {
    typealias M = AssociationModel
    let DO = SMPIOCapability.displayOnly, DYN = SMPIOCapability.displayYesNo, KO = SMPIOCapability.keyboardOnly
    let NIO = SMPIOCapability.noInputNoOutput, KD = SMPIOCapability.keyboardDisplay

    @Test func table28() {
        // Responder displays, we type.
        #expect(M.choose(initiator: KD, responder: DO, mitm: true, sc: true) == .passkeyHostInputs)
        #expect(M.choose(initiator: KO, responder: DYN, mitm: true, sc: false) == .passkeyHostInputs)
        // We display, the responder types.
        #expect(M.choose(initiator: DO, responder: KO, mitm: true, sc: true) == .passkeyHostDisplays)
        #expect(M.choose(initiator: KD, responder: KD, mitm: true, sc: false) == .passkeyHostDisplays)
        // Numeric Comparison only with LE Secure Connections.
        #expect(M.choose(initiator: KD, responder: KD, mitm: true, sc: true) == .numericComparison)
        #expect(M.choose(initiator: DYN, responder: DYN, mitm: true, sc: true) == .numericComparison)
        #expect(M.choose(initiator: DYN, responder: DYN, mitm: true, sc: false) == .justWorks)
        #expect(M.choose(initiator: KD, responder: DYN, mitm: true, sc: false) == .passkeyHostInputs)
        // NoInputNoOutput on either side, or no MITM asked: Just Works.
        #expect(M.choose(initiator: KD, responder: NIO, mitm: true, sc: true) == .justWorks)
        #expect(M.choose(initiator: NIO, responder: KD, mitm: true, sc: true) == .justWorks)
        #expect(M.choose(initiator: KD, responder: DO, mitm: false, sc: true) == .justWorks)
        #expect(M.choose(initiator: DO, responder: DYN, mitm: true, sc: true) == .justWorks)
    }

    @Test func securityLevels() {
        #expect(LinkSecurity(authenticated: false, secureConnections: true, keySize: 16, method: "just_works").level == 2)
        #expect(LinkSecurity(authenticated: true, secureConnections: false, keySize: 16, method: "passkey_entry").level == 3)
        #expect(LinkSecurity(authenticated: true, secureConnections: true, keySize: 7, method: "passkey_entry").level == 3)
        #expect(
            LinkSecurity(authenticated: true, secureConnections: true, keySize: 16, method: "numeric_comparison").levelName
                == "authenticated secure connections")
    }
}
