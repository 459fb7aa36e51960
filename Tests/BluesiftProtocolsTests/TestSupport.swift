import Testing
import BluesiftWire

/// Runs `body` with a view over the bytes of `hex` ("0a 52 00").
func withBytes<T>(_ hex: String, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
    let bytes = Hex.parse(hex)!
    return try bytes.withUnsafeBytes { try body($0) }
}

/// The compact JSON a describable writes (as in JSON Lines, without the frame envelope).
func json(_ d: some FieldDescribable) -> String {
    var w = JSONFieldWriter(capacity: 256)
    w.beginTopLevel()
    d.describe(into: &w)
    w.endTopLevel()
    return String(decoding: w.out, as: UTF8.self)
}
