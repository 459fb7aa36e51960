import BluesiftWire

/// The protocol layers a frame can carry (docs/DESIGN.md, "Layers"): its bit in
/// `DecodedFrame.Layers`, its key (the JSON Lines member, CSV's `layer` column, the `dump
/// --protocol` name), the group it also answers to, how specific it is, its PDU name,
/// one-line summary and description. The hot layers are built in here, with their storage
/// in the frame; the others are modules' (`ProtocolModule`, listed in Protocols.swift), and
/// their values describe themselves. The renderers (JSON Lines, text, `-v`, CSV), the filter
/// and `info`'s counts iterate `allCases`; none lists layers itself.
///
/// Declaration order (the bit order) is the order of the members in a JSON Lines object and
/// of the `-v` tree. Layers a frame cannot carry together (ATT, SMP and each module's sit on
/// their own channels; HCI and LL come from different records) need no order between them.
public struct FrameLayer: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    @inlinable @inline(__always) public init(rawValue: UInt8) { self.rawValue = rawValue }

    // The built-in layers, with their storage in the frame; module layers take the bits
    // between smp and note (`ProtocolRegistry`).
    public static let hci = FrameLayer(rawValue: 0)
    public static let ll = FrameLayer(rawValue: 1)
    public static let adv = FrameLayer(rawValue: 2)
    public static let l2cap = FrameLayer(rawValue: 3)
    public static let att = FrameLayer(rawValue: 4)
    public static let smp = FrameLayer(rawValue: 5)
    public static let note = FrameLayer(rawValue: 63)
    static let builtIn: [FrameLayer] = [.hci, .ll, .adv, .l2cap, .att, .smp, .note]

    /// Every layer in declaration order: the built-in ones, the modules' (`Protocols.all`), note.
    public static var allCases: [FrameLayer] { ProtocolRegistry.shared.allLayers }

    /// A module layer by key (a module's own files name their layers with it).
    public static func registered(_ key: String) -> FrameLayer {
        guard let l = ProtocolRegistry.shared.layer(key) else { preconditionFailure("layer \(key) is not in Protocols.all") }
        return l
    }

    /// Bit `rawValue` of `DecodedFrame.Layers`.
    @inlinable @inline(__always)
    public var bit: DecodedFrame.Layers { DecodedFrame.Layers(rawValue: 1 &<< UInt64(truncatingIfNeeded: rawValue)) }

    /// A module's layer (not built in).
    @inlinable @inline(__always)
    public var isModule: Bool { rawValue >= ProtocolRegistry.firstModuleBit && rawValue != 63 }

    var spec: LayerSpec? { ProtocolRegistry.shared.spec(rawValue) }
    var moduleKey: StaticString {
        let r = ProtocolRegistry.shared, i = Int(rawValue) - Int(ProtocolRegistry.firstModuleBit)
        return i >= 0 && i < r.keys.count ? r.keys[i] : "unknown"
    }
    var moduleSpecificity: Int {
        let r = ProtocolRegistry.shared, i = Int(rawValue) - Int(ProtocolRegistry.firstModuleBit)
        return i >= 0 && i < r.specificities.count ? r.specificities[i] : 0
    }

    /// JSON Lines member, CSV `layer`, `--protocol` name.
    public var key: StaticString {
        switch rawValue {
        case 0: "hci"
        case 1: "ll"
        case 2: "adv"
        case 3: "l2cap"
        case 4: "att"
        case 5: "smp"
        case 63: "note"
        default: moduleKey
        }
    }

    /// A name for several layers: `--protocol classic`.
    public var group: String? { isModule ? spec?.group : nil }

    /// The name `info`'s "protocols:" line counts the layer under; nil: not counted (`hfp`
    /// rides on RFCOMM frames already counted; notes are records, not protocols). Layers
    /// sharing a name are never on one frame together, so their counts add up.
    public var countedAs: String? {
        if self == .note { return nil }
        guard isModule else { return key.description }
        guard let s = spec, s.counted else { return nil }
        return s.group ?? s.key.description
    }

    /// The most specific layer present names the frame: its summary is the text line, its
    /// key and name CSV's `layer` and `name`.
    public var specificity: Int {
        switch rawValue {
        case 0: 1
        case 63: 2 // on an HCI record, the note says why nothing above HCI was decoded
        case 1: 3
        case 2: 4
        case 3: 5
        case 5: 8
        case 4: 9
        default: moduleSpecificity
        }
    }

    /// Whether `-v` draws it (a note is its own line already).
    public var inTree: Bool { isModule ? spec?.inTree ?? true : self != .note }

    /// All layers answering to a `--protocol` name (a key or a group); nil for none.
    public static func layers(named name: String) -> DecodedFrame.Layers? { ProtocolRegistry.shared.layers(named: name) }

    /// Every `--protocol` name: the keys and the groups.
    public static let names: Set<String> = ProtocolRegistry.shared.names

    /// "hci, ll, adv, …, avrcp, note, classic (any of sdp, rfcomm, hfp, avdtp, avrcp)" for `--help`.
    public static var helpList: String { ProtocolRegistry.shared.helpList }

    /// The most specific layer of `layers`, nil when there is none.
    @inlinable
    public static func mostSpecific(_ layers: DecodedFrame.Layers) -> FrameLayer? {
        var best: FrameLayer?
        layers.forEach { l in if best == nil || l.specificity > best!.specificity { best = l } }
        return best
    }

    /// The PDU's name (CSV `name`), "" for a note.
    public func name(_ f: borrowing DecodedFrame) -> String {
        switch rawValue {
        case 0: f.hciStorage.name
        case 1: f.ll?.name ?? ""
        case 2: f.advStorage.name
        case 3: f.l2capStorage.name
        case 4: f.attStorage.opcode.name
        case 5: f.smp?.name ?? ""
        case 63: ""
        default: f.module?.name(self) ?? ""
        }
    }

    /// The layer's one-line summary.
    public func summary(_ f: borrowing DecodedFrame) -> String {
        switch rawValue {
        case 0: f.hciStorage.summary
        case 1: f.ll?.summary ?? ""
        case 2: f.advStorage.summary
        case 3: f.l2capStorage.summary
        case 4: f.attStorage.summary
        case 5: f.smp?.summary ?? ""
        case 63: f.note ?? ""
        default: f.module?.summary(self) ?? ""
        }
    }

    /// `summary(f)`'s bytes appended to `out`: the advertising and HCI layers (most records)
    /// write them in place; the others append their String.
    public func writeSummary(_ f: borrowing DecodedFrame, into out: inout [UInt8]) {
        switch rawValue {
        case 0: f.hciStorage.writeSummary(into: &out)
        case 2: f.advStorage.writeSummary(into: &out)
        default: out.appendText(summary(f))
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
    /// A module layer writes its whole member here.
    @inlinable
    public func open<S: FieldSink>(_ f: borrowing DecodedFrame, into w: inout S) {
        switch rawValue {
        case 0: w.beginObject(.literal("hci")); f.hciStorage.describe(into: &w)
        case 1: w.beginObject(.literal("ll")); f.ll?.describe(into: &w)
        case 2: w.beginObject(.literal("adv")); f.advStorage.describe(into: &w)
        case 3: w.beginObject(.literal("l2cap")); f.l2capStorage.describe(into: &w)
        case 4:
            w.beginObject(.literal("att"))
            f.attStorage.describe(into: &w)
            if let h = f.attTransaction?.requestHandle { w.int("request_handle", Int(h)) }
        case 5: w.beginObject(.literal("smp")); f.smp?.describe(into: &w)
        case 63: w.string(.literal("note"), f.note ?? "")
        default: f.module?.describe(self, into: &w)
        }
    }

    @inlinable
    public func close<S: FieldSink>(_ f: borrowing DecodedFrame, into w: inout S) {
        switch rawValue {
        case 4:
            if let t = f.attTransaction {
                w.int("request_frame", t.requestFrame)
                w.int("latency_us", Int(t.latencyMicroseconds))
            }
            w.endObject()
        case 0, 1, 2, 3, 5: w.endObject()
        default: break
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
    /// Any module layer (bits 6-62, `ProtocolRegistry`): `DecodedFrame.module` is set. A
    /// constant: `reset` tests it per record.
    @inlinable public static var anyModule: DecodedFrame.Layers { DecodedFrame.Layers(rawValue: 0x7FFF_FFFF_FFFF_FFC0) }
    /// The layers present, in declaration order.
    @inlinable public func forEach(_ body: (FrameLayer) -> Void) {
        var m = self
        while let l = m.popFirst() { body(l) }
    }
}
