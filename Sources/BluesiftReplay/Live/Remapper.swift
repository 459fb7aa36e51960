import BluesiftWire
import BluesiftGATT

/// Maps each recorded handle to the live device's handle through its GATT identity
/// (service, characteristic, instance, descriptor).
public struct Remapper: Sendable {
    public struct Remap: Sendable, Equatable, Codable {
        public var from: Int
        public var to: Int
        public var service: String?
        public var characteristic: String?
        public var descriptor: String?
    }

    public let live: GATTDatabase
    /// Recorded handle → live handle, for every target seen in the script.
    public private(set) var map: [Int: Int] = [:]
    /// Targets whose identity the live database does not have (description of each).
    public private(set) var unresolved: [String] = []

    public init(script: ReplayScript, live: GATTDatabase) {
        self.live = live
        var targets: [ReplayScript.Target] = []
        for s in script.steps {
            if let t = s.target { targets.append(t) }
            targets += s.expect.notifications.map(\.target)
        }
        for t in targets where map[t.handle] == nil {
            if let h = Self.resolve(t, in: live) {
                map[t.handle] = Int(h)
            } else if t.characteristic != nil {
                let what = Self.describe(t)
                if !unresolved.contains(what) { unresolved.append(what) }
            }
        }
    }

    public static func describe(_ t: ReplayScript.Target) -> String {
        var s = "characteristic \(t.characteristic ?? "?") (instance \(t.instance ?? 0)) in service \(t.service ?? "?")"
        if let d = t.descriptor { s = "descriptor \(d) of " + s }
        return s
    }

    static func resolve(_ t: ReplayScript.Target, in db: GATTDatabase) -> UInt16? {
        guard let s = t.service.flatMap(BluetoothUUID.init(string:)),
            let c = t.characteristic.flatMap(BluetoothUUID.init(string:))
        else { return nil }
        if let d = t.descriptor.flatMap(BluetoothUUID.init(string:)) {
            return db.descriptorHandle(service: s, characteristic: c, instance: t.instance ?? 0, descriptor: d)
        }
        return db.valueHandle(service: s, characteristic: c, instance: t.instance ?? 0)
    }

    /// False when the target names a characteristic the live database does not have.
    public func resolves(_ t: ReplayScript.Target) -> Bool {
        t.characteristic == nil || map[t.handle] != nil
    }

    /// The live handle for a recorded target: remapped when the identity is known, else as recorded.
    public func handle(for t: ReplayScript.Target) -> UInt16 { UInt16(truncatingIfNeeded: map[t.handle] ?? t.handle) }

    /// The recorded handles that moved, for the report.
    public func remapped(script: ReplayScript) -> [Remap] {
        var seen = Set<Int>(), out: [Remap] = []
        for s in script.steps {
            for t in [s.target].compactMap({ $0 }) + s.expect.notifications.map(\.target)
            where !seen.contains(t.handle) {
                seen.insert(t.handle)
                if let to = map[t.handle], to != t.handle {
                    out.append(Remap(from: t.handle, to: to, service: t.service, characteristic: t.characteristic, descriptor: t.descriptor))
                }
            }
        }
        return out.sorted { $0.from < $1.from }
    }
}
