import BluesiftWire
import BluesiftCapture

/// Everything decoded from one capture record. Borrows bytes from the reader and the
/// decoder: valid until the next `ProtocolDecoder.decode` call.
public struct DecodedFrame {
    /// The layers a frame carries. Counting and resetting read this instead of the layers
    /// themselves: Swift copies a layer (200-300 bytes) to test its optional for nil.
    public struct Layers: OptionSet, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let hci = Layers(rawValue: 1 << 0)
        public static let l2cap = Layers(rawValue: 1 << 1)
        public static let att = Layers(rawValue: 1 << 2)
        public static let smp = Layers(rawValue: 1 << 3)
        public static let adv = Layers(rawValue: 1 << 4)
        public static let ll = Layers(rawValue: 1 << 5)
        public static let note = Layers(rawValue: 1 << 6)
    }

    public var record: CaptureRecord
    /// Connection handle (HCI) or a stable per-connection number (sniffer), where there is one.
    public var connection: UInt16?
    /// The common layers live in place, set by the decoder only and valid while `layers`
    /// holds them: the decoder writes and reads them there and renderers read them there
    /// (building an optional cost three copies of ~200 bytes a record, eight for a completed
    /// L2CAP PDU). `hci`, `l2cap`, `att` and `adv` are optional views of them.
    public internal(set) var hciStorage = HCIPacket(kind: .unknown, opcode: 0, bytes: Self.noBytes)
    public internal(set) var l2capStorage = L2CAPLayer(cid: 0, length: 0, payload: Self.noBytes)
    public internal(set) var attStorage = ATTPDU()
    public internal(set) var advStorage = AdvertisingLayer(opcode: 0, parameters: Self.noBytes)
    public var hci: HCIPacket? { layers.contains(.hci) ? hciStorage : nil }
    public var l2cap: L2CAPLayer? { layers.contains(.l2cap) ? l2capStorage : nil }
    public var att: ATTPDU? { layers.contains(.att) ? attStorage : nil }
    public var adv: AdvertisingLayer? { layers.contains(.adv) ? advStorage : nil }
    static var noBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }
    /// For an ATT response: the frame of its request and the latency.
    public var attTransaction: ATTTransaction?
    /// Rarer layers, set by the decoder only, together with `layers`.
    public internal(set) var smp: SMPPDU?
    public internal(set) var ll: LLPacket?
    /// Text of `.note` records, and descriptions of index/control records.
    public internal(set) var note: String?
    public internal(set) var layers: Layers = []
    public var errors: [DecodeError]

    public init(record: CaptureRecord) {
        self.record = record
        self.errors = []
    }

    /// Empties the frame for the next record in place (a fresh 1.3 kB value per record was
    /// copied several times on its way to the renderer). Only the layers present are
    /// cleared: each clear is a call through the layer's value witness.
    @inline(__always)
    mutating func reset(_ record: CaptureRecord) {
        self.record = record
        connection = nil; attTransaction = nil
        if !layers.isEmpty {
            if layers.contains(.smp) { smp = nil }
            if layers.contains(.ll) { ll = nil }
            if layers.contains(.note) { note = nil }
            layers = []
        }
        if !errors.isEmpty { errors.removeAll(keepingCapacity: true) }
    }

    mutating func set(_ v: L2CAPLayer) { l2capStorage = v; layers.insert(.l2cap) }
    mutating func set(_ v: ATTPDU) { attStorage = v; layers.insert(.att) }
    mutating func set(_ v: SMPPDU) { smp = v; layers.insert(.smp) }
    mutating func set(_ v: AdvertisingLayer) { advStorage = v; layers.insert(.adv) }
    mutating func set(_ v: LLPacket) { ll = v; layers.insert(.ll) }
    mutating func set(note v: String) { note = v; layers.insert(.note) }
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
