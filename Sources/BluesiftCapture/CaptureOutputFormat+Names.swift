/// The output formats as the command line names them (`convert --to`), and as a path's
/// extension says them.
extension CaptureOutputFormat {
    public var name: String {
        switch self {
        case .btsnoop: return "btsnoop"
        case .btsnoopMonitor: return "btsnoop-monitor"
        case .pcap: return "pcap"
        case .pcapng: return "pcapng"
        }
    }

    public init?(name: String) {
        guard let f = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = f
    }

    /// .pcapng, .pcap, .btsnoop/.log/.cfa (btsnoop H4); nil for any other.
    public static func guess(path: String) -> CaptureOutputFormat? {
        let lower = path.lowercased()
        if lower.hasSuffix(".pcapng") { return .pcapng }
        if lower.hasSuffix(".pcap") { return .pcap }
        if lower.hasSuffix(".btsnoop") || lower.hasSuffix(".log") || lower.hasSuffix(".cfa") { return .btsnoop }
        return nil
    }
}
