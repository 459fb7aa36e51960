import BluesiftWire

/// The isochronous-channel and periodic-advertising HCI commands and events LE Audio uses,
/// every parameter named as the Core specification names it (Core 6.0 Vol 4 Part E §7.8
/// commands, §7.7.65 LE Meta subevents; section above each layout). One table drives
/// decode, encode and description, so the three cannot disagree.
public struct LEAudioHCIField: Sendable {
    public enum Kind: Sendable {
        /// Unsigned little-endian of the field's size.
        case uint
        /// Signed one-octet value (dBm).
        case int8
        /// An HCI status or reason code.
        case status
        /// A 12-bit connection handle in two octets.
        case handle
        /// A PHY bit field (§7.8.97).
        case phy
        /// Key material (Broadcast_Code): shown only when keys are asked for.
        case key
        /// A BD_ADDR (6 octets).
        case address
        /// Codec_ID (5 octets, §7.8.109).
        case codecID
        /// Bytes whose length is the previous field's value (Codec_Configuration, Data).
        case lengthPrefixedBytes
    }
    public var name: String
    public var size: Int
    public var kind: Kind
    init(_ name: String, _ size: Int, _ kind: Kind = .uint) { self.name = name; self.size = size; self.kind = kind }
}

/// A layout: fields, then optionally one repeated group whose count is the field named
/// `count` (its value read before the group).
public struct LEAudioHCILayout: Sendable {
    public var name: String
    public var fields: [LEAudioHCIField]
    public var groupKey: String?
    public var count: String?
    public var group: [LEAudioHCIField]
    public var trailing: [LEAudioHCIField]
    init(
        _ name: String, _ fields: [LEAudioHCIField], group groupKey: String? = nil, count: String? = nil,
        _ group: [LEAudioHCIField] = [], trailing: [LEAudioHCIField] = []
    ) {
        self.name = name; self.fields = fields; self.groupKey = groupKey; self.count = count; self.group = group; self.trailing = trailing
    }
}

private func F(_ n: String, _ s: Int, _ k: LEAudioHCIField.Kind = .uint) -> LEAudioHCIField { LEAudioHCIField(n, s, k) }

public enum LEAudioHCILayouts {
    /// Commands by opcode.
    public static let commands: [UInt16: LEAudioHCILayout] = [
        // §7.8.54 LE Set Extended Advertising Data: a broadcast source's Broadcast Audio
        // Announcement and Broadcast_Name (taken only when it carries LE Audio values).
        HCICommandOpcode.leSetExtendedAdvertisingData.rawValue: .init(
            "LE Set Extended Advertising Data",
            [F("advertising_handle", 1), F("operation", 1), F("fragment_preference", 1), F("advertising_data_length", 1), F("advertising_data", 0, .lengthPrefixedBytes)]),
        // §7.8.62 LE Set Periodic Advertising Data: a broadcast source's BASE.
        HCICommandOpcode.leSetPeriodicAdvertisingData.rawValue: .init(
            "LE Set Periodic Advertising Data",
            [F("advertising_handle", 1), F("operation", 1), F("advertising_data_length", 1), F("advertising_data", 0, .lengthPrefixedBytes)]),
        // §7.8.67 LE Periodic Advertising Create Sync
        HCICommandOpcode.lePeriodicAdvertisingCreateSync.rawValue: .init(
            "LE Periodic Advertising Create Sync",
            [
                F("options", 1), F("advertising_sid", 1), F("advertiser_address_type", 1),
                F("advertiser_address", 6, .address), F("skip", 2), F("sync_timeout", 2), F("sync_cte_type", 1)
            ]),
        // §7.8.68 LE Periodic Advertising Create Sync Cancel: no parameters. §7.8.69 Terminate Sync
        HCICommandOpcode.lePeriodicAdvertisingTerminateSync.rawValue: .init("LE Periodic Advertising Terminate Sync", [F("sync_handle", 2, .handle)]),
        // §7.8.89 LE Periodic Advertising Sync Transfer
        HCICommandOpcode.lePeriodicAdvertisingSyncTransfer.rawValue: .init("LE Periodic Advertising Sync Transfer", [F("connection_handle", 2, .handle), F("service_data", 2), F("sync_handle", 2, .handle)]),
        // §7.8.90 LE Periodic Advertising Set Info Transfer
        HCICommandOpcode.lePeriodicAdvertisingSetInfoTransfer.rawValue: .init("LE Periodic Advertising Set Info Transfer", [F("connection_handle", 2, .handle), F("service_data", 2), F("advertising_handle", 1)]),
        // §7.8.91 LE Set Periodic Advertising Sync Transfer Parameters
        HCICommandOpcode.leSetPeriodicAdvertisingSyncTransferParameters.rawValue: .init(
            "LE Set Periodic Advertising Sync Transfer Parameters",
            [
                F("connection_handle", 2, .handle), F("mode", 1), F("skip", 2),
                F("sync_timeout", 2), F("cte_type", 1)
            ]),
        // §7.8.92 LE Set Default Periodic Advertising Sync Transfer Parameters
        HCICommandOpcode.leSetDefaultPeriodicAdvertisingSyncTransferParameters.rawValue: .init("LE Set Default Periodic Advertising Sync Transfer Parameters", [F("mode", 1), F("skip", 2), F("sync_timeout", 2), F("cte_type", 1)]),
        // §7.8.96 LE Read ISO TX Sync
        HCICommandOpcode.leReadISOTXSync.rawValue: .init("LE Read ISO TX Sync", [F("connection_handle", 2, .handle)]),
        // §7.8.97 LE Set CIG Parameters
        HCICommandOpcode.leSetCIGParameters.rawValue: .init(
            "LE Set CIG Parameters",
            [
                F("cig_id", 1), F("sdu_interval_c_to_p", 3), F("sdu_interval_p_to_c", 3), F("worst_case_sca", 1),
                F("packing", 1), F("framing", 1), F("max_transport_latency_c_to_p", 2), F("max_transport_latency_p_to_c", 2), F("cis_count", 1)
            ],
            group: "cis", count: "cis_count",
            [
                F("cis_id", 1), F("max_sdu_c_to_p", 2), F("max_sdu_p_to_c", 2), F("phy_c_to_p", 1, .phy),
                F("phy_p_to_c", 1, .phy), F("rtn_c_to_p", 1), F("rtn_p_to_c", 1)
            ]),
        // §7.8.98 LE Set CIG Parameters Test
        HCICommandOpcode.leSetCIGParametersTest.rawValue: .init(
            "LE Set CIG Parameters Test",
            [
                F("cig_id", 1), F("sdu_interval_c_to_p", 3), F("sdu_interval_p_to_c", 3), F("ft_c_to_p", 1),
                F("ft_p_to_c", 1), F("iso_interval", 2), F("worst_case_sca", 1), F("packing", 1), F("framing", 1), F("cis_count", 1)
            ],
            group: "cis", count: "cis_count",
            [
                F("cis_id", 1), F("nse", 1), F("max_sdu_c_to_p", 2), F("max_sdu_p_to_c", 2), F("max_pdu_c_to_p", 2),
                F("max_pdu_p_to_c", 2), F("phy_c_to_p", 1, .phy), F("phy_p_to_c", 1, .phy), F("bn_c_to_p", 1), F("bn_p_to_c", 1)
            ]),
        // §7.8.99 LE Create CIS
        HCICommandOpcode.leCreateCIS.rawValue: .init(
            "LE Create CIS", [F("cis_count", 1)], group: "cis", count: "cis_count",
            [F("cis_connection_handle", 2, .handle), F("acl_connection_handle", 2, .handle)]),
        // §7.8.100 LE Remove CIG
        HCICommandOpcode.leRemoveCIG.rawValue: .init("LE Remove CIG", [F("cig_id", 1)]),
        // §7.8.101 LE Accept CIS Request
        HCICommandOpcode.leAcceptCISRequest.rawValue: .init("LE Accept CIS Request", [F("connection_handle", 2, .handle)]),
        // §7.8.102 LE Reject CIS Request
        HCICommandOpcode.leRejectCISRequest.rawValue: .init("LE Reject CIS Request", [F("connection_handle", 2, .handle), F("reason", 1, .status)]),
        // §7.8.103 LE Create BIG
        HCICommandOpcode.leCreateBIG.rawValue: .init(
            "LE Create BIG",
            [
                F("big_handle", 1), F("advertising_handle", 1), F("num_bis", 1), F("sdu_interval", 3), F("max_sdu", 2),
                F("max_transport_latency", 2), F("rtn", 1), F("phy", 1, .phy), F("packing", 1), F("framing", 1), F("encryption", 1),
                F("broadcast_code", 16, .key)
            ]),
        // §7.8.104 LE Create BIG Test
        HCICommandOpcode.leCreateBIGTest.rawValue: .init(
            "LE Create BIG Test",
            [
                F("big_handle", 1), F("advertising_handle", 1), F("num_bis", 1), F("sdu_interval", 3),
                F("iso_interval", 2), F("nse", 1), F("max_sdu", 2), F("max_pdu", 2), F("phy", 1, .phy), F("packing", 1), F("framing", 1),
                F("bn", 1), F("irc", 1), F("pto", 1), F("encryption", 1), F("broadcast_code", 16, .key)
            ]),
        // §7.8.105 LE Terminate BIG
        HCICommandOpcode.leTerminateBIG.rawValue: .init("LE Terminate BIG", [F("big_handle", 1), F("reason", 1, .status)]),
        // §7.8.106 LE BIG Create Sync
        HCICommandOpcode.leBIGCreateSync.rawValue: .init(
            "LE BIG Create Sync",
            [
                F("big_handle", 1), F("sync_handle", 2, .handle), F("encryption", 1), F("broadcast_code", 16, .key),
                F("mse", 1), F("big_sync_timeout", 2), F("num_bis", 1)
            ], group: "bis", count: "num_bis", [F("bis", 1)]),
        // §7.8.107 LE BIG Terminate Sync
        HCICommandOpcode.leBIGTerminateSync.rawValue: .init("LE BIG Terminate Sync", [F("big_handle", 1)]),
        // §7.8.109 LE Setup ISO Data Path
        HCICommandOpcode.leSetupISODataPath.rawValue: .init(
            "LE Setup ISO Data Path",
            [
                F("connection_handle", 2, .handle), F("data_path_direction", 1), F("data_path_id", 1),
                F("codec_id", 5, .codecID), F("controller_delay", 3), F("codec_configuration_length", 1), F("codec_configuration", 0, .lengthPrefixedBytes)
            ]),
        // §7.8.110 LE Remove ISO Data Path
        HCICommandOpcode.leRemoveISODataPath.rawValue: .init("LE Remove ISO Data Path", [F("connection_handle", 2, .handle), F("data_path_direction", 1)]),
        // §7.8.116 LE Read ISO Link Quality
        HCICommandOpcode.leReadISOLinkQuality.rawValue: .init("LE Read ISO Link Quality", [F("connection_handle", 2, .handle)])
    ]

    /// Command Complete return parameters by the opcode answered.
    public static let returns: [UInt16: LEAudioHCILayout] = [
        // §7.8.96
        HCICommandOpcode.leReadISOTXSync.rawValue: .init(
            "LE Read ISO TX Sync",
            [
                F("status", 1, .status), F("connection_handle", 2, .handle), F("packet_sequence_number", 2),
                F("tx_time_stamp", 4), F("time_offset", 3)
            ]),
        // §7.8.97 / §7.8.98
        HCICommandOpcode.leSetCIGParameters.rawValue: .init(
            "LE Set CIG Parameters", [F("status", 1, .status), F("cig_id", 1), F("cis_count", 1)], group: "connection_handles",
            count: "cis_count", [F("connection_handle", 2, .handle)]),
        HCICommandOpcode.leSetCIGParametersTest.rawValue: .init(
            "LE Set CIG Parameters Test", [F("status", 1, .status), F("cig_id", 1), F("cis_count", 1)], group: "connection_handles",
            count: "cis_count", [F("connection_handle", 2, .handle)]),
        // §7.8.100
        HCICommandOpcode.leRemoveCIG.rawValue: .init("LE Remove CIG", [F("status", 1, .status), F("cig_id", 1)]),
        // §7.8.102, §7.8.109, §7.8.110
        HCICommandOpcode.leRejectCISRequest.rawValue: .init("LE Reject CIS Request", [F("status", 1, .status), F("connection_handle", 2, .handle)]),
        HCICommandOpcode.leSetupISODataPath.rawValue: .init("LE Setup ISO Data Path", [F("status", 1, .status), F("connection_handle", 2, .handle)]),
        HCICommandOpcode.leRemoveISODataPath.rawValue: .init("LE Remove ISO Data Path", [F("status", 1, .status), F("connection_handle", 2, .handle)]),
        // §7.8.107
        HCICommandOpcode.leBIGTerminateSync.rawValue: .init("LE BIG Terminate Sync", [F("status", 1, .status), F("big_handle", 1)]),
        // §7.8.89, §7.8.90, §7.8.91
        HCICommandOpcode.lePeriodicAdvertisingSyncTransfer.rawValue: .init("LE Periodic Advertising Sync Transfer", [F("status", 1, .status), F("connection_handle", 2, .handle)]),
        HCICommandOpcode.lePeriodicAdvertisingSetInfoTransfer.rawValue: .init("LE Periodic Advertising Set Info Transfer", [F("status", 1, .status), F("connection_handle", 2, .handle)]),
        HCICommandOpcode.leSetPeriodicAdvertisingSyncTransferParameters.rawValue: .init("LE Set Periodic Advertising Sync Transfer Parameters", [F("status", 1, .status), F("connection_handle", 2, .handle)]),
        // §7.8.116
        HCICommandOpcode.leReadISOLinkQuality.rawValue: .init(
            "LE Read ISO Link Quality",
            [
                F("status", 1, .status), F("connection_handle", 2, .handle), F("tx_unacked_packets", 4),
                F("tx_flushed_packets", 4), F("tx_last_subevent_packets", 4), F("retransmitted_packets", 4), F("crc_error_packets", 4),
                F("rx_unreceived_packets", 4), F("duplicate_packets", 4)
            ])
    ]

    /// LE Meta subevents by subevent code (the parameters after the subevent code).
    public static let subevents: [UInt8: LEAudioHCILayout] = [
        // §7.7.65.14 LE Periodic Advertising Sync Established
        HCILESubeventCode.periodicAdvertisingSyncEstablished.rawValue: .init(
            "LE Periodic Advertising Sync Established",
            [
                F("status", 1, .status), F("sync_handle", 2, .handle), F("advertising_sid", 1),
                F("advertiser_address_type", 1), F("advertiser_address", 6, .address), F("advertiser_phy", 1), F("periodic_advertising_interval", 2),
                F("advertiser_clock_accuracy", 1)
            ]),
        // §7.7.65.15 LE Periodic Advertising Report
        HCILESubeventCode.periodicAdvertisingReport.rawValue: .init(
            "LE Periodic Advertising Report",
            [
                F("sync_handle", 2, .handle), F("tx_power", 1, .int8), F("rssi", 1, .int8), F("cte_type", 1),
                F("data_status", 1), F("data_length", 1), F("data", 0, .lengthPrefixedBytes)
            ]),
        // §7.7.65.16 LE Periodic Advertising Sync Lost
        HCILESubeventCode.periodicAdvertisingSyncLost.rawValue: .init("LE Periodic Advertising Sync Lost", [F("sync_handle", 2, .handle)]),
        // §7.7.65.24 LE Periodic Advertising Sync Transfer Received
        HCILESubeventCode.periodicAdvertisingSyncTransferReceived.rawValue: .init(
            "LE Periodic Advertising Sync Transfer Received",
            [
                F("status", 1, .status), F("connection_handle", 2, .handle),
                F("service_data", 2), F("sync_handle", 2, .handle), F("advertising_sid", 1), F("advertiser_address_type", 1),
                F("advertiser_address", 6, .address), F("advertiser_phy", 1), F("periodic_advertising_interval", 2), F("advertiser_clock_accuracy", 1)
            ]),
        // §7.7.65.25 LE CIS Established [v1]
        HCILESubeventCode.cisEstablished.rawValue: .init("LE CIS Established", cisEstablished),
        // §7.7.65.26 LE CIS Request
        HCILESubeventCode.cisRequest.rawValue: .init("LE CIS Request", [F("acl_connection_handle", 2, .handle), F("cis_connection_handle", 2, .handle), F("cig_id", 1), F("cis_id", 1)]),
        // §7.7.65.27 LE Create BIG Complete
        HCILESubeventCode.createBIGComplete.rawValue: .init(
            "LE Create BIG Complete",
            [
                F("status", 1, .status), F("big_handle", 1), F("big_sync_delay", 3), F("transport_latency_big", 3),
                F("phy", 1, .phy), F("nse", 1), F("bn", 1), F("pto", 1), F("irc", 1), F("max_pdu", 2), F("iso_interval", 2), F("num_bis", 1)
            ],
            group: "connection_handles", count: "num_bis", [F("connection_handle", 2, .handle)]),
        // §7.7.65.28 LE Terminate BIG Complete
        HCILESubeventCode.terminateBIGComplete.rawValue: .init("LE Terminate BIG Complete", [F("big_handle", 1), F("reason", 1, .status)]),
        // §7.7.65.29 LE BIG Sync Established
        HCILESubeventCode.bigSyncEstablished.rawValue: .init(
            "LE BIG Sync Established",
            [
                F("status", 1, .status), F("big_handle", 1), F("transport_latency_big", 3), F("nse", 1), F("bn", 1),
                F("pto", 1), F("irc", 1), F("max_pdu", 2), F("iso_interval", 2), F("num_bis", 1)
            ],
            group: "connection_handles", count: "num_bis", [F("connection_handle", 2, .handle)]),
        // §7.7.65.30 LE BIG Sync Lost
        HCILESubeventCode.bigSyncLost.rawValue: .init("LE BIG Sync Lost", [F("big_handle", 1), F("reason", 1, .status)]),
        // §7.7.65.34 LE BIGInfo Advertising Report
        HCILESubeventCode.bIGInfoAdvertisingReport.rawValue: .init(
            "LE BIGInfo Advertising Report",
            [
                F("sync_handle", 2, .handle), F("num_bis", 1), F("nse", 1), F("iso_interval", 2), F("bn", 1),
                F("pto", 1), F("irc", 1), F("max_pdu", 2), F("sdu_interval", 3), F("max_sdu", 2), F("phy", 1, .phy), F("framing", 1), F("encryption", 1)
            ]),
        // §7.7.65.35 LE Periodic Advertising Sync Established [v2]
        HCILESubeventCode.periodicAdvertisingSyncEstablishedV2.rawValue: .init(
            "LE Periodic Advertising Sync Established v2",
            [
                F("status", 1, .status), F("sync_handle", 2, .handle), F("advertising_sid", 1),
                F("advertiser_address_type", 1), F("advertiser_address", 6, .address), F("advertiser_phy", 1), F("periodic_advertising_interval", 2),
                F("advertiser_clock_accuracy", 1), F("num_subevents", 1), F("subevent_interval", 1), F("response_slot_delay", 1), F("response_slot_spacing", 1)
            ]),
        // §7.7.65.15 LE Periodic Advertising Report [v2]
        HCILESubeventCode.periodicAdvertisingReportV2.rawValue: .init(
            "LE Periodic Advertising Report v2",
            [
                F("sync_handle", 2, .handle), F("tx_power", 1, .int8), F("rssi", 1, .int8), F("cte_type", 1),
                F("periodic_event_counter", 2), F("subevent", 1), F("data_status", 1), F("data_length", 1), F("data", 0, .lengthPrefixedBytes)
            ]),
        // §7.7.65.24 LE Periodic Advertising Sync Transfer Received [v2]
        HCILESubeventCode.periodicAdvertisingSyncTransferReceivedV2.rawValue: .init(
            "LE Periodic Advertising Sync Transfer Received v2",
            [
                F("status", 1, .status), F("connection_handle", 2, .handle),
                F("service_data", 2), F("sync_handle", 2, .handle), F("advertising_sid", 1), F("advertiser_address_type", 1),
                F("advertiser_address", 6, .address), F("advertiser_phy", 1), F("periodic_advertising_interval", 2), F("advertiser_clock_accuracy", 1),
                F("num_subevents", 1), F("subevent_interval", 1), F("response_slot_delay", 1), F("response_slot_spacing", 1)
            ]),
        // §7.7.65.25 LE CIS Established [v2]
        HCILESubeventCode.cisEstablishedV2.rawValue: .init(
            "LE CIS Established v2",
            cisEstablished + [
                F("sub_interval", 3), F("max_sdu_c_to_p", 2), F("max_sdu_p_to_c", 2),
                F("sdu_interval_c_to_p", 3), F("sdu_interval_p_to_c", 3), F("framing", 1)
            ])
    ]

    static let cisEstablished: [LEAudioHCIField] = [
        F("status", 1, .status), F("connection_handle", 2, .handle), F("cig_sync_delay", 3), F("cis_sync_delay", 3),
        F("transport_latency_c_to_p", 3), F("transport_latency_p_to_c", 3), F("phy_c_to_p", 1, .phy), F("phy_p_to_c", 1, .phy),
        F("nse", 1), F("bn_c_to_p", 1), F("bn_p_to_c", 1), F("ft_c_to_p", 1), F("ft_p_to_c", 1), F("max_pdu_c_to_p", 2),
        F("max_pdu_p_to_c", 2), F("iso_interval", 2)
    ]
}

/// One value of a layout field.
public enum LEAudioHCIValue: Hashable, Sendable {
    case uint(UInt64)
    case bytes([UInt8])
}

/// A decoded isochronous or periodic-advertising HCI command, return or subevent: the
/// layout and its values in order (group entries after the fixed fields).
public struct LEAudioHCIMessage: Hashable, Sendable, FieldDescribable {
    public enum Kind: Hashable, Sendable { case command(UInt16), returnParameters(UInt16), subevent(UInt8) }
    public var kind: Kind
    public var fields: [(String, LEAudioHCIValue)] { zip(names, values).map { ($0, $1) } }
    public var names: [String]
    public var values: [LEAudioHCIValue]
    /// Index of the first value of each group entry.
    public var groupStarts: [Int]
    public var error: DecodeError?
    public var showKeys = false

    public var layout: LEAudioHCILayout {
        switch kind {
        case .command(let op): LEAudioHCILayouts.commands[op]!
        case .returnParameters(let op): LEAudioHCILayouts.returns[op]!
        case .subevent(let s): LEAudioHCILayouts.subevents[s]!
        }
    }
    public var name: String { layout.name }

    /// Command parameters (after opcode and length), return parameters (after the opcode
    /// answered) or subevent parameters (after the subevent code). Nil: not LE Audio's.
    public init?(_ kind: Kind, parameters p: UnsafeRawBufferPointer) {
        let layout: LEAudioHCILayout
        switch kind {
        case .command(let op): guard let l = LEAudioHCILayouts.commands[op] else { return nil }; layout = l
        case .returnParameters(let op): guard let l = LEAudioHCILayouts.returns[op] else { return nil }; layout = l
        case .subevent(let s): guard let l = LEAudioHCILayouts.subevents[s] else { return nil }; layout = l
        }
        self.kind = kind; names = []; values = []; groupStarts = []
        var r = ByteReader(p)
        do throws(DecodeError) {
            try read(layout.fields, &r)
            if let c = layout.count, let i = names.lastIndex(of: c), case .uint(let n) = values[i] {
                for _ in 0..<Int(n) { groupStarts.append(values.count); try read(layout.group, &r) }
            }
            try read(layout.trailing, &r)
            // Return parameters and events may grow in later versions: extra bytes are a note.
            if !r.isAtEnd { throw DecodeError(code: .invalidLength, offset: r.readerIndex, message: "\(r.readableBytes) bytes after the parameters") }
        } catch {
            // A failed command answers with its status alone (§7.7.14): not damage.
            if case .returnParameters = kind, values.count == 1, case .uint(let s) = values[0], s != 0, error.code == .truncated {
            } else {
                self.error = error.inLayer("hci")
            }
        }
    }

    private mutating func read(_ fields: [LEAudioHCIField], _ r: inout ByteReader) throws(DecodeError) {
        for f in fields {
            let v: LEAudioHCIValue
            switch f.kind {
            case .address, .key: v = .bytes(Array(try r.readBytes(f.size, "parameter")))
            case .codecID: v = .bytes(Array(try r.readBytes(5, "Codec_ID")))
            case .lengthPrefixedBytes:
                guard case .uint(let n)? = values.last else { v = .bytes([]); break }
                v = .bytes(Array(try r.readBytes(Int(n), "data")))
            default: v = .uint(try r.readUInt(size: f.size, endianness: .little, "parameter"))
            }
            names.append(f.name); values.append(v)
        }
    }

    /// The parameters' bytes again.
    public func encode() -> [UInt8] {
        var w = ByteWriter()
        let l = layout
        var kinds = l.fields
        for _ in groupStarts { kinds += l.group }
        kinds += l.trailing
        for (f, v) in zip(kinds, values) {
            switch v {
            case .uint(let x): w.writeUInt(x, size: f.size, endianness: .little)
            case .bytes(let b): w.writeBytes(b)
            }
        }
        return w.bytes
    }

    /// The first value named `name` (a fixed field, or the first group entry's).
    public func uint(_ name: String) -> UInt64? {
        guard let i = names.firstIndex(of: name), case .uint(let v) = values[i] else { return nil }
        return v
    }
    /// Every value named `name` (a group's column).
    public func uints(_ name: String) -> [UInt64] {
        zip(names, values).compactMap { n, v in if n == name, case .uint(let x) = v { x } else { nil } }
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        let l = layout
        var kinds = l.fields
        for _ in groupStarts { kinds += l.group }
        kinds += l.trailing
        let fixedCount = l.fields.count
        func one(_ f: LEAudioHCIField, _ v: LEAudioHCIValue, _ s: inout S) {
            let key = FieldKey.dynamic(f.name)
            switch (f.kind, v) {
            case (.int8, .uint(let x)): s.int(key, Int(Int8(truncatingIfNeeded: x)))
            case (.status, .uint(let x)):
                s.int(key, Int(x)); s.string(.dynamic(f.name + "_name"), HCIStatus(UInt8(truncatingIfNeeded: x)).name)
            case (.phy, .uint(let x)):
                s.int(key, Int(x)); s.string(.dynamic(f.name + "_name"), LEAudioPHY.names(UInt8(truncatingIfNeeded: x)))
            case (.handle, .uint(let x)): s.uint(key, x & 0x0FFF)
            case (.uint, .uint(let x)): s.uint(key, x)
            case (.key, .bytes(let b)): if showKeys { s.hex(key, b) } else { s.string(key, "hidden") }
            case (.address, .bytes(let b)): s.address(key, b.withUnsafeBytes { BDAddr(littleEndian: $0) })
            case (.codecID, .bytes(let b)):
                let id = LEAudioCodecID(codingFormat: b[0], companyID: UInt16(b[1]) | UInt16(b[2]) << 8, vendorCodecID: UInt16(b[3]) | UInt16(b[4]) << 8)
                s.object(key) { s in id.describe(into: &s) }
            case (_, .bytes(let b)): s.hex(key, b)
            case (_, .uint(let x)): s.uint(key, x)
            }
        }
        for i in 0..<min(fixedCount, values.count) { one(kinds[i], values[i], &sink) }
        if let g = l.groupKey {
            sink.array(.dynamic(g)) { s in
                for (n, start) in groupStarts.enumerated() {
                    let end = n + 1 < groupStarts.count ? groupStarts[n + 1] : min(values.count, start + l.group.count)
                    if l.group.count == 1 {
                        // A list of single values (BIS indices, handles) is a list of numbers.
                        if start < values.count, case .uint(let x) = values[start] { s.uint("", x) }
                    } else {
                        s.object("") { s in for i in start..<end { one(kinds[i], values[i], &s) } }
                    }
                }
            }
        }
        if let error { sink.string("error", error.message) }
    }

    /// "LE CIS Established status Success handle 0x0060".
    public var summary: String {
        var s = name
        if let st = uint("status") { s += " " + HCIStatus(UInt8(truncatingIfNeeded: st)).name }
        for k in ["cig_id", "big_handle", "connection_handle", "cis_connection_handle", "sync_handle"] {
            if let v = uint(k) { s += " " + k + "=" + (k.hasSuffix("handle") ? Hex.fixed(v, width: 4) : String(v)) }
        }
        if let e = error { s += " [" + e.message + "]" }
        return s
    }

    public static func == (a: Self, b: Self) -> Bool { a.kind == b.kind && a.names == b.names && a.values == b.values && a.groupStarts == b.groupStarts }
    public func hash(into h: inout Hasher) { h.combine(names); h.combine(values) }
}
