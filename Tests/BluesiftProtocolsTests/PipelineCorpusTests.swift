import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Whole btsnoop files from the public corpus (skipped when the corpus is absent).
@Suite struct PipelineCorpusTests {
    static let btsnoopFiles = [
        "a2dp_motog_lghbs730_btsnoop_hci.log", "blefun_btsnoop_hci.log", "chsmartbulb_btsnoop_hci.log",
        "ec521_btsnoop_hci.log", "happyleaf_btsnoop_hci.log", "ix7_btsnoop_hci.log",
        "lightctl_btsnoop_hci.log", "manoj_btsnoop_hci.log", "novax_btsnoop_hci.log",
        "pogoplus_bt_log_plus_pair.log", "pongbot_btsnoop_hci.log", "revcar_btsnoop_hci.log",
        "yeelock_btsnoop_hci.log"
    ]

    /// The layers on nearly every record hold no references, so frames copy, reset and
    /// overwrite them without reference counting or value-witness calls.
    @Test func commonLayersArePlainData() {
        #expect(_isPOD(HCIPacket.self) && _isPOD(AdvertisingLayer.self) && _isPOD(AdvertisingReport.self))
        #expect(_isPOD(CaptureRecord.self))
    }

    /// Every frame's `layers` mask names exactly the layers it holds (counting and reset
    /// trust the mask), over every btsnoop file; prints each file's figures.
    @Test func layerMaskMatchesLayers() {
        for name in Self.btsnoopFiles {
            guard let path = Corpus.path(name) else { continue }
            let d = ProtocolDecoder()
            var frames = 0, l2 = 0, att = 0, paired = 0, adv = 0, mismatches: [Int] = []
            var errors: [String: Int] = [:]
            TestBTSnoop.decode(path, d) { f in
                frames += 1
                let held: [(FrameLayer, Bool)] = [
                    (.hci, f.hci != nil), (.l2cap, f.l2cap != nil), (.att, f.att != nil), (.smp, f.smp != nil),
                    (.adv, f.adv != nil), (.ll, f.ll != nil), (.note, f.note != nil)
                ]
                if held.contains(where: { f.layers.contains($0.0) != $0.1 }) { mismatches.append(f.record.frame) }
                if f.layers.contains(.l2cap) { l2 += 1 }
                if f.layers.contains(.att) { att += 1 }
                if f.layers.contains(.adv) { adv += 1 }
                if f.attTransaction != nil { paired += 1 }
                for e in f.errors { errors["\(e.layer)/\(e.code)", default: 0] += 1 }
            }
            #expect(mismatches.isEmpty, "\(name): frames \(mismatches.prefix(5))")
            if name == "lightctl_btsnoop_hci.log" { // as `bluesift info` reports it
                #expect(frames == 61318 && l2 == 4360 && att == 4304 && adv == 47934)
            }
            print("\(name): frames=\(frames) l2cap=\(l2) att=\(att) adv=\(adv) paired=\(paired) conns=\(d.connections.count) errors=\(errors)")
        }
    }
}

extension PipelineCorpusTests {
    /// `info`'s counting path (`layers(of:)`) finds each record's layers and damage as the
    /// full decode does, over every corpus capture of every format, with its own decoder.
    @Test func countingAgreesWithDecodingOverTheCorpus() throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Corpus.dir.path)) ?? []
        var shortcuts: [String: Int] = [:]
        for name in names.sorted() where !name.hasSuffix(".md") && !name.hasSuffix(".txt") {
            guard let reader = try? CaptureFile.open(path: Corpus.dir.appendingPathComponent(name).path) else { continue }
            let full = ProtocolDecoder(), counting = ProtocolDecoder()
            var f = DecodedFrame(record: .empty), scratch = DecodedFrame(record: .empty)
            var mismatches: [Int] = [], fast = 0
            while let r = reader.next() {
                full.decode(r, into: &f)
                let c = counting.layers(of: r, scratch: &scratch)
                if c.layers != f.layers || c.damaged != !f.errors.isEmpty { mismatches.append(r.frame) }
                if r.kind == .event && ProtocolDecoder.isWholeAdvertisingEvent(r.bytes) { fast += 1 }
            }
            #expect(mismatches.isEmpty, "\(name): frames \(mismatches.prefix(5))")
            #expect(full.connections == counting.connections, "\(name)")
            shortcuts[name] = fast
        }
        if Corpus.path("lightctl_btsnoop_hci.log") != nil {
            // Every advertising event of these files is whole: all take the short path.
            #expect(shortcuts["lightctl_btsnoop_hci.log"] == 47934)
        }
        print("advertising events counted by their lengths: \(shortcuts.filter { $0.value > 0 })")
    }

    /// Decode rate over an in-memory copy of a real capture (records pre-built, so only the
    /// decoder is measured). Prints the figure; asserts only that it decodes everything.
    @Test(.enabled(if: Corpus.has("blefun_btsnoop_hci.log"), "needs ../shared/captures/public")) func decodeThroughput() {
        let path = Corpus.path("blefun_btsnoop_hci.log")!
        let recs = TestBTSnoop.read(path).filter { !$0.bytes.isEmpty }
        let store = RecordStore()
        let records = recs.map { r in
            store.record(
                r.frame, PacketKind(rawValue: r.bytes[0]), r.received ? .received : .sent,
                Array(r.bytes.dropFirst()), us: r.us)
        }
        let rounds = 10
        var att = 0
        let clock = ContinuousClock()
        let t = clock.measure {
            for _ in 0..<rounds {
                let d = ProtocolDecoder()
                for r in records where d.decode(r).att != nil { att += 1 }
            }
        }
        let seconds = Double(t.components.seconds) + Double(t.components.attoseconds) / 1e18
        print("decodeThroughput: \(Int(Double(records.count * rounds) / seconds)) records/s (\(records.count) records x \(rounds))")
        #expect(att == 18674 * rounds)
    }
}
