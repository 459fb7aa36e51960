import BluesiftWire

/// Why a file cannot be read at all. These end the run with exit code 2.
public struct CaptureError: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let notFound = Code(rawValue: "not_found")
        public static let isDirectory = Code(rawValue: "is_directory")
        public static let unreadable = Code(rawValue: "unreadable")
        public static let notACapture = Code(rawValue: "not_a_capture")
        public static let unsupported = Code(rawValue: "unsupported")
        public static let writeFailed = Code(rawValue: "write_failed")
    }
    public var code: Code
    public var path: String
    public var message: String

    public init(_ code: Code, path: String, _ message: String) {
        self.code = code; self.path = path; self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

/// Container format and link type, as detected from the content.
public struct CaptureFormat: Sendable, Hashable, CustomStringConvertible {
    public enum Container: String, Sendable { case btsnoop, pcap, pcapng, packetlogger, btsnooz }
    public var container: Container
    /// btsnoop datalink (1001/1002/2001) or pcap LINKTYPE; 0 for PacketLogger.
    public var datalink: UInt32
    public var byteOrder: Endianness
    public var datalinkName: String
    /// How the file was compressed, when it was (read through a stream).
    public var compression: Compression?

    public init(
        container: Container, datalink: UInt32, byteOrder: Endianness = .big, datalinkName: String,
        compression: Compression? = nil
    ) {
        self.container = container; self.datalink = datalink; self.byteOrder = byteOrder; self.datalinkName = datalinkName
        self.compression = compression
    }

    public var description: String { "\(container.rawValue) (\(datalinkName))" + (compression.map { ", \($0.rawValue)-compressed" } ?? "") }

    /// H4 records (btsnoop 1002, DLT 187/201): an unnamed record's `sourceType` is its H4
    /// indicator, which writers of H4 may write back.
    public var isH4: Bool {
        container == .btsnoop ? datalink == 1002 : [LinkType.h4, LinkType.h4WithPHDR].contains(datalink)
    }
}

/// Streams records one at a time. Each returned record borrows the reader's buffer until
/// the next call. A damaged tail ends the stream and adds a warning; it never throws.
public protocol CaptureReader: AnyObject {
    var format: CaptureFormat { get }
    /// The next record, or nil at the end of the file.
    func next() -> CaptureRecord?
    /// Damage seen so far ("file ends mid-record at offset 1234: 12 of 40 bytes").
    var warnings: [String] { get }
    /// Bytes consumed so far, for progress.
    var bytesRead: Int { get }
    /// File size in bytes.
    var fileSize: Int { get }
}
