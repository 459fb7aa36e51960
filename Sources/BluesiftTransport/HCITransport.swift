import BluesiftCapture
import BluesiftWire

/// One HCI packet as carried over H4: the packet type plus the HCI packet without the
/// indicator byte (Core 5.4 Vol 4 Part A §2).
public struct H4Packet: Hashable, Sendable, CustomStringConvertible {
    public var kind: PacketKind
    public var bytes: [UInt8]

    public init(_ kind: PacketKind, _ bytes: [UInt8]) { self.kind = kind; self.bytes = bytes }

    /// Indicator byte followed by the packet, as written to an H4 stream.
    public var h4Bytes: [UInt8] { [kind.rawValue] + bytes }

    public var description: String { "\(kind.name) \(Hex.string(bytes))" }
}

/// Every packet crossing a transport, seen by the tap in send/receive order.
public struct HCITapEvent: Sendable {
    /// `.sent` host→controller, `.received` controller→host.
    public var direction: Direction
    public var packet: H4Packet
    /// Wall clock when the packet was written or fully framed.
    public var timestamp: Timestamp

    /// Presents the event as a capture record (e.g. to hand to a `CaptureWriter`).
    public func withCaptureRecord<R>(frame: Int, _ body: (CaptureRecord) throws -> R) rethrows -> R {
        try packet.bytes.withUnsafeBytes { p in
            try body(
                CaptureRecord(
                    frame: frame, timestamp: timestamp, direction: direction,
                    kind: packet.kind, bytes: p, sourceType: UInt16(packet.kind.rawValue)))
        }
    }
}

/// A link to an HCI controller. Single-threaded: one owner sends and receives.
public protocol HCITransport: AnyObject {
    /// Writes one packet (`bytes` excludes the H4 indicator).
    func send(_ kind: PacketKind, _ bytes: [UInt8]) throws(TransportError)
    /// The next packet from the controller, or nil when `timeout` passes first.
    /// Throws `.closed` once the peer has gone away.
    func receive(timeout: Duration) throws(TransportError) -> H4Packet?
    func close()
    /// Called for every packet sent or received, in order.
    var tap: ((HCITapEvent) -> Void)? { get set }
    /// The spec it was opened from, e.g. "tcp:127.0.0.1:9001".
    var name: String { get }
    /// The kernel socket's receive buffer and its drops (an HCI user channel); nil elsewhere.
    var kernelBuffer: KernelBuffer? { get }
}

/// The receive buffer of an HCI user channel socket, and the packets the kernel dropped
/// because it was full (a notification flood faster than this host reads).
public struct KernelBuffer: Sendable, Equatable {
    /// SO_RCVBUF as the kernel reports it (twice what was set: it counts its bookkeeping too);
    /// nil when it could not be read.
    public var bytes: Int?
    /// Packets dropped so far: SO_RXQ_OVFL's count, or SO_MEMINFO's when larger.
    public var dropped: Int

    public init(bytes: Int?, dropped: Int) { self.bytes = bytes; self.dropped = dropped }
}

extension HCITransport {
    public var kernelBuffer: KernelBuffer? { nil }
    public func send(_ packet: H4Packet) throws(TransportError) { try send(packet.kind, packet.bytes) }
}

/// Transport failures, with a message meant for the user.
public struct TransportError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: Sendable, Hashable {
        case badSpec, openFailed, noBluetoothSockets, adapterBusy, permissionDenied, noSuchAdapter
        case io, closed, unsupported
    }
    public var code: Code
    public var errno: Int32?
    public var message: String

    public init(_ code: Code, errno: Int32? = nil, _ message: String) {
        self.code = code; self.errno = errno; self.message = message
    }

    public var description: String { message }
}
