import BluesiftWire
import Foundation

/// A bad mesh key file: which member, never its value.
public struct MeshKeysError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable { case io, syntax, member }
    public var code: Code
    /// The member at fault ("net_keys[1]", "dev_keys.0x1201", "iv_index"), nil for the file.
    public var member: String?
    public var message: String
    public var description: String { (member.map { "\($0): " } ?? "") + message }
}

/// A NetKey made once (Mesh Protocol v1.1 §3.9.6.3): its managed flooding credentials (NID,
/// EncryptionKey, PrivacyKey), Network ID, BeaconKey, PrivateBeaconKey and IdentityKey.
/// The key itself is kept for friendship credentials (`friendship`). Never shows key bytes.
public struct MeshNetKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Position in the file's "net_keys".
    public let index: Int
    public let flooding: MeshNetworkCredentials
    /// k3 (§3.9.6.3.2), 8 octets: what secure network beacons and proxy service data carry.
    public let networkID: [UInt8]
    let netKey: [UInt8]
    let beaconKey: [UInt8]
    let privateBeaconKey: [UInt8]
    let identityKey: [UInt8]

    init?(index: Int, key: [UInt8]) {
        guard key.count == 16, let c = MeshNetworkCredentials(netKey: key) else { return nil }
        self.index = index; netKey = key; flooding = c; networkID = MeshCrypto.k3(key)
        beaconKey = MeshCrypto.beaconKey(netKey: key)
        privateBeaconKey = MeshCrypto.privateBeaconKey(netKey: key)
        identityKey = MeshCrypto.identityKey(netKey: key)
    }

    /// Friendship credentials of one friendship (§3.9.6.3.1, P = 0x01 ‖ LPN ‖ Friend ‖ counters).
    public func friendship(lpnAddress: UInt16, friendAddress: UInt16, lpnCounter: UInt16, friendCounter: UInt16) -> MeshNetworkCredentials {
        MeshNetworkCredentials(
            netKey: netKey,
            p: MeshCrypto.friendshipP(
                lpnAddress: lpnAddress, friendAddress: friendAddress,
                lpnCounter: lpnCounter, friendCounter: friendCounter))!
    }

    /// Whether a secure network beacon of this network authenticates (§3.10.3).
    public func authenticates(_ beacon: MeshSecureNetworkBeacon) -> Bool {
        beacon.networkID == networkID && beacon.authenticates(beaconKey: beaconKey)
    }

    /// A Mesh Private beacon decrypted with this network's PrivateBeaconKey (§3.10.4).
    public func decryptPrivateBeacon(_ bytes: [UInt8]) throws(MeshCryptoError) -> MeshPrivateBeacon {
        try MeshPrivateBeacon(decrypting: bytes, privateBeaconKey: privateBeaconKey)
    }

    /// A secure network beacon of this network, authenticated (the inverse of `authenticates`).
    public func secureNetworkBeacon(flags: UInt8, ivIndex: UInt32) -> MeshSecureNetworkBeacon {
        MeshSecureNetworkBeacon(flags: flags, networkID: networkID, ivIndex: ivIndex, beaconKey: beaconKey)
    }

    /// A Mesh Private beacon of this network (the inverse of `decryptPrivateBeacon`).
    public func privateBeacon(random: [UInt8], flags: UInt8, ivIndex: UInt32) throws(MeshCryptoError) -> [UInt8] {
        try MeshPrivateBeacon(random: random, flags: flags, ivIndex: ivIndex).encrypt(privateBeaconKey: privateBeaconKey)
    }

    public var description: String { "MeshNetKey(#\(index), nid: 0x\(String(flooding.nid, radix: 16)))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["index": index, "nid": flooding.nid]) }
}

/// The keys of `--mesh-keys FILE` (issue 40): JSON, hex strings without separators,
///   {"iv_index": "12345678", "net_keys": ["7dd7…"], "app_keys": ["6396…"],
///    "dev_keys": {"0x1201": "9d6d…"}, "label_uuids": ["0073…"], "provisioning_secrets": ["…"]}
/// (provisioning secrets: 32-octet ECDH secrets or P-256 private keys of provisioning sessions
/// in the capture, 64 hex digits each, with which Provisioning Data PDUs are opened).
/// Everything a decoder needs is made here once: per NetKey the credentials by NID, per
/// AppKey its AID, per label its virtual address. `description`, `debugDescription` and the
/// mirror show counts only, never a key.
public struct MeshKeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var ivIndex: UInt32
    public var netKeys: [MeshNetKey] { tables.netKeys }
    public var appKeys: [MeshAccessKey] { tables.appKeys }
    /// By unicast address.
    public var devKeys: [UInt16: MeshAccessKey] { tables.devKeys }
    /// Label UUIDs (16 octets) by virtual address; several labels may share one address.
    public var labels: [UInt16: [[UInt8]]] { tables.labels }
    /// ECDH secrets or P-256 private keys (32 octets, MSB first) of provisioning sessions.
    public var provisioningSecrets: [[UInt8]] { tables.provisioningSecrets }
    var byNID: [UInt8: [MeshNetworkCredentials]] { tables.byNID }
    var byAID: [UInt8: [MeshAccessKey]] { tables.byAID }

    /// The tables, made once and never changed: one reference, so a decoder that reads its
    /// keys for every PDU copies one pointer, not seven.
    final class Tables: Sendable {
        let netKeys: [MeshNetKey], appKeys: [MeshAccessKey], devKeys: [UInt16: MeshAccessKey]
        let labels: [UInt16: [[UInt8]]], provisioningSecrets: [[UInt8]]
        let byNID: [UInt8: [MeshNetworkCredentials]], byAID: [UInt8: [MeshAccessKey]]

        init(netKeys: [MeshNetKey], appKeys: [MeshAccessKey], devKeys: [UInt16: MeshAccessKey], labels: [UInt16: [[UInt8]]], provisioningSecrets: [[UInt8]]) {
            self.netKeys = netKeys; self.appKeys = appKeys; self.devKeys = devKeys
            self.labels = labels; self.provisioningSecrets = provisioningSecrets
            byNID = Dictionary(grouping: netKeys.map(\.flooding), by: \.nid)
            byAID = Dictionary(grouping: appKeys, by: \.aid)
        }
    }
    let tables: Tables

    /// Builds from raw keys (16 octets each); the decoder of the file checks sizes first.
    public init(
        ivIndex: UInt32, netKeys: [[UInt8]] = [], appKeys: [[UInt8]] = [], devKeys: [UInt16: [UInt8]] = [:], labelUUIDs: [[UInt8]] = [],
        provisioningSecrets: [[UInt8]] = []
    ) {
        self.ivIndex = ivIndex
        var l: [UInt16: [[UInt8]]] = [:]
        for u in labelUUIDs { if let a = MeshCrypto.virtualAddress(label: u) { l[a, default: []].append(u) } }
        tables = Tables(
            netKeys: netKeys.enumerated().compactMap { MeshNetKey(index: $0.offset, key: $0.element) },
            appKeys: appKeys.compactMap { MeshAccessKey(appKey: $0) }, devKeys: devKeys.compactMapValues { MeshAccessKey(devKey: $0) },
            labels: l, provisioningSecrets: provisioningSecrets.filter { $0.count == 32 })
    }

    /// The flooding credentials whose NID is `nid` (several NetKeys may share a NID: try each).
    public func credentials(nid: UInt8) -> [MeshNetworkCredentials] { byNID[nid & 0x7F] ?? [] }

    /// The AppKeys whose AID is `aid`.
    public func appKeys(aid: UInt8) -> [MeshAccessKey] { byAID[aid & 0x3F] ?? [] }

    /// The NetKey whose Network ID is `networkID` (secure network beacons, proxy service data).
    public func netKey(networkID: [UInt8]) -> MeshNetKey? { netKeys.first { $0.networkID == networkID } }

    public var description: String {
        "MeshKeys(iv_index: 0x\(String(ivIndex, radix: 16)), \(netKeys.count) net keys, \(appKeys.count) app keys, "
            + "\(devKeys.count) dev keys, \(labels.values.reduce(0) { $0 + $1.count }) label UUIDs)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["ivIndex": ivIndex, "netKeys": netKeys.count, "appKeys": appKeys.count, "devKeys": devKeys.count])
    }

    // MARK: file

    /// Decodes the JSON key file. Every member is optional except "iv_index" (a wrong IV index
    /// fails every MIC silently, so none is assumed). Errors name the member, never a value.
    public static func decode(_ data: [UInt8]) throws(MeshKeysError) -> MeshKeys {
        let any: Any
        do { any = try JSONSerialization.jsonObject(with: Data(data)) } catch {
            throw MeshKeysError(code: .syntax, message: "not JSON")
        }
        guard let root = any as? [String: Any] else { throw MeshKeysError(code: .syntax, message: "top level is not an object") }
        let known: Set<String> = ["iv_index", "net_keys", "app_keys", "dev_keys", "label_uuids", "provisioning_secrets"]
        if let extra = root.keys.sorted().first(where: { !known.contains($0) }) {
            throw MeshKeysError(code: .member, member: extra, message: "unknown member (expected iv_index, net_keys, app_keys, dev_keys, label_uuids, provisioning_secrets)")
        }
        func key(_ v: Any, _ member: String, octets: Int = 16) throws(MeshKeysError) -> [UInt8] {
            guard let s = v as? String, s.utf8.count == 2 * octets, let b = Hex.parse(s), b.count == octets else {
                throw MeshKeysError(code: .member, member: member, message: "is not \(2 * octets) hex digits")
            }
            return b
        }
        func list(_ name: String, octets: Int = 16) throws(MeshKeysError) -> [[UInt8]] {
            guard let v = root[name] else { return [] }
            guard let a = v as? [Any] else { throw MeshKeysError(code: .member, member: name, message: "is not an array") }
            var out: [[UInt8]] = []
            for (i, e) in a.enumerated() { out.append(try key(e, "\(name)[\(i)]", octets: octets)) }
            return out
        }
        guard let ivValue = root["iv_index"] else { throw MeshKeysError(code: .member, member: "iv_index", message: "missing") }
        guard let ivText = ivValue as? String, (1...8).contains(ivText.utf8.count),
            ivText.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }),
            let iv = UInt32(ivText, radix: 16)
        else {
            throw MeshKeysError(code: .member, member: "iv_index", message: "is not up to 8 hex digits")
        }
        var dev: [UInt16: [UInt8]] = [:]
        if let v = root["dev_keys"] {
            guard let o = v as? [String: Any] else { throw MeshKeysError(code: .member, member: "dev_keys", message: "is not an object") }
            for name in o.keys.sorted() {
                let digits = name.hasPrefix("0x") || name.hasPrefix("0X") ? String(name.dropFirst(2)) : ""
                guard (1...4).contains(digits.utf8.count), let a = UInt16(digits, radix: 16), a != 0, a < 0x8000 else {
                    throw MeshKeysError(code: .member, member: "dev_keys.\(name)", message: "name is not a unicast address (0x0001-0x7fff)")
                }
                guard dev[a] == nil else { throw MeshKeysError(code: .member, member: "dev_keys.\(name)", message: "address given twice") }
                dev[a] = try key(o[name]!, "dev_keys.\(name)")
            }
        }
        return MeshKeys(
            ivIndex: iv, netKeys: try list("net_keys"), appKeys: try list("app_keys"), devKeys: dev,
            labelUUIDs: try list("label_uuids"), provisioningSecrets: try list("provisioning_secrets", octets: 32))
    }

    /// Reads and decodes `path`.
    public static func load(path: String) throws(MeshKeysError) -> MeshKeys {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MeshKeysError(code: .io, message: "cannot read \(path)")
        }
        return try decode(Array(data))
    }
}
