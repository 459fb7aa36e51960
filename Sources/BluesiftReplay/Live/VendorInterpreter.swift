/// Field-aware view of vendor frames, supplied by the plugin layer. The replayer only needs
/// to turn raw values into messages, know which fields are volatile, and rebuild a frame.
public protocol VendorInterpreter: AnyObject {
    /// Reassembles (and splits) the values written to or notified on one characteristic into
    /// vendor messages, or nil when no plugin covers that characteristic.
    func messages(service: String?, characteristic: String?, notify: Bool, values: [[UInt8]]) -> [VendorMessageView]?
    /// Builds a frame from a message name and field values; recomputes lengths and checksums.
    func encode(plugin: String?, service: String?, characteristic: String?, message: String, fields: [String: String]) throws -> [UInt8]
}

public struct VendorMessageView: Sendable, Equatable {
    public var plugin: String
    public var message: String
    /// Field name → printable value, in layout order.
    public var fields: [(name: String, value: String)]
    public var volatile: Set<String>
    /// "ok", "bad", or nil when the layout has no checksum.
    public var checksum: String?
    public var bytes: [UInt8]

    public init(
        plugin: String, message: String, fields: [(name: String, value: String)], volatile: Set<String> = [],
        checksum: String? = nil, bytes: [UInt8]
    ) {
        self.plugin = plugin; self.message = message; self.fields = fields; self.volatile = volatile
        self.checksum = checksum; self.bytes = bytes
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.plugin == b.plugin && a.message == b.message && a.bytes == b.bytes && a.checksum == b.checksum
            && a.fields.map(\.name) == b.fields.map(\.name) && a.fields.map(\.value) == b.fields.map(\.value)
    }

    /// "sport_count_reply count=23"
    public var summary: String {
        ([message] + fields.map { "\($0.name)=\($0.value)" }).joined(separator: " ")
    }
}
