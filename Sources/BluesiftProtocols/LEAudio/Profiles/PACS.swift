import BluesiftWire

/// PACS 1.0 §3.1 Table 3.2: a Sink PAC / Source PAC characteristic value (0x2BC9 / 0x2BCB):
/// Number_of_PAC_records, then per record Codec_ID, capabilities (LTVs, a vendor codec's
/// own bytes otherwise) and Metadata.
public struct PACRecordList: Hashable, Sendable, FieldDescribable {
    public struct Record: Hashable, Sendable {
        public var codecID: LEAudioCodecID
        public var capabilitiesBytes: [UInt8]
        public var metadata: LEAudioMetadata
        public init(codecID: LEAudioCodecID, capabilitiesBytes: [UInt8], metadata: LEAudioMetadata = LEAudioMetadata()) {
            self.codecID = codecID; self.capabilitiesBytes = capabilitiesBytes; self.metadata = metadata
        }
        public var capabilities: LEAudioCodecCapabilities? {
            codecID.isVendor ? nil : capabilitiesBytes.withUnsafeBytes { LEAudioCodecCapabilities(bytes: $0) }
        }
    }

    public var records: [Record]
    public var error: DecodeError?
    public init(records: [Record]) { self.records = records }

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        records = []
        do throws(DecodeError) {
            let n = Int(try r.readUInt8("Number_of_PAC_records"))
            for _ in 0..<n {
                let id = try LEAudioCodecID(&r)
                let cl = Int(try r.readUInt8("Codec_Specific_Capabilities_Length"))
                let caps = Array(try r.readBytes(cl, "Codec_Specific_Capabilities"))
                let ml = Int(try r.readUInt8("Metadata_Length"))
                records.append(Record(codecID: id, capabilitiesBytes: caps, metadata: LEAudioMetadata(bytes: try r.readBytes(ml, "Metadata"))))
            }
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex, "\(r.readableBytes) bytes after the PAC records") }
        } catch {
            self.error = error.inLayer("pacs")
        }
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.writeUInt8(UInt8(records.count))
        for x in records {
            x.codecID.encode(into: &w)
            w.writeUInt8(UInt8(x.capabilitiesBytes.count)); w.writeBytes(x.capabilitiesBytes)
            let m = x.metadata.encode(); w.writeUInt8(UInt8(m.count)); w.writeBytes(m)
        }
        return w.bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("number_of_pac_records", records.count)
        sink.array("pac_records") { s in
            for x in records {
                s.object("") { s in
                    s.object("codec_id") { s in x.codecID.describe(into: &s) }
                    if let c = x.capabilities {
                        s.object("codec_specific_capabilities") { s in c.describe(into: &s) }
                    } else {
                        s.hex("codec_specific_capabilities", x.capabilitiesBytes)
                    }
                    s.object("metadata") { s in x.metadata.describe(into: &s) }
                }
            }
        }
        if let error { sink.string("error", error.message) }
    }

    public var summary: String {
        var s = "PAC \(records.count) record" + (records.count == 1 ? "" : "s")
        for x in records {
            s += " " + x.codecID.summary
            if let c = x.capabilities {
                if let f = c.supportedSamplingFrequencies { s += " " + f.hertz.map { "\($0 / 1000)" + ($0 % 1000 == 0 ? "" : ".\($0 % 1000 / 100)") }.joined(separator: "/") + " kHz" }
                if let o = c.octetsPerCodecFrame { s += " \(o.min)-\(o.max) octets" }
            }
        }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

/// PACS 1.0 §3.2/§3.4 Sink/Source Audio Locations (0x2BCA / 0x2BCC): four octets.
public struct PACSAudioLocations: Hashable, Sendable, FieldDescribable {
    public var locations: LEAudioLocation
    public var error: DecodeError?
    public init(_ l: LEAudioLocation) { locations = l }
    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            locations = LEAudioLocation(rawValue: try r.readUInt32(.little, "Audio_Locations"))
            if !r.isAtEnd { error = LEAudioError.make(.invalidLength, 4, "\(r.readableBytes) bytes after the locations") }
        } catch { locations = []; self.error = error.inLayer("pacs") }
    }
    public func encode() -> [UInt8] { LEAudioLTV.uint(UInt64(locations.rawValue), 4) }
    public func describe<S: FieldSink>(into sink: inout S) {
        locations.describe("audio_locations", into: &sink)
        if let error { sink.string("error", error.message) }
    }
    public var summary: String { "Audio Locations " + locations.names.joined(separator: "+") }
}

/// PACS 1.0 §3.5/§3.6 Available / Supported Audio Contexts (0x2BCD / 0x2BCE): sink then
/// source context bit fields.
public struct PACSAudioContexts: Hashable, Sendable, FieldDescribable {
    public var sink: LEAudioContextType
    public var source: LEAudioContextType
    public var error: DecodeError?
    public init(sink: LEAudioContextType, source: LEAudioContextType) { self.sink = sink; self.source = source }
    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        sink = []; source = []
        do throws(DecodeError) {
            sink = LEAudioContextType(rawValue: try r.readUInt16(.little, "Sink_Contexts"))
            source = LEAudioContextType(rawValue: try r.readUInt16(.little, "Source_Contexts"))
            if !r.isAtEnd { error = LEAudioError.make(.invalidLength, 4, "\(r.readableBytes) bytes after the contexts") }
        } catch { self.error = error.inLayer("pacs") }
    }
    public func encode() -> [UInt8] { LEAudioLTV.uint(UInt64(sink.rawValue), 2) + LEAudioLTV.uint(UInt64(source.rawValue), 2) }
    public func describe<S: FieldSink>(into s: inout S) {
        sink.describe("sink_contexts", into: &s); source.describe("source_contexts", into: &s)
        if let error { s.string("error", error.message) }
    }
    public var summary: String {
        "Contexts sink " + (sink.names.isEmpty ? "none" : sink.names.joined(separator: "+"))
            + " source " + (source.names.isEmpty ? "none" : source.names.joined(separator: "+"))
    }
}
