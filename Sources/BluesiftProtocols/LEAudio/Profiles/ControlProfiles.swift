import BluesiftWire

// The LE Audio rendering and control profiles' characteristics, field by field, from one
// table (`LEAudioControlProfiles.layouts`, each entry citing its specification section):
// VCS/VOCS/AICS (volume, offsets, inputs), MICS (mute), MCS/GMCS (media control), TBS/GTBS
// (telephone bearer), HAS (hearing aid presets), TMAS (TMAP role), GMAS (GMAP roles and
// features), CSIS's set size, lock and rank. CAS has no characteristics of its own (CAP 1.0
// §4.1: it includes CSIS) and PBP's announcement is service data (Broadcast.swift). A value
// is read by its layout: fixed fields, an operation (opcode octet, then its operands), or a
// list of items to the end.

/// One field of a control profile value.
public struct LEAudioProfileField: Sendable {
    public enum Kind: Sendable {
        /// Unsigned little-endian of this many octets.
        case uint(Int)
        /// Signed little-endian (two's complement) of this many octets.
        case sint(Int)
        /// UTF-8 text to the end of the value (or of the list item).
        case utf8
        /// One-octet numbers to the end (TBS Join's call indexes).
        case octets
    }
    public var name: String
    public var kind: Kind
    /// Names of its values (written `<name>_name`; "Unknown" for others) or of its bits
    /// (`<name>_names`, bit 0 first; an empty string: a bit of a wider part named elsewhere;
    /// past the list: "RFU bit n").
    public var names: [UInt64: String]
    public var bits: [String]
    public init(_ name: String, _ kind: Kind, names: [UInt64: String] = [:], bits: [String] = []) {
        self.name = name; self.kind = kind; self.names = names; self.bits = bits
    }
}

/// How a characteristic's value is laid out.
public enum LEAudioProfileBody: Sendable {
    case fields([LEAudioProfileField])
    /// An opcode octet naming the operation, then the operation's operands.
    case operation([UInt8: LEAudioProfileOperation])
    /// Items one after another to the end; `lengthPrefixed`: each starts with its length octet.
    case list(lengthPrefixed: Bool, [LEAudioProfileField])
}

public struct LEAudioProfileOperation: Sendable {
    public var name: String
    public var fields: [LEAudioProfileField]
    /// Operands that follow `fields` and depend on the first one's value (HAS Preset Changed:
    /// by Change_ID), `otherwise` for the values not listed.
    public var variants: [UInt64: [LEAudioProfileField]] = [:]
    public var otherwise: [LEAudioProfileField] = []
    public init(_ name: String, _ fields: [LEAudioProfileField] = []) { self.name = name; self.fields = fields }
}

public struct LEAudioProfileLayout: Sendable {
    /// Characteristic name (Assigned Numbers §3.8).
    public var name: String
    /// JSON key of the value.
    public var key: String
    /// The specification section that defines it.
    public var spec: String
    /// Read, notified or indicated.
    public var value: LEAudioProfileBody
    /// Written, when it differs (control points).
    public var written: LEAudioProfileBody?
}

/// One decoded value of a field.
public enum LEAudioProfileDatum: Hashable, Sendable {
    case uint(UInt64)
    case sint(Int64)
    case text([UInt8])
}

/// A control profile characteristic value (see `LEAudioControlProfiles.layouts`).
public struct LEAudioProfileValue: Hashable, Sendable, FieldDescribable {
    public var uuid: UInt16
    public var written: Bool
    public var opcode: UInt8?
    /// Field values in layout order (fixed fields or the operation's operands).
    public var values: [LEAudioProfileDatum] = []
    /// List items, each its fields' values.
    public var items: [[LEAudioProfileDatum]] = []
    public var error: DecodeError?

    public static let maxItems = 64

    public var layout: LEAudioProfileLayout { LEAudioControlProfiles.layouts[uuid]! }
    var body: LEAudioProfileBody { written ? (layout.written ?? layout.value) : layout.value }
    /// The fields `values` follow.
    public var fields: [LEAudioProfileField] {
        switch body {
        case .fields(let f): return f
        case .operation(let ops):
            guard let o = opcode, let op = ops[o] else { return [] }
            guard !op.fields.isEmpty, op.variants.count + op.otherwise.count > 0, case .uint(let first)? = values.first else { return op.fields }
            return op.fields + (op.variants[first] ?? op.otherwise)
        case .list(_, let f): return f
        }
    }
    public var operationName: String? {
        guard case .operation(let ops) = body, let o = opcode else { return nil }
        return ops[o]?.name ?? "Unknown"
    }

    public init(uuid: UInt16, written: Bool, opcode: UInt8? = nil, values: [LEAudioProfileDatum] = [], items: [[LEAudioProfileDatum]] = []) {
        self.uuid = uuid; self.written = written; self.opcode = opcode; self.values = values; self.items = items
    }

    /// `uuid` must be in `LEAudioControlProfiles.layouts`.
    public init(uuid: UInt16, written: Bool, bytes: UnsafeRawBufferPointer) {
        self.uuid = uuid; self.written = written
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            switch body {
            case .fields(let f):
                try Self.read(f, &r, into: &values)
            case .operation(let ops):
                let o = try r.readUInt8("Opcode")
                opcode = o
                guard let op = ops[o] else { throw LEAudioError.make(.unsupported, 0, "opcode \(Hex.fixed(UInt64(o), width: 2)) not in \(layout.spec)") }
                try Self.read(op.fields, &r, into: &values)
                if !op.variants.isEmpty || !op.otherwise.isEmpty, case .uint(let first)? = values.first {
                    try Self.read(op.variants[first] ?? op.otherwise, &r, into: &values)
                }
            case .list(let prefixed, let f):
                while !r.isAtEnd {
                    guard items.count < Self.maxItems else { throw LEAudioError.make(.invalidLength, r.readerIndex, "more than \(Self.maxItems) items") }
                    var item: [LEAudioProfileDatum] = []
                    if prefixed {
                        let n = Int(try r.readUInt8("List_Item_Length"))
                        var sub = ByteReader(try r.readBytes(n, "list item"))
                        try Self.read(f, &sub, into: &item)
                        if !sub.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex - sub.readableBytes, "\(sub.readableBytes) bytes after the item") }
                    } else {
                        try Self.read(f, &r, into: &item)
                    }
                    items.append(item)
                }
            }
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex, "\(r.readableBytes) bytes after the value") }
        } catch {
            self.error = error.inLayer("le_audio")
        }
    }

    static func read(_ fields: [LEAudioProfileField], _ r: inout ByteReader, into out: inout [LEAudioProfileDatum]) throws(DecodeError) {
        for f in fields {
            switch f.kind {
            case .uint(let n): out.append(.uint(try r.readUInt(size: n, endianness: .little, "field")))
            case .sint(let n):
                let u = try r.readUInt(size: n, endianness: .little, "field")
                let shift = UInt64(64 - 8 * n)
                out.append(.sint(Int64(bitPattern: u << shift) >> Int64(shift)))
            case .utf8, .octets: out.append(.text(Array(try r.readBytes(r.readableBytes, "text"))))
            }
        }
    }

    static func write(_ fields: [LEAudioProfileField], _ values: [LEAudioProfileDatum], _ w: inout ByteWriter) {
        for (f, v) in zip(fields, values) {
            switch (f.kind, v) {
            case (.uint(let n), .uint(let x)): w.writeUInt(x, size: n, endianness: .little)
            case (.sint(let n), .sint(let x)): w.writeUInt(UInt64(bitPattern: x), size: n, endianness: .little)
            case (_, .text(let b)): w.writeBytes(b)
            default: break
            }
        }
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter()
        if let o = opcode { w.writeUInt8(o) }
        Self.write(fields, values, &w)
        if case .list(let prefixed, let f) = body {
            for item in items {
                var iw = ByteWriter()
                Self.write(f, item, &iw)
                if prefixed { w.writeUInt8(UInt8(iw.bytes.count)) }
                w.writeBytes(iw.bytes)
            }
        }
        return w.bytes
    }

    static func describe<S: FieldSink>(_ fields: [LEAudioProfileField], _ values: [LEAudioProfileDatum], into sink: inout S) {
        for (f, v) in zip(fields, values) {
            let key = FieldKey.dynamic(f.name)
            switch v {
            case .uint(let x):
                sink.uint(key, x)
                if !f.names.isEmpty { sink.string(.dynamic(f.name + "_name"), f.names[x] ?? "Unknown") }
                if !f.bits.isEmpty {
                    let set = (0..<64).filter { x >> UInt64($0) & 1 == 1 && ($0 >= f.bits.count || !f.bits[$0].isEmpty) }
                        .map { $0 < f.bits.count ? f.bits[$0] : "RFU bit \($0)" }
                    sink.array(.dynamic(f.name + "_names")) { s in for n in set { s.string("", n) } }
                }
            case .sint(let x): sink.int(key, Int(x))
            case .text(let b):
                if case .octets = f.kind {
                    sink.array(key) { s in for x in b { s.int("", Int(x)) } }
                } else {
                    sink.string(key, String(decoding: b, as: UTF8.self))
                }
            }
        }
    }

    /// HAS 1.0 §3.1: Hearing Aid Type is bits 0-1 of Hearing Aid Features.
    public var hearingAidType: (Int, String)? {
        guard uuid == 0x2BDA, case .uint(let x)? = values.first else { return nil }
        let t = Int(x & 3)
        return (t, ["Binaural", "Monaural", "Banded", "RFU"][t])
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        if let o = opcode { sink.int("opcode", Int(o)); sink.string("opcode_name", operationName ?? "Unknown") }
        if let (t, n) = hearingAidType { sink.int("hearing_aid_type", t); sink.string("hearing_aid_type_name", n) }
        Self.describe(fields, values, into: &sink)
        if case .list(_, let f) = body {
            sink.array("items") { s in for item in items { s.object("") { s in Self.describe(f, item, into: &s) } } }
        }
        if let error { sink.string("error", error.message) }
    }

    static func text(_ f: LEAudioProfileField, _ v: LEAudioProfileDatum) -> String {
        switch v {
        case .uint(let x):
            if let n = f.names[x] { return n }
            if !f.names.isEmpty { return "Unknown (\(x))" }
            if !f.bits.isEmpty {
                let set = (0..<min(64, f.bits.count)).filter { x >> UInt64($0) & 1 == 1 && !f.bits[$0].isEmpty }.map { f.bits[$0] }
                return set.isEmpty ? "none" : set.joined(separator: ", ")
            }
            return String(x)
        case .sint(let x): return String(x)
        case .text(let b):
            if case .octets = f.kind { return b.map(String.init).joined(separator: ",") }
            return "\"" + String(decoding: b, as: UTF8.self) + "\""
        }
    }

    /// "Volume State volume_setting=120 mute=Not Muted change_counter=3", "Media Control Point Play".
    public var summary: String {
        var s = layout.name
        if let n = operationName { s += " " + n }
        if let (_, n) = hearingAidType { s += " " + n }
        for (f, v) in zip(fields, values) { s += " \(f.name)=" + Self.text(f, v) }
        if case .list(_, let f) = body {
            s += items.isEmpty ? " (none)" : items.map { item in " [" + zip(f, item).map { "\($0.name)=" + Self.text($0, $1) }.joined(separator: " ") + "]" }.joined()
        }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

/// The table: characteristic UUID → layout.
public enum LEAudioControlProfiles {
    typealias F = LEAudioProfileField
    typealias Op = LEAudioProfileOperation

    static let mute: [UInt64: String] = [0: "Not Muted", 1: "Muted"]
    static let audioLocationBits = [
        "Front Left", "Front Right", "Front Center", "Low Frequency Effects 1", "Back Left", "Back Right", "Front Left of Center",
        "Front Right of Center", "Back Center", "Low Frequency Effects 2", "Side Left", "Side Right", "Top Front Left", "Top Front Right",
        "Top Front Center", "Top Center", "Top Back Left", "Top Back Right", "Top Side Left", "Top Side Right", "Top Back Center",
        "Bottom Front Center", "Bottom Front Left", "Bottom Front Right", "Front Left Wide", "Front Right Wide", "Left Surround", "Right Surround"
    ]
    static let changeCounter = F("change_counter", .uint(1))
    /// MCS 1.0 §3.15 Playing Order, §3.16 Playing Orders Supported (bit n = order n + 1).
    static let playingOrders = [
        "Single once", "Single repeat", "In order once", "In order repeat", "Oldest once", "Oldest repeat", "Newest once", "Newest repeat",
        "Shuffle once", "Shuffle repeat"
    ]
    /// MCS 1.0 §3.18 Media Control Point opcodes, in the bit order of §3.19's supported opcodes.
    static let mediaOpcodes: [(UInt8, String)] = [
        (0x01, "Play"), (0x02, "Pause"), (0x03, "Fast Rewind"), (0x04, "Fast Forward"), (0x05, "Stop"), (0x10, "Move Relative"),
        (0x20, "Previous Segment"), (0x21, "Next Segment"), (0x22, "First Segment"), (0x23, "Last Segment"), (0x24, "Goto Segment"),
        (0x30, "Previous Track"), (0x31, "Next Track"), (0x32, "First Track"), (0x33, "Last Track"), (0x34, "Goto Track"),
        (0x40, "Previous Group"), (0x41, "Next Group"), (0x42, "First Group"), (0x43, "Last Group"), (0x44, "Goto Group")
    ]
    /// TBS 1.0 §3.12 Call Control Point opcodes.
    static let callOpcodes: [UInt64: String] = [0: "Accept", 1: "Terminate", 2: "Local Hold", 3: "Local Retrieve", 4: "Originate", 5: "Join"]
    /// TBS 1.0 §3.11 Call State values and Call_Flags.
    static let callStates: [UInt64: String] = [
        0: "Incoming", 1: "Dialing", 2: "Alerting", 3: "Active", 4: "Locally Held", 5: "Remotely Held", 6: "Locally and Remotely Held"
    ]
    static let callFlags = ["Outgoing", "Information withheld by server", "Information withheld by network"]
    static let callIndex = F("call_index", .uint(1))
    /// HAS 1.0 §2.8 preset record properties.
    static let presetProperties = F("properties", .uint(1), bits: ["Writable", "Is Available"])
    static let objectID = F("object_id", .uint(6))
    /// GMAS characteristics (GMAP 1.0 §4.2-4.6).
    public static let gmas: ClosedRange<UInt16> = 0x2C00...0x2C04

    public static let layouts: [UInt16: LEAudioProfileLayout] = {
        var t: [UInt16: LEAudioProfileLayout] = [:]
        func add(_ u: UInt16, _ name: String, _ key: String, _ spec: String, _ value: LEAudioProfileBody, written: LEAudioProfileBody? = nil) {
            t[u] = LEAudioProfileLayout(name: name, key: key, spec: spec, value: value, written: written)
        }
        func text(_ u: UInt16, _ name: String, _ key: String, _ spec: String, _ field: String) { add(u, name, key, spec, .fields([F(field, .utf8)])) }
        func one(_ u: UInt16, _ name: String, _ key: String, _ spec: String, _ f: F) { add(u, name, key, spec, .fields([f])) }

        // AICS 1.0 §3.1-§3.6 (Audio Input Control Service).
        add(
            0x2B77, "Audio Input State", "audio_input_state", "AICS 1.0 §3.1",
            .fields([
                F("gain_setting", .sint(1)), F("mute", .uint(1), names: [0: "Not Muted", 1: "Muted", 2: "Disabled"]),
                F("gain_mode", .uint(1), names: [0: "Manual Only", 1: "Automatic Only", 2: "Manual", 3: "Automatic"]), changeCounter
            ]))
        add(
            0x2B78, "Gain Settings Attribute", "gain_settings_attribute", "AICS 1.0 §3.2",
            .fields([F("gain_setting_units", .uint(1)), F("gain_setting_minimum", .sint(1)), F("gain_setting_maximum", .sint(1))]))
        one(
            0x2B79, "Audio Input Type", "audio_input_type", "AICS 1.0 §3.3",
            F(
                "audio_input_type", .uint(1),
                names: [0: "Unspecified", 1: "Bluetooth", 2: "Microphone", 3: "Analog", 4: "Digital", 5: "Radio", 6: "Streaming", 7: "Ambient"]))
        one(0x2B7A, "Audio Input Status", "audio_input_status", "AICS 1.0 §3.4", F("audio_input_status", .uint(1), names: [0: "Inactive", 1: "Active"]))
        add(
            0x2B7B, "Audio Input Control Point", "audio_input_control_point", "AICS 1.0 §3.5",
            .operation([
                0x01: Op("Set Gain Setting", [changeCounter, F("gain_setting", .sint(1))]), 0x02: Op("Unmute", [changeCounter]),
                0x03: Op("Mute", [changeCounter]), 0x04: Op("Set Manual Gain Mode", [changeCounter]), 0x05: Op("Set Automatic Gain Mode", [changeCounter])
            ]))
        text(0x2B7C, "Audio Input Description", "audio_input_description", "AICS 1.0 §3.6", "audio_input_description")

        // VCS 1.0 §3.1-§3.3 (Volume Control Service).
        add(0x2B7D, "Volume State", "volume_state", "VCS 1.0 §3.1", .fields([F("volume_setting", .uint(1)), F("mute", .uint(1), names: mute), changeCounter]))
        add(
            0x2B7E, "Volume Control Point", "volume_control_point", "VCS 1.0 §3.2",
            .operation([
                0x00: Op("Relative Volume Down", [changeCounter]), 0x01: Op("Relative Volume Up", [changeCounter]),
                0x02: Op("Unmute/Relative Volume Down", [changeCounter]), 0x03: Op("Unmute/Relative Volume Up", [changeCounter]),
                0x04: Op("Set Absolute Volume", [changeCounter, F("volume_setting", .uint(1))]), 0x05: Op("Unmute", [changeCounter]),
                0x06: Op("Mute", [changeCounter])
            ]))
        one(0x2B7F, "Volume Flags", "volume_flags", "VCS 1.0 §3.3", F("volume_flags", .uint(1), bits: ["Volume_Setting_Persisted"]))

        // VOCS 1.0 §3.1-§3.4 (Volume Offset Control Service).
        add(0x2B80, "Volume Offset State", "volume_offset_state", "VOCS 1.0 §3.1", .fields([F("volume_offset", .sint(2)), changeCounter]))
        one(0x2B81, "Audio Location", "audio_location", "VOCS 1.0 §3.2", F("audio_location", .uint(4), bits: audioLocationBits))
        add(
            0x2B82, "Volume Offset Control Point", "volume_offset_control_point", "VOCS 1.0 §3.3",
            .operation([0x01: Op("Set Volume Offset", [changeCounter, F("volume_offset", .sint(2))])]))
        text(0x2B83, "Audio Output Description", "audio_output_description", "VOCS 1.0 §3.4", "audio_output_description")

        // CSIS 1.0 §5.2-§5.4 (the SIRK, §5.1, is a key: Broadcast.swift).
        one(0x2B85, "Coordinated Set Size", "coordinated_set_size", "CSIS 1.0 §5.2", F("coordinated_set_size", .uint(1)))
        one(0x2B86, "Set Member Lock", "set_member_lock", "CSIS 1.0 §5.3", F("set_member_lock", .uint(1), names: [1: "Unlocked", 2: "Locked"]))
        one(0x2B87, "Set Member Rank", "set_member_rank", "CSIS 1.0 §5.4", F("set_member_rank", .uint(1)))

        // MCS 1.0 §3.1-§3.22 (Media Control Service; GMCS has the same characteristics).
        text(0x2B93, "Media Player Name", "media_player_name", "MCS 1.0 §3.1", "media_player_name")
        one(0x2B94, "Media Player Icon Object ID", "media_player_icon_object_id", "MCS 1.0 §3.2", objectID)
        text(0x2B95, "Media Player Icon URL", "media_player_icon_url", "MCS 1.0 §3.3", "url")
        add(0x2B96, "Track Changed", "track_changed", "MCS 1.0 §3.4", .fields([]))
        text(0x2B97, "Track Title", "track_title", "MCS 1.0 §3.5", "track_title")
        // Hundredths of a second; -1 (0xFFFFFFFF) unknown or no current track.
        one(0x2B98, "Track Duration", "track_duration", "MCS 1.0 §3.6", F("track_duration_centiseconds", .sint(4)))
        one(0x2B99, "Track Position", "track_position", "MCS 1.0 §3.7", F("track_position_centiseconds", .sint(4)))
        one(0x2B9A, "Playback Speed", "playback_speed", "MCS 1.0 §3.8", F("playback_speed", .sint(1)))
        one(0x2B9B, "Seeking Speed", "seeking_speed", "MCS 1.0 §3.9", F("seeking_speed", .sint(1)))
        // Object IDs (§3.10-§3.14, §3.20) may be empty: no object.
        for (u, n, k, s) in [
            (UInt16(0x2B9C), "Current Track Segments Object ID", "current_track_segments_object_id", "MCS 1.0 §3.10"),
            (0x2B9D, "Current Track Object ID", "current_track_object_id", "MCS 1.0 §3.11"),
            (0x2B9E, "Next Track Object ID", "next_track_object_id", "MCS 1.0 §3.12"),
            (0x2B9F, "Parent Group Object ID", "parent_group_object_id", "MCS 1.0 §3.13"),
            (0x2BA0, "Current Group Object ID", "current_group_object_id", "MCS 1.0 §3.14"),
            (0x2BA6, "Search Results Object ID", "search_results_object_id", "MCS 1.0 §3.20")
        ] {
            add(u, n, k, s, .list(lengthPrefixed: false, [objectID]))
        }
        var orders: [UInt64: String] = [:]
        for (i, n) in playingOrders.enumerated() { orders[UInt64(i + 1)] = n }
        one(0x2BA1, "Playing Order", "playing_order", "MCS 1.0 §3.15", F("playing_order", .uint(1), names: orders))
        one(0x2BA2, "Playing Orders Supported", "playing_orders_supported", "MCS 1.0 §3.16", F("playing_orders_supported", .uint(2), bits: playingOrders))
        one(0x2BA3, "Media State", "media_state", "MCS 1.0 §3.17", F("media_state", .uint(1), names: [0: "Inactive", 1: "Playing", 2: "Paused", 3: "Seeking"]))
        var mediaOps: [UInt8: Op] = [:]
        var mediaNames: [UInt64: String] = [:]
        for (o, n) in mediaOpcodes {
            // Move Relative: Offset (hundredths of a second); Goto Segment/Track/Group: n.
            mediaOps[o] = Op(n, o == 0x10 ? [F("offset_centiseconds", .sint(4))] : [0x24, 0x34, 0x44].contains(o) ? [F("n", .sint(4))] : [])
            mediaNames[UInt64(o)] = n
        }
        add(
            0x2BA4, "Media Control Point", "media_control_point", "MCS 1.0 §3.18",
            .fields([
                F("requested_opcode", .uint(1), names: mediaNames),
                F("result_code", .uint(1), names: [1: "Success", 2: "Opcode Not Supported", 3: "Media Player Inactive", 4: "Command Cannot Be Completed"])
            ]), written: .operation(mediaOps))
        one(
            0x2BA5, "Media Control Point Opcodes Supported", "media_control_point_opcodes_supported", "MCS 1.0 §3.19",
            F("opcodes_supported", .uint(4), bits: mediaOpcodes.map(\.1)))
        add(
            0x2BA7, "Search Control Point", "search_control_point", "MCS 1.0 §3.21",
            .fields([F("result_code", .uint(1), names: [1: "Success", 2: "Failure"])]),
            written: .list(
                lengthPrefixed: true,
                [
                    F(
                        "type", .uint(1),
                        names: [
                            1: "Track Name", 2: "Artist Name", 3: "Album Name", 4: "Group Name", 5: "Earliest Year", 6: "Latest Year", 7: "Genre",
                            8: "Only Tracks", 9: "Only Groups"
                        ]), F("parameter", .utf8)
                ]))

        // TBS 1.0 §3.1-§3.16 (Telephone Bearer Service; GTBS has the same characteristics).
        text(0x2BB3, "Bearer Provider Name", "bearer_provider_name", "TBS 1.0 §3.1", "bearer_provider_name")
        text(0x2BB4, "Bearer UCI", "bearer_uci", "TBS 1.0 §3.2", "bearer_uci")
        one(
            0x2BB5, "Bearer Technology", "bearer_technology", "TBS 1.0 §3.3",
            F("bearer_technology", .uint(1), names: [1: "3G", 2: "4G", 3: "LTE", 4: "Wi-Fi", 5: "5G", 6: "GSM", 7: "CDMA", 8: "2G", 9: "WCDMA"]))
        text(0x2BB6, "Bearer URI Schemes Supported List", "bearer_uri_schemes_supported_list", "TBS 1.0 §3.4", "uri_schemes")
        one(0x2BB7, "Bearer Signal Strength", "bearer_signal_strength", "TBS 1.0 §3.5", F("signal_strength", .uint(1), names: [255: "Unavailable"]))
        one(0x2BB8, "Bearer Signal Strength Reporting Interval", "bearer_signal_strength_reporting_interval", "TBS 1.0 §3.6", F("interval_s", .uint(1)))
        add(
            0x2BB9, "Bearer List Current Calls", "bearer_list_current_calls", "TBS 1.0 §3.7",
            .list(
                lengthPrefixed: true,
                [callIndex, F("call_state", .uint(1), names: callStates), F("call_flags", .uint(1), bits: callFlags), F("call_uri", .utf8)]))
        one(0x2BBA, "Content Control ID", "content_control_id", "TBS 1.0 §3.8, MCS 1.0 §3.22", F("ccid", .uint(1)))
        one(0x2BBB, "Status Flags", "status_flags", "TBS 1.0 §3.9", F("status_flags", .uint(2), bits: ["Inband ringtone", "Silent mode"]))
        add(0x2BBC, "Incoming Call Target Bearer URI", "incoming_call_target_bearer_uri", "TBS 1.0 §3.10", .fields([callIndex, F("uri", .utf8)]))
        add(
            0x2BBD, "Call State", "call_state", "TBS 1.0 §3.11",
            .list(lengthPrefixed: false, [callIndex, F("call_state", .uint(1), names: callStates), F("call_flags", .uint(1), bits: callFlags)]))
        add(
            0x2BBE, "Call Control Point", "call_control_point", "TBS 1.0 §3.12",
            .fields([
                F("requested_opcode", .uint(1), names: callOpcodes), callIndex,
                F(
                    "result_code", .uint(1),
                    names: [
                        0: "Success", 1: "Opcode Not Supported", 2: "Operation Not Possible", 3: "Invalid Call Index", 4: "State Mismatch",
                        5: "Lack Of Resources", 6: "Invalid Outgoing URI"
                    ])
            ]),
            written: .operation([
                0: Op("Accept", [callIndex]), 1: Op("Terminate", [callIndex]), 2: Op("Local Hold", [callIndex]), 3: Op("Local Retrieve", [callIndex]),
                4: Op("Originate", [F("uri", .utf8)]), 5: Op("Join", [F("call_indexes", .octets)])
            ]))
        one(
            0x2BBF, "Call Control Point Optional Opcodes", "call_control_point_optional_opcodes", "TBS 1.0 §3.13",
            F("optional_opcodes", .uint(2), bits: ["Local Hold and Local Retrieve", "Join"]))
        add(
            0x2BC0, "Termination Reason", "termination_reason", "TBS 1.0 §3.14",
            .fields([
                callIndex,
                F(
                    "reason", .uint(1),
                    names: [
                        0: "Improper URI", 1: "Call failed", 2: "Remote party ended the call", 3: "Server ended the call", 4: "Line busy",
                        5: "Network congestion", 6: "Client terminated the call", 7: "No service", 8: "No answer", 9: "Unspecified"
                    ])
            ]))
        add(0x2BC1, "Incoming Call", "incoming_call", "TBS 1.0 §3.15", .fields([callIndex, F("uri", .utf8)]))
        add(0x2BC2, "Call Friendly Name", "call_friendly_name", "TBS 1.0 §3.16", .fields([callIndex, F("friendly_name", .utf8)]))

        // MICS 1.0 §3.1 (Microphone Control Service).
        one(0x2BC3, "Mute", "mute", "MICS 1.0 §3.1", F("mute", .uint(1), names: [0: "Not Muted", 1: "Muted", 2: "Disabled"]))

        // HAS 1.0 §3.1-§3.3 (Hearing Access Service).
        one(
            0x2BDA, "Hearing Aid Features", "hearing_aid_features", "HAS 1.0 §3.1",
            F(
                "hearing_aid_features", .uint(1),
                bits: ["", "", "Preset Synchronization Support", "Independent Presets", "Dynamic Presets", "Writable Presets Support"]))
        let isLast = F("is_last", .uint(1))
        let index = F("index", .uint(1))
        // §3.2.2.2 Preset Changed: Change_ID, Is_Last, then Generic Update's Prev_Index and
        // preset record, or the Index the others name.
        var presetChanged = Op(
            "Preset Changed",
            [F("change_id", .uint(1), names: [0: "Generic Update", 1: "Preset Record Deleted", 2: "Preset Record Available", 3: "Preset Record Unavailable"]), isLast])
        presetChanged.variants = [0: [F("prev_index", .uint(1)), index, presetProperties, F("name", .utf8)]]
        presetChanged.otherwise = [index]
        let presetOps: [UInt8: Op] = [
            0x01: Op("Read Presets Request", [F("start_index", .uint(1)), F("num_presets", .uint(1))]),
            0x02: Op("Read Preset Response", [isLast, index, presetProperties, F("name", .utf8)]),
            0x03: presetChanged,
            0x04: Op("Write Preset Name", [index, F("name", .utf8)]), 0x05: Op("Set Active Preset", [index]), 0x06: Op("Set Next Preset"),
            0x07: Op("Set Previous Preset"), 0x08: Op("Set Active Preset - Synchronized Locally", [index]),
            0x09: Op("Set Next Preset - Synchronized Locally"), 0x0A: Op("Set Previous Preset - Synchronized Locally")
        ]
        add(0x2BDB, "Hearing Aid Preset Control Point", "hearing_aid_preset_control_point", "HAS 1.0 §3.2", .operation(presetOps))
        one(0x2BDC, "Active Preset Index", "active_preset_index", "HAS 1.0 §3.3", index)

        // TMAP 1.0 §4.7 TMAP Role (TMAS); GMAP 1.0 §4.2-§4.6 (GMAS).
        one(
            0x2B51, "TMAP Role", "tmap_role", "TMAP 1.0 §4.7",
            F(
                "tmap_role", .uint(2),
                bits: ["Call Gateway", "Call Terminal", "Unicast Media Sender", "Unicast Media Receiver", "Broadcast Media Sender", "Broadcast Media Receiver"]))
        one(0x2C00, "GMAP Role", "gmap_role", "GMAP 1.0 §4.2", F("gmap_role", .uint(1), bits: ["Unicast Game Gateway", "Unicast Game Terminal", "Broadcast Game Sender", "Broadcast Game Receiver"]))
        one(0x2C01, "UGG Features", "ugg_features", "GMAP 1.0 §4.3", F("ugg_features", .uint(1), bits: ["UGG Multiplex", "UGG 96 kbps Source", "UGG Multisink"]))
        one(
            0x2C02, "UGT Features", "ugt_features", "GMAP 1.0 §4.4",
            F("ugt_features", .uint(1), bits: ["UGT Source", "UGT 80 kbps Source", "UGT Sink", "UGT 64 kbps Sink", "UGT Multiplex", "UGT Multisink", "UGT Multisource"]))
        one(0x2C03, "BGS Features", "bgs_features", "GMAP 1.0 §4.5", F("bgs_features", .uint(1), bits: ["BGS 96 kbps"]))
        one(0x2C04, "BGR Features", "bgr_features", "GMAP 1.0 §4.6", F("bgr_features", .uint(1), bits: ["BGR Multisink", "BGR Multiplex"]))
        return t
    }()
}
