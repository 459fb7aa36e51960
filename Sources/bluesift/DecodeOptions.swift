import ArgumentParser
import Foundation
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect
import BluesiftSession
#if canImport(Glibc)
    import Glibc
#endif

/// The decode options of every command that reads captures, one group so that they cannot
/// drift: keys for sniffed encrypted links (`--ltk`, `--keys`, `--write-keys`), an imported
/// GATT database (`--gatt`) and vendor plugins (`--plugins`, `--no-plugins`).
struct DecodeOptions: ParsableArguments {
    @OptionGroup var keyOptions: KeyOptions

    @Option(help: "Import a GATT database (JSON, as written by `bluesift gatt --format json`) to name handles whose discovery was not captured.")
    var gatt: String?

    @Option(
        help: ArgumentHelp(
            "With --gatt: which generation of the file's database to import, when the device's database changed (1 = the first; default: the last). gatt and emulate: which generation of the capture's databases to show or serve.", valueName: "n"))
    var generation: Int?

    @OptionGroup var plugins: PluginOptions

    @Option(name: .customLong("module-option"), help: ArgumentHelp(ModuleOptionArguments.help(.decode), valueName: "NAME=VALUE"))
    var moduleOptions: [String] = []

    /// Read once per command: a bad key, GATT file or plugin folder is said before any capture
    /// is read (exit 2, or 64 for a malformed --ltk).
    /// `plugins: false`: a command whose output no plugin changes (`info` without a filter)
    /// skips compiling them, the one cost of start-up that grows with the plugin folder.
    /// `generationOfCapture`: the command reads --generation without --gatt too (gatt, emulate).
    func settings(naming: Bool = true, plugins usePlugins: Bool = true, generationOfCapture: Bool = false) throws -> DecodeSettings {
        var s = DecodeSettings()
        s.naming = naming
        s.keys = try keyOptions.keys()
        if let g = generation {
            guard g >= 1 else { throw usage("--generation", "a generation number, 1 or more", "\(g)") }
            guard gatt != nil || generationOfCapture else { throw usage("--generation", "--gatt FILE with it (the generation of that file's database)", "\(g)") }
        }
        s.gatt = try gatt.map { try loadGATT($0, generation: generation) }
        s.plugins = usePlugins ? plugins.loadPlugins() : nil
        s.vendorKeys = try plugins.loadVendorKeys()
        do { s.modules = try ProtocolRegistry.shared.configure(ModuleOptionArguments.split(moduleOptions)) } catch { throw ModuleOptionArguments.fail(error) }
        if isatty(2) != 0 {
            s.crackProgress = { done in stderrRaw("\rbluesift: searching the passkey: \(done * 100 / 1_000_000)%") }
        }
        return s
    }
}

/// Opens one capture (a path, or the label of a `--merge` group) as a session, or says why not
/// in one line and returns nil (the caller's exit code is 2). Names `--peer` gave that no
/// device advertised are said too.
func openSession(
    _ path: String, decode: DecodeSettings, filter: FrameFilter = FrameFilter(),
    following: (() -> Bool)? = nil
) -> AnalysisSession? {
    if isFolder(path) {
        stderrLine("bluesift: no captures in \(path)")
        return nil
    }
    let source: SessionSource =
        following.map { .following(path, shouldStop: $0) }
        ?? MergedInputs.groups[path].map { .merged($0) } ?? .file(path)
    do {
        let s = try AnalysisSession(source, decode: decode, filter: filter)
        for name in s.unresolvedPeerNames {
            stderrLine("bluesift: \(path): no device advertised the name \"\(name)\" (--peer takes an address or an advertised name)")
        }
        return s
    } catch {
        stderrLine("bluesift: \(error.description)")
        return nil
    }
}

/// `openSession` for the commands that read one capture: a folder is refused in one line,
/// and any failure is exit 2.
func openSessionOrExit(_ path: String, decode: DecodeSettings, filter: FrameFilter = FrameFilter()) throws -> AnalysisSession {
    try refuseFolder(path)
    guard let s = openSession(path, decode: decode, filter: filter) else { throw Exit.unusableInput }
    return s
}
