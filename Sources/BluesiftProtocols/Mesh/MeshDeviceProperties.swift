import BluesiftWire

/// Mesh Device Properties (Mesh Device Properties v2, §2 and Table 2.2): a property names a
/// GATT characteristic whose value a sensor or property message carries. The value is turned
/// into the characteristic's unit (GATT Specification Supplement §3); a property not listed
/// here stays hex with its length.
public struct MeshDeviceProperty: Sendable {
    public var id: UInt16
    public var name: StaticString
    public var format: Format

    /// One field of a characteristic: little-endian integer of `size` octets, times
    /// `num`/`den`, shown with at most `decimals` digits; `key` names the unit where the
    /// characteristic's field name does not.
    public struct Field: Sendable {
        public var key: StaticString, size: Int, signed: Bool, num: Int, den: Int, decimals: Int
        /// The raw value meaning "value is not known" (GATT Specification Supplement), or nil.
        public var unknown: Int?
    }

    /// A characteristic's layout: one or more fields, or a boolean.
    public struct Format: Sendable {
        public var name: StaticString
        public var fields: [Field]
        public var size: Int { fields.reduce(0) { $0 + $1.size } }
    }

    public static func lookup(_ id: Int) -> MeshDeviceProperty? { table[id] }

    /// The value's fields, written when `raw` has the characteristic's size; false otherwise
    /// (the caller keeps the hex).
    static func describeValue<S: FieldSink>(_ id: Int, _ raw: [UInt8], into sink: inout S) -> Bool {
        guard let p = table[id], raw.count == p.format.size else { return false }
        sink.string("property_name", p.name.description)
        var i = 0
        for f in p.format.fields {
            var v = 0
            for k in (0..<f.size).reversed() { v = v << 8 | Int(raw[i + k]) }
            if let u = f.unknown, v == u {
                sink.null(.literal(f.key))
            } else {
                if f.signed, v >= 1 << (8 * f.size - 1) { v -= 1 << (8 * f.size) }
                if f.decimals == -1 { sink.bool(.literal(f.key), v != 0) } else { sink.number(.literal(f.key), decimalText(v, f.num, f.den, f.decimals)) }
            }
            i += f.size
        }
        return true
    }

    /// v·num/den rounded half away from zero to `decimals` digits, trailing zeros dropped.
    static func decimalText(_ v: Int, _ num: Int, _ den: Int, _ decimals: Int) -> String {
        var p = 1
        for _ in 0..<decimals { p *= 10 }
        let n = v * num * p, q = (abs(n) * 2 + den) / (2 * den)
        var s = String(q / p)
        var frac = q % p, digits = decimals
        while digits > 0, frac % 10 == 0 { frac /= 10; digits -= 1 }
        if digits > 0 {
            var f = String(frac)
            while f.count < digits { f = "0" + f }
            s += "." + f
        }
        return (n < 0 && q != 0 ? "-" : "") + s
    }

    // MARK: characteristics (GATT Specification Supplement §3, by the name it gives them)

    static func f(_ key: StaticString, _ size: Int, signed: Bool = false, _ num: Int = 1, _ den: Int = 1, _ decimals: Int = 0, unknown: Int? = nil) -> Field {
        Field(key: key, size: size, signed: signed, num: num, den: den, decimals: decimals, unknown: unknown)
    }
    static let temperature8 = Format(name: "Temperature 8", fields: [f("temperature_celsius", 1, signed: true, 1, 2, 1, unknown: 0x7F)])
    static let temperature = Format(name: "Temperature", fields: [f("temperature_celsius", 2, signed: true, 1, 100, 2, unknown: 0x8000)])
    static let highTemperature = Format(name: "High Temperature", fields: [f("temperature_celsius", 2, signed: true, 1, 2, 1, unknown: 0x8000)])
    static let temperatureRange = Format(
        name: "Temperature Range", fields: [f("minimum_temperature_celsius", 1, signed: true, 1, 2, 1), f("maximum_temperature_celsius", 1, signed: true, 1, 2, 1)])
    static let illuminance = Format(name: "Illuminance", fields: [f("illuminance_lux", 3, 1, 100, 2, unknown: 0xFF_FFFF)])
    static let percentage8 = Format(name: "Percentage 8", fields: [f("percentage", 1, 1, 2, 1, unknown: 0xFF)])
    static let count16 = Format(name: "Count 16", fields: [f("count", 2, unknown: 0xFFFF)])
    static let count24 = Format(name: "Count 24", fields: [f("count", 3, unknown: 0xFF_FFFF)])
    static let timeSecond16 = Format(name: "Time Second 16", fields: [f("seconds", 2, unknown: 0xFFFF)])
    static let timeSecond32 = Format(name: "Time Second 32", fields: [f("seconds", 4, unknown: 0xFFFF_FFFF)])
    static let timeHour24 = Format(name: "Time Hour 24", fields: [f("hours", 3, unknown: 0xFF_FFFF)])
    static let timeMillisecond24 = Format(name: "Time Millisecond 24", fields: [f("seconds", 3, 1, 1000, 3, unknown: 0xFF_FFFF)])
    static let electricCurrent = Format(name: "Electric Current", fields: [f("current_amperes", 2, 1, 100, 2, unknown: 0xFFFF)])
    static let voltage = Format(name: "Voltage", fields: [f("voltage_volts", 2, 1, 64, 6, unknown: 0xFFFF)])
    static let highVoltage = Format(name: "High Voltage", fields: [f("voltage_volts", 3, 1, 64, 6, unknown: 0xFF_FFFF)])
    static let power = Format(name: "Power", fields: [f("power_watts", 3, 1, 10, 1, unknown: 0xFF_FFFF)])
    static let apparentPower = Format(name: "Apparent Power", fields: [f("apparent_power_volt_amperes", 3, 1, 10, 1, unknown: 0xFF_FFFF)])
    static let energy = Format(name: "Energy", fields: [f("energy_kilowatt_hours", 3, unknown: 0xFF_FFFF)])
    static let energy32 = Format(name: "Energy 32", fields: [f("energy_kilowatt_hours", 4, 1, 1000, 3, unknown: 0xFFFF_FFFF)])
    static let perceivedLightness = Format(name: "Perceived Lightness", fields: [f("perceived_lightness", 2)])
    static let cct = Format(name: "Correlated Color Temperature", fields: [f("correlated_color_temperature_kelvin", 2, unknown: 0xFFFF)])
    static let luminousFlux = Format(name: "Luminous Flux", fields: [f("luminous_flux_lumens", 2, unknown: 0xFFFF)])
    static let luminousIntensity = Format(name: "Luminous Intensity", fields: [f("luminous_intensity_candelas", 2, unknown: 0xFFFF)])
    static let luminousEfficacy = Format(name: "Luminous Efficacy", fields: [f("luminous_efficacy_lumens_per_watt", 2, 1, 10, 1, unknown: 0xFFFF)])
    static let luminousEnergy = Format(name: "Luminous Energy", fields: [f("luminous_energy_lumen_hours", 3, 1000, 1, 0, unknown: 0xFF_FFFF)])
    static let lightOutput = Format(name: "Light Output", fields: [f("light_output_lumens", 3, unknown: 0xFF_FFFF)])
    static let chromaticityCoordinates = Format(
        name: "Chromaticity Coordinates", fields: [f("chromaticity_x_coordinate", 2, 1, 65535, 6), f("chromaticity_y_coordinate", 2, 1, 65535, 6)])
    static let voltageFrequency = Format(name: "Voltage Frequency", fields: [f("voltage_frequency_hertz", 2, unknown: 0xFFFF)])
    static let boolean = Format(name: "Boolean", fields: [f("presence_detected", 1, 1, 1, -1)])

    /// Mesh Device Properties v2 Table 2.2: property ID, name, characteristic.
    static let table: [Int: MeshDeviceProperty] = {
        var t: [Int: MeshDeviceProperty] = [:]
        func add(_ id: UInt16, _ name: StaticString, _ format: Format) { t[Int(id)] = MeshDeviceProperty(id: id, name: name, format: format) }
        add(0x0006, "Center Beam Intensity at Full Power", luminousIntensity)
        add(0x000D, "Device Energy Use Since Turn On", energy)
        add(0x0013, "Device Operating Temperature Range Specification", temperatureRange)
        add(0x0017, "Device Runtime Since Turn On", timeHour24)
        add(0x0018, "Device Runtime Warranty", timeHour24)
        add(0x001D, "Initial CIE 1931 Chromaticity Coordinates", chromaticityCoordinates)
        add(0x001E, "Initial Correlated Color Temperature", cct)
        add(0x001F, "Initial Luminous Flux", luminousFlux)
        add(0x0029, "Input Voltage Ripple Specification", percentage8)
        add(0x002B, "Light Control Ambient LuxLevel On", illuminance)
        add(0x002C, "Light Control Ambient LuxLevel Prolong", illuminance)
        add(0x002D, "Light Control Ambient LuxLevel Standby", illuminance)
        add(0x002E, "Light Control Lightness On", perceivedLightness)
        add(0x002F, "Light Control Lightness Prolong", perceivedLightness)
        add(0x0030, "Light Control Lightness Standby", perceivedLightness)
        add(0x0031, "Light Control Regulator Accuracy", percentage8)
        add(0x0036, "Light Control Time Fade", timeMillisecond24)
        add(0x0037, "Light Control Time Fade On", timeMillisecond24)
        add(0x0038, "Light Control Time Fade Standby Auto", timeMillisecond24)
        add(0x0039, "Light Control Time Fade Standby Manual", timeMillisecond24)
        add(0x003A, "Light Control Time Occupancy Delay", timeMillisecond24)
        add(0x003B, "Light Control Time Prolong", timeMillisecond24)
        add(0x003C, "Light Control Time Run On", timeMillisecond24)
        add(0x003D, "Lumen Maintenance Factor", percentage8)
        add(0x003E, "Luminous Efficacy", luminousEfficacy)
        add(0x003F, "Luminous Energy Since Turn On", luminousEnergy)
        add(0x0042, "Motion Sensed", percentage8)
        add(0x0043, "Motion Threshold", percentage8)
        add(0x0048, "Output Ripple Voltage Specification", percentage8)
        add(0x004C, "People Count", count16)
        add(0x004D, "Presence Detected", boolean)
        add(0x004E, "Present Ambient Light Level", illuminance)
        add(0x004F, "Present Ambient Temperature", temperature8)
        add(0x0050, "Present CIE 1931 Chromaticity Coordinates", chromaticityCoordinates)
        add(0x0051, "Present Correlated Color Temperature", cct)
        add(0x0052, "Present Device Input Power", power)
        add(0x0053, "Present Device Operating Efficiency", percentage8)
        add(0x0054, "Present Device Operating Temperature", temperature)
        add(0x0055, "Present Illuminance", illuminance)
        add(0x0056, "Present Indoor Ambient Temperature", temperature8)
        add(0x0057, "Present Input Current", electricCurrent)
        add(0x0058, "Present Input Ripple Voltage", percentage8)
        add(0x0059, "Present Input Voltage", voltage)
        add(0x005A, "Present Luminous Flux", luminousFlux)
        add(0x005B, "Present Outdoor Ambient Temperature", temperature8)
        add(0x005C, "Present Output Current", electricCurrent)
        add(0x005D, "Present Output Voltage", voltage)
        add(0x005F, "Present Relative Output Ripple Voltage", percentage8)
        add(0x0068, "Time Since Motion Sensed", timeSecond16)
        add(0x0069, "Time Since Presence Detected", timeSecond16)
        add(0x006A, "Total Device Energy Use", energy)
        add(0x006B, "Total Device Off On Cycles", count24)
        add(0x006C, "Total Device Power On Cycles", count24)
        add(0x006D, "Total Device Power On Time", timeHour24)
        add(0x006E, "Total Device Runtime", timeHour24)
        add(0x006F, "Total Light Exposure Time", timeHour24)
        add(0x0070, "Total Luminous Energy", luminousEnergy)
        add(0x0071, "Desired Ambient Temperature", temperature8)
        add(0x0072, "Precise Total Device Energy Use", energy32)
        add(0x0075, "Precise Present Ambient Temperature", temperature)
        add(0x0080, "Active Energy Loadside", energy32)
        add(0x0081, "Active Power Loadside", power)
        add(0x0083, "Apparent Energy", energy32)
        add(0x0084, "Apparent Power", apparentPower)
        add(0x0088, "External Supply Voltage", highVoltage)
        add(0x0089, "External Supply Voltage Frequency", voltageFrequency)
        add(0x008E, "Light Source On Time Not Resettable", timeSecond32)
        add(0x008F, "Light Source On Time Resettable", timeSecond32)
        add(0x0093, "Light Source Start Counter Resettable", count24)
        add(0x0094, "Light Source Temperature", highTemperature)
        add(0x0097, "Light Source Total Power On Cycles", count24)
        add(0x009C, "Luminaire Nominal Input Power", power)
        add(0x009D, "Luminaire Nominal Maximum AC Mains Voltage", voltage)
        add(0x009E, "Luminaire Nominal Minimum AC Mains Voltage", voltage)
        add(0x009F, "Luminaire Power At Minimum Dim Level", power)
        add(0x00A4, "Nominal Light Output", lightOutput)
        add(0x00AB, "Rated Median Useful Life Of Luminaire", timeHour24)
        add(0x00AC, "Rated Median Useful Light Source Starts", count24)
        add(0x00AD, "Reference Temperature", highTemperature)
        add(0x00AE, "Total Device Starts", count24)
        add(0x00B7, "Output Current Percent", percentage8)
        return t
    }()
}
