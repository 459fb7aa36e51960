import ArgumentParser

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
        subcommands: [Info.self, Dump.self, Stats.self, Report.self, Frames.self, GATT.self, Plugins.self, Script.self, Replay.self, Diff.self, Convert.self, Tap.self, Redact.self]
    )

    /// Output safety first (SIGINT/SIGTERM remove temporary files, SIGPIPE becomes EPIPE), then the command.
    static func main() {
        OutputGuard.installSignalHandlers()
        main(nil)
    }
}
