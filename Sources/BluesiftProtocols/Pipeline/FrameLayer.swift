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
    @inlinable public var bit: DecodedFrame.Layers { DecodedFrame.Layers(rawValue: 1 << UInt32(rawValue)) }

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
        case .note: 0
        case .hci: 1
        case .ll: 2
        case .adv: 3
        case .l2cap: 4
        case .sdp, .rfcomm, .avdtp, .avrcp: 5
        case .hfp: 6
        case .smp: 7
        case .att: 8
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

    /// Writes the layer's member of the record (`"att": {…}`, `"hfp": […]`). `inside` adds
    /// what the analysis knows to the layer's object before it closes (GATT names of an ATT
    /// PDU); the layers read in place are not copied out of the frame.
    @inlinable
    public func describe<S: FieldSink>(_ f: borrowing DecodedFrame, into w: inout S, inside: (inout S) -> Void) {
        let k = FieldKey.literal(key)
        switch self {
        case .hci: w.beginObject(k); f.hciStorage.describe(into: &w); inside(&w); w.endObject()
        case .ll: if let ll = f.ll { w.beginObject(k); ll.describe(into: &w); inside(&w); w.endObject() }
        case .adv: w.beginObject(k); f.advStorage.describe(into: &w); inside(&w); w.endObject()
        case .l2cap: w.beginObject(k); f.l2capStorage.describe(into: &w); inside(&w); w.endObject()
        case .att:
            w.beginObject(k)
            f.attStorage.describe(into: &w)
            if let h = f.attTransaction?.requestHandle { w.int("request_handle", Int(h)) }
            inside(&w)
            if let t = f.attTransaction {
                w.int("request_frame", t.requestFrame)
                w.int("latency_us", Int(t.latencyMicroseconds))
            }
            w.endObject()
        case .smp: if let smp = f.smp { w.beginObject(k); smp.describe(into: &w); inside(&w); w.endObject() }
        case .sdp, .rfcomm, .avdtp, .avrcp: if let c = f.classic { c.describe(into: &w, inside: inside) }
        case .hfp:
            if case .rfcomm(let r)? = f.classic {
                w.beginArray(k)
                for l in r.at { w.beginObject(""); l.describe(into: &w); w.endObject() }
                w.endArray()
            }
        case .note: if let n = f.note { w.string(k, n) }
        }
    }
}

extension DecodedFrame.Layers {
    @inlinable public init(_ layers: FrameLayer...) {
        self.init(rawValue: 0)
        for l in layers { insert(l) }
    }
    @inlinable public func contains(_ l: FrameLayer) -> Bool { rawValue & l.bit.rawValue != 0 }
    @inlinable public mutating func insert(_ l: FrameLayer) { rawValue |= l.bit.rawValue }
    /// An HCI advertising event: hci and adv. (Computed, not a variadic `Layers(…)`, which
    /// builds an array: this is tested per record.)
    @inlinable public static var advertisingEvent: DecodedFrame.Layers {
        DecodedFrame.Layers(rawValue: FrameLayer.hci.bit.rawValue | FrameLayer.adv.bit.rawValue)
    }
    /// Any Classic layer (SDP, RFCOMM, HFP, AVDTP, AVRCP): `DecodedFrame.classic` is set.
    public static let anyClassic = DecodedFrame.Layers(.sdp, .rfcomm, .hfp, .avdtp, .avrcp)
    /// The layers present, in declaration order.
    @inlinable public func forEach(_ body: (FrameLayer) -> Void) {
        var m = rawValue
        while m != 0 {
            body(FrameLayer(rawValue: UInt8(truncatingIfNeeded: m.trailingZeroBitCount))!)
            m &= m &- 1
        }
    }
}
