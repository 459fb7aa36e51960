import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins

/// Computes a `StatsReport` in one pass over analyzed frames: the session's statistics, a
/// collection of per-protocol collectors around the connections, problems and span they
/// share. The built-in protocols' collectors (Stats/<protocol>.swift: `HCIStats`,
/// `LinkLayerStats`, `AdvertisingStats`, `SMPStats`, `ATTStats`) each keep their own state
/// and are called directly (the hot layers: no existential call); the protocol modules'
/// collectors come from the registry (`ProtocolRegistry.collectors`, e.g. the Classic
/// modules' `ClassicStats`). Memory is bounded by the caps in `StatsLimits`, never by the
/// number of records.
public final class CaptureStats: StatsContext {
    public var report: StatsReport

    struct ConnKey: Hashable { var adapter: UInt16; var handle: UInt16 }
    /// A stats connection by adapter and handle: its index in `report.connections`.
    struct ConnState {
        var index: Int
        var ended = false
    }

    var conns: [ConnKey: ConnState] = [:]
    let hci = HCIStats()
    let linkLayer = LinkLayerStats()
    let advertising = AdvertisingStats()
    let smp = SMPStats()
    let att = ATTStats()
    /// The protocol modules' collectors (`ProtocolRegistry.collectors`), with the layers and
    /// record kinds each is given.
    let collectors: [any StatsCollector]
    let collectorLayers: [DecodedFrame.Layers]
    let collectorKinds: [[PacketKind]]
    let collectorKindList: [PacketKind]
    let registry: ProtocolRegistry
    /// The decoder of the frame being added (`connectionIndex` asks it).
    var currentDecoder: ProtocolDecoder?
    /// The plugins' result of the frame the collectors are given (`pluginMessages`).
    var frameVendor: PluginSet.Result?
    var kindCounts: [String: Int] = [:]
    var lastUs: Int64?
    var openConnections = 0
    var gapCount = 0, backwards = 0
    var firstGapFrame: Int?, firstBackwardsFrame: Int?
    var truncatedACL = 0, firstTruncatedFrame: Int?
    /// Over-the-air packets or an access address on a connection: a sniffer's capture.
    var isSniffer = false
    var subMillisecond = false

    /// Sensor readings decoded from advertising data (the report keeps their series too).
    public var sensors: SensorTable {
        get { advertising.sensors }
        set { advertising.sensors = newValue }
    }
    /// After `finish`: the index in `sensors.rows`/`sensors.series` of each `report.sensors` row.
    public private(set) var sensorOrder: [Int] = []

    public init(file: String, format: String, registry: ProtocolRegistry = .shared) {
        report = StatsReport(file: file, format: format)
        collectors = registry.collectors.map { $0.type.init() }
        collectorLayers = registry.collectors.map { $0.layers }
        collectorKinds = registry.collectors.map { $0.type.recordKinds }
        collectorKindList = Array(Set(collectorKinds.joined()))
        self.registry = registry
    }

    // MARK: per record

    /// Times of note records (kept apart from the span), bounded.
    var noteTimes: [Int64] = []
    var jitter = 0, maxJitterUs: Int64 = 0
    var firstJitterFrame: Int?

    public func add(_ a: inout AnalyzedFrame, decoder: ProtocolDecoder) {
        let r = a.decoded.record
        let us = r.timestamp.microseconds
        report.records += 1
        report.bytes += r.bytes.count
        // The span is the traffic's: PacketLogger writes notes (its header, system messages)
        // dated days before a session, which stretched a 9-s capture to 139 h.
        if r.kind == .note {
            if noteTimes.count < 100_000 { noteTimes.append(us) }
        } else {
            // Earliest → latest, not first → last: a file's last records may go back in time.
            if report.firstUs.map({ us < $0 }) ?? true { report.firstUs = us }
            if report.lastUs.map({ us > $0 }) ?? true { report.lastUs = us }
            if let l = lastUs {
                if us < l {
                    // A step back under 50 ms is clock jitter (PacketLogger's millisecond clock, btmon
                    // interleaving its sources); a larger one is a wrapped buffer or merged files.
                    if l - us >= CaptureSummary.backwardsUs {
                        backwards += 1; if firstBackwardsFrame == nil { firstBackwardsFrame = r.frame }
                    } else {
                        jitter += 1; maxJitterUs = max(maxJitterUs, l - us); if firstJitterFrame == nil { firstJitterFrame = r.frame }
                    }
                } else if us - l > 60_000_000 && openConnections > 0 {
                    gapCount += 1; if firstGapFrame == nil { firstGapFrame = r.frame }
                }
            }
            lastUs = us
        }
        if !subMillisecond && r.timestamp.nanoseconds % 1_000_000 != 0 { subMillisecond = true }
        if r.isTruncated {
            report.truncatedRecords += 1
            if r.kind == .acl { truncatedACL += 1; if firstTruncatedFrame == nil { firstTruncatedFrame = r.frame } }
            problem("truncated_record", r, conn: nil, "record cut by the capture: \(r.bytes.count) of \(r.originalLength) bytes")
        }
        let layers = a.decoded.layers
        if !a.decoded.errors.isEmpty {
            report.counts.malformedRecords += 1
            for e in a.decoded.errors {
                if e.code == .reassembly || (e.layer == "l2cap" && e.code != .truncated) {
                    report.counts.reassemblyErrors += e.code == .reassembly ? 1 : 0
                    if e.code == .reassembly {
                        // A module's messages split over several packets (AVDTP, AVCTP).
                        if registry.layer(e.layer) != nil { problem("message_reassembly", r, conn: nil, e.layer + ": " + e.message) } else { problem("l2cap_reassembly", r, conn: nil, e.message) }
                    }
                }
                if e.code != .reassembly && !(e.code == .truncated && r.isTruncated) {
                    problem("malformed", r, conn: nil, (e.layer.isEmpty ? "" : e.layer + ": ") + e.message)
                }
            }
        }
        hci.count(r)
        if layers.contains(.hci) { hci.add(&a, r, us, decoder, self) }
        if r.kind == .acl, layers.contains(.note) { hci.vendorDiagnostic(a, r) }
        if layers.contains(.ll), let ll = a.decoded.ll { linkLayer.add(ll, &a, r, us, decoder, self) }
        if layers.contains(.adv) { advertising.add(&a, r, us, self) }
        if layers.contains(.smp), let pdu = a.decoded.smp { smp.add(pdu, &a, r, us, decoder, self) }
        if layers.contains(.att) { att.add(&a, r, us, decoder, self) }
        if !layers.isDisjoint(with: .anyModule) || (!collectorKindList.isEmpty && collectorKindList.contains(r.kind)) {
            currentDecoder = decoder
            modules(&a, r)
        }
    }

    // MARK: protocol modules

    /// A frame (or record kind) a collector asked for goes to it.
    func modules(_ a: inout AnalyzedFrame, _ r: CaptureRecord) {
        if a.vendor != nil || frameVendor != nil { frameVendor = a.vendor }
        for (i, c) in collectors.enumerated()
        where !a.decoded.layers.isDisjoint(with: collectorLayers[i])
            || (!collectorKinds[i].isEmpty && collectorKinds[i].contains(r.kind))
        {
            c.add(a.decoded, self)
        }
    }

    public func connectionIndex(_ f: borrowing DecodedFrame) -> Int? {
        guard let c = f.connection, let decoder = currentDecoder, let i = connection(f.record.adapter, c, f.record, decoder) else { return nil }
        if !f.layers.isDisjoint(with: .anyModule) { lastConnection = i }
        return i
    }

    public func problem(_ kind: String, _ record: CaptureRecord, connection: Int?, _ message: String) {
        problem(kind, record, conn: connection, message)
    }

    public var file: String { report.file }
    public var pluginMessages: [(plugin: String, message: String)] { frameVendor?.messages.map { ($0.plugin, $0.message) } ?? [] }
    public func connectionHandle(_ index: Int) -> Int { report.connections[index].handle }
    public func connectionPeer(_ index: Int) -> String? { report.connections[index].peer }

    func problem(_ kind: String, _ r: CaptureRecord, conn: Int?, handle: Int? = nil, request: Int? = nil, _ msg: String) {
        kindCounts[kind, default: 0] += 1
        guard report.problems.count < StatsLimits.problems else { report.problemsNotListed += 1; return }
        report.problems.append(
            .init(
                kind: kind, frame: r.frame, us: r.timestamp.microseconds, connection: conn,
                handle: handle, requestFrame: request, message: msg))
    }

    /// The connection a frame belongs to: created on first sight, a new one after a
    /// set-up event or a disconnection on the same handle.
    func connection(_ adapter: UInt16, _ handle: UInt16, _ r: CaptureRecord, _ decoder: ProtocolDecoder, fresh: Bool = false) -> Int? {
        let key = ConnKey(adapter: adapter, handle: handle)
        if !fresh, let s = conns[key] {
            if !s.ended { return s.index }
            // A record dated inside the ended connection (appended out of time order) is
            // that connection's, as `ConnectionTable.ensure` has it.
            let c = report.connections[s.index]
            if let end = c.endUs, c.startUs ?? c.firstUs <= r.timestamp.microseconds, r.timestamp.microseconds < end { return s.index }
        }
        guard report.connections.count < StatsLimits.connections else { report.connectionsNotListed += 1; return nil }
        if let s = conns[key], !s.ended { att.closePending(s.index, at: r.timestamp.microseconds, reason: "the connection was set up again", self) }
        let info = decoder.connection(adapter: adapter, handle: handle)
        let us = r.timestamp.microseconds
        var c = StatsReport.Connection(
            index: report.connections.count, adapter: Int(adapter), handle: Int(handle),
            firstFrame: r.frame, firstUs: us, lastFrame: r.frame, lastUs: us, durationUs: 0)
        c.transport = info?.transport?.rawValue
        if let p = info?.peer { c.peer = p.description }
        c.peerAddressType = info?.peerAddressType?.name
        c.role = info?.role?.rawValue
        if let aa = info?.accessAddress {
            c.accessAddress = Hex.fixed(UInt64(aa), width: 8)
            isSniffer = true
            if let ind = linkLayer.connectInds[aa] {
                c.startFrame = ind.frame; c.startUs = ind.us
                c.parameters.append(.init(frame: ind.frame, us: ind.us, interval: ind.params.0, latency: ind.params.1, timeout: ind.params.2))
                if let p = ind.peer { c.peer = p.description }
                c.role = "sniffed"
            }
        }
        if fresh { c.startFrame = r.frame; c.startUs = us }
        report.connections.append(c)
        conns[key] = ConnState(index: c.index)
        openConnections += 1
        return c.index
    }

    /// A connection ends (HCI Disconnection Complete, LL_TERMINATE_IND): its open ATT
    /// requests are closed.
    func end(_ i: Int, _ key: ConnKey, _ r: CaptureRecord, reason: HCIStatus?) {
        let us = r.timestamp.microseconds
        report.connections[i].endFrame = r.frame
        report.connections[i].endUs = us
        report.connections[i].lastFrame = r.frame; report.connections[i].lastUs = us
        if let reason {
            report.connections[i].disconnectReason = Int(reason.rawValue)
            report.connections[i].disconnectReasonName = reason.name
        }
        if let s = conns[key] { att.closePending(s.index, at: us, reason: "the link ended", self) }
        conns[key]?.ended = true
        openConnections = max(0, openConnections - 1)
    }

    /// Connection and characteristic (indexes into the report) of the last ATT frame added.
    public internal(set) var lastConnection: Int?
    public internal(set) var lastCharacteristic: Int?

    // MARK: end

    /// Closes open requests and connections and writes the quality findings.
    public func finish(decoder: ProtocolDecoder, warnings: [String]) -> StatsReport {
        let endUs = report.lastUs ?? 0
        for (_, s) in conns where !s.ended { att.closePending(s.index, at: endUs, reason: "the capture ended", self) }
        att.finish(self)
        var byAddress: [String: Int] = [:]
        for (i, d) in report.devices.enumerated() { byAddress[d.address] = i }
        for i in report.connections.indices {
            if report.connections[i].peer == nil,
                let info = decoder.connection(
                    adapter: UInt16(report.connections[i].adapter),
                    handle: UInt16(report.connections[i].handle)),
                info.startFrame.map({ $0 <= report.connections[i].firstFrame }) ?? true, let p = info.peer
            {
                report.connections[i].peer = p.description
            }
            let c = report.connections[i]
            if let p = c.peer, let d = byAddress[p] {
                report.devices[d].connections.append(i)
            } else if let p = c.peer, p != "00:00:00:00:00:00", report.devices.count < StatsLimits.devices {
                // A peer connected without advertising in the capture (Classic, or connected
                // before it) is a device too: `advertising_reports` 0.
                byAddress[p] = report.devices.count
                report.devices.append(
                    .init(
                        address: p, addressType: c.peerAddressType, firstFrame: c.firstFrame, lastFrame: c.lastFrame,
                        firstUs: c.firstUs, lastUs: c.lastUs, connections: [i]))
            }
            report.connections[i].durationUs = (c.endUs ?? c.lastUs) - (c.startUs ?? c.firstUs)
            if report.connections[i].peerName == nil, let p = c.peer,
                let d = report.devices.first(where: { $0.address == p })
            {
                report.connections[i].peerName = d.names.first
            }
        }
        hci.finish(self)
        report.failedConnections.sort { $0.frame < $1.frame }
        report.modules = collectors.map { $0.finish(self) }
        report.counts.modules = report.modules.flatMap(\.counts)
        report.problems.sort { ($0.frame, $0.kind) < ($1.frame, $1.kind) }
        let (sensorRows, order) = sensors.finished()
        sensorOrder = order
        report.sensors = sensorRows.isEmpty ? nil : sensorRows
        report.sensorsNotListed = sensors.notListed > 0 ? sensors.notListed : nil
        report.problemCounts = kindCounts.sorted { $0.key < $1.key }.map { .init(kind: $0.key, count: $0.value) }
        if report.firstUs == nil, let lo = noteTimes.min(), let hi = noteTimes.max() { report.firstUs = lo; report.lastUs = hi }
        // Notes within a minute of the traffic are part of the session (btmon's, a log's start).
        if let f = report.firstUs, let l = report.lastUs {
            if let lo = noteTimes.filter({ $0 >= f - 60_000_000 && $0 < f }).min() { report.firstUs = lo }
            if let hi = noteTimes.filter({ $0 > l && $0 <= l + 60_000_000 }).max() { report.lastUs = hi }
        }
        if let f = report.firstUs { report.first = TimeFormat.rfc3339(Timestamp(microseconds: f)) }
        if let l = report.lastUs { report.last = TimeFormat.rfc3339(Timestamp(microseconds: l)) }
        report.durationUs = (report.lastUs ?? 0) - (report.firstUs ?? 0)
        report.millisecondClock = report.records > 0 && !subMillisecond
        linkLayer.finish(self)
        assessQuality(warnings: warnings, decoder: decoder)
        return report
    }
}
