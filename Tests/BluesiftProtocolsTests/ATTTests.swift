import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// ATT PDUs taken from pongbot_btsnoop_hci.log (public corpus), frame numbers as tshark shows.
@Suite struct ATTPDUTests {
    @Test func opcodeAndErrorNames() {
        #expect(ATTOpcode(rawValue: 0x12).name == "Write Request")
        #expect(ATTOpcode(rawValue: 0x20).name == "Read Multiple Variable Request")
        #expect(ATTOpcode(rawValue: 0x21).name == "Read Multiple Variable Response")
        #expect(ATTOpcode(rawValue: 0x23).name == "Multiple Handle Value Notification")
        #expect(ATTOpcode(rawValue: 0x52).name == "Write Command")
        #expect(ATTOpcode(rawValue: 0xD2).name == "Signed Write Command")
        #expect(ATTOpcode(rawValue: 0x14).name == "Unknown")
        #expect(ATTOpcode.readByTypeRequest.responseOpcode == .readByTypeResponse)
        #expect(ATTOpcode.writeCommand.isCommand && ATTOpcode.signedWriteCommand.isSigned)
        #expect(ATTErrorCode(rawValue: 0x0A).name == "Attribute Not Found")
        #expect(ATTErrorCode(rawValue: 0x13).name == "Value Not Allowed")
        #expect(ATTErrorCode(rawValue: 0x85).name == "Application Error")
        #expect(ATTErrorCode(rawValue: 0xFD).name == "Client Characteristic Configuration Descriptor Improperly Configured")
        #expect(ATTErrorCode(rawValue: 0x40).name == "Unknown")
    }

    @Test func readByTypeRequestFrame272() {
        withBytes("08 01 00 ff ff 00 2a") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.opcode == .readByTypeRequest && a.error == nil)
            #expect(a.startHandle == 0x0001 && a.endHandle == 0xFFFF)
            #expect(a.attributeType == BluetoothUUID(0x2A00))
            #expect(a.handle == nil && a.value == nil)
            #expect(json(a).hasPrefix(#"{"opcode":8,"name":"Read By Type Request","start_handle":1,"end_handle":65535,"uuid":"2a00""#))
        }
    }

    @Test func readByTypeResponseFrame273() {
        withBytes("09 02 07 00") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.error == nil && a.entryLength == 2)
            let e = Array(a.attributeData!)
            #expect(e.count == 1 && e[0].handle == 0x0007 && e[0].value.isEmpty)
        }
    }

    @Test func readByGroupTypeResponseFrame276() {
        withBytes("11 06 01 00 04 00 01 18 05 00 0d 00 00 18 0e 00 0e 00 0a 18") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.error == nil && a.entryLength == 6)
            let g = Array(a.groupData!)
            #expect(g.map(\.start) == [0x0001, 0x0005, 0x000E])
            #expect(g.map(\.end) == [0x0004, 0x000D, 0x000E])
            #expect(g.map { Array($0.value) } == [[0x01, 0x18], [0x00, 0x18], [0x0A, 0x18]])
            #expect(
                json(a)
                    == #"{"opcode":17,"name":"Read By Group Type Response","length":6,"entries":[{"start_handle":1,"end_handle":4,"value":"0118"},{"start_handle":5,"end_handle":13,"value":"0018"},{"start_handle":14,"end_handle":14,"value":"0a18"}]}"#
            )
            #expect(a.summary == "ATT Read By Group Type Response entries=3")
        }
    }

    @Test func errorResponseFrame286() {
        withBytes("01 08 01 00 0a") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.requestOpcode == .readByTypeRequest && a.errorHandle == 0x0001 && a.errorCode == 0x0A)
            #expect(a.handle == nil && a.value == nil && a.error == nil)
            #expect(json(a) == #"{"opcode":1,"name":"Error Response","request_opcode":8,"request_name":"Read By Type Request","error_handle":1,"error":10,"error_name":"Attribute Not Found"}"#)
            #expect(a.summary == "ATT Error Response to Read By Type Request handle=0x0001 error=0x0a Attribute Not Found")
        }
    }

    @Test func findInformationFrames344And345() {
        withBytes("04 04 00 04 00") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.startHandle == 4 && a.endHandle == 4 && a.error == nil)
        }
        withBytes("05 01 04 00 02 29") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.format == 1 && a.error == nil)
            let e = Array(a.findInformation!)
            #expect(e.count == 1 && e[0].handle == 4 && e[0].uuid == BluetoothUUID(0x2902))
        }
        withBytes("05 02 10 00 fb 34 9b 5f 80 00 00 80 00 10 00 00 0f 18 00 00") { p in
            let e = Array(ATTPDU(bytes: p).findInformation!)
            #expect(e.count == 1 && e[0].handle == 0x10 && e[0].uuid == BluetoothUUID(0x180F))
        }
    }

    @Test func writesNotificationsAndReads() {
        withBytes("12 28 00 01 00") { p in // frame 465
            let a = ATTPDU(bytes: p)
            #expect(a.handle == 0x0028 && Array(a.value!) == [0x01, 0x00])
            #expect(a.summary == "ATT Write Request handle=0x0028 value=0100")
        }
        withBytes("1b 27 00 08 17") { p in // frame 486
            let a = ATTPDU(bytes: p)
            #expect(a.handle == 0x0027 && Array(a.value!) == [0x08, 0x17])
            #expect(json(a) == #"{"opcode":27,"name":"Handle Value Notification","handle":39,"value":"0817"}"#)
        }
        withBytes("0a 52 00") { p in // frame 692
            #expect(ATTPDU(bytes: p).handle == 0x0052)
        }
        withBytes("0b ac 2f 26 45 81 82 4b e5 91 e0 29 92 e6 b4 0e bb") { p in // frame 695
            let a = ATTPDU(bytes: p)
            #expect(a.handle == nil && a.value!.count == 16 && a.value![0] == 0xAC)
        }
        withBytes("52 42 00 80") { p in // frame 707
            let a = ATTPDU(bytes: p)
            #expect(a.opcode == .writeCommand && a.handle == 0x0042 && Array(a.value!) == [0x80])
        }
        withBytes("1d 0b 00 00 1f") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.handle == 0x000B && Array(a.value!) == [0x00, 0x1F])
        }
    }

    @Test func mtuPrepareExecuteFindByTypeValue() {
        withBytes("02 05 02") { p in #expect(ATTPDU(bytes: p).mtu == 517) } // frame 500
        withBytes("03 73 00") { p in #expect(ATTPDU(bytes: p).mtu == 115) } // frame 506
        withBytes("16 08 00 00 00 8f 32 02") { p in // frame 556, shortened
            let a = ATTPDU(bytes: p)
            #expect(a.handle == 8 && a.offset == 0 && Array(a.value!) == [0x8F, 0x32, 0x02])
        }
        withBytes("18 01") { p in #expect(ATTPDU(bytes: p).flags == 1) } // frame 564
        withBytes("06 01 00 ff ff 00 28 00 18") { p in // frame 660
            let a = ATTPDU(bytes: p)
            #expect(a.attributeType == BluetoothUUID(0x2800) && Array(a.value!) == [0x00, 0x18] && a.handle == nil)
        }
        withBytes("07 14 00 1a 00") { p in // frame 666
            let r = Array(ATTPDU(bytes: p).handleRanges!)
            #expect(r.count == 1 && r[0].start == 0x14 && r[0].end == 0x1A)
        }
    }

    @Test func signedWriteSplitsSignature() {
        withBytes("d2 05 00 aa bb 01 02 03 04 05 06 07 08 09 0a 0b 0c") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.handle == 5 && Array(a.value!) == [0xAA, 0xBB] && a.signature!.count == 12 && a.error == nil)
        }
        withBytes("d2 05 00 aa") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.handle == 5 && a.error?.code == .truncated && a.error?.layer == "att")
        }
    }

    @Test func multipleVariableListsAndHandles() {
        withBytes("21 02 00 aa bb 01 00 cc 05 00 dd") { p in
            let t = Array(ATTPDU(bytes: p).lengthValues!)
            #expect(t.count == 3 && Array(t[0].value) == [0xAA, 0xBB] && t[2].length == 5 && Array(t[2].value) == [0xDD])
        }
        withBytes("23 03 00 01 00 aa 04 00 02 00 bb cc") { p in
            let a = ATTPDU(bytes: p)
            let t = Array(a.handleValues!)
            #expect(a.error == nil && t.map(\.handle) == [3, 4] && Array(t[1].value) == [0xBB, 0xCC])
        }
        withBytes("20 03 00 09 00") { p in #expect(Array(ATTPDU(bytes: p).handles!) == [3, 9]) }
        withBytes("23 03 00 05 00 aa") { p in #expect(ATTPDU(bytes: p).error?.code == .truncated) }
    }

    @Test func malformedKeepsDecodedFields() {
        withBytes("01 0a 19") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.requestOpcode == .readRequest && a.errorHandle == nil && a.error?.code == .truncated && a.error?.offset == 2)
        }
        withBytes("0a 52 00 ff") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.handle == 0x52 && a.error?.code == .invalidLength && a.error?.offset == 3)
        }
        withBytes("05 03 01 00") { p in #expect(ATTPDU(bytes: p).error?.code == .invalidValue) }
        withBytes("09 04 01 00 aa") { p in #expect(ATTPDU(bytes: p).error?.code == .invalidLength) }
        withBytes("") { p in #expect(ATTPDU(bytes: p).error?.code == .truncated) }
        withBytes("99 01 02") { p in
            let a = ATTPDU(bytes: p)
            #expect(a.opcode.name == "Unknown" && a.error == nil && a.summary == "ATT Unknown")
        }
    }
}
