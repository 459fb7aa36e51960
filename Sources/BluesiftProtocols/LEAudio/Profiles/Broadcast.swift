import BluesiftWire

/// BAP 1.0.1 §3.7.2.2 Table 3.16 Basic Audio Announcement (service data 0x1851, in
/// periodic advertising): the BASE, three levels: presentation delay and subgroups (level
/// 1), each subgroup's codec, configuration and metadata (level 2), each BIS's index and
/// configuration over its subgroup's (level 3).
public struct BASE: Hashable, Sendable, FieldDescribable {
    public struct BIS: Hashable, Sendable {
        public var index: UInt8
        public var configurationBytes: [UInt8]
        public init(index: UInt8, configurationBytes: [UInt8]) { self.index = index; self.configurationBytes = configurationBytes }
    }
    public struct Subgroup: Hashable, Sendable {
        public var codec: LEAudioCodecSetting
        public var metadata: LEAudioMetadata
        public var bises: [BIS]
        public init(codec: LEAudioCodecSetting, metadata: LEAudioMetadata, bises: [BIS]) { self.codec = codec; self.metadata = metadata; self.bises = bises }
        /// A BIS's configuration: its level-3 LTVs over the subgroup's (BAP §3.7.2.2).
        public func configuration(of bis: BIS) -> LEAudioCodecConfiguration? {
            guard let base = codec.configuration else { return nil }
            return LEAudioCodecConfiguration(bytes: bis.configurationBytes).merged(over: base)
        }
    }

    /// µs.
    public var presentationDelay: UInt32
    public var subgroups: [Subgroup]
    public var error: DecodeError?
    public init(presentationDelay: UInt32, subgroups: [Subgroup]) { self.presentationDelay = presentationDelay; self.subgroups = subgroups }

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        presentationDelay = 0; subgroups = []
        do throws(DecodeError) {
            presentationDelay = try r.readU24("Presentation_Delay")
            let n = Int(try r.readUInt8("Num_Subgroups"))
            for _ in 0..<n {
                let nb = Int(try r.readUInt8("Num_BIS"))
                let id = try LEAudioCodecID(&r)
                let cl = Int(try r.readUInt8("Codec_Specific_Configuration_Length"))
                let cfg = Array(try r.readBytes(cl, "Codec_Specific_Configuration"))
                let ml = Int(try r.readUInt8("Metadata_Length"))
                let md = LEAudioMetadata(bytes: try r.readBytes(ml, "Metadata"))
                var bises: [BIS] = []
                for _ in 0..<nb {
                    let i = try r.readUInt8("BIS_index")
                    let l = Int(try r.readUInt8("Codec_Specific_Configuration_Length"))
                    bises.append(BIS(index: i, configurationBytes: Array(try r.readBytes(l, "Codec_Specific_Configuration"))))
                }
                subgroups.append(Subgroup(codec: LEAudioCodecSetting(codecID: id, configurationBytes: cfg), metadata: md, bises: bises))
            }
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex, "\(r.readableBytes) bytes after the BASE") }
        } catch {
            self.error = error.inLayer("bap")
        }
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.writeU24(presentationDelay); w.writeUInt8(UInt8(subgroups.count))
        for g in subgroups {
            w.writeUInt8(UInt8(g.bises.count)); g.codec.codecID.encode(into: &w)
            w.writeUInt8(UInt8(g.codec.configurationBytes.count)); w.writeBytes(g.codec.configurationBytes)
            let m = g.metadata.encode(); w.writeUInt8(UInt8(m.count)); w.writeBytes(m)
            for b in g.bises { w.writeUInt8(b.index); w.writeUInt8(UInt8(b.configurationBytes.count)); w.writeBytes(b.configurationBytes) }
        }
        return w.bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("presentation_delay", Int(presentationDelay))
        sink.int("num_subgroups", subgroups.count)
        sink.array("subgroups") { s in
            for g in subgroups {
                s.object("") { s in
                    s.int("num_bis", g.bises.count)
                    g.codec.describe(into: &s)
                    s.object("metadata") { s in g.metadata.describe(into: &s) }
                    s.array("bis") { s in
                        for b in g.bises {
                            s.object("") { s in
                                s.int("bis_index", Int(b.index))
                                if g.codec.codecID.isVendor {
                                    s.hex("codec_specific_configuration", b.configurationBytes)
                                } else {
                                    s.object("codec_specific_configuration") { s in LEAudioCodecConfiguration(bytes: b.configurationBytes).describe(into: &s) }
                                    if let p = g.configuration(of: b)?.preset { s.string("preset", p) }
                                }
                            }
                        }
                    }
                }
            }
        }
        if let error { sink.string("error", error.message) }
    }

    public var summary: String {
        var s = "BASE delay \(presentationDelay) us, \(subgroups.count) subgroup" + (subgroups.count == 1 ? "" : "s")
        for g in subgroups {
            s += "; " + g.codec.summary + " BIS " + g.bises.map { String($0.index) }.joined(separator: ",")
            if let l = g.metadata.language { s += " " + l }
        }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

/// BAP 1.0.1 §3.7.2.1 Broadcast Audio Announcement (service data 0x1852): Broadcast_ID.
public struct BroadcastAudioAnnouncement: Hashable, Sendable, FieldDescribable {
    public var broadcastID: UInt32
    /// Bytes after the Broadcast_ID (none defined).
    public var extra: [UInt8] = []
    public var error: DecodeError?
    public init(broadcastID: UInt32) { self.broadcastID = broadcastID }
    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        do throws(DecodeError) { broadcastID = try r.readU24("Broadcast_ID"); extra = Array(r.readRemaining()) } catch { broadcastID = 0; self.error = error.inLayer("bap") }
    }
    public func encode() -> [UInt8] { LEAudioLTV.uint(UInt64(broadcastID), 3) + extra }
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("broadcast_id", Int(broadcastID))
        if !extra.isEmpty { sink.hex("extra", extra) }
        if let error { sink.string("error", error.message) }
    }
    public var summary: String { "Broadcast Audio Announcement broadcast_id " + Hex.fixed(UInt64(broadcastID), width: 6) }
}

/// PBP 1.0 §4.2 Public Broadcast Announcement (service data 0x1856): features (bit 0
/// encrypted, bit 1 Standard Quality, bit 2 High Quality) and Metadata.
public struct PublicBroadcastAnnouncement: Hashable, Sendable, FieldDescribable {
    public var features: UInt8
    public var metadata: LEAudioMetadata
    public var error: DecodeError?
    public init(features: UInt8, metadata: LEAudioMetadata) { self.features = features; self.metadata = metadata }
    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        features = 0; metadata = LEAudioMetadata()
        do throws(DecodeError) {
            features = try r.readUInt8("Public_Broadcast_Announcement_features")
            let n = Int(try r.readUInt8("Metadata_Length"))
            metadata = LEAudioMetadata(bytes: try r.readBytes(n, "Metadata"))
        } catch { self.error = error.inLayer("pbp") }
    }
    public func encode() -> [UInt8] { let m = metadata.encode(); return [features, UInt8(m.count)] + m }
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("features", Int(features))
        sink.bool("encrypted", features & 1 != 0); sink.bool("standard_quality", features & 2 != 0); sink.bool("high_quality", features & 4 != 0)
        sink.object("metadata") { s in metadata.describe(into: &s) }
        if let error { sink.string("error", error.message) }
    }
    public var summary: String {
        var parts = ["Public Broadcast Announcement"]
        if features & 1 != 0 { parts.append("encrypted") }
        if features & 2 != 0 { parts.append("SQ") }
        if features & 4 != 0 { parts.append("HQ") }
        if let p = metadata.programInfo { parts.append(p) }
        return parts.joined(separator: " ")
    }
}

/// BAP 1.0.1 §3.5.3 Table 3.7 ASCS announcement (service data 0x184E) and CAP 1.0 §8.1.1
/// (0x1853, announcement type only): General (0x00) or Targeted (0x01).
public struct LEAudioAnnouncement: Hashable, Sendable, FieldDescribable {
    public var announcementType: UInt8
    public var availableAudioContexts: PACSAudioContexts?
    public var metadata: LEAudioMetadata?
    public var error: DecodeError?
    public init(announcementType: UInt8, availableAudioContexts: PACSAudioContexts? = nil, metadata: LEAudioMetadata? = nil) {
        self.announcementType = announcementType; self.availableAudioContexts = availableAudioContexts; self.metadata = metadata
    }
    /// `ascs`: the BAP form with contexts and metadata; otherwise CAP's one octet.
    public init(bytes: UnsafeRawBufferPointer, ascs: Bool) {
        var r = ByteReader(bytes)
        announcementType = 0
        do throws(DecodeError) {
            announcementType = try r.readUInt8("Announcement_Type")
            if ascs {
                availableAudioContexts = PACSAudioContexts(bytes: try r.readBytes(4, "Available_Audio_Contexts"))
                let n = Int(try r.readUInt8("Metadata_Length"))
                metadata = LEAudioMetadata(bytes: try r.readBytes(n, "Metadata"))
            }
        } catch { self.error = error.inLayer("bap") }
    }
    public func encode() -> [UInt8] {
        var out = [announcementType]
        if let c = availableAudioContexts { out += c.encode() }
        if let m = metadata { let b = m.encode(); out.append(UInt8(b.count)); out += b }
        return out
    }
    public var typeName: String { announcementType == 0 ? "General" : announcementType == 1 ? "Targeted" : "Unknown" }
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("announcement_type", Int(announcementType)); sink.string("announcement_type_name", typeName)
        if let c = availableAudioContexts { sink.object("available_audio_contexts") { s in c.describe(into: &s) } }
        if let m = metadata { sink.object("metadata") { s in m.describe(into: &s) } }
        if let error { sink.string("error", error.message) }
    }
    public var summary: String { typeName + " announcement" + (availableAudioContexts.map { " " + $0.summary } ?? "") }
}

/// Core Supplement (CSS 11) Part A §1.22 Broadcast_Name AD type 0x30 (4-32 octets UTF-8),
/// also BAP's Broadcast Name.
public struct BroadcastName: Hashable, Sendable, FieldDescribable {
    public var name: String
    public var error: DecodeError?
    public init(name: String) { self.name = name }
    public init(bytes: UnsafeRawBufferPointer) {
        name = String(decoding: bytes, as: UTF8.self)
        if bytes.count < 4 || bytes.count > 32 { error = LEAudioError.make(.invalidLength, 0, "Broadcast_Name of \(bytes.count) octets (4-32)") }
    }
    public func encode() -> [UInt8] { Array(name.utf8) }
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.string("broadcast_name", name)
        if let error { sink.string("error", error.message) }
    }
    public var summary: String { "Broadcast Name \"" + name + "\"" }
}

/// CSIS 1.0 §5.1 Set Identity Resolving Key characteristic (0x2B84): Type (0x00 encrypted,
/// 0x01 plain text) and the 16-octet SIRK, a key: shown only with `showKeys`.
public struct CSISSIRK: Hashable, Sendable, FieldDescribable {
    public var type: UInt8
    public var value: [UInt8]
    public var error: DecodeError?
    public var showKeys = false
    public init(type: UInt8, value: [UInt8]) { self.type = type; self.value = value }
    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        type = 0; value = []
        do throws(DecodeError) {
            type = try r.readUInt8("Type"); value = Array(try r.readBytes(16, "Value"))
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, 17, "\(r.readableBytes) bytes after the SIRK") }
        } catch { self.error = error.inLayer("csis") }
    }
    public func encode() -> [UInt8] { [type] + value }
    public var typeName: String { type == 0 ? "Encrypted" : type == 1 ? "Plain text" : "Unknown" }
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("sirk_type", Int(type)); sink.string("sirk_type_name", typeName)
        if showKeys { sink.hex("sirk", value) } else { sink.string("sirk", "hidden") }
        if let error { sink.string("error", error.message) }
    }
    public var summary: String { "SIRK (" + typeName.lowercased() + ")" }
}
