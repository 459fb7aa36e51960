import BluesiftWire

/// Core 6.0 Vol 4 Part E §5.4.5 PB_Flag of an HCI ISO Data packet. Open.
public struct ISOPBFlag: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let first = Self(rawValue: 0), continuation = Self(rawValue: 1), complete = Self(rawValue: 2), last = Self(rawValue: 3)
    public var name: String {
        switch rawValue {
        case 0: "First fragment";
        case 1: "Continuation fragment";
        case 2: "Complete SDU";
        default: "Last fragment"
        }
    }
    /// The fragment starts an SDU: the ISO_Data_Load carries sequence number and SDU length.
    public var starts: Bool { rawValue == 0 || rawValue == 2 }
    public var ends: Bool { rawValue == 2 || rawValue == 3 }
}

/// Core 6.0 Vol 4 Part E §5.4.5 Packet_Status_Flag (controller to host). Open.
public struct ISOPacketStatus: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let valid = Self(rawValue: 0), possiblyInvalid = Self(rawValue: 1), lost = Self(rawValue: 2)
    public var name: String {
        switch rawValue {
        case 0: "Valid";
        case 1: "Possibly invalid";
        case 2: "Lost";
        default: "RFU"
        }
    }
}

/// Core 6.0 Vol 4 Part E §5.4.5 HCI ISO Data packet header: Connection_Handle, PB_Flag,
/// TS_Flag, ISO_Data_Load_Length, then in the load Time_Stamp (if TS_Flag), and for a
/// first or complete fragment Packet_Sequence_Number, ISO_SDU_Length and Packet_Status_Flag.
/// Plain data, nothing allocated: it is read for every ISO packet.
public struct ISODataHeader: Hashable, Sendable {
    public var handle: UInt16
    public var pbFlag: ISOPBFlag
    public var tsFlag: Bool
    public var dataLoadLength: UInt16
    /// µs, the controller's clock (§5.4.5).
    public var timeStamp: UInt32?
    public var packetSequenceNumber: UInt16?
    public var sduLength: UInt16?
    public var packetStatus: ISOPacketStatus?
    /// Where the SDU fragment starts in the packet.
    public var fragmentOffset: Int
    public var fragmentLength: Int
    public var error: DecodeError?

    public init(
        handle: UInt16, pbFlag: ISOPBFlag, timeStamp: UInt32? = nil, packetSequenceNumber: UInt16? = nil,
        sduLength: UInt16? = nil, packetStatus: ISOPacketStatus? = nil, fragmentLength: Int
    ) {
        self.handle = handle; self.pbFlag = pbFlag; self.tsFlag = timeStamp != nil; self.timeStamp = timeStamp
        self.packetSequenceNumber = packetSequenceNumber; self.sduLength = sduLength; self.packetStatus = packetStatus
        let head = (timeStamp != nil ? 4 : 0) + (pbFlag.starts ? 4 : 0)
        self.dataLoadLength = UInt16(head + fragmentLength)
        self.fragmentOffset = 4 + head; self.fragmentLength = fragmentLength
    }

    /// From an HCI ISO Data packet without its H4 indicator. A short packet sets `error`
    /// and keeps what was read.
    public init(packet b: UnsafeRawBufferPointer) {
        handle = 0; pbFlag = .complete; tsFlag = false; dataLoadLength = 0; fragmentOffset = b.count; fragmentLength = 0
        var r = ByteReader(b)
        do throws(DecodeError) {
            let h = try r.readUInt16(.little, "Connection_Handle")
            handle = h & 0x0FFF; pbFlag = ISOPBFlag(rawValue: UInt8((h >> 12) & 3)); tsFlag = h & 0x4000 != 0
            dataLoadLength = try r.readUInt16(.little, "ISO_Data_Load_Length") & 0x3FFF
            let loadEnd = r.readerIndex + Int(dataLoadLength)
            if tsFlag { timeStamp = try r.readUInt32(.little, "Time_Stamp") }
            if pbFlag.starts {
                packetSequenceNumber = try r.readUInt16(.little, "Packet_Sequence_Number")
                let l = try r.readUInt16(.little, "ISO_SDU_Length")
                sduLength = l & 0x0FFF; packetStatus = ISOPacketStatus(rawValue: UInt8(l >> 14))
            }
            fragmentOffset = r.readerIndex
            fragmentLength = max(0, min(loadEnd, b.count) - fragmentOffset)
            if loadEnd > b.count {
                throw DecodeError(code: .truncated, offset: b.count, message: "ISO_Data_Load: need \(dataLoadLength) bytes, \(b.count - 4) left")
            }
            if loadEnd < b.count {
                throw DecodeError(code: .invalidLength, offset: loadEnd, message: "\(b.count - loadEnd) bytes after the ISO data load")
            }
        } catch {
            self.error = error.inLayer("iso")
        }
    }

    /// The packet: header and `fragment`.
    public func encode(fragment: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 12 + fragment.count)
        w.writeUInt16(handle & 0x0FFF | UInt16(pbFlag.rawValue & 3) << 12 | (timeStamp != nil ? 0x4000 : 0))
        let head = (timeStamp != nil ? 4 : 0) + (pbFlag.starts ? 4 : 0)
        w.writeUInt16(UInt16(head + fragment.count))
        if let t = timeStamp { w.writeUInt32(t) }
        if pbFlag.starts {
            w.writeUInt16(packetSequenceNumber ?? 0)
            w.writeUInt16((sduLength ?? 0) & 0x0FFF | UInt16(packetStatus?.rawValue ?? 0) << 14)
        }
        w.writeBytes(fragment)
        return w.bytes
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("handle", Int(handle))
        sink.int("pb_flag", Int(pbFlag.rawValue)); sink.string("pb_flag_name", pbFlag.name)
        sink.bool("ts_flag", tsFlag)
        sink.int("iso_data_load_length", Int(dataLoadLength))
        if let t = timeStamp { sink.int("time_stamp", Int(t)) }
        if let s = packetSequenceNumber { sink.int("packet_sequence_number", Int(s)) }
        if let l = sduLength { sink.int("iso_sdu_length", Int(l)) }
        if let p = packetStatus { sink.int("packet_status_flag", Int(p.rawValue)); sink.string("packet_status_flag_name", p.name) }
        sink.int("fragment_length", fragmentLength)
        if let error { sink.string("error", error.message) }
    }

    /// "ISO 0x0060 SN 12 TS 123456 SDU 40 B Valid".
    public var summary: String {
        var s = "ISO " + Hex.fixed(UInt64(handle), width: 4)
        if let n = packetSequenceNumber { s += " SN \(n)" }
        if let t = timeStamp { s += " TS \(t)" }
        if let l = sduLength { s += " SDU \(l) B" + (pbFlag == .first ? ", first fragment \(fragmentLength) B" : "") } else { s += " " + pbFlag.name.lowercased() + " \(fragmentLength) B" }
        if let p = packetStatus, p != .valid { s += " " + p.name }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

/// One reassembled ISO SDU (§5.4.5): the first fragment's sequence number, time stamp and
/// status; `length` the bytes received, `declaredLength` the ISO_SDU_Length.
public struct ISOSDU: Hashable, Sendable {
    public var handle: UInt16
    public var packetSequenceNumber: UInt16
    public var timeStamp: UInt32?
    public var packetStatus: ISOPacketStatus
    public var declaredLength: Int
    public var length: Int
    public var fragments: Int
}

/// ISO SDU reassembly per connection handle (§5.4.5: first/continuation/last fragments,
/// or one complete SDU). Bounded: at most `maxHandles` handles in progress, and an SDU
/// never grows past its ISO_SDU_Length (12 bits: 4095 octets). Buffers are kept per handle
/// and reused, so steady reassembly allocates nothing.
public struct ISOReassembler {
    struct Pending {
        var sdu: ISOSDU
        var bytes: [UInt8]
    }
    var pending: [UInt16: Pending] = [:]
    public let maxHandles: Int
    public init(maxHandles: Int = 64) { self.maxHandles = maxHandles }

    /// Adds one packet's fragment (`fragment` the bytes at the header's fragment offset).
    /// `body` gets each SDU completed and its bytes; the result is the damage, if any (an
    /// SDU left unfinished, a fragment with no start, one longer than declared).
    public mutating func add(
        _ h: ISODataHeader, fragment: UnsafeRawBufferPointer,
        _ body: (ISOSDU, UnsafeRawBufferPointer) -> Void
    ) -> DecodeError? {
        var damage: DecodeError?
        if h.pbFlag.starts {
            let unfinished = pending[h.handle].map { $0.sdu.fragments > 0 } ?? false
            if unfinished, let p = pending[h.handle] {
                damage = LEAudioError.make(.reassembly, 0, "SDU \(p.sdu.packetSequenceNumber) on \(Hex.fixed(UInt64(h.handle), width: 4)) unfinished: \(p.sdu.length) of \(p.sdu.declaredLength) bytes")
            }
            let sdu = ISOSDU(
                handle: h.handle, packetSequenceNumber: h.packetSequenceNumber ?? 0, timeStamp: h.timeStamp,
                packetStatus: h.packetStatus ?? .valid, declaredLength: Int(h.sduLength ?? 0),
                length: fragment.count, fragments: 1)
            if h.pbFlag == .complete {
                // Written only when something was in progress: a write through the table per
                // complete SDU cost an allocation each.
                if unfinished { pending[h.handle]!.sdu.fragments = 0 }
                if fragment.count > sdu.declaredLength {
                    damage = LEAudioError.make(.reassembly, 0, "SDU \(sdu.packetSequenceNumber): \(fragment.count) bytes, ISO_SDU_Length \(sdu.declaredLength)")
                }
                body(sdu, fragment)
                return damage
            }
            if pending[h.handle] == nil && pending.count >= maxHandles {
                // Make room from a handle with nothing in progress; refuse if every one has.
                guard let idle = pending.first(where: { $0.value.sdu.fragments == 0 })?.key else {
                    return LEAudioError.make(.reassembly, 0, "more than \(maxHandles) ISO handles reassembling")
                }
                pending[idle] = nil
            }
            // Moved out of the table, so its buffer is unique and is filled again in place
            // (a copy would share it and copy it on the first write).
            var p = pending.removeValue(forKey: h.handle) ?? Pending(sdu: sdu, bytes: [])
            p.sdu = sdu
            p.bytes.removeAll(keepingCapacity: true)
            p.bytes.append(contentsOf: fragment.prefix(sdu.declaredLength))
            pending[h.handle] = p
            return damage
        }
        guard pending[h.handle].map({ $0.sdu.fragments > 0 }) ?? false, var p = pending.removeValue(forKey: h.handle) else {
            return LEAudioError.make(.reassembly, 0, h.pbFlag.name.lowercased() + " on " + Hex.fixed(UInt64(h.handle), width: 4) + " with no first fragment")
        }
        p.sdu.fragments += 1
        p.sdu.length += fragment.count
        let room = max(0, p.sdu.declaredLength - p.bytes.count)
        p.bytes.append(contentsOf: fragment.prefix(room))
        if p.sdu.length > p.sdu.declaredLength {
            damage = LEAudioError.make(.reassembly, 0, "SDU \(p.sdu.packetSequenceNumber): \(p.sdu.length) bytes, ISO_SDU_Length \(p.sdu.declaredLength)")
        }
        if h.pbFlag.ends {
            if p.sdu.length < p.sdu.declaredLength {
                damage = LEAudioError.make(.reassembly, 0, "SDU \(p.sdu.packetSequenceNumber): \(p.sdu.length) bytes, ISO_SDU_Length \(p.sdu.declaredLength)")
            }
            let sdu = p.sdu
            p.sdu.fragments = 0
            pending[h.handle] = p
            p.bytes.withUnsafeBytes { body(sdu, $0) }
        } else {
            pending[h.handle] = p
        }
        return damage
    }

    /// Forgets a handle's partial SDU (the CIS or BIG went away).
    public mutating func reset(handle: UInt16) { pending[handle] = nil }
}
