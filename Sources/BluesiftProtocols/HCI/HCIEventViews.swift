import BluesiftWire

/// The fields analysis reads off an HCI packet, each nil until read: what an event's view
/// (`HCIEventView.read`) and a command's decode found, in the order they come. Plain data (no
/// references): a frame copies it with its packet.
public struct HCIFields {
    /// Command Complete/Status: the command answered, and the credits returned.
    public var commandOpcode: UInt16?
    public var numPackets: UInt8?
    /// Command Complete: everything after the opcode (status first for most commands).
    public var returnParameters: UnsafeRawBufferPointer?
    public var status: HCIStatus?
    public var handle: UInt16?
    /// Disconnect / Disconnection Complete reason.
    public var reason: HCIStatus?
    public var peer: BDAddr?
    public var peerAddressType: AddressType?
    /// 0 = central, 1 = peripheral (LE Connection Complete, Role Change).
    public var role: UInt8?
    /// Connection Complete link type: 0 SCO, 1 ACL, 2 eSCO.
    public var linkType: UInt8?
    /// Connection interval (1.25 ms units), latency (events), supervision timeout (10 ms units).
    public var interval: UInt16?
    public var intervalMin: UInt16?
    public var intervalMax: UInt16?
    public var latency: UInt16?
    public var supervisionTimeout: UInt16?
    /// Encryption Change: 0 off, 1 on (E0 / AES-CCM), 2 AES-CCM on BR/EDR.
    public var encryption: UInt8?
    public var keySize: UInt8?
    public var txPHY: UInt8?
    public var rxPHY: UInt8?
    public var maxTxOctets: UInt16?
    public var maxTxTime: UInt16?
    public var maxRxOctets: UInt16?
    public var maxRxTime: UInt16?
    /// LE Read Remote Features Complete: feature bits, little-endian.
    public var features: UInt64?

    public init() {}
}

/// Where a PDU's parameters carry 6-byte device addresses and key material: offsets in the
/// parameters, whatever their length (the caller checks each against the bytes it has).
/// `redact` finds them through `HCIFieldLayout`; each fact lives with its PDU's type.
public protocol HCIParameterLayout {
    static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int])
    /// (byte range, what it is).
    static func keyRanges(in p: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)])
}

extension HCIParameterLayout {
    public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) {}
    public static func keyRanges(in p: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)]) {}
}

/// An HCI event's parameters read in place (borrowed, nothing allocated): the analyzer's
/// describe, summary and JSON and the host's typed events read events only through these.
/// `read` is a partial read: it stops at the first damaged field and throws its error (offset
/// in `parameters`), the fields before it kept in `f`. Fields `read` does not keep are read
/// lazily by the view's own accessors.
public protocol HCIEventView: HCIParameterLayout {
    /// The parameters after the event code and length (LE Meta: after the subevent code).
    var parameters: UnsafeRawBufferPointer { get }
    init(parameters: UnsafeRawBufferPointer)
    /// The fields `read` keeps describe every parameter (false: the analyzer shows them raw too).
    static var readsAllParameters: Bool { get }
    /// Reads the fields analysis keeps, in order. `cut`: the capture cut the event, so a count
    /// running past its end is no damage.
    func read(into f: inout HCIFields, cut: Bool) throws(DecodeError)
}

extension HCIEventView {
    public static var readsAllParameters: Bool { true }

    /// `n` bytes at `offset` of the parameters, or the damage (a lazily read field).
    @inlinable
    public func bytes(at offset: Int, _ n: Int, _ what: StaticString) throws(DecodeError) -> UnsafeRawBufferPointer {
        var r = ByteReader(parameters, at: offset)
        return try r.readBytes(n, what)
    }

    @inlinable
    public func uint8(at offset: Int, _ what: StaticString) throws(DecodeError) -> UInt8 { try bytes(at: offset, 1, what)[0] }

    @inlinable
    public func uint16(at offset: Int, _ what: StaticString) throws(DecodeError) -> UInt16 {
        let b = try bytes(at: offset, 2, what)
        return UInt16(b[0]) | UInt16(b[1]) << 8
    }

    /// Everything from `offset` on (empty past the end).
    @inlinable
    public func rest(from offset: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: parameters[min(offset, parameters.count)...])
    }

    /// The whole view read with nothing cut: every field, or the damage (the typed events' decode).
    public func fields() throws(DecodeError) -> HCIFields {
        var f = HCIFields()
        try read(into: &f, cut: false)
        return f
    }
}

/// A view whose fields analysis does not read: the parameters are shown raw (advertising
/// reports are the `adv` layer's), and the typed event reads what it needs lazily.
public protocol HCIUnreadEventView: HCIEventView {}

extension HCIUnreadEventView {
    public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {}
}

/// Core 6.0 Vol 4 Part E §5.4.4: a vendor-specific event (code 0xFF). Vendors put their own
/// event code first (Android's HCI extensions, Broadcom, Intel); the rest is theirs. No typed
/// event: analysis shows the parameters raw and the summary names the vendor's code.
public struct HCIVendorEventView: HCIUnreadEventView {
    public let parameters: UnsafeRawBufferPointer
    public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
    public static var readsAllParameters: Bool { false }
    /// The vendor's own event code; nil for an empty event.
    public var vendorCode: UInt8? { parameters.first }
}

/// The events this codec knows, by event code and LE subevent: one table (Bumble:
/// `HCI_Event.event_classes`), and the views found from it.
public enum HCIEvents {
    /// Every typed event.
    public static let all: [any HCIEvent.Type] = [
        HCIConnectionCompleteEvent.self, HCIConnectionRequestEvent.self, HCIDisconnectionCompleteEvent.self,
        HCIAuthenticationCompleteEvent.self, HCIRemoteNameRequestCompleteEvent.self, HCIEncryptionChangeEvent.self,
        HCIReadRemoteSupportedFeaturesCompleteEvent.self, HCIReadRemoteVersionInformationCompleteEvent.self,
        HCICommandCompleteEvent.self, HCICommandStatusEvent.self, HCIHardwareErrorEvent.self, HCIRoleChangeEvent.self,
        HCINumberOfCompletedPacketsEvent.self, HCILinkKeyRequestEvent.self, HCILinkKeyNotificationEvent.self,
        HCISynchronousConnectionCompleteEvent.self, HCIEncryptionKeyRefreshCompleteEvent.self, HCIEncryptionChangeV2Event.self,
        HCILEConnectionCompleteEvent.self, HCILEAdvertisingReportEvent.self, HCILEConnectionUpdateCompleteEvent.self,
        HCILEReadRemoteFeaturesCompleteEvent.self, HCILELongTermKeyRequestEvent.self, HCILERemoteConnectionParameterRequestEvent.self,
        HCILEDataLengthChangeEvent.self, HCILEEnhancedConnectionCompleteEvent.self, HCILEDirectedAdvertisingReportEvent.self, HCILEPHYUpdateCompleteEvent.self,
        HCILEExtendedAdvertisingReportEvent.self, HCILEChannelSelectionAlgorithmEvent.self, HCILESubrateChangeEvent.self,
        HCILEEnhancedConnectionCompleteV2Event.self
    ]

    public static let types: [HCIEventCode: any HCIEvent.Type] = Dictionary(
        uniqueKeysWithValues: all.filter { !($0 is any HCILEMetaEvent.Type) }.map { ($0.code, $0) })

    public static let leTypes: [HCILESubeventCode: any HCILEMetaEvent.Type] = Dictionary(
        uniqueKeysWithValues: all.compactMap { $0 as? any HCILEMetaEvent.Type }.map { ($0.subevent, $0) })

    /// Views by event code and by LE subevent, indexed by the code (one load per event).
    /// (Metatypes of views, which hold pointers: immutable, so shared safely.)
    nonisolated(unsafe) static let views: [(any HCIEventView.Type)?] = table(types.map { e -> (UInt8, any HCIEvent.Type) in (e.key.rawValue, e.value) })
    nonisolated(unsafe) static let leViews: [(any HCIEventView.Type)?] = table(leTypes.map { e -> (UInt8, any HCIEvent.Type) in (e.key.rawValue, e.value) })

    private static func table(_ entries: [(UInt8, any HCIEvent.Type)]) -> [(any HCIEventView.Type)?] {
        var t = [(any HCIEventView.Type)?](repeating: nil, count: 256)
        for (c, type) in entries { t[Int(c)] = viewType(type) }
        return t
    }

    private static func viewType<T: HCIEvent>(_ t: T.Type) -> any HCIEventView.Type { T.View.self }

    /// The view of event `code` (LE Meta: of `subevent`), nil for one without a type.
    public static func view(code: UInt8, subevent: UInt8? = nil) -> (any HCIEventView.Type)? {
        code == HCIEventCode.leMeta.rawValue ? subevent.flatMap { leViews[Int($0)] } : views[Int(code)]
    }

    /// Reads event `code`'s parameters through its view into `f` (LE Meta: the subevent code
    /// first, into `subevent`). Returns whether the fields read describe every parameter
    /// (false for an event without a view); damage is thrown with its offset in `p`.
    public static func read(
        code: UInt8, parameters p: UnsafeRawBufferPointer, subevent: inout UInt8?, into f: inout HCIFields, cut: Bool
    ) throws(DecodeError) -> Bool {
        if code == HCIEventCode.leMeta.rawValue {
            var r = ByteReader(p)
            let sub = try r.readUInt8("subevent code")
            subevent = sub
            guard let v = leViews[Int(sub)] else { return false }
            do throws(DecodeError) { try v.init(parameters: r.remaining).read(into: &f, cut: cut) } catch { throw error.shifted(1) }
            return v.readsAllParameters
        }
        guard let v = views[Int(code)] else { return false }
        try v.init(parameters: p).read(into: &f, cut: cut)
        return v.readsAllParameters
    }

    /// An event packet as its type; nil for a code (or LE subevent) without one.
    public static func decode(_ packet: [UInt8]) throws(DecodeError) -> (any HCIEvent)? {
        guard let first = packet.first else {
            throw DecodeError(layer: "hci", code: .truncated, offset: 0, message: "event code: need 1 bytes, 0 left")
        }
        let code = HCIEventCode(first)
        if code == .leMeta {
            guard packet.count > 2, let type = leTypes[HCILESubeventCode(packet[2])] else { return nil }
            return try type.decode(packet)
        }
        guard let type = types[code] else { return nil }
        return try type.decode(packet)
    }
}

extension DecodeError {
    /// Moves an offset from a parameter view to the bytes around it.
    func shifted(_ base: Int) -> DecodeError {
        var e = self
        e.offset += base
        return e
    }
}
