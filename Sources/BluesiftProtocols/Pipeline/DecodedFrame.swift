import BluesiftWire
import BluesiftCapture

/// Everything decoded from one capture record. Borrows bytes from the reader and the
/// decoder: valid until the next `ProtocolDecoder.decode` call.
public struct DecodedFrame {
    /// The layers a frame carries, one bit per `FrameLayer` (the registry declares them).
    /// Counting and resetting read this instead of the layers themselves: Swift copies a
    /// layer (200-300 bytes) to test its optional for nil.
    public struct Layers: OptionSet, Sendable {
        public var rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }
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
    /// The layer of a protocol module (`ProtocolModule`): at most one per frame, its bits
    /// (`value.layers`) set in `layers`.
    public internal(set) var module: (any ModuleLayer)?
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
            if !layers.isDisjoint(with: .anyModule) { module = nil }
            layers = []
        }
        if !errors.isEmpty { errors.removeAll(keepingCapacity: true) }
    }

    mutating func set(_ v: L2CAPLayer) { l2capStorage = v; layers.insert(.l2cap) }
    mutating func set(_ v: ATTPDU) { attStorage = v; layers.insert(.att) }
    mutating func set(_ v: SMPPDU) { smp = v; layers.insert(.smp) }
    mutating func set(_ v: AdvertisingLayer) { advStorage = v; layers.insert(.adv) }
    mutating func set(_ v: LLPacket) { ll = v; layers.insert(.ll) }
    /// Sets a module's layer (the decoder's carriers, or the analyzer's GATT carriers).
    public mutating func set(module v: any ModuleLayer) { module = v; layers.formUnion(v.layers) }
    /// The module layer as its type: `f.moduleLayer(RFCOMMFrame.self)`.
    public func moduleLayer<T: ModuleLayer>(_ type: T.Type) -> T? { module as? T }
    mutating func set(note v: String) { note = v; layers.insert(.note) }
}

/// A response paired with its request.
public struct ATTTransaction: Sendable, Hashable {
    public var requestFrame: Int
    public var latencyMicroseconds: Int64
    /// The attribute handle a Read, Read Blob or Write Request addressed: names its response
    /// (or Error Response), which carries no handle of its own.
    public var requestHandle: UInt16?
    public init(requestFrame: Int, latencyMicroseconds: Int64, requestHandle: UInt16? = nil) {
        self.requestFrame = requestFrame; self.latencyMicroseconds = latencyMicroseconds
        self.requestHandle = requestHandle
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
    /// Sniffed LE connections: what the air showed of them.
    public var air: AirLink?
    /// BR/EDR: Classic profiles seen on this link (`info`).
    public var profiles: [ClassicProfile] = []
    /// Synchronous links (Synchronous Connection Complete, Vol 4 Part E §7.7.35): link type
    /// (0 SCO, 2 eSCO), air mode, and the SCO data packets counted on the handle.
    public var linkType: UInt8?
    public var airMode: UInt8?
    public var scoPackets = 0
    public init(adapter: UInt16, handle: UInt16) { self.adapter = adapter; self.handle = handle }
}

/// An over-the-air LE connection as a sniffer saw it (Core 5.4 Vol 6 Part B §2.3.3.1, §5).
public struct AirLink: Sendable, Hashable {
    public var central: BDAddr?
    public var centralAddressType: AddressType?
    public var peripheral: BDAddr?
    public var peripheralAddressType: AddressType?
    /// Connection interval in units of 1.25 ms, and supervision timeout in units of 10 ms
    /// (from CONNECT_IND, updated by LL_CONNECTION_UPDATE_IND).
    public var interval: UInt16?
    public var timeout: UInt16?
    /// CONNECT_IND's CRCInit (§2.3.3.1), for CRCs of rewritten packets.
    public var crcInit: UInt32?
    public var channelMapUpdates = 0
    public var connectionUpdates = 0
    /// PHY of the last packet seen in each direction: 0 = 1M, 1 = 2M, 2 = Coded.
    public var phy: UInt8?
    /// LL_TERMINATE_IND error code, when captured.
    public var terminateReason: UInt8?
    /// The packets stopped for longer than the supervision timeout before the capture ended.
    public var supervisionTimeout = false
    public var lastSeen: Timestamp?
    public var lastSeenFrame: Int?
    public var packets = 0
    public var crcBad = 0
    /// Of `crcBad`: non-empty PDUs the receiver acknowledged (its NESN flipped), and the first.
    public var crcBadAcknowledged = 0
    public var firstCRCBadAcknowledged: Int?
    public var retransmissions = 0
    public var missed = 0
    /// Data PDUs sent as ciphertext, those decrypted, and those whose MIC failed.
    public var encrypted = 0
    public var decrypted = 0
    public var micFailures = 0
    /// Of `decrypted`: those the sniffer itself decrypted (nRF Sniffer, MIC removed).
    public var decryptedBySniffer = 0
    /// Encryption started (LL_START_ENC_REQ) this many times.
    public var encryptionStarts = 0
    /// What is known of the keys: "LE Secure Connections: not recoverable…", "TK found: 000000", …
    public var security: [String] = []
    public init() {}
}
