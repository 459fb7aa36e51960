import ArgumentParser

/// How decoded lines are shown and named: one set of flags for `dump` and `tap`, so the
/// live tap prints what `dump` prints of the same bytes.
struct LineOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Layered detail under each summary line.")
    var verbose = false

    @Flag(help: "Keep text lines whole on a terminal (by default they are cut to its width).")
    var wide = false

    @Flag(help: "Colour the text output (default: when stdout is a terminal and NO_COLOR is not set).")
    var color = false

    @Flag(help: "Never colour.")
    var noColor = false

    @Flag(help: "Skip GATT reconstruction and handle naming.")
    var noNaming = false

    /// --color, or a terminal without NO_COLOR; --no-color wins.
    var colored: Bool { !noColor && (color || (stdoutIsTerminal && !noColorEnvironment)) }

    /// The terminal's width to cut text lines to; nil with --wide or when stdout is not a terminal.
    var width: Int? { wide || !stdoutIsTerminal ? nil : terminalColumns() }
}
