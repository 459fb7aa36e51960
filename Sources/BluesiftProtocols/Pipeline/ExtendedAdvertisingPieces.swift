import BluesiftWire
import BluesiftCapture

/// Extended advertising data a controller reports in pieces, put back together before the
/// modules' AD structures are looked up in it (an Auracast source's Broadcast Audio
/// Announcement, Broadcast_Name and Public Broadcast Announcement split over several reports).
/// Core 6.0 Vol 4 Part E §7.7.65.13 (LE Extended Advertising Report): Event_Type bits 5-6 are
/// Data_Status, 0b01 "incomplete, more data to come" until 0b00 "complete" or 0b10
/// "incomplete, data truncated, no more to come"; per advertiser (address type, address, SID;
/// a scan response apart). Bounded: 1650 octets per advertiser (§7.8.57's largest advertising
/// data), 32 advertisers pending (the oldest dropped first), and in capture time: data whose
/// next piece has not come `expiryUs` after the last is dropped with a note (`expire`).
final class ExtendedAdvertisingPieces {
    struct Key: Hashable {
        var address: UInt64
        /// Address type, SID, scan response bit.
        var kind: UInt32
    }
    enum Outcome {
        /// Not in pieces: the report's own data is whole.
        case single
        case pending
        /// The data of `pieces` reports (damage: truncated, or too long and dropped).
        case whole([UInt8], pieces: Int, damage: DecodeError?)
    }
    static let maxLength = 1650, maxPending = 32
    /// A piece's successor is an AUX_CHAIN_IND the AuxPtr of the previous PDU points to, at most
    /// 8191 × 300 µs = 2.4573 s later (13-bit AUX Offset in 300 µs units, Core 6.0 Vol 6 Part B
    /// §2.3.4.5); past that the controller can never report more of the data (it should have
    /// said Data_Status 0b10, §7.7.65.13, but a capture can miss that event). Twice that bound,
    /// rounded up: host time stamps lag the air by the HCI transport and the host's scheduling.
    static let expiryUs: Int64 = 5_000_000
    /// `since`: when the advertiser's first piece came (a Dictionary's order is seeded per
    /// process, so the oldest is found by it, not by `keys.first`); `last`: its last piece's
    /// time stamp (µs).
    var pending: [Key: (data: [UInt8], pieces: Int, since: Int, last: Int64)] = [:]
    private var started = 0
    /// No pending data can expire before this (µs): no scan per event until then.
    private var nextExpiry = Int64.max

    /// Data_Status of an extended report's Event_Type.
    @inline(__always)
    static func dataStatus(_ eventType: UInt16) -> UInt16 { eventType >> 5 & 0b11 }

    /// Whether an LE Extended Advertising Report event (its parameters after the subevent
    /// code) holds a report with Data_Status other than complete: lengths only, no report built.
    static func anyIncomplete(_ p: UnsafeRawBufferPointer) -> Bool {
        guard !p.isEmpty else { return false }
        var i = 1
        for _ in 0..<Int(p[0]) {
            guard p.count - i >= 24 else { return false }
            if dataStatus(UInt16(p[i])) != 0 { return true }
            i += 24 + Int(p[i + 23])
        }
        return false
    }

    /// Drops the data whose last piece came more than `expiryUs` before `now` (µs): a note per
    /// advertiser, for the record at `now`. Empty when none (and no scan before the earliest).
    func expire(now: Int64) -> [DecodeError] {
        guard now >= nextExpiry else { return [] }
        var notes: [DecodeError] = []
        nextExpiry = .max
        // Oldest first: the notes' order does not depend on the Dictionary's.
        for (key, p) in pending.sorted(by: { $0.value.since < $1.value.since }) {
            if now - p.last > Self.expiryUs {
                pending[key] = nil
                let sid = key.kind >> 8 & 0xFF
                notes.append(
                    Self.damage(
                        .truncated,
                        "extended advertising data from \(BDAddr(key.address))" + (sid == 0xFF ? "" : " (SID \(sid))")
                            + " never completed: \(p.data.count) octets in \(p.pieces) reports, no piece for \((now - p.last) / 1_000_000) s: dropped"))
            } else {
                nextExpiry = min(nextExpiry, p.last + Self.expiryUs)
            }
        }
        return notes
    }

    func add(_ r: AdvertisingReport, at now: Int64 = 0) -> Outcome {
        guard r.eventTypeTable == .extended, let a = r.address else { return .single }
        let status = Self.dataStatus(r.eventType)
        let key = Key(
            address: a.value,
            kind: UInt32(r.addressType?.rawValue ?? 0xFF) | UInt32(r.sid ?? 0xFF) << 8 | UInt32(r.isScanResponse ? 1 : 0) << 16)
        switch status {
        case 1:
            var p = pending.removeValue(forKey: key) ?? ([], 0, started, now)
            if p.pieces == 0 { started &+= 1 }
            p.data.append(contentsOf: r.data); p.pieces += 1; p.last = now
            nextExpiry = min(nextExpiry, now &+ Self.expiryUs)
            guard p.data.count <= Self.maxLength else {
                return .whole([], pieces: p.pieces, damage: Self.damage(.invalidLength, "extended advertising data over \(Self.maxLength) octets in \(p.pieces) reports: dropped"))
            }
            if pending.count >= Self.maxPending, let oldest = pending.min(by: { $0.value.since < $1.value.since }) {
                pending[oldest.key] = nil
            }
            pending[key] = p
            return .pending
        case 0, 2:
            guard var p = pending.removeValue(forKey: key) else { return .single }
            p.data.append(contentsOf: r.data); p.pieces += 1
            guard p.data.count <= Self.maxLength else {
                return .whole([], pieces: p.pieces, damage: Self.damage(.invalidLength, "extended advertising data over \(Self.maxLength) octets in \(p.pieces) reports: dropped"))
            }
            let damage =
                status == 2
                ? Self.damage(.truncated, "extended advertising data truncated by the controller (Data_Status 2) after \(p.data.count) octets in \(p.pieces) reports") : nil
            return .whole(p.data, pieces: p.pieces, damage: damage)
        default:
            return .single
        }
    }

    static func damage(_ code: DecodeError.Code, _ message: String) -> DecodeError {
        DecodeError(layer: "adv", code: code, offset: 0, message: message)
    }
}

extension ProtocolDecoder {
    /// Extended reports in pieces (ExtendedAdvertisingPieces), when this event has one or an
    /// advertiser's data is pending: the first report with a module's AD structure (the whole
    /// data for the report completing it) goes to that module. True when the event was read
    /// this way; false leaves it to the usual route (no piece pending, none in the event).
    func advertisingPieces(_ record: CaptureRecord, _ side: UInt8, _ f: inout DecodedFrame) -> Bool {
        guard f.advStorage.single == nil, f.advStorage.isExtended,
            !extendedPieces.pending.isEmpty || ExtendedAdvertisingPieces.anyIncomplete(f.advStorage.parameters)
        else { return false }
        let pieces = extendedPieces
        let now = record.timestamp.microseconds
        // Data whose next piece never came: dropped, noted here; the events after this one take
        // the usual route again when nothing else is pending.
        let expired = pieces.expire(now: now)
        if !expired.isEmpty {
            f.errors.append(contentsOf: expired)
            if pieces.pending.isEmpty && !ExtendedAdvertisingPieces.anyIncomplete(f.advStorage.parameters) { return false }
        }
        var found: (module: Int, carrier: Carrier, structures: ModuleADStructures)?
        var damage: [DecodeError] = []
        var reports = 0, inPieces = 0
        f.advStorage.forEachReport { rep in
            let data: UnsafeRawBufferPointer
            var n = 1
            reports += 1
            switch pieces.add(rep, at: now) {
            case .pending:
                inPieces += 1
                return
            case .single: data = rep.data
            case .whole(let d, let k, let e):
                inPieces += 1
                if let e { damage.append(e) }
                // The AD structures are whole only in the whole data: checked there.
                if let e = d.withUnsafeBytes({ ADStructures.validate($0) }) { damage.append(e.inLayer("adv")) }
                guard found == nil else { return }
                data = moduleBytes.hold(d); n = k
            }
            guard found == nil else { return }
            for s in ADStructures(data) {
                guard let hit = registry.advertisingCarrier(s) else { continue }
                var st = ModuleADStructures(data: data, module: hit.module, registry: registry)
                if n > 1 { st.pieces = n; st.advertiser = rep.address.map { ($0, rep.sid ?? 0xFF) } }
                found = (hit.module, hit.carrier, st)
                return
            }
        }
        // A piece's own AD structures run past its end or start inside one: not damage.
        if inPieces == reports, let i = f.errors.lastIndex(where: { $0.layer == "adv" }) { f.errors.remove(at: i) }
        f.errors.append(contentsOf: damage)
        guard let found else { return true }
        let context = ModuleContext(
            decoder: self, connectionState: nil, module: found.module, record: record, carrier: found.carrier,
            side: side, bearer: 0, truncated: false)
        if let v = registry.modules[found.module].decode(advertising: found.structures, context, &f) { f.set(module: v) }
        return true
    }
}
