import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// HCI LE Meta events from the public corpus; `parameters` start after the subevent code.
@Suite struct AdvertisingTests {
    /// Decodes a whole H4 event "04 3e len sub …".
    func layer(_ h4: String, _ body: (AdvertisingLayer) -> Void) {
        withBytes(h4) { p in
            body(AdvertisingLayer(leMetaSubevent: p[3], parameters: UnsafeRawBufferPointer(rebasing: p[4...])))
        }
    }

    @Test func iBeaconYeelockFrame352() {
        layer("04 3e 2a 02 01 00 01 ee 2e 5a 9d 45 e6 1e 02 01 06 1a ff 4c 00 02 15 fd a5 06 93 a4 e2 4f b1 af cf c6 eb 07 64 78 25 00 05 00 06 b0 b6") { a in
            #expect(a.name == "LE Advertising Report" && a.error == nil && a.reports.count == 1)
            let r = a.reports[0]
            #expect(r.eventTypeName == "ADV_IND" && r.addressType == .random && r.address?.description == "e6:45:9d:5a:2e:ee" && r.rssi == -74)
            let s = Array(r.structures)
            #expect(s.map(\.type.rawValue) == [0x01, 0xFF] && s[0].value.first == 0x06 && s[1].value.count == 25)
            let j = json(a)
            #expect(j.contains(#"{"type":1,"name":"Flags","flags":6,"flag_names":["LE General Discoverable Mode","BR/EDR Not Supported"]}"#))
            #expect(j.contains(#"{"type":255,"name":"Manufacturer Specific Data","company_id":76,"#))
            #expect(j.contains(#""data":"0215fda50693a4e24fb1afcfc6eb076478250005000"#))
        }
    }

    @Test func scanResponseWithNameYeelockFrame353() {
        layer("04 3e 28 02 01 04 01 ee 2e 5a 9d 45 e6 1c 11 07 00 00 48 43 45 54 43 49 47 4f 4c 49 03 18 00 00 09 09 52 44 4c 35 31 38 32 32 b7") { a in
            let r = a.reports[0]
            #expect(r.eventTypeName == "SCAN_RSP" && r.localName == "RDL51822" && r.rssi == -73)
            let j = json(a)
            #expect(j.contains(#""uuids":[{"uuid":"00001803-494c-4f47-4943-544543480000""#))
            #expect(j.contains(#"{"type":9,"name":"Complete Local Name","local_name":"RDL51822"}"#))
            #expect(a.summary == "LE Advertising Report SCAN_RSP e6:45:9d:5a:2e:ee rssi=-73 name=RDL51822")
        }
    }

    @Test func emptyScanResponseYeelockFrame418() {
        layer("04 3e 0c 02 01 04 01 03 05 d5 44 4a 73 00 ba") { a in
            #expect(a.error == nil && a.reports[0].data.isEmpty && a.reports[0].rssi == -70)
            #expect(json(a) == #"{"opcode":2,"name":"LE Advertising Report","reports":[{"event_type":4,"event_type_name":"SCAN_RSP","address":"73:4a:44:d5:05:03","address_type":"random","rssi":-70,"data":[]}]}"#)
        }
    }

    @Test func manufacturerDataKeepsEmbeddedAddressRawChsmartbulb() {
        layer("04 3e 28 02 01 03 00 ab 8b ac 6e bb 14 1c 1b ff 75 00 42 04 01 80 20 14 bb 6e ac 8b ab 16 bb 6e ac 8b aa 01 00 00 00 00 00 00 9e") { a in
            let r = a.reports[0]
            #expect(r.eventTypeName == "ADV_NONCONN_IND" && r.address?.description == "14:bb:6e:ac:8b:ab" && r.rssi == -98)
            #expect(json(a).contains(#""company_id":117,"#) && json(a).contains(#""data":"420401802014bb6eac8bab16bb6eac8baa01000000000000"}"#))
        }
    }

    @Test func extendedReportsPongbotFrames634And635() {
        layer("04 3e 2d 0d 01 13 00 02 43 4c 42 18 34 c5 01 00 ff 7f af 00 00 00 00 00 00 00 00 00 13 02 01 06 03 02 62 fd 0b 16 0a 18 3f 04 82 44 d0 a9 ca 62") { a in
            #expect(a.name == "LE Extended Advertising Report" && a.error == nil)
            let r = a.reports[0]
            #expect(r.eventType == 0x13 && r.eventTypeName == "ADV_IND" && r.addressType == .publicIdentity)
            #expect(r.address?.description == "c5:34:18:42:4c:43" && r.primaryPHY == 1 && r.secondaryPHY == 0)
            #expect(r.sid == nil && r.txPower == nil && r.rssi == -81 && r.periodicInterval == nil && r.directAddress == nil)
            let j = json(a)
            #expect(j.contains(#""data_status":0,"data_status_name":"Complete","address":"c5:34:18:42:4c:43","address_type":"public identity","rssi":-81,"primary_phy":"LE 1M","secondary_phy":"None","data":["#))
            #expect(j.contains(#"{"type":22,"name":"Service Data - 16-bit UUID","uuid":"180a","#) && j.contains(#""data":"3f048244d0a9ca62"}"#))
            #expect(j.contains(#"{"type":2,"name":"Incomplete List of 16-bit Service or Service Class UUIDs","uuids":[{"uuid":"fd62""#))
        }
        layer("04 3e 28 0d 01 1b 00 02 43 4c 42 18 34 c5 01 00 ff 7f af 00 00 00 00 00 00 00 00 00 0e 0a 09 49 6e 73 70 69 72 65 20 33 02 0a 03") { a in
            let r = a.reports[0]
            #expect(r.eventTypeName == "SCAN_RSP to ADV_IND" && r.localName == "Inspire 3")
            #expect(json(a).contains(#"{"type":10,"name":"Tx Power Level","tx_power":3}"#))
        }
    }

    @Test func twoReportsAndDirectedReport() {
        // Two legacy reports: ADV_IND with flags, ADV_NONCONN_IND with no data.
        layer("04 3e 1b 02 02 00 00 01 02 03 04 05 06 03 02 01 05 c4 03 01 aa bb cc dd ee ff 00 7f") { a in
            #expect(a.error == nil && a.reports.count == 2)
            #expect(a.reports[0].address?.description == "06:05:04:03:02:01" && a.reports[0].rssi == -60)
            #expect(a.reports[1].eventTypeName == "ADV_NONCONN_IND" && a.reports[1].rssi == nil)
            #expect(a.summary == "LE Advertising Report ADV_IND 06:05:04:03:02:01 rssi=-60 (+1 more)")
        }
        layer("04 3e 12 0b 01 01 01 01 02 03 04 05 c6 00 11 12 13 14 15 16 b0") { a in
            let r = a.reports[0]
            #expect(a.name == "LE Directed Advertising Report" && r.eventTypeName == "ADV_DIRECT_IND")
            #expect(r.directAddress?.description == "16:15:14:13:12:11" && r.directAddressType == .public && r.rssi == -80)
        }
    }

    @Test func damageSetsErrorAndKeepsReports() {
        layer("04 3e 1b 02 02 00 00 01 02 03 04 05 06 03 02 01 05 c4 03 01 aa bb") { a in
            #expect(a.reports.count == 1 && a.error?.code == .truncated && a.error?.layer == "adv")
        }
        layer("04 3e 0f 02 01 00 00 01 02 03 04 05 06 03 05 ff 06 c4") { a in
            #expect(a.reports.count == 1 && a.error?.code == .truncated && a.error?.offset == 0)
        }
        layer("04 3e 01 0e 00") { a in #expect(a.error?.code == .unsupported && a.name == "Unknown") }
    }

    @Test func adTypeNamesAndEventTypes() {
        #expect(AssignedNumbers.adTypeName(0x16) == "Service Data - 16-bit UUID")
        #expect(AssignedNumbers.adTypeName(0x13) == nil)
        #expect(ADType(rawValue: 0x13).name == "Unknown")
        #expect(AdvertisingLayer.extendedEventTypeName(0x0001) == "Connectable Undirected")
        #expect(AdvertisingLayer.extendedEventTypeName(0x0025) == "Connectable Directed")
        #expect(AdvertisingLayer.extendedEventTypeName(0x1A) == "SCAN_RSP to ADV_SCAN_IND")
    }

    /// The length walk that skips building reports must agree with the full parse, both ways,
    /// on whole and damaged events of each report subevent (seeded, so failures repeat).
    @Test func lengthWalkAgreesWithFullParse() {
        var rng = SplitMix(seed: 0x5EED)
        var whole = 0, damaged = 0
        for round in 0..<6000 {
            let sub: UInt8 = [0x02, 0x0B, 0x0D][round % 3]
            var p = Self.randomEvent(sub, &rng)
            switch rng.next() % 4 { // one in four stays whole
            case 0: break
            case 1: if !p.isEmpty { p[Int(rng.next() % UInt64(p.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            case 2: p.removeLast(Int(rng.next() % UInt64(min(p.count, 4) + 1)))
            default: p.append(UInt8(truncatingIfNeeded: rng.next()))
            }
            p.withUnsafeBytes { b in
                let fast = AdvertisingLayer.isWellFormed(sub, b)
                let full = AdvertisingLayer(opcode: Int(sub), parameters: b).damage()
                #expect(fast == (full == nil), "subevent \(sub) \(Hex.string(Array(b)))")
                if fast { whole += 1 } else { damaged += 1 }
            }
        }
        #expect(whole > 1500 && damaged > 1500)
    }

    /// `info`'s counting path finds what `decode` finds for whole and damaged advertising
    /// events, with right, short and long parameter lengths, cut by the capture or not.
    @Test func countingAgreesWithDecodingOnAdvertisingEvents() {
        var rng = SplitMix(seed: 0xC0FFEE)
        let store = RecordStore()
        var fast = 0, slow = 0, damaged = 0
        for round in 0..<4000 {
            let sub: UInt8 = [0x02, 0x0B, 0x0D, 0x03][round % 4] // 0x03: not a report
            var p = [sub] + Self.randomEvent(sub == 0x03 ? 0x02 : sub, &rng)
            if rng.next() % 3 == 0, !p.isEmpty { p[Int(rng.next() % UInt64(p.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1) }
            var plen = p.count
            switch rng.next() % 6 {
            case 0: plen -= 1;
            case 1: plen += 1;
            default: break
            }
            var bytes = [0x3E, UInt8(truncatingIfNeeded: plen)] + p
            let cut = rng.next() % 5 == 0 && bytes.count > 3
            let original = bytes.count + (cut ? 3 : 0)
            if cut { bytes.removeLast(3) }
            let record = store.record(round + 1, .event, .received, bytes, originalLength: original)
            var full = ProtocolDecoder().decode(record)
            var scratch = DecodedFrame(record: .empty)
            let counted = ProtocolDecoder().layers(of: record, scratch: &scratch)
            #expect(
                counted.layers == full.layers && counted.damaged == !full.errors.isEmpty,
                "frame \(round + 1): \(Hex.string(bytes)) cut \(cut)")
            if ProtocolDecoder.isWholeAdvertisingEvent(record.bytes) { fast += 1 } else { slow += 1 }
            if !full.errors.isEmpty { damaged += 1 }
            full.errors.removeAll()
        }
        #expect(fast > 500 && slow > 1500 && damaged > 1000, "fast \(fast) slow \(slow) damaged \(damaged)")
    }

    /// Reports that differ in one shown value (absent vs zero included) never share a
    /// replayed rendering: one writer renders each as a fresh writer does.
    @Test func replayedReportsKeepEveryDifference() {
        let ad: [UInt8] = [2, 1, 6]
        ad.withUnsafeBytes { data in
            var base = AdvertisingReport(eventType: 0x13, table: .extended, data: data)
            base.address = BDAddr(0x4288_313E_498D); base.addressType = .random; base.rssi = -87
            base.primaryPHY = 1; base.secondaryPHY = 0
            var variants = [base]
            func vary(_ change: (inout AdvertisingReport) -> Void) { var r = base; change(&r); variants.append(r) }
            vary { $0.txPower = 0 }; vary { $0.txPower = -1 }; vary { $0.sid = 0 }; vary { $0.sid = 1 }
            vary { $0.primaryPHY = nil }; vary { $0.secondaryPHY = 2 }; vary { $0.periodicInterval = 0 }
            vary { $0.directAddress = BDAddr(0) }; vary { $0.directAddressType = .public }
            vary { $0.address = nil }; vary { $0.addressType = nil }; vary { $0.addressType = .public }
            vary { $0.eventType = 0x1B }; vary { $0.eventTypeTable = .legacy }; vary { $0.rssi = nil }
            vary { $0.data = UnsafeRawBufferPointer(rebasing: data[..<2]) }
            func render(_ r: AdvertisingReport, _ writer: JSONFieldWriter) -> String {
                var w = writer
                let start = w.count
                w.beginObject(""); r.describe(into: &w, extended: true); w.endObject()
                return String(decoding: w.out[start...], as: UTF8.self)
            }
            let shared = JSONFieldWriter(capacity: 256)
            shared.beginTopLevel(); shared.beginArray("r")
            var seen = Set<String>()
            for (i, r) in (variants + variants).enumerated() {
                let fresh = JSONFieldWriter(capacity: 256)
                fresh.beginTopLevel(); fresh.beginArray("r")
                var expected = render(r, fresh)
                if i > 0 { expected = "," + expected } // the shared array's separator
                #expect(render(r, shared) == expected, "variant \(i % variants.count)")
                seen.insert(expected)
            }
            #expect(seen.count == variants.count + 1) // all distinct (the first has no comma)
        }
    }

    static func randomEvent(_ sub: UInt8, _ rng: inout SplitMix) -> [UInt8] {
        let n = Int(rng.next() % 4)
        var p: [UInt8] = [UInt8(n)]
        for _ in 0..<n {
            let fixed = sub == 0x0D ? 23 : sub == 0x0B ? 16 : 8
            p += (0..<fixed).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if sub == 0x0B { continue }
            var ad: [UInt8] = []
            for _ in 0..<Int(rng.next() % 4) {
                let len = Int(rng.next() % 6) + 1
                ad += [UInt8(len)] + (0..<len).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            }
            if rng.next() % 3 == 0 { ad += [0, 0] } // zero padding
            p += [UInt8(ad.count)] + ad
            if sub == 0x02 { p.append(0xC0) } // RSSI
        }
        return p
    }
}

/// A small seeded generator (SplitMix64) so randomised tests repeat exactly.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
