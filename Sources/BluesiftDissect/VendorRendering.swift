import BluesiftWire
import BluesiftPlugins

/// How vendor frames decoded by plugins appear in `dump`.
public enum VendorRendering {
    /// `"vendor": {"plugin","message","fields","checksum"}`; frames after the first that end
    /// in the same ATT value go to `vendor_more`; a value that only starts a frame gives
    /// `"message": null` with `pending` (bytes buffered) and `need` (frame size, when known).
    public static func json<S: FieldSink>(_ v: PluginSet.Result, into w: inout S) {
        // A result records share keeps its bytes: one append.
        if let held = v.held, w.appendHeld(.vendor, held) { return }
        // Decodes shared by equal advertising payloads are written once and replayed; the key
        // holds each message's decode and advertiser.
        if v.dropped.isEmpty, !v.messages.isEmpty, v.messages.count <= 4, v.messages.allSatisfy({ $0.replayID != 0 }) {
            var key: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &key) { p in
                for (i, m) in v.messages.enumerated() {
                    p.storeBytes(of: m.replayID, toByteOffset: 16 * i, as: UInt64.self)
                    p.storeBytes(of: address(v, i) ?? UInt64.max, toByteOffset: 16 * i + 8, as: UInt64.self)
                }
            }
            withUnsafeBytes(of: key) { k in
                w.replaying(.vendor, UnsafeRawBufferPointer(rebasing: k[0..<(16 * v.messages.count)]), held: v.held) { w in
                    write(v, into: &w)
                }
            }
            return
        }
        write(v, into: &w)
    }

    /// The advertiser of message `i` (advertising data only: only its results have sources;
    /// looking at the match rule copied it per record).
    static func address(_ v: PluginSet.Result, _ i: Int) -> UInt64? {
        i < v.sources.count ? v.sources[i].address : nil
    }

    static func write<S: FieldSink>(_ v: PluginSet.Result, into w: inout S) {
        w.beginObject("vendor")
        if let first = v.messages.first {
            first.describe(into: &w)
            if let a = address(v, 0) { w.address("address", BDAddr(a)) }
        } else {
            w.string("plugin", v.plugin)
            w.null("message")
            w.int("pending", v.pending)
            if let n = v.pendingNeed { w.int("need", n) }
        }
        if !v.dropped.isEmpty {
            w.beginArray("dropped")
            for d in v.dropped { w.string("", d) }
            w.endArray()
        }
        w.endObject()
        if v.messages.count > 1 {
            w.beginArray("vendor_more")
            for (i, m) in v.messages.enumerated().dropFirst() {
                w.beginObject(""); m.describe(into: &w)
                if let a = address(v, i) { w.address("address", BDAddr(a)) }
                w.endObject()
            }
            w.endArray()
        }
    }

    /// " band sport_count month=6 day=20 checksum ok", or " band (fragment: 20 of 30 bytes)".
    public static func summary(_ v: PluginSet.Result) -> String {
        if v.messages.isEmpty {
            return " \(v.plugin) (fragment: \(v.pending)" + (v.pendingNeed.map { " of \($0)" } ?? "") + " bytes)"
        }
        var s = ""
        for m in v.messages { s += " " + m.plugin + " " + m.summary } // advertising: one per structure, each its plugin
        return s
    }

    public static func tree<S: FieldSink>(_ v: PluginSet.Result, into w: inout S) {
        if v.messages.isEmpty { json(v, into: &w); return }
        for m in v.messages {
            w.beginObject("vendor")
            m.describe(into: &w)
            w.endObject()
        }
    }
}
