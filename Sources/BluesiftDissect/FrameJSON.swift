import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// Writes one DecodedFrame as one JSON Lines object (schema: README, "JSON Lines").
public enum FrameJSON {
    public static func write(_ a: AnalyzedFrame, into w: inout JSONFieldWriter) {
        var times = TimeFormat.RFC3339Cache()
        write(a, into: &w, times: &times)
    }

    /// `times` carries the last second's text from record to record.
    public static func write(_ a: AnalyzedFrame, into w: inout JSONFieldWriter, times: inout TimeFormat.RFC3339Cache) {
        var a = a
        write(&a, into: &w, times: &times)
    }

    /// The per-record form: the frame is `inout` only because Swift copies a frame held in a
    /// `var` (1.4 kB) to pass it by value; nothing here changes it.
    public static func write(_ a: inout AnalyzedFrame, into w: inout JSONFieldWriter, times: inout TimeFormat.RFC3339Cache) {
        let r = a.decoded.record
        w.beginTopLevel()
        w.int("frame", r.frame)
        w.appendRaw(",\"ts\":\"")
        w.withUnsafeSpace(TimeFormat.rfc3339MaxCount) { TimeFormat.rfc3339(r.timestamp, to: $0, cache: &times) }
        w.appendRaw("\"")
        let layers = a.decoded.layers
        if !(layers == .advertisingEvent && a.decoded.connection == nil && !r.isTruncated && writeAdvertisingEvent(&a, into: &w)) {
            writeLayers(&a, into: &w)
        }
        if let v = a.vendor { VendorRendering.json(v, into: &w) }
        if !a.decoded.errors.isEmpty {
            w.beginArray("errors")
            for e in a.decoded.errors {
                w.beginObject("")
                w.string("layer", e.layer); w.string("code", e.code.rawValue)
                w.int("offset", e.offset); w.string("message", e.message)
                w.endObject()
            }
            w.endArray()
            w.hex("raw", r.bytes)
        }
        if let o = r.options {
            let comments = o.comments
            if !comments.isEmpty {
                w.beginArray("comments")
                for c in comments { w.string("", c) }
                w.endArray()
            }
        }
        w.endTopLevel()
        w.newline()
    }

    /// From "dir" to the end of the protocol layers.
    static func writeLayers(_ a: inout AnalyzedFrame, into w: inout JSONFieldWriter) {
        let r = a.decoded.record
        writeDirectionAndKind(r, into: &w)
        if let c = a.decoded.connection { w.int("conn", Int(c)) }
        if r.isTruncated {
            w.bool("truncated", true)
            w.int("original_length", r.originalLength)
        }
        // Each layer present, in the registry's order, read in place (`DecodedFrame.hciStorage`):
        // testing an optional layer for nil would copy it (200-300 bytes).
        var layers = a.decoded.layers
        while let layer = layers.popFirst() {
            if layer == .att { writeATT(&a, into: &w); continue }
            a.decoded.open(layer, into: &w)
            a.decoded.close(layer, into: &w)
        }
    }

    /// The ATT member with the GATT names the analysis found (its own function: a loop that
    /// also read the whole frame for the names made Swift copy the frame once per record).
    static func writeATT(_ a: inout AnalyzedFrame, into w: inout JSONFieldWriter) {
        a.decoded.open(.att, into: &w)
        FrameNaming.describe(a, into: &w)
        a.decoded.close(.att, into: &w)
    }

    /// Direction and kind: a handful of pairs in a capture, replayed.
    static func writeDirectionAndKind(_ r: CaptureRecord, into w: inout JSONFieldWriter) {
        withUnsafeBytes(of: directionAndKind(r)) { key in
            w.replaying(.directionAndKind, key) { w in
                if let d = r.direction { w.string("dir", d.name) } else { w.null("dir") }
                w.string("kind", r.kind.name)
            }
        }
    }

    static func directionAndKind(_ r: CaptureRecord) -> (UInt8, UInt8) {
        (r.direction.map { $0 == .sent ? 0 : 1 } ?? 2, r.kind.rawValue)
    }

    /// An HCI advertising event with no connection, the bulk of phone captures. From "dir"
    /// to the first report's address type, the JSON is a function of direction, kind,
    /// subevent, truncation and the report's head values: one replayed run, which leaves the
    /// `adv` object, its `reports` array and the first report open. False (nothing written)
    /// when the frame is not such an event or holds no report.
    static func writeAdvertisingEvent(_ a: inout AnalyzedFrame, into w: inout JSONFieldWriter) -> Bool {
        guard a.decoded.layers.isSuperset(of: .advertisingEvent), a.decoded.hciStorage.kind == .event,
            a.decoded.hciStorage.eventCode == .leMeta, a.decoded.hciStorage.isAdvertisingReport,
            let sub = a.decoded.hciStorage.subevent, a.decoded.advStorage.isHCIReport
        else { return false }
        let r = a.decoded.record
        let extended = a.decoded.advStorage.isExtended
        let truncated = a.decoded.hciStorage.truncated
        let opcode = a.decoded.advStorage.opcode
        var index = 0
        a.decoded.advStorage.forEachReport { rep in
            defer { index += 1 }
            guard index == 0 else {
                w.beginObject(""); rep.describe(into: &w, extended: extended); w.endObject()
                return
            }
            rep.withKeySpace { k in
                let (dir, kind) = directionAndKind(r)
                k.storeBytes(
                    of: (dir, kind, sub, truncated ? UInt8(1) : 0, UInt8(truncatingIfNeeded: opcode), UInt8(0), UInt8(0), UInt8(0)),
                    as: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8).self)
                let n = 8 + rep.headKey(k + 8, extended: extended)
                w.replaying(.advertisingEvent, UnsafeRawBufferPointer(start: k, count: n)) { w in
                    writeDirectionAndKind(r, into: &w)
                    w.beginObject("hci"); a.decoded.hciStorage.describe(into: &w); w.endObject()
                    w.beginObject("adv"); a.decoded.advStorage.describeStart(into: &w)
                    w.beginObject(""); rep.describeHead(into: &w, extended: extended)
                }
                rep.describeAfterHead(into: &w, keySpace: k)
            }
            w.endObject()
        }
        guard index > 0 else { return false }
        w.endArray() // reports
        w.endObject() // adv
        return true
    }
}
