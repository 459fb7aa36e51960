import BluesiftWire

/// What one capture's LE Audio sessions did: which ATT handles are LE Audio
/// characteristics (from GATT discovery, as the caller provides UUIDs), each ASE's state
/// timeline with the operation that caused each step, the binding ASE ↔ CIG/CIS ↔ CIS
/// handle ↔ data path, and per CIS/BIS stream health (SDUs, sequence gaps, packet status
/// flags, SDU-interval jitter). Fed one record at a time; memory grows with the number of
/// ASEs, state changes and streams, not with ISO packets.
public struct LEAudioState {
    /// One ASE state change.
    public struct Step: Hashable, Sendable {
        public var frame: Int
        public var state: ASEState
        /// The ASE Control Point operation written for this ASE before the change; nil when
        /// the server moved on its own (Releasing → Idle, a CIS loss).
        public var cause: ASEOpcode?
    }
    public struct ASEKey: Hashable, Sendable, Comparable {
        public var connection: UInt16
        public var aseID: UInt8
        public static func < (a: Self, b: Self) -> Bool { (a.connection, a.aseID) < (b.connection, b.aseID) }
    }
    public struct ASE: Sendable {
        public var key: ASEKey
        /// Sink ASE (0x2BC4) or Source ASE (0x2BC5), when the handle's UUID is known.
        public var sink: Bool?
        public var steps: [Step] = []
        public var cigID: UInt8?
        public var cisID: UInt8?
        public var codec: LEAudioCodecSetting?
        public var qos: ASEQoS?
        /// Control point responses other than Success for this ASE: (frame, code, reason).
        public var errors: [(frame: Int, opcode: ASEOpcode, code: ASEResponseCode, reason: ASEReason)] = []
        public var state: ASEState? { steps.last?.state }
        public var reachedStreaming: Bool { steps.contains { $0.state == .streaming } }
    }

    /// One CIS or BIS handle's stream, per direction.
    public struct Stream: Sendable {
        public var handle: UInt16
        /// Host to controller (the host sent these SDUs).
        public var sent: Bool
        public var sdus = 0
        public var bytes = 0
        /// SDUs missing by Packet_Sequence_Number gaps.
        public var lostBySequence = 0
        /// Packet_Status_Flag counts: valid, possibly invalid, lost (three fields, not an
        /// array: the stream is copied out of its table per SDU, an array would be copied on write).
        public var statusValid = 0, statusPossiblyInvalid = 0, statusLost = 0
        public var statusCounts: [Int] { [statusValid, statusPossiblyInvalid, statusLost] }
        public var reassemblyErrors = 0
        var lastSequence: UInt16?
        var lastTimeStamp: UInt32?
        /// |Δtime stamp − expected| sums over consecutive SDUs with time stamps (µs).
        public var jitterSamples = 0
        public var jitterSum: Double = 0
        public var jitterMax: Double = 0
        public var meanJitter: Double? { jitterSamples == 0 ? nil : jitterSum / Double(jitterSamples) }
        public var firstFrame: Int?
        public var lastFrame: Int?
    }

    /// A CIS as the controller set it up.
    public struct CIS: Sendable {
        public var handle: UInt16
        public var cigID: UInt8?
        public var cisID: UInt8?
        public var aclHandle: UInt16?
        /// CIS Established status (0 success); nil before the event.
        public var status: UInt8?
        public var sduIntervalCToP: UInt32?
        public var sduIntervalPToC: UInt32?
        /// Setup ISO Data Path directions set (bit 0 host→controller, bit 1 controller→host).
        public var dataPaths: UInt8 = 0
        /// Max_SDU per direction (Set CIG Parameters §7.8.97, CIS Established v2 §7.7.65.25).
        public var maxSDUCToP: UInt16?
        public var maxSDUPToC: UInt16?
        /// The capture's host was asked for this CIS (LE CIS Request §7.7.65.26): its SDUs sent
        /// go peripheral → central.
        public var peripheral = false
    }

    public struct BIG: Sendable {
        public var bigHandle: UInt8
        public var source: Bool
        public var status: UInt8?
        public var bisHandles: [UInt16] = []
        public var sduInterval: UInt32?
        /// Max_SDU (LE Create BIG §7.8.103, or the BIGInfo of a sink's sync §7.7.65.34).
        public var maxSDU: UInt16?
        public var lost: (frame: Int, reason: UInt8)?
    }

    /// ATT handle → characteristic UUID, per connection.
    public private(set) var characteristics: [UInt16: [UInt16: UInt16]] = [:]
    public private(set) var ases: [ASEKey: ASE] = [:]
    public private(set) var cises: [UInt16: CIS] = [:]
    public private(set) var bigs: [UInt8: BIG] = [:]
    public private(set) var streams: [UInt32: Stream] = [:]
    /// CP operations written and not yet answered by a state change, per ASE.
    var pendingOps: [ASEKey: ASEOpcode] = [:]
    /// Set CIG Parameters sent, waiting for their Command Complete: CIS IDs in order, intervals.
    var pendingCIG: (cigID: UInt8, cisIDs: [UInt8], cToP: UInt32, pToC: UInt32, maxCToP: [UInt64], maxPToC: [UInt64])?
    var pendingBIG: [UInt8: (sduInterval: UInt32, maxSDU: UInt16)] = [:]
    /// BIGInfo per periodic sync handle (§7.7.65.34): SDU interval, encryption; BIG Create
    /// Sync's sync handle per BIG handle (§7.8.106).
    public private(set) var bigInfo: [UInt16: (sduInterval: UInt32, encrypted: Bool, bises: UInt8, maxSDU: UInt16)] = [:]
    var pendingBIGSync: [UInt8: UInt16] = [:]
    var reassembler = ISOReassembler()

    /// A broadcast's Broadcast_ID (BAP 1.0.1 §3.7.2.1) and Broadcast_Name (PBP 1.0 §4.1).
    public struct BroadcastIdentity: Hashable, Sendable {
        public var id: UInt32?
        public var name: String?
    }
    /// A sink's chain from a BIS to its broadcast: the advertiser (address | SID << 48) whose
    /// extended advertising report announced it, the periodic sync to that advertiser (LE
    /// Periodic Advertising Sync Established §7.7.65.14, or Sync Transfer Received
    /// §7.7.65.24), the BIG synced on that sync (`pendingBIGSync`). A source's own HCI: the
    /// advertising set's data (LE Set Extended Advertising Data §7.8.54) and the BIG created on
    /// it (LE Create BIG §7.8.103). Bounded like the other tables.
    var advertisers: [UInt64: BroadcastIdentity] = [:]
    var syncAdvertisers: [UInt16: UInt64] = [:]
    var advertisingSets: [UInt8: BroadcastIdentity] = [:]
    var bigAdvertisingSets: [UInt8: UInt8] = [:]
    static let maxBroadcasts = 64

    public init() {}

    // MARK: GATT

    /// A characteristic found by discovery: `uuid` at value handle `handle` on `connection`.
    public mutating func bind(connection: UInt16, handle: UInt16, uuid: UInt16) {
        guard LEAudioUUIDs.characteristics.contains(uuid) else { return }
        characteristics[connection, default: [:]][handle] = uuid
    }

    public func uuid(connection: UInt16, handle: UInt16) -> UInt16? { characteristics[connection]?[handle] }

    /// An ATT value on a bound handle (read response, notification, indication or write);
    /// returns the decoded value, nil when the handle is not an LE Audio characteristic.
    @discardableResult
    public mutating func attValue(connection: UInt16, handle: UInt16, written: Bool, bytes: UnsafeRawBufferPointer, frame: Int) -> LEAudioValue? {
        guard let u = uuid(connection: connection, handle: handle),
            let v = LEAudioValue(characteristic: u, written: written, bytes: bytes)
        else { return nil }
        apply(v, connection: connection, uuid: u, frame: frame)
        return v
    }

    public mutating func apply(_ v: LEAudioValue, connection: UInt16, uuid: UInt16, frame: Int) {
        switch v {
        case .aseOperation(let op):
            for e in op.entries { pendingOps[ASEKey(connection: connection, aseID: e.aseID)] = op.opcode }
        case .aseResponse(let n):
            for r in n.responses where r.code != .success {
                let k = ASEKey(connection: connection, aseID: r.aseID)
                var a = ases[k] ?? ASE(key: k)
                a.errors.append((frame, n.opcode, r.code, r.reason))
                ases[k] = a
                pendingOps[k] = nil
            }
        case .aseState(let s) where s.error == nil:
            let k = ASEKey(connection: connection, aseID: s.aseID)
            var a = ases[k] ?? ASE(key: k)
            a.sink = uuid == LEAudioUUIDs.sinkASE ? true : uuid == LEAudioUUIDs.sourceASE ? false : a.sink
            if a.steps.last?.state != s.state {
                a.steps.append(Step(frame: frame, state: s.state, cause: pendingOps[k]))
            }
            pendingOps[k] = nil
            if let c = s.codecConfigured { a.codec = c.codec }
            if let q = s.qos { a.qos = q; a.cigID = q.cigID; a.cisID = q.cisID }
            if let e = s.enabled { a.cigID = e.cigID; a.cisID = e.cisID }
            ases[k] = a
        default: break
        }
    }

    // MARK: HCI

    /// An HCI command the host sent.
    public mutating func command(opcode: UInt16, parameters: UnsafeRawBufferPointer) {
        guard let m = LEAudioHCIMessage(.command(opcode), parameters: parameters) else { return }
        hci(m, frame: 0)
    }

    /// A decoded isochronous HCI command, return or subevent (what the module hands over).
    public mutating func hci(_ m: LEAudioHCIMessage, frame: Int) {
        guard m.error == nil else { return }
        switch m.kind {
        case .command(let op): commandMessage(op, m)
        case .returnParameters(let op): returnMessage(op, m)
        case .subevent(let code): subeventMessage(code, m, frame: frame)
        }
    }

    mutating func commandMessage(_ opcode: UInt16, _ m: LEAudioHCIMessage) {
        switch opcode {
        case HCICommandOpcode.leSetCIGParameters.rawValue, HCICommandOpcode.leSetCIGParametersTest.rawValue:
            pendingCIG = (
                UInt8(m.uint("cig_id") ?? 0), m.uints("cis_id").map { UInt8($0) },
                UInt32(m.uint("sdu_interval_c_to_p") ?? 0), UInt32(m.uint("sdu_interval_p_to_c") ?? 0),
                m.uints("max_sdu_c_to_p"), m.uints("max_sdu_p_to_c")
            )
        case HCICommandOpcode.leCreateCIS.rawValue:
            for (c, a) in zip(m.uints("cis_connection_handle"), m.uints("acl_connection_handle")) {
                let h = UInt16(c & 0x0FFF)
                cises[h, default: CIS(handle: h)].aclHandle = UInt16(a & 0x0FFF)
            }
        case HCICommandOpcode.leSetupISODataPath.rawValue:
            if let h = m.uint("connection_handle"), let d = m.uint("data_path_direction") {
                let h = UInt16(h & 0x0FFF)
                if cises[h] != nil { cises[h]!.dataPaths |= 1 << UInt8(d & 1) }
            }
        case HCICommandOpcode.leRemoveISODataPath.rawValue:
            // §7.8.110: Data_Path_Direction is a bit field here (bit 0 input, bit 1 output),
            // not Setup's value (0 input, 1 output).
            if let h = m.uint("connection_handle"), let d = m.uint("data_path_direction") {
                let h = UInt16(h & 0x0FFF)
                if cises[h] != nil { cises[h]!.dataPaths &= ~UInt8(d & 3) }
            }
        case HCICommandOpcode.leCreateBIG.rawValue, HCICommandOpcode.leCreateBIGTest.rawValue:
            if let b = m.uint("big_handle") { pendingBIG[UInt8(b)] = (UInt32(m.uint("sdu_interval") ?? 0), UInt16(truncatingIfNeeded: m.uint("max_sdu") ?? 0)) }
            if let b = m.uint("big_handle"), let a = m.uint("advertising_handle"), bigAdvertisingSets.count < Self.maxBroadcasts {
                bigAdvertisingSets[UInt8(truncatingIfNeeded: b)] = UInt8(truncatingIfNeeded: a)
            }
        case HCICommandOpcode.leBIGCreateSync.rawValue:
            if let b = m.uint("big_handle"), let s = m.uint("sync_handle"), pendingBIGSync.count < 64 {
                pendingBIGSync[UInt8(b)] = UInt16(s & 0x0FFF)
            }
        default: break
        }
    }

    /// A Command Complete's return parameters for `opcode`.
    public mutating func commandComplete(opcode: UInt16, returnParameters: UnsafeRawBufferPointer) {
        guard let m = LEAudioHCIMessage(.returnParameters(opcode), parameters: returnParameters) else { return }
        hci(m, frame: 0)
    }

    mutating func returnMessage(_ opcode: UInt16, _ m: LEAudioHCIMessage) {
        guard opcode == HCICommandOpcode.leSetCIGParameters.rawValue || opcode == HCICommandOpcode.leSetCIGParametersTest.rawValue, m.uint("status") == 0, let p = pendingCIG else { return }
        for (i, h) in m.uints("connection_handle").enumerated() {
            let h = UInt16(h & 0x0FFF)
            var c = cises[h] ?? CIS(handle: h)
            c.cigID = p.cigID
            c.cisID = i < p.cisIDs.count ? p.cisIDs[i] : nil
            c.sduIntervalCToP = p.cToP; c.sduIntervalPToC = p.pToC
            if i < p.maxCToP.count { c.maxSDUCToP = UInt16(truncatingIfNeeded: p.maxCToP[i]) }
            if i < p.maxPToC.count { c.maxSDUPToC = UInt16(truncatingIfNeeded: p.maxPToC[i]) }
            cises[h] = c
        }
        pendingCIG = nil
    }

    /// An LE Meta event's subevent and its parameters (after the subevent code).
    public mutating func subevent(_ code: UInt8, parameters: UnsafeRawBufferPointer, frame: Int) {
        guard let m = LEAudioHCIMessage(.subevent(code), parameters: parameters) else { return }
        hci(m, frame: frame)
    }

    mutating func subeventMessage(_ code: UInt8, _ m: LEAudioHCIMessage, frame: Int) {
        switch code {
        case HCILESubeventCode.cisEstablished.rawValue, HCILESubeventCode.cisEstablishedV2.rawValue:
            guard let h = m.uint("connection_handle") else { return }
            let handle = UInt16(h & 0x0FFF)
            var c = cises[handle] ?? CIS(handle: handle)
            c.status = UInt8(m.uint("status") ?? 0)
            if code == HCILESubeventCode.cisEstablishedV2.rawValue {
                c.sduIntervalCToP = UInt32(m.uint("sdu_interval_c_to_p") ?? 0); c.sduIntervalPToC = UInt32(m.uint("sdu_interval_p_to_c") ?? 0)
                c.maxSDUCToP = m.uint("max_sdu_c_to_p").map { UInt16(truncatingIfNeeded: $0) }
                c.maxSDUPToC = m.uint("max_sdu_p_to_c").map { UInt16(truncatingIfNeeded: $0) }
            }
            cises[handle] = c
        case HCILESubeventCode.cisRequest.rawValue:
            let h = UInt16((m.uint("cis_connection_handle") ?? 0) & 0x0FFF)
            var c = cises[h] ?? CIS(handle: h)
            c.aclHandle = UInt16((m.uint("acl_connection_handle") ?? 0) & 0x0FFF)
            c.cigID = UInt8(m.uint("cig_id") ?? 0); c.cisID = UInt8(m.uint("cis_id") ?? 0)
            c.peripheral = true
            cises[h] = c
        case HCILESubeventCode.createBIGComplete.rawValue, HCILESubeventCode.bigSyncEstablished.rawValue:
            let b = UInt8(m.uint("big_handle") ?? 0)
            var g = bigs[b] ?? BIG(bigHandle: b, source: code == HCILESubeventCode.createBIGComplete.rawValue)
            g.status = UInt8(m.uint("status") ?? 0)
            g.bisHandles = m.uints("connection_handle").map { UInt16($0 & 0x0FFF) }
            let info = pendingBIGSync[b].flatMap { bigInfo[$0] }
            g.sduInterval = pendingBIG[b]?.sduInterval ?? info?.sduInterval ?? g.sduInterval
            g.maxSDU = pendingBIG[b]?.maxSDU ?? info?.maxSDU ?? g.maxSDU
            bigs[b] = g
        case HCILESubeventCode.periodicAdvertisingSyncEstablished.rawValue, HCILESubeventCode.periodicAdvertisingSyncEstablishedV2.rawValue,
            HCILESubeventCode.periodicAdvertisingSyncTransferReceived.rawValue, HCILESubeventCode.periodicAdvertisingSyncTransferReceivedV2.rawValue:
            guard m.uint("status") == 0, let s = m.uint("sync_handle"), let sid = m.uint("advertising_sid"), let i = m.names.firstIndex(of: "advertiser_address"),
                case .bytes(let a) = m.values[i], syncAdvertisers.count < Self.maxBroadcasts || syncAdvertisers[UInt16(s & 0x0FFF)] != nil
            else { return }
            syncAdvertisers[UInt16(s & 0x0FFF)] = Self.advertiserKey(a.withUnsafeBytes { BDAddr(littleEndian: $0) }, sid: UInt8(truncatingIfNeeded: sid))
        case HCILESubeventCode.bigSyncLost.rawValue:
            let b = UInt8(m.uint("big_handle") ?? 0)
            bigs[b, default: BIG(bigHandle: b, source: false)].lost = (frame, UInt8(m.uint("reason") ?? 0))
        case HCILESubeventCode.bIGInfoAdvertisingReport.rawValue:
            // BIGInfo gives the SDU interval a sink's BIG will have.
            if let s = m.uint("sync_handle"), bigInfo.count < 64 || bigInfo[UInt16(s & 0x0FFF)] != nil {
                bigInfo[UInt16(s & 0x0FFF)] = (
                    UInt32(m.uint("sdu_interval") ?? 0), m.uint("encryption") == 1, UInt8(m.uint("num_bis") ?? 0), UInt16(truncatingIfNeeded: m.uint("max_sdu") ?? 0)
                )
            }
        default: break
        }
    }

    // MARK: Auracast identity

    static func advertiserKey(_ a: BDAddr, sid: UInt8) -> UInt64 { a.value | UInt64(sid & 0x0F) << 48 }

    static func identity(_ x: LEAudioValue, _ id: inout UInt32?, _ name: inout String?) {
        switch x {
        case .broadcastAnnouncement(let b) where b.error == nil: id = b.broadcastID
        case .broadcastName(let n) where n.error == nil: name = n.name
        default: break
        }
    }

    /// An `le_audio` layer's advertising values: a Broadcast Audio Announcement in an extended
    /// advertising report (`adv`) names the advertiser's broadcast, with the report's
    /// Broadcast_Name; in LE Set Extended Advertising Data, the advertising set's.
    /// Returns the advertiser's key (`advertiserKey`, or `LEAudioSources.ownSet` for a set).
    @discardableResult
    public mutating func advertised(_ v: LEAudioMessageLayer, adv: AdvertisingLayer?) -> UInt64? {
        var id: UInt32?, name: String?
        // The layer's value and its advertising values, without an array per message.
        if let x = v.value { Self.identity(x, &id, &name) }
        for x in v.advertising { Self.identity(x, &id, &name) }
        guard id != nil || name != nil else { return nil }
        if let m = v.hci {
            guard case .command(HCICommandOpcode.leSetExtendedAdvertisingData.rawValue) = m.kind, let a = m.uint("advertising_handle") else { return nil }
            let h = UInt8(truncatingIfNeeded: a)
            guard advertisingSets.count < Self.maxBroadcasts || advertisingSets[h] != nil else { return nil }
            advertisingSets[h, default: .init()].merge(id, name)
            return LEAudioSources.ownSet(UInt64(h))
        }
        // The report that carries this announcement (an event may hold several reports).
        guard let adv, let id else { return nil }
        var key = v.advertiser
        adv.forEachReport { r in
            guard key == nil, let a = r.address, let sid = r.sid else { return }
            for s in r.structures where s.type.rawValue == 0x16 && s.value.count >= 5 {
                if s.value[0] == 0x52, s.value[1] == 0x18, UInt32(s.value[2]) | UInt32(s.value[3]) << 8 | UInt32(s.value[4]) << 16 == id {
                    key = Self.advertiserKey(a, sid: sid)
                }
            }
        }
        guard let key, advertisers.count < Self.maxBroadcasts || advertisers[key] != nil else { return nil }
        advertisers[key, default: .init()].merge(id, name)
        return key
    }

    /// The broadcast a BIG carries: a sink's through its periodic sync to the announcing
    /// advertiser, a source's through the advertising set it was created on.
    public func broadcast(big b: UInt8) -> BroadcastIdentity? {
        if bigs[b]?.source == true || pendingBIGSync[b] == nil { return bigAdvertisingSets[b].flatMap { advertisingSets[$0] } }
        return pendingBIGSync[b].flatMap { syncAdvertisers[$0] }.flatMap { advertisers[$0] }
    }

    /// The BIG handle a BIS handle belongs to.
    public func big(ofBIS handle: UInt16) -> UInt8? {
        bigs.first { $0.value.bisHandles.contains(handle) }?.key
    }

    // MARK: ISO

    /// The SDU interval expected on `handle` in a direction (µs), from the CIG or BIG setup.
    func expectedInterval(handle: UInt16, sent: Bool, centralSide: Bool = true) -> UInt32? {
        if let c = cises[handle] {
            // The central sends C→P and receives P→C; a peripheral the reverse. Without the
            // role, the non-zero interval of the two is the best guess.
            let v = sent == centralSide ? c.sduIntervalCToP : c.sduIntervalPToC
            return (v ?? 0) != 0 ? v : (c.sduIntervalCToP ?? c.sduIntervalPToC)
        }
        for g in bigs.values where g.bisHandles.contains(handle) { return g.sduInterval }
        return nil
    }

    /// The QoS configured for `handle` in a direction: SDU interval (µs) and Max_SDU (octets),
    /// from the CIG (the direction by the host's role: Set CIG Parameters is a central's, a CIS
    /// Request a peripheral's) or the BIG; nil when not known or zero.
    public func configuredQoS(handle: UInt16, sent: Bool) -> (sduInterval: UInt32, maxSDU: UInt16)? {
        if let c = cises[handle] {
            let cToP = sent != c.peripheral
            guard let i = cToP ? c.sduIntervalCToP : c.sduIntervalPToC, let m = cToP ? c.maxSDUCToP : c.maxSDUPToC, i > 0, m > 0 else { return nil }
            return (i, m)
        }
        for g in bigs.values where g.bisHandles.contains(handle) {
            guard let i = g.sduInterval, let m = g.maxSDU, i > 0, m > 0 else { return nil }
            return (i, m)
        }
        return nil
    }

    /// One HCI ISO Data packet (without its H4 indicator); `sent`: host to controller.
    /// Returns the damage found, if any.
    @discardableResult
    public mutating func isoPacket(_ packet: UnsafeRawBufferPointer, sent: Bool, frame: Int) -> DecodeError? {
        let h = ISODataHeader(packet: packet)
        if let e = h.error { return e }
        let fragment = UnsafeRawBufferPointer(rebasing: packet[h.fragmentOffset..<(h.fragmentOffset + h.fragmentLength)])
        var completed: ISOSDU?
        let damage = reassembler.add(h, fragment: fragment) { sdu, _ in completed = sdu }
        if damage != nil { reassemblyError(handle: h.handle, sent: sent) }
        if let sdu = completed { self.sdu(sdu, sent: sent, frame: frame) }
        return damage
    }

    public mutating func reassemblyError(handle: UInt16, sent: Bool) {
        let key = UInt32(handle) << 1 | (sent ? 1 : 0)
        streams[key, default: Stream(handle: handle, sent: sent)].reassemblyErrors += 1
    }

    /// One SDU completed on a CIS or BIS (reassembled by the caller).
    public mutating func sdu(_ sdu: ISOSDU, sent: Bool, frame: Int) {
        let key = UInt32(sdu.handle) << 1 | (sent ? 1 : 0)
        var s = streams[key] ?? Stream(handle: sdu.handle, sent: sent)
        s.sdus += 1; s.bytes += sdu.length
        s.firstFrame = s.firstFrame ?? frame; s.lastFrame = frame
        switch sdu.packetStatus.rawValue {
        case 0: s.statusValid += 1
        case 1: s.statusPossiblyInvalid += 1
        case 2: s.statusLost += 1
        default: break
        }
        var step = 1
        if let last = s.lastSequence {
            step = Int(sdu.packetSequenceNumber &- last)
            if step > 1 && step < 0x8000 { s.lostBySequence += step - 1 }
        }
        if let t = sdu.timeStamp, let lt = s.lastTimeStamp, step >= 1 && step < 0x8000,
            let interval = expectedInterval(handle: sdu.handle, sent: sent), interval > 0
        {
            let dev = abs(Double(Int64(t &- lt) & 0xFFFF_FFFF) - Double(interval) * Double(step))
            s.jitterSamples += 1; s.jitterSum += dev; s.jitterMax = max(s.jitterMax, dev)
        }
        s.lastSequence = sdu.packetSequenceNumber
        if let t = sdu.timeStamp { s.lastTimeStamp = t }
        streams[key] = s
    }

    /// The ASE bound to a CIS handle: same CIG and CIS ID on the CIS's ACL connection.
    public func ases(onCIS handle: UInt16) -> [ASE] {
        guard let c = cises[handle], let cig = c.cigID, let cis = c.cisID else { return [] }
        return ases.values.filter { $0.cigID == cig && $0.cisID == cis && (c.aclHandle == nil || $0.key.connection == c.aclHandle) }
            .sorted { $0.key < $1.key }
    }

    /// "ASE 1 (sink) on 0x0040: Idle → Codec Configured (Config Codec) #12 → …".
    public func timeline(_ a: ASE) -> String {
        var s = "ASE \(a.key.aseID)" + (a.sink.map { $0 ? " (sink)" : " (source)" } ?? "") + " on " + Hex.fixed(UInt64(a.key.connection), width: 4) + ":"
        for (i, st) in a.steps.enumerated() {
            s += (i == 0 ? " " : " → ") + st.state.name + (st.cause.map { " (" + $0.name + ")" } ?? "") + " #\(st.frame)"
        }
        return s
    }

    /// "CIS 0x0060 received: 100 SDUs, 2 lost (seq), valid 98 / possibly invalid 0 / lost 2, jitter mean 12 us max 40 us".
    public func health(_ s: Stream) -> String {
        var out = "ISO " + Hex.fixed(UInt64(s.handle), width: 4) + (s.sent ? " sent" : " received") + ": \(s.sdus) SDUs, \(s.lostBySequence) lost by sequence"
        out += ", status valid \(s.statusValid) / possibly invalid \(s.statusPossiblyInvalid) / lost \(s.statusLost)"
        if let j = s.meanJitter { out += ", jitter mean \(Int(j.rounded())) us max \(Int(s.jitterMax.rounded())) us" }
        if s.reassemblyErrors > 0 { out += ", \(s.reassemblyErrors) reassembly errors" }
        return out
    }
}

extension LEAudioState.BroadcastIdentity {
    mutating func merge(_ id: UInt32?, _ name: String?) {
        if let id, id != self.id { self.id = id; self.name = nil }
        if let name { self.name = name }
    }
}
