import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins

/// A decoded frame plus what the upper layers add: the GATT name of the handle it addresses.
public struct AnalyzedFrame {
    public var decoded: DecodedFrame
    /// Service/characteristic/descriptor of the ATT handle, when known.
    public var location: GATTDatabase.Location?
    public var namedBy: NamingSource?
    /// Vendor frames a plugin decoded from this ATT value (nil when no plugin matched).
    public var vendor: PluginSet.Result?

    public init(decoded: DecodedFrame) { self.decoded = decoded }

    public var record: CaptureRecord { decoded.record }
}

/// Runs the whole analyzer over a stream of records: protocol decoding, GATT reconstruction
/// and naming. One instance per capture; memory is bounded by the number of connections
/// and devices, never by the number of records.
public final class Analyzer {
    public let decoder = ProtocolDecoder()
    public let gatt = GATTTracker()
    /// Name handles (off for plain protocol dumps, where it is wasted work).
    public var naming: Bool

    /// Vendor dissectors (nil: none loaded, and no cost per record).
    public var plugins: PluginSet?
    var pluginState = VendorState()

    public init(naming: Bool = true) { self.naming = naming }

    public func analyze(_ record: CaptureRecord) -> AnalyzedFrame {
        let d = decoder.decode(record)
        var a = AnalyzedFrame(decoded: d)
        guard let att = d.att, let conn = d.connection else { return a }
        if naming {
            let peer = decoder.connection(adapter: record.adapter, handle: conn)?.peer
            gatt.observe(d, peer: peer)
            if let h = att.handle ?? att.errorHandle,
               let (loc, source) = gatt.locate(adapter: record.adapter, connection: conn, handle: h,
                                               serverIsPeer: GATTTracker.serverIsPeer(opcode: att.opcode.rawValue, direction: record.direction)) {
                a.location = loc
                a.namedBy = source
            }
        }
        if plugins != nil { applyPlugins(&a) }
        return a
    }
}
