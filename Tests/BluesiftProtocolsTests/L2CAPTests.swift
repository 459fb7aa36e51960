import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

@Suite struct L2CAPTests {
    /// ATT Write Request to handle 0x002a with a 53-byte value: 60-byte L2CAP PDU.
    static let writePDU = l2(0x0004, [0x12, 0x2a, 0x00] + (0..<53).map { UInt8($0) })

    @Test func reassemblesTwentySevenByteFragments() {
        let store = RecordStore(), d = ProtocolDecoder()
        let frags = fragments(0x0040, Self.writePDU, size: 27)
        #expect(frags.count == 3)
        var frames: [DecodedFrame] = []
        for (i, b) in frags.enumerated() { frames.append(d.decode(store.record(i + 1, .acl, .sent, b, us: Int64(i) * 1000))) }
        #expect(frames[0].l2cap == nil && frames[1].l2cap == nil)
        #expect(frames.allSatisfy { $0.errors.isEmpty && $0.connection == 0x0040 })
        let last = frames[2]
        #expect(last.l2cap?.cid == 0x0004 && last.l2cap?.length == 56 && last.l2cap?.fragments == 3)
        #expect(last.l2cap.map { Array($0.payload) } == Array(Self.writePDU[4...]))
        #expect(last.att?.bytes.first == 0x12)
        #expect(last.l2cap.map(json) == #"{"opcode":4,"name":"ATT","cid":4,"length":56,"fragments":3}"#)
        // The buffer is reused: the same PDU again still reassembles exactly.
        for (i, b) in frags.enumerated() { frames[i] = d.decode(store.record(10 + i, .acl, .sent, b)) }
        #expect(frames[2].l2cap.map { Array($0.payload) } == Array(Self.writePDU[4...]))
    }

    @Test func directionsReassembleSeparately() {
        let store = RecordStore(), d = ProtocolDecoder()
        let a = fragments(0x0040, Self.writePDU, size: 27)
        let notify = l2(0x0004, [0x1b, 0x2a, 0x00] + [UInt8](repeating: 7, count: 40))
        let b = fragments(0x0040, notify, size: 27)
        let f1 = d.decode(store.record(1, .acl, .sent, a[0]))
        let f2 = d.decode(store.record(2, .acl, .received, b[0]))
        let f3 = d.decode(store.record(3, .acl, .sent, a[1]))
        let f4 = d.decode(store.record(4, .acl, .received, b[1]))
        let f5 = d.decode(store.record(5, .acl, .sent, a[2]))
        #expect([f1, f2, f3, f4, f5].allSatisfy { $0.errors.isEmpty })
        #expect(f4.l2cap?.length == 43 && f4.att?.bytes.first == 0x1b)
        #expect(f5.l2cap?.length == 56 && f5.l2cap?.fragments == 3)
    }

    @Test func brokenSequencesBecomeErrorsAndDecodingContinues() {
        let store = RecordStore(), d = ProtocolDecoder()
        let frags = fragments(0x0040, Self.writePDU, size: 27)
        // Continuation with no start.
        let c = d.decode(store.record(1, .acl, .sent, frags[1]))
        #expect(c.errors.count == 1 && c.errors.first?.code == .reassembly && c.errors.first?.layer == "l2cap")
        // New start before completion: error on the new start, which itself then completes.
        _ = d.decode(store.record(2, .acl, .sent, frags[0]))
        let single = acl(0x0040, pb: 0b10, l2(0x0004, [0x0a, 0x03, 0x00]))
        let s = d.decode(store.record(3, .acl, .sent, single))
        #expect(s.errors.map(\.code) == [.reassembly])
        #expect(s.errors.first?.message.contains("27 of 60") == true)
        #expect(s.l2cap?.cid == 4 && s.att?.bytes.first == 0x0a)
        // Overflow past the declared length.
        _ = d.decode(store.record(4, .acl, .sent, frags[0]))
        _ = d.decode(store.record(5, .acl, .sent, frags[1]))
        let o = d.decode(store.record(6, .acl, .sent, acl(0x0040, pb: 0b01, [UInt8](repeating: 0, count: 20))))
        #expect(o.errors.map(\.code) == [.reassembly] && o.l2cap == nil)
        // The stream recovers.
        var last: DecodedFrame?
        for (i, b) in frags.enumerated() { last = d.decode(store.record(7 + i, .acl, .sent, b)) }
        #expect(last?.errors.isEmpty == true && last?.l2cap?.fragments == 3)
    }

    @Test func extraBytesAfterThePDU() {
        let store = RecordStore(), d = ProtocolDecoder()
        let f = d.decode(store.record(1, .acl, .sent, acl(0x0040, pb: 0b10, l2(0x0004, [0x0a, 0x03, 0x00]) + [0xEE])))
        #expect(f.errors.map(\.code) == [.invalidLength] && f.att?.bytes.count == 3)
    }

    /// Android filtered snoop logs cut ACL payloads; originalLength keeps the real size.
    @Test func truncatedRecordsDecodeAsFarAsTheyGo() {
        let store = RecordStore(), d = ProtocolDecoder()
        let whole = acl(0x0040, pb: 0b10, Self.writePDU) // one 64-byte ACL packet
        let cut = d.decode(store.record(1, .acl, .received, Array(whole[0..<20]), originalLength: whole.count))
        #expect(cut.errors.isEmpty && cut.hci?.truncated == true)
        #expect(cut.l2cap?.truncated == true && cut.l2cap?.length == 56 && cut.l2cap?.payload.count == 12)
        #expect(cut.att?.bytes.first == 0x12)
        // A cut multi-fragment PDU: the fragments still count, nothing is poisoned.
        let frags = fragments(0x0040, Self.writePDU, size: 27)
        _ = d.decode(store.record(2, .acl, .received, Array(frags[0][0..<10]), originalLength: frags[0].count))
        let mid = d.decode(store.record(3, .acl, .received, Array(frags[1][0..<6]), originalLength: frags[1].count))
        let end = d.decode(store.record(4, .acl, .received, frags[2]))
        #expect(mid.errors.isEmpty && end.errors.isEmpty, "\(end.errors)")
        #expect(end.l2cap?.truncated == true && end.l2cap?.fragments == 3 && end.l2cap?.payload.count == 2)
        let next = d.decode(store.record(5, .acl, .received, acl(0x0040, pb: 0b10, l2(0x0004, [0x0b, 0x01]))))
        #expect(next.errors.isEmpty && next.l2cap?.truncated == false && next.att?.bytes.count == 2)
    }

    @Test func truncatedHeaderIsNotAnError() {
        let bytes = hx("0c 00")
        bytes.withUnsafeBytes { p in
            #expect(L2CAPLayer(pdu: p, truncated: true).error == nil)
            #expect(L2CAPLayer(pdu: p).error?.code == .truncated)
        }
    }

    @Test func connectionParameterUpdateRequest() {
        let bytes = hx("0c 00 05 00 12 01 08 00 18 00 28 00 00 00 f4 01")
        bytes.withUnsafeBytes { p in
            let l = L2CAPLayer(pdu: p)
            #expect(l.error == nil && l.name == "Connection Parameter Update Request")
            #expect(l.signal?.intervalMin == 24 && l.signal?.intervalMax == 40 && l.signal?.timeout == 500)
            #expect(json(l) == #"{"opcode":18,"name":"Connection Parameter Update Request","cid":5,"length":12,"fragments":1,"identifier":1,"interval_min":24,"interval_max":40,"latency":0,"timeout":500}"#)
            #expect(l.summary == "L2CAP Connection Parameter Update Request")
        }
    }

    @Test func configurationRequestOptionsAndBatchedCommands() {
        // Configuration Request (MTU 672) followed by an Information Request in one C-frame.
        let pdu = l2(0x0001, hx("04 05 08 00 41 00 00 00 01 02 a0 02") + hx("0a 06 02 00 02 00"))
        pdu.withUnsafeBytes { p in
            let l = L2CAPLayer(pdu: p)
            #expect(l.error == nil && l.signal?.destinationCID == 0x41 && l.moreSignals == 1)
            #expect(
                json(l)
                    == #"{"opcode":4,"name":"Configuration Request","cid":1,"length":18,"fragments":1,"identifier":5,"dcid":65,"flags":0,"options":[{"type":1,"name":"MTU","mtu":672}],"more_commands":[{"opcode":10,"name":"Information Request","identifier":6,"info_type":2}]}"#
            )
        }
    }

    @Test func malformedSignalSetsError() {
        let pdu = l2(0x0005, hx("12 01 08 00 18 00")) // declares 8 bytes, has 2
        pdu.withUnsafeBytes { p in
            let l = L2CAPLayer(pdu: p)
            #expect(l.error?.code == .truncated && l.error?.layer == "l2cap" && l.signal == nil)
        }
    }

    /// ATT over BR/EDR: PSM 0x001F on a dynamic channel (Core 5.4 Vol 3 Part F §3.2.11).
    @Test func dynamicChannelPSM0x1FDecodesATT() {
        let store = RecordStore(), d = ProtocolDecoder()
        let h: UInt16 = 0x000B
        _ = d.decode(store.h4(1, .received, "04 03 0b 00 0b 00 11 22 33 44 55 66 01 00")) // Connection Complete
        let req = d.decode(store.record(2, .acl, .sent, acl(h, pb: 0b10, l2(0x0001, hx("02 01 04 00 1f 00 40 00")))))
        #expect(req.l2cap?.signal?.psm == 0x1F && req.l2cap.map(json)?.contains(#""psm_name":"ATT""#) == true)
        _ = d.decode(store.record(3, .acl, .received, acl(h, pb: 0b10, l2(0x0001, hx("03 01 08 00 41 00 40 00 00 00 00 00")))))
        let read = d.decode(store.record(4, .acl, .sent, acl(h, pb: 0b10, l2(0x0041, [0x0a, 0x03, 0x00])), us: 10_000))
        #expect(read.l2cap?.psm == 0x1F && read.l2cap?.name == "ATT" && read.att?.bytes.first == 0x0a)
        let rsp = d.decode(store.record(5, .acl, .received, acl(h, pb: 0b10, l2(0x0040, [0x0b, 0x41, 0x42])), us: 12_500))
        #expect(rsp.l2cap?.psm == 0x1F && rsp.att?.bytes.first == 0x0b)
        #expect(rsp.attTransaction == ATTTransaction(requestFrame: 4, latencyMicroseconds: 2500, requestHandle: 3))
        // Unknown dynamic CID: no PSM, not decoded as ATT.
        let other = d.decode(store.record(6, .acl, .sent, acl(h, pb: 0b10, l2(0x0050, [0x0a, 0x03, 0x00]))))
        #expect(other.l2cap?.psm == nil && other.l2cap?.name == "Dynamic Channel" && other.att == nil)
        // Disconnection of the channel forgets it.
        _ = d.decode(store.record(7, .acl, .sent, acl(h, pb: 0b10, l2(0x0001, hx("06 02 04 00 41 00 40 00")))))
        let after = d.decode(store.record(8, .acl, .sent, acl(h, pb: 0b10, l2(0x0041, [0x0a, 0x03, 0x00]))))
        #expect(after.att == nil && after.l2cap?.psm == nil)
    }

    /// EATT: Credit Based Connection on SPSM 0x0027; K-frames carry an SDU length (§3.4.3).
    @Test func eattKFramesStripSDULengthAndReassemble() {
        let store = RecordStore(), d = ProtocolDecoder()
        let h: UInt16 = 0x0040
        _ = d.decode(store.record(1, .acl, .sent, acl(h, pb: 0b10, l2(0x0005, hx("17 07 0a 00 27 00 00 02 40 00 05 00 40 00")))))
        _ = d.decode(store.record(2, .acl, .received, acl(h, pb: 0b10, l2(0x0005, hx("18 07 0a 00 00 02 40 00 05 00 00 00 45 00")))))
        let k = d.decode(store.record(3, .acl, .sent, acl(h, pb: 0b10, l2(0x0045, [0x03, 0x00, 0x0a, 0x03, 0x00]))))
        #expect(k.errors.isEmpty && k.l2cap?.psm == 0x27 && k.l2cap?.name == "EATT" && k.l2cap?.sduLength == 3)
        #expect(k.att.map { Array($0.bytes) } == [0x0a, 0x03, 0x00])
        // A 6-byte SDU in two K-frames, sent by the peer to our CID 0x0040.
        let k1 = d.decode(store.record(4, .acl, .received, acl(h, pb: 0b10, l2(0x0040, [0x06, 0x00, 0x0b, 0x01, 0x02]))))
        #expect(k1.att == nil && k1.l2cap?.sduIncomplete == true && k1.l2cap?.sduLength == 6)
        let k2 = d.decode(store.record(5, .acl, .received, acl(h, pb: 0b10, l2(0x0040, [0x03, 0x04, 0x05]))))
        #expect(k2.errors.isEmpty && k2.att.map { Array($0.bytes) } == [0x0b, 0x01, 0x02, 0x03, 0x04, 0x05])
        #expect(k2.attTransaction?.requestFrame == 3)
    }
}
