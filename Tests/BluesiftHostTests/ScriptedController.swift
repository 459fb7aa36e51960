import BluesiftProtocols
import BluesiftCapture
import BluesiftTransport
import BluesiftWire
import Dispatch
@testable import BluesiftHost

/// A fake controller behind the HCITransport protocol. Commands get a default success
/// answer unless `respond` returns something else; nothing ever arrives on its own, so
/// `receive` with an empty queue waits for a packet to be queued as a real transport waits
/// on its descriptor: until its timeout, the product's, when none is.
final class ScriptedController: HCITransport {
    let name = "scripted"
    var tap: ((HCITapEvent) -> Void)?
    var sent: [H4Packet] = []
    var queue: [H4Packet] = [] { didSet { if queue.count > oldValue.count { queued.signal() } } }
    private let queued = DispatchSemaphore(value: 0)
    var closed = false
    /// Replies to a sent packet; nil = default behaviour.
    var respond: ((H4Packet) -> [H4Packet]?)?
    var leBufferLength: UInt16 = 27
    var leBufferCount: UInt8 = 4

    func send(_ kind: PacketKind, _ bytes: [UInt8]) throws(TransportError) {
        if closed { throw TransportError(.closed, "scripted: closed") }
        let p = H4Packet(kind, bytes)
        sent.append(p)
        if let r = respond?(p) { queue += r; return }
        if kind == .command { queue.append(defaultAnswer(opcode: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)) }
    }

    func receive(timeout: Duration) throws(TransportError) -> H4Packet? {
        if !queue.isEmpty { return queue.removeFirst() }
        if closed { throw TransportError(.closed, "scripted: peer closed the connection") }
        while queued.wait(timeout: .now()) == .success {} // packets queued earlier were taken already
        let ns = Int(timeout.components.seconds) * 1_000_000_000 + Int(timeout.components.attoseconds / 1_000_000_000)
        _ = queued.wait(timeout: .now() + .nanoseconds(max(0, ns)))
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    func close() { closed = true }

    var sentOpcodes: [UInt16] { sent.filter { $0.kind == .command }.map { UInt16($0.bytes[0]) | UInt16($0.bytes[1]) << 8 } }
    var sentACL: [[UInt8]] { sent.filter { $0.kind == .acl }.map(\.bytes) }

    func defaultAnswer(opcode: UInt16) -> H4Packet {
        switch opcode {
        case HCICommandOpcode.readLocalVersionInformation.rawValue: return Self.complete(opcode, [0, 0x0D, 0, 0, 0x0D, 0xF1, 0x05, 0, 0])
        case HCICommandOpcode.readBDAddr.rawValue: return Self.complete(opcode, [0, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        case HCICommandOpcode.leReadLocalSupportedFeatures.rawValue: return Self.complete(opcode, [0, 0x00, 0x10, 0, 0, 0, 0, 0, 0])
        case HCICommandOpcode.leReadBufferSize.rawValue:
            return Self.complete(opcode, [0, UInt8(leBufferLength & 0xFF), UInt8(leBufferLength >> 8), leBufferCount])
        case HCICommandOpcode.readBufferSize.rawValue: return Self.complete(opcode, [0, 0xFB, 0x00, 0x40, 0x08, 0x00, 0x00, 0x00])
        case HCICommandOpcode.leCreateConnection.rawValue, HCICommandOpcode.disconnect.rawValue, HCICommandOpcode.leConnectionUpdate.rawValue: return Self.status(opcode, 0)
        default: return Self.complete(opcode, [0])
        }
    }

    static func complete(_ opcode: UInt16, _ params: [UInt8]) -> H4Packet {
        H4Packet(.event, [0x0E, UInt8(3 + params.count), 1, UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + params)
    }
    static func status(_ opcode: UInt16, _ status: UInt8) -> H4Packet {
        H4Packet(.event, [0x0F, 4, status, 1, UInt8(opcode & 0xFF), UInt8(opcode >> 8)])
    }
    static func connectionComplete(handle: UInt16 = 0x0040, status: UInt8 = 0, peer: BDAddr) -> H4Packet {
        H4Packet(
            .event,
            [0x3E, 19, 0x01, status, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x01]
                + peer.littleEndianBytes + [0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00])
    }
    static func disconnectionComplete(handle: UInt16 = 0x0040, reason: UInt8) -> H4Packet {
        H4Packet(.event, [0x05, 4, 0, UInt8(handle & 0xFF), UInt8(handle >> 8), reason])
    }
    static func completedPackets(handle: UInt16 = 0x0040, _ n: UInt16) -> H4Packet {
        H4Packet(.event, [0x13, 5, 1, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(n), 0])
    }
    /// An L2CAP frame split into ACL fragments of `fragment` bytes (PB 0b10 then 0b01).
    static func acl(handle: UInt16 = 0x0040, cid: UInt16, _ payload: [UInt8], fragment: Int = 27) -> [H4Packet] {
        let frame = [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
        var out: [H4Packet] = []
        var off = 0
        while off < frame.count {
            let part = Array(frame[off..<min(off + fragment, frame.count)])
            let hf = handle | (off == 0 ? 0x2000 : 0x1000)
            out.append(H4Packet(.acl, [UInt8(hf & 0xFF), UInt8(hf >> 8), UInt8(part.count), 0] + part))
            off += part.count
        }
        return out
    }
}

#if canImport(Glibc)
    import Glibc
#endif
