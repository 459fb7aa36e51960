import ArgumentParser
import Foundation

@main
struct Bluesift: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluesift",
        abstract: "Read Bluetooth captures: decode HCI, L2CAP, ATT, SMP, advertising, the LE link layer, and Classic SDP, RFCOMM/HFP, AVDTP/A2DP and AVCTP/AVRCP.",
        discussion: """
            Reads btsnoop (Android, btmon), pcap/pcapng (H4, Linux monitor, LE link-layer sniffers) \
            and Apple PacketLogger files, detected by content.

            Exit codes:
              0   success (a damaged capture is decoded as far as it goes; warnings
                  go to stderr)
              1   differences (diff, replay), app requests without a recorded answer
                  (emulate), a failed example (plugins test), or records a conversion
                  dropped (convert without --allow-loss)
              2   unusable input: missing, unreadable, not a capture, unsupported link
                  type, a folder without captures or given where one capture is read
                  (dump, info, stats and frames read folders); an output that is the
                  same file as an input or cannot be written
              3   a live side failed: transport, controller or device (tap, capture,
                  replay, emulate)
              64  bad command-line usage (also help for a command that does not exist)
            """,
        version: BuildInfo.line,
        subcommands: [Info.self, Dump.self, Stats.self, Report.self, Frames.self, GATT.self, Plugins.self, Script.self, Replay.self, Emulate.self, Diff.self, Convert.self, Tap.self, Capture.self, Redact.self]
    )

    /// Output safety first (SIGINT/SIGTERM remove temporary files, SIGPIPE becomes EPIPE), then the command.
    static func main() {
        OutputGuard.installSignalHandlers()
        // Options protocol modules declare (`--mesh-keys FILE`) become the option groups'.
        guard let args = ModuleOptionArguments.rewrite(Array(CommandLine.arguments.dropFirst())) else {
            Foundation.exit(Exit.usage.rawValue)
        }
        // ArgumentParser prints the top-level help for `help nosuch` and exits 0.
        if args.first == "help", let bad = unknownCommand(Array(args.dropFirst())) {
            stderrLine("bluesift: help: no command '\(bad.name)' (commands: \(bad.known.joined(separator: ", ")))")
            Foundation.exit(Exit.usage.rawValue)
        }
        do {
            var command = try parseAsRoot(args)
            try command.run()
        } catch {
            fail(error, args)
        }
    }

    /// ArgumentParser's own errors in the house form: `bluesift: message` on one line, and for
    /// usage errors where the usage is (`(see 'bluesift dump --help')`), exit 64. Help,
    /// --version and completion scripts (exit 0), and our ExitCodes (message already
    /// printed), exit as ArgumentParser does.
    static func fail(_ error: Error, _ args: [String]) -> Never {
        let code = exitCode(for: error)
        let text = message(for: error).trimmingCharacters(in: .whitespacesAndNewlines)
        if code == .success || text.isEmpty { exit(withError: error) }
        var line = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        // A module option on a command without its group: name it as the user wrote it.
        for o in [ModuleOptionArguments.decodeOption, ModuleOptionArguments.filterOption] where line.contains("'\(o)'") {
            if let i = args.firstIndex(of: o), i + 1 < args.count {
                line = line.replacingOccurrences(of: "'\(o)'", with: "'--" + ModuleOptionArguments.split([args[i + 1]])[0].name + "'")
            }
        }
        // "Unknown option …" reads as the rest of our messages: lower case after "bluesift: ".
        if let first = line.first, first.isUppercase, line.dropFirst().first?.isLowercase == true {
            line = first.lowercased() + line.dropFirst()
        }
        if code == .validationFailure { line += " (see '\(commandPath(args)) --help')" }
        stderrLine("bluesift: " + line)
        Foundation.exit(code.rawValue)
    }

    /// The first word of `help WORDS` that names no subcommand, with those it could have named.
    static func unknownCommand(_ words: [String]) -> (name: String, known: [String])? {
        var command: ParsableCommand.Type = Bluesift.self
        for w in words where !w.hasPrefix("-") {
            let subs = command.configuration.subcommands
            guard let sub = subs.first(where: { $0._commandName == w }) else {
                return (w, subs.map { $0._commandName })
            }
            command = sub
        }
        return nil
    }

    /// "bluesift plugins check" for the arguments given: the subcommands named, in order.
    static func commandPath(_ args: [String]) -> String {
        var path = ["bluesift"]
        var command: ParsableCommand.Type = Bluesift.self
        for a in args {
            guard let sub = command.configuration.subcommands.first(where: { $0._commandName == a }) else { break }
            path.append(a)
            command = sub
        }
        return path.joined(separator: " ")
    }
}
