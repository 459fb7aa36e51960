import BluesiftWire

/// The Classic (BR/EDR) protocol layer above L2CAP of one record, chosen by the channel's
/// PSM (see docs/DESIGN.md, "Adding a protocol layer"). One per record: a frame carries at
/// most one of them, in `DecodedFrame.classic` under the `.classic` layer bit.
/// Indirect: a frame holds one pointer (LE records copy and reset frames without its ~300 bytes).
public indirect enum ClassicLayer {
    case sdp(SDPPDU)
    case rfcomm(RFCOMMFrame)
    case avdtp(AVDTPSignal)
    case media(AVDTPMediaPacket)
    case avrcp(AVCTPPDU)

    /// The JSON key of the layer's object.
    public var key: StaticString {
        switch self {
        case .sdp: "sdp"
        case .rfcomm: "rfcomm"
        case .avdtp, .media: "avdtp"
        case .avrcp: "avrcp"
        }
    }

    public var summary: String {
        switch self {
        case .sdp(let p): p.summary
        case .rfcomm(let p): p.summary
        case .avdtp(let p): p.summary
        case .media(let p): p.summary
        case .avrcp(let p): p.summary
        }
    }

    public var error: DecodeError? {
        switch self {
        case .sdp(let p): p.error
        case .rfcomm(let p): p.error
        case .avdtp(let p): p.error
        case .media(let p): p.error
        case .avrcp(let p): p.error
        }
    }

    /// Writes `"sdp": {…}` (or rfcomm/avdtp/avrcp), and for RFCOMM frames that completed AT
    /// lines, `"hfp": [{…}]`.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.beginObject(.literal(key))
        switch self {
        case .sdp(let p): p.describe(into: &sink)
        case .rfcomm(let p): p.describe(into: &sink)
        case .avdtp(let p): p.describe(into: &sink)
        case .media(let p): p.describe(into: &sink)
        case .avrcp(let p): p.describe(into: &sink)
        }
        sink.endObject()
        if case .rfcomm(let f) = self, !f.at.isEmpty {
            sink.beginArray("hfp")
            for l in f.at { sink.beginObject(""); l.describe(into: &sink); sink.endObject() }
            sink.endArray()
        }
    }
}
