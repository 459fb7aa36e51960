import Testing
import BluesiftSecurity
import BluesiftWire
@testable import BluesiftProtocols

/// A network PDU heard again (relays, Network Transmit repeats) is opened from
/// `MeshDecoder.recent` (issue 40's speed): the same fields as the first copy, every copy
/// still through the lower and upper transport, and nothing kept once the credentials change.
@Suite struct MeshRepeatCacheTests {
    static func pdu(_ n: String) -> [UInt8] { Hex.parse(MeshSample.messages.first { $0.0 == n }!.1)! }

    /// Message 16 (Config AppKey Status, 0x1201 → 0x0003, SEQ 6) twice: the second copy is
    /// the cache's, with the same JSON.
    @Test func aRepeatIsOpenedFromTheCacheWithTheSameFields() throws {
        var d = MeshDecoder(keys: MeshSample.keys)
        let first = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("16"))
        #expect(d.recent.count == 1 && d.recentHeads.count == 1)
        let again = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("16"))
        #expect(d.recent.count == 1)
        #expect(json(again) == json(first))
        let n = try #require(again.network)
        #expect(n.seq == 6 && n.src == 0x1201 && n.dst == 0x0003 && again.netMIC == "ok")
        #expect(again.access?.opcode.name == "Config AppKey Status" && again.upper?.mic == "ok" && again.upper?.key == "dev 0x1201")
    }

    /// Message 6's segment 0 heard twice, then segment 1, then segment 0 once more: the copy
    /// from the cache still counts as a segment, the message completes, and the late copy is
    /// a segment of a message already reassembled.
    @Test func segmentsHeardAgainStillGoThroughReassembly() throws {
        var d = MeshDecoder(keys: MeshSample.keys)
        let s0 = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("6.0"))
        let s0again = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("6.0"))
        #expect(d.recent.count == 1)
        #expect(s0.segmentsHeld! == (1, 2) && s0again.segmentsHeld! == (1, 2))
        #expect(s0again.summary == "Mesh segment 0/1 seq_zero=2475 0x0003→0x1201 ttl=4 seq=3221931 [reassembling]")
        let s1 = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("6.1"))
        #expect(s1.segmentsHeld! == (2, 2) && s1.access?.opcode.name == "Config AppKey Add")
        let late = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("6.0"))
        #expect(late.upper?.encrypted == MeshDecoder.alreadyReassembled && late.access == nil)
    }

    /// New keys empty the cache: the PDU opened with the sample NetKey stays encrypted under
    /// a key file without it.
    @Test func newKeysEmptyTheCache() throws {
        var d = MeshDecoder(keys: MeshSample.keys)
        _ = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("16"))
        #expect(d.recent.count == 1)
        d.keys = try MeshKeys.decode(Array(#"{"iv_index": "12345678", "net_keys": ["00112233445566778899aabbccddeeff"]}"#.utf8))
        #expect(d.recent.isEmpty && d.recentHeads.isEmpty)
        let after = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("16"))
        #expect(after.network == nil && after.netMIC == nil)
        #expect(after.encrypted?.hasPrefix("no NetKey with NID") == true)
    }

    /// Friendship credentials learnt (messages 1 and 2) empty it too; messages 4 (friendship
    /// NID) opens after them.
    @Test func learntFriendshipEmptiesTheCache() throws {
        var d = MeshDecoder(keys: MeshSample.keys)
        _ = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("1"))
        #expect(d.recent.count == 1)
        _ = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("2"))
        #expect(d.friendships.count == 1 && d.recent.isEmpty)
        let m4 = d.decodeAdvertising(adType: 0x2A, data: Self.pdu("4"))
        #expect(m4.network?.friendship == true && m4.netMIC == "ok" && d.recent.count == 1)
    }
}
