import BluesiftWire

/// BASS 1.0 §3.2 PA_Sync_State. Open.
public struct BASSPASyncState: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var name: String {
        switch rawValue {
        case 0: "Not synchronized to PA"
        case 1: "SyncInfo Request"
        case 2: "Synchronized to PA"
        case 3: "Failed to synchronize to PA"
        case 4: "No PAST"
        default: "Unknown"
        }
    }
}

/// BASS 1.0 §3.2 BIG_Encryption. Open.
public struct BASSBIGEncryption: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let badCode = Self(rawValue: 3)
    public var name: String {
        switch rawValue {
        case 0: "Not encrypted"
        case 1: "Broadcast_Code required"
        case 2: "Decrypting"
        case 3: "Bad_Code"
        default: "Unknown"
        }
    }
}

/// BASS 1.0 §3.1 Table 3.3 Broadcast Audio Scan Control Point opcodes. Open.
public struct BASSOpcode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let remoteScanStopped = Self(rawValue: 0), remoteScanStarted = Self(rawValue: 1), addSource = Self(rawValue: 2)
    public static let modifySource = Self(rawValue: 3), setBroadcastCode = Self(rawValue: 4), removeSource = Self(rawValue: 5)
    /// Not read (a value too short for its opcode).
    static let notRead = Self(rawValue: 0xFF)
    public var name: String {
        switch rawValue {
        case 0: "Remote Scan Stopped"
        case 1: "Remote Scan Started"
        case 2: "Add Source"
        case 3: "Modify Source"
        case 4: "Set Broadcast_Code"
        case 5: "Remove Source"
        default: "Unknown"
        }
    }
}

/// A BASS subgroup (§3.1.1.4, §3.2): BIS_Sync (bit n = BIS index n+1; 0xFFFFFFFF no
/// preference) and Metadata.
public struct BASSSubgroup: Hashable, Sendable {
    public var bisSync: UInt32
    public var metadata: LEAudioMetadata
    public init(bisSync: UInt32, metadata: LEAudioMetadata = LEAudioMetadata()) { self.bisSync = bisSync; self.metadata = metadata }
    static func readList(_ r: inout ByteReader) throws(DecodeError) -> [BASSSubgroup] {
        let n = Int(try r.readUInt8("Num_Subgroups"))
        var out: [BASSSubgroup] = []
        for _ in 0..<n {
            let sync = try r.readUInt32(.little, "BIS_Sync")
            let ml = Int(try r.readUInt8("Metadata_Length"))
            out.append(BASSSubgroup(bisSync: sync, metadata: LEAudioMetadata(bytes: try r.readBytes(ml, "Metadata"))))
        }
        return out
    }
    static func write(_ list: [BASSSubgroup], _ w: inout ByteWriter) {
        w.writeUInt8(UInt8(list.count))
        for g in list { w.writeUInt32(g.bisSync); let m = g.metadata.encode(); w.writeUInt8(UInt8(m.count)); w.writeBytes(m) }
    }
    static func describe<S: FieldSink>(_ list: [BASSSubgroup], into sink: inout S) {
        sink.int("num_subgroups", list.count)
        sink.array("subgroups") { s in
            for g in list {
                s.object("") { s in
                    s.uint("bis_sync", UInt64(g.bisSync))
                    s.object("metadata") { s in g.metadata.describe(into: &s) }
                }
            }
        }
    }
}

/// BASS 1.0 §3.2 Broadcast Receive State characteristic (0x2BC8). Empty: no source.
/// Bad_Code is key material: shown only with `showKeys`.
public struct BASSReceiveState: Hashable, Sendable, FieldDescribable {
    public var sourceID: UInt8 = 0
    public var sourceAddressType: UInt8 = 0
    public var sourceAddress = BDAddr(0)
    public var sourceAdvSID: UInt8 = 0
    public var broadcastID: UInt32 = 0
    public var paSyncState = BASSPASyncState(rawValue: 0)
    public var bigEncryption = BASSBIGEncryption(rawValue: 0)
    public var badCode: [UInt8]?
    public var subgroups: [BASSSubgroup] = []
    public var isEmpty = false
    public var error: DecodeError?
    public var showKeys = false

    public init() {}

    public init(bytes: UnsafeRawBufferPointer) {
        if bytes.isEmpty { isEmpty = true; return }
        var r = ByteReader(bytes)
        do throws(DecodeError) {
            sourceID = try r.readUInt8("Source_ID")
            sourceAddressType = try r.readUInt8("Source_Address_Type")
            sourceAddress = try r.readAddress("Source_Address")
            sourceAdvSID = try r.readUInt8("Source_Adv_SID")
            broadcastID = try r.readU24("Broadcast_ID")
            paSyncState = BASSPASyncState(rawValue: try r.readUInt8("PA_Sync_State"))
            bigEncryption = BASSBIGEncryption(rawValue: try r.readUInt8("BIG_Encryption"))
            if bigEncryption == .badCode { badCode = Array(try r.readBytes(16, "Bad_Code")) }
            subgroups = try BASSSubgroup.readList(&r)
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex, "\(r.readableBytes) bytes after the subgroups") }
        } catch {
            self.error = error.inLayer("bass")
        }
    }

    public func encode() -> [UInt8] {
        if isEmpty { return [] }
        var w = ByteWriter()
        w.writeUInt8(sourceID); w.writeUInt8(sourceAddressType); w.writeAddress(sourceAddress); w.writeUInt8(sourceAdvSID)
        w.writeU24(broadcastID); w.writeUInt8(paSyncState.rawValue); w.writeUInt8(bigEncryption.rawValue)
        if let b = badCode { w.writeBytes(b) }
        BASSSubgroup.write(subgroups, &w)
        return w.bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        if isEmpty { sink.bool("empty", true); return }
        sink.int("source_id", Int(sourceID)); sink.int("source_address_type", Int(sourceAddressType))
        sink.address("source_address", sourceAddress); sink.int("source_adv_sid", Int(sourceAdvSID))
        sink.int("broadcast_id", Int(broadcastID))
        sink.int("pa_sync_state", Int(paSyncState.rawValue)); sink.string("pa_sync_state_name", paSyncState.name)
        sink.int("big_encryption", Int(bigEncryption.rawValue)); sink.string("big_encryption_name", bigEncryption.name)
        if let b = badCode { if showKeys { sink.hex("bad_code", b) } else { sink.string("bad_code", "hidden") } }
        BASSSubgroup.describe(subgroups, into: &sink)
        if let error { sink.string("error", error.message) }
    }

    public var summary: String {
        if isEmpty { return "Broadcast Receive State empty" }
        var s = "Broadcast Receive State source \(sourceID) broadcast_id " + Hex.fixed(UInt64(broadcastID), width: 6)
        s += " " + paSyncState.name + ", " + bigEncryption.name
        s += " BIS " + subgroups.map { Hex.fixed(UInt64($0.bisSync), width: 8) }.joined(separator: ",")
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

/// BASS 1.0 §3.1 Broadcast Audio Scan Control Point operation (0x2BC7 write). The
/// Broadcast_Code of Set Broadcast_Code is a key: shown only with `showKeys`.
public struct BASSControlPointOperation: Hashable, Sendable, FieldDescribable {
    public var opcode: BASSOpcode
    public var sourceID: UInt8?
    public var advertiserAddressType: UInt8?
    public var advertiserAddress: BDAddr?
    public var advertisingSID: UInt8?
    public var broadcastID: UInt32?
    public var paSync: UInt8?
    public var paInterval: UInt16?
    public var subgroups: [BASSSubgroup]?
    public var broadcastCode: [UInt8]?
    public var error: DecodeError?
    public var showKeys = false

    public init(opcode: BASSOpcode) { self.opcode = opcode }

    public init(bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        opcode = .notRead
        do throws(DecodeError) {
            opcode = BASSOpcode(rawValue: try r.readUInt8("Opcode"))
            switch opcode.rawValue {
            case 0, 1: break
            case 2:
                advertiserAddressType = try r.readUInt8("Advertiser_Address_Type")
                advertiserAddress = try r.readAddress("Advertiser_Address")
                advertisingSID = try r.readUInt8("Advertising_SID")
                broadcastID = try r.readU24("Broadcast_ID")
                paSync = try r.readUInt8("PA_Sync"); paInterval = try r.readUInt16(.little, "PA_Interval")
                subgroups = try BASSSubgroup.readList(&r)
            case 3:
                sourceID = try r.readUInt8("Source_ID")
                paSync = try r.readUInt8("PA_Sync"); paInterval = try r.readUInt16(.little, "PA_Interval")
                subgroups = try BASSSubgroup.readList(&r)
            case 4:
                sourceID = try r.readUInt8("Source_ID")
                broadcastCode = Array(try r.readBytes(16, "Broadcast_Code"))
            case 5: sourceID = try r.readUInt8("Source_ID")
            default: throw LEAudioError.make(.unsupported, 0, "opcode \(Hex.fixed(UInt64(opcode.rawValue), width: 2)) not in BASS")
            }
            if !r.isAtEnd { throw LEAudioError.make(.invalidLength, r.readerIndex, "\(r.readableBytes) bytes after the operation") }
        } catch {
            self.error = error.inLayer("bass")
        }
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.writeUInt8(opcode.rawValue)
        if opcode.rawValue != 2, let s = sourceID { w.writeUInt8(s) }
        if let t = advertiserAddressType, let a = advertiserAddress { w.writeUInt8(t); w.writeAddress(a) }
        if let s = advertisingSID { w.writeUInt8(s) }
        if let b = broadcastID { w.writeU24(b) }
        if let p = paSync { w.writeUInt8(p) }
        if let p = paInterval { w.writeUInt16(p) }
        if let g = subgroups { BASSSubgroup.write(g, &w) }
        if let c = broadcastCode { w.writeBytes(c) }
        return w.bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(opcode.rawValue)); sink.string("opcode_name", opcode.name)
        if let v = sourceID { sink.int("source_id", Int(v)) }
        if let v = advertiserAddressType { sink.int("advertiser_address_type", Int(v)) }
        if let v = advertiserAddress { sink.address("advertiser_address", v) }
        if let v = advertisingSID { sink.int("advertising_sid", Int(v)) }
        if let v = broadcastID { sink.int("broadcast_id", Int(v)) }
        if let v = paSync { sink.int("pa_sync", Int(v)) }
        if let v = paInterval { sink.int("pa_interval", Int(v)) }
        if let g = subgroups { BASSSubgroup.describe(g, into: &sink) }
        if let c = broadcastCode { if showKeys { sink.hex("broadcast_code", c) } else { sink.string("broadcast_code", "hidden") } }
        if let error { sink.string("error", error.message) }
    }

    public var summary: String {
        var s = "BASS CP " + opcode.name
        if let v = sourceID { s += " source \(v)" }
        if let v = broadcastID { s += " broadcast_id " + Hex.fixed(UInt64(v), width: 6) }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}
