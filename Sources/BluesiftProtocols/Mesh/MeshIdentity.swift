import BluesiftSecurity
import BluesiftWire

/// What a Mesh Proxy identity in service data resolved to with the key file (Mesh Protocol
/// v1.1 §7.2.2.2.2-§7.2.2.2.4): the NetKey (by its position in "net_keys", never the key)
/// and, for a node identity, the node's unicast address. `resolved` false: no NetKey and
/// known address gave the hash.
public struct MeshIdentityMatch: Sendable, Hashable {
    public var resolved: Bool
    public var netKeyIndex: Int?
    public var nodeAddress: UInt16?
    /// Addresses tried for a node identity (the key file's device keys and every source heard).
    public var candidates: Int

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.bool("identity_resolved", resolved)
        if let i = netKeyIndex { sink.int("net_key_index", i) }
        if let a = nodeAddress { sink.int("node_address", Int(a)) }
        if !resolved { sink.int("addresses_tried", candidates) }
    }

    var summaryText: String {
        guard resolved else { return " unresolved" }
        return nodeAddress.map { " node=" + Hex.fixed(UInt64($0), width: 4) } ?? " net_key_index=\(netKeyIndex ?? 0)"
    }
}

/// Resolves node identities: the unicast addresses heard as SRC of decrypted network PDUs
/// (a 32768-bit set, 4 KiB, allocated at the first one) and the key file's device key
/// addresses are the candidates; the last results are kept, since a proxy repeats the same
/// service data until its random changes.
struct MeshIdentityResolver {
    var heardBits: [UInt64] = []
    var cache: [[UInt8]: MeshIdentityMatch] = [:]
    var cacheOrder: [[UInt8]] = []
    static let maxCache = 64

    mutating func heard(_ src: UInt16) {
        guard src != 0, src < 0x8000 else { return }
        if heardBits.isEmpty { heardBits = Array(repeating: 0, count: 512) }
        heardBits[Int(src >> 6)] |= 1 << UInt64(src & 63)
    }

    func candidates(_ keys: MeshKeys) -> [UInt16] {
        var set = Set(keys.devKeys.keys.filter { $0 != 0 && $0 < 0x8000 })
        for (w, bits) in heardBits.enumerated() where bits != 0 {
            for b in 0..<64 where bits & (1 << UInt64(b)) != 0 { set.insert(UInt16(w << 6 | b)) }
        }
        return set.sorted()
    }

    mutating func resolve(type: UInt8, hash: [UInt8], random: [UInt8], keys: MeshKeys) -> MeshIdentityMatch? {
        guard type >= 1, type <= 3 else { return nil }
        let key = [type] + hash + random
        if let m = cache[key], m.resolved || m.candidates == candidates(keys).count { return m }
        var m = MeshIdentityMatch(resolved: false, candidates: 0)
        if type == 0x02 {
            if let net = keys.netKeys.first(where: { $0.privateNetworkIdentityHash(random: random) == hash }) {
                m = MeshIdentityMatch(resolved: true, netKeyIndex: net.index, candidates: 0)
            }
        } else {
            let addresses = candidates(keys)
            m.candidates = addresses.count
            search: for net in keys.netKeys {
                for a in addresses where net.nodeIdentityHash(type: type, random: random, address: a) == hash {
                    m = MeshIdentityMatch(resolved: true, netKeyIndex: net.index, nodeAddress: a, candidates: addresses.count)
                    break search
                }
            }
        }
        if cache[key] == nil {
            if cacheOrder.count == Self.maxCache { cache[cacheOrder.removeFirst()] = nil }
            cacheOrder.append(key)
        }
        cache[key] = m
        return m
    }
}
