import BluesiftWire

/// Entry points: open any supported capture, detected by content, never by extension.
public enum CaptureFile {
    /// Opens `path`, sniffs the magic and returns the matching streaming reader.
    /// Throws `.notFound`, `.isDirectory`, `.unreadable`, `.notACapture` or `.unsupported`.
    public static func open(path: String) throws(CaptureError) -> any CaptureReader {
        throw CaptureError(.unsupported, path: path, "not implemented yet")  // STUB: capture helper
    }
}

/// Output formats for `convert`.
public enum CaptureOutputFormat: String, Sendable, CaseIterable {
    case btsnoop        // datalink 1002 (H4)
    case btsnoopMonitor // datalink 2001 (Linux monitor)
    case pcap           // DLT 201
    case pcapng         // DLT 201
}

/// Writes records to a temporary file and renames it into place on `finish()`, so an
/// interrupted run never leaves a half-written file under the final name.
public protocol CaptureWriter: AnyObject {
    /// Records whose kind the format cannot hold are skipped and counted.
    func write(_ record: CaptureRecord) throws(CaptureError)
    func finish() throws(CaptureError)
    var skipped: Int { get }
}

extension CaptureFile {
    public static func writer(path: String, format: CaptureOutputFormat) throws(CaptureError) -> any CaptureWriter {
        throw CaptureError(.unsupported, path: path, "not implemented yet")  // STUB: capture helper
    }
}
