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

    /// `--write-keys`: the keys recovered from the capture, written to the bond store file.
    func save(_ d: ProtocolDecoder) throws {
        guard let path = writeKeys else { return }
        try BondStoreFile.write(d.recoveredKeys, to: path)
    }
}

/// `--keys` / `--write-keys`: the bond store file, its errors said in one line (exit 2); which
/// key belongs to which device is BluesiftSecurity's (`KnownLTK(bond:)`, `Bond(recovered:)`).
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
        return store.bonds.enumerated().map { i, b in KnownLTK(bond: b, source: "--keys \(path) (bond \(i + 1))") }
    }

    static func write(_ keys: [RecoveredKey], to path: String) throws {
        let store = BondStore(bonds: keys.compactMap(Bond.init(recovered:)))
        do { try store.save(path: path) } catch {
            stderrLine("bluesift: --write-keys \(path): \(error.description)")
            throw Exit.unusableInput
        }
    }
}
