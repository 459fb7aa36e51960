import Testing
import BluesiftProtocols
import BluesiftTransport
import BluesiftWire
@testable import BluesiftHost

/// A bearer that answers each PDU sent from a script: the ATT client alone, no HCI, as over
/// the kernel's LE L2CAP socket.
final class ScriptedBearer: ATTBearer {
    let name = "scripted-bearer"
    var sent: [[UInt8]] = []
    var queue: [[UInt8]] = []
    var respond: ([UInt8]) -> [[UInt8]] = { _ in [] }
    var closed = false
    func send(_ pdu: [UInt8]) throws(TransportError) {
        if closed { throw TransportError(.closed, "\(name): link closed") }
        sent.append(pdu)
        queue += respond(pdu)
    }
    func receive(timeout: Duration) throws(TransportError) -> [UInt8]? {
        if closed { throw TransportError(.closed, "\(name): the device disconnected") }
        return queue.isEmpty ? nil : queue.removeFirst()
    }
    func secure(level: UInt8, timeout: Duration) throws(TransportError) -> (level: UInt8, keySize: UInt8) { (level, 16) }
    func close() { closed = true }
}

@Suite struct ATTClientTests {
    @Test func readOverABearerWithoutHCI() throws {
        let b = ScriptedBearer()
        // The answer comes after a notification and a peer's Read Request (answered, no database).
        b.respond = { p in p[0] == 0x0A ? [[0x1B, 0x20, 0x00, 0x07], [0x0A, 0x05, 0x00], [0x0B, 1, 2, 3]] : [] }
        let c = ATTClient(bearer: b, timeout: .milliseconds(200))
        #expect(try c.read(0x0003) == [1, 2, 3])
        #expect(b.sent == [[0x0A, 0x03, 0x00], [0x01, 0x0A, 0x05, 0x00, 0x01]]) // Invalid Handle for the peer's read
        #expect(c.takeNotifications().map(\.handle) == [0x0020])
    }

    @Test func closedBearerIsTransportClosedThenNotConnected() {
        let b = ScriptedBearer()
        let c = ATTClient(bearer: b, timeout: .milliseconds(200))
        b.closed = true
        #expect(throws: HostError.transportClosed("scripted-bearer: link closed")) { _ = try c.read(0x0003) }
        #expect(throws: HostError.notConnected) { _ = try c.read(0x0003) }
    }

    @Test func unansweredRequestTimesOut() {
        let c = ATTClient(bearer: ScriptedBearer(), timeout: .milliseconds(50))
        #expect(throws: HostError.timeout("ATT response to Read Request")) { _ = try c.read(0x0003) }
    }
}
