/// A key for a decoded field. Literal keys cost nothing; dynamic keys (plugin fields) are Strings.
public enum FieldKey: ExpressibleByStringLiteral, Sendable {
    case literal(StaticString)
    case dynamic(String)
    public init(stringLiteral value: StaticString) { self = .literal(value) }

    public var string: String {
        switch self {
        case .literal(let s): s.description
        case .dynamic(let s): s
        }
    }
}

/// Where decoded fields go. Every decoded PDU describes itself once, through
/// `describe(into:)`, and the same description feeds JSON Lines, the `-v` text tree and
/// anything else (see JSONFieldWriter, TextFieldWriter). Inside arrays the key is ignored.
public protocol FieldSink {
    mutating func int(_ key: FieldKey, _ value: Int)
    mutating func uint(_ key: FieldKey, _ value: UInt64)
    mutating func bool(_ key: FieldKey, _ value: Bool)
    mutating func string(_ key: FieldKey, _ value: String)
    mutating func hex(_ key: FieldKey, _ bytes: UnsafeRawBufferPointer)
    mutating func null(_ key: FieldKey)
    /// A number already formatted as JSON number text ("21.6"); text sinks show it as is.
    mutating func number(_ key: FieldKey, _ text: String)
    /// A device address as text ("c0:ba:0d:00:00:01"); writers may skip the String.
    mutating func address(_ key: FieldKey, _ value: BDAddr)
    /// Fields that `body` writes from `source` alone: the same `tag` (one per call site) and
    /// bytes always give the same fields, so a writer may replay what it wrote before.
    mutating func replaying(_ tag: ReplayTag, _ source: UnsafeRawBufferPointer, _ body: (inout Self) -> Void)
    /// As `replaying`; a writer may also keep the bytes in `held`, for `appendHeld`.
    mutating func replaying(_ tag: ReplayTag, _ source: UnsafeRawBufferPointer, held: HeldRendering?, _ body: (inout Self) -> Void)
    /// Writes what `held` keeps for `tag` in the writer's present state; false when nothing.
    mutating func appendHeld(_ tag: ReplayTag, _ held: HeldRendering) -> Bool
    mutating func beginObject(_ key: FieldKey)
    mutating func endObject()
    mutating func beginArray(_ key: FieldKey)
    mutating func endArray()
}

/// The call sites whose output a writer may replay (`FieldSink.replaying`): one tag each, so
/// that equal source bytes at two sites never share an entry.
public enum ReplayTag: UInt8, Sendable {
    /// An advertising report's head (event type, address), and its tail after the RSSI.
    case advertisingHead = 1, advertisingTail = 2
    /// An HCI packet's fields (`HCIPacket.describe`).
    case hciFields = 3
    /// An advertising event's subevent opcode and name.
    case advertisingOpcode = 4
    /// A record's direction and kind.
    case directionAndKind = 10
    /// An advertising event with no connection, from "dir" to its first report's address type.
    case advertisingEvent = 12
    /// An ATT record's GATT names.
    case gattNames = 13
    /// A vendor object decoded once for a payload seen before (`DecodedMessage.replayID`).
    case vendor = 14
}

/// What writers rendered for one value that does not change (a shared plugin result), kept
/// by the value: writing it again is one append, where a replay built and hashed a key.
public final class HeldRendering: @unchecked Sendable {
    /// JSON: the writer state it was written in (`JSONFieldWriter.replaySalt`; none: `.max`),
    /// what it left open, and its bytes.
    var jsonState: UInt32 = .max
    var jsonEffect: UInt32 = 0
    var json: [UInt8] = []
    /// Text: a one-line summary's bytes, and whether they may need escaping (the renderer's own).
    public var text: [UInt8] = []
    public var textKnown = false
    public var textEscape = false
    public init() {}
}

extension FieldSink {
    public mutating func number(_ key: FieldKey, _ text: String) { string(key, text) }

    public mutating func address(_ key: FieldKey, _ value: BDAddr) { string(key, value.description) }

    public mutating func replaying(_ tag: ReplayTag, _ source: UnsafeRawBufferPointer, _ body: (inout Self) -> Void) {
        body(&self)
    }

    public mutating func replaying(
        _ tag: ReplayTag, _ source: UnsafeRawBufferPointer, held: HeldRendering?, _ body: (inout Self) -> Void
    ) {
        replaying(tag, source, body)
    }

    public mutating func appendHeld(_ tag: ReplayTag, _ held: HeldRendering) -> Bool { false }

    /// `key: "name"` only when the name is known.
    public mutating func optionalString(_ key: FieldKey, _ value: String?) {
        if let value { string(key, value) }
    }

    public mutating func hex(_ key: FieldKey, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { hex(key, $0) }
    }

    public mutating func object(_ key: FieldKey, _ body: (inout Self) -> Void) {
        beginObject(key); body(&self); endObject()
    }

    public mutating func array(_ key: FieldKey, _ body: (inout Self) -> Void) {
        beginArray(key); body(&self); endArray()
    }
}

/// Something decoded that can describe its fields.
public protocol FieldDescribable {
    func describe<S: FieldSink>(into sink: inout S)
}
