/// Bluetooth assigned numbers as names. Tables are generated `switch` functions
/// (AssignedNumbers+Generated.swift, scripts/gen_assigned_numbers.py): no start-up cost,
/// no allocation. Names are the source's, verbatim; nil when unassigned.
public enum AssignedNumbers {
    /// 16-bit UUIDs (services, characteristics, descriptors, declarations, units, member
    /// UUIDs…) and well-known vendor 128-bit UUIDs.
    public static func uuidName(_ uuid: BluetoothUUID) -> String? {
        if let s = uuid.shortValue {
            guard s <= 0xFFFF else { return nil }
            return (0x2700...0x27FF).contains(s) ? generatedUnitName(UInt16(s)) : generatedUUID16Name(UInt16(s))
        }
        return generatedUUID128Name(high: uuid.high, low: uuid.low)
    }

    /// Company Identifier (manufacturer data, LL_VERSION_IND, PnP ID).
    public static func companyName(_ id: UInt16) -> String? { generatedCompanyName(id) }

    /// Appearance (Assigned Numbers §2.6): "Category: Subcategory", or the category name when
    /// the subcategory is not assigned (bits 15-6 category, 5-0 subcategory).
    public static func appearanceName(_ v: UInt16) -> String? {
        generatedAppearanceName(v) ?? generatedAppearanceName(v & ~0x3F)
    }

    /// Unit UUID (0x2700-0x27FF), e.g. 0x272F → "Celsius temperature (degree Celsius)".
    public static func unitName(_ v: UInt16) -> String? { generatedUnitName(v) }
}
