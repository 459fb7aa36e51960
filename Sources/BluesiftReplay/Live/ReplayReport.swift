import Foundation

/// What a replay found, step by step. Written with `--report FILE.json`; also when the run
/// ends early (exit 3), with `complete: false` and the fault.
public struct ReplayReport: Codable, Sendable {
    public struct Summary: Codable, Sendable, Equatable {
        /// Steps run (refused and not-run steps are not counted).
        public var steps = 0
        public var matched = 0
        public var mismatched = 0
        public var missing = 0
        public var unexpected = 0
        /// Steps not sent: their characteristic is not on the device (under --force).
        public var skipped = 0
    }

    /// Notifications and indications received during the run, and those the host could not
    /// buffer (a flooding device): counted, never held without bound.
    public struct NotificationCount: Codable, Sendable, Equatable {
        public var received = 0
        /// Those not buffered by the host, and those the kernel dropped (`kernelDropped`).
        public var dropped = 0
        /// Of `dropped`, packets the kernel dropped before the host read them (hci:N: the user
        /// channel's receive buffer was full); nil where the transport cannot tell.
        public var kernelDropped: Int?
        /// That receive buffer: bytes, as the kernel reports SO_RCVBUF.
        public var receiveBuffer: Int?
    }

    public struct Difference: Codable, Sendable, Equatable {
        /// mismatch, missing or unexpected.
        public var status: String
        /// response, value, mtu or notification.
        public var what: String
        public var handle: Int?
        /// Vendor message and field, when a plugin decoded the answer.
        public var message: String?
        public var field: String?
        public var expected: String?
        public var got: String?
    }

    public struct Step: Codable, Sendable {
        public var index: Int
        public var frame: Int
        public var kind: String
        public var op: String?
        public var handle: Int?
        public var liveHandle: Int?
        public var service: String?
        public var characteristic: String?
        public var sent: String?
        /// The sent frame decoded by a plugin ("sport_count month=6 day=20").
        public var vendor: String?
        /// match, mismatch, missing, unexpected, skipped (not sent: not on the device), refused,
        /// or interrupted (sent, then the run failed).
        public var status: String
        public var reason: String?
        public var differences: [Difference] = []
        /// Answers seen, decoded where a plugin knows them.
        public var answers: [String] = []
        /// Differences and answers beyond the first `ReplayReport.listLimit` of a step, counted only.
        public var unlisted: Int?
        public var elapsedMs: Double?
        /// Set when this step's ATT error made the replay pair and retry it.
        public var security: String?
        /// `emulate`: how the request was matched to the recording (bytes, fields, recorded
        /// order), absent when it was not.
        public var matchedBy: String?
    }

    public struct Fault: Codable, Sendable {
        public var code: String
        public var message: String
        public var step: Int?
        public init(code: String, message: String, step: Int?) { self.code = code; self.message = message; self.step = step }
    }

    public var summary = Summary()
    public var notifications = NotificationCount()
    public var remapped: [Remapper.Remap] = []
    public var steps: [Step] = []
    public var device: String?
    /// The transport it ran over, as given (tcp:…, hci:0, l2cap:0).
    public var transport: String?
    public var fault: Fault?
    public var complete = false
    /// Steps whose characteristic the device lacks were sent to their recorded handles.
    public var rawHandles = false
    /// The link's security when the replay secured it (absent: never encrypted).
    public var security: ReplaySecurity?
    /// "emulate" for the report of an emulated session (steps are the app's requests);
    /// absent for a replay.
    public var mode: String?
    /// `emulate`: sessions (connections) served.
    public var sessions: Int?

    public init() {}

    /// Differences (and answers) listed per step; a flood beyond it is counted in `unlisted`.
    public static let listLimit = 100

    /// Keeps the first `listLimit` differences and answers of a step, counting the rest.
    static func capped(_ s: inout Step) {
        let extra = max(0, s.differences.count - listLimit) + max(0, s.answers.count - listLimit)
        guard extra > 0 else { return }
        if s.differences.count > listLimit { s.differences.removeSubrange(listLimit...) }
        if s.answers.count > listLimit { s.answers.removeSubrange(listLimit...) }
        s.unlisted = (s.unlisted ?? 0) + extra
    }

    /// 0 every step matched, 1 differences, 2 the script cannot be replayed, 3 transport or device failure.
    public var exitCode: Int32 {
        if let f = fault { return f.code == "refused" ? 2 : 3 }
        return summary.mismatched + summary.missing + summary.unexpected + summary.skipped == 0 ? 0 : 1
    }

    public func encoded() throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.keyEncodingStrategy = .convertToSnakeCase
        var d = try e.encode(self)
        d.append(0x0A)
        return d
    }

    mutating func tally() {
        var s = Summary()
        for st in steps {
            switch st.status {
            case "match": s.matched += 1
            case "mismatch": s.mismatched += 1
            case "missing": s.missing += 1
            case "unexpected": s.unexpected += 1
            case "skipped": s.skipped += 1; continue
            default: continue
            }
            s.steps += 1
        }
        summary = s
    }
}
