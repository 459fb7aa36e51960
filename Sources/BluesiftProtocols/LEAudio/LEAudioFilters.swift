/// LE Audio's record filters through the registry's module options: `--ase N` (ASE states,
/// control point operations and responses naming ASE N), `--cis HANDLE` (ISO data on that CIS
/// or BIS handle, and the isochronous HCI messages naming it; on a sniffed capture, where no
/// handle exists, `--cis CIG:CIS` keeps that CIS's PDUs and its LL_CIS_* control PDUs and
/// `--cis ACCESS_ADDRESS` (above 0x0EFF) the CIS or BIS PDUs on it), `--broadcast-id ID` (Broadcast
/// Audio Announcements, BASS operations and receive states with that Broadcast_ID). Values in
/// decimal or 0x hex; each repeatable, any value matches; other records do not pass.
extension LEAudio {
    public static var options: [ModuleOption] {
        [
            ModuleOption("ase", valueName: "N", kind: .filter, help: "LE Audio: records about ASE N (states, control point)"),
            ModuleOption(
                "cis", valueName: "HANDLE", kind: .filter,
                help: "LE Audio: ISO data and HCI messages of this CIS/BIS handle; sniffed: CIG:CIS or an access address"),
            ModuleOption("broadcast-id", valueName: "ID", kind: .filter, help: "LE Audio: announcements and BASS values with this Broadcast_ID"),
            ModuleOption(
                "broadcast-code", valueName: "CODE", kind: .decode,
                help: "LE Audio: decrypt sniffed BIS PDUs with this Broadcast_Code (32 hex digits as HCI carries it, or the text code); never printed")
        ]
    }

    static func number(_ option: String, _ v: String, max: UInt64) throws(ModuleOptionError) -> UInt64 {
        let n = v.lowercased().hasPrefix("0x") ? UInt64(v.dropFirst(2), radix: 16) : UInt64(v)
        guard let n, n <= max else { throw ModuleOptionError(option: option, value: v, "expected a number up to \(max)") }
        return n
    }

    public static func filter(_ values: ModuleOptionValues) throws(ModuleOptionError) -> (any ModuleFrameFilter)? {
        var f = LEAudioFilter()
        for v in values["ase"] { f.ases.insert(UInt8(try number("ase", v, max: 0xFF))) }
        for v in values["cis"] {
            let ids = v.split(separator: ":", omittingEmptySubsequences: false)
            if ids.count == 2 {
                f.cisIDs.insert(UInt16(try number("cis", String(ids[0]), max: 0xEF)) << 8 | UInt16(try number("cis", String(ids[1]), max: 0xEF)))
            } else {
                let n = try number("cis", v, max: 0xFFFF_FFFF)
                if n <= 0x0EFF { f.handles.insert(UInt16(n)) } else { f.accessAddresses.insert(UInt32(n)) }
            }
        }
        for v in values["broadcast-id"] { f.broadcastIDs.insert(UInt32(try number("broadcast-id", v, max: 0xFF_FFFF))) }
        return f.ases.isEmpty && f.handles.isEmpty && f.cisIDs.isEmpty && f.accessAddresses.isEmpty && f.broadcastIDs.isEmpty ? nil : f
    }
}

public struct LEAudioFilter: ModuleFrameFilter {
    public var ases: Set<UInt8> = []
    public var handles: Set<UInt16> = []
    public var broadcastIDs: Set<UInt32> = []
    /// Sniffed CISes: CIG_ID << 8 | CIS_ID; CIS and BIS access addresses.
    public var cisIDs: Set<UInt16> = []
    public var accessAddresses: Set<UInt32> = []

    public func matches(_ frame: borrowing DecodedFrame) -> Bool {
        if let iso = frame.moduleLayer(ISOLayer.self) { return handles.contains(iso.header.handle) }
        if let air = frame.moduleLayer(LEAudioAirLayer.self) { return matches(air) }
        guard let m = frame.moduleLayer(LEAudioMessageLayer.self) else { return false }
        if let h = m.hci {
            return ["connection_handle", "cis_connection_handle"].contains { h.uints($0).contains { handles.contains(UInt16($0 & 0x0FFF)) } }
        }
        switch m.value {
        case .aseState(let s)?: return ases.contains(s.aseID)
        case .aseOperation(let o)?: return o.entries.contains { ases.contains($0.aseID) }
        case .aseResponse(let n)?: return n.responses.contains { ases.contains($0.aseID) }
        case .broadcastAnnouncement(let a)?: return broadcastIDs.contains(a.broadcastID)
        case .receiveState(let s)?: return !s.isEmpty && broadcastIDs.contains(s.broadcastID)
        case .bassOperation(let o)?: return o.broadcastID.map { broadcastIDs.contains($0) } ?? false
        default: return false
        }
    }

    func matches(_ air: LEAudioAirLayer) -> Bool {
        func ids(_ cig: UInt8, _ cis: UInt8) -> Bool { cisIDs.contains(UInt16(cig) << 8 | UInt16(cis)) }
        if let p = air.isochronous {
            if let aa = air.accessAddress, accessAddresses.contains(aa) { return true }
            guard p.stream == .cis, let st = air.stream else { return false }
            return ids(st.cigID, st.cisID)
        }
        switch air.cisControl {
        case .request(let r)?: return ids(r.cigID, r.cisID)
        case .terminate(let t)?: return ids(t.cigID, t.cisID)
        case .indication(let i)?: return accessAddresses.contains(i.accessAddress) || air.stream.map { ids($0.cigID, $0.cisID) } ?? false
        case .response?: return air.stream.map { ids($0.cigID, $0.cisID) } ?? false
        default: return false
        }
    }
}
