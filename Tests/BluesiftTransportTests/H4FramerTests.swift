import Testing
import BluesiftCapture
@testable import BluesiftTransport

@Suite struct H4FramerTests {
    // Reset command, Command Complete for it, a 5-byte ACL, an SCO, an ISO with flag bits set.
    static let stream: [UInt8] = [
        0x01, 0x03, 0x0C, 0x00,
        0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00,
        0x02, 0x40, 0x00, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A,
        0x03, 0x01, 0x00, 0x02, 0xAA, 0xBB,
        0x05, 0x60, 0x00, 0x02, 0x40, 0x11, 0x22
    ]

    static let expected = [
        H4Packet(.command, [0x03, 0x0C, 0x00]),
        H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),
        H4Packet(.acl, [0x40, 0x00, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A]),
        H4Packet(.sco, [0x01, 0x00, 0x02, 0xAA, 0xBB]),
        H4Packet(.iso, [0x60, 0x00, 0x02, 0x40, 0x11, 0x22]) // length 0x4002 & 0x3FFF = 2
    ]

    @Test func wholeStreamAtOnce() {
        var f = H4Framer()
        f.append(Self.stream)
        var got = [H4Packet]()
        while let p = f.next() { got.append(p) }
        #expect(got == Self.expected)
        #expect(f.pendingByteCount == 0)
        #expect(f.discardedBytes == 0)
    }

    @Test(arguments: [1, 2, 3, 5, 7])
    func splitReads(chunk: Int) {
        var f = H4Framer()
        var got = [H4Packet]()
        var i = 0
        while i < Self.stream.count {
            f.append(Self.stream[i..<min(i + chunk, Self.stream.count)])
            i += chunk
            while let p = f.next() { got.append(p) }
        }
        #expect(got == Self.expected)
    }

    @Test func garbageIsSkippedAndCounted() {
        var f = H4Framer()
        f.append([0x00, 0xFF, 0x42] + Self.stream.prefix(4) + [0x99] + Self.stream[4..<11])
        #expect(f.next() == Self.expected[0])
        #expect(f.next() == Self.expected[1])
        #expect(f.next() == nil)
        #expect(f.discardedBytes == 4)
    }

    @Test func partialHeaderWaits() {
        var f = H4Framer()
        f.append([0x02, 0x40])
        #expect(f.next() == nil)
        f.append([0x00, 0x02, 0x00, 0xAB])
        #expect(f.next() == nil)
        #expect(f.pendingByteCount == 6)
        f.append([0xCD])
        #expect(f.next() == H4Packet(.acl, [0x40, 0x00, 0x02, 0x00, 0xAB, 0xCD]))
    }

    @Test func h4BytesPrependIndicator() {
        #expect(H4Packet(.event, [0x0E, 0x00]).h4Bytes == [0x04, 0x0E, 0x00])
    }
}
