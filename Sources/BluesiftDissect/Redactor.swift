import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftSecurity

/// `bluesift redact`: addresses replaced by keyed pseudonyms, key material zeroed, optionally
/// one peer kept and chosen characteristics masked. Every change keeps the record's length, so
/// the file stays decodable by bluesift and Wireshark alike. Two passes over the capture:
/// `learn` collects the addresses (and sniffer CRC parameters), `redact` rewrites a record.
public final class Redactor {
    public struct Options: Sendable {
        public var salt: [UInt8]
        /// Keep only this device (address as printed, any case): its connections and advertising.
        public var peer: [UInt8]?
        public var maskCharacteristics: Set<BluetoothUUID> = []
        /// Drop every advertising report (all of them, or all but the peer's with `peer`).
        public var dropAdvertising = false
        public init(salt: [UInt8], peer: [UInt8]? = nil) { self.salt = salt; self.peer = peer }
    }

    let options: Options
    let pseudonyms: AddressPseudonyms
    /// Original address (6 bytes, wire order, packed) → pseudonym; both byte orders.
    var map: [UInt64: UInt64] = [:]
    /// Addresses met in a known place (as opposed to the reversed entries of `map`).
    var known: Set<UInt64> = []
    /// First two bytes of every mapped pattern: most windows are rejected without hashing.
    var prefilter = [UInt64](repeating: 0, count: 1024)
    /// Counts for the report, by what was replaced.
    public private(set) var counts: [String: Int] = [:]
    /// Connection handle → peer address (wire order), from connection complete events.
    var handlePeer: [UInt16: [UInt8]] = [:]
    /// Sniffed links: access address → CRC init (from CONNECT_IND).
    var crcInit: [UInt32: UInt32] = [0x8E89_BED6: 0x55_5555]
    /// How this capture's sniffer stores the CRC (found on a packet whose CRC was valid).
    var crcVariant: Int?
    /// Decodes pass 1 when characteristics are masked: which bytes of which records carry them.
    let analyzer: Analyzer?
    var scratch = AnalyzedFrame(decoded: DecodedFrame(record: .empty))
    /// Fragments of the L2CAP PDU in progress per stream (ACL handle or access address, and
    /// direction): (frame, bytes of the record that carry the PDU).
    var streams: [UInt64: [(frame: Int, range: Range<Int>)]] = [:]
    /// The same on an encrypted sniffed link bluesift decrypted: each fragment's ciphertext
    /// range (MIC included), plaintext and sealing.
    var sealedStreams: [UInt64: [(frame: Int, range: Range<Int>, plain: [UInt8], seal: LLSealing)]] = [:]
    /// Device names that end in part of their own address ("MODEL_6FAB" of …:6f:ab), with
    /// that part replaced by the pseudonym's: found anywhere in pass 2 (scan responses, Device
    /// Name reads, remote names, log text). `namePrefilter` holds each name's first two bytes.
    var names: [[UInt8]: [UInt8]] = [:]
    var nameLengths: Set<Int> = []
    var namePrefilter = [UInt64](repeating: 0, count: 1024)
    /// Frame → byte ranges to zero in pass 2 (masked values, fragments included).
    var masked: [Int: [Range<Int>]] = [:]
    /// Frame → (record range, bytes) a module placed itself (`ModuleSecret.frame`): key
    /// material sealed again, possibly in an earlier record than the one that revealed it.
    var placed: [Int: [(range: Range<Int>, bytes: [UInt8]?)]] = [:]

    /// `analyzer`: how masked characteristics and module key material are found (keys, an
    /// imported GATT database); a plain one when nil. Unused without `maskCharacteristics`
    /// unless a protocol module may hold secrets (`ProtocolModule.holdsSecrets`).
    public init(options: Options, analyzer: Analyzer? = nil) {
        self.options = options
        pseudonyms = AddressPseudonyms(salt: options.salt)
        let secrets = (analyzer?.decoder.registry ?? .shared).holdsSecrets
        self.analyzer = options.maskCharacteristics.isEmpty && !secrets ? nil : analyzer ?? Analyzer(naming: true)
        self.analyzer?.decoder.redacting = true
    }

    public var distinctAddresses: Int { known.count }

    // MARK: pass 1

    /// Learns the addresses a record carries in known places.
    public func learn(_ r: CaptureRecord) {
        let b = r.bytes
        for o in addressOffsets(r) where o + 6 <= b.count { add(Array(b[o..<o + 6])) }
        // As text: log lines, and device names such as "HFP AG Demo 00:1A:7D:DA:71:01".
        for a in Self.textAddresses(b) where !known.contains(pack(a.wire.reversed())) { add(a.wire) }
        if r.kind == .ll, crcVariant == nil, let s = r.sniffer, s.hasCRC, s.crcOK != false, b.count >= 9 {
            calibrateCRC(b)
        }
        if let a = analyzer { learnMasked(r, a) }
        for (address, name) in namePlaces(r) where address + 6 <= b.count && name.upperBound <= b.count {
            learnName(Array(b[name]), address: Array(b[address..<address + 6]))
        }
    }

    /// A name whose end is the last 2 or 3 bytes of the device's address in hex (either case)
    /// gets those digits from the pseudonym instead, in the same case.
    func learnName(_ name: [UInt8], address a: [UInt8]) {
        guard names[name] == nil, a.contains(where: { $0 != 0 }), a.contains(where: { $0 != 0xFF }) else { return }
        func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30;
            case 0x41...0x46: c - 0x37;
            case 0x61...0x66: c - 0x57;
            default: nil
            }
        }
        for n in [3, 2] where name.count > 2 * n {
            let tail = name.suffix(2 * n)
            // Printed most significant first: the tail's bytes are a[n-1] … a[0].
            let digits = tail.map(hexValue)
            guard !digits.contains(nil) else { continue }
            let value = stride(from: 0, to: 2 * n, by: 2).map { digits[$0]! << 4 | digits[$0 + 1]! }
            guard value == Array(a[0..<n].reversed()), hexValue(name[name.count - 2 * n - 1]) == nil else { continue }
            let p = pseudonyms.pseudonym(a)
            let upper = tail.contains { $0 >= 0x41 && $0 <= 0x46 }
            let alphabet = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
            var renamed = Array(name.dropLast(2 * n))
            for byte in p[0..<n].reversed() { renamed += [alphabet[Int(byte >> 4)], alphabet[Int(byte & 15)]] }
            names[name] = renamed
            nameLengths.insert(name.count)
            let i = Int(name[0]) << 8 | Int(name[1])
            namePrefilter[i >> 6] |= 1 << UInt64(i & 63)
            return
        }
    }

    /// Every occurrence of a learned name replaced; returns how many.
    func replaceNames(_ b: inout [UInt8]) -> Int {
        guard !names.isEmpty else { return 0 }
        var n = 0, i = 0
        let shortest = nameLengths.min()!
        while i + shortest <= b.count {
            let f = Int(b[i]) << 8 | Int(b[i + 1])
            var hit: (Int, [UInt8])?
            if namePrefilter[f >> 6] & (1 << UInt64(f & 63)) != 0 {
                for l in nameLengths where i + l <= b.count {
                    if let to = names[Array(b[i..<i + l])] { hit = (l, to); break }
                }
            }
            if let (len, to) = hit {
                b.replaceSubrange(i..<i + len, with: to); n += 1
                i += len
            } else {
                i += 1
            }
        }
        return n
    }

    /// (address offset, name bytes) of the device names a record gives with their device's
    /// address: AD Local Name (Supplement Part A §1.2) in advertising reports and sniffed
    /// advertising PDUs, Remote Name Request Complete (Vol 4 Part E §7.7.7).
    func namePlaces(_ r: CaptureRecord) -> [(Int, Range<Int>)] {
        let b = r.bytes
        switch r.kind {
        case .event where HCIFieldLayout.isAdvertisingReport(b):
            return HCIFieldLayout.advertisingReports(b).flatMap { rep in Self.adNames(b, from: rep.data.lowerBound, to: rep.data.upperBound).map { (rep.address, $0) } }
        case .event:
            return HCIFieldLayout.remoteName(b).map { [$0] } ?? []
        case .ll:
            guard let a = aa(b), a == Self.advAA, b.count > 12, LLAdvPDUType.carriesAdvData(b[4] & 0x0F) else { return [] }
            return Self.adNames(b, from: 12, to: b.count - (r.sniffer?.hasCRC == false ? 0 : 3)).map { (6, $0) }
        default:
            return []
        }
    }

    /// Ranges of Shortened/Complete Local Name AD structures (types 0x08, 0x09) in `from..<to`.
    static func adNames(_ b: UnsafeRawBufferPointer, from: Int, to: Int) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var o = from
        let end = min(to, b.count)
        while o + 1 < end {
            let len = Int(b[o])
            guard len > 0, o + 1 + len <= end else { break }
            if (b[o + 1] == 0x08 || b[o + 1] == 0x09) && len > 1 { out.append(o + 2..<o + 1 + len) }
            o += 1 + len
        }
        return out
    }

    /// Finds the value bytes of masked characteristics, in HCI ACL and sniffed link-layer
    /// packets alike, fragments of a PDU split over several packets included. A value the file
    /// holds encrypted (decrypted by the analyzer) is left as it is and counted.
    func learnMasked(_ r: CaptureRecord, _ a: Analyzer) {
        a.analyze(r, into: &scratch)
        let f = scratch.decoded
        let b = r.bytes
        if let m = f.module {
            for x in m.secrets where x.frame != nil {
                if !x.range.isEmpty { placed[x.frame!, default: []].append((x.range, x.replacement)) }
                counts[x.label, default: 0] += 1
            }
        }
        // Key material a module found in an HCI command's or event's parameters (after the
        // opcode and length; an LE subevent's after its code, Command Complete's after the
        // event code and length: where each carrier's PDU starts).
        if (r.kind == .command || r.kind == .event) && b.count >= 3, let m = f.module, case let secrets = m.secrets, !secrets.isEmpty {
            let base = r.kind == .command || b[0] == 0x3E ? 3 : 2
            for x in secrets where x.frame == nil && base + x.range.upperBound <= b.count {
                masked[r.frame, default: []].append(base + x.range.lowerBound..<base + x.range.upperBound)
                counts[x.label, default: 0] += 1
            }
            return
        }
        var key: UInt64, range: Range<Int>, start: Bool
        switch r.kind {
        case .acl:
            guard b.count > 4 else { return }
            let handle = UInt64(b[0]) | UInt64(b[1] & 0x0F) << 8
            key = 1 << 62 | UInt64(r.adapter) << 32 | handle << 1 | UInt64(r.direction?.rawValue ?? 0)
            range = 4..<b.count
            start = (b[1] >> 4) & 0x3 != 0x1
        case .ll:
            guard f.layers.contains(.ll), let ll = f.ll, !ll.isAdvertising, let llid = ll.llid, llid == 1 || llid == 2,
                !ll.payload.isEmpty
            else { return }
            key = UInt64(ll.accessAddress) << 1 | (ll.fromCentral == true ? 1 : 0)
            if ll.decrypted, let seal = a.decoder.sealing(of: f) {
                // Ciphertext in the file, decrypted here: secrets are zeroed in the plaintext,
                // which is sealed again (`resealSecrets`).
                let head = 4 + (ll.codingIndicator == nil ? 0 : 1)
                let part = (frame: r.frame, range: head + 2..<head + 2 + ll.payload.count + 4, plain: Array(ll.payload), seal: seal)
                if llid == 2 { sealedStreams[key] = [part] } else if sealedStreams[key] != nil, sealedStreams[key]!.count < 512 { sealedStreams[key]!.append(part) }
                streams[key] = nil
                resealSecrets(key, f)
                return
            }
            if ll.encrypted || ll.decrypted {
                streams[key] = nil
                if f.layers.contains(.att), let ch = scratch.location?.characteristic, options.maskCharacteristics.contains(ch) {
                    counts["encrypted values of \(ch) left as they are", default: 0] += 1
                }
                return
            }
            let o = ll.payload.baseAddress! - b.baseAddress!
            range = o..<o + ll.payload.count
            start = llid == 2
        default:
            return
        }
        if start { streams[key] = [(r.frame, range)] } else if streams[key] != nil, streams[key]!.count < 512 { streams[key]!.append((r.frame, range)) }
        guard f.layers.contains(.att), let l2 = f.l2cap, let value = f.attStorage.opcode.valueRange(length: l2.payload.count), !value.isEmpty,
            let parts = streams[key], parts.count >= l2.fragments
        else { return }
        // The PDU is its fragments' bytes one after another: L2CAP header (4), then ATT.
        func mask(_ want: Range<Int>) {
            var at = 0
            for part in parts.suffix(l2.fragments) {
                let lo = max(want.lowerBound, at), hi = min(want.upperBound, at + part.range.count)
                if lo < hi { masked[part.frame, default: []].append(part.range.lowerBound + lo - at..<part.range.lowerBound + hi - at) }
                at += part.range.count
            }
        }
        if let ch = scratch.location?.characteristic, options.maskCharacteristics.contains(ch) {
            mask((4 + value.lowerBound)..<(4 + value.upperBound))
            counts["masked values of \(ch)", default: 0] += 1
        } else if let m = f.module {
            // A module's key material in the ATT value (the PDU its `decode` was given).
            for x in m.secrets where x.frame == nil && x.range.upperBound <= value.count {
                mask((4 + value.lowerBound + x.range.lowerBound)..<(4 + value.lowerBound + x.range.upperBound))
                counts[x.label, default: 0] += 1
            }
        }
    }

    /// A masked value or a module's key material in an ATT PDU of an encrypted sniffed link
    /// (decrypted with the link's key): zeroed in the fragments' plaintext, each fragment
    /// sealed again with its own key, nonce and additional data (a new MIC, the same length),
    /// so the redacted capture still decrypts with the same key and shows zeros there.
    func resealSecrets(_ key: UInt64, _ f: borrowing DecodedFrame) {
        guard f.layers.contains(.att), let l2 = f.l2cap, let value = f.attStorage.opcode.valueRange(length: l2.payload.count), !value.isEmpty,
            let parts = sealedStreams[key], parts.count >= l2.fragments
        else { return }
        var zero: [Range<Int>] = []
        if let ch = scratch.location?.characteristic, options.maskCharacteristics.contains(ch) {
            zero.append((4 + value.lowerBound)..<(4 + value.upperBound))
            counts["masked values of \(ch)", default: 0] += 1
        } else if let m = f.module {
            for x in m.secrets where x.frame == nil && x.range.upperBound <= value.count {
                zero.append((4 + value.lowerBound + x.range.lowerBound)..<(4 + value.lowerBound + x.range.upperBound))
                counts[x.label, default: 0] += 1
            }
        }
        guard !zero.isEmpty else { return }
        var at = 0
        for var part in parts.suffix(l2.fragments) {
            var touched = false
            for w in zero {
                let lo = max(w.lowerBound, at), hi = min(w.upperBound, at + part.plain.count)
                if lo < hi { for i in lo..<hi { part.plain[i - at] = 0 }; touched = true }
            }
            if touched {
                placed[part.frame, default: []].append((range: part.range, bytes: part.seal.seal(part.plain)))
                counts["encrypted PDUs sealed again with their secrets zeroed", default: 0] += 1
            }
            at += part.plain.count
        }
    }

    func pack(_ a: some Collection<UInt8>) -> UInt64 { a.reduce(0) { $0 << 8 | UInt64($1) } }

    /// Addresses too regular to search for everywhere (00…, ff…, few distinct bytes) are only
    /// replaced where they are known to be addresses.
    static func distinctive(_ a: [UInt8]) -> Bool { Set(a).count >= 4 }

    /// Known-place addresses get their own pseudonym even when the same bytes were first met
    /// reversed (another address read backwards), so a field always decodes to pseudonym(field).
    func add(_ a: [UInt8]) {
        guard a.contains(where: { $0 != 0 }), a.contains(where: { $0 != 0xFF }) else { return }
        let k = pack(a)
        guard !known.contains(k) else { return }
        known.insert(k)
        let p = pseudonyms.pseudonym(a)
        map[k] = pack(p)
        let rk = pack(a.reversed())
        if !known.contains(rk) { map[rk] = pack(p.reversed()) }
        if Self.distinctive(a) {
            for x in [a, a.reversed()] {
                let i = Int(x[0]) << 8 | Int(x[1])
                prefilter[i >> 6] |= 1 << UInt64(i & 63)
            }
        }
    }

    // MARK: pass 2

    /// What to do with one record: nil bytes = unchanged; `drop` = leave it out.
    public func redact(_ r: CaptureRecord) -> (bytes: [UInt8]?, drop: Bool) {
        if shouldDrop(r) { counts["records dropped", default: 0] += 1; return (nil, true) }
        var b = Array(r.bytes)
        var changed = false
        // Known address fields first (also the regular-looking addresses), then every other
        // occurrence of a known address in either byte order.
        var fixed: [Range<Int>] = []
        for o in addressOffsets(r) where o + 6 <= b.count {
            let k = pack(b[o..<o + 6])
            fixed.append(o..<o + 6)
            if let p = map[k] { write(p, into: &b, at: o); changed = true; counts["addresses", default: 0] += 1 }
        }
        if let t = redactText(b) {
            b = t.bytes; changed = true; counts["addresses in text", default: 0] += t.count
        }
        let found = replaceKnownAddresses(&b, skipping: fixed)
        if found > 0 { changed = true; counts["addresses", default: 0] += found }
        let renamed = replaceNames(&b)
        if renamed > 0 { changed = true; counts["addresses in device names", default: 0] += renamed }
        let hexText = replaceHexAddresses(&b)
        if hexText > 0 { changed = true; counts["addresses as hex text", default: 0] += hexText }
        for (range, what) in keyRanges(r) where range.upperBound <= b.count {
            for j in range { b[j] = 0 }
            changed = true
            counts[what, default: 0] += 1
        }
        for range in masked[r.frame] ?? [] where range.upperBound <= b.count {
            for j in range { b[j] = 0 }
            changed = true
        }
        for (range, bytes) in placed[r.frame] ?? [] where range.upperBound <= b.count && (bytes == nil || bytes!.count == range.count) {
            if let bytes { b.replaceSubrange(range, with: bytes) } else { for j in range { b[j] = 0 } }
            changed = true
        }
        guard changed, !b.elementsEqual(r.bytes) else { return (nil, false) }
        if r.kind == .ll { fixCRC(&b, r) }
        return (b, false)
    }

    /// A record stored otherwise than the reader shows it (log text): its addresses as text,
    /// and known addresses as bytes; nil when nothing changes.
    public func redactStored(_ raw: UnsafeRawBufferPointer) -> [UInt8]? {
        var b = Array(raw)
        var n = 0
        if let t = redactText(b) { b = t.bytes; n += t.count }
        n += replaceKnownAddresses(&b) + replaceNames(&b) + replaceHexAddresses(&b)
        guard n > 0 else { return nil }
        counts["addresses in text", default: 0] += n
        return b
    }

    /// A pcapng packet comment (free text a person wrote: it may name a device by address or
    /// by a name that holds its address) with its addresses replaced as in log text; nil when
    /// nothing changes.
    public func redactComment(_ raw: UnsafeRawBufferPointer) -> [UInt8]? {
        var b = Array(raw)
        var n = 0
        if let t = redactText(b) { b = t.bytes; n += t.count }
        n += replaceNames(&b) + replaceHexAddresses(&b)
        guard n > 0 else { return nil }
        counts["addresses in packet comments", default: 0] += n
        return b
    }

    /// Every other occurrence of a known distinctive address, in either byte order, replaced;
    /// a window overlapping `skipping` (fields already handled) is never a second address.
    /// Returns how many were replaced.
    func replaceKnownAddresses(_ b: inout [UInt8], skipping fixed: [Range<Int>] = []) -> Int {
        var n = 0, i = 0
        while i + 6 <= b.count {
            let f = Int(b[i]) << 8 | Int(b[i + 1])
            if prefilter[f >> 6] & (1 << UInt64(f & 63)) != 0, !fixed.contains(where: { $0.overlaps(i..<i + 6) }),
                let p = map[pack(b[i..<i + 6])], Self.distinctive(Array(b[i..<i + 6]))
            {
                write(p, into: &b, at: i); n += 1
                i += 6
            } else {
                i += 1
            }
        }
        return n
    }

    func write(_ p: UInt64, into b: inout [UInt8], at o: Int) {
        for j in 0..<6 { b[o + j] = UInt8(truncatingIfNeeded: p >> UInt64(8 * (5 - j))) }
    }

    /// The report: what was replaced, how many times.
    public var report: [(String, Int)] {
        var rows = [("distinct addresses", distinctAddresses)]
        rows += counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return rows
    }

    // MARK: where addresses and keys are

    /// Offsets (in the record's bytes) of 6-byte device addresses, by protocol.
    func addressOffsets(_ r: CaptureRecord) -> [Int] {
        let b = r.bytes
        switch r.kind {
        case .command:
            return HCIFieldLayout.addresses(command: b)
        case .event:
            if let c = HCIFieldLayout.connectionComplete(b), c.status == .success { handlePeer[c.handle] = c.peer.littleEndianBytes }
            return HCIFieldLayout.addresses(event: b)
        case .acl:
            guard let (cid, pay) = l2cap(b) else { return [] }
            // Vol 3 Part H §3.6.5 Identity Address Information: type, address.
            if Self.isSMP(cid), pay + 8 <= b.count, b[pay] == SMPCode.identityAddressInformation.rawValue {
                return [pay + SMPIdentityAddressInformation.addressOffset]
            }
            return []
        case .ll:
            // Vol 3 Part H §3.6.4 in a clear data PDU: an address whatever its type byte says.
            if let pay = llSMP(r), r.bytes[pay] == SMPCode.identityAddressInformation.rawValue,
                pay + 8 <= r.bytes.count - (r.sniffer?.hasCRC == false ? 0 : 3)
            {
                return [pay + SMPIdentityAddressInformation.addressOffset]
            }
            return llAddressOffsets(r)
        case .index:
            // Linux monitor New Index (BlueZ btsnoop.h): type, bus, bdaddr, name.
            return r.sourceType == 0 && b.count >= 8 ? [2] : []
        default:
            return []
        }
    }

    /// "hh:hh:hh:hh:hh:hh" or "hh-hh-hh-hh-hh-hh" (either case) in log text: (offset, address
    /// in wire order, read as printed: most significant byte first).
    static func textAddresses(_ b: some Collection<UInt8>) -> [(offset: Int, wire: [UInt8])] {
        let t = Array(b)
        guard t.count >= 17 else { return [] }
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var out: [(Int, [UInt8])] = []
        var i = 0
        while i + 17 <= t.count {
            var a: [UInt8] = []
            let sep = t[i + 2]
            guard sep == 0x3A || sep == 0x2D else { i += 1; continue }
            // Not inside a longer run of separated hex ("P(0):44:09:…" is an address).
            let before = i == 0 || (hex(t[i - 1]) == nil && (t[i - 1] != sep || i < 2 || hex(t[i - 2]) == nil))
            let after = i + 17 == t.count || (hex(t[i + 17]) == nil && (t[i + 17] != sep || i + 18 == t.count || hex(t[i + 18]) == nil))
            var ok = before && after
            var j = 0
            while ok && j < 6 {
                if let h = hex(t[i + 3 * j]), let l = hex(t[i + 3 * j + 1]), j == 5 || t[i + 3 * j + 2] == sep { a.append(h << 4 | l) } else { ok = false }
                j += 1
            }
            if ok { out.append((i, a.reversed())); i += 17 } else { i += 1 }
        }
        return out
    }

    /// Known distinctive addresses written as 12 hex digits without separators, either case,
    /// either byte order, anywhere (inside a longer run too: "ROBAM_DB62030AE7BE596F1_0" holds
    /// 30:ae:7b:e5:96:f1), replaced by the pseudonym's digits in the same order and case.
    /// Only addresses learnt in pass 1 are looked for, so other hex text stays. Returns how many.
    func replaceHexAddresses(_ b: inout [UInt8]) -> Int {
        guard !map.isEmpty, b.count >= 12 else { return 0 }
        var n = 0, run = 0, v: UInt64 = 0, i = 0
        while i < b.count {
            let c = b[i]
            let d: UInt64
            switch c {
            case 0x30...0x39: d = UInt64(c - 0x30)
            case 0x41...0x46: d = UInt64(c - 0x37)
            case 0x61...0x66: d = UInt64(c - 0x57)
            default: run = 0; v = 0; i += 1; continue
            }
            v = (v << 4 | d) & 0xFFFF_FFFF_FFFF
            run += 1
            i += 1
            guard run >= 12, let p = map[v], Self.distinctive((0..<6).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) }) else { continue }
            let o = i - 12
            let upper = b[o..<i].contains { $0 >= 0x41 && $0 <= 0x46 } || !b[o..<i].contains { $0 >= 0x61 && $0 <= 0x66 } && b[..<o].last.map { $0 >= 0x41 && $0 <= 0x5A } == true
            let digits = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
            for j in 0..<6 { // the bytes in the order written
                let x = UInt8(truncatingIfNeeded: p >> UInt64(8 * (5 - j)))
                b[o + 2 * j] = digits[Int(x >> 4)]
                b[o + 2 * j + 1] = digits[Int(x & 15)]
            }
            n += 1
            run = 0; v = 0
        }
        return n
    }

    /// Text with every address replaced by its pseudonym (same case, same length).
    func redactText(_ b: [UInt8]) -> (bytes: [UInt8], count: Int)? {
        let found = Self.textAddresses(b)
        guard !found.isEmpty else { return nil }
        var t = b
        for (o, wire) in found {
            guard wire.contains(where: { $0 != 0 }), wire.contains(where: { $0 != 0xFF }) else { continue }
            // A known address, or one written backwards (its reversed pseudonym), else a new one.
            let k = pack(wire)
            let p = map[k] ?? pack(pseudonyms.pseudonym(wire))
            let upper = t[o..<o + 17].contains { $0 >= 0x41 && $0 <= 0x46 }
            let digits = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
            for j in 0..<6 { // text shows the most significant byte first
                let v = UInt8(truncatingIfNeeded: p >> UInt64(8 * j))
                t[o + 3 * j] = digits[Int(v >> 4)]
                t[o + 3 * j + 1] = digits[Int(v & 15)]
            }
        }
        return t == b ? nil : (t, found.count)
    }

    /// (CID, payload offset) of an ACL packet that starts an L2CAP frame.
    func l2cap(_ b: UnsafeRawBufferPointer) -> (UInt16, Int)? {
        guard b.count >= 8 else { return nil }
        let pb = (b[1] >> 4) & 0x3
        guard pb != 0x1 else { return nil }
        return (UInt16(b[6]) | UInt16(b[7]) << 8, 8)
    }

    /// Key material, zeroed: (byte range, report label).
    func keyRanges(_ r: CaptureRecord) -> [(Range<Int>, String)] {
        let b = r.bytes
        switch r.kind {
        case .command: return HCIFieldLayout.keys(command: b)
        case .event: return HCIFieldLayout.keys(event: b)
        case .acl:
            guard let (cid, pay) = l2cap(b), Self.isSMP(cid), pay < b.count else { return [] }
            return smpKeys(code: b[pay], at: pay)
        case .ll:
            guard let pay = llSMP(r) else { return [] }
            return smpKeys(code: b[pay], at: pay)
        default:
            return []
        }
    }

    /// Vol 3 Part H §3.5.3/3.5.4 Pairing Confirm/Random (from which legacy pairing's keys are
    /// recovered), §3.5.7 DHKey Check, §3.6.2 Encryption Information (LTK), §3.6.4 Identity Information (IRK),
    /// §3.6.6 Signing Information (CSRK).
    func smpKeys(code: UInt8, at p: Int) -> [(Range<Int>, String)] {
        guard let s = SMPCommands.secret(SMPCode(rawValue: code)) else { return [] }
        return [(p + s.range.lowerBound..<p + s.range.upperBound, s.label)]
    }

    /// SMP over LE or BR/EDR (Vol 3 Part A §2.1).
    static func isSMP(_ cid: UInt16) -> Bool { cid == L2CAPCID.smp || cid == L2CAPCID.smpBREDR }

    // MARK: sniffed link layer (AA, header, payload, CRC)

    static let advAA: UInt32 = 0x8E89_BED6

    func aa(_ b: UnsafeRawBufferPointer) -> UInt32? {
        guard b.count >= 6 else { return nil }
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    /// Vol 6 Part B §2.3: AdvA, TargetA, ScanA, InitA in advertising PDUs; CONNECT_IND also
    /// gives the connection's access address and CRC init.
    func llAddressOffsets(_ r: CaptureRecord) -> [Int] {
        let b = r.bytes
        guard let a = aa(b), a == Self.advAA else { return [] }
        let end = b.count - (r.sniffer?.hasCRC == false ? 0 : 3)
        let p = 6
        let offsets: [Int]
        let type = b[4] & 0x0F
        switch type {
        case _ where LLAdvPDUType.carriesAdvData(type): offsets = [p] + HCIFieldLayout.adAddresses(b, from: p + 6, to: end) // AdvA, AdvData
        case _ where LLAdvPDUType.hasTwoAddresses(type): offsets = [p, p + 6]
        case LLAdvPDUType.connectInd:
            offsets = LLConnectInd.addressOffsets.map { p + $0 }
            if p < end, let c = LLConnectInd(UnsafeRawBufferPointer(rebasing: b[p..<end])) { crcInit[c.accessAddress] = c.crcInit }
        case _ where LLAdvPDUType.isExtended(type):
            // §2.3.4 Common Extended Advertising Payload: header length and AdvMode, flags,
            // then AdvA and TargetA when flagged; AdvData after the extended header.
            var o: [Int] = []
            let hlen = p < end ? Int(b[p] & 0x3F) : 0
            if hlen >= 1, p + 1 + hlen <= end {
                let flags = b[p + 1]
                var q = p + 2
                if flags & 0x01 != 0 { o.append(q); q += 6 }
                if flags & 0x02 != 0 { o.append(q) }
                o += HCIFieldLayout.adAddresses(b, from: p + 1 + hlen, to: end)
            }
            offsets = o.filter { $0 + 6 <= p + 1 + hlen || $0 >= p + 1 + hlen }
        default: offsets = []
        }
        return offsets.filter { $0 + 6 <= end }
    }

    /// Offset of an SMP PDU in an unencrypted LL data PDU that starts an L2CAP frame.
    func llSMP(_ r: CaptureRecord) -> Int? {
        let b = r.bytes
        guard let a = aa(b), a != Self.advAA, r.sniffer?.encrypted != true, b.count >= 11, b[4] & 0x03 == 0x02 else { return nil }
        guard UInt16(b[8]) | UInt16(b[9]) << 8 == L2CAPCID.smp else { return nil }
        return 10
    }

    /// The stored CRC for `variant` (init reversed or not; value reversed or not; byte order):
    /// sniffers store it in one of these ways. The CRC itself is `LLCRC`'s (Vol 6 Part B §3.1.1).
    static func crcBytes(_ pdu: UnsafeRawBufferPointer, initial: UInt32, variant: Int) -> [UInt8] {
        var v = LLCRC.compute(pdu, crcInit: variant & 1 != 0 ? initial : LLCRC.reverse24(initial))
        if variant & 2 != 0 { v = LLCRC.reverse24(v) }
        let le = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)]
        return variant & 4 != 0 ? le.reversed() : le
    }

    func calibrateCRC(_ b: UnsafeRawBufferPointer) {
        guard let a = aa(b), a == Self.advAA else { return }
        let pdu = UnsafeRawBufferPointer(rebasing: b[4..<b.count - 3]), stored = Array(b[b.count - 3..<b.count])
        crcVariant = (0..<8).first { Self.crcBytes(pdu, initial: 0x55_5555, variant: $0) == stored }
    }

    func fixCRC(_ b: inout [UInt8], _ r: CaptureRecord) {
        guard r.sniffer?.hasCRC != false, b.count >= 9, let v = crcVariant,
            let access = aa(r.bytes), let initial = crcInit[access]
        else {
            counts["sniffed packets with a stale CRC", default: 0] += 1
            return
        }
        // Only when the original CRC was right: a bad CRC stays bad. A capture may store some
        // CRCs otherwise (SweynTooth's nRF captures): each packet's own way, when it has one.
        let pdu = UnsafeRawBufferPointer(rebasing: r.bytes[4..<r.bytes.count - 3]), stored = r.bytes[(r.bytes.count - 3)...]
        guard let v = ([v] + Array(0..<8)).first(where: { Self.crcBytes(pdu, initial: initial, variant: $0).elementsEqual(stored) }) else { return }
        let c = b.withUnsafeBytes { Self.crcBytes(UnsafeRawBufferPointer(rebasing: $0[4..<b.count - 3]), initial: initial, variant: v) }
        b.replaceSubrange(b.count - 3..<b.count, with: c)
        counts["sniffed packet CRCs recomputed", default: 0] += 1
    }

    // MARK: --peer, advertising, masked characteristics

    func shouldDrop(_ r: CaptureRecord) -> Bool {
        let b = r.bytes
        switch r.kind {
        case .event where HCIFieldLayout.isAdvertisingReport(b):
            guard let peer = options.peer else { return options.dropAdvertising }
            let addrs = HCIFieldLayout.advertisingReports(b).map(\.address)
            return !addrs.contains { $0 + 6 <= b.count && b[$0..<$0 + 6].elementsEqual(peer) }
        case .acl:
            guard let peer = options.peer, b.count >= 2 else { return false }
            let handle = (UInt16(b[0]) | UInt16(b[1]) << 8) & 0x0FFF
            guard let p = handlePeer[handle] else { return true }
            return p != peer
        case .ll:
            guard let a = aa(b), a == Self.advAA else { return false }
            guard let peer = options.peer else { return options.dropAdvertising }
            return !llAddressOffsets(r).contains { b[$0..<$0 + 6].elementsEqual(peer) }
        default:
            return false
        }
    }
}
