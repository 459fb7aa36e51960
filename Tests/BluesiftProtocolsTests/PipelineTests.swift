import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

@Suite struct PipelineTests {
    @Test(.enabled(if: Corpus.has("blefun_btsnoop_hci.log"), "needs ../shared/captures/public")) func connectionsFromRealCapture() {
        let path = Corpus.path("blefun_btsnoop_hci.log")!
        let d = ProtocolDecoder()
        TestBTSnoop.decode(path, d) { _ in }
        #expect(d.connections.count == 12)
        let c = d.connections[0]
        #expect(c.handle == 2 && c.peer?.description == "ea:76:52:b8:3b:e4" && c.peerAddressType == .random)
        #expect(c.role == .central && c.transport == .le)
        #expect(c.startFrame == 407 && c.endFrame == 514 && c.disconnectReason == 0x08)
        let last = d.connections[11]
        #expect(d.connection(adapter: 0, handle: last.handle) == last)
    }

    /// happyleaf starts mid-connection: the first ACL creates a connection without a peer.
    @Test(.enabled(if: Corpus.has("happyleaf_btsnoop_hci.log"), "needs ../shared/captures/public")) func midConnectionCaptureFromRealFile() {
        let path = Corpus.path("happyleaf_btsnoop_hci.log")!
        let d = ProtocolDecoder()
        var firstACL: Int?
        TestBTSnoop.decode(path, d) { f in if f.record.kind == .acl, firstACL == nil { firstACL = f.record.frame } }
        #expect(d.connections.count == 1)
        #expect(d.connections.first?.peer == nil && d.connections.first?.startFrame == firstACL)
    }

    @Test func connectionLifecycleWithReusedHandle() {
        let store = RecordStore(), d = ProtocolDecoder()
        let f1 = d.decode(store.record(1, .acl, .received, acl(0x0040, pb: 0b10, l2(0x0004, [0x1b, 0x03, 0x00, 0x01])), us: 1_000))
        #expect(f1.connection == 0x0040 && d.connections.count == 1 && d.connections[0].peer == nil)
        #expect(d.states.count == 1)
        let dc = d.decode(store.h4(2, .received, "04 05 04 00 40 00 13", us: 2_000))
        #expect(dc.connection == 0x0040 && dc.hci?.reason == .remoteUserTerminatedConnection)
        #expect(d.connections[0].endFrame == 2 && d.connections[0].disconnectReason == 0x13)
        #expect(d.states.isEmpty) // per-connection state dropped at disconnection
        // LE Connection Complete reusing the handle, as peripheral.
        _ = d.decode(store.h4(3, .received, "04 3e 13 01 00 40 00 01 01 e4 3b b8 52 76 ea 27 00 00 00 f4 01 05", us: 3_000))
        #expect(d.connections.count == 2)
        let c = d.connection(adapter: 0, handle: 0x0040)
        #expect(c?.startFrame == 3 && c?.role == .peripheral && c?.peer?.description == "ea:76:52:b8:3b:e4")
        #expect(c?.start == Timestamp(microseconds: 3_000) && c?.end == nil)
        // Another adapter has its own handles.
        #expect(d.connection(adapter: 1, handle: 0x0040) == nil)
        // Failed connection attempts open nothing.
        _ = d.decode(store.h4(4, .received, "04 3e 1f 0a 02 41 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 0f 00 00 00 f4 01 00"))
        #expect(d.connections.count == 2)
    }

    /// The decoder remembers the last ACL packet's connection; a connection that ends, or a
    /// handle opened again, must not reach the old state through it.
    @Test func lastConnectionIsForgottenWhenItEndsOrReopens() {
        let store = RecordStore(), d = ProtocolDecoder()
        // First fragment of a 7-byte ATT PDU (header says 7, 4 arrive) on 0x0040.
        let start = acl(0x0040, pb: 0b10, [0x07, 0x00, 0x04, 0x00, 0x12, 0x03, 0x00])
        _ = d.decode(store.record(1, .acl, .sent, start))
        // LE Connection Complete on 0x0040 again: a fresh connection, its reassembly empty.
        _ = d.decode(store.h4(2, .received, "04 3e 13 01 00 40 00 01 01 e4 3b b8 52 76 ea 27 00 00 00 f4 01 05"))
        let cont = d.decode(store.record(3, .acl, .sent, acl(0x0040, pb: 0b01, [0x01, 0x02, 0x03, 0x04])))
        #expect(cont.l2cap == nil && cont.errors.first?.message.contains("without a start") == true)
        #expect(d.connections.count == 2 && d.connection(adapter: 0, handle: 0x0040)?.startFrame == 2)
        // Packets on the same handle after a disconnection open a connection of their own.
        _ = d.decode(store.record(4, .acl, .sent, start))
        _ = d.decode(store.h4(5, .received, "04 05 04 00 40 00 13"))
        let after = d.decode(store.record(6, .acl, .sent, acl(0x0040, pb: 0b01, [0x01, 0x02, 0x03, 0x04])))
        #expect(after.l2cap == nil && !after.errors.isEmpty)
        #expect(d.connections.count == 3 && d.connection(adapter: 0, handle: 0x0040)?.startFrame == 6)
        // Packets on one connection in a row complete the PDU they share.
        _ = d.decode(store.record(7, .acl, .sent, start))
        let whole = d.decode(store.record(8, .acl, .sent, acl(0x0040, pb: 0b01, [0x01, 0x02, 0x03, 0x04])))
        #expect(whole.l2cap?.cid == 0x0004 && whole.l2cap?.fragments == 2 && whole.errors.isEmpty)
        #expect(d.connections.count == 3)
    }

    @Test func bredrRoleFromCreateConnection() {
        let store = RecordStore(), d = ProtocolDecoder()
        _ = d.decode(store.h4(1, .sent, "01 05 04 0d 69 72 e8 3c 80 d8 18 cc 01 00 00 00 01"))
        _ = d.decode(store.h4(2, .received, "04 03 0b 00 0b 00 69 72 e8 3c 80 d8 01 00"))
        let c = d.connection(adapter: 0, handle: 0x000B)
        #expect(c?.transport == .bredr && c?.role == .central && c?.peer?.description == "d8:80:3c:e8:72:69")
        _ = d.decode(store.h4(3, .received, "04 12 08 00 69 72 e8 3c 80 d8 01")) // Role Change → peripheral
        #expect(d.connection(adapter: 0, handle: 0x000B)?.role == .peripheral)
    }

    @Test func historyIsBounded() {
        let store = RecordStore(), d = ProtocolDecoder(connectionHistoryCapacity: 32)
        for i in 0..<100 {
            let h = UInt8(i)
            _ = d.decode(store.record(2 * i + 1, .acl, .sent, acl(UInt16(h), pb: 0b10, l2(0x0004, [0x52, 0x03, 0x00]))))
            _ = d.decode(store.record(2 * i + 2, .event, .received, [0x05, 0x04, 0x00, h, 0x00, 0x16]))
        }
        #expect(d.connections.count <= 32 && d.connections.count + d.droppedConnections == 100)
        #expect(d.connection(adapter: 0, handle: 99)?.startFrame == 199)
        #expect(d.connection(adapter: 0, handle: 3) == nil)
        #expect(d.states.isEmpty)
    }

    /// pongbot #272/#273 pair on handle 0x0041; #511 answers #504 on 0x0041 although a Write
    /// Request went out on 0x0042 in between (#509): pairing is per connection.
    @Test(.enabled(if: Corpus.has("pongbot_btsnoop_hci.log"), "needs ../shared/captures/public")) func attPairingOnRealCapture() {
        let path = Corpus.path("pongbot_btsnoop_hci.log")!
        let recs = TestBTSnoop.read(path)
        let d = ProtocolDecoder()
        var tx: [Int: ATTTransaction] = [:]
        TestBTSnoop.decode(path, d) { f in if let t = f.attTransaction { tx[f.record.frame] = t } }
        #expect(tx[273] == ATTTransaction(requestFrame: 272, latencyMicroseconds: recs[272].us - recs[271].us))
        #expect(tx[511]?.requestFrame == 504)
        #expect(tx[513]?.requestFrame == 509)
        #expect(tx[286]?.requestFrame == 284) // Error Response answers Read By Type
    }

    @Test func attPairingRules() {
        let store = RecordStore(), d = ProtocolDecoder()
        func send(_ n: Int, _ dir: Direction, _ att: [UInt8], us: Int64) -> DecodedFrame {
            d.decode(store.record(n, .acl, dir, acl(0x0040, pb: 0b10, l2(0x0004, att)), us: us))
        }
        _ = send(1, .sent, [0x0a, 0x03, 0x00], us: 100) // Read Request
        _ = send(2, .received, [0x1d, 0x10, 0x00, 0x01], us: 150) // Indication from the server
        #expect(send(3, .received, [0x0b, 0x01], us: 400).attTransaction == ATTTransaction(requestFrame: 1, latencyMicroseconds: 300, requestHandle: 3))
        #expect(send(4, .sent, [0x1e], us: 450).attTransaction == ATTTransaction(requestFrame: 2, latencyMicroseconds: 300))
        // A response in the same direction as the request pairs with nothing.
        _ = send(5, .sent, [0x12, 0x03, 0x00, 0x01], us: 500)
        #expect(send(6, .sent, [0x13], us: 510).attTransaction == nil)
        // Error Response names the request opcode; it carries the request's handle.
        let err = send(7, .received, [0x01, 0x12, 0x03, 0x00, 0x03], us: 900).attTransaction
        #expect(err?.requestFrame == 5 && err?.requestHandle == 3)
        // Answered once only.
        #expect(send(8, .received, [0x13], us: 950).attTransaction == nil)
        // A new request replaces an unanswered one.
        _ = send(9, .sent, [0x0a, 0x03, 0x00], us: 1000)
        _ = send(10, .sent, [0x0a, 0x05, 0x00], us: 2000)
        #expect(send(11, .received, [0x0b], us: 2100).attTransaction == ATTTransaction(requestFrame: 10, latencyMicroseconds: 100, requestHandle: 5))
    }

    @Test func advertisingReportsGoToAdvLayer() {
        let store = RecordStore(), d = ProtocolDecoder()
        let f = d.decode(store.h4(1, .received, "04 3e 0c 02 01 00 01 11 22 33 44 55 66 00 c5"))
        #expect(f.hci?.subeventName == "LE Advertising Report" && f.adv?.opcode == 2 && f.connection == nil)
        #expect(f.hci.map(json)?.contains("parameters") == false)
    }

    @Test func notesAndMonitorRecords() {
        let store = RecordStore(), d = ProtocolDecoder()
        #expect(d.decode(store.record(1, .note, nil, Array("Bluetooth daemon 5.66".utf8))).note == "Bluetooth daemon 5.66")
        var r = store.record(2, .index, nil, [])
        r.sourceType = 0
        #expect(d.decode(r).note == "New Index")
        r.kind = .control; r.sourceType = 14
        #expect(d.decode(r).note == "Control Open")
    }

    /// Sniffed LE data: LLID 2 starts, LLID 1 continues; keyed by access address.
    @Test func sniffedLinkLayerReassembly() {
        let store = RecordStore(), d = ProtocolDecoder()
        let pdu = L2CAPTests.writePDU
        let rec = store.record(1, .ll, nil, [])
        var f = DecodedFrame(record: rec)
        pdu[0..<27].withUnsafeBytes { d.decodeLLData(llid: 2, payload: $0, accessAddress: 0x5065_1234, fromCentral: true, encrypted: false, rec, &f) }
        #expect(f.connection == 1 && f.l2cap == nil)
        f = DecodedFrame(record: rec) // an empty LLID 1 PDU from the other side
        [UInt8]().withUnsafeBytes { d.decodeLLData(llid: 1, payload: $0, accessAddress: 0x5065_1234, fromCentral: false, encrypted: false, rec, &f) }
        #expect(f.errors.isEmpty)
        f = DecodedFrame(record: rec)
        pdu[27...].withUnsafeBytes { d.decodeLLData(llid: 1, payload: $0, accessAddress: 0x5065_1234, fromCentral: true, encrypted: false, rec, &f) }
        #expect(f.l2cap?.fragments == 2 && f.att?.bytes.first == 0x12 && f.errors.isEmpty)
        // Another access address gets the next number; encrypted payloads are not reassembled.
        f = DecodedFrame(record: rec)
        pdu[0..<27].withUnsafeBytes { d.decodeLLData(llid: 2, payload: $0, accessAddress: 0xAF9A_0001, fromCentral: true, encrypted: true, rec, &f) }
        #expect(f.connection == 2 && f.l2cap == nil && f.errors.isEmpty)
        #expect(d.connections.map(\.accessAddress) == [0x5065_1234, 0xAF9A_0001])
        #expect(d.connection(adapter: 0, handle: 2)?.transport == .le)
    }
}
