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
