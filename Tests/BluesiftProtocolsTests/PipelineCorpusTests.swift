import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// Whole btsnoop files from the public corpus (skipped when the corpus is absent).
@Suite struct PipelineCorpusTests {
    static let btsnoopFiles = ["a2dp_motog_lghbs730_btsnoop_hci.log", "blefun_btsnoop_hci.log", "chsmartbulb_btsnoop_hci.log",
                               "ec521_btsnoop_hci.log", "happyleaf_btsnoop_hci.log", "ix7_btsnoop_hci.log",
                               "lightctl_btsnoop_hci.log", "manoj_btsnoop_hci.log", "novax_btsnoop_hci.log",
                               "pogoplus_bt_log_plus_pair.log", "pongbot_btsnoop_hci.log", "revcar_btsnoop_hci.log",
                               "yeelock_btsnoop_hci.log"]

    @Test func corpusStatistics() {
        for name in Self.btsnoopFiles {
            guard let path = Corpus.path(name) else { continue }
            let d = ProtocolDecoder()
            var frames = 0, l2 = 0, att = 0, paired = 0
            var errors: [String: Int] = [:]
            var samples: [String] = []
            TestBTSnoop.decode(path, d) { f in
                frames += 1
                if f.l2cap != nil { l2 += 1 }
                if f.att != nil { att += 1 }
                if f.attTransaction != nil { paired += 1 }
                for e in f.errors {
                    errors["\(e.layer)/\(e.code)", default: 0] += 1
                    if samples.count < 3 { samples.append("#\(f.record.frame) \(e)") }
                }
            }
            print("\(name): frames=\(frames) l2cap=\(l2) att=\(att) paired=\(paired) conns=\(d.connections.count) errors=\(errors) \(samples)")
        }
    }
}

