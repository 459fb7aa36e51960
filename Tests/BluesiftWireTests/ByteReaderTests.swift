import Testing
@testable import BluesiftWire

@Suite struct ByteReaderTests {
    @Test func readsLittleAndBigEndian() throws {
        let bytes: [UInt8] = [0x34, 0x12, 0x12, 0x34, 0x01]
        try bytes.withUnsafeBytes { (p) throws -> Void in
            var r = ByteReader(p)
            #expect(try r.readUInt16(.little) == 0x1234)
            #expect(try r.readUInt16(.big) == 0x1234)
            #expect(r.readableBytes == 1)
            #expect(throws: DecodeError.self) { try r.readUInt32() }
            #expect(r.readerIndex == 4) // a failed read consumes nothing
        }
    }

    @Test func truncatedErrorCarriesOffset() {
        let bytes: [UInt8] = [1, 2, 3]
        bytes.withUnsafeBytes { p in
            var r = ByteReader(p)
            _ = try? r.readUInt8()
            do throws(DecodeError) { _ = try r.readBytes(1_000_000_000); Issue.record("expected throw") } catch {
                #expect(error.code == DecodeError.Code.truncated)
                #expect(error.offset == 1)
            }
        }
    }

    @Test func uuidFormatting() {
        #expect(BluetoothUUID(0x180F).description == "180f")
        let base128 = BluetoothUUID(string: "0000180F-0000-1000-8000-00805F9B34FB")!
        #expect(base128.description == "180f")
        #expect(base128.shortValue == 0x180F)
        let vendor = BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")!
        #expect(vendor.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        let le = vendor.littleEndianBytes
        #expect(le.first == 0x9e && le.last == 0x6e)
        #expect(BluetoothUUID(littleEndian: le) == vendor)
    }

    @Test func addressFormatting() {
        let a: [UInt8] = [0x01, 0x00, 0x00, 0x0d, 0xba, 0xc0]
        a.withUnsafeBytes { p in
            #expect(BDAddr(littleEndian: p).description == "c0:ba:0d:00:00:01")
        }
        #expect(BDAddr(string: "C0:BA:0D:00:00:01")?.value == 0xC0BA0D000001)
    }

    @Test func jsonWriterEscapesAndNests() {
        var w = JSONFieldWriter()
        w.beginTopLevel()
        w.int("frame", 3)
        w.string("name", "a\"b\n")
        w.array("list") { s in
            s.int("", 1); s.int("", -2)
        }
        w.object("o") { s in
            s.hex("v", [0xA5, 0x06]); s.null("n")
        }
        w.endTopLevel()
        #expect(String(decoding: w.out, as: UTF8.self) == #"{"frame":3,"name":"a\"b\n","list":[1,-2],"o":{"v":"a506","n":null}}"#)
    }

    @Test func hexParse() {
        #expect(Hex.parse("a5 06 03") == [0xA5, 0x06, 0x03])
        #expect(Hex.parse("a5 0") == nil)
    }
}
