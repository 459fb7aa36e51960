import BluesiftWire

/// The examples inside a plugin, run by `bluesift plugins test`: each frame must decode to
/// the expected message, fields (a subset) and checksum verdict, and frames with a good
/// checksum must encode back to the same bytes.
public struct ExampleResult: Sendable {
    public var line: Int
    public var hex: String
    public var problems: [String]
    public var passed: Bool { problems.isEmpty }
}

extension Plugin {
    public func runExamples() -> [ExampleResult] {
        examples.map { ex in
            var problems: [String] = []
            var d: DecodedMessage
            if let target = ex.advertising {
                // Through match selection, as a report carrying this structure would go.
                guard let r = decodeAdvertisingExample(ex, target) else {
                    return ExampleResult(
                        line: ex.line, hex: Hex.string(ex.bytes, separator: " "),
                        problems: ["no match rule of \(id) takes this \(target)"])
                }
                d = r
            } else {
                d = decode(ex.bytes)
            }
            if let e = d.error { problems.append("decode error: \(e)") }
            if let m = ex.message, m != d.message { problems.append("message \(d.message), expected \(m)") }
            for f in ex.fields {
                guard let got = d[f.name] else { problems.append("no field '\(f.name)'"); continue }
                if !Self.matches(f.value, got) { problems.append("\(f.name) = \(got), expected \(f.value)") }
            }
            if let c = ex.checksum, c != d.checksum {
                problems.append("checksum \(d.checksum?.rawValue ?? "none"), expected \(c.rawValue)")
            }
            if let m = ex.mic, m != d.mic { problems.append("mic \(d.mic?.rawValue ?? "none"), expected \(m.rawValue)") }
            if d.error == nil && d.checksum != .bad && d.mic != .bad && (d.raw == nil || !decrypts) {
                do {
                    let again = try encode(d, context: ex.advertising == nil ? nil : ex.context, key: ex.key)
                    let expected = ex.advertisingPayload(self)
                    if again != expected { problems.append("encodes to \(Hex.string(again, separator: " "))") }
                } catch {
                    problems.append("encode: \(error)")
                }
            }
            return ExampleResult(line: ex.line, hex: Hex.string(ex.bytes, separator: " "), problems: problems)
        }
    }

    func decodeAdvertisingExample(_ ex: PluginExample, _ target: AdvertisingTarget) -> DecodedMessage? {
        decodeAdvertisingExample(ex, target, in: PluginSet([self]))?.message
    }

    /// An advertising example through `set`'s match selection: which plugin of the set takes
    /// the report this example describes, and its decode (the collision test asks this of
    /// every shipped plugin pair).
    public func decodeAdvertisingExample(_ ex: PluginExample, _ target: AdvertisingTarget, in set: PluginSet)
        -> (plugin: Int, message: DecodedMessage)?
    {
        var value: [UInt8]
        let type: UInt8
        switch target {
        case .company(let c):
            value = [UInt8(truncatingIfNeeded: c ?? 0), UInt8(truncatingIfNeeded: (c ?? 0) >> 8)] + ex.bytes
            type = 0xFF
        case .serviceData(let u):
            if let s = u.shortValue, s <= 0xFFFF {
                value = [UInt8(s & 0xFF), UInt8(s >> 8)]; type = 0x16
            } else if let s = u.shortValue {
                value = (0..<4).map { UInt8(truncatingIfNeeded: s >> (8 * UInt32($0))) }; type = 0x20
            } else {
                value = u.littleEndianBytes; type = 0x21
            }
            value += ex.bytes
        }
        if let k = ex.key, let a = ex.context.address { set.vendorKeys[a] = k }
        // The report: this structure and the example's `also` structure.
        var report = [UInt8(value.count + 1), type] + value
        if let a = ex.also { report += [UInt8(a.value.count + 1), a.type] + a.value }
        return value.withUnsafeBytes { v in
            report.withUnsafeBytes { r in
                set.decodeAdvertising(type: type, value: v, context: ex.context, serviceUUIDs: { ex.serviceUUIDs }, report: r)
                    .map { ($0.plugin, $0.message) }
            }
        }
    }

    /// Expected (from YAML) vs decoded: hex strings match bytes; objects match as subsets;
    /// numbers at the decoded value's places.
    static func matches(_ expected: PluginValue, _ got: PluginValue) -> Bool {
        switch (expected, got) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let s), .decimal(_, let v, let d)):
            guard let x = Double(s) else { return false }
            return PluginValue.format(x, decimals: d) == PluginValue.format(v, decimals: d)
        case (.int(let x), .decimal(_, let v, let d)):
            return PluginValue.format(Double(x), decimals: d) == PluginValue.format(v, decimals: d)
        case (.string(let s), .real(let v)): return Double(s).map { abs($0 - v) <= abs(v) * 1e-6 } ?? false
        case (.int(let x), .real(let v)): return Double(x) == v
        case (.string(let x), .string(let y)) where x.count == 17 && x.lowercased() == y.lowercased():
            return true // an address, in either case
        case (.string(let s), .bytes(let b)): return Hex.parse(s) == b
        case (.list(let x), .list(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { matches($0, $1) }
        case (.object(let x), .object):
            return x.allSatisfy { f in got[f.name].map { matches(f.value, $0) } ?? false }
        case (.int(let v), .string(let s)): return parseIntegerLiteral(s) == v
        default: return expected == got
        }
    }
}

extension PluginExample {
    /// The bytes an encoder gives back: the payload (with `with_company`, from the company id).
    func advertisingPayload(_ p: Plugin) -> [UInt8] {
        guard case .company(let c?) = advertising, p.matches.contains(where: { $0.advertising?.withCompany == true }) else { return bytes }
        return [UInt8(truncatingIfNeeded: c), UInt8(truncatingIfNeeded: c >> 8)] + bytes
    }
}
