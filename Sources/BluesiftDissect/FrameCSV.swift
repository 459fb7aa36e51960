import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `dump --format csv`: one row per record, RFC 4180 quoting, a header row first.
/// Columns (README, "CSV"):
///   frame, ts (RFC 3339 UTC, µs), dir (sent | received | empty), kind (command, event, acl…),
///   conn (0x0040 or empty), layer (the most specific, `FrameLayer`: att, smp, hfp, rfcomm, l2cap, adv…),
///   name (that layer's PDU name), handle (ATT handle, 0x001d), service, characteristic,
///   descriptor (GATT names, else UUIDs; a CCCD write names its characteristic and the
///   descriptor), value (ATT value, hex), summary (the text line), errors (decode errors,
///   "; "-separated).
public enum FrameCSV {
    public static let header = "frame,ts,dir,kind,conn,layer,name,handle,service,characteristic,descriptor,value,summary,errors"

    public static func row(_ a: AnalyzedFrame) -> String {
        let f = a.decoded
        let r = f.record
        let top = FrameLayer.mostSpecific(f.layers)
        let layer = top.map { $0.key.description } ?? "", name = top?.name(f) ?? ""
        var handle = "", value = ""
        if let att = f.att {
            if let h = att.handle ?? att.errorHandle { handle = Hex.fixed(UInt64(h), width: 4) }
            if let v = att.value { value = Hex.string(v) }
        }
        var service = "", characteristic = "", descriptor = ""
        if let loc = a.location {
            service = GATTNames.name(loc.service) ?? loc.service.description
            if let c = loc.characteristic { characteristic = GATTNames.name(c) ?? c.description }
            if let d = loc.descriptor { descriptor = GATTNames.name(d) ?? d.description }
        }
        var errors: [String] = []
        for e in f.errors where !errors.contains(e.message) { errors.append(e.message) }
        let cols = [
            String(r.frame), TimeFormat.rfc3339(r.timestamp), r.direction?.name ?? "", r.kind.name,
            f.connection.map { Hex.fixed(UInt64($0), width: 4) } ?? "", layer, name, handle, service, characteristic,
            descriptor, value, FrameText.summary(a), errors.joined(separator: "; ")
        ]
        return cols.map(CSV.quote).joined(separator: ",")
    }
}
