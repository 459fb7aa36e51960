import Foundation
import Testing
import BluesiftWire
import BluesiftGATT
import BluesiftPlugins
import BluesiftReplay
@testable import BluesiftDeviceFuzz

/// The device fuzzer's decisions, without a device: the generator, delta debugging, and the
/// variants made from a band session through Plugins/band.yaml.
struct DeviceFuzzPlanTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func band() throws -> Plugin { try PluginLoader.load(file: root.appendingPathComponent("Plugins/band.yaml").path) }

    static func target(_ c: String, handle: Int, descriptor: String? = nil) -> ReplayScript.Target {
        var t = ReplayScript.Target.handle(handle)
        t.service = "fee7"; t.characteristic = c; t.instance = 0; t.descriptor = descriptor
        return t
    }

    /// MTU 23, a subscription, device_info (request), sport_count (request), and set_user_name
    /// "Augusta Ada King-Noel Lovelace" split over two Write Commands (20 + 14 bytes), as
    /// Captures/band_mtu23.btsnoop has them.
    static func script() -> ReplayScript {
        let name = [UInt8](Hex.parse("a5 22 05")!) + Array("Augusta Ada King-Noel Lovelace".utf8)
        let frame = name + [name.reduce(0, ^)]
        let vendor = #""service": "fee7", "characteristic": "36f5", "instance": 0"#
        func write(_ op: String, _ value: String, frame: Int, notify: String = "") -> String {
            #"{"kind": "write", "op": "\#(op)", "target": {"handle": 29, \#(vendor)}, "value": "\#(value)", "delay_ms": 5, "frame": \#(frame), "expect": {"notifications": [\#(notify)]}}"#
        }
        let reply = #"{"target": {"handle": 31, "service": "fee7", "characteristic": "36f6", "instance": 0}, "value": "a5 07 81 01 04 57 71", "after_ms": 2}"#
        let json = """
            {"version": 1, "source": {"capture": "band.btsnoop", "connection": 64, "peer": "c0:ba:0d:00:00:01", "mtu": 23},
             "steps": [
              {"kind": "mtu", "mtu": 23, "delay_ms": 0, "frame": 10, "expect": {"notifications": []}},
              {"kind": "subscribe", "op": "request", "target": {"handle": 32, "service": "fee7", "characteristic": "36f6", "instance": 0, "descriptor": "2902"},
               "value": "01 00", "delay_ms": 5, "frame": 50, "expect": {"notifications": []}},
              \(write("request", "a5 04 01 a0", frame: 60, notify: reply)),
              \(write("request", "a5 06 03 06 14 b2", frame: 70)),
              \(write("command", Hex.string(Array(frame[0..<20])), frame: 80)),
              \(write("command", Hex.string(Array(frame[20...])), frame: 81))
             ]}
            """
        return try! ReplayScript.decode(Data(json.utf8))
    }

    static func live() -> GATTDatabase {
        var s = GATTDatabase.Service(start: 27, end: 32, uuid: BluetoothUUID(UInt32(0xFEE7)), primary: true)
        s.characteristics = [
            GATTDatabase.Characteristic(handle: 28, valueHandle: 29, uuid: BluetoothUUID(UInt32(0x36F5)), properties: 0x0C),
            {
                var c = GATTDatabase.Characteristic(handle: 30, valueHandle: 31, uuid: BluetoothUUID(UInt32(0x36F6)), properties: 0x10)
                c.descriptors = [GATTDatabase.Descriptor(handle: 32, uuid: BluetoothUUID(UInt32(0x2902)))]
                return c
            }()
        ]
        return GATTDatabase(services: [s])
    }

    @Test func generatorIsSplitMix64() {
        var r = FuzzRandom(seed: 0)
        // SplitMix64's first outputs for seed 0 (Vigna's reference implementation).
        #expect(r.next() == 0xE220_A839_7B1D_CDAF)
        #expect(r.next() == 0x6E78_9E6A_A1B9_65F4)
        var a = FuzzRandom(seed: 42), b = FuzzRandom(seed: 42)
        var x = Array(0..<20), y = Array(0..<20)
        a.shuffle(&x); b.shuffle(&y)
        #expect(x == y)
        #expect(x != Array(0..<20))
    }

    @Test func deltaDebuggingKeepsOnlyTheStepsThatMatter() {
        var tests = 0
        let out = Minimiser.ddmin(Array(0..<10)) { c in
            tests += 1
            return c.contains(3) && c.contains(7)
        }
        #expect(out == [3, 7])
        #expect(tests < 40)
        #expect(Minimiser.ddmin([5, 6]) { $0.contains(6) } == [6])
    }

    @Test func fieldShapesComeFromTheLayout() throws {
        let p = try Self.band()
        #expect(
            p.fieldShapes(message: "sport_count") == [
                PluginFieldShape(name: "month", kind: .integer(bytes: 1, signed: false), checksumCovered: true),
                PluginFieldShape(name: "day", kind: .integer(bytes: 1, signed: false), checksumCovered: true)
            ])
        #expect(p.fieldShapes(message: "set_time_reply").first?.kind == .enumeration(bytes: 1, values: [0, 1, 2]))
        #expect(p.fieldShapes(message: "sport_data_reply").map(\.kind) == [.integer(bytes: 2, signed: false), .list(count: 8)])
        #expect(p.fieldShapes(message: "set_time").allSatisfy { $0.volatile })
        #expect(p.fieldShapes(message: "set_user_name").map(\.kind) == [.string])
        #expect(p.fieldShapes(message: "sport_count").first?.integerRange == 0...255)
    }

    @Test func vendorFramesAreFoundAcrossSplitWrites() throws {
        let base = FuzzBase(script: Self.script(), plugins: [try Self.band()])
        #expect(base.setup == [0, 1])
        #expect(base.sequence.count == 4)
        #expect(base.frames.map(\.steps) == [[0], [1], [2, 3]])
        #expect(base.frames.map(\.message.message) == ["device_info", "sport_count", "set_user_name"])
    }

    /// Every plugin variant re-encodes a frame its plugin decodes with a good checksum and the
    /// mutated value, and keeps the recorded split (20 bytes in the first write).
    @Test func pluginMutationsStayValidFrames() throws {
        let plugin = try Self.band()
        let base = FuzzBase(script: Self.script(), plugins: [plugin])
        let planner = FuzzPlanner(base: base, live: Self.live(), blind: false, seed: 7)
        let pluginVariants = planner.firstRound.filter { $0.mutations.first?.layer == "plugin" }
        #expect(pluginVariants.count >= 10)
        var sawMonth255 = false
        for v in pluginVariants {
            let changed = v.actions.filter { $0.mutation != nil }
            let bytes = changed.flatMap { Hex.parse($0.value) ?? [] }
            let m = plugin.decode(bytes)
            #expect(m.checksum == .ok, "\(v.mutations[0].summary): \(Hex.string(bytes))")
            #expect(m.error == nil)
            #expect(Int(bytes[1]) == bytes.count)
            let mutation = try #require(v.mutations.first)
            for (field, value) in mutation.fields ?? [:] where m.message != "set_user_name" {
                #expect(m[field]?.description == value, "\(mutation.summary)")
            }
            if m.message == "set_user_name" { #expect((Hex.parse(changed[0].value) ?? []).count == min(20, bytes.count)) }
            if m.message == "sport_count", m["month"]?.integer == 255 {
                sawMonth255 = true
                #expect(Hex.string(bytes) == "a50603ff144b")
            }
        }
        #expect(sawMonth255)
    }

    @Test func blindMutationsLeaveTheChecksumAsItWas() throws {
        let plugin = try Self.band()
        let base = FuzzBase(script: Self.script(), plugins: [plugin])
        let planner = FuzzPlanner(base: base, live: Self.live(), blind: true, seed: 7)
        let blind = planner.firstRound.filter { $0.mutations.first?.layer == "blind" }
        #expect(!blind.isEmpty)
        #expect(!planner.firstRound.contains { $0.mutations.first?.layer == "plugin" })
        // sport_count a5 06 03 06 14 b2 with month set to ff: the recorded checksum, now wrong.
        let v = try #require(blind.first { $0.mutations[0].summary == "step 2 (36f5): byte 3 = 0xff (all ones)" })
        let sent = try #require(v.actions.first { $0.mutation != nil })
        #expect(sent.value == "a50603ff14b2")
        #expect(plugin.decode(Hex.parse(sent.value)!).checksum == .bad)
    }

    @Test func attAndSequenceMutationsAreListed() throws {
        let base = FuzzBase(script: Self.script(), plugins: [try Self.band()])
        let planner = FuzzPlanner(base: base, live: Self.live(), blind: false, seed: 7)
        let summaries = planner.firstRound.map { $0.mutations.map(\.summary).joined(separator: "; ") }
        #expect(summaries.contains("step 3 (36f5): value 21 bytes, longer than the 20 recorded"))
        #expect(summaries.contains("step 3: value of 21 bytes in one PDU, over the MTU of 23"))
        #expect(summaries.contains("CCCD of 36f6 written 0300"))
        #expect(summaries.contains("read of every handle"))
        #expect(summaries.contains("steps 1 and 2 swapped"))
        #expect(summaries.contains("step 2 dropped"))
        let reads = try #require(planner.firstRound.first { $0.mutations[0].summary == "read of every handle" })
        #expect(reads.actions.filter { $0.kind == .read }.map(\.target.handle) == Array(1...32))
        let swapped = try #require(planner.firstRound.first { $0.mutations[0].summary == "steps 1 and 2 swapped" })
        #expect(swapped.actions.map(\.value).prefix(2) == ["a5 06 03 06 14 b2", "a5 04 01 a0"])
    }

    @Test func theSameSeedMakesTheSameRun() throws {
        let base = FuzzBase(script: Self.script(), plugins: [try Self.band()])
        func run(_ seed: UInt64) -> [String] {
            var p = FuzzPlanner(base: base, live: Self.live(), blind: false, seed: seed)
            return (0..<(p.firstRound.count + 20)).compactMap { _ in p.nextVariant()?.mutations.map(\.summary).joined(separator: "; ") }
        }
        let a = run(3)
        #expect(a == run(3))
        #expect(a != run(4))
        #expect(Set(a.prefix(run(4).count)).count > 10)
    }
}

/// What makes two findings the same.
struct FuzzSignatureTests {
    /// Each reset changes the boot counter it is told by: two resets are one finding.
    @Test func resetsAreOneSignatureWhateverChanged() {
        let a = FuzzReaction(kind: "reset", code: 0x15, codeName: "Remote Device Terminated due to Power Off", detail: "boot read 01000000 before, 02000000 after")
        let b = FuzzReaction(kind: "reset", code: 0x15, codeName: "Remote Device Terminated due to Power Off", detail: "boot read 02000000 before, 03000000 after")
        #expect(a.signature == b.signature)
        #expect(a.signature == "reset 0x15")
        let e1 = FuzzReaction(kind: "error", code: 0x0D, detail: "on write request of 36f5")
        let e2 = FuzzReaction(kind: "error", code: 0x0D, detail: "on read of 2a00")
        #expect(e1.signature != e2.signature)
    }
}
