import ArgumentParser
import BluesiftProtocols

/// Options protocol modules declare (`ProtocolModule.options`: `--mesh-keys FILE`,
/// `--mesh-src ADDR`). ArgumentParser declares options at compile time, so `main` rewrites
/// each declared `--NAME VALUE` (or `--NAME=VALUE`) into one of two real options:
/// `--module-option NAME=VALUE` (decode options, in `DecodeOptions`) or
/// `--module-filter NAME=VALUE` (filter options, in `FilterOptions`), whose help lists the
/// declared names. A family adds options without editing the CLI.
enum ModuleOptionArguments {
    static let decodeOption = "--module-option", filterOption = "--module-filter"

    /// The arguments with module options rewritten; nil (after one line on stderr) when one
    /// lacks its value. Words after `--` are left alone.
    static func rewrite(_ args: [String], registry: ProtocolRegistry = .shared) -> [String]? {
        guard !registry.options.isEmpty else { return args }
        var out: [String] = []
        out.reserveCapacity(args.count)
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" { out += args[i...]; break }
            guard a.hasPrefix("--") else { out.append(a); i += 1; continue }
            let body = a.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            guard let o = registry.option(named: name) else { out.append(a); i += 1; continue }
            var value: String
            if body.count > name.count {
                value = String(body.dropFirst(name.count + 1))
            } else {
                guard i + 1 < args.count else {
                    stderrLine("bluesift: --\(name): expected \(o.valueName) after it")
                    return nil
                }
                value = args[i + 1]
                i += 1
            }
            out += [o.kind == .decode ? decodeOption : filterOption, name + "=" + value]
            i += 1
        }
        return out
    }

    /// "NAME=VALUE" → (name, value); names are the registry's (the rewrite made them).
    static func split(_ given: [String]) -> [(name: String, value: String)] {
        given.map { g in
            let name = String(g.prefix { $0 != "=" })
            return (name, String(g.dropFirst(min(g.count, name.count + 1))))
        }
    }

    /// The one-line error and its exit code: 2 for a file that cannot be used, else 64.
    static func fail(_ e: ModuleOptionError) -> ExitCode {
        stderrLine("bluesift: --\(e.option) \(e.value): \(e.message)")
        return e.unusableInput ? Exit.unusableInput : Exit.usage
    }

    static func help(_ kind: ModuleOption.Kind) -> String {
        let list = ProtocolRegistry.shared.optionHelp(kind) ?? "none"
        switch kind {
        case .decode: return "Options of protocol modules, written --NAME VALUE (repeatable): " + list + "."
        case .filter: return "Record filters of protocol modules, written --NAME VALUE (repeatable; each given must hold, any of its values): " + list + "."
        }
    }
}
