import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// The one-type-per-PDU codecs of L2CAP signalling, LL control and SMP (issue 38 item 1):
/// literal bytes encode and decode back, malformed input is an error or nil (never a trap),
/// and every such PDU of the corpus and of Captures/ decodes to its type and encodes to the
/// same bytes.
@Suite struct PDUTypesTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var captures: [String] {
        [Corpus.dir, repo.appendingPathComponent("Captures")].flatMap { d in
            ((try? FileManager.default.contentsOfDirectory(atPath: d.path)) ?? [])
                .filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".txt") && !$0.hasSuffix(".json") }
                .sorted().map { d.appendingPathComponent($0).path }
        }
    }

    // MARK: L2CAP signalling (Core 6.0 Vol 3 Part A §4)

    /// The bytes the host sent as literals before these types: Command Reject "not
    /// understood" and Connection Parameter Update Response "accepted".
    @Test func signallingCommandsTheHostSends() throws {
        let reject = L2CAPCommandReject(identifier: 0x07)
        #expect(reject.encode() == [0x01, 0x07, 0x02, 0x00, 0x00, 0x00])
        #expect(try L2CAPCommandReject.decode(reject.encode()) == reject)
        let accept = L2CAPConnectionParameterUpdateResponse(identifier: 0x01, result: L2CAPConnectionParameterUpdateResponse.accepted)
        #expect(accept.encode() == [0x13, 0x01, 0x02, 0x00, 0x00, 0x00])
        #expect(try L2CAPConnectionParameterUpdateResponse.decode(accept.encode()) == accept)
        // Command Reject "signalling MTU exceeded" with its data (§4.1 Table 4.4).
        let mtu = L2CAPCommandReject(identifier: 2, reason: 0x0001, data: [0x17, 0x00])
        #expect(try L2CAPCommandReject.decode(mtu.encode()) == mtu)
    }

    /// A real Connection Parameter Update Request (L2CAPTests' frame: 24-40 × 1.25 ms, 5 s).
    @Test func connectionParameterUpdateRequestRoundTrips() throws {
        let bytes = hx("12 01 08 00 18 00 28 00 00 00 f4 01")
        let r = try L2CAPConnectionParameterUpdateRequest.decode(bytes)
        #expect(r == L2CAPConnectionParameterUpdateRequest(identifier: 1, intervalMin: 24, intervalMax: 40, latency: 0, timeout: 500))
        #expect(r.encode() == bytes)
        let s = L2CAPSignalling.decode(bytes)
        #expect(s?.code == .connectionParameterUpdateRequest && s?.identifier == 1)
        #expect((s?.command as? L2CAPConnectionParameterUpdateRequest) == r)
    }

    @Test func malformedSignallingIsNoCommand() {
        #expect(L2CAPSignalling.decode([0x12, 0x01, 0x08]) == nil) // no header
        let short = L2CAPSignalling.decode(hx("12 01 08 00 18 00 28 00")) // data cut
        #expect(short?.code == .connectionParameterUpdateRequest && short?.command == nil)
        #expect(throws: DecodeError.self) { try L2CAPConnectionParameterUpdateRequest.decode(hx("12 01 08 00 18 00 28 00")) }
        #expect(throws: DecodeError.self) { try L2CAPCommandReject.decode(hx("13 01 02 00 00 00")) } // another code
        #expect(throws: DecodeError.self) { try L2CAPCommandReject.decode(hx("01 01 02 00 00 00 ff")) } // a byte after it
        let unknown = L2CAPSignalling.decode(hx("0a 03 02 00 02 00")) // Information Request
        #expect(unknown?.code == .informationRequest && unknown?.command == nil && unknown?.code.needsNoAnswer == false)
        #expect(L2CAPSignalCode.creditBasedReconfigureResponse.isDefined && !L2CAPSignalCode(rawValue: 0x1B).isDefined)
    }

    // MARK: LL control (Core 6.0 Vol 6 Part B §2.4.2)

    @Test func controlPDUsRoundTrip() {
        func check<P: LLControlPDU>(_ pdu: P, _ hex: String) {
            let b = pdu.encode()
            #expect(Hex.string(b) == hex.replacingOccurrences(of: " ", with: ""), "\(P.self)")
            b.withUnsafeBytes { p in
                let data = UnsafeRawBufferPointer(rebasing: p[1...])
                #expect(P(LLControlOpcode(rawValue: p[0]), data) == pdu)
                #expect(LLControlPDUs.decode(LLControlOpcode(rawValue: p[0]), data)?.encode() == b)
            }
        }
        check(
            LLConnectionUpdateInd(winSize: 1, winOffset: 2, interval: 24, latency: 0, timeout: 72, instant: 0x0102),
            "00 01 0200 1800 0000 4800 0201")
        check(LLChannelMapInd(channelMap: 0x1F_FFFF_FFFF, instant: 7), "01 ffffffff1f 0700")
        check(LLTerminateInd(errorCode: 0x13), "02 13")
        check(
            LLEncReq(rand: Array(1...8), ediv: 0xBEEF, skdc: Array(9...16), ivc: [0xA, 0xB, 0xC, 0xD]),
            "03 0102030405060708 efbe 090a0b0c0d0e0f10 0a0b0c0d")
        check(LLEncRsp(skdp: Array(1...8), ivp: [5, 6, 7, 8]), "04 0102030405060708 05060708")
        check(LLStartEncReq(), "05")
        check(LLPauseEncRsp(), "0b")
        check(LLRejectInd(errorCode: 0x06), "0d 06")
    }

    @Test func shortControlDataIsNone() {
        withBytes("18 00 28 00") { p in
            #expect(LLConnectionUpdateInd(.connectionUpdateInd, p) == nil)
            #expect(LLControlPDUs.decode(.connectionUpdateInd, p) == nil)
            #expect(LLEncReq(.connectionUpdateInd, p) == nil) // another opcode
        }
        withBytes("") { p in #expect(LLTerminateInd(.terminateInd, p) == nil) }
        withBytes("00") { p in #expect(LLControlPDUs.decode(LLControlOpcode(rawValue: 0x0C), p) == nil) } // not registered
    }

    // MARK: the corpus

    /// Every LL control PDU of a registered opcode, every whole SMP PDU and every LE
    /// signalling command the tool answers, in every capture here: the type decodes it and
    /// encodes the same bytes.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: Corpus.dir.path), "needs ../shared/captures/public"))
    func corpusPDUsRoundTrip() throws {
        var ll = 0, smp = 0, sig = 0, problems: [String] = []
        for path in Self.captures {
            guard let reader = try? CaptureFile.open(path: path) else { continue }
            let decoder = ProtocolDecoder()
            var f = DecodedFrame(record: .empty)
            let name = URL(fileURLWithPath: path).lastPathComponent
            while let r = reader.next() {
                decoder.decode(r, into: &f)
                if let l = f.ll, let op = l.controlOpcode, let data = l.controlData, let t = LLControlPDUs.types[op],
                    data.count >= t.ctrDataLength
                {
                    ll += 1
                    let want = [op.rawValue] + Array(data.prefix(t.ctrDataLength))
                    if LLControlPDUs.decode(op, data)?.encode() != want { problems.append("\(name) #\(r.frame): \(op.name)") }
                }
                if let s = f.smp, s.error == nil, SMPCommands.types[s.smpCode] != nil {
                    smp += 1
                    if SMPCommands.decode(s)?.encode() != Array(s.bytes) { problems.append("\(name) #\(r.frame): SMP \(s.name)") }
                }
                if let l = f.l2cap, l.cid == L2CAPCID.leSignalling, let s = l.signal, s.error == nil,
                    L2CAPSignalling.commands[L2CAPSignalCode(rawValue: s.code)] != nil
                {
                    sig += 1
                    let bytes = Array(l.payload.prefix(4 + s.data.count))
                    if L2CAPSignalling.decode(bytes)?.command?.encode() != bytes { problems.append("\(name) #\(r.frame): \(s.name)") }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(ll >= 20 && smp >= 200 && sig >= 50, "ll \(ll) smp \(smp) signalling \(sig)")
    }
}
