import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftProtocols
import BluesiftSecurity

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
            guard let b = Hex.parse(h), b.count == 16 else { throw usage("--ltk", "32 hex digits, most significant first", t) }
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

/// `--keys` / `--write-keys`: the bond store of BluesiftSecurity (LTK and Rand as sent in SMP).
enum BondStoreFile {
    static func read(_ path: String) throws -> [KnownLTK] {
        guard FileManager.default.fileExists(atPath: path) else {
            stderrLine("bluesift: --keys \(path): no such file")
            throw Exit.unusableInput
        }
        let store: BondStore
        do { store = try BondStore.load(path: path) } catch {
            stderrLine("bluesift: --keys \(path): \(error.description)")
            throw Exit.unusableInput
        }
        return store.bonds.enumerated().map { i, b in
            // A device with an IRK may appear under any resolvable address: try it everywhere
            // (the MIC tells). An LE SC LTK has EDIV and Rand zero: any session may use it.
            KnownLTK(ltk: b.ltk.reversed(), address: b.irk == nil ? (b.identityAddress ?? b.address) : nil,
                     ediv: b.secureConnections ? nil : b.ediv, rand: b.secureConnections ? nil : b.rand,
                     source: "--keys \(path) (bond \(i + 1))")
        }
    }

    static func write(_ keys: [RecoveredKey], to path: String) throws {
        var store = BondStore()
        for k in keys {
            guard let key = k.ltk ?? k.stk else { continue }
            // The bond belongs to the device that distributed the key; an STK to the pair
            // (kept under the peripheral's address).
            let central = k.distributedBy ?? false
            guard let addr = central ? k.central : k.peripheral else { continue }
            store.bonds.append(Bond(address: addr, addressType: (central ? k.centralRandom : k.peripheralRandom) ? "random" : "public",
                                    ltk: key.reversed(), ediv: k.ediv ?? 0, rand: k.rand ?? [UInt8](repeating: 0, count: 8),
                                    authenticated: (k.tk ?? 0) != 0, secureConnections: false))
        }
        do { try store.save(path: path) } catch {
            stderrLine("bluesift: --write-keys \(path): \(error.description)")
            throw Exit.unusableInput
        }
    }
}
