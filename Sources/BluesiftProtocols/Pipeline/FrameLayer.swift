import BluesiftWire

/// The protocol layers a frame can carry, each declared here once (docs/DESIGN.md, "Adding a
/// protocol layer"): its bit in `DecodedFrame.Layers`, its key (the JSON Lines member, CSV's
/// `layer` column, the `dump --protocol` name), the group it also answers to, how specific
/// it is, its PDU name, one-line summary and description. The renderers (JSON Lines, text,
/// `-v`, CSV), the filter and `info`'s counts iterate this table; none lists layers itself.
///
/// Declaration order is the order of the members in a JSON Lines object and of the `-v`
/// tree. Layers a frame cannot carry together (ATT, SMP and each Classic protocol sit on
/// their own L2CAP channels; HCI and LL come from different records) need no order
/// between them.
public enum FrameLayer: UInt8, CaseIterable, Sendable {
    case hci, ll, adv, l2cap, att, smp, sdp, rfcomm, hfp, avdtp, avrcp, note

    /// Bit `rawValue` of `DecodedFrame.Layers`.
    @inlinable @inline(__always)
    public var bit: DecodedFrame.Layers { DecodedFrame.Layers(rawValue: 1 &<< UInt32(truncatingIfNeeded: rawValue)) }

    /// JSON Lines member, CSV `layer`, `--protocol` name.
    public var key: StaticString {
        switch self {
        case .hci: "hci"
        case .ll: "ll"
        case .adv: "adv"
        case .l2cap: "l2cap"
        case .att: "att"
        case .smp: "smp"
        case .sdp: "sdp"
        case .rfcomm: "rfcomm"
        case .hfp: "hfp"
        case .avdtp: "avdtp"
        case .avrcp: "avrcp"
        case .note: "note"
        }
    }

    /// A name for several layers: `--protocol classic`.
    public var group: String? {
        switch self {
        case .sdp, .rfcomm, .hfp, .avdtp, .avrcp: "classic"
        default: nil
        }
    }

    /// The name `info`'s "protocols:" line counts the layer under; nil: not counted (`hfp`
    /// rides on RFCOMM frames already counted; notes are records, not protocols). Layers
    /// sharing a name are never on one frame together, so their counts add up.
    public var countedAs: String? {
        switch self {
        case .hfp, .note: nil
        default: group ?? key.description
        }
    }

    /// The most specific layer present names the frame: its summary is the text line, its
    /// key and name CSV's `layer` and `name`.
    public var specificity: Int {
        switch self {
        case .hci: 1
        case .note: 2   // on an HCI record, the note says why nothing above HCI was decoded
        case .ll: 3
        case .adv: 4
        case .l2cap: 5
        case .sdp, .rfcomm, .avdtp, .avrcp: 6
        case .hfp: 7
        case .smp: 8
        case .att: 9
        }
    }

    /// Whether `-v` draws it (a note is its own line already).
    public var inTree: Bool { self != .note }

    /// All layers answering to a `--protocol` name (a key or a group); nil for none.
    public static func layers(named name: String) -> DecodedFrame.Layers? {
        var m = DecodedFrame.Layers()
        for l in allCases where l.key.description == name || l.group == name { m.insert(l) }
        return m.isEmpty ? nil : m
    }

    /// Every `--protocol` name: the keys and the groups.
    public static let names: Set<String> = Set(allCases.map(\.key.description) + allCases.compactMap(\.group))

    /// "hci, ll, adv, …, avrcp, note, classic (sdp, rfcomm, hfp, avdtp, avrcp)" for `--help`.
    public static var helpList: String {
        var groups: [String: [String]] = [:]
        for l in allCases { if let g = l.group { groups[g, default: []].append(l.key.description) } }
        return (allCases.map(\.key.description) + groups.keys.sorted().map { "\($0) (any of \(groups[$0]!.joined(separator: ", ")))" })
            .joined(separator: ", ")
    }

    /// The most specific layer of `layers`, nil when there is none.
    @inlinable
    public static func mostSpecific(_ layers: DecodedFrame.Layers) -> FrameLayer? {
        var best: FrameLayer?
        layers.forEach { l in if best == nil || l.specificity > best!.specificity { best = l } }
        return best
    }

    /// The PDU's name (CSV `name`), "" for a note.
    public func name(_ f: borrowing DecodedFrame) -> String {
        switch self {
        case .hci: f.hciStorage.name
        case .ll: f.ll?.name ?? ""
        case .adv: f.advStorage.name
        case .l2cap: f.l2capStorage.name
        case .att: f.attStorage.opcode.name
        case .smp: f.smp?.name ?? ""
        case .sdp, .rfcomm, .avdtp, .avrcp: f.classic?.name ?? ""
        case .hfp:
            if case .rfcomm(let r)? = f.classic, let l = r.at.first { (l.isCommand ? "AT" : "") + l.command } else { "" }
        case .note: ""
        }
    }

    /// The layer's one-line summary.
    public func summary(_ f: borrowing DecodedFrame) -> String {
        switch self {
        case .hci: f.hciStorage.summary
        case .ll: f.ll?.summary ?? ""
        case .adv: f.advStorage.summary
        case .l2cap: f.l2capStorage.summary
        case .att: f.attStorage.summary
        case .smp: f.smp?.summary ?? ""
        case .sdp, .rfcomm, .hfp, .avdtp, .avrcp: f.classic?.summary ?? ""
        case .note: f.note ?? ""
        }
    }

    /// Writes the layer's member of the record (`"att": {…}`, `"hfp": […]`), reading the layers
    /// kept in place without copying them out of the frame.
    @inlinable
    public func describe<S: FieldSink>(_ f: borrowing DecodedFrame, into w: inout S) {
        open(f, into: &w)
        close(f, into: &w)
    }

    /// The member up to where an analysis adds to it (GATT names of an ATT PDU, before its
    /// request frame and latency); `close` ends it. Two calls, not a closure: a closure that
    /// captured the renderer's frame made Swift copy the frame (1.4 kB) for every layer.
    @inlinable
    public func open<S: FieldSink>(_ f: borrowing DecodedFrame, into w: inout S) {
        let k = FieldKey.literal(key)
        switch self {
        case .hci: w.beginObject(k); f.hciStorage.describe(into: &w)
        case .ll: w.beginObject(k); f.ll?.describe(into: &w)
        case .adv: w.beginObject(k); f.advStorage.describe(into: &w)
        case .l2cap: w.beginObject(k); f.l2capStorage.describe(into: &w)
        case .att:
            w.beginObject(k)
            f.attStorage.describe(into: &w)
            if let h = f.attTransaction?.requestHandle { w.int("request_handle", Int(h)) }
        case .smp: w.beginObject(k); f.smp?.describe(into: &w)
        case .sdp, .rfcomm, .avdtp, .avrcp: w.beginObject(k); f.classic?.describeFields(into: &w)
        case .hfp:
            w.beginArray(k)
            if case .rfcomm(let r)? = f.classic { for l in r.at { w.beginObject(""); l.describe(into: &w); w.endObject() } }
        case .note: w.string(k, f.note ?? "")
        }
    }

    @inlinable
    public func close<S: FieldSink>(_ f: borrowing DecodedFrame, into w: inout S) {
        switch self {
        case .att:
            if let t = f.attTransaction {
                w.int("request_frame", t.requestFrame)
                w.int("latency_us", Int(t.latencyMicroseconds))
            }
            w.endObject()
        case .hfp: w.endArray()
        case .note: break
        default: w.endObject()
        }
    }
}

extension DecodedFrame {
    /// `layer.open(self…)` / `layer.close(self…)` as methods: a renderer holding the frame in
    /// an `inout` value calls them on it in place (passed as an argument, it was copied).
    @inlinable @inline(__always)
    public func open<S: FieldSink>(_ layer: FrameLayer, into w: inout S) { layer.open(self, into: &w) }
    @inlinable @inline(__always)
    public func close<S: FieldSink>(_ layer: FrameLayer, into w: inout S) { layer.close(self, into: &w) }
}

extension DecodedFrame.Layers {
    @inlinable public init(_ layers: FrameLayer...) {
        self.init(rawValue: 0)
        for l in layers { insert(l) }
    }
    @inlinable @inline(__always) public func contains(_ l: FrameLayer) -> Bool { rawValue & l.bit.rawValue != 0 }
    @inlinable @inline(__always) public mutating func insert(_ l: FrameLayer) { rawValue |= l.bit.rawValue }
    /// Takes out the first layer in declaration order (a loop without a closure).
    @inlinable @inline(__always) public mutating func popFirst() -> FrameLayer? {
        guard rawValue != 0 else { return nil }
        let i = rawValue.trailingZeroBitCount
        rawValue &= rawValue &- 1
        return FrameLayer(rawValue: UInt8(truncatingIfNeeded: i))
    }
    /// An HCI advertising event: hci and adv. (Computed, not a variadic `Layers(…)`, which
    /// builds an array: this is tested per record.)
    @inlinable public static var advertisingEvent: DecodedFrame.Layers {
        DecodedFrame.Layers(rawValue: FrameLayer.hci.bit.rawValue | FrameLayer.adv.bit.rawValue)
    }
    /// Any Classic layer (SDP, RFCOMM, HFP, AVDTP, AVRCP): `DecodedFrame.classic` is set.
    public static let anyClassic = DecodedFrame.Layers(.sdp, .rfcomm, .hfp, .avdtp, .avrcp)
    /// The layers present, in declaration order.
    @inlinable public func forEach(_ body: (FrameLayer) -> Void) {
        var m = self
        while let l = m.popFirst() { body(l) }
    }
}
