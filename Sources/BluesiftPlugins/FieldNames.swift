/// Which plugin produces which value (`bluesift plugins list --field NAME`), and the other
/// names people know a value by. Plugins keep Home Assistant's key for a value (the oracle's:
/// `carbon_dioxide` in BTHome, `co2` in Qingping's and SwitchBot's libraries), so a search
/// by one name also looks for the others (Plugins/README.md, "Field names", lists them).
public enum FieldNames {
    /// Groups of names of one quantity; the first is Home Assistant's most common key.
    public static let synonyms: [[String]] = [
        ["temperature", "temp"],
        ["dew_point", "dewpoint", "dew point"],
        ["humidity", "relative_humidity", "rh"],
        ["carbon_dioxide", "co2", "carbon dioxide"],
        ["volatile_organic_compounds", "tvoc", "voc", "volatile organic compounds"],
        ["pm25", "pm2_5", "pm2.5"],
        ["weight", "mass"],
        ["pressure", "air_pressure", "barometric_pressure"],
        ["illuminance", "lux", "light"],
        ["battery", "battery_level"],
        ["conductivity", "fertility"],
        ["formaldehyde", "hcho"]
    ]

    /// `name` and the names of its group (lower case, spaces as given).
    public static func alike(_ name: String) -> [String] {
        let n = name.lowercased()
        return synonyms.first { $0.contains(n) } ?? [n]
    }
}

extension Plugin {
    /// The names of the values a plugin's decodes can show (its visible fields and bit fields,
    /// whatever message they belong to), with their units: what `plugins list --field` reads.
    public var producedFields: [(name: String, unit: String?)] {
        var out: [(name: String, unit: String?)] = []
        var seen = Set<String>()
        func add(_ n: String, _ u: String?) { if seen.insert(n).inserted { out.append((n, u)) } }
        for t in types {
            for f in t.fields {
                for b in f.bits { add(b.id, b.number?.unit) }
                if f.hidden || f.isSelector || f.checksum != nil || f.value != nil { continue }
                switch f.kind {
                case .contents, .switchOn: continue
                case .type where f.flatten || f.decrypt != nil: continue // its items' fields are listed from their type
                default: if f.bits.isEmpty || !matches.contains(where: { $0.advertising != nil }) { add(f.id, f.number?.unit) }
                }
            }
        }
        return out
    }
}
