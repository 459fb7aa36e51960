import BluesiftWire

/// An HCI event as one type, decoded and encoded (Core 6.0 Vol 4 Part E §5.4.4: event code,
/// parameter length, parameters). Each reads its bytes through its borrowed `View` (the one
/// the analyzer reads too) and writes them itself; connection handles keep their 12 bits
/// (§5.4.2), the flags above them are dropped. The types are listed in `HCIEvents.all`.
public protocol HCIEvent: Sendable, Hashable {
    associatedtype View: HCIEventView
    static var code: HCIEventCode { get }
    func encodeParameters(into w: inout ByteWriter)
    /// The event read off its view (all fields, or the damage).
    init(view v: View) throws(DecodeError)
    init(parameters r: inout ByteReader) throws(DecodeError)
}

extension HCIEvent {
    public init(parameters r: inout ByteReader) throws(DecodeError) { try self.init(view: View(parameters: r.readRemaining())) }
}

/// An LE Meta event (§7.7.65): the subevent code leads its parameters; the view reads those after it.
public protocol HCILEMetaEvent: HCIEvent {
    static var subevent: HCILESubeventCode { get }
    func encodeSubeventParameters(into w: inout ByteWriter)
}

extension HCILEMetaEvent {
    public static var code: HCIEventCode { .leMeta }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(Self.subevent.rawValue)
        encodeSubeventParameters(into: &w)
    }
    public init(parameters r: inout ByteReader) throws(DecodeError) {
        let sub = try r.readUInt8("subevent code")
        guard sub == Self.subevent.rawValue else {
            throw DecodeError(code: .unexpected, offset: 0, message: "subevent \(Hex.fixed(UInt64(sub), width: 2)) is not \(Self.subevent.name)")
        }
        let event: Self
        do throws(DecodeError) { event = try Self(view: View(parameters: r.readRemaining())) } catch { throw error.shifted(1) }
        self = event
    }
}

extension HCIEvent {
    /// The event packet without the H4 indicator.
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 40)
        w.writeUInt8(Self.code.rawValue)
        w.writeUInt8(0)
        encodeParameters(into: &w)
        w.bytes[1] = UInt8(truncatingIfNeeded: w.count - 2)
        return w.bytes
    }

    /// Decodes an event packet; its parameters are read up to the declared length (bytes
    /// after them, within it, are left unread: later versions of an event append fields).
    public static func decode(_ packet: [UInt8]) throws(DecodeError) -> Self {
        let r = packet.withUnsafeBytes { p in
            Result { () throws(DecodeError) -> Self in
                var r = ByteReader(p)
                let c = try r.readUInt8("event code")
                guard c == code.rawValue else {
                    throw DecodeError(code: .unexpected, offset: 0, message: "event \(Hex.fixed(UInt64(c), width: 2)) is not \(code.name)")
                }
                var p = ByteReader(try r.readBytes(Int(try r.readUInt8("parameter length")), "parameters"))
                return try Self(parameters: &p)
            }
        }
        do { return try r.get() } catch { throw error.inLayer("hci") }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.3 Connection Complete
public struct HCIConnectionCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.connectionComplete
    public var status: UInt8
    public var handle: UInt16
    public var peer: BDAddr
    /// 0 SCO, 1 ACL.
    public var linkType: UInt8
    public var encryptionEnabled: UInt8
    public init(status: UInt8, handle: UInt16, peer: BDAddr, linkType: UInt8 = 1, encryptionEnabled: UInt8 = 0) {
        self.status = status; self.handle = handle; self.peer = peer; self.linkType = linkType; self.encryptionEnabled = encryptionEnabled
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeAddress(peer); w.writeUInt8(linkType); w.writeUInt8(encryptionEnabled)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!, peer: f.peer!, linkType: f.linkType!, encryptionEnabled: f.encryption!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// BD_ADDR after status and handle.
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(3) }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.peer = try p.readAddress("BD_ADDR")
            f.peerAddressType = .public
            f.linkType = try p.readUInt8("link type")
            f.encryption = try p.readUInt8("encryption enabled")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.4 Connection Request
public struct HCIConnectionRequestEvent: HCIEvent {
    public static let code = HCIEventCode.connectionRequest
    public var peer: BDAddr
    /// Class of Device (3 bytes).
    public var classOfDevice: UInt32
    public var linkType: UInt8
    public init(peer: BDAddr, classOfDevice: UInt32, linkType: UInt8 = 1) { self.peer = peer; self.classOfDevice = classOfDevice; self.linkType = linkType }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeAddress(peer); w.writeUInt16(UInt16(truncatingIfNeeded: classOfDevice)); w.writeUInt8(UInt8(truncatingIfNeeded: classOfDevice >> 16))
        w.writeUInt8(linkType)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(peer: f.peer!, classOfDevice: try v.classOfDevice(), linkType: try v.uint8(at: 9, "link type"))
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(0) }
        public static var readsAllParameters: Bool { false }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.peer = try p.readAddress("BD_ADDR")
        }
        public func classOfDevice() throws(DecodeError) -> UInt32 {
            let b = try bytes(at: 6, 3, "class of device")
            return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.5 Disconnection Complete
public struct HCIDisconnectionCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.disconnectionComplete
    public var status: UInt8
    public var handle: UInt16
    public var reason: UInt8
    public init(status: UInt8, handle: UInt16, reason: UInt8) { self.status = status; self.handle = handle; self.reason = reason }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(reason) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!, reason: f.reason!.rawValue)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.reason = HCIStatus(try p.readUInt8("reason"))
        }
    }
}

/// A view of an event led by a status and a connection handle; `All`: nothing follows them.
public struct HCIStatusHandleView<All: HCIEventViewCoverage>: HCIEventView {
    public let parameters: UnsafeRawBufferPointer
    public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
    public static var readsAllParameters: Bool { All.readsAll }
    public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
        var p = ByteReader(parameters)
        f.status = HCIStatus(try p.readUInt8("status"))
        f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
    }
}

/// Whether a shared view's fields describe every parameter of its event.
public protocol HCIEventViewCoverage { static var readsAll: Bool { get } }
public enum HCIReadsAll: HCIEventViewCoverage { public static var readsAll: Bool { true } }
public enum HCIReadsLeading: HCIEventViewCoverage { public static var readsAll: Bool { false } }

/// Core 6.0 Vol 4 Part E §7.7.6 Authentication Complete
public struct HCIAuthenticationCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.authenticationComplete
    public typealias View = HCIStatusHandleView<HCIReadsAll>
    public var status: UInt8
    public var handle: UInt16
    public init(status: UInt8, handle: UInt16) { self.status = status; self.handle = handle }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!)
    }
}

/// Core 6.0 Vol 4 Part E §7.7.7 Remote Name Request Complete. The name: UTF-8 up to its NUL,
/// in a 248-byte field (kept as sent).
public struct HCIRemoteNameRequestCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.remoteNameRequestComplete
    public var status: UInt8
    public var peer: BDAddr
    public var name: [UInt8]
    public init(status: UInt8, peer: BDAddr, name: [UInt8]) { self.status = status; self.peer = peer; self.name = name }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeAddress(peer); w.writeBytes(name) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, peer: f.peer!, name: Array(v.name))
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(1) }
        /// Where the name starts (after status and BD_ADDR).
        public static let nameOffset = 7
        public static var readsAllParameters: Bool { false }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.peer = try p.readAddress("BD_ADDR")
        }
        /// The name field (borrowed).
        public var name: UnsafeRawBufferPointer { rest(from: Self.nameOffset) }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.8 Encryption Change [v1]
public struct HCIEncryptionChangeEvent: HCIEvent {
    public static let code = HCIEventCode.encryptionChange
    public var status: UInt8
    public var handle: UInt16
    /// 0 off; 1 on (AES-CCM on LE).
    public var encryptionEnabled: UInt8
    public init(status: UInt8, handle: UInt16, encryptionEnabled: UInt8) {
        self.status = status; self.handle = handle; self.encryptionEnabled = encryptionEnabled
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(encryptionEnabled) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!, encryptionEnabled: f.encryption!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.encryption = try p.readUInt8("encryption enabled")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.8 Encryption Change [v2]: [v1] and the key size.
public struct HCIEncryptionChangeV2Event: HCIEvent {
    public static let code = HCIEventCode.encryptionChangeV2
    public var status: UInt8
    public var handle: UInt16
    public var encryptionEnabled: UInt8
    public var keySize: UInt8
    public init(status: UInt8, handle: UInt16, encryptionEnabled: UInt8, keySize: UInt8) {
        self.status = status; self.handle = handle; self.encryptionEnabled = encryptionEnabled; self.keySize = keySize
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(encryptionEnabled); w.writeUInt8(keySize)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, handle: f.handle!, encryptionEnabled: f.encryption!, keySize: f.keySize!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            try HCIEncryptionChangeEvent.View(parameters: parameters).read(into: &f, cut: cut)
            f.keySize = try uint8(at: 4, "key size")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.11 Read Remote Supported Features Complete
public struct HCIReadRemoteSupportedFeaturesCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.readRemoteSupportedFeaturesComplete
    public typealias View = HCIStatusHandleView<HCIReadsLeading>
    public var status: UInt8
    public var handle: UInt16
    /// LMP feature bits, little-endian.
    public var features: UInt64
    public init(status: UInt8, handle: UInt16, features: UInt64) { self.status = status; self.handle = handle; self.features = features }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt64(features) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        var r = ByteReader(v.parameters, at: 3)
        self.init(status: f.status!.rawValue, handle: f.handle!, features: try r.readUInt64(.little, "LMP features"))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.12 Read Remote Version Information Complete
public struct HCIReadRemoteVersionInformationCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.readRemoteVersionInformationComplete
    public typealias View = HCIStatusHandleView<HCIReadsLeading>
    public var status: UInt8
    public var handle: UInt16
    public var version: UInt8
    public var companyID: UInt16
    public var subversion: UInt16
    public init(status: UInt8, handle: UInt16, version: UInt8, companyID: UInt16, subversion: UInt16) {
        self.status = status; self.handle = handle; self.version = version; self.companyID = companyID; self.subversion = subversion
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeUInt8(version); w.writeUInt16(companyID); w.writeUInt16(subversion)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(
            status: f.status!.rawValue, handle: f.handle!, version: try v.uint8(at: 3, "version"),
            companyID: try v.uint16(at: 4, "company identifier"), subversion: try v.uint16(at: 6, "subversion"))
    }
}

/// Core 6.0 Vol 4 Part E §7.7.14 Command Complete
public struct HCICommandCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.commandComplete
    public var numPackets: UInt8
    public var opcode: HCICommandOpcode
    /// Status first for nearly every command.
    public var returnParameters: [UInt8]
    public init(numPackets: UInt8 = 1, opcode: HCICommandOpcode, returnParameters: [UInt8]) {
        self.numPackets = numPackets; self.opcode = opcode; self.returnParameters = returnParameters
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(numPackets); w.writeUInt16(opcode.rawValue); w.writeBytes(returnParameters)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(numPackets: f.numPackets!, opcode: HCICommandOpcode(f.commandOpcode!), returnParameters: Array(f.returnParameters!))
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// Addresses and keys in the return parameters, where the answered command lays them out.
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) {
            guard p.count >= 3 else { return }
            let first = out.count
            HCIFieldLayout.returnAddresses(HCICommandOpcode(UInt16(p[1]) | UInt16(p[2]) << 8), UnsafeRawBufferPointer(rebasing: p[3...]), into: &out)
            for i in first..<out.count { out[i] += 3 }
        }
        public static func keyRanges(in p: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)]) {
            guard p.count >= 4 else { return }
            let first = out.count
            HCIFieldLayout.returnKeys(HCICommandOpcode(UInt16(p[1]) | UInt16(p[2]) << 8), UnsafeRawBufferPointer(rebasing: p[3...]), into: &out)
            for i in first..<out.count { out[i].0 = out[i].0.lowerBound + 3..<out[i].0.upperBound + 3 }
        }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.numPackets = try p.readUInt8("num HCI command packets")
            let op = try p.readUInt16(.little, "command opcode")
            f.commandOpcode = op
            let ret = p.remaining
            f.returnParameters = ret
            // Nearly every command returns its status first; NOP (0x0000) returns nothing.
            if op != 0, let s = ret.first { f.status = HCIStatus(s) }
        }
    }

    /// The return parameters after the status byte, read as `T` (a command's `Return`).
    public func decodeReturn<T>(_ read: (inout ByteReader) throws(DecodeError) -> T) throws(DecodeError) -> T {
        let r = returnParameters.withUnsafeBytes { p in
            Result { () throws(DecodeError) -> T in
                var r = ByteReader(p)
                try r.skip(1, "status")
                return try read(&r)
            }
        }
        do { return try r.get() } catch { throw error.inLayer("hci") }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.15 Command Status
public struct HCICommandStatusEvent: HCIEvent {
    public static let code = HCIEventCode.commandStatus
    public var status: UInt8
    public var numPackets: UInt8
    public var opcode: HCICommandOpcode
    public init(status: UInt8, numPackets: UInt8 = 1, opcode: HCICommandOpcode) {
        self.status = status; self.numPackets = numPackets; self.opcode = opcode
    }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt8(numPackets); w.writeUInt16(opcode.rawValue) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, numPackets: f.numPackets!, opcode: HCICommandOpcode(f.commandOpcode!))
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.numPackets = try p.readUInt8("num HCI command packets")
            f.commandOpcode = try p.readUInt16(.little, "command opcode")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.16 Hardware Error
public struct HCIHardwareErrorEvent: HCIEvent {
    public static let code = HCIEventCode.hardwareError
    public var hardwareCode: UInt8
    public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(hardwareCode) }
    public init(view v: View) throws(DecodeError) { self.init(hardwareCode: try v.hardwareCode()) }
    public struct View: HCIUnreadEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static var readsAllParameters: Bool { false }
        public func hardwareCode() throws(DecodeError) -> UInt8 { try uint8(at: 0, "hardware code") }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.18 Role Change
public struct HCIRoleChangeEvent: HCIEvent {
    public static let code = HCIEventCode.roleChange
    public var status: UInt8
    public var peer: BDAddr
    /// 0 central, 1 peripheral.
    public var role: UInt8
    public init(status: UInt8, peer: BDAddr, role: UInt8) { self.status = status; self.peer = peer; self.role = role }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeAddress(peer); w.writeUInt8(role) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(status: f.status!.rawValue, peer: f.peer!, role: f.role!)
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(1) }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.peer = try p.readAddress("BD_ADDR")
            f.role = try p.readUInt8("new role")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.19 Number Of Completed Packets
public struct HCINumberOfCompletedPacketsEvent: HCIEvent {
    public static let code = HCIEventCode.numberOfCompletedPackets
    public struct Entry: Sendable, Hashable {
        public var handle: UInt16
        public var count: UInt16
        public init(handle: UInt16, count: UInt16) { self.handle = handle; self.count = count }
    }
    public var entries: [Entry]
    public init(entries: [Entry]) { self.entries = entries }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(UInt8(truncatingIfNeeded: entries.count))
        for e in entries { w.writeUInt16(e.handle); w.writeUInt16(e.count) }
    }
    public init(view v: View) throws(DecodeError) {
        _ = try v.fields()
        self.init(entries: (0..<v.count).map { v.entry($0) })
    }
    /// Num_Handles, then (handle, count) pairs, read where they lie.
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        /// The pairs present (a cut event holds fewer than it announces).
        public var count: Int { min(Int(parameters.first ?? 0), (parameters.count - 1) / 4) }
        /// Pair `i` (< `count`).
        public func entry(_ i: Int) -> Entry {
            let o = 1 + 4 * i
            return Entry(
                handle: (UInt16(parameters[o]) | UInt16(parameters[o + 1]) << 8) & 0x0FFF,
                count: UInt16(parameters[o + 2]) | UInt16(parameters[o + 3]) << 8)
        }
        /// A single pair's handle is the packet's; the pairs are read by `entry`.
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            let n = Int(try p.readUInt8("num handles"))
            if p.readableBytes < 4 * n, !cut {
                throw DecodeError(
                    code: .truncated, offset: p.readerIndex,
                    message: "num handles \(n): need \(4 * n) bytes, \(p.readableBytes) left")
            }
            if n == 1 { f.handle = try p.readUInt16(.little, "handle") & 0x0FFF }
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.23 Link Key Request
public struct HCILinkKeyRequestEvent: HCIEvent {
    public static let code = HCIEventCode.linkKeyRequest
    public var peer: BDAddr
    public init(peer: BDAddr) { self.peer = peer }
    public func encodeParameters(into w: inout ByteWriter) { w.writeAddress(peer) }
    public init(view v: View) throws(DecodeError) { self.init(peer: try v.fields().peer!) }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(0) }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.peer = try p.readAddress("BD_ADDR")
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.24 Link Key Notification
public struct HCILinkKeyNotificationEvent: HCIEvent {
    public static let code = HCIEventCode.linkKeyNotification
    public var peer: BDAddr
    public var linkKey: [UInt8]
    public var keyType: UInt8
    public init(peer: BDAddr, linkKey: [UInt8], keyType: UInt8) { self.peer = peer; self.linkKey = linkKey; self.keyType = keyType }
    public func encodeParameters(into w: inout ByteWriter) { w.writeAddress(peer); w.writeBytes(linkKey); w.writeUInt8(keyType) }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        self.init(peer: f.peer!, linkKey: Array(try v.bytes(at: 6, 16, "link key")), keyType: try v.uint8(at: 22, "key type"))
    }
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(0) }
        public static func keyRanges(in p: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)]) {
            out.append((6..<22, "Link Key Notification key"))
        }
        public static var readsAllParameters: Bool { false }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            try HCILinkKeyRequestEvent.View(parameters: parameters).read(into: &f, cut: cut)
        }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.35 Synchronous Connection Complete
public struct HCISynchronousConnectionCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.synchronousConnectionComplete
    public var status: UInt8
    public var handle: UInt16
    public var peer: BDAddr
    /// 0 SCO, 2 eSCO.
    public var linkType: UInt8
    public var transmissionInterval: UInt8
    public var retransmissionWindow: UInt8
    public var rxPacketLength: UInt16
    public var txPacketLength: UInt16
    public var airMode: UInt8
    public init(
        status: UInt8, handle: UInt16, peer: BDAddr, linkType: UInt8, transmissionInterval: UInt8 = 0, retransmissionWindow: UInt8 = 0,
        rxPacketLength: UInt16 = 0, txPacketLength: UInt16 = 0, airMode: UInt8
    ) {
        self.status = status; self.handle = handle; self.peer = peer; self.linkType = linkType
        self.transmissionInterval = transmissionInterval; self.retransmissionWindow = retransmissionWindow
        self.rxPacketLength = rxPacketLength; self.txPacketLength = txPacketLength; self.airMode = airMode
    }
    public func encodeParameters(into w: inout ByteWriter) {
        w.writeUInt8(status); w.writeUInt16(handle); w.writeAddress(peer); w.writeUInt8(linkType)
        w.writeUInt8(transmissionInterval); w.writeUInt8(retransmissionWindow); w.writeUInt16(rxPacketLength); w.writeUInt16(txPacketLength)
        w.writeUInt8(airMode)
    }
    public init(view v: View) throws(DecodeError) {
        let f = try v.fields()
        var r = ByteReader(v.parameters, at: 10)
        self.init(
            status: f.status!.rawValue, handle: f.handle!, peer: f.peer!, linkType: f.linkType!,
            transmissionInterval: try r.readUInt8("transmission interval"), retransmissionWindow: try r.readUInt8("retransmission window"),
            rxPacketLength: try r.readUInt16(.little, "RX packet length"), txPacketLength: try r.readUInt16(.little, "TX packet length"),
            airMode: try r.readUInt8("air mode"))
    }
    /// Analysis keeps the link's fields; the air mode is read on its own (`airMode`).
    public struct View: HCIEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static func addressOffsets(in p: UnsafeRawBufferPointer, into out: inout [Int]) { out.append(3) }
        public func read(into f: inout HCIFields, cut: Bool) throws(DecodeError) {
            var p = ByteReader(parameters)
            f.status = HCIStatus(try p.readUInt8("status"))
            f.handle = try p.readUInt16(.little, "handle") & 0x0FFF
            f.peer = try p.readAddress("BD_ADDR")
            f.peerAddressType = .public
            f.linkType = try p.readUInt8("link type")
        }
        /// µ-law, A-law, CVSD, transparent (Assigned Numbers), nil when cut before it.
        public var airMode: UInt8? { parameters.count > 16 ? parameters[16] : nil }
    }
}

/// Core 6.0 Vol 4 Part E §7.7.39 Encryption Key Refresh Complete
public struct HCIEncryptionKeyRefreshCompleteEvent: HCIEvent {
    public static let code = HCIEventCode.encryptionKeyRefreshComplete
    public var status: UInt8
    public var handle: UInt16
    public init(status: UInt8, handle: UInt16) { self.status = status; self.handle = handle }
    public func encodeParameters(into w: inout ByteWriter) { w.writeUInt8(status); w.writeUInt16(handle) }
    public init(view v: View) throws(DecodeError) {
        self.init(status: try v.uint8(at: 0, "status"), handle: try v.uint16(at: 1, "handle") & 0x0FFF)
    }
    /// Analysis shows its parameters raw (as it always has).
    public struct View: HCIUnreadEventView {
        public let parameters: UnsafeRawBufferPointer
        public init(parameters: UnsafeRawBufferPointer) { self.parameters = parameters }
        public static var readsAllParameters: Bool { false }
    }
}
