/// Where LE Audio carries key material, for `redact` (`ModuleLayer.secrets`): the
/// Broadcast_Code of HCI LE Create BIG [Test] and LE BIG Create Sync (Core 6.0 Vol 4 Part E
/// §7.8.103, §7.8.104, §7.8.106), BASS Set Broadcast_Code's Broadcast_Code (BASS 1.0 §3.1.1.6)
/// and Broadcast Receive State's Bad_Code (§3.2), the CSIS SIRK, plain or encrypted (CSIS 1.0
/// §5.1). BASS Add Source carries no Broadcast_Code (§3.1.1.4).
extension LEAudioMessageLayer {
    public var secrets: [ModuleSecret] {
        if let hci { return hci.keyRanges.map { ModuleSecret($0, "LE Audio Broadcast_Code (HCI)") } }
        switch value {
        case .bassOperation(let op)? where op.broadcastCode?.count == 16:
            return [ModuleSecret(2..<18, "LE Audio Broadcast_Code (BASS)")] // Opcode, Source_ID, code
        case .receiveState(let s)? where s.badCode?.count == 16:
            // Source_ID, address type, address (6), SID, Broadcast_ID (3), PA_Sync_State, BIG_Encryption.
            return [ModuleSecret(14..<30, "LE Audio Bad_Code (BASS)")]
        case .sirk(let k)? where k.value.count == 16:
            return [ModuleSecret(1..<17, "LE Audio SIRK (CSIS)")]
        default:
            return []
        }
    }
}

extension LEAudioHCIMessage {
    /// The byte ranges of its `.key` parameters in the parameters it was read from.
    public var keyRanges: [Range<Int>] {
        let l = layout
        var kinds = l.fields
        for _ in groupStarts { kinds += l.group }
        kinds += l.trailing
        var out: [Range<Int>] = []
        var at = 0
        for (f, v) in zip(kinds, values) {
            let n: Int
            switch v {
            case .uint: n = f.size
            case .bytes(let b): n = b.count
            }
            if case .key = f.kind { out.append(at..<at + n) }
            at += n
        }
        return out
    }
}
