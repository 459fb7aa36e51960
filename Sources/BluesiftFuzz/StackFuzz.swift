import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins
import BluesiftDissect

/// Layers 3–5 target: records split from raw H4 bytes (see `H4Framing`) go through the
/// `Analyzer` (protocol decoding, GATT rebuilding, naming, bundled plugins) and both
/// renderers; the JSON Lines output and the GATT export must stay valid JSON whatever the input.
public enum StackFuzz {
    public static func run(_ input: UnsafeRawBufferPointer) {
        let p = Pipeline()
        H4Framing.forEachRecord(in: input) { p.add($0) }
        p.finish()
    }

    /// What `bluesift dump` (both formats, -v) and `gatt` do with each record, plus oracles.
    public final class Pipeline {
        let analyzer = Analyzer(naming: true)
        let text = FrameText(color: false, verbose: true)
        var json = JSONFieldWriter(capacity: 1 << 12)
        var out: [UInt8] = []
        var summary = CaptureSummary()

        public init() {
            // Vendor decoding too: the bundled plugins match what the band captures discover.
            if !BundledPlugins.all.isEmpty { analyzer.plugins = PluginSet(BundledPlugins.all) }
        }

        public func add(_ record: CaptureRecord) {
            let a = analyzer.analyze(record)
            summary.add(a.decoded)
            json.removeAll()
            FrameJSON.write(a, into: &json)
            if let bad = JSONCheck.firstError(json.out) {
                preconditionFailure("invalid JSON Lines at byte \(bad) for frame \(record.frame): \(String(decoding: json.out, as: UTF8.self))")
            }
            out.removeAll(keepingCapacity: true)
            text.render(a, into: &out)
            Sink.value &+= out.count &+ FrameText.summary(a).utf8.count
        }

        public func finish() {
            Sink.value &+= analyzer.decoder.connections.count &+ summary.records
            let gatt = Array(GATTJSON.encode(analyzer.gatt.devices).utf8)
            if let bad = JSONCheck.firstError(gatt) {
                preconditionFailure("invalid GATT JSON at byte \(bad): \(String(decoding: gatt, as: UTF8.self))")
            }
        }
    }
}
