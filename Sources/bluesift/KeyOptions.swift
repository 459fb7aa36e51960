import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftProtocols

/// `--ltk HEX`, `--keys FILE` and `--write-keys FILE` on every command that decodes sniffed
/// (over-the-air) captures: keys to decrypt encrypted LE links, and where to keep the keys
/// recovered from the capture (Core 5.4 Vol 6 Part E).
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("ltk"), help: ArgumentHelp("Decrypt sniffed LE links with this LTK (32 hex digits, most significant first, as crackle prints it; repeatable).", valueName: "HEX"))
    var ltks: [String] = []

    @Option(name: .customLong("keys"), help: ArgumentHelp("Decrypt sniffed LE links with the LTKs of this bond store (JSON, as `bluesift replay` and --write-keys write it).", valueName: "FILE"))
    var keysFile: String?

    @Option(name: .customLong("write-keys"), help: ArgumentHelp("Write the keys recovered from the capture (cracked legacy pairings, distributed LTKs) to this bond store file.", valueName: "FILE"))
    var writeKeys: String?

    /// The keys given, checked; a bad one is a usage error.
    func keys() throws -> [KnownLTK] {
        var out: [KnownLTK] = []
        for t in ltks {
            let h = t.hasPrefix("0x") ? String(t.dropFirst(2)) : t
            guard let b = Hex.parse(h), b.count == 16 else { throw ValidationError("bad --ltk \(t): 32 hex digits expected") }
            out.append(KnownLTK(ltk: b, source: "--ltk"))
        }
        if let path = keysFile { out += try BondStoreFile.read(path) }
        return out
    }

    /// Sets up a decoder: keys, and a progress line while a passkey is searched.
    func configure(_ d: ProtocolDecoder, keys: [KnownLTK]) {
        d.knownKeys = keys
        if isatty(2) != 0 {
            d.crackProgress = { done in stderrRaw("\rbluesift: searching the passkey: \(done * 100 / 1_000_000)%") }
        }
    }

    /// Prints what was recovered on stderr-free output? No: the keys go to `--write-keys`.
    func save(_ d: ProtocolDecoder) throws {
        guard let path = writeKeys else { return }
        try BondStoreFile.write(d.recoveredKeys, to: path)
    }
}

/// The bond store JSON (`{"version":1,"bonds":[…]}`; LTK and Rand as sent in SMP, little-endian).
enum BondStoreFile {
    static func read(_ path: String) throws -> [KnownLTK] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read --keys \(path)")
        }
        guard let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let bonds = obj["bonds"] as? [[String: Any]] else {
            throw ValidationError("--keys \(path): not a bond store (expected {\"version\":1,\"bonds\":[…]})")
        }
        var out: [KnownLTK] = []
        for (i, b) in bonds.enumerated() {
            guard let l = b["ltk"] as? String, let ltk = Hex.parse(l), ltk.count == 16 else {
                throw ValidationError("--keys \(path): bond \(i + 1) has no 32-hex-digit \"ltk\"")
            }
            let addr = (b["identity_address"] as? String).flatMap(BDAddr.init(string:)) ?? (b["address"] as? String).flatMap(BDAddr.init(string:))
            let secure = b["secure_connections"] as? Bool ?? false
            let ediv = (b["ediv"] as? Int).map { UInt16(truncatingIfNeeded: $0) }
            let rand = (b["rand"] as? String).flatMap(Hex.parse)
            out.append(KnownLTK(ltk: ltk.reversed(), address: addr ?? (b["address"] as? String).flatMap(BDAddr.init(string:)),
                                ediv: secure ? nil : ediv, rand: secure ? nil : rand,
                                source: "--keys \(path) (bond \(i + 1))"))
            // An LE SC LTK has EDIV and Rand zero; any session of the device may use it.
        }
        return out
    }

    static func write(_ keys: [RecoveredKey], to path: String) throws {
        var bonds: [[String: Any]] = []
        let now = ISO8601DateFormatter().string(from: Date())
        for k in keys {
            guard let key = k.ltk ?? k.stk else { continue }
            // The bond belongs to the device that distributed the key; an STK to the pair.
            let central = k.distributedBy ?? false
            let addr = central ? k.central : k.peripheral
            let random = central ? k.centralRandom : k.peripheralRandom
            bonds.append([
                "address": addr?.description ?? "00:00:00:00:00:00",
                "address_type": random ? "random" : "public",
                "ltk": Hex.string(key.reversed()),
                "ediv": Int(k.ediv ?? 0),
                "rand": Hex.string(k.rand ?? [UInt8](repeating: 0, count: 8)),
                "key_size": 16,
                "authenticated": (k.tk ?? 0) != 0,
                "secure_connections": false,
                "created": now,
            ])
        }
        let data = try JSONSerialization.data(withJSONObject: ["version": 1, "bonds": bonds], options: [.prettyPrinted, .sortedKeys])
        guard FileManager.default.createFile(atPath: path, contents: data + Data("\n".utf8)) else {
            throw ValidationError("cannot write --write-keys \(path)")
        }
    }
}
