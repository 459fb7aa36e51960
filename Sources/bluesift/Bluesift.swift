import ArgumentParser
import Foundation

@main
struct Bluesift: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluesift",
        abstract: "Read Bluetooth captures: decode HCI, L2CAP, ATT, SMP and advertising data.",
        discussion: """
        Reads btsnoop (Android, btmon), pcap/pcapng (H4, Linux monitor, LE link-layer sniffers) \
        and Apple PacketLogger files, detected by content.

        Exit codes:
          0   success (a damaged capture is decoded as far as it goes; warnings go to stderr)
          1   differences (diff, replay), or records a conversion dropped (convert without --allow-loss)
          2   unusable input: missing, unreadable, a directory, not a capture, unsupported link type;
              an output that is the same file as an input or cannot be written
          64  bad command-line usage
        """,
        version: BuildInfo.line,
        subcommands: [Info.self, Dump.self, Stats.self, Report.self, Frames.self, GATT.self, Plugins.self, Script.self, Replay.self, Emulate.self, Diff.self, Convert.self, Tap.self, Capture.self, Redact.self]
    )

    /// Output safety first (SIGINT/SIGTERM remove temporary files, SIGPIPE becomes EPIPE), then the command.
    static func main() {
        OutputGuard.installSignalHandlers()
        let args = Array(CommandLine.arguments.dropFirst())
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
        // "Unknown option …" reads as the rest of our messages: lower case after "bluesift: ".
        if let first = line.first, first.isUppercase, line.dropFirst().first?.isLowercase == true {
            line = first.lowercased() + line.dropFirst()
        }
        if code == .validationFailure { line += " (see '\(commandPath(args)) --help')" }
        stderrLine("bluesift: " + line)
        Foundation.exit(code.rawValue)
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
