import BluesiftWire
import BluesiftCapture

/// Everything decoded from one capture record. Borrows bytes from the reader and the
/// decoder: valid until the next `ProtocolDecoder.decode` call.
public struct DecodedFrame {
    public var record: CaptureRecord
    /// Connection handle (HCI) or a stable per-connection number (sniffer), where there is one.
    public var connection: UInt16?
    public var hci: HCIPacket?
    public var l2cap: L2CAPLayer?
    public var att: ATTPDU?
    /// For an ATT response: the frame of its request and the latency.
    public var attTransaction: ATTTransaction?
    public var smp: SMPPDU?
    public var adv: AdvertisingLayer?
    public var ll: LLPacket?
    /// Text of `.note` records, and descriptions of index/control records.
    public var note: String?
    public var errors: [DecodeError]

    public init(record: CaptureRecord) {
        self.record = record
        self.errors = []
    }

    /// Empties the frame for the next record in place (a fresh 1.3 kB value per record was
    /// copied several times on its way to the renderer).
    @inline(__always)
    mutating func reset(_ record: CaptureRecord) {
        self.record = record
        connection = nil; hci = nil; l2cap = nil; att = nil; attTransaction = nil
        smp = nil; adv = nil; ll = nil; note = nil
        if !errors.isEmpty { errors.removeAll(keepingCapacity: true) }
    }
}

/// A response paired with its request.
public struct ATTTransaction: Sendable, Hashable {
    public var requestFrame: Int
    public var latencyMicroseconds: Int64
    public init(requestFrame: Int, latencyMicroseconds: Int64) {
        self.requestFrame = requestFrame; self.latencyMicroseconds = latencyMicroseconds
    }
}

/// A connection as tracked across the capture.
public struct ConnectionInfo: Sendable, Hashable {
    public enum Transport: String, Sendable { case le = "LE", bredr = "BR/EDR" }
    public enum Role: String, Sendable { case central, peripheral }
    public var adapter: UInt16
    public var handle: UInt16
    public var peer: BDAddr?
    public var peerAddressType: AddressType?
    public var role: Role?
    public var transport: Transport?
    public var start: Timestamp?
    public var end: Timestamp?
    public var startFrame: Int?
    public var endFrame: Int?
    /// Disconnection reason (HCI error code), when seen.
    public var disconnectReason: UInt8?
    /// Sniffed LE connections: the access address that identifies them.
    public var accessAddress: UInt32?
    public init(adapter: UInt16, handle: UInt16) { self.adapter = adapter; self.handle = handle }
}
