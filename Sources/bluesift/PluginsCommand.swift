import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftPlugins

/// `--plugins DIR` (repeatable) on every command that decodes vendor frames.
struct PluginOptions: ParsableArguments {
    @Option(name: .customLong("plugins"), help: ArgumentHelp("Also load vendor plugins (*.yaml) from DIR, or the plugin FILE.yaml (repeatable; before $BLUESIFT_PLUGINS and the installed Plugins folder).", valueName: "DIR|FILE"))
    var directories: [String] = []

    @Flag(help: "Load no vendor plugins.")
    var noPlugins = false

    @Option(help: ArgumentHelp("Keys for encrypted advertising payloads (BTHome, Xiaomi MiBeacon): a JSON object mapping each advertiser's address to its key in hex, {\"a4:c1:38:8d:18:b2\": \"231d…\"}. Never printed.", valueName: "FILE"))
    var vendorKeys: String?

    /// The keys of --vendor-keys (empty without it); a file that cannot be read is exit 2.
    func loadVendorKeys() throws -> [UInt64: [UInt8]] {
        guard let path = vendorKeys else { return [:] }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            stderrLine("bluesift: --vendor-keys \(path): cannot read the file")
            throw Exit.unusableInput
        }
        do { return try VendorKeys.parse(text) } catch {
            stderrLine("bluesift: --vendor-keys \(path): \(error.message)")
            throw Exit.unusableInput
        }
    }

    /// A --plugins that names nothing, or a folder without a plugin, is a mistake to say
    /// at once (exit 2), not a silent run without the plugins the user meant.
    func validate() throws {
        for d in directories {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: d, isDirectory: &isDir) else {
                stderrLine("bluesift: --plugins \(d): no such file or folder")
                throw Exit.unusableInput
            }
            if isDir.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: d)) ?? []
                guard names.contains(where: PluginLoader.isPluginFile) else {
                    stderrLine("bluesift: --plugins \(d): no plugin (*.yaml, *.yml) in this folder")
                    throw Exit.unusableInput
                }
            } else if !PluginLoader.isPluginFile(d) {
                stderrLine("bluesift: --plugins \(d): not a plugin file (*.yaml, *.yml) or folder")
                throw Exit.unusableInput
            }
        }
    }

    /// The compiled plugins, loaded once; give each capture its own `PluginSet` (it holds
    /// per-stream reassembly state).
    /// The plugins a capture is decoded with: advertising plugins compiled when a record first
    /// reaches one of their rules (a failure is then the same warning, when it happens).
    func loadPlugins() -> [Plugin]? {
        if noPlugins { return nil }
        PluginLoader.lateErrors.withLock { $0 = { e in stderrLine("bluesift: warning: \(e.description) (plugin skipped)") } }
        let loaded = PluginLoader.loadOnUse(directories: searchPath())
        for e in loaded.errors { stderrLine("bluesift: warning: \(e.description) (plugin skipped)") }
        return loaded.plugins.isEmpty ? nil : loaded.plugins
    }

    func searchPath() -> [String] {
        PluginLoader.searchPath(executable: executablePath(), extra: directories)
    }
}

func executablePath() -> String {
    if let p = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return p }
    return Bundle.main.executablePath ?? CommandLine.arguments[0]
}

struct Plugins: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "Vendor dissector plugins: list, check, test and try them.",
        discussion: """
            Plugins are YAML files (schema: Plugins/README.md) loaded from --plugins DIR, \
            $BLUESIFT_PLUGINS (colon-separated), <prefix>/share/bluesift/Plugins and, when running \
            from a build directory, the repository's Plugins/.
            """,
        subcommands: [List.self, Check.self, Test.self, Decode.self, Encode.self, Bench.self, Export.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the plugins found, with what they match.")
        @OptionGroup var options: PluginOptions
        @Option(help: ArgumentHelp("Only the plugins that produce a value of this name, or of another name for it (co2 finds carbon_dioxide; Plugins/README.md lists them): one line per plugin and field.", valueName: "NAME"))
        var field: String?

        func run() throws {
            var out = Output()
            let loaded = PluginLoader.load(directories: options.searchPath())
            if let field {
                for e in loaded.errors { stderrLine("bluesift: warning: \(e.description) (plugin skipped)") }
                let names = FieldNames.alike(field)
                var n = 0
                for p in loaded.plugins {
                    for f in p.producedFields where names.contains(f.name.lowercased()) {
                        out.line("\(p.id)  \(f.name)\(f.unit.map { " (\($0))" } ?? "")  \(p.name)")
                        n += 1
                    }
                }
                out.flush()
                if n == 0 {
                    stderrLine("bluesift: no loaded plugin produces a field named \(names.joined(separator: " or "))")
                    throw ExitCode(1)
                }
                return
            }
            for e in loaded.errors { stderrLine("bluesift: warning: \(e.description) (plugin skipped)") }
            if loaded.plugins.isEmpty {
                stderrLine(
                    "bluesift: no vendor plugins found (looked in: \(options.searchPath().joined(separator: ", "))); "
                        + "point --plugins DIR or $BLUESIFT_PLUGINS at a folder of *.yaml plugins")
            }
            for p in loaded.plugins {
                out.line("\(p.id)  \(p.name)  (\(plural(p.messageNames.count, "message")), \(plural(p.examples.count, "example")))  \(p.path)")
                for m in p.matches {
                    if let a = m.advertising { out.line("  " + a.description); continue }
                    var s = "  " + (m.channel.map(\.description) ?? ((m.service.map { "service \($0) " } ?? "") + "characteristic \(m.characteristic)"))
                    if let h = m.handle { s += " handle \(Hex.fixed(UInt64(h), width: 4))" }
                    // An access message has no GATT direction.
                    if case .mesh? = m.channel {
                        out.line(s)
                        continue
                    }
                    s += "  " + PluginDirection.allCases.filter { m.directions.contains($0) }.map(\.rawValue).joined(separator: ", ")
                    out.line(s)
                }
            }
            let order = PluginSet(loaded.plugins).advertisingOrder
            if !order.isEmpty {
                out.line("")
                out.line("advertising data: the first rule that holds decodes a structure (longest prefix, then size, then name or uuid, then file order; company any after a company's own rules)")
                for (target, rules) in order {
                    out.line("  " + target)
                    for r in rules { out.line("    " + r) }
                }
            }
            out.flush()
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check plugin files; errors as FILE:LINE: message.",
            discussion: "Exit codes: 0 all valid, 2 at least one plugin is rejected.")
        @Argument(help: "Plugin files, or folders of them (checked as --plugins loads them, duplicate ids included).") var files: [String]

        func run() throws {
            var failed = false
            var out = Output()
            func ok(_ p: Plugin, _ path: String) {
                out.line("\(path): ok (\(p.id): \(plural(p.messageNames.count, "message")), \(plural(p.examples.count, "example")))")
            }
            for l in PluginLoader.load(paths: files) {
                for p in l.plugins { ok(p, l.isFolder ? p.path : l.path) }
                for e in l.errors { stderrLine("bluesift: \(e.description)") }
                if l.emptyFolder { stderrLine("bluesift: \(l.path): no plugin files (*.yaml, *.yml) in this folder") }
                failed = failed || l.failed
            }
            out.flush()
            if failed { throw Exit.unusableInput }
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Run every plugin's examples: decode, compare fields and checksum, encode back.",
            discussion: "Exit codes: 0 all pass, 1 a failure (or a plugin that does not load).")
        @Argument(help: "Plugin files, or folders of them (default: every plugin on the search path).") var files: [String] = []
        @OptionGroup var options: PluginOptions

        func run() throws {
            var plugins: [Plugin] = []
            var failed = false
            if files.isEmpty {
                let loaded = PluginLoader.load(directories: options.searchPath())
                plugins = loaded.plugins
                for e in loaded.errors { stderrLine("bluesift: \(e.description)"); failed = true }
            } else {
                // A folder as `plugins check` and --plugins read it.
                for l in PluginLoader.load(paths: files) {
                    plugins += l.plugins
                    for e in l.errors { stderrLine("bluesift: \(e.description)"); failed = true }
                    if l.emptyFolder { stderrLine("bluesift: \(l.path): no plugin files (*.yaml, *.yml) in this folder"); failed = true }
                }
            }
            var out = Output()
            var total = 0, bad = 0
            for p in plugins {
                let results = p.runExamples()
                total += results.count
                for r in results where !r.passed {
                    bad += 1
                    out.line("\(p.path):\(r.line): example \(r.hex): \(r.problems.joined(separator: "; "))")
                }
                out.line("\(p.id): \(results.count - results.filter { !$0.passed }.count)/\(results.count) examples pass")
            }
            out.line("\(total - bad)/\(total) examples pass in \(plugins.count) plugin\(plugins.count == 1 ? "" : "s")")
            out.flush()
            if failed || bad > 0 { throw ExitCode(1) }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Generate a Wireshark Lua dissector from a plugin.",
            discussion: """
                The dissector registers on the plugin's characteristic UUIDs (bluetooth.uuid, or \
                btatt.uuid16/btatt.uuid128) and handle overrides (btatt.handle), and reassembles frames \
                spanning several ATT values. Use: tshark -X lua_script:FILE.lua -r capture -Y PLUGIN. \
                Exit codes: 2 when the plugin uses something the exporter cannot express \
                (FILE:LINE: cannot export …), nothing written.
                """)
        @Flag(help: "Wireshark Lua (the only target today).") var wireshark = false
        @Argument(help: "Plugin id.") var plugin: String
        @Option(name: .shortAndLong, help: "Write to FILE (atomically) instead of stdout.") var output: String?
        @OptionGroup var options: PluginOptions

        func run() throws {
            guard wireshark else { throw ValidationError("choose a target: --wireshark") }
            let p = try findPlugin(plugin, options)
            let lua: String
            do throws(PluginError) { lua = try p.wiresharkLua() } catch {
                stderrLine("bluesift: \(error.description)")
                throw Exit.unusableInput
            }
            if let output {
                do { try lua.write(toFile: output, atomically: true, encoding: .utf8) } catch {
                    stderrLine("bluesift: cannot write \(output): \(error.localizedDescription)")
                    throw Exit.unusableInput
                }
            } else {
                var out = Output()
                out.buffer.append(contentsOf: Array(lua.utf8))
                out.flush()
            }
        }
    }

    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decode",
            abstract: "Decode hex bytes with one plugin (frames are split and joined as in a capture).")
        @Option(help: "Plugin id.") var plugin: String
        @Option(help: "write, notify, indicate or read.") var direction: String = "write"
        @Flag(help: "JSON instead of a tree.") var json = false
        @Argument(help: "Frame bytes in hex (spaces and colons allowed).") var hex: [String]
        @OptionGroup var options: PluginOptions

        /// The direction and the bytes, before any plugin is loaded.
        func validate() throws { _ = try parsed() }

        func parsed() throws -> (PluginDirection, [UInt8]) {
            guard let dir = PluginDirection(rawValue: direction) else { throw usage("--direction", "write, notify, indicate or read", direction) }
            guard let bytes = Hex.parse(hex.joined()) else { throw usage("<hex>", "frame bytes in hex such as a5 06 03", hex.joined(separator: " ")) }
            return (dir, bytes)
        }

        func run() throws {
            let (dir, bytes) = try parsed()
            let p = try findPlugin(plugin, options)
            var frames = [bytes]
            var out = Output()
            if let f = p.framing {
                let o = FrameAssembler(framing: f).push(.init(device: 0, handle: 0, direction: dir), bytes, atMicroseconds: 0)
                frames = o.frames
                for d in o.dropped { out.line("note: \(d)") }
                if o.pending > 0 { out.line("incomplete frame: \(o.pending) bytes" + (o.pendingNeed.map { " of \($0)" } ?? "")) }
                if frames.isEmpty { frames = [bytes] } // show how far the bytes decode anyway
            }
            for f in frames {
                let m = p.decode(f)
                if json {
                    var w = JSONFieldWriter(capacity: 1024)
                    w.beginTopLevel(); m.describe(into: &w); w.endTopLevel()
                    out.buffer.append(contentsOf: w.out); out.buffer.append(0x0A)
                } else {
                    out.line("\(p.id) \(m.summary)")
                    var tree = TextFieldWriter(depth: 1)
                    for fl in m.fields { fl.value.describe(.dynamic(fl.name), into: &tree) }
                    for l in tree.lines { out.line(l) }
                    if m.checksum == .bad, let e = m.checksumExpected, let g = m.checksumFound {
                        out.line("  checksum: found \(Hex.fixed(g, width: 2)), computed \(Hex.fixed(e, width: 2))")
                    }
                }
            }
            out.flush()
        }
    }

    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "encode",
            abstract: "Build a frame from field values (lengths and checksums computed), printed as hex.",
            discussion: "Example: bluesift plugins encode --plugin band sport_count month=6 day=20")
        @Option(help: "Plugin id.") var plugin: String
        @Argument(help: "Message name.") var message: String
        @Argument(help: "Fields as name=value (integers, enum names, text; 0x… for hex bytes).") var fields: [String] = []
        @OptionGroup var options: PluginOptions

        func run() throws {
            let p = try findPlugin(plugin, options)
            var d: [String: PluginValue] = [:]
            for f in fields {
                guard let eq = f.firstIndex(of: "=") else { throw usage("<fields>", "name=value", f) }
                let k = String(f[..<eq]), v = String(f[f.index(after: eq)...])
                d[k] = PluginValue(fieldText: v)
            }
            do {
                var out = Output()
                out.line(Hex.string(try p.encode(message: message, fields: d), separator: " "))
                out.flush()
            } catch {
                stderrLine("bluesift: \(p.id): \(error.description)")
                throw ExitCode(1)
            }
        }
    }
}

extension Plugins {
    /// Decode cost for plugin authors (hidden): N decodes of one frame, N lookups that match nothing.
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "bench", shouldDisplay: false)
        @Option(help: "Plugin id.") var plugin: String
        @Option(help: "Iterations.") var count = 1_000_000
        @Argument(help: "Frame bytes in hex.") var hex: [String]
        @OptionGroup var options: PluginOptions

        func run() throws {
            guard let bytes = Hex.parse(hex.joined()) else { throw usage("<hex>", "frame bytes in hex", hex.joined(separator: " ")) }
            let p = try findPlugin(plugin, options)
            let set = PluginSet([p])
            var clock = timespec()
            func now() -> Double { clock_gettime(CLOCK_MONOTONIC, &clock); return Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 }
            var n = 0
            let t0 = now()
            for _ in 0..<count { n &+= p.decode(bytes).fields.count }
            let t1 = now()
            let other = BluetoothUUID(0x2a19)
            for i in 0..<count where set.match(service: nil, characteristic: other, handle: UInt16(truncatingIfNeeded: i), direction: .notify) != nil { n &+= 1 }
            let t2 = now()
            var out = Output()
            out.line("decode: \(Int(Double(count) / (t1 - t0))) frames/s; no-match lookup: \(Int(Double(count) / (t2 - t1))) /s (\(n))")
            out.flush()
        }
    }
}

func findPlugin(_ id: String, _ options: PluginOptions) throws -> Plugin {
    let loaded = PluginLoader.load(directories: options.searchPath())
    if let p = loaded.plugins.first(where: { $0.id == id }) { return p }
    for e in loaded.errors { stderrLine("bluesift: warning: \(e.description) (plugin skipped)") }
    let found = loaded.plugins.map(\.id)
    throw usage(
        "--plugin",
        found.isEmpty
            ? "a plugin id, but no plugin was found (point --plugins DIR or $BLUESIFT_PLUGINS at a folder of *.yaml plugins)"
            : "a plugin id: " + found.joined(separator: ", "), id)
}

/// "1 message", "2 messages".
func plural(_ n: Int, _ what: String) -> String { "\(n) \(what)\(n == 1 ? "" : "s")" }
