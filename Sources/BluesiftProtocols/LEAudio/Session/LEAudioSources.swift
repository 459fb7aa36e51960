import BluesiftWire

extension LEAudioStats {
    /// One Auracast broadcast source (issue 39): what its advertising said (Broadcast Audio
    /// Announcement BAP 1.0.1 §3.7.2.1, Broadcast_Name PBP 1.0 §4.1, Public Broadcast
    /// Announcement PBP 1.0 §4.2), its BASE (BAP 1.0.1 §3.7.2.2, from its periodic advertising),
    /// its BIGInfo (Core 6.0 Vol 4 Part E §7.7.65.34: encrypted or not) and the BIGs on it (a
    /// sink's BIG Create Sync §7.8.106 with the BISes it chose, a source's Create BIG §7.8.103).
    /// A source is an advertiser (address and SID) whose extended advertising a sink received,
    /// or an advertising set of the capture's own host.
    public struct SourceRow: Codable, Sendable {
        public var broadcastId: Int?
        public var broadcastName: String?
        /// A sink's view: the advertiser's address and Advertising SID.
        public var advertiser: String?
        public var advertisingSid: Int?
        /// A source's own HCI: its advertising set.
        public var advertisingHandle: Int?
        public var pbpFeatures: [String]?
        public var programInfo: String?
        /// The latest BASE.
        public var presentationDelayUs: Int?
        public var subgroups: [Subgroup]?
        /// BIGInfo (or LE Create BIG's Encryption): whether its BISes are encrypted.
        public var encrypted: Bool?
        public var numBis: Int?
        public var sduIntervalUs: Int?
        public var maxSdu: Int?
        public var bigs: [BIGRow]
        public var firstFrame: Int
        public var lastFrame: Int

        public struct Subgroup: Codable, Sendable {
            public var codec: String
            public var codingFormat: Int
            public var samplingFrequencyHz: Int?
            public var frameDurationUs: Int?
            public var octetsPerCodecFrame: Int?
            public var language: String?
            public var programInfo: String?
            public var bis: [BIS]
        }
        public struct BIS: Codable, Sendable {
            public var bisIndex: Int
            public var audioChannelAllocation: Int?
            public var audioChannelAllocationNames: [String]?
            public var preset: String?
        }
        /// `role` "sink": the capture's host synced to `bis` (BIS indexes) with or without a
        /// Broadcast_Code; "source": it created the BIG. `bis_handles` from BIG Sync
        /// Established / Create BIG Complete, in `bis` order; `lost_*` from BIG Sync Lost.
        public struct BIGRow: Codable, Sendable {
            public var frame: Int
            public var role: String
            public var bigHandle: Int
            public var bis: [Int]
            public var broadcastCode: Bool
            public var status: Int?
            public var bisHandles: [Int]?
            public var lostFrame: Int?
            public var lostReason: Int?
        }
    }

    static let sourcesHeader =
        "file,broadcast_id,broadcast_name,advertiser,advertising_sid,advertising_handle,pbp_features,program_info,presentation_delay_us,codec,language,bis,encrypted,num_bis,sdu_interval_us,max_sdu,synced_bis,bis_handles,first_frame,last_frame"
}

/// The broadcast sources of a capture, one row each, gathered from the messages that
/// concern them (keyed as `LEAudioState.advertiserKey`, or `ownSet` for a source's own set).
struct LEAudioSources {
    var rows: [UInt64: LEAudioStats.SourceRow] = [:]
    /// A row per key in the order sources were first seen.
    var order: [UInt64] = []
    var bases: [UInt64: BASE] = [:]
    /// BIG handle → its source and index in `bigs`.
    var bigOf: [UInt8: (key: UInt64, index: Int)] = [:]
    static let maxSources = 64
    static let maxBIGs = 16

    static func ownSet(_ handle: UInt64) -> UInt64 { 1 << 60 | handle & 0xFF }

    mutating func touch(_ key: UInt64, _ frame: Int) -> Bool {
        if rows[key] == nil {
            guard rows.count < Self.maxSources else { return false }
            var r = LEAudioStats.SourceRow(bigs: [], firstFrame: frame, lastFrame: frame)
            if key >> 60 == 1 {
                r.advertisingHandle = Int(key & 0xFF)
            } else {
                r.advertiser = BDAddr(key).description; r.advertisingSid = Int(key >> 48 & 0x0F)
            }
            rows[key] = r; order.append(key)
        }
        rows[key]!.lastFrame = frame
        return true
    }

    /// An `le_audio` message; `advertiser`: the key `LEAudioState.advertised` found for it.
    mutating func add(_ v: LEAudioMessageLayer, advertiser: UInt64?, state: LEAudioState, frame: Int) {
        if let key = advertiser, touch(key, frame) {
            if let x = v.value { identity(x, key) }
            for x in v.advertising { identity(x, key) }
        }
        guard let m = v.hci, m.error == nil else { return }
        let sync = m.uint("sync_handle").flatMap { state.syncAdvertisers[UInt16($0 & 0x0FFF)] }
        switch m.kind {
        case .subevent(HCILESubeventCode.periodicAdvertisingReport.rawValue), .subevent(HCILESubeventCode.periodicAdvertisingReportV2.rawValue):
            if let key = sync { base(v, key, frame) }
        case .command(HCICommandOpcode.leSetPeriodicAdvertisingData.rawValue):
            if let h = m.uint("advertising_handle") { base(v, Self.ownSet(h), frame) }
        case .subevent(HCILESubeventCode.bIGInfoAdvertisingReport.rawValue):
            guard let key = sync, touch(key, frame) else { return }
            rows[key]!.encrypted = m.uint("encryption") == 1
            rows[key]!.numBis = m.uint("num_bis").map(Int.init)
            rows[key]!.sduIntervalUs = m.uint("sdu_interval").map(Int.init)
            rows[key]!.maxSdu = m.uint("max_sdu").map(Int.init)
        case .command(HCICommandOpcode.leBIGCreateSync.rawValue):
            guard let key = sync, let b = m.uint("big_handle") else { return }
            big(key, frame, role: "sink", UInt8(truncatingIfNeeded: b), bis: m.uints("bis").map(Int.init), code: m.uint("encryption") == 1)
        case .command(HCICommandOpcode.leCreateBIG.rawValue), .command(HCICommandOpcode.leCreateBIGTest.rawValue):
            guard let h = m.uint("advertising_handle"), let b = m.uint("big_handle") else { return }
            let key = Self.ownSet(h), n = Int(m.uint("num_bis") ?? 0)
            big(key, frame, role: "source", UInt8(truncatingIfNeeded: b), bis: n > 0 ? Array(1...n) : [], code: m.uint("encryption") == 1)
            if rows[key] != nil {
                rows[key]!.encrypted = m.uint("encryption") == 1; rows[key]!.numBis = n
                rows[key]!.sduIntervalUs = m.uint("sdu_interval").map(Int.init); rows[key]!.maxSdu = m.uint("max_sdu").map(Int.init)
            }
        case .subevent(HCILESubeventCode.bigSyncEstablished.rawValue), .subevent(HCILESubeventCode.createBIGComplete.rawValue):
            guard let b = m.uint("big_handle"), let e = bigOf[UInt8(truncatingIfNeeded: b)], touch(e.key, frame) else { return }
            let (key, i) = e
            rows[key]!.bigs[i].status = m.uint("status").map(Int.init)
            rows[key]!.bigs[i].bisHandles = m.uints("connection_handle").map { Int($0 & 0x0FFF) }
        case .subevent(HCILESubeventCode.bigSyncLost.rawValue):
            guard let b = m.uint("big_handle"), let e = bigOf[UInt8(truncatingIfNeeded: b)], touch(e.key, frame) else { return }
            let (key, i) = e
            rows[key]!.bigs[i].lostFrame = frame
            rows[key]!.bigs[i].lostReason = m.uint("reason").map(Int.init)
        default: break
        }
    }

    mutating func identity(_ x: LEAudioValue, _ key: UInt64) {
        switch x {
        case .broadcastAnnouncement(let a) where a.error == nil:
            if rows[key]!.broadcastId != Int(a.broadcastID) { rows[key]!.broadcastId = Int(a.broadcastID) }
        case .broadcastName(let n) where n.error == nil: rows[key]!.broadcastName = n.name
        case .publicBroadcast(let p) where p.error == nil:
            rows[key]!.pbpFeatures = [(1, "encrypted"), (2, "standard_quality"), (4, "high_quality")].filter { p.features & UInt8($0.0) != 0 }.map(\.1)
            rows[key]!.programInfo = p.metadata.programInfo
        default: break
        }
    }

    mutating func base(_ v: LEAudioMessageLayer, _ key: UInt64, _ frame: Int) {
        for x in v.advertising {
            guard case .base(let b) = x, b.error == nil, touch(key, frame) else { continue }
            // Periodic advertising repeats its BASE: the row is built again only when it changes.
            if bases[key] == b { continue }
            bases[key] = b
            rows[key]!.presentationDelayUs = Int(b.presentationDelay)
            rows[key]!.subgroups = b.subgroups.map { g in
                let c = g.codec.configuration
                return .init(
                    codec: g.codec.summary, codingFormat: Int(g.codec.codecID.codingFormat), samplingFrequencyHz: c?.samplingFrequency?.hertz,
                    frameDurationUs: c?.frameDuration?.microseconds, octetsPerCodecFrame: c?.octetsPerCodecFrame.map(Int.init),
                    language: g.metadata.language, programInfo: g.metadata.programInfo,
                    bis: g.bises.map { s in
                        let a = g.configuration(of: s)?.audioChannelAllocation
                        return .init(bisIndex: Int(s.index), audioChannelAllocation: a.map { Int($0.rawValue) }, audioChannelAllocationNames: a?.names, preset: g.configuration(of: s)?.preset)
                    })
            }
        }
    }

    mutating func big(_ key: UInt64, _ frame: Int, role: String, _ b: UInt8, bis: [Int], code: Bool) {
        guard touch(key, frame), rows[key]!.bigs.count < Self.maxBIGs else { return }
        rows[key]!.bigs.append(.init(frame: frame, role: role, bigHandle: Int(b), bis: bis, broadcastCode: code))
        if bigOf.count < Self.maxSources * Self.maxBIGs || bigOf[b] != nil { bigOf[b] = (key, rows[key]!.bigs.count - 1) }
    }

    var all: [LEAudioStats.SourceRow] { order.compactMap { rows[$0] } }

    /// `source 0x5a17c3 "Gate 12" F1:A2:B3:C4:D5:E6 SID 3: BASE 40000 us; 48_2 … BIS 1,2 eng; encrypted; …`.
    static func line(_ s: LEAudioStats.SourceRow) -> String {
        var out = "source " + (s.broadcastId.map { Hex.fixed(UInt64($0), width: 6) } ?? "(no Broadcast_ID)")
        if let n = s.broadcastName { out += " \"" + n + "\"" }
        if let a = s.advertiser { out += " " + a + " SID \(s.advertisingSid ?? 0)" }
        if let h = s.advertisingHandle { out += " advertising set \(h)" }
        if let p = s.programInfo { out += ", program \"" + p + "\"" }
        if let d = s.presentationDelayUs {
            out += ": BASE delay \(d) us"
            for g in s.subgroups ?? [] {
                out += "; " + g.codec + " BIS " + g.bis.map { String($0.bisIndex) }.joined(separator: ",")
                if let l = g.language { out += " " + l }
                if let p = g.programInfo { out += " \"" + p + "\"" }
            }
        }
        if let e = s.encrypted { out += e ? ", encrypted" : ", not encrypted" }
        for b in s.bigs {
            out += b.role == "sink" ? ", BIG \(b.bigHandle) synced to BIS " : ", BIG \(b.bigHandle) created with BIS "
            out += b.bis.map(String.init).joined(separator: ",")
            if let h = b.bisHandles, !h.isEmpty { out += " (" + h.map { Hex.fixed(UInt64($0), width: 4) }.joined(separator: ",") + ")" }
            if let st = b.status, st != 0 { out += " failed (" + HCIStatus(UInt8(truncatingIfNeeded: st)).name + ")" }
            if let f = b.lostFrame { out += ", lost #\(f)" }
            out += " #\(b.frame)"
        }
        return out + ", frames \(s.firstFrame)-\(s.lastFrame)"
    }

    static func csv(_ s: LEAudioStats.SourceRow, file: String) -> [String?] {
        let g = s.subgroups ?? []
        func joined(_ x: [String]) -> String? { x.isEmpty ? nil : x.joined(separator: "; ") }
        return [
            file, s.broadcastId.map { Hex.fixed(UInt64($0), width: 6) }, s.broadcastName, s.advertiser, s.advertisingSid.map(String.init),
            s.advertisingHandle.map(String.init), s.pbpFeatures.map { $0.joined(separator: " ") }, s.programInfo, s.presentationDelayUs.map(String.init),
            joined(g.map(\.codec)), joined(g.compactMap(\.language)), joined(g.map { $0.bis.map { String($0.bisIndex) }.joined(separator: " ") }),
            s.encrypted.map { $0 ? "true" : "false" }, s.numBis.map(String.init), s.sduIntervalUs.map(String.init), s.maxSdu.map(String.init),
            joined(s.bigs.filter { $0.role == "sink" }.map { $0.bis.map(String.init).joined(separator: " ") }),
            joined(s.bigs.map { ($0.bisHandles ?? []).map { Hex.fixed(UInt64($0), width: 4) }.joined(separator: " ") }.filter { !$0.isEmpty }),
            String(s.firstFrame), String(s.lastFrame)
        ]
    }
}
