import BluesiftWire
import BluesiftCapture

// LE Audio as protocol modules (docs/DESIGN.md, "Adding a protocol"): HCI ISO data (`iso`)
// and everything else LE Audio (`le_audio`: the CIG/CIS/BIG/periodic-advertising commands and
// events, the PACS/ASCS/BASS/CSIS characteristic values, the BAP/PBP/CAP service data and
// Broadcast_Name). Both answer to `--protocol le-audio`; one stats collector (LEAudioStats).

/// HCI ISO Data packets (Core 6.0 Vol 4 Part E §5.4.5), H4 type 0x05, with SDU reassembly.
public enum LEAudioISO: ProtocolModule {
    public static let layers = [LayerSpec("iso", group: "le-audio", specificity: 6)]
    public static let carriers: [Carrier] = [.hciPacket(.iso)]
    public static let layer = FrameLayer.registered("iso")
    public static var collector: (any StatsCollector.Type)? { LEAudioStats.self }

    /// Reassembly per ISO handle, one per capture (a CIS or BIS handle is not an ACL
    /// connection); the last layer made, used again when no frame holds it any more.
    final class Reassembly {
        var r = ISOReassembler()
        var layer = ISOLayer(header: ISODataHeader(handle: 0, pbFlag: .complete, fragmentLength: 0), sent: false)
    }

    public static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        let state = x.state(Reassembly.self, Reassembly.init)
        // One ISO packet after another: the layer object of the last one is filled again
        // (a struct this size would be boxed on the heap per packet as `any ModuleLayer`).
        let header = ISODataHeader(packet: pdu), sent = x.side == 0
        let v: ISOLayer
        if isKnownUniquelyReferenced(&state.layer) {
            v = state.layer
            v.header = header; v.sent = sent; v.sdu = nil; v.reassemblyError = nil
        } else {
            v = ISOLayer(header: header, sent: sent)
            state.layer = v
        }
        guard v.header.error == nil else { return v }
        let h = v.header
        let fragment = UnsafeRawBufferPointer(rebasing: pdu[h.fragmentOffset..<(h.fragmentOffset + h.fragmentLength)])
        var done: ISOSDU?
        if let damage = state.r.add(h, fragment: fragment, { sdu, _ in done = sdu }) {
            v.reassemblyError = DecodeError.Box(damage)
        }
        v.sdu = done
        return v
    }
}

/// The LE Audio control plane: isochronous and periodic-advertising HCI (§7.8, §7.7.65),
/// PACS/ASCS/BASS/CSIS characteristics, BAP/PBP/CAP service data, Broadcast_Name.
public enum LEAudio: ProtocolModule {
    public static let layers = [LayerSpec("le_audio", group: "le-audio", specificity: 10)]
    public static let layer = FrameLayer.registered("le_audio")
    public static var collector: (any StatsCollector.Type)? { LEAudioStats.self }
    /// Broadcast_Code, Bad_Code and SIRK (LEAudioSecrets.swift).
    public static var holdsSecrets: Bool { true }

    public static let carriers: [Carrier] = {
        var c: [Carrier] = LEAudioHCILayouts.commands.keys.sorted().map { .hciCommand($0) }
        c += LEAudioHCILayouts.subevents.keys.sorted().map { .leSubevent($0) }
        // Command Complete (§7.7.14): only the isochronous commands' returns are taken.
        c.append(.hciEvent(HCIEventCode.commandComplete.rawValue))
        c += LEAudioUUIDs.serviceData.sorted().map { .serviceData($0) }
        c.append(.adType(LEAudioUUIDs.broadcastNameADType))
        c += LEAudioUUIDs.characteristics.sorted().map { .gattCharacteristic(BluetoothUUID(UInt32($0))) }
        c += LEAudioAir.carriers // sniffed CIS control, CIS/BIS PDUs, periodic advertising (LL/)
        return c
    }()

    /// A report's structures make one value: an Auracast source's Broadcast Audio
    /// Announcement, Broadcast_Name and Public Broadcast Announcement.
    public static func decode(advertising s: ModuleADStructures, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        LEAudioAir.announced(x, f)
        var layer: LEAudioMessageLayer?
        for (carrier, pdu) in s {
            let v: LEAudioValue?
            switch carrier {
            case .serviceData(let u): v = LEAudioValue(serviceData: u, bytes: pdu)
            case .adType: v = .broadcastName(BroadcastName(bytes: pdu))
            default: v = nil
            }
            guard let v else { continue }
            if let e = v.error { f.errors.append(e) } // each one's damage, as it joins
            if layer == nil { layer = LEAudioMessageLayer(value: v) } else { layer!.advertising.append(v) }
        }
        // Extended advertising data put back together from several reports (the pipeline's).
        if s.pieces > 1, layer != nil {
            layer!.assembled = (s.pieces, s.data.count)
            layer!.advertiser = s.advertiser.map { LEAudioState.advertiserKey($0.address, sid: $0.sid) }
        }
        return layer
    }

    static let writes: Set<ATTOpcode> = [.writeRequest, .writeCommand, .signedWriteCommand, .prepareWriteRequest, .executeWriteRequest]

    public static func decode(_ pdu: UnsafeRawBufferPointer, _ x: ModuleContext, _ f: inout DecodedFrame) -> (any ModuleLayer)? {
        switch x.carrier {
        case .hciCommand(let op) where op == HCICommandOpcode.leSetExtendedAdvertisingData.rawValue || op == HCICommandOpcode.leSetPeriodicAdvertisingData.rawValue:
            // A broadcast source's own advertising data, complete or put back together from
            // its fragments (§7.8.54/§7.8.62); other advertising stays HCI's.
            guard let m = LEAudioHCIMessage(.command(op), parameters: pdu), m.error == nil, let operation = m.uint("operation"),
                let h = m.uint("advertising_handle"), let i = m.names.lastIndex(of: "advertising_data"), case .bytes(let d) = m.values[i]
            else { return nil }
            let pieces = x.state(LEAudioAdvertisingAssembly.self, LEAudioAdvertisingAssembly.init)
            let v = assembled(pieces.command(.set(op, UInt8(truncatingIfNeeded: h)), operation: operation, d), m)
            return v?.advertising.isEmpty ?? true ? nil : v
        case .hciCommand(let op):
            return LEAudioMessageLayer(hci: LEAudioHCIMessage(.command(op), parameters: pdu))
        case .hciEvent:
            // Command Complete: num packets (1), opcode (2), return parameters.
            guard pdu.count >= 3 else { return nil }
            let op = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
            guard LEAudioHCILayouts.returns[op] != nil else { return nil }
            return LEAudioMessageLayer(hci: LEAudioHCIMessage(.returnParameters(op), parameters: UnsafeRawBufferPointer(rebasing: pdu[3...])))
        case .leSubevent(let s):
            guard let m = LEAudioHCIMessage(.subevent(s), parameters: pdu) else { return nil }
            let v = LEAudioMessageLayer(hci: m)
            // Periodic advertising data (§7.7.65.15): the BASE and announcements in its AD
            // structures, once the reports carrying it are complete (Data_Status 0) or cut (2).
            if s == HCILESubeventCode.periodicAdvertisingReport.rawValue || s == HCILESubeventCode.periodicAdvertisingReportV2.rawValue, m.error == nil,
                let status = m.uint("data_status"), let sync = m.uint("sync_handle"), let i = m.names.lastIndex(of: "data"), case .bytes(let d) = m.values[i]
            {
                let pieces = x.state(LEAudioAdvertisingAssembly.self, LEAudioAdvertisingAssembly.init)
                return assembled(pieces.report(sync: UInt16(sync & 0x0FFF), status: status, d), m) ?? v
            }
            return v
        case .gattCharacteristic(let u):
            guard let short = u.shortValue else { return nil }
            // Write Request/Command, Signed Write, Prepare Write, Execute: a control point operation.
            let written = f.att.map { Self.writes.contains($0.opcode) } ?? false
            guard let v = LEAudioValue(characteristic: UInt16(short), written: written, bytes: pdu) else { return nil }
            var layer = LEAudioMessageLayer(value: v)
            layer.characteristic = UInt16(short)
            layer.written = written
            if case .pacRecords = v { x.profile("LE Audio", role: x.side == 0 ? "server" : "client") }
            return layer
        case .llControl, .llIsochronous, .llPeriodicAdvertising:
            return LEAudioAir.decode(pdu, x, &f)
        default:
            return nil
        }
    }
}

/// An `iso` layer value: the packet header, and the SDU it completed, if any. A class: the
/// module fills one again for the next packet when no frame holds it (`LEAudioISO.decode`).
public final class ISOLayer: ModuleLayer {
    public var header: ISODataHeader
    public var sent: Bool
    public var sdu: ISOSDU?
    public var reassemblyError: DecodeError.Box?
    init(header: ISODataHeader, sent: Bool) { self.header = header; self.sent = sent }
    public var layers: DecodedFrame.Layers { LEAudioISO.layer.bit }
    public var error: DecodeError? { header.error ?? reassemblyError?.error }
    public func name(_ layer: FrameLayer) -> String { "ISO Data" }
    public func summary(_ layer: FrameLayer) -> String {
        var s = header.summary
        if let sdu, sdu.fragments > 1 { s += " (SDU \(sdu.packetSequenceNumber) reassembled, \(sdu.length) B)" }
        return s
    }
    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key))
        header.describe(into: &w)
        if let sdu, sdu.fragments > 1 {
            w.object("sdu") { w in
                w.int("packet_sequence_number", Int(sdu.packetSequenceNumber)); w.int("iso_sdu_length", sdu.declaredLength)
                w.int("length", sdu.length); w.int("fragments", sdu.fragments)
            }
        }
        if let e = reassemblyError?.error { w.string("reassembly_error", e.message) }
        w.endObject()
    }
    /// Media, thousands: not in the report's sequence view.
    public var inSequence: Bool { false }
}

/// An `le_audio` layer value: an isochronous HCI message, or a profile value (GATT
/// characteristic or advertising).
public struct LEAudioMessageLayer: ModuleLayer {
    public var hci: LEAudioHCIMessage?
    public var value: LEAudioValue?
    /// LE Audio values in a periodic advertising report's data.
    public var advertising: [LEAudioValue] = []
    public var characteristic: UInt16?
    public var written = false
    /// Advertising data put back together from this many pieces, of this many octets.
    public var assembled: (pieces: Int, octets: Int)?
    /// The advertiser (LEAudioState.advertiserKey) of extended advertising data put back
    /// together: the report completing it may not hold the announcement's structure.
    public var advertiser: UInt64?
    /// Damage of reassembled advertising data (a piece missing, data truncated).
    public var note: DecodeError.Box?

    init?(hci: LEAudioHCIMessage?) {
        guard let hci else { return nil }
        self.hci = hci
    }
    init(hci: LEAudioHCIMessage) { self.hci = hci }
    init(value: LEAudioValue) { self.value = value }

    public var layers: DecodedFrame.Layers { LEAudio.layer.bit }
    public var error: DecodeError? {
        // A report's joined structures: each one's damage is reported as it joins.
        if hci == nil, !advertising.isEmpty { return advertising.last?.error }
        return hci?.error ?? note?.error ?? value?.error ?? advertising.lazy.compactMap(\.error).first
    }

    public func name(_ layer: FrameLayer) -> String {
        if let hci { return hci.name }
        if let c = characteristic, let n = LEAudioUUIDs.characteristicName(c) { return n }
        switch value {
        case .base: return "BASE"
        case .broadcastAnnouncement: return "Broadcast Audio Announcement"
        case .publicBroadcast: return "Public Broadcast Announcement"
        case .announcement: return "LE Audio Announcement"
        case .broadcastName: return "Broadcast Name"
        default: return "LE Audio"
        }
    }

    public func summary(_ layer: FrameLayer) -> String {
        let whole = assembled.map { " (advertising data reassembled from \($0.pieces) pieces, \($0.octets) octets)" } ?? ""
        if let hci {
            return ([hci.summary + whole] + advertising.map(\.summary)).joined(separator: "; ")
        }
        guard let value else { return "" }
        return ([value.summary] + advertising.map(\.summary)).joined(separator: "; ") + whole
    }

    public func describe<S: FieldSink>(_ layer: FrameLayer, into w: inout S) {
        w.beginObject(.literal(layer.key))
        if let hci {
            w.object("hci") { w in
                w.string("name", hci.name); hci.describe(into: &w)
            }
        }
        if let c = characteristic {
            w.string("characteristic", LEAudioUUIDs.characteristicName(c) ?? "")
            w.bool("written", written)
        }
        value?.describe(into: &w)
        // Periodic advertising data, or the other structures of an advertising report.
        if !advertising.isEmpty { w.array("advertising") { w in for v in advertising { w.object("") { w in v.describe(into: &w) } } } }
        if let a = assembled { w.int("reassembled_pieces", a.pieces); w.int("reassembled_octets", a.octets) }
        w.endObject()
    }

    /// The LE Audio service data and Broadcast_Name in advertising data (CSS Part A §1).
    static func values(inAdvertisingData d: UnsafeRawBufferPointer) -> [LEAudioValue] {
        var out: [LEAudioValue] = []
        var o = 0
        while o + 1 < d.count, out.count < 16 {
            let len = Int(d[o])
            guard len > 0, o + 1 + len <= d.count else { break }
            let type = d[o + 1]
            let body = UnsafeRawBufferPointer(rebasing: d[(o + 2)..<(o + 1 + len)])
            if type == 0x16, body.count >= 2,
                let v = LEAudioValue(
                    serviceData: UInt16(body[0]) | UInt16(body[1]) << 8,
                    bytes: UnsafeRawBufferPointer(rebasing: body[2...]))
            {
                out.append(v)
            } else if type == LEAudioUUIDs.broadcastNameADType {
                out.append(.broadcastName(BroadcastName(bytes: body)))
            }
            o += 1 + len
        }
        return out
    }
}
