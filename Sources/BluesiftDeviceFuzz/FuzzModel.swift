import BluesiftWire
import BluesiftReplay
import BluesiftPlugins

/// One thing sent in a variant: a write or read as the replayer sends it, a raw ATT PDU, or a
/// queue of Prepare Write Requests.
public struct FuzzAction: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case write, read
        /// `opcode`, the target's live handle, then `value`, sent as is (no MTU check).
        case raw
        /// `count` Prepare Write Requests of `value` at growing offsets, then Execute Write.
        case prepareQueue = "prepare_queue"
    }
    public var kind: Kind
    /// Writes: request, command, signed, prepared.
    public var op: String?
    public var target: ReplayScript.Target
    /// Hex.
    public var value: String
    public var opcode: Int?
    public var count: Int?
    /// Wait before sending, as recorded (capped by the run's pacing).
    public var delayMs: Double
    /// The script step it came from (nil: the fuzzer made it up).
    public var step: Int?
    /// What was changed in it, when anything was.
    public var mutation: String?

    public init(
        kind: Kind, op: String? = nil, target: ReplayScript.Target, value: String = "", opcode: Int? = nil, count: Int? = nil,
        delayMs: Double = 0, step: Int? = nil, mutation: String? = nil
    ) {
        self.kind = kind; self.op = op; self.target = target; self.value = value; self.opcode = opcode; self.count = count
        self.delayMs = delayMs; self.step = step; self.mutation = mutation
    }

    /// "write (request) 36f5 a5 06 03 06 ff 5c".
    public var text: String {
        var s = kind.rawValue
        if let op { s += " (\(op))" }
        if let o = opcode { s += " opcode \(Hex.fixed(UInt64(o), width: 2))" }
        s += " " + (target.characteristic.map { c in target.descriptor.map { "\(c)/\($0)" } ?? c } ?? Hex.fixed(UInt64(target.handle), width: 4))
        if let c = count { s += " ×\(c)" }
        if !value.isEmpty { s += " " + value }
        return s
    }
}

/// What a variant changed: the layer, a line, and for plugin mutations the fields by name.
public struct FuzzMutation: Codable, Sendable, Equatable {
    /// plugin, att, sequence, blind.
    public var layer: String
    public var summary: String
    public var message: String?
    /// Field name → the value sent.
    public var fields: [String: String]?
    public init(layer: String, summary: String, message: String? = nil, fields: [String: String]? = nil) {
        self.layer = layer; self.summary = summary; self.message = message; self.fields = fields
    }
}

/// A mutated write sequence, sent on a fresh connection after the recorded set-up.
public struct FuzzVariant: Codable, Sendable {
    public var actions: [FuzzAction]
    public var mutations: [FuzzMutation]
    /// For a plugin mutation: how to rebuild it with fewer mutated fields (field minimisation).
    var rebuild: PluginRebuild?
    public init(actions: [FuzzAction], mutations: [FuzzMutation]) { self.actions = actions; self.mutations = mutations }

    enum CodingKeys: String, CodingKey { case actions, mutations }
}

/// The frame a plugin mutation re-encoded, kept so that fewer of its fields can be mutated.
struct PluginRebuild: Sendable {
    var frame: Int
    var fields: [String: (PluginValue, String)]
}

/// How the device reacted.
public struct FuzzReaction: Codable, Sendable, Equatable, Hashable {
    /// disconnect, timeout, reset, error, rejected_frame.
    public var kind: String
    /// Disconnect/reset: the HCI reason; error: the ATT error code.
    public var code: Int?
    public var codeName: String?
    /// Error: the request and characteristic it answered; rejected_frame: message and why.
    public var detail: String?

    /// What makes two findings the same.
    /// (An error or a rejected frame with what it answered; a disconnection, reset or timeout
    /// by its reason alone: what changed at a reset differs from one reset to the next.)
    public var signature: String {
        var s = kind
        if let c = code { s += " " + Hex.fixed(UInt64(c), width: 2) }
        if let d = detail, kind == "error" || kind == "rejected_frame" { s += " " + d }
        return s
    }

    /// "disconnect: Remote User Terminated Connection (0x13)".
    public var text: String {
        var s = kind.replacingOccurrences(of: "_", with: " ")
        if let c = code { s += ": \(codeName ?? "code") (\(Hex.fixed(UInt64(c), width: 2)))" }
        if let d = detail { s += (code == nil ? ": " : ", ") + d }
        return s
    }
}

/// One distinct reaction, minimised, with the rate at which the minimised sequence reproduces it.
public struct FuzzFinding: Codable, Sendable {
    public var id: Int
    public var reaction: FuzzReaction
    public var signature: String
    /// The variant (1-based) that first showed it.
    public var variant: Int
    public var seed: UInt64
    public var mutations: [FuzzMutation]
    /// The minimised sequence (after the recorded set-up).
    public var steps: [FuzzAction]
    /// Steps of the variant before minimisation.
    public var originalSteps: Int
    /// Runs of the minimised sequence, and how many showed the reaction again.
    public var runs: Int
    public var reproduced: Int
    /// Reproducer capture (btsnoop) and this finding's JSON, relative to the output folder.
    public var reproducer: String?
    public var json: String?
    /// Why a step of the reaction happened (e.g. the link was lost during step 2).
    public var at: Int?
}

/// The whole run, written as findings.json.
public struct FuzzSummary: Codable, Sendable {
    public var capture: String
    public var seed: UInt64
    public var blind: Bool
    public var variants: Int
    public var planned: Int
    public var connections: Int
    public var interrupted: Bool
    public var baseline: [String]
    public var findings: [FuzzFinding]
}
