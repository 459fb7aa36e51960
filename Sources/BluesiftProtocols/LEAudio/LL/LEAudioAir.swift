import BluesiftWire
import BluesiftCapture
import BluesiftSecurity

// LE Audio on the air, as a sniffer hears it (the `le_audio` layer): the LL CIS control PDUs
// of a connection (`.llControl`), the CIS and BIS PDUs (`.llIsochronous`) and a broadcast's
// periodic advertising train (`.llPeriodicAdvertising`). A sniffer captures isochronous and
// periodic PDUs on access addresses no CONNECT_IND names; they are learnt from the air:
// - a CIS's from the LL_CIS_IND on its ACL connection (Vol 6 Part B §2.4.2.31);
// - a periodic advertising train's from the SyncInfo of the AUX_ADV_IND carrying a Broadcast
//   Audio Announcement or Broadcast_Name (§2.3.4.6);
// - a BIG's BISes' from the BIGInfo in the train's ACAD: seed access address → BIS 1…Num_BIS
//   and the BIG control access address (§2.1.2, §2.3.4.8).
// What a capture cannot tell: a CIS whose LL_CIS_IND was not captured (or was encrypted with
// no key) stays an unknown access address; an encrypted CIS is decrypted with its ACL's
// session key, a BIS with a Broadcast_Code given (`--broadcast-code`), the payload counter
// rebuilt from the schedule (`LEAudioAirCrypto.swift`); AUX_SYNC_IND
// and AUX_CHAIN_IND look the same on the air: the nRF Sniffer's header says which, otherwise a
// PDU following one with an AuxPtr within half the train's interval is taken as its AUX_CHAIN_IND.

/// What the module learnt on the air, for the whole capture (bounded).
final class LEAudioAirState {
    static let maxEntries = 64

    struct Stream {
        var kind: LLIsochronousPDU.Stream
        /// CIS: its CIG/CIS IDs and ACL connection; BIS: its number (0 the BIG control) and train.
        var cigID: UInt8 = 0
        var cisID: UInt8 = 0
        var connection: UInt16?
        var bis = 0
        var train: UInt32?
        /// BIS: the BIG's seed access address (BIGInfo), which names the BIG on the air.
        var seed: UInt32?
        var framed: Bool?
        var encrypted = false
        /// Decryption (`LEAudioAirCrypto.swift`): keys, IV, schedule, counters.
        var crypto: AirCrypto?
        /// Unframed: the PDUs an SDU takes per direction (0 C→P or the BIS, 1 P→C): BN over
        /// the SDUs of an ISO interval (Vol 6 Part G §2).
        var pdusPerSDU: [UInt64] = [1, 1]

        static func pdusPerSDU(bn: UInt8, isoInterval: UInt16, sduInterval: UInt32) -> UInt64 {
            let sdus = sduInterval == 0 ? 1 : max(1, UInt64(isoInterval) * 1250 / UInt64(sduInterval))
            return max(1, UInt64(bn) / sdus)
        }
    }
    var streams: [UInt32: Stream] = [:]
    /// The last LL_CIS_REQ per sniffed connection: its IDs and framing for the LL_CIS_IND.
    var requests: [UInt16: LLCISReq] = [:]

    struct Train {
        /// Interval in 1.25 ms units (0: unknown).
        var interval: UInt16
        var lastHadAuxPtr = false
        var lastMicroseconds: Int64?
    }
    var trains: [UInt32: Train] = [:]

    func add<V>(_ table: inout [UInt32: V], _ key: UInt32, _ value: V) {
        if table[key] == nil, table.count >= Self.maxEntries, let victim = table.first { table[victim.key] = nil }
        table[key] = value
    }
}

public enum LEAudioAir {
    /// The carriers LE Audio takes on the air (LEAudio.carriers).
    public static let carriers: [Carrier] = LLCISControl.opcodes.map { .llControl($0.rawValue) } + [.llIsochronous, .llPeriodicAdvertising]

    static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        let s = x.captureState(LEAudioAirState.self, LEAudioAirState.init)
        switch x.carrier {
        case .llControl(let code):
            let op = LLControlOpcode(rawValue: code)
            guard let c = LLCISControl(op, pdu) else {
                var v = LEAudioAirLayer(.controlDamaged(op))
                v.error = DecodeError(code: .truncated, offset: 1, message: "\(op.name): CtrData \(pdu.count) octets, too short")
                return v
            }
            // The CIS a response or indication is about (for `--cis CIG:CIS`).
            var about: LEAudioAirState.Stream?
            switch c {
            case .request(let r): if let n = f.connection { s.requests[n] = r }
            case .response:
                if let n = f.connection, let r = s.requests[n] {
                    about = LEAudioAirState.Stream(kind: .cis, cigID: r.cigID, cisID: r.cisID, connection: n)
                }
            case .indication(let i):
                var st = LEAudioAirState.Stream(kind: .cis)
                st.connection = f.connection
                if let n = f.connection, let r = s.requests[n] {
                    st.cigID = r.cigID; st.cisID = r.cisID; st.framed = r.framed
                    st.pdusPerSDU = [
                        LEAudioAirState.Stream.pdusPerSDU(bn: r.bnCToP, isoInterval: r.isoInterval, sduInterval: r.sduIntervalCToP),
                        LEAudioAirState.Stream.pdusPerSDU(bn: r.bnPToC, isoInterval: r.isoInterval, sduInterval: r.sduIntervalPToC)
                    ]
                }
                // A CIS of an encrypted ACL is encrypted (Vol 6 Part E §1); LL_CIS_IND was read
                // in plaintext only when decrypted.
                st.encrypted = f.ll?.decrypted ?? false
                if st.encrypted, let n = f.connection {
                    st.crypto = AirCrypto(cis: i, request: s.requests[n], link: x.decoder.links[n], since: x.record.timestamp.microseconds)
                }
                s.add(&s.streams, i.accessAddress, st)
                x.claim(accessAddress: i.accessAddress, as: .isochronous)
                about = st
            default: break
            }
            var v = LEAudioAirLayer(.cisControl(c))
            v.stream = about
            return v
        case .llIsochronous:
            guard let aa = f.ll?.accessAddress, var st = s.streams[aa] else { return nil }
            var v = LEAudioAirLayer(.isochronous(LLIsochronousPDU(st.kind, bytes: pdu)))
            v.stream = st
            v.accessAddress = aa
            // The sniffer's PDU type (LINKTYPE 256: 4 central→peripheral, 5 back); a BIS has one direction.
            if st.kind == .cis { v.fromCentral = f.ll?.fromCentral }
            if st.encrypted, var c = st.crypto {
                v.decrypt(&c, now: x.record.timestamp.microseconds)
                st.crypto = c
                s.streams[aa] = st
            } else if st.encrypted {
                v.decryption = .notDecrypted("no key")
            }
            v.read()
            return v
        case .llPeriodicAdvertising:
            guard let aa = f.ll?.accessAddress else { return nil }
            let now = x.record.timestamp.microseconds
            var train = s.trains[aa] ?? LEAudioAirState.Train(interval: 0)
            let half = Int64(train.interval == 0 ? 6 : train.interval) * 625
            // The nRF Sniffer says which it is; otherwise a PDU soon after one with an AuxPtr is its chain.
            let aux = x.record.sniffer?.auxType
            let chained =
                aux.map { $0 == 1 } ?? (train.lastHadAuxPtr && (train.lastMicroseconds.map { now - $0 >= 0 && now - $0 < half } ?? false))
            let p = LLPeriodicAdvertisingPDU(kind: chained ? .auxChainInd : .auxSyncInd, bytes: pdu)
            train.lastHadAuxPtr = p.auxPtr != nil
            train.lastMicroseconds = now
            s.add(&s.trains, aa, train)
            var v = LEAudioAirLayer(.periodic(p))
            v.error = p.error
            if let b = p.bigInfo {
                v.bigInfo = b
                // bisPayloadCount is the first payload of the BIG event BIG_Offset after the BIGInfo (§2.3.4.8).
                let anchor = now + Int64(b.bigOffset) * (b.bigOffsetUnits == 0 ? 30 : 300)
                for n in 0...Int(b.numBIS) {
                    let bisAA = LLBIGInfo.accessAddress(seed: b.seedAccessAddress, bis: n)
                    if s.streams[bisAA] != nil {
                        s.streams[bisAA]?.crypto?.anchor(b, at: anchor)
                        continue
                    }
                    var st = LEAudioAirState.Stream(kind: .bis)
                    st.bis = n; st.train = aa; st.seed = b.seedAccessAddress; st.framed = b.framed; st.encrypted = b.encrypted
                    st.pdusPerSDU[0] = LEAudioAirState.Stream.pdusPerSDU(bn: b.bn, isoInterval: b.isoInterval, sduInterval: b.sduInterval)
                    if b.encrypted {
                        st.crypto = AirCrypto(big: b, accessAddress: bisAA, codes: x.configuration(LEAudioAirKeys.self)?.broadcastCodes ?? [])
                        st.crypto?.anchor(b, at: anchor)
                    }
                    s.add(&s.streams, bisAA, st)
                    x.claim(accessAddress: bisAA, as: .isochronous)
                }
            }
            v.advertising = p.advData.withUnsafeBytes(LEAudioMessageLayer.values(inAdvertisingData:))
            return v
        default:
            return nil
        }
    }

    /// An extended advertising PDU on the air with LE Audio in its AdvData (a Broadcast Audio
    /// Announcement, Broadcast_Name): its SyncInfo leads to the periodic advertising train
    /// (the BASE and BIGInfo), whose access address is claimed.
    static func announced(_ x: ModuleContext, _ f: borrowing DecodedFrame) {
        guard let ll = f.ll, ll.isAdvertising, let raw = ll.extendedHeader?.syncInfo, let sync = LLSyncInfo(raw) else { return }
        let s = x.captureState(LEAudioAirState.self, LEAudioAirState.init)
        if s.trains[sync.accessAddress] == nil {
            s.add(&s.trains, sync.accessAddress, LEAudioAirState.Train(interval: sync.interval))
            x.claim(accessAddress: sync.accessAddress, as: .periodicAdvertising)
        }
    }
}

/// An `le_audio` layer value read off the air.
public struct LEAudioAirLayer: ModuleLayer {
    public enum Value {
        case cisControl(LLCISControl)
        /// An LL_CIS_* PDU too short for its opcode.
        case controlDamaged(LLControlOpcode)
        case isochronous(LLIsochronousPDU)
        case periodic(LLPeriodicAdvertisingPDU)
    }
    public var value: Value
    var stream: LEAudioAirState.Stream?
    /// A CIS or BIS PDU's access address; a CIS PDU's direction when the sniffer said it.
    public var accessAddress: UInt32?
    public var fromCentral: Bool?
    /// A framed PDU's ISOAL segments, a BIG Control PDU.
    public var segments: [ISOALSegment] = []
    public var bigControl: BIGControlPDU?
    /// A periodic advertising PDU's BIGInfo (ACAD) and LE Audio values in its AdvData (the BASE).
    public var bigInfo: LLBIGInfo?
    public var advertising: [LEAudioValue] = []
    public var error: DecodeError?
    /// An encrypted CIS/BIS PDU: decrypted (its payload counter; the payload is then the
    /// plaintext, MIC removed) or why not.
    public var decryption: AirDecryption?

    init(_ value: Value) { self.value = value }

    /// Framed segments or a BIG Control PDU, unless the payload is ciphertext.
    mutating func read() {
        guard case .isochronous(let p) = value else { return }
        error = p.error
        guard !(stream?.encrypted ?? false) || p.payload.isEmpty || decryption?.counter != nil else { return }
        if p.isBIGControl {
            bigControl = BIGControlPDU(p.payload)
        } else if p.isFramed {
            let (s, e) = ISOALSegment.segments(p.payload)
            segments = s
            if error == nil { error = e }
        }
    }

    public var layers: DecodedFrame.Layers { LEAudio.layer.bit }

    /// The stream a CIS/BIS PDU is on, as learnt on the air (`bluesift audio`): CIG/CIS IDs
    /// and ACL connection of a CIS; BIS number, BIG seed access address and periodic train of a BIS.
    public var cisIDs: (cig: UInt8, cis: UInt8, connection: UInt16?)? {
        guard let s = stream, s.kind == .cis else { return nil }
        return (s.cigID, s.cisID, s.connection)
    }
    public var bisOnAir: (bis: Int, seed: UInt32?, train: UInt32?)? {
        guard let s = stream, s.kind == .bis else { return nil }
        return (s.bis, s.seed, s.train)
    }
    public var streamEncrypted: Bool { stream?.encrypted ?? false }
    /// Payloads an unframed SDU takes in this PDU's direction (Vol 6 Part G §2).
    public var payloadsPerSDU: UInt64 { stream?.pdusPerSDU[fromCentral == false ? 1 : 0] ?? 1 }

    /// A BIS PDU carrying BIG Control (LLID 0b11), read or not.
    var isBIGControlPDU: Bool { isochronous?.isBIGControl ?? false }

    /// The isochronous PDU, if this is one.
    public var isochronous: LLIsochronousPDU? { if case .isochronous(let p) = value { p } else { nil } }
    public var periodic: LLPeriodicAdvertisingPDU? { if case .periodic(let p) = value { p } else { nil } }
    public var cisControl: LLCISControl? { if case .cisControl(let c) = value { c } else { nil } }

    public func name(_ layer: FrameLayer) -> String {
        switch value {
        case .cisControl(let c): c.opcode.name
        case .controlDamaged(let op): op.name
        case .isochronous(let p): bigControl?.name ?? (p.stream == .cis ? "CIS PDU" : "BIS PDU")
        case .periodic(let p): p.name
        }
    }

    public func summary(_ layer: FrameLayer) -> String {
        switch value {
        case .cisControl(let c): return c.summary
        case .controlDamaged: return ""
        case .isochronous(let p):
            var s: String
            if p.stream == .cis {
                s = "CIG \(stream?.cigID ?? 0) CIS \(stream?.cisID ?? 0) SN \(p.sn ? 1 : 0) NESN \(p.nesn ? 1 : 0)"
                if p.cie { s += " CIE" }
                if p.npi { s += " null" }
            } else {
                s = (stream?.bis ?? 0) == 0 ? "BIG control" : "BIS \(stream?.bis ?? 0)"
                s += " CSSN \(p.cssn)" + (p.cstf ? " CSTF" : "")
            }
            if p.npi || p.payload.isEmpty { return s }
            s += ", " + p.llidName + ", \(p.length) B"
            switch decryption {
            case .decrypted(let c)?: s += " (decrypted, payload \(c))"
            case .notDecrypted(let why)?: s += " (encrypted: " + why + ")"
            case nil: if stream?.encrypted ?? false { s += " (encrypted)" }
            }
            if !segments.isEmpty { s += ", \(segments.count) segment" + (segments.count == 1 ? "" : "s") }
            return s
        case .periodic(let p):
            var parts: [String] = []
            if let b = bigInfo { parts.append("BIGInfo \(b.numBIS) BIS" + (b.encrypted ? ", encrypted" : "")) }
            parts += advertising.map(\.summary)
            if parts.isEmpty { parts.append("\(p.advData.count) B AdvData") }
            return parts.joined(separator: "; ")
        }
    }

    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key))
        switch value {
        case .cisControl(let c):
            w.object("ll_control") { w in
                w.string("name", c.opcode.name); w.int("opcode", Int(c.opcode.rawValue)); c.describe(into: &w)
            }
        case .controlDamaged(let op):
            w.object("ll_control") { w in
                w.string("name", op.name); w.int("opcode", Int(op.rawValue))
            }
        case .isochronous(let p):
            w.object("isochronous") { w in describe(p, into: &w) }
        case .periodic(let p):
            w.object("periodic_advertising") { w in describe(p, into: &w) }
            if !advertising.isEmpty { w.array("advertising") { w in for v in advertising { w.object("") { w in v.describe(into: &w) } } } }
        }
        w.endObject()
    }

    private func describe<S: FieldSink>(_ p: LLIsochronousPDU, into w: inout S) {
        w.string("stream", p.stream == .cis ? "cis" : "bis")
        if let st = stream {
            if p.stream == .cis {
                w.int("cig_id", Int(st.cigID)); w.int("cis_id", Int(st.cisID))
            } else {
                w.int("bis", st.bis)
                if let t = st.train { w.string("train_access_address", Hex.fixed(UInt64(t), width: 8)) }
            }
            w.bool("encrypted", st.encrypted)
        }
        switch decryption {
        case .decrypted(let c)?: w.bool("decrypted", true); w.uint("payload_counter", c)
        case .notDecrypted(let why)?: w.bool("decrypted", false); w.string("not_decrypted", why)
        case nil: break
        }
        if let c = fromCentral { w.string("direction", LEAudioAirLayer.directionName(c)) }
        w.int("llid", Int(p.llid)); w.string("llid_name", p.llidName)
        if p.stream == .cis {
            w.bool("nesn", p.nesn); w.bool("sn", p.sn); w.bool("cie", p.cie); w.bool("npi", p.npi)
        } else {
            w.int("cssn", Int(p.cssn)); w.bool("cstf", p.cstf)
        }
        w.int("length", p.length)
        if let b = bigControl {
            w.object("big_control") { w in
                w.string("name", b.name)
                switch b {
                case .channelMapInd(let m, let instant): w.string("channel_map", Hex.fixed(m, width: 10)); w.int("instant", Int(instant))
                case .terminateInd(let reason, let instant):
                    w.int("reason", Int(reason)); w.string("reason_name", HCIStatusNames.name(reason)); w.int("instant", Int(instant))
                case .other(let op, let data): w.int("opcode", Int(op)); w.hex("data", data)
                }
            }
        } else if !segments.isEmpty {
            w.array("segments") { w in
                for s in segments {
                    w.object("") { w in
                        w.bool("sc", s.continuation); w.bool("cmplt", s.complete)
                        if let t = s.timeOffset { w.int("time_offset_us", Int(t)) }
                        w.hex("data", s.data)
                    }
                }
            }
        } else {
            w.hex("payload", p.payload)
        }
    }

    private func describe<S: FieldSink>(_ p: LLPeriodicAdvertisingPDU, into w: inout S) {
        w.string("pdu", p.name); w.int("adv_mode", Int(p.advMode))
        if let flags = p.flags { w.int("flags", Int(flags)) }
        if let a = p.advA { w.address("adv_a", a) }
        if let a = p.targetA { w.address("target_a", a) }
        if let c = p.cteInfo { w.int("cte_info", Int(c)) }
        if let adi = p.adi { w.int("did", Int(adi & 0xFFF)); w.int("sid", Int(adi >> 12)) }
        if let a = p.auxPtr { w.object("aux_ptr") { w in a.describe(into: &w) } }
        if let s = p.syncInfo { w.object("sync_info") { w in s.describe(into: &w) } }
        if let t = p.txPower { w.int("tx_power", Int(t)) }
        if !p.acad.isEmpty { w.hex("acad", p.acad) }
        if let b = bigInfo { w.object("big_info") { w in b.describe(into: &w) } }
        w.hex("adv_data", p.advData)
    }

    /// A CIS direction as JSON and stats name it.
    public static func directionName(_ fromCentral: Bool) -> String { fromCentral ? "central_to_peripheral" : "peripheral_to_central" }

    /// Isochronous PDUs are media, thousands: not in the report's sequence view.
    public var inSequence: Bool { isochronous == nil || bigControl != nil }
}
