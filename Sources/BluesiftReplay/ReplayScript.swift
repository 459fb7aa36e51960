import Foundation
import BluesiftWire

/// An editable replay script: the ATT operations one connection performed, in order, with
/// what the device answered. Schema documented in docs/replay-script.md.
public struct ReplayScript: Codable, Sendable, Equatable {
    public static let currentVersion = 1

    public struct Source: Codable, Sendable, Equatable {
        public var capture: String
        public var connection: Int
        /// Peer address as recorded ("c0:ba:0d:00:00:01"), when the capture said it.
        public var peer: String?
        public var peerAddressType: String?
        public var peerName: String?
        public var mtu: Int?
        /// The recording shows SMP or encryption on this connection (absent: it does not).
        public var secured: Bool?

        public init(
            capture: String, connection: Int, peer: String? = nil, peerAddressType: String? = nil,
            peerName: String? = nil, mtu: Int? = nil, secured: Bool? = nil
        ) {
            self.capture = capture; self.connection = connection; self.peer = peer
            self.peerAddressType = peerAddressType; self.peerName = peerName; self.mtu = mtu; self.secured = secured
        }
    }

    /// The GATT identity of a handle, so it can be remapped on a device whose handles moved.
    public struct Target: Codable, Sendable, Equatable {
        public var handle: Int
        public var service: String?
        public var characteristic: String?
        /// 0 for the first characteristic with this UUID in the service, 1 for the next…
        public var instance: Int?
        /// Set when the handle is a descriptor (e.g. "2902" for a CCCD).
        public var descriptor: String?
    }

    public struct Notification: Codable, Sendable, Equatable {
        public var target: Target
        public var value: String
        /// Indication (confirmed) rather than notification.
        public var indication: Bool?
        /// Time after the step was sent.
        public var afterMs: Double
        /// Vendor message decoded by a plugin, informational.
        public var decoded: VendorSummary?
    }

    public struct Expect: Codable, Sendable, Equatable {
        /// "ok" (Write/Execute Write Response, MTU response), "error", or nil when none is due.
        public var response: String?
        public var errorCode: Int?
        public var errorName: String?
        /// Read value, or the MTU the server answered.
        public var value: String?
        public var mtu: Int?
        public var notifications: [Notification] = []
    }

    public struct VendorSummary: Codable, Sendable, Equatable {
        public var plugin: String
        public var message: String
        public var fields: [String: String]
    }

    public struct Step: Codable, Sendable, Equatable {
        /// mtu, subscribe, write, read.
        public var kind: String
        /// For writes: request, command, signed, prepared.
        public var op: String?
        public var target: Target?
        /// Hex bytes to send (writes, subscriptions).
        public var value: String?
        /// Instead of `value`: plugin message and field values; the plugin rebuilds the frame.
        public var message: String?
        public var fields: [String: String]?
        public var plugin: String?
        public var mtu: Int?
        /// Delay after the previous step, as recorded.
        public var delayMs: Double
        /// Capture frame the step came from.
        public var frame: Int
        public var expect: Expect
        /// Set when the step cannot be replayed faithfully, with the reason (e.g. truncated record).
        public var refuse: String?
        /// Signed writes carry a signature made with the recorded CSRK; flagged, sent as recorded.
        public var signed: Bool?
        public var decoded: VendorSummary?
    }

    public var version: Int
    public var source: Source
    public var steps: [Step]

    public init(source: Source, steps: [Step]) {
        self.version = Self.currentVersion
        self.source = source
        self.steps = steps
    }

    static let keyStrategy = JSONEncoder.KeyEncodingStrategy.convertToSnakeCase

    public func encoded() throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.keyEncodingStrategy = Self.keyStrategy
        var data = try e.encode(self)
        data.append(0x0A)
        return data
    }

    public static func decode(_ data: Data) throws -> ReplayScript {
        let d = JSONDecoder()
        d.keyDecodingStrategy = .convertFromSnakeCase
        return try d.decode(ReplayScript.self, from: data)
    }
}
