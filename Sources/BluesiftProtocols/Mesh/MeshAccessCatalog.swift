/// The SIG model messages decoded field by field: opcode → name and parameter layout.
/// Configuration and Health: Mesh Protocol v1.1 §4.3.2-§4.3.3 and the opcode summary of
/// §4.3.4 (Table 4.295). Generic, Sensor, Time, Scene, Scheduler, Light: Mesh Model v1.1
/// §3.2, §4.2, §5.2, §6.3 and the opcode summary of §7.1 (Table 7.2). Gets without
/// parameters are listed for their names.
public enum MeshAccessCatalog {
    public struct Entry: Sendable {
        public var name: String
        public var fields: [MeshField]
    }

    // Common layouts.
    static let transition: MeshField = .optional([.u8("transition_time"), .u8("delay")])
    static let retransmit: MeshField = .bits(1, [.init("retransmit_count", 0, 3), .init("retransmit_interval_steps", 3, 5)])
    static let publish: [MeshField] = [
        .bits(2, [.init("app_key_index", 0, 12), .init("credential_flag", 12, 1), .init("rfu", 13, 3)]),
        .u8("publish_ttl"), .u8("publish_period"),
        .bits(1, [.init("publish_retransmit_count", 0, 3), .init("publish_retransmit_interval_steps", 3, 5)]), .model
    ]
    static let tai: [MeshField] = [
        .u40("tai_seconds"),
        .optional([
            .u8("subsecond"), .u8("uncertainty"),
            .bits(2, [.init("time_authority", 0, 1), .init("tai_utc_delta", 1, 15)]), .u8("time_zone_offset")
        ])
    ]

    public static let entries: [UInt32: Entry] = {
        var e: [UInt32: Entry] = [:]
        func add(_ op: UInt32, _ name: String, _ f: [MeshField] = []) { e[op] = Entry(name: name, fields: f) }

        // Configuration (Mesh Protocol v1.1 §4.3.2).
        add(0x00, "Config AppKey Add", [.keyPair, .secret("app_key", 16)])
        add(0x01, "Config AppKey Update", [.keyPair, .secret("app_key", 16)])
        add(0x02, "Config Composition Data Status", [.composition])
        add(0x03, "Config Model Publication Set", [.u16("element_address"), .u16("publish_address")] + publish)
        add(
            0x06, "Config Heartbeat Publication Status",
            [
                .status, .u16("destination"), .u8("count_log"), .u8("period_log"), .u8("ttl"),
                .u16("features"), .keyIndex("net_key_index")
            ])
        add(0x8000, "Config AppKey Delete", [.keyPair])
        add(0x8001, "Config AppKey Get", [.keyIndex("net_key_index")])
        add(0x8002, "Config AppKey List", [.status, .keyIndex("net_key_index"), .keyIndexes("app_key_indexes")])
        add(0x8003, "Config AppKey Status", [.status, .keyPair])
        add(0x8008, "Config Composition Data Get", [.u8("page")])
        add(0x8009, "Config Beacon Get")
        add(0x800A, "Config Beacon Set", [.u8("beacon")])
        add(0x800B, "Config Beacon Status", [.u8("beacon")])
        add(0x800C, "Config Default TTL Get")
        add(0x800D, "Config Default TTL Set", [.u8("ttl")])
        add(0x800E, "Config Default TTL Status", [.u8("ttl")])
        add(0x800F, "Config Friend Get")
        add(0x8010, "Config Friend Set", [.u8("friend")])
        add(0x8011, "Config Friend Status", [.u8("friend")])
        add(0x8012, "Config GATT Proxy Get")
        add(0x8013, "Config GATT Proxy Set", [.u8("gatt_proxy")])
        add(0x8014, "Config GATT Proxy Status", [.u8("gatt_proxy")])
        add(0x8015, "Config Key Refresh Phase Get", [.keyIndex("net_key_index")])
        add(0x8016, "Config Key Refresh Phase Set", [.keyIndex("net_key_index"), .u8("transition")])
        add(0x8017, "Config Key Refresh Phase Status", [.status, .keyIndex("net_key_index"), .u8("phase")])
        add(0x8018, "Config Model Publication Get", [.u16("element_address"), .model])
        add(0x8019, "Config Model Publication Status", [.status, .u16("element_address"), .u16("publish_address")] + publish)
        add(0x801A, "Config Model Publication Virtual Address Set", [.u16("element_address"), .bytes("publish_address", 16)] + publish)
        add(0x801B, "Config Model Subscription Add", [.u16("element_address"), .u16("address"), .model])
        add(0x801C, "Config Model Subscription Delete", [.u16("element_address"), .u16("address"), .model])
        add(0x801D, "Config Model Subscription Delete All", [.u16("element_address"), .model])
        add(0x801E, "Config Model Subscription Overwrite", [.u16("element_address"), .u16("address"), .model])
        add(0x801F, "Config Model Subscription Status", [.status, .u16("element_address"), .u16("address"), .model])
        add(0x8020, "Config Model Subscription Virtual Address Add", [.u16("element_address"), .bytes("label", 16), .model])
        add(0x8021, "Config Model Subscription Virtual Address Delete", [.u16("element_address"), .bytes("label", 16), .model])
        add(0x8022, "Config Model Subscription Virtual Address Overwrite", [.u16("element_address"), .bytes("label", 16), .model])
        add(0x8023, "Config Network Transmit Get")
        add(0x8024, "Config Network Transmit Set", [.bits(1, [.init("network_transmit_count", 0, 3), .init("network_transmit_interval_steps", 3, 5)])])
        add(0x8025, "Config Network Transmit Status", [.bits(1, [.init("network_transmit_count", 0, 3), .init("network_transmit_interval_steps", 3, 5)])])
        add(0x8026, "Config Relay Get")
        add(0x8027, "Config Relay Set", [.u8("relay"), .bits(1, [.init("relay_retransmit_count", 0, 3), .init("relay_retransmit_interval_steps", 3, 5)])])
        add(0x8028, "Config Relay Status", [.u8("relay"), .bits(1, [.init("relay_retransmit_count", 0, 3), .init("relay_retransmit_interval_steps", 3, 5)])])
        add(0x8029, "Config SIG Model Subscription Get", [.u16("element_address"), .u16("model_id")])
        add(0x802A, "Config SIG Model Subscription List", [.status, .u16("element_address"), .u16("model_id"), .u16s("addresses")])
        add(0x802B, "Config Vendor Model Subscription Get", [.u16("element_address"), .u16("company_id"), .u16("model_id")])
        add(0x802C, "Config Vendor Model Subscription List", [.status, .u16("element_address"), .u16("company_id"), .u16("model_id"), .u16s("addresses")])
        add(0x802D, "Config Low Power Node PollTimeout Get", [.u16("lpn_address")])
        add(0x802E, "Config Low Power Node PollTimeout Status", [.u16("lpn_address"), .u24("poll_timeout")])
        add(0x8038, "Config Heartbeat Publication Get")
        add(
            0x8039, "Config Heartbeat Publication Set",
            [
                .u16("destination"), .u8("count_log"), .u8("period_log"), .u8("ttl"),
                .u16("features"), .keyIndex("net_key_index")
            ])
        add(0x803A, "Config Heartbeat Subscription Get")
        add(0x803B, "Config Heartbeat Subscription Set", [.u16("source"), .u16("destination"), .u8("period_log")])
        add(
            0x803C, "Config Heartbeat Subscription Status",
            [
                .status, .u16("source"), .u16("destination"), .u8("period_log"),
                .u8("count_log"), .u8("min_hops"), .u8("max_hops")
            ])
        add(0x803D, "Config Model App Bind", [.u16("element_address"), .keyIndex("app_key_index"), .model])
        add(0x803E, "Config Model App Status", [.status, .u16("element_address"), .keyIndex("app_key_index"), .model])
        add(0x803F, "Config Model App Unbind", [.u16("element_address"), .keyIndex("app_key_index"), .model])
        add(0x8040, "Config NetKey Add", [.keyIndex("net_key_index"), .secret("net_key", 16)])
        add(0x8041, "Config NetKey Delete", [.keyIndex("net_key_index")])
        add(0x8042, "Config NetKey Get")
        add(0x8043, "Config NetKey List", [.keyIndexes("net_key_indexes")])
        add(0x8044, "Config NetKey Status", [.status, .keyIndex("net_key_index")])
        add(0x8045, "Config NetKey Update", [.keyIndex("net_key_index"), .secret("net_key", 16)])
        add(0x8046, "Config Node Identity Get", [.keyIndex("net_key_index")])
        add(0x8047, "Config Node Identity Set", [.keyIndex("net_key_index"), .u8("identity")])
        add(0x8048, "Config Node Identity Status", [.status, .keyIndex("net_key_index"), .u8("identity")])
        add(0x8049, "Config Node Reset")
        add(0x804A, "Config Node Reset Status")
        add(0x804B, "Config SIG Model App Get", [.u16("element_address"), .u16("model_id")])
        add(0x804C, "Config SIG Model App List", [.status, .u16("element_address"), .u16("model_id"), .keyIndexes("app_key_indexes")])
        add(0x804D, "Config Vendor Model App Get", [.u16("element_address"), .u16("company_id"), .u16("model_id")])
        add(
            0x804E, "Config Vendor Model App List",
            [
                .status, .u16("element_address"), .u16("company_id"), .u16("model_id"),
                .keyIndexes("app_key_indexes")
            ])

        // Health (Mesh Protocol v1.1 §4.3.3).
        add(0x04, "Health Current Status", [.u8("test_id"), .u16("company_id"), .rest("fault_array")])
        add(0x05, "Health Fault Status", [.u8("test_id"), .u16("company_id"), .rest("fault_array")])
        add(0x8004, "Health Attention Get")
        add(0x8005, "Health Attention Set", [.u8("attention")])
        add(0x8006, "Health Attention Set Unacknowledged", [.u8("attention")])
        add(0x8007, "Health Attention Status", [.u8("attention")])
        add(0x802F, "Health Fault Clear", [.u16("company_id")])
        add(0x8030, "Health Fault Clear Unacknowledged", [.u16("company_id")])
        add(0x8031, "Health Fault Get", [.u16("company_id")])
        add(0x8032, "Health Fault Test", [.u8("test_id"), .u16("company_id")])
        add(0x8033, "Health Fault Test Unacknowledged", [.u8("test_id"), .u16("company_id")])
        add(0x8034, "Health Period Get")
        add(0x8035, "Health Period Set", [.u8("fast_period_divisor")])
        add(0x8036, "Health Period Set Unacknowledged", [.u8("fast_period_divisor")])
        add(0x8037, "Health Period Status", [.u8("fast_period_divisor")])

        // Generic (Mesh Model v1.1 §3.2).
        add(0x8201, "Generic OnOff Get")
        add(0x8202, "Generic OnOff Set", [.u8("onoff"), .u8("tid"), transition])
        add(0x8203, "Generic OnOff Set Unacknowledged", [.u8("onoff"), .u8("tid"), transition])
        add(0x8204, "Generic OnOff Status", [.u8("present_onoff"), .optional([.u8("target_onoff"), .u8("remaining_time")])])
        add(0x8205, "Generic Level Get")
        add(0x8206, "Generic Level Set", [.s16("level"), .u8("tid"), transition])
        add(0x8207, "Generic Level Set Unacknowledged", [.s16("level"), .u8("tid"), transition])
        add(0x8208, "Generic Level Status", [.s16("present_level"), .optional([.s16("target_level"), .u8("remaining_time")])])
        add(0x8209, "Generic Delta Set", [.s32("delta_level"), .u8("tid"), transition])
        add(0x820A, "Generic Delta Set Unacknowledged", [.s32("delta_level"), .u8("tid"), transition])
        add(0x820B, "Generic Move Set", [.s16("delta_level"), .u8("tid"), transition])
        add(0x820C, "Generic Move Set Unacknowledged", [.s16("delta_level"), .u8("tid"), transition])
        add(0x820D, "Generic Default Transition Time Get")
        add(0x820E, "Generic Default Transition Time Set", [.u8("transition_time")])
        add(0x820F, "Generic Default Transition Time Set Unacknowledged", [.u8("transition_time")])
        add(0x8210, "Generic Default Transition Time Status", [.u8("transition_time")])
        add(0x8211, "Generic OnPowerUp Get")
        add(0x8212, "Generic OnPowerUp Status", [.u8("onpowerup")])
        add(0x8213, "Generic OnPowerUp Set", [.u8("onpowerup")])
        add(0x8214, "Generic OnPowerUp Set Unacknowledged", [.u8("onpowerup")])
        add(0x8215, "Generic Power Level Get")
        add(0x8216, "Generic Power Level Set", [.u16("power"), .u8("tid"), transition])
        add(0x8217, "Generic Power Level Set Unacknowledged", [.u16("power"), .u8("tid"), transition])
        add(0x8218, "Generic Power Level Status", [.u16("present_power"), .optional([.u16("target_power"), .u8("remaining_time")])])
        add(0x8219, "Generic Power Last Get")
        add(0x821A, "Generic Power Last Status", [.u16("power")])
        add(0x821B, "Generic Power Default Get")
        add(0x821C, "Generic Power Default Status", [.u16("power")])
        add(0x821D, "Generic Power Range Get")
        add(0x821E, "Generic Power Range Status", [.u8("status_code"), .u16("range_min"), .u16("range_max")])
        add(0x821F, "Generic Power Default Set", [.u16("power")])
        add(0x8220, "Generic Power Default Set Unacknowledged", [.u16("power")])
        add(0x8221, "Generic Power Range Set", [.u16("range_min"), .u16("range_max")])
        add(0x8222, "Generic Power Range Set Unacknowledged", [.u16("range_min"), .u16("range_max")])
        add(0x8223, "Generic Battery Get")
        add(0x8224, "Generic Battery Status", [.u8("battery_level"), .u24("time_to_discharge"), .u24("time_to_charge"), .u8("flags")])
        add(0x8225, "Generic Location Global Get")
        add(0x40, "Generic Location Global Status", [.s32("global_latitude"), .s32("global_longitude"), .s16("global_altitude")])
        add(0x41, "Generic Location Global Set", [.s32("global_latitude"), .s32("global_longitude"), .s16("global_altitude")])
        add(0x42, "Generic Location Global Set Unacknowledged", [.s32("global_latitude"), .s32("global_longitude"), .s16("global_altitude")])
        add(0x8226, "Generic Location Local Get")
        let local: [MeshField] = [.s16("local_north"), .s16("local_east"), .s16("local_altitude"), .u8("floor_number"), .u16("uncertainty")]
        add(0x8227, "Generic Location Local Status", local)
        add(0x8228, "Generic Location Local Set", local)
        add(0x8229, "Generic Location Local Set Unacknowledged", local)

        // Generic Property (Mesh Model v1.1 §3.2.8): a property's value is as long as its
        // Mesh device property says (Mesh Device Properties), shown as hex.
        add(0x822A, "Generic Manufacturer Properties Get")
        add(0x43, "Generic Manufacturer Properties Status", [.u16s("manufacturer_property_ids")])
        add(0x822B, "Generic Manufacturer Property Get", [.u16("manufacturer_property_id")])
        add(0x44, "Generic Manufacturer Property Set", [.u16("manufacturer_property_id"), .u8("manufacturer_user_access")])
        add(0x45, "Generic Manufacturer Property Set Unacknowledged", [.u16("manufacturer_property_id"), .u8("manufacturer_user_access")])
        add(
            0x46, "Generic Manufacturer Property Status",
            [.u16("manufacturer_property_id"), .optional([.u8("manufacturer_user_access"), .rest("manufacturer_property_value")])])
        add(0x822C, "Generic Admin Properties Get")
        add(0x47, "Generic Admin Properties Status", [.u16s("admin_property_ids")])
        add(0x822D, "Generic Admin Property Get", [.u16("admin_property_id")])
        add(0x48, "Generic Admin Property Set", [.u16("admin_property_id"), .u8("admin_user_access"), .rest("admin_property_value")])
        add(0x49, "Generic Admin Property Set Unacknowledged", [.u16("admin_property_id"), .u8("admin_user_access"), .rest("admin_property_value")])
        add(0x4A, "Generic Admin Property Status", [.u16("admin_property_id"), .optional([.u8("admin_user_access"), .rest("admin_property_value")])])
        add(0x822E, "Generic User Properties Get")
        add(0x4B, "Generic User Properties Status", [.u16s("user_property_ids")])
        add(0x822F, "Generic User Property Get", [.u16("user_property_id")])
        add(0x4C, "Generic User Property Set", [.u16("user_property_id"), .rest("user_property_value")])
        add(0x4D, "Generic User Property Set Unacknowledged", [.u16("user_property_id"), .rest("user_property_value")])
        add(0x4E, "Generic User Property Status", [.u16("user_property_id"), .optional([.u8("user_access"), .rest("user_property_value")])])
        add(0x4F, "Generic Client Properties Get", [.u16("client_property_id")])
        add(0x50, "Generic Client Properties Status", [.u16s("client_property_ids")])

        // Sensor (Mesh Model v1.1 §4.2).
        add(0x8230, "Sensor Descriptor Get", [.optional([.u16("property_id")])])
        add(0x51, "Sensor Descriptor Status", [.sensorDescriptors])
        add(0x8231, "Sensor Get", [.optional([.u16("property_id")])])
        add(0x52, "Sensor Status", [.sensorData])
        add(0x8232, "Sensor Column Get", [.u16("property_id"), .rest("raw_value_x")])
        add(0x53, "Sensor Column Status", [.u16("property_id"), .rest("columns")])
        add(0x8233, "Sensor Series Get", [.u16("property_id"), .rest("raw_value_x")])
        add(0x54, "Sensor Series Status", [.u16("property_id"), .rest("series")])
        add(0x8234, "Sensor Cadence Get", [.u16("property_id")])
        add(0x55, "Sensor Cadence Set", [.u16("property_id"), .rest("cadence")])
        add(0x56, "Sensor Cadence Set Unacknowledged", [.u16("property_id"), .rest("cadence")])
        add(0x57, "Sensor Cadence Status", [.u16("property_id"), .rest("cadence")])
        add(0x8235, "Sensor Settings Get", [.u16("property_id")])
        add(0x58, "Sensor Settings Status", [.u16("property_id"), .u16s("setting_property_ids")])
        add(0x8236, "Sensor Setting Get", [.u16("property_id"), .u16("setting_property_id")])
        add(0x59, "Sensor Setting Set", [.u16("property_id"), .u16("setting_property_id"), .rest("setting_raw")])
        add(0x5A, "Sensor Setting Set Unacknowledged", [.u16("property_id"), .u16("setting_property_id"), .rest("setting_raw")])
        add(0x5B, "Sensor Setting Status", [.u16("property_id"), .u16("setting_property_id"), .optional([.u8("setting_access"), .rest("setting_raw")])])

        // Time (Mesh Model v1.1 §5.2.1).
        add(0x8237, "Time Get")
        add(0x5C, "Time Set", tai)
        add(0x5D, "Time Status", tai)
        add(0x8238, "Time Role Get")
        add(0x8239, "Time Role Set", [.u8("time_role")])
        add(0x823A, "Time Role Status", [.u8("time_role")])
        add(0x823B, "Time Zone Get")
        add(0x823C, "Time Zone Set", [.u8("time_zone_offset_new"), .u40("tai_of_zone_change")])
        add(0x823D, "Time Zone Status", [.u8("time_zone_offset_current"), .u8("time_zone_offset_new"), .u40("tai_of_zone_change")])
        add(0x823E, "TAI-UTC Delta Get")
        add(0x823F, "TAI-UTC Delta Set", [.bits(2, [.init("tai_utc_delta_new", 0, 15), .init("padding", 15, 1)]), .u40("tai_of_delta_change")])
        add(
            0x8240, "TAI-UTC Delta Status",
            [
                .bits(2, [.init("tai_utc_delta_current", 0, 15), .init("padding_1", 15, 1)]),
                .bits(2, [.init("tai_utc_delta_new", 0, 15), .init("padding_2", 15, 1)]), .u40("tai_of_delta_change")
            ])

        // Scene (Mesh Model v1.1 §5.2.2).
        add(0x8241, "Scene Get")
        add(0x8242, "Scene Recall", [.u16("scene_number"), .u8("tid"), transition])
        add(0x8243, "Scene Recall Unacknowledged", [.u16("scene_number"), .u8("tid"), transition])
        add(0x5E, "Scene Status", [.u8("status_code"), .u16("current_scene"), .optional([.u16("target_scene"), .u8("remaining_time")])])
        add(0x8244, "Scene Register Get")
        add(0x8245, "Scene Register Status", [.u8("status_code"), .u16("current_scene"), .u16s("scenes")])
        add(0x8246, "Scene Store", [.u16("scene_number")])
        add(0x8247, "Scene Store Unacknowledged", [.u16("scene_number")])
        add(0x829E, "Scene Delete", [.u16("scene_number")])
        add(0x829F, "Scene Delete Unacknowledged", [.u16("scene_number")])

        // Scheduler (Mesh Model v1.1 §5.2.3).
        add(0x8248, "Scheduler Action Get", [.u8("index")])
        add(0x5F, "Scheduler Action Status", [.bytes("entry", 10)])
        add(0x8249, "Scheduler Get")
        add(0x824A, "Scheduler Status", [.u16("schedules")])
        add(0x60, "Scheduler Action Set", [.bytes("entry", 10)])
        add(0x61, "Scheduler Action Set Unacknowledged", [.bytes("entry", 10)])

        // Light Lightness (Mesh Model v1.1 §6.3.1).
        add(0x824B, "Light Lightness Get")
        add(0x824C, "Light Lightness Set", [.u16("lightness"), .u8("tid"), transition])
        add(0x824D, "Light Lightness Set Unacknowledged", [.u16("lightness"), .u8("tid"), transition])
        add(0x824E, "Light Lightness Status", [.u16("present_lightness"), .optional([.u16("target_lightness"), .u8("remaining_time")])])
        add(0x824F, "Light Lightness Linear Get")
        add(0x8250, "Light Lightness Linear Set", [.u16("lightness"), .u8("tid"), transition])
        add(0x8251, "Light Lightness Linear Set Unacknowledged", [.u16("lightness"), .u8("tid"), transition])
        add(0x8252, "Light Lightness Linear Status", [.u16("present_lightness"), .optional([.u16("target_lightness"), .u8("remaining_time")])])
        add(0x8253, "Light Lightness Last Get")
        add(0x8254, "Light Lightness Last Status", [.u16("lightness")])
        add(0x8255, "Light Lightness Default Get")
        add(0x8256, "Light Lightness Default Status", [.u16("lightness")])
        add(0x8257, "Light Lightness Range Get")
        add(0x8258, "Light Lightness Range Status", [.u8("status_code"), .u16("range_min"), .u16("range_max")])
        add(0x8259, "Light Lightness Default Set", [.u16("lightness")])
        add(0x825A, "Light Lightness Default Set Unacknowledged", [.u16("lightness")])
        add(0x825B, "Light Lightness Range Set", [.u16("range_min"), .u16("range_max")])
        add(0x825C, "Light Lightness Range Set Unacknowledged", [.u16("range_min"), .u16("range_max")])

        // Light CTL (Mesh Model v1.1 §6.3.2).
        add(0x825D, "Light CTL Get")
        add(0x825E, "Light CTL Set", [.u16("ctl_lightness"), .u16("ctl_temperature"), .s16("ctl_delta_uv"), .u8("tid"), transition])
        add(0x825F, "Light CTL Set Unacknowledged", [.u16("ctl_lightness"), .u16("ctl_temperature"), .s16("ctl_delta_uv"), .u8("tid"), transition])
        add(
            0x8260, "Light CTL Status",
            [
                .u16("present_ctl_lightness"), .u16("present_ctl_temperature"),
                .optional([.u16("target_ctl_lightness"), .u16("target_ctl_temperature"), .u8("remaining_time")])
            ])
        add(0x8261, "Light CTL Temperature Get")
        add(0x8262, "Light CTL Temperature Range Get")
        add(0x8263, "Light CTL Temperature Range Status", [.u8("status_code"), .u16("range_min"), .u16("range_max")])
        add(0x8264, "Light CTL Temperature Set", [.u16("ctl_temperature"), .s16("ctl_delta_uv"), .u8("tid"), transition])
        add(0x8265, "Light CTL Temperature Set Unacknowledged", [.u16("ctl_temperature"), .s16("ctl_delta_uv"), .u8("tid"), transition])
        add(
            0x8266, "Light CTL Temperature Status",
            [
                .u16("present_ctl_temperature"), .s16("present_ctl_delta_uv"),
                .optional([.u16("target_ctl_temperature"), .s16("target_ctl_delta_uv"), .u8("remaining_time")])
            ])
        add(0x8267, "Light CTL Default Get")
        add(0x8268, "Light CTL Default Status", [.u16("lightness"), .u16("temperature"), .s16("delta_uv")])
        add(0x8269, "Light CTL Default Set", [.u16("lightness"), .u16("temperature"), .s16("delta_uv")])
        add(0x826A, "Light CTL Default Set Unacknowledged", [.u16("lightness"), .u16("temperature"), .s16("delta_uv")])
        add(0x826B, "Light CTL Temperature Range Set", [.u16("range_min"), .u16("range_max")])
        add(0x826C, "Light CTL Temperature Range Set Unacknowledged", [.u16("range_min"), .u16("range_max")])

        // Light HSL (Mesh Model v1.1 §6.3.3).
        add(0x826D, "Light HSL Get")
        add(0x826E, "Light HSL Hue Get")
        add(0x826F, "Light HSL Hue Set", [.u16("hue"), .u8("tid"), transition])
        add(0x8270, "Light HSL Hue Set Unacknowledged", [.u16("hue"), .u8("tid"), transition])
        add(0x8271, "Light HSL Hue Status", [.u16("present_hue"), .optional([.u16("target_hue"), .u8("remaining_time")])])
        add(0x8272, "Light HSL Saturation Get")
        add(0x8273, "Light HSL Saturation Set", [.u16("saturation"), .u8("tid"), transition])
        add(0x8274, "Light HSL Saturation Set Unacknowledged", [.u16("saturation"), .u8("tid"), transition])
        add(0x8275, "Light HSL Saturation Status", [.u16("present_saturation"), .optional([.u16("target_saturation"), .u8("remaining_time")])])
        add(0x8276, "Light HSL Set", [.u16("hsl_lightness"), .u16("hsl_hue"), .u16("hsl_saturation"), .u8("tid"), transition])
        add(0x8277, "Light HSL Set Unacknowledged", [.u16("hsl_lightness"), .u16("hsl_hue"), .u16("hsl_saturation"), .u8("tid"), transition])
        add(0x8278, "Light HSL Status", [.u16("hsl_lightness"), .u16("hsl_hue"), .u16("hsl_saturation"), .optional([.u8("remaining_time")])])
        add(0x8279, "Light HSL Target Get")
        add(
            0x827A, "Light HSL Target Status",
            [
                .u16("hsl_lightness_target"), .u16("hsl_hue_target"), .u16("hsl_saturation_target"),
                .optional([.u8("remaining_time")])
            ])
        add(0x827B, "Light HSL Default Get")
        add(0x827C, "Light HSL Default Status", [.u16("lightness"), .u16("hue"), .u16("saturation")])
        add(0x827D, "Light HSL Range Get")
        add(
            0x827E, "Light HSL Range Status",
            [
                .u8("status_code"), .u16("hue_range_min"), .u16("hue_range_max"),
                .u16("saturation_range_min"), .u16("saturation_range_max")
            ])
        add(0x827F, "Light HSL Default Set", [.u16("lightness"), .u16("hue"), .u16("saturation")])
        add(0x8280, "Light HSL Default Set Unacknowledged", [.u16("lightness"), .u16("hue"), .u16("saturation")])
        add(0x8281, "Light HSL Range Set", [.u16("hue_range_min"), .u16("hue_range_max"), .u16("saturation_range_min"), .u16("saturation_range_max")])
        add(
            0x8282, "Light HSL Range Set Unacknowledged",
            [
                .u16("hue_range_min"), .u16("hue_range_max"),
                .u16("saturation_range_min"), .u16("saturation_range_max")
            ])

        // Light xyL (Mesh Model v1.1 §6.3.4).
        add(0x8283, "Light xyL Get")
        add(0x8284, "Light xyL Set", [.u16("xyl_lightness"), .u16("xyl_x"), .u16("xyl_y"), .u8("tid"), transition])
        add(0x8285, "Light xyL Set Unacknowledged", [.u16("xyl_lightness"), .u16("xyl_x"), .u16("xyl_y"), .u8("tid"), transition])
        add(0x8286, "Light xyL Status", [.u16("xyl_lightness"), .u16("xyl_x"), .u16("xyl_y"), .optional([.u8("remaining_time")])])
        add(0x8287, "Light xyL Target Get")
        add(
            0x8288, "Light xyL Target Status",
            [.u16("target_xyl_lightness"), .u16("target_xyl_x"), .u16("target_xyl_y"), .optional([.u8("remaining_time")])])
        add(0x8289, "Light xyL Default Get")
        add(0x828A, "Light xyL Default Status", [.u16("lightness"), .u16("xyl_x"), .u16("xyl_y")])
        add(0x828B, "Light xyL Range Get")
        add(
            0x828C, "Light xyL Range Status",
            [.u8("status_code"), .u16("xyl_x_range_min"), .u16("xyl_x_range_max"), .u16("xyl_y_range_min"), .u16("xyl_y_range_max")])
        add(0x828D, "Light xyL Default Set", [.u16("lightness"), .u16("xyl_x"), .u16("xyl_y")])
        add(0x828E, "Light xyL Default Set Unacknowledged", [.u16("lightness"), .u16("xyl_x"), .u16("xyl_y")])
        add(0x828F, "Light xyL Range Set", [.u16("xyl_x_range_min"), .u16("xyl_x_range_max"), .u16("xyl_y_range_min"), .u16("xyl_y_range_max")])
        add(
            0x8290, "Light xyL Range Set Unacknowledged",
            [.u16("xyl_x_range_min"), .u16("xyl_x_range_max"), .u16("xyl_y_range_min"), .u16("xyl_y_range_max")])

        // Light LC (Mesh Model v1.1 §6.3.5): a property's value as its Mesh device property says, as hex.
        add(0x8291, "Light LC Mode Get")
        add(0x8292, "Light LC Mode Set", [.u8("mode")])
        add(0x8293, "Light LC Mode Set Unacknowledged", [.u8("mode")])
        add(0x8294, "Light LC Mode Status", [.u8("mode")])
        add(0x8295, "Light LC OM Get")
        add(0x8296, "Light LC OM Set", [.u8("mode")])
        add(0x8297, "Light LC OM Set Unacknowledged", [.u8("mode")])
        add(0x8298, "Light LC OM Status", [.u8("mode")])
        add(0x8299, "Light LC Light OnOff Get")
        add(0x829A, "Light LC Light OnOff Set", [.u8("light_onoff"), .u8("tid"), transition])
        add(0x829B, "Light LC Light OnOff Set Unacknowledged", [.u8("light_onoff"), .u8("tid"), transition])
        add(0x829C, "Light LC Light OnOff Status", [.u8("present_light_onoff"), .optional([.u8("target_light_onoff"), .u8("remaining_time")])])
        add(0x829D, "Light LC Property Get", [.u16("light_lc_property_id")])
        add(0x62, "Light LC Property Set", [.u16("light_lc_property_id"), .rest("light_lc_property_value")])
        add(0x63, "Light LC Property Set Unacknowledged", [.u16("light_lc_property_id"), .rest("light_lc_property_value")])
        add(0x64, "Light LC Property Status", [.u16("light_lc_property_id"), .rest("light_lc_property_value")])
        return e
    }()
}
