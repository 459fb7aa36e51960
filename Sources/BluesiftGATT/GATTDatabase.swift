import BluesiftWire

/// A GATT database as rebuilt from discovery traffic or imported from JSON
/// (Core 5.4 Vol 3 Part G §3: service, include, characteristic and descriptor declarations).
public struct GATTDatabase: Sendable, Equatable {
    public struct Descriptor: Sendable, Equatable {
        public var handle: UInt16
        public var uuid: BluetoothUUID
        public init(handle: UInt16, uuid: BluetoothUUID) { self.handle = handle; self.uuid = uuid }
    }

    public struct Characteristic: Sendable, Equatable {
        /// Declaration handle (0x2803 attribute).
        public var handle: UInt16
        public var valueHandle: UInt16
        public var uuid: BluetoothUUID
        public var properties: UInt8
        public var descriptors: [Descriptor] = []
        public init(handle: UInt16, valueHandle: UInt16, uuid: BluetoothUUID, properties: UInt8) {
            self.handle = handle; self.valueHandle = valueHandle; self.uuid = uuid; self.properties = properties
        }
    }

    public struct Service: Sendable, Equatable {
        public var start: UInt16
        public var end: UInt16
        public var uuid: BluetoothUUID
        public var primary: Bool
        public var includes: [UInt16] = []
        public var characteristics: [Characteristic] = []
        public init(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool) {
            self.start = start; self.end = end; self.uuid = uuid; self.primary = primary
        }
    }

    /// Characteristic property bits (Core 5.4 Vol 3 Part G §3.3.1.1), in JSON order.
    public static let propertyNames: [(bit: UInt8, name: String)] = [
        (0x01, "broadcast"), (0x02, "read"), (0x04, "write_without_response"), (0x08, "write"),
        (0x10, "notify"), (0x20, "indicate"), (0x40, "authenticated_signed_writes"), (0x80, "extended_properties")
    ]

    public var services: [Service] = []
    /// Characteristics declared outside every discovered service (declarations read without
    /// primary service discovery), by handle; a service discovered later takes them in.
    public var undiscovered: [Characteristic] = []

    public init(services: [Service] = [], undiscovered: [Characteristic] = []) { self.services = services; self.undiscovered = undiscovered }

    public var isEmpty: Bool { services.isEmpty && undiscovered.isEmpty }

    /// What a handle is, in GATT terms.
    public struct Location: Sendable, Equatable {
        public var service: BluetoothUUID
        public var characteristic: BluetoothUUID?
        public var descriptor: BluetoothUUID?
        /// 0 for the first characteristic with this UUID in its service, 1 for the next…
        public var instance: Int
        /// The attribute is the characteristic's declaration, not its value.
        public var isDeclaration: Bool
        /// The attribute is the characteristic's value (not its declaration nor a descriptor,
        /// discovered or not).
        public var isValue = true
    }

    public func locate(_ handle: UInt16) -> Location? {
        guard let s = services.first(where: { $0.start <= handle && handle <= $0.end }) else { return nil }
        var loc = Location(service: s.uuid, characteristic: nil, descriptor: nil, instance: 0, isDeclaration: handle == s.start, isValue: false)
        let chars = s.characteristics
        for (i, c) in chars.enumerated() {
            // In Int: a service that ends at 0xffff (the last one, often) has no next handle.
            let next = i + 1 < chars.count ? Int(chars[i + 1].handle) : Int(s.end) + 1
            guard c.handle <= handle && Int(handle) < next else { continue }
            loc.characteristic = c.uuid
            // Earlier characteristics with this UUID (counted here, not in a table built per call).
            var instance = 0
            for j in 0..<i where chars[j].uuid == c.uuid { instance += 1 }
            loc.instance = instance
            loc.isDeclaration = handle == c.handle
            loc.isValue = handle == c.valueHandle
            if handle != c.handle && handle != c.valueHandle {
                loc.descriptor = c.descriptors.first(where: { $0.handle == handle })?.uuid
            }
            return loc
        }
        return loc
    }

    /// The value handle of the `instance`-th characteristic `characteristic` in service `service`.
    public func valueHandle(service: BluetoothUUID, characteristic: BluetoothUUID, instance: Int = 0) -> UInt16? {
        var n = 0
        for s in services where s.uuid == service {
            for c in s.characteristics where c.uuid == characteristic {
                if n == instance { return c.valueHandle }
                n += 1
            }
        }
        return nil
    }

    /// Handle of a descriptor (e.g. 0x2902 CCCD) of a characteristic.
    public func descriptorHandle(
        service: BluetoothUUID, characteristic: BluetoothUUID, instance: Int = 0,
        descriptor: BluetoothUUID
    ) -> UInt16? {
        var n = 0
        for s in services where s.uuid == service {
            for c in s.characteristics where c.uuid == characteristic {
                if n == instance { return c.descriptors.first(where: { $0.uuid == descriptor })?.handle }
                n += 1
            }
        }
        return nil
    }

    /// Drops everything in a handle range (Service Changed, Core 5.4 Vol 3 Part G §7.1).
    public mutating func invalidate(from start: UInt16, to end: UInt16) {
        services.removeAll { $0.start <= end && $0.end >= start }
        undiscovered.removeAll { $0.handle >= start && $0.handle <= end }
    }

    // MARK: building

    public mutating func addService(_ s: Service) {
        if let i = services.firstIndex(where: { $0.start == s.start }) {
            services[i].end = s.end; services[i].uuid = s.uuid; services[i].primary = s.primary
        } else {
            services.append(s)
            services.sort { $0.start < $1.start }
        }
        let inside = undiscovered.filter { s.start <= $0.handle && $0.handle <= s.end }
        guard !inside.isEmpty else { return }
        undiscovered.removeAll { s.start <= $0.handle && $0.handle <= s.end }
        for c in inside { addCharacteristic(c) }
    }

    public mutating func addCharacteristic(_ c: Characteristic) {
        guard let si = services.firstIndex(where: { $0.start <= c.handle && c.handle <= $0.end }) else {
            Self.insert(c, into: &undiscovered)
            return
        }
        if let ci = services[si].characteristics.firstIndex(where: { $0.handle == c.handle }) {
            let descriptors = services[si].characteristics[ci].descriptors
            services[si].characteristics[ci] = c
            services[si].characteristics[ci].descriptors = descriptors
        } else {
            services[si].characteristics.append(c)
            services[si].characteristics.sort { $0.handle < $1.handle }
        }
    }

    /// Inserts or replaces (by declaration handle, descriptors kept) in handle order.
    static func insert(_ c: Characteristic, into list: inout [Characteristic]) {
        if let ci = list.firstIndex(where: { $0.handle == c.handle }) {
            let descriptors = list[ci].descriptors
            list[ci] = c
            list[ci].descriptors = descriptors
        } else {
            list.append(c)
            list.sort { $0.handle < $1.handle }
        }
    }

    public mutating func addInclude(serviceHandle: UInt16, includedStart: UInt16) {
        guard let si = services.firstIndex(where: { $0.start <= serviceHandle && serviceHandle <= $0.end }) else { return }
        if !services[si].includes.contains(includedStart) { services[si].includes.append(includedStart) }
    }

    /// Find Information results: attributes that are not declarations become descriptors of
    /// the characteristic they follow.
    public mutating func addAttribute(handle: UInt16, uuid: BluetoothUUID) {
        if let s = uuid.shortValue, (0x2800...0x2803).contains(s) { return }
        addDescriptorIfOwned(handle: handle, uuid: uuid)
    }

    mutating func addDescriptorIfOwned(handle: UInt16, uuid: BluetoothUUID) {
        if let si = services.firstIndex(where: { $0.start <= handle && handle <= $0.end }) {
            Self.addDescriptor(handle: handle, uuid: uuid, to: &services[si].characteristics)
        } else {
            Self.addDescriptor(handle: handle, uuid: uuid, to: &undiscovered)
        }
    }

    /// A descriptor belongs to the characteristic it follows, after that one's value.
    static func addDescriptor(handle: UInt16, uuid: BluetoothUUID, to chars: inout [Characteristic]) {
        guard let ci = chars.lastIndex(where: { $0.handle < handle }) else { return }
        let c = chars[ci]
        guard handle > c.valueHandle else { return }
        if !c.descriptors.contains(where: { $0.handle == handle }) {
            chars[ci].descriptors.append(Descriptor(handle: handle, uuid: uuid))
            chars[ci].descriptors.sort { $0.handle < $1.handle }
        }
    }
}
