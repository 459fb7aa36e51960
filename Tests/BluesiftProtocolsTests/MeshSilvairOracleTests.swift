import Foundation
import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// The second decoder for access messages: Silvair's bluetooth-mesh-messages 0.9.13 (PyPI,
/// run as a separate process by scripts/mesh_messages_oracle.py from `.venv-mesh`, which
/// `make test` creates). Payloads for every catalogued opcode are made from its layout
/// (minimal values, seeded random values, with and without optional fields); each one the
/// package accepts is compared field by field with what `MeshAccessMessage` decodes.
@Suite(.enabled(if: MeshSilvairOracle.available, MeshSilvairOracle.skipMessage))
struct MeshSilvairOracleTests {
    @Test func catalogueAgreesWithSilvair() throws {
        let r = try MeshSilvairOracle.run()
        print("mesh oracle silvair access: \(r.messages) messages (\(r.opcodes) opcodes), \(r.fields) fields, \(r.agree) agree; \(r.rejected) payloads rejected by the package")
        #expect(r.disagree.isEmpty, "\(r.disagree.prefix(20))")
        #expect(r.fields == r.agree)
        #expect(r.opcodes >= 100)
    }
}

enum MeshSilvairOracle {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent(".venv-mesh/bin/python").path
    static let script = root.appendingPathComponent("scripts/mesh_messages_oracle.py").path
    static let skipMessage: Comment = "needs .venv-mesh with bluetooth-mesh-messages (make mesh-venv)"

    static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", "import bluetooth_mesh.messages"]
        p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    /// A deterministic generator (SplitMix64).
    struct RNG { var s: UInt64; mutating func next() -> UInt64 { s &+= 0x9E3779B97F4A7C15; var z = s; z = (z ^ z >> 30) &* 0xBF58476D1CE4E5B9; z = (z ^ z >> 27) &* 0x94D049BB133111EB; return z ^ z >> 31 } }

    /// Parameters for `layout`: variant 0 minimal (ones), 1 and 2 random; optional groups
    /// present in 1 and 2.
    static func parameters(_ layout: [MeshField], variant: Int, _ rng: inout RNG) -> [UInt8] {
        var out: [UInt8] = []
        func n(_ size: Int) {
            for i in 0..<size { out.append(variant == 0 ? (i == 0 ? 1 : 0) : UInt8(truncatingIfNeeded: rng.next() & (i == size - 1 ? 0x3F : 0xFF))) }
        }
        for f in layout {
            switch f {
            case .u8: out.append(variant == 0 ? 1 : UInt8(rng.next() % 2))
            case .u16, .s16, .keyIndex: n(2)
            case .u24: n(3)
            case .u32, .s32: n(4)
            case .u40: n(5)
            case .bytes(_, let k), .secret(_, let k): n(k)
            case .rest: n(3)
            case .model: n(variant == 2 ? 4 : 2)
            case .keyPair: n(3)
            case .keyIndexes: n(3)
            case .u16s: n(4)
            case .bits(let size, _): n(size)
            case .optional(let g): if variant > 0 { out += parameters(g, variant: variant, &rng) }
            case .status: out.append(0)
            case .composition: out += Hex.parse("00" + "5900" + "0100" + "0200" + "0a00" + "0300" + "0000" + "0201" + "0000" + "0010" + "59003412")!
            case .sensorData: out += [0x42 << 5 & 0xFF | 1 << 1, 0x42 >> 3, 0x34, 0x12]
            case .sensorDescriptors: n(8)
            }
        }
        return out
    }

    struct Result { var messages = 0, opcodes = 0, fields = 0, agree = 0, rejected = 0; var disagree: [String] = [] }

    /// Silvair's names for ours, where they differ.
    static let aliases: [String: [String]] = [
        "publish_ttl": ["ttl"], "net_key_indexes": ["net_key_indices"], "app_key_indexes": ["app_key_indices"],
        "publish_retransmit_count": ["count"], "relay_retransmit_count": ["count"], "network_transmit_count": ["count"],
        "present_onoff": ["present_onoff"], "fault_array": ["fault_array"], "onpowerup": ["on_power_up"],
        "page": ["page"], "tai_seconds": ["tai_seconds"], "time_role": ["time_role"],
        // Generic Property: the package names a property and its access alike in every model.
        "user_property_id": ["property_id"], "admin_property_id": ["property_id"], "manufacturer_property_id": ["property_id"],
        "user_access": ["access"], "admin_user_access": ["access"], "manufacturer_user_access": ["access"],
        "user_property_ids": ["property_ids"], "admin_property_ids": ["property_ids"], "manufacturer_property_ids": ["property_ids"],
        "client_property_ids": ["property_ids"]
    ]

    static func run() throws -> Result {
        var rng = RNG(s: 40)
        var payloads: [[UInt8]] = []
        for op in MeshAccessCatalog.entries.keys.sorted() {
            let e = MeshAccessCatalog.entries[op]!
            for v in 0..<3 { payloads.append(MeshOpcode(rawValue: op).encode() + parameters(e.fields, variant: v, &rng)) }
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script]
        let inPipe = Pipe(), outPipe = Pipe()
        p.standardInput = inPipe; p.standardOutput = outPipe
        try p.run()
        inPipe.fileHandleForWriting.write(Data(payloads.map { Hex.string($0) }.joined(separator: "\n").utf8 + [0x0A]))
        try inPipe.fileHandleForWriting.close()
        let data = outPipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == payloads.count)
        var r = Result()
        var opcodes = Set<UInt32>()
        for (payload, line) in zip(payloads, lines) {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            guard let theirs = o["fields"] as? [String: Any] else { r.rejected += 1; continue }
            let m = try MeshAccessMessage(decoding: payload)
            guard let ours = try? m.fields() else { r.disagree.append("\(Hex.string(payload)): we reject what the package accepts"); continue }
            r.messages += 1; opcodes.insert(m.opcode.rawValue)
            if (o["opcode"] as? NSNumber)?.uint32Value != m.opcode.rawValue { r.disagree.append("\(Hex.string(payload)): opcode") }
            for (name, value) in ours {
                let key = name.description
                guard let t = (aliases[key] ?? [key]).lazy.compactMap({ theirs[$0] }).first else { continue }
                let expected: Double?
                switch value {
                case .int(let x):
                    switch key {
                    case "transition_time", "remaining_time":
                        expected = x & 0x3F == 0x3F ? nil : Double(x & 0x3F) * [0.1, 1, 10, 600][x >> 6]
                    case "delay": expected = Double(x) * 0.005
                    default: expected = Double(x)
                    }
                case .status(let s): expected = Double(s)
                case .list(let l):
                    r.fields += 1
                    // The package returns key index lists sorted; BlueZ packs the first index of
                    // a pair in the upper 12 bits (mesh/net.c), as we read them.
                    if let tl = t as? [NSNumber], tl.map(\.intValue).sorted() == l.sorted() { r.agree += 1 } else { r.disagree.append("\(Hex.string(payload)) \(key): \(l) vs \(t)") }
                    continue
                case .bytes(let b), .secret(let b):
                    r.fields += 1
                    if let ts = t as? String, ts == Hex.string(b) { r.agree += 1 } else if let tl = t as? [NSNumber], tl.map(\.uint8Value) == b { r.agree += 1 } else { r.disagree.append("\(Hex.string(payload)) \(key): \(Hex.string(b)) vs \(t)") }
                    continue
                default: continue
                }
                guard let expected, let tv = (t as? NSNumber)?.doubleValue else { continue }
                r.fields += 1
                if abs(tv - expected) < 1e-6 { r.agree += 1 } else { r.disagree.append("\(Hex.string(payload)) \(key): \(expected) vs \(tv)") }
            }
        }
        r.opcodes = opcodes.count
        return r
    }
}
