import BluesiftWire

/// The LE Audio characteristics (Assigned Numbers §3.8 GATT Characteristic UUIDs) and
/// service data UUIDs (§3.4 Service UUIDs) whose values this folder decodes.
public enum LEAudioUUIDs {
    public static let sinkASE: UInt16 = 0x2BC4, sourceASE: UInt16 = 0x2BC5, aseControlPoint: UInt16 = 0x2BC6
    public static let bassControlPoint: UInt16 = 0x2BC7, broadcastReceiveState: UInt16 = 0x2BC8
    public static let sinkPAC: UInt16 = 0x2BC9, sinkAudioLocations: UInt16 = 0x2BCA
    public static let sourcePAC: UInt16 = 0x2BCB, sourceAudioLocations: UInt16 = 0x2BCC
    public static let availableAudioContexts: UInt16 = 0x2BCD, supportedAudioContexts: UInt16 = 0x2BCE
    public static let setIdentityResolvingKey: UInt16 = 0x2B84

    /// BAP's (PACS, ASCS, BASS), the SIRK, and the control profiles' (ControlProfiles.swift).
    public static let characteristics: Set<UInt16> = Set([0x2BC4, 0x2BC5, 0x2BC6, 0x2BC7, 0x2BC8, 0x2BC9, 0x2BCA, 0x2BCB, 0x2BCC, 0x2BCD, 0x2BCE, 0x2B84])
        .union(LEAudioControlProfiles.layouts.keys)

    /// Service data: ASCS 0x184E, BASS 0x184F, BASE 0x1851, Broadcast Audio Announcement
    /// 0x1852, CAS 0x1853, Public Broadcast Announcement 0x1856.
    public static let serviceData: Set<UInt16> = [0x184E, 0x184F, 0x1851, 0x1852, 0x1853, 0x1856]

    /// AD type Broadcast_Name (Assigned Numbers §2.3).
    public static let broadcastNameADType: UInt8 = 0x30

    public static func characteristicName(_ u: UInt16) -> String? {
        switch u {
        case 0x2BC4: "Sink ASE"
        case 0x2BC5: "Source ASE"
        case 0x2BC6: "ASE Control Point"
        case 0x2BC7: "Broadcast Audio Scan Control Point"
        case 0x2BC8: "Broadcast Receive State"
        case 0x2BC9: "Sink PAC"
        case 0x2BCA: "Sink Audio Locations"
        case 0x2BCB: "Source PAC"
        case 0x2BCC: "Source Audio Locations"
        case 0x2BCD: "Available Audio Contexts"
        case 0x2BCE: "Supported Audio Contexts"
        case 0x2B84: "Set Identity Resolving Key"
        default: LEAudioControlProfiles.layouts[u]?.name
        }
    }
}

/// An LE Audio value decoded from a GATT characteristic or service data.
public enum LEAudioValue: Hashable, Sendable, FieldDescribable {
    case aseState(ASEStateValue)
    case aseOperation(ASEControlPointOperation)
    case aseResponse(ASEControlPointNotification)
    case pacRecords(PACRecordList)
    case audioLocations(PACSAudioLocations)
    case audioContexts(PACSAudioContexts)
    case receiveState(BASSReceiveState)
    case bassOperation(BASSControlPointOperation)
    case sirk(CSISSIRK)
    case base(BASE)
    case broadcastAnnouncement(BroadcastAudioAnnouncement)
    case publicBroadcast(PublicBroadcastAnnouncement)
    case announcement(LEAudioAnnouncement)
    case broadcastName(BroadcastName)
    /// VCS/VOCS/AICS/MICS/MCS/TBS/HAS/TMAS/GMAS/CSIS values (ControlProfiles.swift).
    case profile(LEAudioProfileValue)
    case raw(name: String, bytes: [UInt8])

    /// A characteristic value; `written`: an ATT write (a control point operation) rather
    /// than a read or notification. Nil for a UUID that is not LE Audio's.
    public init?(characteristic uuid: UInt16, written: Bool, bytes b: UnsafeRawBufferPointer) {
        switch uuid {
        case 0x2BC4, 0x2BC5: self = .aseState(ASEStateValue(bytes: b))
        case 0x2BC6: self = written ? .aseOperation(ASEControlPointOperation(bytes: b)) : .aseResponse(ASEControlPointNotification(bytes: b))
        case 0x2BC7: self = .bassOperation(BASSControlPointOperation(bytes: b))
        case 0x2BC8: self = .receiveState(BASSReceiveState(bytes: b))
        case 0x2BC9, 0x2BCB: self = .pacRecords(PACRecordList(bytes: b))
        case 0x2BCA, 0x2BCC: self = .audioLocations(PACSAudioLocations(bytes: b))
        case 0x2BCD, 0x2BCE: self = .audioContexts(PACSAudioContexts(bytes: b))
        case 0x2B84: self = .sirk(CSISSIRK(bytes: b))
        default:
            guard LEAudioControlProfiles.layouts[uuid] != nil else { return nil }
            // GMAS's UUIDs (assigned with GMAP 1.0) were free before: devices use them for
            // their own services (a scooter's AT commands on 0x2C01). Their values are one
            // octet; anything else is not GMAP's.
            if LEAudioControlProfiles.gmas.contains(uuid), b.count != 1 { return nil }
            self = .profile(LEAudioProfileValue(uuid: uuid, written: written, bytes: b))
        }
    }

    /// Service data after its 16-bit UUID. Nil for a UUID that is not LE Audio's.
    public init?(serviceData uuid: UInt16, bytes b: UnsafeRawBufferPointer) {
        switch uuid {
        case 0x1851: self = .base(BASE(bytes: b))
        case 0x1852: self = .broadcastAnnouncement(BroadcastAudioAnnouncement(bytes: b))
        case 0x1856: self = .publicBroadcast(PublicBroadcastAnnouncement(bytes: b))
        case 0x184E: self = .announcement(LEAudioAnnouncement(bytes: b, ascs: true))
        case 0x1853: self = .announcement(LEAudioAnnouncement(bytes: b, ascs: false))
        // BASS service data carries no defined fields: its bytes are shown.
        case 0x184F: self = .raw(name: "Broadcast Audio Scan Service", bytes: Array(b))
        default: return nil
        }
    }

    /// The JSON object key of the value.
    public var key: String {
        switch self {
        case .aseState: "ase"
        case .aseOperation: "ase_control_point"
        case .aseResponse: "ase_control_point_response"
        case .pacRecords: "pac"
        case .audioLocations: "audio_locations"
        case .audioContexts: "audio_contexts"
        case .receiveState: "broadcast_receive_state"
        case .bassOperation: "broadcast_audio_scan_control_point"
        case .sirk: "sirk"
        case .base: "base"
        case .broadcastAnnouncement: "broadcast_audio_announcement"
        case .publicBroadcast: "public_broadcast_announcement"
        case .announcement: "announcement"
        case .broadcastName: "broadcast_name"
        case .profile(let v): v.layout.key
        case .raw: "raw"
        }
    }

    var inner: any FieldDescribable {
        switch self {
        case .aseState(let v): v
        case .aseOperation(let v): v
        case .aseResponse(let v): v
        case .pacRecords(let v): v
        case .audioLocations(let v): v
        case .audioContexts(let v): v
        case .receiveState(let v): v
        case .bassOperation(let v): v
        case .sirk(let v): v
        case .base(let v): v
        case .broadcastAnnouncement(let v): v
        case .publicBroadcast(let v): v
        case .announcement(let v): v
        case .broadcastName(let v): v
        case .profile(let v): v
        case .raw(_, let b): RawValue(bytes: b)
        }
    }

    struct RawValue: FieldDescribable {
        var bytes: [UInt8]
        func describe<S: FieldSink>(into sink: inout S) { sink.hex("value", bytes) }
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.object(.dynamic(key)) { s in inner.describe(into: &s) }
    }

    public var error: DecodeError? {
        switch self {
        case .aseState(let v): v.error
        case .aseOperation(let v): v.error
        case .aseResponse(let v): v.error
        case .pacRecords(let v): v.error
        case .audioLocations(let v): v.error
        case .audioContexts(let v): v.error
        case .receiveState(let v): v.error
        case .bassOperation(let v): v.error
        case .sirk(let v): v.error
        case .base(let v): v.error
        case .broadcastAnnouncement(let v): v.error
        case .publicBroadcast(let v): v.error
        case .announcement(let v): v.error
        case .broadcastName(let v): v.error
        case .profile(let v): v.error
        case .raw: nil
        }
    }

    public var summary: String {
        switch self {
        case .aseState(let v): v.summary
        case .aseOperation(let v): v.summary
        case .aseResponse(let v): v.summary
        case .pacRecords(let v): v.summary
        case .audioLocations(let v): v.summary
        case .audioContexts(let v): v.summary
        case .receiveState(let v): v.summary
        case .bassOperation(let v): v.summary
        case .sirk(let v): v.summary
        case .base(let v): v.summary
        case .broadcastAnnouncement(let v): v.summary
        case .publicBroadcast(let v): v.summary
        case .announcement(let v): v.summary
        case .broadcastName(let v): v.summary
        case .profile(let v): v.summary
        case .raw(let n, let b): n + " " + Hex.string(b)
        }
    }
}
