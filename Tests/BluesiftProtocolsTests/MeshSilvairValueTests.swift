import Foundation
import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// Composition Data pages 1, 2, 129, 130 and Mesh Device Property values against Silvair's
/// bluetooth-mesh-messages 0.9.13 (scripts/mesh_values_oracle.py, from `.venv-mesh`). The
/// package reads pages 1 and 2 only; pages 129 and 130 have their layouts (§4.2.2.5-§4.2.2.6)
/// and are sent to it as 1 and 2.
@Suite(.enabled(if: MeshSilvairOracle.available, MeshSilvairOracle.skipMessage))
struct MeshSilvairValueTests {
    static let script = MeshSilvairOracle.root.appendingPathComponent("scripts/mesh_values_oracle.py").path

    static func oracle(_ requests: [String]) throws -> [[String: Any]] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: MeshSilvairOracle.python)
        p.arguments = [script]
        let inPipe = Pipe(), outPipe = Pipe()
        p.standardInput = inPipe; p.standardOutput = outPipe
        try p.run()
        inPipe.fileHandleForWriting.write(Data((requests.joined(separator: "\n") + "\n").utf8))
        try inPipe.fileHandleForWriting.close()
        let data = outPipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    static func object(_ s: String) throws -> [String: Any] { try JSONSerialization.jsonObject(with: Data(s.utf8)) as! [String: Any] }

    /// Page 1: elements of SIG and vendor model items, short and long extended items, with and
    /// without a corresponding group; page 2: profiles with offsets and additional data.
    static func pages(_ rng: inout MeshSilvairOracle.RNG) -> [[UInt8]] {
        func r(_ n: UInt64) -> Int { Int(rng.next() % n) }
        var out: [[UInt8]] = []
        for k in 0..<40 {
            var p1: [UInt8] = [k % 2 == 0 ? 1 : 129]
            for _ in 0..<(1 + r(3)) {
                let ns = r(3), nv = r(3)
                p1 += [UInt8(ns), UInt8(nv)]
                for _ in 0..<(ns + nv) {
                    let count = r(4), long = r(2) == 1, corr = r(2) == 1
                    p1.append(UInt8(count << 2 | (long ? 2 : 0) | (corr ? 1 : 0)))
                    if corr { p1.append(UInt8(r(256))) }
                    for _ in 0..<count { p1 += long ? [UInt8(r(256)), UInt8(r(256))] : [UInt8(r(256))] }
                }
            }
            out.append([0x02] + p1)
            var p2: [UInt8] = [k % 2 == 0 ? 2 : 130]
            for _ in 0..<(1 + r(3)) {
                let ne = r(4), ad = r(4)
                p2 += [UInt8(r(256)), UInt8(r(256)), UInt8(r(10)), UInt8(r(10)), UInt8(r(10)), UInt8(ne)]
                for _ in 0..<ne { p2.append(UInt8(r(8))) }
                p2 += [UInt8(ad), 0]
                for _ in 0..<ad { p2.append(UInt8(r(256))) }
            }
            out.append([0x02] + p2)
        }
        return out
    }

    struct Tally { var fields = 0, agree = 0; var disagree: [String] = [] }

    /// Leaves of ours compared with theirs, by name (`names` maps ours to theirs).
    static func compare(_ ours: Any, _ theirs: Any?, _ at: String, _ names: [String: String], _ t: inout Tally) {
        switch ours {
        case let o as [String: Any]:
            guard let th = theirs as? [String: Any] else { t.fields += 1; t.disagree.append("\(at): object vs \(String(describing: theirs))"); return }
            for (k, v) in o {
                let tk = names[k] ?? k
                guard th.keys.contains(tk) else { continue } // our extra names (property_name, ...)
                compare(v, th[tk], at + "." + k, names, &t)
            }
        case let a as [Any]:
            let ta = theirs as? [Any] ?? []
            t.fields += 1
            if a.count == ta.count { t.agree += 1 } else { t.disagree.append("\(at): \(a.count) items vs \(ta.count)") }
            for (i, x) in a.enumerated() where i < ta.count { compare(x, ta[i], at + "[\(i)]", names, &t) }
        case let s as String: // hex
            t.fields += 1
            let hex = (theirs as? [NSNumber]).map { Hex.string($0.map(\.uint8Value)) } ?? (theirs as? String)
            if hex == s { t.agree += 1 } else { t.disagree.append("\(at): \(s) vs \(String(describing: theirs))") }
        case let n as NSNumber:
            t.fields += 1
            if let tn = theirs as? NSNumber, abs(tn.doubleValue - n.doubleValue) <= 1e-6 * max(1, abs(n.doubleValue)) {
                t.agree += 1
            } else {
                t.disagree.append("\(at): \(n) vs \(String(describing: theirs))")
            }
        case is NSNull:
            t.fields += 1
            if theirs is NSNull { t.agree += 1 } else { t.disagree.append("\(at): null vs \(String(describing: theirs))") }
        default: break
        }
    }

    @Test func compositionPagesAgreeWithSilvair() throws {
        var rng = MeshSilvairOracle.RNG(s: 129)
        let payloads = Self.pages(&rng)
        // The package knows pages 1 and 2 by those numbers only.
        let answers = try Self.oracle(payloads.map { p in "access " + Hex.string([p[0], p[1] & 0x7F] + p[2...]) })
        #expect(answers.count == payloads.count)
        var t = Tally()
        let names = ["num_s": "number_s", "num_v": "number_v", "corresponding_group_id_present": "corresponding_present", "corresponding_group_id": "corresponding_id"]
        for (p, a) in zip(payloads, answers) {
            let ours = try Self.object(json(try MeshAccessMessage(decoding: p)))
            let status = a["config_composition_data_status"] as? [String: Any]
            #expect(ours["trailing"] == nil, "\(Hex.string(p))")
            if p[1] & 0x7F == 1 {
                let theirs = (status?["first"] as? [String: Any])?["element"] as? [[String: Any]] ?? []
                let elements = ours["elements"] as! [[String: Any]]
                t.fields += 1
                if elements.count == theirs.count { t.agree += 1 } else { t.disagree.append("\(Hex.string(p)): \(elements.count) elements vs \(theirs.count)") }
                for (e, te) in zip(elements, theirs) {
                    // Their extended items sit under the format's name ("short"/"long").
                    var te = te
                    for side in ["sig_models", "vendor_models"] {
                        te[side] = (te[side] as? [[String: Any]] ?? []).map { item in
                            var item = item
                            item["extended_model_items"] = (item["extended_models_items"] as? [String: Any])?.values.first
                            if item["corresponding_present"] as? Int == 0 { item["corresponding_id"] = nil }
                            return item
                        }
                    }
                    Self.compare(e, te, Hex.string(p), names, &t)
                }
            } else {
                let theirs = (status?["second"] as? [String: Any])?["record_list"] as? [[String: Any]] ?? []
                let profiles = (ours["mesh_profiles"] as! [[String: Any]]).map { o -> [String: Any] in
                    var o = o
                    o["version"] = ["version_x": o["version_x"]!, "version_y": o["version_y"]!, "version_z": o["version_z"]!]
                    return o
                }
                Self.compare(profiles, theirs, Hex.string(p), names, &t)
            }
        }
        print("mesh oracle silvair composition pages 1, 2, 129, 130: \(payloads.count) pages, \(t.fields) fields, \(t.agree) agree")
        #expect(t.disagree.isEmpty, "\(t.disagree.prefix(10))")
        #expect(t.fields == t.agree)
        #expect(t.fields > 500)
    }

    /// Ours to theirs: our keys name the unit.
    static let valueNames = [
        "temperature_celsius": "temperature", "minimum_temperature_celsius": "minimum_temperature", "maximum_temperature_celsius": "maximum_temperature",
        "illuminance_lux": "illuminance", "current_amperes": "current", "voltage_volts": "voltage", "power_watts": "power",
        "apparent_power_volt_amperes": "power", "energy_kilowatt_hours": "energy", "correlated_color_temperature_kelvin": "correlated_color_temperature",
        "luminous_flux_lumens": "luminous_flux", "luminous_intensity_candelas": "luminous_intensity",
        "luminous_efficacy_lumens_per_watt": "luminous_efficacy", "luminous_energy_lumen_hours": "luminous_energy",
        "light_output_lumens": "light_output", "voltage_frequency_hertz": "voltage_frequency"
    ]

    /// Every listed property: values in the characteristic's unit equal the package's (values
    /// away from "not known", which the two read differently: see docs/mesh.md).
    @Test func propertyValuesAgreeWithSilvair() throws {
        var rng = MeshSilvairOracle.RNG(s: 4)
        var requests: [String] = [], raws: [(Int, [UInt8])] = []
        for id in MeshDeviceProperty.table.keys.sorted() {
            let f = MeshDeviceProperty.table[id]!.format
            for _ in 0..<6 {
                var raw: [UInt8] = []
                for field in f.fields {
                    var v: Int
                    repeat { v = Int(rng.next() % (1 << UInt64(8 * field.size))) } while v == field.unknown || v == (1 << (8 * field.size)) - 1
                    if field.decimals == -1 { v &= 1 }
                    for k in 0..<field.size { raw.append(UInt8(truncatingIfNeeded: v >> (8 * k))) }
                }
                raws.append((id, raw)); requests.append("property \(id) \(Hex.string(raw))")
            }
        }
        let answers = try Self.oracle(requests)
        #expect(answers.count == raws.count)
        var t = Tally(), ids = Set<Int>()
        for ((id, raw), a) in zip(raws, answers) {
            var a = a
            if let v = a["high_voltage"] { a["voltage"] = v } // High Voltage's field, by the package's name
            #expect(a["error"] == nil, "\(id) \(Hex.string(raw)): \(a)")
            var w = JSONFieldWriter(capacity: 256)
            w.beginTopLevel()
            #expect(MeshDeviceProperty.describeValue(id, raw, into: &w))
            w.endTopLevel()
            var ours = try Self.object(String(decoding: w.out, as: UTF8.self))
            ours["property_name"] = nil
            if ours["presence_detected"] != nil { ours["presence_detected"] = (ours["presence_detected"] as! Bool) ? 1 : 0 }
            let before = t.fields
            Self.compare(ours, a, "0x\(String(id, radix: 16)) \(Hex.string(raw))", Self.valueNames, &t)
            if t.fields - before == ours.count { ids.insert(id) } else { t.disagree.append("0x\(String(id, radix: 16)): \(ours.keys) not all in \(a.keys)") }
        }
        print("mesh oracle silvair property values: \(ids.count) properties, \(raws.count) values, \(t.fields) fields, \(t.agree) agree")
        #expect(t.disagree.isEmpty, "\(t.disagree.prefix(10))")
        #expect(ids.count == MeshDeviceProperty.table.count)
    }
}
