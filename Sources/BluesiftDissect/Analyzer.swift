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
    public let decoder: ProtocolDecoder
    public let gatt = GATTTracker()
    /// Name handles (off for plain protocol dumps, where it is wasted work).
    public var naming: Bool

    /// Vendor dissectors (nil: none loaded, and no cost per record).
    public var plugins: PluginSet?
    var pluginState = VendorState()

    public init(naming: Bool = true, registry: ProtocolRegistry = .shared) {
        self.naming = naming
        decoder = ProtocolDecoder(registry: registry)
    }

    public func analyze(_ record: CaptureRecord) -> AnalyzedFrame {
        var a = AnalyzedFrame(decoded: DecodedFrame(record: record))
        analyze(record, into: &a)
        return a
    }

    /// Analyzes `record` into `a`, reusing its storage: the loop form for whole captures
    /// (frames are over a kilobyte; building one per record and copying it cost 15%).
    public func analyze(_ record: CaptureRecord, into a: inout AnalyzedFrame) {
        // Naming and vendor results are only ever set on ATT frames: clear them after one
        // (clearing an optional result is a value-witness call; the mask is a bit test).
        if a.decoded.layers.contains(.att) || (plugins != nil && a.decoded.layers.contains(.l2cap) || a.vendor != nil) {
            a.location = nil; a.namedBy = nil; a.vendor = nil
        }
        decoder.decode(record, into: &a.decoded)
        if let p = plugins, p.targetsAdvertising || p.targetsMesh, a.decoded.layers.contains(.adv) {
            if p.targetsAdvertising { applyAdvertisingPlugins(&a, p) }
            if p.targetsMesh { applyMeshPlugins(&a, p) }
            return
        }
        if let p = plugins, p.targetsChannels, !a.decoded.layers.contains(.att), a.decoded.layers.contains(.l2cap) {
            applyChannelPlugins(&a, p)
            return
        }
        guard a.decoded.layers.contains(.att), let conn = a.decoded.connection else { return }
        if naming {
            let info = decoder.connection(adapter: record.adapter, handle: conn)
            gatt.observe(a.decoded, peer: info?.peer, connectionStart: info?.startFrame)
            // A response without a handle of its own is named by its request's.
            if let h = a.decoded.attStorage.handle ?? a.decoded.attStorage.errorHandle ?? a.decoded.attTransaction?.requestHandle,
                let (loc, source) = gatt.locate(
                    adapter: record.adapter, connection: conn, handle: h,
                    serverIsPeer: GATTTracker.serverIsPeer(
                        opcode: a.decoded.attStorage.opcode,
                        direction: GATTTracker.direction(of: a.decoded)))
            {
                a.location = loc
                a.namedBy = source
            }
        }
        // GATT carriers of protocol modules (`Carrier.gattCharacteristic`, `.gattService`):
        // the characteristic's value only: not its declaration or a descriptor, discovered or not (a CCCD write).
        if decoder.registry.hasGATTCarriers, let loc = a.location, loc.isValue, let v = a.decoded.attStorage.value {
            decoder.decodeGATTValue(v, characteristic: loc.characteristic, service: loc.service, &a.decoded)
        }
        if plugins != nil { applyPlugins(&a) }
        if let p = plugins, p.targetsMesh { applyMeshPlugins(&a, p) }
    }
}
