/// A plugin rejected at load time: `FILE:LINE: message` (line 0 when unknown).
public struct PluginError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var message: String

    public init(path: String, line: Int, message: String) {
        self.path = path; self.line = line; self.message = message
    }

    public var description: String { line > 0 ? "\(path):\(line): \(message)" : "\(path): \(message)" }
}

/// Thrown by `Plugin.encode`.
public struct PluginEncodeError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
