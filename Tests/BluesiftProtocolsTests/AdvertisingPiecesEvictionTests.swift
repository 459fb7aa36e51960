import BluesiftWire
import Testing

@testable import BluesiftProtocols

/// Pieces of advertising data pending for more advertisers than the bound: the one whose first
/// piece came first is dropped, whatever order a Dictionary (seeded per process) keeps.
@Suite struct AdvertisingPiecesEvictionTests {
    @Test func extendedReportsDropTheOldestAdvertiser() {
        let pieces = ExtendedAdvertisingPieces()
        let piece: [UInt8] = [0x02, 0x01, 0x06]
        piece.withUnsafeBytes { data in
            func report(_ address: UInt64, status: UInt16) -> AdvertisingReport {
                var r = AdvertisingReport(eventType: status << 5, table: .extended, data: data)
                r.address = BDAddr(address)
                r.sid = 1
                return r
            }
            for a in 0...UInt64(ExtendedAdvertisingPieces.maxPending) {
                guard case .pending = pieces.add(report(0xC000_0000_0000 + a, status: 1)) else {
                    Issue.record("advertiser \(a): first piece not pending"); return
                }
            }
            #expect(pieces.pending.count == ExtendedAdvertisingPieces.maxPending)
            // The first advertiser was dropped: its last piece stands alone.
            guard case .single = pieces.add(report(0xC000_0000_0000, status: 0)) else {
                Issue.record("the oldest advertiser's pieces were kept"); return
            }
            // The second is still whole from its two pieces.
            guard case .whole(let bytes, let n, nil) = pieces.add(report(0xC000_0000_0001, status: 0)) else {
                Issue.record("the second advertiser's pieces were dropped"); return
            }
            #expect(bytes == piece + piece)
            #expect(n == 2)
        }
    }

    /// Data whose next piece has not come 5 s (capture time) after its last is dropped with a
    /// note (an AUX_CHAIN_IND comes at most 2.4573 s after its AuxPtr, Core 6.0 Vol 6 Part B
    /// §2.3.4.5); until then it stays, and nothing is scanned before the earliest deadline.
    @Test func extendedPiecesExpireInCaptureTime() {
        let pieces = ExtendedAdvertisingPieces()
        let piece: [UInt8] = [0x02, 0x01, 0x06]
        piece.withUnsafeBytes { data in
            func report(_ address: UInt64, status: UInt16) -> AdvertisingReport {
                var r = AdvertisingReport(eventType: status << 5, table: .extended, data: data)
                r.address = BDAddr(address)
                r.sid = 3
                return r
            }
            guard case .pending = pieces.add(report(0xC0FF_EE00_0001, status: 1), at: 1_000_000),
                case .pending = pieces.add(report(0xC0FF_EE00_0002, status: 1), at: 3_000_000),
                case .pending = pieces.add(report(0xC0FF_EE00_0001, status: 1), at: 2_000_000)
            else {
                Issue.record("pieces not pending"); return
            }
            // 5 s after the first advertiser's last piece (2 s): not yet.
            #expect(pieces.expire(now: 7_000_000).isEmpty && pieces.pending.count == 2)
            let notes = pieces.expire(now: 7_000_001)
            #expect(notes.map(\.message) == ["extended advertising data from c0:ff:ee:00:00:01 (SID 3) never completed: 6 octets in 2 reports, no piece for 5 s: dropped"])
            #expect(notes.first?.layer == "adv" && notes.first?.code == .truncated)
            #expect(pieces.pending.count == 1)
            // Its last piece now stands alone; the other advertiser's still completes.
            guard case .single = pieces.add(report(0xC0FF_EE00_0001, status: 0), at: 7_100_000) else {
                Issue.record("expired pieces were kept"); return
            }
            guard case .whole(let bytes, 2, nil) = pieces.add(report(0xC0FF_EE00_0002, status: 0), at: 7_200_000) else {
                Issue.record("the second advertiser's pieces were dropped"); return
            }
            #expect(bytes == piece + piece)
            #expect(pieces.pending.isEmpty && pieces.expire(now: 60_000_000).isEmpty)
        }
    }

    @Test func periodicReportsDropTheOldestSync() {
        let assembly = LEAudioAdvertisingAssembly()
        for h in 0...UInt16(LEAudioAdvertisingAssembly.maxKeys) {
            guard case .pending = assembly.add(.sync(h), [0x02, 0x01, 0x06], more: true) else {
                Issue.record("sync \(h): first piece not pending"); return
            }
        }
        #expect(assembly.pending.count == LEAudioAdvertisingAssembly.maxKeys)
        #expect(assembly.pending[.sync(0)] == nil)
        guard case .whole(let bytes, let n) = assembly.add(.sync(1), [0x03, 0x19, 0x41, 0x03], more: false) else {
            Issue.record("sync 1's pieces were dropped"); return
        }
        #expect(bytes == [0x02, 0x01, 0x06, 0x03, 0x19, 0x41, 0x03])
        #expect(n == 2)
    }
}
