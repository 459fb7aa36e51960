import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// Every typed ATT message: encode gives the expected wire bytes (several from
/// pongbot_btsnoop_hci.log) and decoding those bytes gives the message back.
@Suite struct ATTMessageTests {
    static let cases: [(ATTMessage, String)] = [
        (.errorResponse(.init(requestOpcode: .readByTypeRequest, handle: 1, error: .attributeNotFound)), "01 08 01 00 0a"),
        (.exchangeMTURequest(.init(clientRxMTU: 517)), "02 05 02"),
        (.exchangeMTUResponse(.init(serverRxMTU: 115)), "03 73 00"),
        (.findInformationRequest(.init(startHandle: 4, endHandle: 4)), "04 04 00 04 00"),
        (.findInformationResponse(.init(entries: [.init(handle: 4, uuid: BluetoothUUID(0x2902))])), "05 01 04 00 02 29"),
        (
            .findInformationResponse(.init(entries: [.init(handle: 0x10, uuid: BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")!)])),
            "05 02 10 00 9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 01 00 40 6e"
        ),
        (.findByTypeValueRequest(.init(type: 0x2800, value: [0x00, 0x18])), "06 01 00 ff ff 00 28 00 18"),
        (.findByTypeValueResponse(.init(ranges: [.init(start: 0x14, end: 0x1A)])), "07 14 00 1a 00"),
        (.readByTypeRequest(.init(type: BluetoothUUID(0x2A00))), "08 01 00 ff ff 00 2a"),
        (.readByTypeResponse(.init(entries: [.init(handle: 3, value: [0x02, 0x05, 0x00, 0x00, 0x2A])])), "09 07 03 00 02 05 00 00 2a"),
        (.readByGroupTypeRequest(.init(type: BluetoothUUID(0x2800))), "10 01 00 ff ff 00 28"),
        (
            .readByGroupTypeResponse(.init(entries: [.init(start: 1, end: 4, value: [0x01, 0x18]), .init(start: 5, end: 13, value: [0x00, 0x18])])),
            "11 06 01 00 04 00 01 18 05 00 0d 00 00 18"
        ),
        (.readRequest(.init(handle: 0x52)), "0a 52 00"),
        (.readResponse(.init(value: [0xAC, 0x2F])), "0b ac 2f"),
        (.readBlobRequest(.init(handle: 0x52, offset: 22)), "0c 52 00 16 00"),
        (.readBlobResponse(.init(value: [0x01])), "0d 01"),
        (.readMultipleRequest(.init(handles: [3, 5])), "0e 03 00 05 00"),
        (.readMultipleResponse(.init(values: [0x01, 0x02])), "0f 01 02"),
        (.writeRequest(.init(handle: 0x28, value: [0x01, 0x00])), "12 28 00 01 00"),
        (.writeResponse(.init()), "13"),
        (.writeCommand(.init(handle: 0x42, value: [0x80])), "52 42 00 80"),
        (.signedWriteCommand(.init(handle: 5, value: [0xAA], signature: Array(1...12))), "d2 05 00 aa 01 02 03 04 05 06 07 08 09 0a 0b 0c"),
        (.prepareWriteRequest(.init(handle: 8, offset: 0, value: [0x8F, 0x32])), "16 08 00 00 00 8f 32"),
        (.prepareWriteResponse(.init(handle: 8, offset: 18, value: [0x8F])), "17 08 00 12 00 8f"),
        (.executeWriteRequest(.init(commit: true)), "18 01"),
        (.executeWriteResponse(.init()), "19"),
        (.handleValueNotification(.init(handle: 0x27, value: [0x08, 0x17])), "1b 27 00 08 17"),
        (.handleValueIndication(.init(handle: 0x0B, value: [0x00, 0x1F])), "1d 0b 00 00 1f"),
        (.handleValueConfirmation(.init()), "1e"),
        (.readMultipleVariableRequest(.init(handles: [3, 9])), "20 03 00 09 00"),
        (.readMultipleVariableResponse(.init(values: [[0xAA, 0xBB], []])), "21 02 00 aa bb 00 00"),
        (.multipleHandleValueNotification(.init(entries: [.init(handle: 3, value: [0xAA]), .init(handle: 4, value: [])])), "23 03 00 01 00 aa 04 00 00 00"),
        (.unknown(ATTOpcode(rawValue: 0x99), parameters: [1, 2]), "99 01 02")
    ]

    @Test func everyMessageRoundTrips() throws {
        #expect(Self.cases.count == 33)
        for (message, hex) in Self.cases {
            let bytes = Hex.parse(hex)!
            #expect(message.encode() == bytes, "encode \(message.opcode.name)")
            #expect(try ATTMessage.decode(bytes) == message, "decode \(hex)")
            if let m = message.message { #expect(type(of: m).opcode == message.opcode) }
        }
    }

    @Test func everyDefinedOpcodeHasAMessage() {
        let covered = Set(Self.cases.map(\.0.opcode.rawValue))
        for op in 0...255 where ATTOpcode(rawValue: UInt8(op)).name != "Unknown" {
            #expect(covered.contains(UInt8(op)), "opcode \(op)")
        }
    }

    @Test func typedDecodeIsStrict() {
        #expect(throws: DecodeError.self) { try ATTReadRequest.decode([0x0A, 0x52]) }
        #expect(throws: DecodeError.self) { try ATTReadRequest.decode([0x0A, 0x52, 0x00, 0x00]) }
        #expect(throws: DecodeError.self) { try ATTReadRequest.decode([0x0B, 0x52, 0x00]) }
        #expect(throws: DecodeError.self) { try ATTReadByTypeRequest.decode([0x08, 1, 0, 0xFF, 0xFF, 0x00, 0x2A, 0x00]) }
        #expect(throws: DecodeError.self) { try ATTSignedWriteCommand.decode([0xD2, 1, 0, 1, 2]) }
        do {
            _ = try ATTErrorResponse.decode([0x01, 0x0A])
            Issue.record("expected a throw")
        } catch {
            #expect(error.layer == "att" && error.code == .truncated && error.offset == 2)
        }
    }

    @Test func typedDecodeOfRealResponse() throws {
        // pongbot frame 276: Read By Group Type Response
        let m = try ATTReadByGroupTypeResponse.decode(Hex.parse("11 06 01 00 04 00 01 18 05 00 0d 00 00 18 0e 00 0e 00 0a 18")!)
        #expect(m.entries.count == 3 && m.entries[2] == ATTGroupValue(start: 14, end: 14, value: [0x0A, 0x18]))
        let v = try ATTReadMultipleVariableResponse.decode([0x21, 0x05, 0x00, 0xAA])
        #expect(v.values == [[0xAA]] && v.lengths == [5])
        #expect(v.encode() == [0x21, 0x05, 0x00, 0xAA])
    }
}
