// TEMPORARY until the generated tables land.
public enum AssignedNumbers {
    public static func uuidName(_ uuid: BluetoothUUID) -> String? { nil }
    public static func companyName(_ id: UInt16) -> String? { nil }
    public static func appearanceName(_ v: UInt16) -> String? { nil }
}
