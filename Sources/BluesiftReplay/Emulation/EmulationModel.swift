import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftDissect

/// A recorded device, as far as an emulation needs it: how it advertised, its GATT database,
/// and what it answered to each read and write, in recorded order. Built from a capture by
/// `EmulationModelBuilder`; served by `Emulator`.
public struct EmulationModel: Sendable {
    public struct Notification: Sendable, Equatable {
        public var handle: UInt16
        public var value: [UInt8]
        public var indication: Bool
        /// Time after the write it followed.
        public var afterMs: Double
        public var frame: Int
    }

    /// A value a Read returned (Read Blobs after it joined on), or the error it got.
    public struct Read: Sendable, Equatable {
        public var value: [UInt8]
        public var error: ATTErrorCode?
        public var frame: Int
    }

    /// A write the client sent and what followed it.
    public struct Write: Sendable, Equatable {
        public var handle: UInt16
        public var value: [UInt8]
        /// Write Request, Write Command, Signed Write Command or Prepare Write Request (an
        /// executed queue).
        public var op: ATTOpcode
        /// The error answered; nil: Write Response (or nothing, for a command).
        public var error: ATTErrorCode?
        public var notifications: [Notification] = []
        public var frame: Int
    }

    /// The device's Pairing Response (Core 5.4 Vol 3 Part H §3.5.2), when the recording shows one.
    public struct Pairing: Sendable, Equatable {
        public var ioCapability: SMPIOCapability
        public var authReq: SMPAuthReq
        public var maxKeySize: UInt8
    }

    public var capture: String
    public var address: BDAddr?
    public var addressType: AddressType?
    /// Complete or shortened local name, from the advertising data.
    public var name: String?
    public var advertisingData: [UInt8] = []
    public var scanResponse: [UInt8] = []
    public var database = GATTDatabase()
    /// The Exchange MTU Response's Server Rx MTU.
    public var mtu: UInt16?
    public var reads: [UInt16: [Read]] = [:]
    public var writes: [UInt16: [Write]] = [:]
    /// Handles answered Insufficient Authentication / Encryption / Authorization before the
    /// link was encrypted: answered so again until it is.
    public var securityErrors: [UInt16: ATTErrorCode] = [:]
    /// SMP or encryption was seen on the device's links.
    public var secured = false
    public var pairing: Pairing?
    /// Connections to the device in the capture.
    public var connections = 0
    /// Notifications seen before any write on their link: not replayed (nothing asks for them).
    public var unsolicited = 0
    /// The capture's frames that made this model.
    public var frames = 0

    /// The generation of the device's database served, and how many the capture showed,
    /// when it showed more than one.
    public var generation: (number: Int, of: Int)?

    public init(capture: String) { self.capture = capture }

    /// Keeps the reads and writes (with what followed them) of these frames only.
    mutating func keep(frames: Range<Int>) {
        reads = reads.compactMapValues { l in
            let k = l.filter { frames.contains($0.frame) }; return k.isEmpty ? nil : k
        }
        writes = writes.compactMapValues { l in
            let k = l.filter { frames.contains($0.frame) }; return k.isEmpty ? nil : k
        }
    }

    public var readCount: Int { reads.values.reduce(0) { $0 + $1.count } }
    public var writeCount: Int { writes.values.reduce(0) { $0 + $1.count } }
    public var notificationCount: Int { writes.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.notifications.count } } }
}

/// Why a capture cannot be emulated.
public struct EmulationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Builds an `EmulationModel` from the analyzed frames of a capture, streaming: every
/// device's links are followed (each device that served ATT), one is chosen at the end.
public final class EmulationModelBuilder {
    /// One device's recording in progress.
    final class Device {
        var model: EmulationModel
        var attPDUs = 0
        /// Per link: the write notifications attach to, reads and writes waiting for an answer,
        /// the queue of prepared writes, whether the link is encrypted.
        struct Link {
            var lastWrite: (handle: UInt16, index: Int, time: Timestamp)?
            var pendingRead: (handle: UInt16, blob: Bool, frame: Int)?
            var pendingWrite: (handle: UInt16, index: Int)?
            var prepared: [(handle: UInt16, offset: Int, value: [UInt8], frame: Int)] = []
            var encrypted = false
        }
        var links: [UInt32: Link] = [:]
        init(capture: String) { model = EmulationModel(capture: capture) }
    }

    public let capture: String
    var devices: [String: Device] = [:]
    var order: [String] = []
    /// Advertising per address: (type, advertising data, scan response, name).
    var advertisers: [BDAddr: (type: AddressType?, adv: [UInt8], scan: [UInt8])] = [:]

    public init(capture: String) { self.capture = capture }

    static func linkKey(_ f: DecodedFrame, _ handle: UInt16) -> UInt32 { UInt32(f.record.adapter) << 16 | UInt32(handle) }

    /// Feed every analyzed frame in file order, with the session's decoder for link peers.
    public func observe(_ a: AnalyzedFrame, decoder: ProtocolDecoder) {
        let f = a.decoded
        if let adv = f.adv {
            adv.forEachReport { r in
                guard let addr = r.address else { return }
                var entry = advertisers[addr] ?? (r.addressType, [], [])
                let data = Array(r.data)
                if r.isScanResponse { if !data.isEmpty { entry.scan = data } } else if !data.isEmpty { entry.adv = data }
                entry.type = r.addressType ?? entry.type
                advertisers[addr] = entry
            }
        }
        guard let handle = f.connection else { return }
        let info = decoder.connection(adapter: f.record.adapter, handle: handle)
        let key = info?.peer?.description ?? "connection " + Hex.fixed(UInt64(handle), width: 4)
        let lk = Self.linkKey(f, handle)
        // Encryption on this link: an Encryption Change (Vol 4 Part E §7.7.8) turning it on.
        if let h = f.hci, h.kind == .event, h.eventCode == .encryptionChange, h.handle == handle, let d = devices[key] {
            d.links[lk, default: .init()].encrypted = h.encryption == 1 && h.status?.rawValue == 0
            if h.encryption == 1 { d.model.secured = true }
        }
        if let smp = f.smp, let d = devices[key] ?? device(key, info) {
            d.model.secured = true
            // The device's Pairing Response: who it said it was.
            if smp.smpCode == .pairingResponse, let p = smp.pairingFeatures {
                d.model.pairing = .init(ioCapability: p.ioCapability, authReq: p.authReq, maxKeySize: p.maxEncryptionKeySize)
            }
        }
        guard let att = f.att, !att.bytes.isEmpty, att.error == nil else { return }
        let op = att.opcode
        // The device is the server: requests come from the other side. A capture taken on the
        // device itself (this host the server) is not emulated.
        guard GATTTracker.serverIsPeer(opcode: op, direction: GATTTracker.direction(of: f)) else { return }
        guard let d = devices[key] ?? device(key, info) else { return }
        d.attPDUs += 1
        d.model.frames += 1
        var link = d.links[lk] ?? .init()
        defer { d.links[lk] = link }
        let frame = f.record.frame
        let value = att.value.map { Array($0) } ?? []
        switch op {
        case .exchangeMTUResponse:
            d.model.mtu = att.mtu
        case .readRequest, .readBlobRequest:
            if let h = att.handle { link.pendingRead = (h, op == .readBlobRequest, frame) }
        case .readResponse, .readBlobResponse:
            guard let p = link.pendingRead else { return }
            link.pendingRead = nil
            if p.blob, let i = d.model.reads[p.handle]?.indices.last {
                d.model.reads[p.handle]![i].value += value
            } else {
                d.model.reads[p.handle, default: []].append(.init(value: value, error: nil, frame: p.frame))
            }
        case .writeRequest, .writeCommand, .signedWriteCommand:
            guard let h = att.handle else { return }
            let w = EmulationModel.Write(handle: h, value: value, op: op, error: nil, frame: frame)
            d.model.writes[h, default: []].append(w)
            let i = d.model.writes[h]!.count - 1
            link.lastWrite = (h, i, f.record.timestamp)
            if op == .writeRequest { link.pendingWrite = (h, i) }
        case .prepareWriteRequest:
            guard let h = att.handle, let offset = att.offset else { return }
            link.prepared.append((h, Int(offset), value, frame))
        case .executeWriteRequest:
            defer { link.prepared.removeAll() }
            guard att.flags == 1, let first = link.prepared.first else { return }
            var joined: [UInt8] = []
            for p in link.prepared where p.handle == first.handle {
                if p.offset > joined.count { joined += Array(repeating: 0, count: p.offset - joined.count) }
                joined.replaceSubrange(p.offset..<min(joined.count, p.offset + p.value.count), with: p.value)
            }
            let w = EmulationModel.Write(handle: first.handle, value: joined, op: .prepareWriteRequest, error: nil, frame: first.frame)
            d.model.writes[first.handle, default: []].append(w)
            let i = d.model.writes[first.handle]!.count - 1
            link.lastWrite = (first.handle, i, f.record.timestamp)
            link.pendingWrite = (first.handle, i)
        case .writeResponse, .executeWriteResponse:
            link.pendingWrite = nil
        case .errorResponse:
            guard let code = att.errorCode.map(ATTErrorCode.init(rawValue:)), let req = att.requestOpcode else { return }
            let h = att.errorHandle ?? 0
            if code.isSecurityError, !link.encrypted {
                d.model.securityErrors[h] = code
                d.model.secured = true
            }
            if req.isRead, let p = link.pendingRead {
                link.pendingRead = nil
                if !p.blob { d.model.reads[p.handle, default: []].append(.init(value: [], error: code, frame: p.frame)) }
            } else if req == .writeRequest || req == .executeWriteRequest || req == .prepareWriteRequest, let p = link.pendingWrite {
                d.model.writes[p.handle]?[p.index].error = code
                link.pendingWrite = nil
            }
        case .handleValueNotification, .handleValueIndication:
            guard let h = att.handle else { return }
            guard let w = link.lastWrite else { d.model.unsolicited += 1; return }
            let after = Double(f.record.timestamp.microseconds &- w.time.microseconds) / 1000
            d.model.writes[w.handle]?[w.index].notifications.append(
                .init(handle: h, value: value, indication: op == .handleValueIndication, afterMs: max(0, after), frame: frame))
        default:
            break
        }
    }

    func device(_ key: String, _ info: ConnectionInfo?) -> Device? {
        if let d = devices[key] { return d }
        guard devices.count < 64 else { return nil } // bounded: a capture of a crowd keeps the first 64
        let d = Device(capture: capture)
        d.model.address = info?.peer
        d.model.addressType = info?.peerAddressType
        devices[key] = d
        order.append(key)
        return d
    }

    /// The addresses of the devices that served ATT, busiest first, with their names.
    public var candidates: [(address: String, name: String?, pdus: Int)] {
        order.compactMap { k in devices[k].map { (k, $0.model.address.flatMap { advertisers[$0] }.flatMap { Self.localName($0.adv + $0.scan) }, $0.attPDUs) } }
            .sorted { $0.pdus > $1.pdus }
    }

    /// The model of the device at `address`, or named `name` in its advertising, or (neither
    /// given) the device that served the most ATT. `gatt` replaces the discovered database.
    /// When the device's database changed during the capture, `generation` (1-based; default
    /// the last) picks which one is served, and only what the device answered while that one
    /// was in force is replayed.
    public func model(
        address: BDAddr? = nil, name: String? = nil, gatt: GATTDatabase? = nil, generation: Int? = nil,
        tracker: GATTTracker
    ) throws(EmulationError) -> EmulationModel {
        var key: String?
        if let address {
            key = devices[address.description] != nil ? address.description : nil
            if key == nil { throw EmulationError("no ATT traffic with \(address) in \(capture)") }
        } else if let name {
            let addrs = advertisers.filter { Self.localName($0.value.adv + $0.value.scan) == name }.map(\.key)
            key = order.first { k in addrs.contains { $0.description == k } }
            if key == nil {
                throw EmulationError(
                    addrs.isEmpty
                        ? "no device advertised the name \"\(name)\" in \(capture)"
                        : "the device named \"\(name)\" has no ATT traffic in \(capture)")
            }
        } else {
            key = candidates.first?.address
            if key == nil { throw EmulationError("no device answered ATT requests in \(capture): nothing to emulate") }
        }
        var m = devices[key!]!.model
        m.connections = devices[key!]!.links.count
        if let a = m.address, let adv = advertisers[a] {
            m.advertisingData = adv.adv
            m.scanResponse = adv.scan
            m.addressType = m.addressType ?? adv.type
            m.name = Self.localName(adv.adv + adv.scan)
        }
        if let gatt {
            m.database = gatt
        } else if let k = tracker.deviceOrder.first(where: { $0.text == key }) {
            let gens = tracker.generations(k)
            let n = generation ?? max(1, gens.count)
            if n > max(1, gens.count) {
                throw EmulationError("\(key!)'s database has \(gens.count > 1 ? "generations 1–\(gens.count)" : "one generation") in \(capture): no generation \(n)")
            }
            if n <= gens.count { m.database = gens[n - 1].database }
            if gens.count > 1 {
                // What was answered from the frame the generation began to the next one's.
                let from = n == 1 ? 0 : gens[n - 1].firstFrame ?? 0
                let to = n < gens.count ? gens[n].firstFrame ?? Int.max : Int.max
                m.keep(frames: from..<to)
                m.generation = (n, gens.count)
            }
        }
        if m.database.services.isEmpty { // characteristics outside a service cannot be served
            throw EmulationError("\(capture) has no GATT discovery of \(key!): give its database with --gatt FILE (bluesift gatt --format json)")
        }
        return m
    }

    /// Complete (0x09) or shortened (0x08) local name in AD structures (Core 5.4 Vol 3 Part C §11).
    static func localName(_ data: [UInt8]) -> String? {
        var i = 0, short: String?
        while i + 1 < data.count {
            let len = Int(data[i])
            guard len > 0, i + 1 + len <= data.count else { break }
            let value = data[(i + 2)..<(i + 1 + len)]
            if data[i + 1] == 0x09 { return String(decoding: value, as: UTF8.self) }
            if data[i + 1] == 0x08 { short = String(decoding: value, as: UTF8.self) }
            i += 1 + len
        }
        return short
    }
}
