import BluesiftWire

/// The Classic (BR/EDR) protocol layer above L2CAP of one record, chosen by the channel's
/// PSM (see docs/DESIGN.md, "Adding a protocol layer"). One per record: a frame carries at
/// most one of them, in `DecodedFrame.classic`, its `FrameLayer` bit set in `layers`.
/// Indirect: a frame holds one pointer (LE records copy and reset frames without its ~300 bytes).
public indirect enum ClassicLayer {
    case sdp(SDPPDU)
    case rfcomm(RFCOMMFrame)
    case avdtp(AVDTPSignal)
    case media(AVDTPMediaPacket)
    case avrcp(AVCTPPDU)

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

    /// The layer of the frame's registry (`FrameLayer`): its mask bit and key.
    public var layer: FrameLayer {
        switch self {
        case .sdp: .sdp
        case .rfcomm: .rfcomm
        case .avdtp, .media: .avdtp
        case .avrcp: .avrcp
        }
    }

    public var name: String {
        switch self {
        case .sdp(let p): p.name
        case .rfcomm(let p): p.name
        case .avdtp(let p): p.name
        case .media: "Media"
        case .avrcp(let p): p.name
        }
    }

    /// The fields of the layer's object (`FrameLayer.open` writes its key); RFCOMM's AT lines
    /// are the `hfp` layer's.
    @inlinable
    public func describeFields<S: FieldSink>(into sink: inout S) {
        switch self {
        case .sdp(let p): p.describe(into: &sink)
        case .rfcomm(let p): p.describe(into: &sink)
        case .avdtp(let p): p.describe(into: &sink)
        case .media(let p): p.describe(into: &sink)
        case .avrcp(let p): p.describe(into: &sink)
        }
    }
}
