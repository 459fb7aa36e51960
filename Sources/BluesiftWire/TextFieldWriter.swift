/// Renders fields as an indented tree for `dump -v`:
///     att
///       opcode: 18
///       name: Write Request
public struct TextFieldWriter: FieldSink {
    public var lines: [String] = []
    var depth: Int
    var arrayIndex: [Int?] = []

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

    public mutating func int(_ key: FieldKey, _ value: Int) { line(key, String(value)) }
    public mutating func uint(_ key: FieldKey, _ value: UInt64) { line(key, String(value)) }
    public mutating func bool(_ key: FieldKey, _ value: Bool) { line(key, value ? "true" : "false") }
    public mutating func string(_ key: FieldKey, _ value: String) { line(key, value) }
    public mutating func hex(_ key: FieldKey, _ bytes: UnsafeRawBufferPointer) {
        line(key, bytes.isEmpty ? "(empty)" : Hex.string(bytes, separator: " "))
    }
    public mutating func null(_ key: FieldKey) { line(key, "-") }

    public mutating func beginObject(_ key: FieldKey) {
        lines.append(pad + label(key)); depth += 1; arrayIndex.append(nil)
    }
    public mutating func endObject() { depth -= 1; arrayIndex.removeLast() }
    public mutating func beginArray(_ key: FieldKey) {
        lines.append(pad + label(key)); depth += 1; arrayIndex.append(0)
    }
    public mutating func endArray() { depth -= 1; arrayIndex.removeLast() }
}
