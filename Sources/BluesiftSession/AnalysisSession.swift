import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftPlugins
import BluesiftDissect
import BluesiftSecurity

/// How every command that reads captures decodes them, chosen once from one options value:
/// keys for sniffed encrypted links, an imported GATT database, vendor plugins, naming.
public struct DecodeSettings {
    /// Name handles from GATT (off for plain protocol dumps, where it is wasted work).
    public var naming = true
    public var gatt: GATTDatabase?
    public var plugins: [Plugin]?
    public var keys: [KnownLTK] = []
    /// Keys of encrypted advertising payloads by advertiser address (`--vendor-keys`).
    public var vendorKeys: [UInt64: [UInt8]] = [:]
    /// What protocol modules made of their decode options (`--mesh-keys`; `ProtocolRegistry.configure`).
    public var modules = ModuleConfiguration()
    /// Called while a legacy passkey is searched (a progress line on a terminal).
    public var crackProgress: (@Sendable (Int) -> Void)?

    public init() {}
}

/// Where a session's records come from.
public enum SessionSource {
    /// One capture (a file, `FILE:NAME` inside a bug report).
    case file(String)
    /// Rotated logs read as one capture, merged in time order.
    case merged([String])
    /// A capture read as it grows until `shouldStop` says so.
    case following(String, shouldStop: () -> Bool)
}

/// One capture read once: records in file order through the Analyzer (protocols, GATT,
/// plugins), and the filter. Every command that reads captures runs one per capture, so
/// they all decode alike; what a command does with each frame is its renderer's business.
public final class AnalysisSession {
    public let path: String
    public let reader: any CaptureReader
    public let analyzer: Analyzer
    public var filter: FrameFilter
    /// Records read, and those the filter passed.
    public var records = 0
    public var matched = 0
    /// `--peer NAME` names no device advertised (names are resolved by a first pass).
    public private(set) var unresolvedPeerNames: [String] = []
    /// Every so many records: (bytes read, file size).
    public var progress: ((Int, Int) -> Void)?

    public var decoder: ProtocolDecoder { analyzer.decoder }
    public var filtering: Bool { !filter.isEmpty }

    /// Opens the capture; the filter's peer names are resolved first, over a reader of their own.
    public init(_ source: SessionSource, decode: DecodeSettings, filter: FrameFilter = FrameFilter()) throws(CaptureError) {
        var filter = filter
        switch source {
        case .file(let p):
            path = p
            if !filter.peerNames.isEmpty { unresolvedPeerNames = filter.resolvePeerNames(try CaptureFile.open(path: p)) }
            reader = try CaptureFile.open(path: p)
        case .merged(let paths):
            path = paths.joined(separator: " + ")
            if !filter.peerNames.isEmpty { unresolvedPeerNames = filter.resolvePeerNames(try CaptureFile.open(merging: paths)) }
            reader = try CaptureFile.open(merging: paths)
        case .following(let p, let stop):
            path = p
            if !filter.peerNames.isEmpty { unresolvedPeerNames = filter.resolvePeerNames(try CaptureFile.open(path: p)) }
            reader = try CaptureFile.open(following: p, shouldStop: stop)
        }
        self.filter = filter
        analyzer = Self.analyzer(decode, filter: filter)
    }

    /// The analyzer a session uses, for records that come from elsewhere (the live tap).
    public static func analyzer(_ decode: DecodeSettings, filter: FrameFilter = FrameFilter()) -> Analyzer {
        let analyzer = Analyzer(naming: decode.naming || filter.needsNaming)
        analyzer.decoder.knownKeys = decode.keys
        analyzer.decoder.crackProgress = decode.crackProgress
        analyzer.decoder.moduleConfiguration = decode.modules
        if let db = decode.gatt { analyzer.gatt.importDatabase(db) }
        analyzer.plugins = decode.plugins.map { PluginSet($0) }
        analyzer.plugins?.vendorKeys = decode.vendorKeys
        return analyzer
    }

    /// One record analysed into `frame`; true when the filter passes it. For commands that
    /// choose record by record what to decode (`convert` copies most records as read).
    public func analyze(_ record: CaptureRecord, into frame: inout AnalyzedFrame) -> Bool {
        analyzer.analyze(record, into: &frame)
        guard filter.isEmpty || filter.matches(frame, analyzer: analyzer) else { return false }
        matched += 1
        return true
    }

    /// Each record the filter passes, analysed, in file order (the analyzer sees every record:
    /// connection state needs them all). `stopEarly`: stop once the filter can pass no later
    /// record (a frame range), for commands whose output is only the records passed.
    /// Inlinable: the renderer's closure is inlined into this loop, as it was when every
    /// command wrote the loop itself.
    @inlinable
    public func forEach(stopEarly: Bool = false, _ body: (inout AnalyzedFrame) throws -> Void) rethrows {
        var frame = AnalyzedFrame(decoded: DecodedFrame(record: CaptureRecord.empty))
        let filtering = !filter.isEmpty
        let reader = self.reader, analyzer = self.analyzer
        var read = 0, passed = 0
        defer { records += read; matched += passed }
        while let record = reader.next() {
            read += 1
            analyzer.analyze(record, into: &frame)
            if !filtering || filter.matches(frame, analyzer: analyzer) {
                passed += 1
                try body(&frame)
            }
            if record.frame & 0xFFFF == 0 { progress?(reader.bytesRead, reader.fileSize) }
            if stopEarly && filter.isExhausted(after: record.frame) { break }
        }
    }

    /// Each record as read, not decoded (copying commands that decode only when asked).
    public func forEachRecord(_ body: (CaptureRecord) throws -> Void) rethrows {
        while let record = reader.next() {
            records += 1
            try body(record)
            if record.frame & 0xFFFF == 0 { progress?(reader.bytesRead, reader.fileSize) }
        }
    }

    /// The `info` summary. Without a filter, records are counted by their layers alone
    /// (`ProtocolDecoder.layers(of:)`: advertising reports proved whole by their lengths build
    /// no frame); with one, each record is analysed and those passed are counted, with the
    /// connections they belong to.
    public func summarize() -> (summary: CaptureSummary, connections: Set<ConnectionID>?) {
        var summary = CaptureSummary()
        guard filtering else {
            // btsnoop, the common case, through its concrete type: `next()` called directly.
            if let b = reader as? BTSnoopReader { tally(b, &summary) } else { tally(reader, &summary) }
            return (summary, nil)
        }
        var connections: Set<ConnectionID> = []
        forEach { frame in
            summary.add(frame.decoded)
            if let c = frame.decoded.connection, let info = decoder.connection(adapter: frame.record.adapter, handle: c) {
                connections.insert(ConnectionID(info))
            }
        }
        return (summary, connections)
    }

    @inline(__always)
    private func tally<R: CaptureReader>(_ reader: R, _ summary: inout CaptureSummary) {
        var frame = DecodedFrame(record: CaptureRecord.empty)
        while let record = reader.next() {
            records += 1
            let found = decoder.layers(of: record, scratch: &frame)
            summary.add(record, layers: found.layers, hasErrors: found.damaged)
            if record.frame & 0xFFFF == 0 { progress?(reader.bytesRead, reader.fileSize) }
        }
    }
}
