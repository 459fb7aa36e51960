import BluesiftWire
import BluesiftCapture

// STUB — owned by the HCI/pipeline helper; signatures are the contract (DESIGN.md).

/// The stateful decoder: feed records in file order, get one DecodedFrame each.
/// State (connections, reassembly, dynamic channels, pending ATT requests) is bounded.
public final class ProtocolDecoder {
    public init() {}

    public func decode(_ record: CaptureRecord) -> DecodedFrame {
        DecodedFrame(record: record)
    }

    /// Every connection seen so far, in order of first appearance.
    public var connections: [ConnectionInfo] { [] }
}
