import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect

/// `convert`'s pipeline: the session's records to a writer, kept by its filter, sniffed LE
/// packets decrypted when asked, and a capture that starts before 1970 moved whole for
/// pcap/pcapng (which cannot hold those times), intervals kept.
public enum CaptureConversion {
    public struct Result {
        /// Records handed to the writer (it may still drop those its format cannot hold).
        public var records = 0
        /// Of them, written decrypted: ACL data PDUs, and CIS/BIS PDUs LE Audio decrypted.
        public var decrypted = 0
        public var decryptedIsochronous = 0
        /// Records the filters left out.
        public var filteredOut = 0
        /// Records whose pcapng packet comments the output (not pcapng) cannot hold.
        public var commentsDropped = 0
        /// The move of a capture that starts before 1970 (pcap, pcapng).
        public var shift: EpochShift?

        public init() {}
    }

    /// Writes every record of `session` to `writer` (not finished here). Throws the writer's
    /// `CaptureError`.
    public static func run(
        _ session: AnalysisSession, to writer: any CaptureWriter, format: CaptureOutputFormat,
        decrypt: Bool
    ) throws -> Result {
        var result = Result()
        let filtering = session.filtering
        // Decoding only when asked for: a plain conversion copies records as read.
        let decoding = decrypt || filtering
        let decoder = session.decoder
        var frame = AnalyzedFrame(decoded: DecodedFrame(record: .empty))
        var sealed: [UInt8] = []
        var shift: EpochShift? = format == .pcap || format == .pcapng ? EpochShift() : nil
        try session.forEachRecord { r in
            if decoding, filtering || r.kind == .ll {
                if !session.analyze(r, into: &frame) && filtering {
                    result.filteredOut += 1
                    return
                }
            }
            if format != .pcapng, let o = r.options, !o.commentRanges.isEmpty { result.commentsDropped += 1 }
            if decrypt, r.kind == .ll {
                // An ACL's PDU, or a CIS/BIS PDU decrypted by LE Audio (its module layer).
                let acl = decoder.plaintextRecord(r, frame.decoded, into: &sealed)
                if let p = acl ?? LEAudioAirLayer.plaintextRecord(r, frame.decoded, into: &sealed) {
                    if acl != nil { result.decrypted += 1 } else { result.decryptedIsochronous += 1 }
                    var failure: CaptureError?
                    sealed.withUnsafeBytes { b in
                        var out = p
                        out.bytes = b; out.originalLength = b.count
                        shift?.apply(&out)
                        do throws(CaptureError) { try writer.write(out) } catch { failure = error }
                    }
                    if let failure { throw failure }
                    result.records += 1
                    return
                }
            }
            if shift == nil { try writer.write(r) } else { var m = r; shift!.apply(&m); try writer.write(m) }
            result.records += 1
        }
        result.shift = shift
        return result
    }
}
