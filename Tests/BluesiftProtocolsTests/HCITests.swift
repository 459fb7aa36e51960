import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

@Suite struct HCITests {
    func packet(_ hexString: String, truncated: Bool = false, _ body: (HCIPacket) -> Void) {
        let all = hx(hexString)
        all.withUnsafeBytes { p in
            body(
                HCIPacket(
                    kind: PacketKind(rawValue: all[0]), bytes: UnsafeRawBufferPointer(rebasing: p[1...]),
                    truncated: truncated))
        }
    }

    @Test func nameTables() {
        #expect(HCICommandNames.name(0x200C) == "LE Set Scan Enable")
        #expect(HCICommandNames.name(0x0406) == "Disconnect")
        #expect(HCICommandNames.name(0x2043) == "LE Extended Create Connection")
        #expect(HCICommandNames.name(0x2082) == "LE Set Periodic Advertising Subevent Data")
        #expect(HCICommandNames.name(0x2094) == "LE CS Procedure Enable")
        #expect(HCICommandNames.name(0x1009) == "Read BD_ADDR")
        #expect(HCICommandNames.name(0xFD53) == "Vendor")
        #expect(HCICommandNames.name(0x0C84) == "Set Min Encryption Key Size")
        #expect(HCICommandNames.name(0x0CFF) == "Unknown")
        #expect(HCIEventNames.name(0x0E) == "Command Complete")
        #expect(HCIEventNames.name(0x3E) == "LE Meta")
        #expect(HCIEventNames.name(0x05) == "Disconnection Complete")
        #expect(HCIEventNames.name(0x59) == "Encryption Change v2")
        #expect(HCIEventNames.name(0x7F) == "Unknown")
        #expect(HCIEventNames.leSubeventName(0x01) == "LE Connection Complete")
        #expect(HCIEventNames.leSubeventName(0x0D) == "LE Extended Advertising Report")
        #expect(HCIStatus(0x00).name == "Success")
        #expect(HCIStatus.remoteUserTerminatedConnection.name == "Remote User Terminated Connection")
        #expect(HCIStatus(0x16).name == "Connection Terminated By Local Host")
        #expect(HCIStatus(0x3E).name == "Connection Failed to be Established")
        #expect(HCIStatus(0x30).name == "Parameter Out Of Mandatory Range")
        #expect(HCIStatus(0x99).name == "Unknown")
    }

    // pongbot_btsnoop_hci.log #2
    @Test func commandCompleteReset() {
        packet("04 0e 04 01 03 0c 00") { h in
            #expect(h.opcode == 0x0E && h.name == "Command Complete")
            #expect(h.commandOpcode == 0x0C03 && h.commandName == "Reset")
            #expect(h.numPackets == 1 && h.status == .success && h.error == nil)
            #expect(json(h) == #"{"opcode":14,"name":"Command Complete","num_packets":1,"command_opcode":3075,"command_name":"Reset","status":0,"status_name":"Success"}"#)
        }
    }

    // pongbot #57: Broadcom LE Get Vendor Capabilities
    @Test func vendorCommand() {
        packet("01 53 fd 00") { h in
            #expect(h.opcode == 0xFD53 && h.name == "Vendor" && h.isVendorCommand)
            #expect(json(h) == #"{"opcode":64851,"name":"Vendor","ocf":339}"#)
        }
    }

    // pongbot #161
    @Test func leExtendedCreateConnection() {
        packet("01 43 20 3a 01 01 00 00 00 00 00 00 00 07 00 08 c0 00 08 00 10 00 00 00 f4 01 00 00 00 00 00 08 c0 00 08 00 10 00 00 00 f4 01 00 00 00 00 00 08 c0 00 08 00 10 00 00 00 f4 01 00 00 00 00") { h in
            #expect(h.name == "LE Extended Create Connection" && h.error == nil)
            #expect(h.peerAddressType == .public && h.peer == BDAddr(0))
            #expect(h.intervalMin == 8 && h.intervalMax == 16 && h.latency == 0 && h.supervisionTimeout == 500)
        }
    }

    // pongbot #195
    @Test func createConnection() {
        packet("01 05 04 0d 69 72 e8 3c 80 d8 18 cc 01 00 00 00 01") { h in
            #expect(h.name == "Create Connection" && h.peer?.description == "d8:80:3c:e8:72:69")
        }
    }

    // pongbot #237 (success) and #230 (failed, status 0x02)
    @Test func leEnhancedConnectionComplete() {
        packet("04 3e 1f 0a 00 41 00 00 00 73 49 06 60 b2 5c 00 00 00 00 00 00 00 00 00 00 00 00 0f 00 00 00 f4 01 00") { h in
            #expect(h.name == "LE Meta" && h.subevent == 0x0A && h.subeventName == "LE Enhanced Connection Complete")
            #expect(h.status == .success && h.handle == 0x0041 && h.role == 0)
            #expect(h.peer?.description == "5c:b2:60:06:49:73" && h.peerAddressType == .public)
            #expect(h.interval == 15 && h.latency == 0 && h.supervisionTimeout == 500)
            #expect(h.summary == "LE Meta: LE Enhanced Connection Complete handle=0x0041 peer=5c:b2:60:06:49:73 role=central status=Success")
        }
        packet("04 3e 1f 0a 02 40 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 0f 00 00 00 f4 01 00") { h in
            #expect(h.status?.name == "Unknown Connection Identifier" && h.handle == 0x0040)
        }
    }

    // blefun_btsnoop_hci.log #407, #858, #860
    @Test func leConnectionCompleteAndDisconnect() {
        packet("04 3e 13 01 00 02 00 00 01 e4 3b b8 52 76 ea 27 00 00 00 f4 01 05") { h in
            #expect(h.subeventName == "LE Connection Complete" && h.handle == 2)
            #expect(h.peer?.description == "ea:76:52:b8:3b:e4" && h.peerAddressType == .random)
            #expect(h.interval == 39 && h.supervisionTimeout == 500)
        }
        packet("01 06 04 03 04 00 13") { h in
            #expect(h.name == "Disconnect" && h.handle == 4 && h.reason == .remoteUserTerminatedConnection)
            #expect(json(h) == #"{"opcode":1030,"name":"Disconnect","handle":4,"reason":19,"reason_name":"Remote User Terminated Connection"}"#)
        }
        packet("04 05 04 00 04 00 16") { h in
            #expect(h.name == "Disconnection Complete" && h.status == .success && h.handle == 4)
            #expect(h.reason?.name == "Connection Terminated By Local Host")
        }
    }

    // pongbot #268, #275
    @Test func remoteFeaturesAndCompletedPackets() {
        packet("04 3e 0c 04 00 41 00 ef 00 00 08 00 00 00 00") { h in
            #expect(h.subeventName == "LE Read Remote Features Complete" && h.handle == 0x41 && h.features == 0x0800_00EF)
        }
        packet("04 13 05 01 41 00 02 00") { h in
            #expect(h.name == "Number of Completed Packets" && h.handle == 0x41)
            #expect(json(h) == #"{"opcode":19,"name":"Number of Completed Packets","handle":65,"completed":[{"handle":65,"count":2}]}"#)
        }
    }

    @Test func otherLEMetaSubevents() {
        packet("04 3e 0a 03 00 41 00 18 00 00 00 48 00") { h in // Connection Update Complete
            #expect(h.handle == 0x41 && h.interval == 24 && h.supervisionTimeout == 72)
        }
        packet("04 3e 0b 07 41 00 fb 00 48 08 fb 00 48 08") { h in // Data Length Change
            #expect(h.maxTxOctets == 251 && h.maxRxTime == 2120 && h.handle == 0x41)
        }
        packet("04 3e 06 0c 00 41 00 02 02") { h in // PHY Update Complete
            #expect(h.txPHY == 2 && h.rxPHY == 2)
        }
        packet("04 3e 0b 06 41 00 06 00 0c 00 00 00 f4 01") { h in // Remote Connection Parameter Request
            #expect(h.intervalMin == 6 && h.intervalMax == 12 && h.supervisionTimeout == 500)
        }
        packet("04 59 05 00 41 00 01 10") { h in // Encryption Change v2
            #expect(h.encryption == 1 && h.keySize == 16 && h.handle == 0x41)
        }
        packet("04 0f 04 00 01 16 20") { h in // Command Status (LE Read Remote Features)
            #expect(h.status == .success && h.commandName == "LE Read Remote Features")
        }
    }

    // pongbot #272: ACL header
    @Test func aclHeader() {
        packet("02 41 00 0b 00 07 00 04 00 08 01 00 ff ff 00 2a") { h in
            #expect(h.name == "ACL Data" && h.opcode == 2 && h.handle == 0x41 && h.pbFlag == 0 && h.bcFlag == 0)
            #expect(h.dataLength == 11 && h.parameters.count == 11 && h.error == nil)
        }
        packet("02 41 20 08 00 04 00 04 00 09 02 07 00") { h in
            #expect(h.pbFlag == 2 && h.dataLength == 8)
        }
    }

    @Test func malformedNeverTraps() {
        packet("04 3e 1f 0a 00 41") { h in
            #expect(h.error?.code == .truncated && h.error?.layer == "hci")
        }
        packet("04 3e 1f 0a 00 41", truncated: true) { h in
            #expect(h.error == nil && h.truncated)
        }
        packet("04 05 04 00 04 00 16 ff") { h in
            #expect(h.error?.code == .invalidLength && h.handle == 4)
        }
        // Every prefix of a real event decodes without trapping.
        let full = hx("04 3e 1f 0a 00 41 00 00 00 73 49 06 60 b2 5c 00 00 00 00 00 00 00 00 00 00 00 00 0f 00 00 00 f4 01 00")
        for n in 1...full.count {
            full[0..<n].withUnsafeBytes { p in
                let h = HCIPacket(kind: .event, bytes: UnsafeRawBufferPointer(rebasing: p[1...]))
                #expect((h.error == nil) == (n == full.count))
            }
        }
    }
}

extension HCITests {
    @Test func jsonOfDataAndMetaPackets() {
        packet("02 41 20 08 00 04 00 04 00 09 02 07 00") { h in
            #expect(json(h) == #"{"opcode":2,"name":"ACL Data","handle":65,"pb":2,"bc":0,"length":8}"#)
        }
        packet("04 3e 1f 0a 00 41 00 00 00 73 49 06 60 b2 5c 00 00 00 00 00 00 00 00 00 00 00 00 0f 00 00 00 f4 01 00") { h in
            #expect(
                json(h)
                    == #"{"opcode":62,"name":"LE Meta","subevent":10,"subevent_name":"LE Enhanced Connection Complete","status":0,"status_name":"Success","handle":65,"role":"central","peer":"5c:b2:60:06:49:73","peer_type":"public","interval":15,"latency":0,"supervision_timeout":500}"#
            )
        }
        packet("04 ff 03 57 01 02") { h in // vendor event: parameters raw
            #expect(json(h) == #"{"opcode":255,"name":"Vendor","parameters":"570102"}"#)
            #expect(h.summary == "Vendor event code=0x57 len=3")
        }
    }
}
