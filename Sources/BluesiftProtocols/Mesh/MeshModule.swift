import BluesiftWire
import BluesiftSecurity

// Bluetooth Mesh as a protocol module (docs/DESIGN.md, "Adding a protocol"): the advertising
// bearer (AD types 0x29 PB-ADV, 0x2A Mesh Message, 0x2B Mesh Beacon; Mesh Protocol v1.1
// §3.3.1), Mesh Provisioning/Proxy service data (§7.1.2.2.1, §7.2.2.2) and the GATT bearer
// (Mesh Provisioning Data In/Out 0x2ADB/0x2ADC, Mesh Proxy Data In/Out 0x2ADD/0x2ADE; §6.3,
// §7.1.3, §7.2.3), all through one `MeshDecoder` per capture: one network heard on every bearer.

/// The `mesh` layer.
public enum Mesh: ProtocolModule {
    public static let layers = [LayerSpec("mesh", specificity: 10)]
    public static let layer = FrameLayer.registered("mesh")
    public static var collector: (any StatsCollector.Type)? { MeshStats.self }
    /// Configuration messages and provisioning data carry keys (`MeshPDU.secrets`).
    public static var holdsSecrets: Bool { true }

    /// AD types of the advertising bearer (Mesh Protocol v1.1 §3.3.1, CSS).
    public static let pbADV: UInt8 = 0x29, meshMessage: UInt8 = 0x2A, meshBeacon: UInt8 = 0x2B
    /// Mesh Provisioning and Mesh Proxy services (their service data, §7.1.2.2.1, §7.2.2.2).
    public static let provisioningService: UInt16 = 0x1827, proxyService: UInt16 = 0x1828
    /// Mesh Provisioning Data In/Out, Mesh Proxy Data In/Out (§7.1.3, §7.2.3).
    public static let characteristics: ClosedRange<UInt16> = 0x2ADB...0x2ADE

    public static let carriers: [Carrier] =
        [pbADV, meshMessage, meshBeacon].map { .adType($0) } + [provisioningService, proxyService].map { .serviceData($0) }
        + characteristics.map { .gattCharacteristic(BluetoothUUID(UInt32($0))) }

    public static let options = [
        ModuleOption(
            "mesh-keys", valueName: "FILE", kind: .decode,
            help:
                "Bluetooth Mesh keys: a JSON object {\"iv_index\": \"12345678\", \"net_keys\": [hex], \"app_keys\": [hex], \"dev_keys\": {\"0x1201\": hex}, \"label_uuids\": [hex], \"provisioning_secrets\": [64 hex digits: ECDH secrets or private keys]}; network and access messages are decrypted, each says mic ok|bad or why it stayed encrypted. Never printed."
        ),
        ModuleOption("mesh-src", valueName: "ADDR", kind: .filter, help: "Only mesh network PDUs from this address (0x1201, or decimal)"),
        ModuleOption("mesh-dst", valueName: "ADDR", kind: .filter, help: "Only mesh network PDUs to this address (0xc000, or decimal)")
    ]

    public static func configure(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any Sendable)? {
        guard let path = values.last("mesh-keys") else { return nil }
        do { return try MeshKeys.load(path: path) } catch {
            // The error names a member or the file, never a key.
            throw ModuleOptionError(option: "mesh-keys", value: path, error.code == .io ? "cannot read the file" : error.description, unusableInput: true)
        }
    }

    public static func filter(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any ModuleFrameFilter)? {
        func addresses(_ name: String) throws(ModuleOptionError) -> Set<UInt16> {
            var s = Set<UInt16>()
            for v in values[name] {
                guard let a = MeshAddressFilter.parse(v) else {
                    throw ModuleOptionError(option: name, value: v, "expected a mesh address such as 0x1201 (0x0001-0xffff) or its decimal value")
                }
                s.insert(a)
            }
            return s
        }
        let f = MeshAddressFilter(sources: try addresses("mesh-src"), destinations: try addresses("mesh-dst"))
        return f.sources.isEmpty && f.destinations.isEmpty ? nil : f
    }

    /// The decoder of the capture, whatever bearer carried the PDU.
    final class State {
        var mesh: MeshDecoder
        init(keys: MeshKeys?) {
            mesh = MeshDecoder(keys: keys)
            mesh.provisioningSecrets = keys?.provisioningSecrets ?? []
        }
    }

    public static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        let s = x.captureState(State.self) { State(keys: x.configuration(MeshKeys.self)) }
        // Where the PDU lies in the record, so `redact` can seal key material again in place.
        s.mesh.frame = x.record.frame
        s.mesh.recordOffset = nil
        if let base = x.record.bytes.baseAddress, let at = pdu.baseAddress, at >= base, at + pdu.count <= base + x.record.bytes.count {
            s.mesh.recordOffset = at - base
        }
        switch x.carrier {
        case .adType(let t):
            return MeshPDU(s.mesh.decodeAdvertising(adType: t, data: Array(pdu)))
        case .serviceData(let u):
            return MeshPDU(s.mesh.decodeServiceData(uuid: u, data: Array(pdu)))
        case .gattCharacteristic(let u):
            // One stream per connection and characteristic (In and Out are two), one
            // provisioning session per connection (§6.3.2, §5.2.2).
            let connection = Int(f.connection ?? 0) | (f.layers.contains(.ll) ? 1 << 16 : 0)
            return MeshPDU(s.mesh.decodeProxy(Array(pdu), stream: connection << 16 | Int(u.shortValue ?? 0), connection: connection))
        default:
            return nil
        }
    }
}

/// `--mesh-src` / `--mesh-dst`: records whose network PDU (decrypted: its header is
/// obfuscated otherwise) has one of the sources and one of the destinations given.
public struct MeshAddressFilter: ModuleFrameFilter {
    public var sources: Set<UInt16>, destinations: Set<UInt16>

    public func matches(_ frame: borrowing DecodedFrame) -> Bool {
        guard let n = frame.moduleLayer(MeshPDU.self)?.mesh.network else { return false }
        return (sources.isEmpty || sources.contains(n.src)) && (destinations.isEmpty || destinations.contains(n.dst))
    }

    /// "0x1201" (hex), or decimal; 0x0000 (unassigned) is none.
    static func parse(_ s: String) -> UInt16? {
        let v: UInt32? = s.lowercased().hasPrefix("0x") ? UInt32(s.dropFirst(2), radix: 16) : UInt32(s)
        guard let v, v > 0, v <= 0xFFFF else { return nil }
        return UInt16(v)
    }
}

/// A `mesh` layer value: what `MeshDecoder` made of one bearer PDU.
public struct MeshPDU: ModuleLayer {
    public var mesh: MeshLayer
    public init(_ mesh: MeshLayer) { self.mesh = mesh }
    public var layers: DecodedFrame.Layers { Mesh.layer.bit }
    /// Notes are the record's errors (a bad MIC is not: it is a field, `mic: bad`).
    public var error: DecodeError? { mesh.notes.first }
    public func name(_ layer: FrameLayer) -> String {
        if let a = mesh.access { return a.opcode.name }
        if let c = mesh.control { return c.opcode.name }
        if let b = mesh.beacon { return b.type.name + " beacon" }
        if let p = mesh.provisioning { return "Provisioning " + p.type.name }
        if let p = mesh.pbadv { return "PB-ADV " + p.pdu.name }
        if mesh.serviceData != nil { return "Mesh service data" }
        if mesh.networkPDU != nil { return "Mesh Network PDU" }
        return "Mesh"
    }
    public func summary(_ layer: FrameLayer) -> String { mesh.summary }
    public var secrets: [ModuleSecret] { mesh.redactions }
    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key))
        // Called through `any ModuleLayer`, so unspecialised; JSON Lines (the writer is a
        // final class) takes a copy specialised for it: every field a direct call.
        if S.self == JSONFieldWriter.self {
            var j = unsafeBitCast(w, to: JSONFieldWriter.self)
            mesh.describe(into: &j)
        } else {
            mesh.describe(into: &w)
        }
        w.endObject()
    }
}
