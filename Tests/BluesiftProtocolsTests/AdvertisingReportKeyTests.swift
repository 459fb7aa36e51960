import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// `forEachReportKey` (what the plugins read of each report, at the offsets decoding proved)
/// gives what `forEachReport` gives, on whole events and, through it, on damaged ones.
@Suite struct AdvertisingReportKeyTests {
    typealias Key = (address: UInt64?, addressType: UInt8, eventType: UInt16, rssi: Int8, data: [UInt8])

    static func keys(_ a: AdvertisingLayer) -> [Key] {
        var out: [Key] = []
        a.forEachReportKey { k in out.append((k.address, k.addressType, k.eventType, k.rssi, Array(k.data))) }
        return out
    }

    static func parsed(_ a: AdvertisingLayer) -> [Key] {
        var out: [Key] = []
        a.forEachReport { r in out.append((r.address?.value, r.addressType?.rawValue ?? 0, r.eventType, r.rssi ?? 127, Array(r.data))) }
        return out
    }

    static func same(_ x: [Key], _ y: [Key]) -> Bool {
        x.count == y.count
            && zip(x, y).allSatisfy {
                $0.address == $1.address && $0.addressType == $1.addressType && $0.eventType == $1.eventType && $0.rssi == $1.rssi
                    && $0.data == $1.data
            }
    }

    func layer(_ h4: String, _ body: (AdvertisingLayer) -> Void) {
        withBytes(h4) { p in body(AdvertisingLayer(leMetaSubevent: p[3], parameters: UnsafeRawBufferPointer(rebasing: p[4...]))) }
    }

    /// Real values: a legacy report (yeelock frame 352), an extended one (pongbot frame 634),
    /// a directed one and a damaged event (the report before the damage only).
    @Test func keysOfEachSubevent() {
        layer("04 3e 0c 02 01 04 01 03 05 d5 44 4a 73 00 ba") { a in
            let k = Self.keys(a)
            #expect(k.count == 1 && k[0].address == 0x734A_44D5_0503 && k[0].addressType == 1 && k[0].eventType == 4)
            #expect(k[0].rssi == -70 && k[0].data.isEmpty)
        }
        layer("04 3e 2d 0d 01 13 00 02 43 4c 42 18 34 c5 01 00 ff 7f af 00 00 00 00 00 00 00 00 00 13 02 01 06 03 02 62 fd 0b 16 0a 18 3f 04 82 44 d0 a9 ca 62") { a in
            let k = Self.keys(a)
            #expect(k.count == 1 && k[0].address == 0xC534_1842_4C43 && k[0].addressType == 2 && k[0].eventType == 0x13)
            #expect(k[0].rssi == -81 && k[0].data.count == 19 && k[0].data.prefix(3) == [0x02, 0x01, 0x06])
        }
        // Directed (§7.7.65.11): ADV_DIRECT_IND from 06:05:04:03:02:01 to c0:ba:0d:00:00:01, RSSI -60.
        layer("04 3e 12 0b 01 01 00 01 02 03 04 05 06 01 01 00 00 0d ba c0 c4") { a in
            let k = Self.keys(a)
            #expect(k.count == 1 && k[0].address == 0x0605_0403_0201 && k[0].addressType == 0 && k[0].eventType == 1)
            #expect(k[0].rssi == -60 && k[0].data.isEmpty)
        }
        layer("04 3e 1b 02 02 00 00 01 02 03 04 05 06 03 02 01 05 c4 03 01 aa bb") { a in
            #expect(a.error != nil)
            let k = Self.keys(a)
            #expect(k.count == 1 && k[0].data == [0x02, 0x01, 0x05] && k[0].rssi == -60)
        }
    }

    /// Seeded random events of each subevent, whole and damaged (as `lengthWalkAgreesWithFullParse`).
    @Test func keysAgreeWithTheParsedReports() {
        var rng = SplitMix(seed: 0xBEEF)
        var whole = 0, reports = 0
        for round in 0..<6000 {
            let sub: UInt8 = [0x02, 0x0B, 0x0D][round % 3]
            var p = AdvertisingTests.randomEvent(sub, &rng)
            switch rng.next() % 4 {
            case 0: break
            case 1: if !p.isEmpty { p[Int(rng.next() % UInt64(p.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            case 2: p.removeLast(Int(rng.next() % UInt64(min(p.count, 4) + 1)))
            default: p.append(UInt8(truncatingIfNeeded: rng.next()))
            }
            p.withUnsafeBytes { b in
                let a = AdvertisingLayer(leMetaSubevent: sub, parameters: b)
                let k = Self.keys(a)
                #expect(Self.same(k, Self.parsed(a)), "subevent \(sub) \(Hex.string(Array(b)))")
                if a.error == nil { whole += 1 }
                reports += k.count
            }
        }
        #expect(whole > 1500 && reports > 3000)
    }
}
