import BluesiftWire

/// Where HCI packets carry device addresses and key material: offsets in the packet's bytes
/// as a capture holds them (a command from its opcode, an event from its event code), for
/// `redact` and anything else that must find or rewrite them in place. Layouts: Core 5.4
/// Vol 4 Part E §7 (section per case). `HCIParameters` decodes the same fields;
/// `HCIFieldLayoutTests` checks over the corpus that both find each peer address at one offset.
public enum HCIFieldLayout {
    /// Offsets of 6-byte BD_ADDRs in a command: a typed command's own (`HCICommands.types`),
    /// else the layout below.
    public static func addresses(command b: UnsafeRawBufferPointer) -> [Int] {
        guard b.count >= 3 else { return [] }
        let op = HCICommandOpcode(UInt16(b[0]) | UInt16(b[1]) << 8)
        var out: [Int] = []
        if let t = HCICommands.types[op] {
            t.addressOffsets(in: UnsafeRawBufferPointer(rebasing: b[3...]), into: &out)
            return out.map { $0 + 3 }
        }
        // Commands without a typed PDU: offsets in the packet (parameters at 3).
        let p = 3
        switch op {
        // §7.1: Link Control commands whose first parameter is BD_ADDR.
        case .createConnection, .createConnectionCancel, .acceptConnectionRequest, .rejectConnectionRequest, .linkKeyRequestReply,
            .linkKeyRequestNegativeReply, .pinCodeRequestReply, .pinCodeRequestNegativeReply, .remoteNameRequest, .remoteNameRequestCancel,
            .ioCapabilityRequestReply, .userConfirmationRequestReply, .userConfirmationRequestNegativeReply, .userPasskeyRequestReply,
            .userPasskeyRequestNegativeReply, .ioCapabilityRequestNegativeReply, .deleteStoredLinkKey:
            return [p]
        // §7.3.9 Write Stored Link Key: Num_Keys, BD_ADDR[i], Link_Key[i].
        case .writeStoredLinkKey:
            guard b.count > p else { return [] }
            return (0..<Int(b[p])).map { p + 1 + 6 * $0 }
        // §7.8.16/.17/.38/.39/.42/.43 accept/resolving lists, §7.8.77 privacy mode: after the address type.
        case .leAddDeviceToFilterAcceptList, .leRemoveDeviceFromFilterAcceptList, .leAddDeviceToResolvingList,
            .leRemoveDeviceFromResolvingList, .leReadPeerResolvableAddress, .leReadLocalResolvableAddress, .leSetPrivacyMode:
            return [p + 1]
        case .leSetAdvertisingSetRandomAddress: return [p + 1] // §7.8.52
        case .leSetExtendedAdvertisingParameters: return [p + 12] // §7.8.53
        case .leExtendedCreateConnection: return [p + 3] // §7.8.66
        case .leExtendedCreateConnectionV2: return [p + 5] // §7.8.66 [v2]
        case .lePeriodicAdvertisingCreateSync: return [p + 3] // §7.8.67
        default: return []
        }
    }

    /// Offsets of 6-byte addresses in an event: BD_ADDRs, advertisers' and direct addresses of
    /// advertising reports, and the LE addresses inside their AD structures. A typed event's
    /// view says where its own are (`HCIParameterLayout`); the layout below those of the others.
    public static func addresses(event b: UnsafeRawBufferPointer) -> [Int] {
        guard b.count >= 2 else { return [] }
        if let (view, base) = view(b) {
            var out: [Int] = []
            view.addressOffsets(in: UnsafeRawBufferPointer(rebasing: b[base...]), into: &out)
            return out.map { $0 + base }
        }
        // Events without a typed PDU: offsets in the packet (parameters at 2).
        let p = 2
        switch HCIEventCode(b[0]) {
        // §7.7.22, .40-.44, .48, .50: BD_ADDR first.
        case .pinCodeRequest, .ioCapabilityRequest, .ioCapabilityResponse, .userConfirmationRequest, .userPasskeyRequest,
            .remoteOOBDataRequest, .userPasskeyNotification, .remoteHostSupportedFeaturesNotification:
            return [p]
        case .simplePairingComplete: return [p + 1] // §7.7.45: status, BD_ADDR
        case .inquiryResult, .inquiryResultWithRSSI: // §7.7.2/.33 (arrays)
            guard b.count > p else { return [] }
            return (0..<Int(b[p])).map { p + 1 + 6 * $0 }
        case .extendedInquiryResult: return [p + 1] // §7.7.38
        case .returnLinkKeys: // §7.7.21: Num_Keys, (BD_ADDR, Link_Key)[i]
            guard b.count > p else { return [] }
            return (0..<Int(b[p])).map { p + 1 + 22 * $0 }
        case .leMeta where b.count > p:
            switch HCILESubeventCode(b[p]) {
            case .periodicAdvertisingSyncEstablished: return [p + 6] // §7.7.65.14
            case .scanRequestReceived: return [p + 3] // §7.7.65.19
            default: return []
            }
        default: return []
        }
    }

    /// The typed event's view of `b` and where its parameters start (after the code and
    /// length; LE Meta: after the subevent code).
    static func view(_ b: UnsafeRawBufferPointer) -> (any HCIEventView.Type, Int)? {
        guard b.count >= 2 else { return nil }
        if b[0] == HCIEventCode.leMeta.rawValue {
            guard b.count > 2, let v = HCIEvents.view(code: b[0], subevent: b[2]) else { return nil }
            return (v, 3)
        }
        return HCIEvents.view(code: b[0]).map { ($0, 2) }
    }

    /// Addresses in the return parameters `r` (status first) of command `op`: a typed
    /// command's own, else the layout below (§7.1 replies that return status, BD_ADDR).
    static func returnAddresses(_ op: HCICommandOpcode, _ r: UnsafeRawBufferPointer, into out: inout [Int]) {
        if let t = HCICommands.types[op] { return t.returnAddressOffsets(in: r, into: &out) }
        switch op {
        case .createConnectionCancel, .linkKeyRequestReply, .linkKeyRequestNegativeReply, .pinCodeRequestReply,
            .pinCodeRequestNegativeReply, .remoteNameRequestCancel, .ioCapabilityRequestReply, .userConfirmationRequestReply,
            .userConfirmationRequestNegativeReply, .userPasskeyRequestReply, .userPasskeyRequestNegativeReply,
            .ioCapabilityRequestNegativeReply:
            out.append(1)
        default: break
        }
    }

    /// Key material in the return parameters `r` (status first) of command `op`.
    static func returnKeys(_ op: HCICommandOpcode, _ r: UnsafeRawBufferPointer, into out: inout [(Range<Int>, String)]) {
        if let t = HCICommands.types[op] { return t.returnKeyRanges(in: r, into: &out) }
        switch op {
        case .leEncrypt: out.append((1..<17, "LE Encrypt result")) // §7.8.22: a confirm value or key
        case .leRand: out.append((1..<9, "LE Rand result")) // §7.8.23: pairing randoms, EDIV/Rand
        default: break
        }
    }

    /// A connection's completion read through its event's view: §7.7.3 Connection Complete,
    /// §7.7.65.1 LE Connection Complete, §7.7.65.10 LE Enhanced Connection Complete (both
    /// versions); nil for other events or one cut before its peer address.
    public static func connectionComplete(_ b: UnsafeRawBufferPointer) -> (status: HCIStatus, handle: UInt16, peer: BDAddr)? {
        guard let (v, base) = view(b),
            v == HCIConnectionCompleteEvent.View.self || v == HCILEConnectionCompleteEvent.View.self
                || v == HCILEEnhancedConnectionCompleteEvent.View.self
        else { return nil }
        var f = HCIFields()
        try? v.init(parameters: UnsafeRawBufferPointer(rebasing: b[base...])).read(into: &f, cut: false)
        guard let s = f.status, let h = f.handle, let p = f.peer else { return nil }
        return (s, h, p)
    }

    /// An LE (Extended) Advertising Report event (§7.7.65.2, §7.7.65.13).
    public static func isAdvertisingReport(_ b: UnsafeRawBufferPointer) -> Bool {
        b.count > 3 && b[0] == HCIEventCode.leMeta.rawValue
            && (b[2] == HCILESubeventCode.advertisingReport.rawValue || b[2] == HCILESubeventCode.extendedAdvertisingReport.rawValue)
    }

    /// Remote Name Request Complete (§7.7.7) with status success: the address offset and the
    /// name's bytes (up to its NUL), nil when the name is empty.
    public static func remoteName(_ b: UnsafeRawBufferPointer) -> (address: Int, name: Range<Int>)? {
        typealias V = HCIRemoteNameRequestCompleteEvent.View
        let p = 2, start = p + V.nameOffset
        guard b.count > start, b[0] == HCIEventCode.remoteNameRequestComplete.rawValue, b[p] == HCIStatus.success.rawValue else { return nil }
        var a: [Int] = []
        V.addressOffsets(in: UnsafeRawBufferPointer(rebasing: b[p...]), into: &a)
        let end = b[start...].firstIndex(of: 0) ?? b.count
        return end > start ? (p + a[0], start..<end) : nil
    }

    /// LE Advertising Report (§7.7.65.2) and LE Extended Advertising Report (§7.7.65.13): each
    /// report's address offset and data range, as their views walk them.
    public static func advertisingReports(_ b: UnsafeRawBufferPointer) -> [(address: Int, data: Range<Int>)] {
        guard isAdvertisingReport(b) else { return [] }
        var out: [(Int, Range<Int>)] = []
        let p = UnsafeRawBufferPointer(rebasing: b[3...])
        let add = { (a: Int, d: Range<Int>) in out.append((a + 3, d.lowerBound + 3..<d.upperBound + 3)) }
        if b[2] == HCILESubeventCode.extendedAdvertisingReport.rawValue {
            HCILEExtendedAdvertisingReportEvent.View.forEachReport(in: p, add)
        } else {
            HCILEAdvertisingReportEvent.View.forEachReport(in: p, add)
        }
        return out
    }

    /// Core 5.4 Supplement Part A §1.16 LE Bluetooth Device Address (address + type byte) and
    /// §1.13 Public/Random Target Address (a list of addresses): AD structures in `from..<to`.
    public static func adAddresses(_ b: UnsafeRawBufferPointer, from: Int, to: Int) -> [Int] {
        var out: [Int] = []
        var o = from
        let end = min(to, b.count)
        while o + 1 < end {
            let len = Int(b[o])
            guard len > 0, o + 1 + len <= end else { break }
            switch b[o + 1] {
            case 0x1B where len >= 7: out.append(o + 2)
            case 0x17, 0x18: out += stride(from: o + 2, through: o + 1 + len - 6, by: 6).map { $0 }
            default: break
            }
            o += 1 + len
        }
        return out
    }

    /// Key material in a command: (byte range, what it is). A typed command's own, else the
    /// layout below.
    public static func keys(command b: UnsafeRawBufferPointer) -> [(Range<Int>, String)] {
        guard b.count >= 3 else { return [] }
        let op = HCICommandOpcode(UInt16(b[0]) | UInt16(b[1]) << 8)
        if let t = HCICommands.types[op] {
            var out: [(Range<Int>, String)] = []
            t.keyRanges(in: UnsafeRawBufferPointer(rebasing: b[3...]), into: &out)
            return out.map { ($0.0.lowerBound + 3..<$0.0.upperBound + 3, $0.1) }
        }
        switch op {
        case .linkKeyRequestReply: return [(9..<25, "Link Key Request Reply key")] // §7.1.10
        case .pinCodeRequestReply: return [(10..<26, "PIN Code Request Reply PIN")] // §7.1.12
        case .leAddDeviceToResolvingList: return [(10..<42, "LE Add Device To Resolving List IRKs")] // §7.8.38
        // §7.8.22 LE Encrypt: hosts compute c1/s1/ah with it, so key and plaintext are
        // TK, confirm and random values.
        case .leEncrypt: return [(3..<35, "LE Encrypt key and plaintext")]
        case .writeStoredLinkKey: // §7.3.9
            guard b.count > 3 else { return [] }
            let n = Int(b[3])
            return (0..<n).map { (4 + 6 * n + 16 * $0..<4 + 6 * n + 16 * ($0 + 1), "Write Stored Link Key key") }
        default: return []
        }
    }

    /// Key material in an event: (byte range, what it is). A typed event's view says where its
    /// own is; the layout below that of the others.
    public static func keys(event b: UnsafeRawBufferPointer) -> [(Range<Int>, String)] {
        guard b.count >= 2 else { return [] }
        if let (view, base) = view(b) {
            var out: [(Range<Int>, String)] = []
            view.keyRanges(in: UnsafeRawBufferPointer(rebasing: b[base...]), into: &out)
            return out.map { ($0.0.lowerBound + base..<$0.0.upperBound + base, $0.1) }
        }
        switch HCIEventCode(b[0]) {
        case .leMeta where b.count > 2 && HCILESubeventCode(b[2]) == .generateDHKeyComplete: // §7.7.65.9
            return [(4..<36, "LE DHKey")]
        case .returnLinkKeys: // §7.7.21
            guard b.count > 2 else { return [] }
            return (0..<Int(b[2])).map { (3 + 22 * $0 + 6..<3 + 22 * $0 + 22, "Return Link Keys key") }
        default: return []
        }
    }
}
