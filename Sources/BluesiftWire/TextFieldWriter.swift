/// Renders fields as an indented tree for `dump -v`:
///     att
///       opcode: 0x12
///       name: Write Request
/// Codes and handles are shown in hex, as the summary line shows them.
public struct TextFieldWriter: FieldSink {
    public var lines: [String] = []
    var depth: Int
    var arrayIndex: [Int?] = []
    /// Inside a plugin's "vendor" object: field names are the plugin's, shown in decimal.
    var vendorDepth: Int?

    public init(depth: Int = 1) { self.depth = depth }

    var pad: String { String(repeating: "  ", count: depth) }

    mutating func label(_ key: FieldKey) -> String {
        if let last = arrayIndex.last, let i = last {
            arrayIndex[arrayIndex.count - 1] = i + 1
            return "[\(i)]"
        }
        return key.string
    }

    mutating func line(_ key: FieldKey, _ value: String) { lines.append(pad + label(key) + ": " + TerminalText.escape(value)) }

    public mutating func int(_ key: FieldKey, _ value: Int) {
        if value >= 0, vendorDepth == nil, let width = Self.hexWidth(key.string) {
            // A two-byte code (an HCI command opcode) in four digits: 0x0c03, as btmon shows it.
            line(key, Hex.fixed(UInt64(value), width: value > 0xFF ? max(width, 4) : width))
        } else {
            line(key, String(value))
        }
    }

    /// Keys whose values are codes or handles (hex in the summary line), and their digits.
    static func hexWidth(_ key: String) -> Int? {
        switch key {
        case "handle", "error_handle", "start", "end", "value_handle", "start_handle", "end_handle",
            "request_handle", "cid", "scid", "dcid", "psm", "ocf":
            4
        case "opcode", "subevent", "status", "reason", "error", "code", "ad_type", "type", "event_type",
            "flags", "pb", "bc", "command_opcode", "request_opcode", "properties", "smp_code",
            "auth_req", "initiator_key_distribution", "responder_key_distribution":
            2
        case "company_id": 4
        default: nil
        }
    }
    public mutating func uint(_ key: FieldKey, _ value: UInt64) { line(key, String(value)) }
    public mutating func bool(_ key: FieldKey, _ value: Bool) { line(key, value ? "true" : "false") }
    public mutating func string(_ key: FieldKey, _ value: String) { line(key, value) }
    public mutating func hex(_ key: FieldKey, _ bytes: UnsafeRawBufferPointer) {
        line(key, bytes.isEmpty ? "(empty)" : Hex.string(bytes, separator: " "))
    }
    public mutating func null(_ key: FieldKey) { line(key, "-") }

    public mutating func beginObject(_ key: FieldKey) {
        if vendorDepth == nil, key.string == "vendor" { vendorDepth = depth }
        lines.append(pad + label(key)); depth += 1; arrayIndex.append(nil)
    }
    public mutating func endObject() {
        depth -= 1; arrayIndex.removeLast()
        if vendorDepth == depth { vendorDepth = nil }
    }
    public mutating func beginArray(_ key: FieldKey) {
        lines.append(pad + label(key)); depth += 1; arrayIndex.append(0)
    }
    public mutating func endArray() { depth -= 1; arrayIndex.removeLast() }
}
