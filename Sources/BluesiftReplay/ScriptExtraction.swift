import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftSession

/// `script` (and `replay` of a capture): which connection to extract, and its script, each
/// from a session the caller opened (the caller says why a capture cannot be opened).
extension ScriptExtractor {
    /// The settings that find the busiest connection: no naming, the same keys, the GATT
    /// database only when the filter needs names.
    public static func countingSettings(_ settings: DecodeSettings, filter: FrameFilter) -> DecodeSettings {
        var plain = DecodeSettings()
        plain.naming = false
        plain.keys = settings.keys
        if filter.needsNaming { plain.gatt = settings.gatt }
        return plain
    }

    /// The connection with the most ATT writes among the records the session keeps (ties: the
    /// lowest handle); nil when there are none.
    public static func busiestConnection(_ session: AnalysisSession) -> UInt16? {
        var counts: [UInt16: Int] = [:]
        session.forEach { a in
            if let c = a.decoded.connection, let op = a.decoded.att?.opcode, op.isWrite {
                counts[c, default: 0] += 1
            }
        }
        return counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }

    /// The script of connection `handle`, read from a session filtered to it; `capture`: the
    /// name the script's source gives.
    public static func script(_ session: AnalysisSession, connection handle: UInt16, capture: String) -> ReplayScript {
        let extractor = ScriptExtractor(connection: handle)
        session.forEach { extractor.observe($0) }
        let info = session.decoder.connections.last(where: { $0.handle == handle })
        let source = ReplayScript.Source(
            capture: capture, connection: Int(handle),
            peer: info?.peer?.description, peerAddressType: info?.peerAddressType?.name,
            peerName: nil, mtu: extractor.mtu, secured: extractor.secured ? true : nil)
        return ReplayScript(source: source, steps: extractor.steps)
    }
}
