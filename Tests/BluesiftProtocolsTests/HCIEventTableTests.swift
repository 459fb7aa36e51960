import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// `HCIEvents`' tables are built from what each type says of itself (`asLEMetaEvent`,
/// `readsFields`), not by dynamic casts: a cast on a metatype scanned every conformance of the
/// binary, 13 M instructions at the start of every command (callgrind; no timing test). The
/// tables must be what the casts gave.
@Suite struct HCIEventTableTests {
    @Test func tablesAgreeWithTheCasts() {
        var le = 0
        for t in HCIEvents.all {
            let cast = t as? any HCILEMetaEvent.Type
            #expect((t.asLEMetaEvent == nil) == (cast == nil), "\(t)")
            if let m = t.asLEMetaEvent {
                le += 1
                #expect(ObjectIdentifier(m) == cast.map { ObjectIdentifier($0) }, "\(t)")
                #expect(HCIEvents.leTypes[m.subevent].map { ObjectIdentifier($0) } == ObjectIdentifier(m), "\(t)")
                #expect(m.code == .leMeta)
            } else {
                #expect(HCIEvents.types[t.code].map { ObjectIdentifier($0) } == ObjectIdentifier(t), "\(t)")
            }
        }
        #expect(le == HCIEvents.leTypes.count && HCIEvents.all.count - le == HCIEvents.types.count)
        #expect(le == 14 && HCIEvents.types.count == 18)
        // The LE Advertising Report is an LE Meta event (subevent 0x02); Command Complete is not.
        #expect(HCILEAdvertisingReportEvent.asLEMetaEvent?.subevent.rawValue == 0x02)
        #expect(HCICommandCompleteEvent.asLEMetaEvent == nil)
    }

    /// A view that reads nothing (advertising reports: the `adv` layer's) is neither made nor
    /// called per event; every other is, and the entries keep `readsAllParameters`.
    @Test func viewEntriesSayWhatTheViewsRead() throws {
        var unread = 0
        for (code, t) in HCIEvents.types.map({ ($0.key.rawValue, $0.value) }) + HCIEvents.leTypes.map({ (HCIEventCode.leMeta.rawValue, $0.value as any HCIEvent.Type) }) {
            let sub = t.asLEMetaEvent?.subevent.rawValue
            let entry = try #require(code == HCIEventCode.leMeta.rawValue ? HCIEvents.leViews[Int(sub!)] : HCIEvents.views[Int(code)])
            #expect(entry.readsFields == !(entry.type is any HCIUnreadEventView.Type), "\(t)")
            #expect(entry.readsAll == entry.type.readsAllParameters, "\(t)")
            #expect(HCIEvents.view(code: code, subevent: sub).map { ObjectIdentifier($0) } == ObjectIdentifier(entry.type))
            if !entry.readsFields { unread += 1 }
        }
        #expect(unread == 5)
        #expect(HCIEvents.leViews[0x02]?.readsFields == false && HCIEvents.leViews[0x0D]?.readsFields == false)
        #expect(HCIEvents.views[0x0E]?.readsFields == true)
    }
}
