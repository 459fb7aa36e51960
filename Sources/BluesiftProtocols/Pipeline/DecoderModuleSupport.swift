import BluesiftWire
import BluesiftCapture

/// Profiles modules record on connections (`info`), and bytes modules hold for their frame.
extension ProtocolDecoder {
    /// Records a profile on the connection's table entry once (roles added as they appear).
    func profile(_ record: CaptureRecord, _ name: String, role: String?, _ s: ConnState?) {
        let tag = name + "/" + (role ?? "")
        guard let s, !s.profilesRecorded.contains(tag), s.profilesRecorded.count < 64 else { return }
        s.profilesRecorded.insert(tag)
        guard let h = lastACL?.key.connection else { return }
        let id = table.ensure(.init(adapter: record.adapter, handle: UInt16(truncatingIfNeeded: h)), record: record)
        table.update(id) { info in
            if let i = info.profiles.firstIndex(where: { $0.name == name }) {
                if let r = role, !info.profiles[i].roles.contains(r) { info.profiles[i].roles.append(r) }
            } else {
                info.profiles.append(ClassicProfile(name: name, roles: role.map { [$0] } ?? []))
            }
        }
    }

    func profileDetail(_ record: CaptureRecord, _ name: String, detail: String) {
        guard let h = lastACL?.key.connection else { return }
        let id = table.ensure(.init(adapter: record.adapter, handle: UInt16(truncatingIfNeeded: h)), record: record)
        table.update(id) { info in
            if let i = info.profiles.firstIndex(where: { $0.name == name }) { info.profiles[i].detail = detail } else { info.profiles.append(ClassicProfile(name: name, roles: [], detail: detail)) }
        }
    }
}

/// Bytes the decoder owns for the frame it returns (valid until the next decode call).
final class OwnedBytes {
    private var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    func hold(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
        if buffer.count < bytes.count {
            buffer.deallocate()
            buffer = .allocate(byteCount: max(bytes.count, 1024), alignment: 1)
        }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return UnsafeRawBufferPointer(rebasing: buffer[0..<bytes.count])
    }
    deinit { buffer.deallocate() }
}

/// A Classic profile seen on a connection, for `info`: "A2DP (source) SBC 44100 joint stereo".
/// Roles are the capture host's.
public struct ClassicProfile: Sendable, Hashable {
    public var name: String
    public var roles: [String]
    public var detail: String?
    public init(name: String, roles: [String], detail: String? = nil) { self.name = name; self.roles = roles; self.detail = detail }
    public var description: String {
        var s = name
        if !roles.isEmpty { s += " (" + roles.joined(separator: "+") + ")" }
        if let d = detail { s += " " + d }
        return s
    }
}
