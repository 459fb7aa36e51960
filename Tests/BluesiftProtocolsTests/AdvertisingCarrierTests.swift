import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// `info`'s counting path asks `carriesModuleAdvertising` whether a whole advertising event
/// needs the full decode (a module's AD type or service data UUID in some report). It reads
/// the reports' data in place; these hold it to the reports as `forEachReport` builds them.
@Suite struct AdvertisingCarrierTests {
    /// The answer the long way: every report built, every structure asked.
    static func reference(_ d: ProtocolDecoder, _ b: UnsafeRawBufferPointer) -> Bool {
        let adv = AdvertisingLayer(opcode: Int(b[2]), parameters: UnsafeRawBufferPointer(rebasing: b[3...]))
        var hit = false
        adv.forEachReport { rep in
            for s in rep.structures where d.registry.advertisingCarrier(s) != nil { hit = true }
            // Extended data in pieces (Data_Status not 0b00) goes to ExtendedAdvertisingPieces.
            if rep.eventTypeTable == .extended, rep.eventType >> 5 & 0b11 != 0 { hit = true }
        }
        return hit
    }

    /// Whole legacy, directed and extended report events whose AD structures are drawn mostly
    /// from the registered carriers (Mesh's 0x29-0x2B, 0x1827/0x1828 service data, LE Audio's)
    /// and their near misses, in any report and position, with zero padding after some.
    @Test func inPlaceWalkAgreesWithTheReports() {
        let d = ProtocolDecoder()
        let carrierTypes = (0..<256).filter { d.registry.adTypeModules[$0] != 0 }.map { UInt8($0) }
        let uuids = d.registry.serviceDataUUIDs.map { $0.uuid }
        #expect(carrierTypes.contains(0x2A) && uuids.contains(0x1828))
        var rng = SplitMix(seed: 0xADCA_7713)
        let store = RecordStore()
        var hits = 0, misses = 0, fullDecodes = 0
        for round in 0..<6000 {
            let sub: UInt8 = [0x02, 0x0D, 0x0B][round % 3]
            let n = Int(rng.next() % 4)
            var p: [UInt8] = [sub, UInt8(n)]
            for _ in 0..<n {
                let fixed = sub == 0x0D ? 23 : sub == 0x0B ? 16 : 8
                p += (0..<fixed).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                // Most extended reports complete (Data_Status 0b00), some in pieces.
                if sub == 0x0D, rng.next() % 4 != 0 { p[p.count - fixed] &= 0x9F }
                if sub == 0x0B { continue }
                var ad: [UInt8] = []
                for _ in 0..<Int(rng.next() % 4) {
                    let pick = rng.next() % 8
                    if pick < 3 { // service data: a registered UUID, or a near one
                        var u = uuids[Int(rng.next() % UInt64(uuids.count))]
                        if pick == 0 { u ^= 1 << UInt16(rng.next() % 16) }
                        ad += [UInt8(3 + rng.next() % 3), 0x16, UInt8(u & 0xFF), UInt8(u >> 8)]
                        ad += (0..<(Int(ad[ad.count - 4]) - 3)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    } else if pick == 3, rng.next() % 2 == 0 { // service data too short for a UUID
                        ad += [2, 0x16, uuids[0].littleEndianBytes[0]]
                    } else {
                        let t = pick < 6 ? carrierTypes[Int(rng.next() % UInt64(carrierTypes.count))] : UInt8(truncatingIfNeeded: rng.next())
                        let len = Int(rng.next() % 6)
                        ad += [UInt8(len + 1), pick == 5 ? t &+ 1 : t] + (0..<len).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    }
                }
                if rng.next() % 3 == 0 { ad += [0, 0x2A, 0x2B] } // zero Length: what follows is padding
                p += [UInt8(ad.count)] + ad
                if sub == 0x02 { p.append(0xC0) } // RSSI
            }
            let bytes = [0x3E, UInt8(truncatingIfNeeded: p.count)] + p
            guard p.count < 256 else { continue }
            let record = store.record(round + 1, .event, .received, bytes)
            #expect(ProtocolDecoder.isWholeAdvertisingEvent(record.bytes), "\(Hex.string(bytes))")
            let fast = d.carriesModuleAdvertising(record.bytes), slow = Self.reference(d, record.bytes)
            #expect(fast == slow, "frame \(round + 1): \(Hex.string(bytes))")
            if slow { hits += 1 } else { misses += 1 }
            var scratch = DecodedFrame(record: .empty)
            let counted = ProtocolDecoder().layers(of: record, scratch: &scratch)
            let full = ProtocolDecoder().decode(record)
            #expect(counted.layers == full.layers && counted.damaged == !full.errors.isEmpty, "frame \(round + 1): \(Hex.string(bytes))")
            if !full.layers.isDisjoint(with: .anyModule) { fullDecodes += 1 }
        }
        #expect(hits > 1500 && misses > 2000 && fullDecodes > 100, "hits \(hits) misses \(misses) module layers \(fullDecodes)")
    }
}

extension AdvertisingCarrierTests {
    /// `isPlainAdvertisingEvent` (info's skip, one walk) answers as the two walks it replaced,
    /// `isWholeAdvertisingEvent && !carriesModuleAdvertising`, for whole, damaged and
    /// non-advertising events alike (lengths cut or grown, counts changed, bytes flipped), and
    /// with an advertiser's extended data pending.
    @Test func oneWalkAgreesWithTheTwo() {
        let d = ProtocolDecoder()
        let types = (0..<256).filter { d.registry.adTypeModules[$0] != 0 }.map { UInt8($0) }
        var rng = SplitMix(seed: 0x1F0_0D5)
        var plain = 0, long = 0, damaged = 0
        func check(_ b: [UInt8], _ d: ProtocolDecoder, _ round: Int) {
            let store = RecordStore()
            let bytes = store.bytes(b)
            let whole = ProtocolDecoder.isWholeAdvertisingEvent(bytes)
            let two = whole && !d.carriesModuleAdvertising(bytes)
            #expect(d.isPlainAdvertisingEvent(bytes) == two, "round \(round): \(Hex.string(b))")
            if two { plain += 1 } else { long += 1 }
            if !whole { damaged += 1 }
        }
        for round in 0..<8000 {
            let sub: UInt8 = [0x02, 0x0D, 0x0B, 0x02, 0x0D, 0x03][round % 6]
            let n = Int(rng.next() % 3)
            var p: [UInt8] = [sub, UInt8(n)]
            for _ in 0..<n {
                let fixed = sub == 0x0D ? 23 : sub == 0x0B ? 16 : 8
                p += (0..<fixed).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if sub == 0x0D, rng.next() % 3 != 0 { p[p.count - fixed] &= 0x9F } // complete
                if sub == 0x0B { continue }
                var ad: [UInt8] = []
                for _ in 0..<Int(rng.next() % 4) {
                    let t = rng.next() % 5 == 0 ? types[Int(rng.next() % UInt64(types.count))] : UInt8([0x01, 0x09, 0xFF, 0x16, 0x03][Int(rng.next() % 5)])
                    let len = Int(rng.next() % 6)
                    ad += [UInt8(len + 1), t] + (0..<len).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                }
                if rng.next() % 4 == 0 { ad += [0, 0x2A] } // padding after a zero Length
                p += [UInt8(ad.count)] + ad
                if sub == 0x02 { p.append(0xC0) }
            }
            guard p.count < 250 else { continue }
            var b = [0x3E, UInt8(p.count)] + p
            switch rng.next() % 6 { // damage some
            case 0: b[Int(rng.next() % UInt64(b.count))] ^= UInt8(1 << (rng.next() % 8))
            case 1: b.removeLast(Int(rng.next() % UInt64(min(b.count, 4))))
            case 2: b[1] = UInt8(b.count - 2) // a cut kept consistent with the length
            default: break
            }
            if round % 97 == 0 { b = [0x3E, 2, sub, 0] } // no reports
            check(b, d, round)
        }
        #expect(plain > 2000 && long > 2000 && damaged > 1000, "plain \(plain) long \(long) damaged \(damaged)")
        // An advertiser's data in pieces pending: every extended report event goes the long way.
        let pending = ProtocolDecoder()
        let store = RecordStore()
        var first: [UInt8] = [0x0D, 1, 0x20, 0x00, 0x01] + [UInt8](repeating: 0x11, count: 6) + [0x01, 0x00, 0xFF, 0x7F, 0xC0] + [UInt8](repeating: 0, count: 9)
        first += [3, 2, 0x01, 0x06]
        _ = pending.decode(store.record(1, .event, .received, [0x3E, UInt8(first.count)] + first))
        var complete = first
        complete[2] = 0x00
        let event = [0x3E, UInt8(complete.count)] + complete
        #expect(!pending.extendedPieces.pending.isEmpty)
        #expect(!pending.isPlainAdvertisingEvent(store.bytes(event)) && d.isPlainAdvertisingEvent(store.bytes(event)))
    }
}

extension UInt16 {
    fileprivate var littleEndianBytes: [UInt8] { [UInt8(self & 0xFF), UInt8(self >> 8)] }
}
